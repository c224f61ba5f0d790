/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity's options as one command sees them, and the
 * commands (vpa-cli-show.c, vpa-cli-domain.c) the table of vpa-cli.c
 * runs. The CLI's own: not for its modules.
 */
#pragma once

#include "vpa-cli-common.h"

G_BEGIN_DECLS

typedef struct {
  VpaCliCommon common;
  char *group_by;
  char *devices;
  gboolean explain;
  char *port;
  char *physnet;
  char *policy;
  gboolean live;
  gboolean persistent;
  char *vnic_type; /* attach, request */
  gboolean trusted;
  char *mac;
  char *pf_group; /* request */
  char *locality_group;
  gboolean place;
  gboolean all; /* devices --all */
  char *output;
  char *alias;
  char *root; /* status --root */
} VpaCli;

/* pools, devices, config check, status, topology, nodes, traits,
 * snapshot (vpa-cli-show.c). */
gboolean vpa_cli_show_pools (VpaCli *cli, GError **error);
gboolean vpa_cli_show_devices (VpaCli *cli, GError **error);
gboolean vpa_cli_show_config (VpaCli *cli, GError **error);
gboolean vpa_cli_show_status (VpaCli *cli, GError **error);
gboolean vpa_cli_show_topology (VpaCli *cli, GError **error);
gboolean vpa_cli_show_nodes (VpaCli *cli, GError **error);
gboolean vpa_cli_show_traits (VpaCli *cli, GError **error);
gboolean vpa_cli_show_snapshot (VpaCli *cli, GError **error);

/* place, check, define, attach, request (vpa-cli-domain.c). */
gboolean vpa_cli_domain_place (VpaCli *cli, GError **error);
gboolean vpa_cli_domain_check (VpaCli *cli, GError **error);
gboolean vpa_cli_domain_define (VpaCli *cli, GError **error);
gboolean vpa_cli_domain_attach (VpaCli *cli, GError **error);
gboolean vpa_cli_domain_request (VpaCli *cli, GError **error);

G_END_DECLS
