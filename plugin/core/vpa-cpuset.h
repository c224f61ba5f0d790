/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvirt cpuset/nodeset strings, as <vcpu cpuset>, <vcpupin> and
 * <numatune> carry them. Pure parsing: no XML, no I/O.
 */
#pragma once

#include "vpa-types.h"

G_BEGIN_DECLS

/* Parses a libvirt cpuset/nodeset string ("0-3,^2,8") into sorted unique
 * values (a GArray of guint, each at most VPA_CPUSET_MAX). Entries apply
 * left to right, as in libvirt; a set that selects nothing is an error.
 * Messages name the string; callers prefix the element. */
#define VPA_CPUSET_MAX 65535
gboolean vpa_parse_cpuset (const char *str, GArray **out, GError **error);

G_END_DECLS
