/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvirt cpuset/nodeset strings, as <vcpu cpuset>, <vcpupin> and
 * <numatune> carry them, and the sets they name. Pure parsing: no XML,
 * no I/O.
 */
#pragma once

#include "vpa-types.h"

G_BEGIN_DECLS

#define VPA_CPUSET_MAX 65535

/* A set of CPU or node ids, one bit each (at most VPA_CPUSET_MAX): a set
 * costs at most 8 KiB whatever its string says; unions are word
 * operations. */
typedef struct _VpaBits VpaBits;

VpaBits *vpa_cpuset_bits_new (void);
void vpa_cpuset_bits_free (VpaBits *bits);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaBits, vpa_cpuset_bits_free)
/* Sets (on) or clears ids lo..hi. */
void vpa_cpuset_bits_set_range (VpaBits *bits, guint lo, guint hi, gboolean on);
gboolean vpa_cpuset_bits_has (const VpaBits *bits, guint id);
/* dst |= src (src may be NULL). */
void vpa_cpuset_bits_or (VpaBits *dst, const VpaBits *src);
/* The first member >= from, or -1 (bits may be NULL). */
gint vpa_cpuset_bits_next (const VpaBits *bits, guint from);
/* The members, ascending (GArray of guint), or NULL for NULL. */
GArray *vpa_cpuset_bits_to_array (const VpaBits *bits);

/* Parses a libvirt cpuset/nodeset string ("0-3,^2,8"): entries apply left
 * to right, as in libvirt; a set that selects nothing is an error. In
 * place, one pass: a string of millions of entries costs no more than
 * its length. Messages name the string; callers prefix the element. */
VpaBits *vpa_cpuset_parse_bits (const char *str, GError **error);
/* The same as sorted unique values (a GArray of guint). */
gboolean vpa_cpuset_parse (const char *str, GArray **out, GError **error);
/* The string of a set of ids (a GArray of guint, in any order, repeats
 * allowed): ranges joined by commas, "0-3,8". */
char *vpa_cpuset_format (const GArray *set);

G_END_DECLS
