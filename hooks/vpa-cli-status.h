/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity status (docs/operations.md): whether the hook guards
 * this host, and what to do when it does not.
 */
#pragma once

#include "vpa-types.h"

typedef struct {
  const char *root;        /* "" (the host) or a directory the system paths are under */
  const char *config_path; /* the file the hook reads (it may not exist) */
  const char *uri;         /* -c: the inventory the hook's must equal */
  const VpaHost *host;     /* its devices, or NULL */
  const char *host_error;  /* why not, when NULL */
} VpaCliStatus;

/* Prints one line per check on stdout ("ok   AREA: ..." or "FIX  AREA:
 * what: how"); returns the number of things to fix. */
guint vpa_cli_status_run (const VpaCliStatus *st);
