/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `virt-pci-affinity request DOMAIN show|add-port|add-alias|set-numa|
 * remove|place ...`: its arguments and options as a VpaRequestEdit
 * (docs/virsh.md).
 */
#pragma once

#include "vpa-request-edit.h"

G_BEGIN_DECLS

/* The options a port takes (NULL / FALSE: not given). */
typedef struct {
  const char *physnet;
  const char *policy;
  const char *vnic_type;
  const char *pf_group;
  const char *locality_group;
  gboolean trusted;
  const char *mac;
} VpaCliRequestPort;

/* What args (DOMAIN, a subcommand, its arguments) ask for: *show for
 * `show`, else *edit (its strings point into args and port, its attrs
 * into *attrs_out, free it with g_strfreev... (a GPtrArray)).
 * VPA_ERROR_INVALID naming the argument and the usage otherwise. */
gboolean vpa_cli_request_parse (char **args, const VpaCliRequestPort *port, gboolean *show,
                                VpaRequestEdit *edit, GPtrArray **attrs_out, GError **error);

/* The line `request` prints after an edit: whether the domain must be
 * placed again, and the command that does it. */
char *vpa_cli_request_summary (const char *domain, const VpaRequestEdit *edit,
                               const VpaRequestEditResult *res);

G_END_DECLS
