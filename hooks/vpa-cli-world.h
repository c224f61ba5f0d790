/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Where virt-pci-affinity's commands take their inputs from
 * (vpa-cli-world.c): the configuration, the inventory and claims, the
 * hostdev networks, libvirt's module, a domain document.
 */
#pragma once

#include "vpa-cli.h"
#include "vpa-cli-module.h"
#include "vpa-config.h"
#include "vpa-inventory.h"
#include "vpa-source.h"

G_BEGIN_DECLS

typedef struct {
  VpaConfig *config;
  VpaHost *host;
  GPtrArray *claims;
} VpaCliWorld;

void vpa_cli_world_clear (VpaCliWorld *w);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VpaCliWorld, vpa_cli_world_clear)

/* --connect, the inventory source and the configuration as
 * vpa-cli-common.h finds them. */
const char *vpa_cli_world_connect_uri (const VpaCli *cli);
const char *vpa_cli_world_inventory_uri (const VpaCli *cli);
VpaConfig *vpa_cli_world_load_config (const VpaCli *cli, GError **error);

/* libvirt's module, loaded by the first command that needs it. */
const VpaCliVirtModule *vpa_cli_world_virt_module (GError **error);
/* The libvirt source, registered without loading libvirt: the module is
 * loaded when a URI that is neither a snapshot nor sysfs is probed. */
extern const VpaSourceOps vpa_cli_world_virt_stub_ops;
/* The claims of the domains on a connection (a snapshot's by our own
 * reader). */
GPtrArray *vpa_cli_world_claims_from_uri (const char *uri, GError **error);
/* The XML of domain name on uri, through libvirt's module. */
char *vpa_cli_world_domain_xml (const char *uri, const char *name, GError **error);

/* libvirt's hostdev networks on --connect: for pools and devices, none
 * with a warning when they cannot be listed; for place, define and check
 * (buf: the domain), only when a port may name one, and then an error
 * when they cannot be listed. */
GPtrArray *vpa_cli_world_load_networks_shown (const VpaCli *cli);
GPtrArray *vpa_cli_world_load_networks_for (const VpaCli *cli, const char *buf, GError **error);

/* The configuration, the inventory's host and the --connect claims. */
gboolean vpa_cli_world_load (const VpaCli *cli, VpaCliWorld *w, GError **error);
/* The inventory of w (its host and claims taken). */
VpaInventory *vpa_cli_world_inventory (VpaCliWorld *w, GError **error);

/* FILE, bounded like stdin; "-" is stdin. */
gboolean vpa_cli_world_read_file_bounded (const char *path, char **buf, gsize *len,
                                          GError **error);
gboolean vpa_cli_world_read_input (const char *path, char **buf, gsize *len, GError **error);

G_END_DECLS
