/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Inventory sources behind one interface. Built in: host snapshots
 * ("test:///ABS/PATH.xml" or a plain path) read by our own streaming
 * reader, and "sysfs:ROOT". Other sources (the libvirt API, a fleet
 * store) register themselves, so the core never links them.
 */
#pragma once

#include <stdio.h>
#include "vpa-types.h"

G_BEGIN_DECLS

typedef struct {
  const char *name;
  /* TRUE if this source handles uri. */
  gboolean (*probe) (const char *uri);
  /* Returns a sealed host (devices, cells and any claims the source has). */
  VpaHost *(*load) (const char *uri, GError **error);
} VpaSourceOps;

void vpa_source_register (const VpaSourceOps *ops);

/* Dispatches to the first registered source whose probe accepts uri;
 * VPA_ERROR_INVALID for an unknown URI. */
VpaHost *vpa_source_load (const char *uri, GError **error);

/* The path of a snapshot URI ("test:///ABS/PATH.xml" or a plain path
 * ending in .xml), or NULL when uri is not one. */
char *vpa_source_snapshot_path (const char *uri);

/* Built-in sources. */
VpaHost *vpa_snapshot_load (const char *path, GError **error);
VpaHost *vpa_snapshot_load_memory (const char *buf, gsize len, const char *name,
                                   GError **error);
/* Writes host (devices as nodedev XML, claims as minimal domains, cells as
 * capabilities) in the snapshot format to out. */
gboolean vpa_snapshot_write (const VpaHost *host, FILE *out, GError **error);

VpaHost *vpa_sysfs_load (const char *root, GError **error);
/* Only the devices at addrs (missing ones are left out) and their parent
 * PFs, plus the whole topology: what a check of a few devices needs,
 * without reading every device of a large host. */
VpaHost *vpa_sysfs_load_devices (const char *root, const VpaAddr *addrs, guint n_addrs,
                                 GError **error);
/* Appends to vfs (VpaAddr) the VFs of the PF at pf (its virtfn* links);
 * none for a device that is not a PF or is gone. */
gboolean vpa_sysfs_vf_addrs (const char *root, VpaAddr pf, GArray *vfs, GError **error);

G_END_DECLS
