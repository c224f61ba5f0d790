/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Inventory sources behind one interface. Built in: host snapshots
 * ("test:///ABS/PATH.xml" or a plain path) read by our own streaming
 * reader, and "sysfs:ROOT". Other sources (the libvirt API, a fleet
 * store) register themselves, so the core never links them.
 */
#pragma once

#include "vpa-types.h"
/* The built-in sources. */
#include "vpa-snapshot.h"
#include "vpa-sysfs.h"

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

G_END_DECLS
