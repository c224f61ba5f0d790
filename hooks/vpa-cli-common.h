/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the CLI and its fleet commands share: the options that say where
 * the inventory, the claims and the configuration come from, stdin and
 * stdout, and GError -> one stderr line and an exit status.
 */
#pragma once

#include "vpa-config.h"

G_BEGIN_DECLS

typedef struct {
  char *connect;
  char *inventory;
  char *config_path;
  char *format;
  char **args;
} VpaCliCommon;

void vpa_cli_common_clear (VpaCliCommon *common);

/* Prints prefix and error's message as one line on stderr; returns the
 * exit status: a VPA_ERROR's code, VPA_ERROR_INVALID for a bad option,
 * VPA_ERROR_ENVIRONMENT for anything else. */
int vpa_cli_common_fail (const char *prefix, const GError *error);
/* "virt-pci-affinity: warning: MESSAGE" on stderr, escaped and bounded
 * as vpa_cli_common_fail's line. */
void vpa_cli_common_warn (const char *message);

/* --connect, else $LIBVIRT_DEFAULT_URI when not empty, else qemu:///system. */
const char *vpa_cli_common_connect_uri (const VpaCliCommon *common);

/* --inventory, else the connect URI. */
const char *vpa_cli_common_inventory_uri (const VpaCliCommon *common);

/* --config, else $VPA_CONFIG, else the installed file when it exists,
 * else the built-in defaults; with the reservations of its [hook]
 * state-dir (vpa_reserve_apply_load: an error when they cannot be read). */
VpaConfig *vpa_cli_common_load_config (const VpaCliCommon *common, GError **error);

/* --format: text (the default) or json. */
gboolean vpa_cli_common_format_is_json (const VpaCliCommon *common, gboolean *json, GError **error);

/* All of stdin, at most 16 MiB. */
gboolean vpa_cli_common_read_stdin (char **buf, gsize *len, GError **error);

gboolean vpa_cli_common_write_stdout (const char *text, GError **error);

G_END_DECLS
