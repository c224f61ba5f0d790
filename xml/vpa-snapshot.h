/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host snapshots: libvirt's test-driver format (root <node>, <device>
 * children, optional <domain> children whose PCI devices are claims, one
 * <capabilities> child), read by a streaming reader and written back.
 */
#pragma once

#include <stdio.h>
#include "vpa-types.h"

G_BEGIN_DECLS

VpaHost *vpa_snapshot_load (const char *path, GError **error);
/* The same on a snapshot in memory; doc->what names it in messages. */
VpaHost *vpa_snapshot_load_memory (const VpaDoc *doc, GError **error);
/* Writes host (devices as nodedev XML, claims as minimal domains, cells as
 * capabilities) in the snapshot format to out. */
gboolean vpa_snapshot_write (const VpaHost *host, FILE *out, GError **error);

G_END_DECLS
