/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The operator's formats: OpenMetrics gauges of pools and of the host
 * (node_exporter's textfile collector), the device list (who holds
 * what), check results and traits as JSON, and writing a file
 * atomically.
 */
#pragma once

#include <json-glib/json-glib.h>

#include "vpa-inventory.h"
#include "vpa-pipeline.h"
#include "vpa-pools.h"
#include "vpa-netpool.h"

G_BEGIN_DECLS

/* ------------------------------------------------------------------ */
/* OpenMetrics (docs/operations.md)                                       */
/* ------------------------------------------------------------------ */

#define VPA_METRIC_POOL_DEVICES "virt_pci_affinity_pool_devices"

typedef struct _VpaMetrics VpaMetrics;

/* with_host: every series carries a host="..." label first (fleet). */
VpaMetrics *vpa_output_ops_metrics_new (gboolean with_host);
void vpa_output_ops_metrics_free (VpaMetrics *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaMetrics, vpa_output_ops_metrics_free)

/* Adds a pool's free/used/blocked/reserved counts to the series of its labels
 * (host: a fleet pool's own host, else the host given; its tags from
 * config unless it has its own); pools that differ only in tags other
 * than physical_network add up. An unknown NUMA node or socket and no
 * physical_network tag are the empty label value. */
void vpa_output_ops_metrics_add_pool (VpaMetrics *m, const VpaConfig *config, const char *host,
                                      const VpaPool *pool);

/* Sets a host gauge (name without the virt_pci_affinity_ prefix). */
void vpa_output_ops_metrics_set_gauge (VpaMetrics *m, const char *host, const char *name, const char *help,
                                       double value);

/* A whole family (# HELP, # TYPE, its samples), written before # EOF. */
void vpa_output_ops_metrics_add_family (VpaMetrics *m, const char *text);

/* The text exposition: # HELP / # TYPE per family, series sorted by
 * labels, a closing "# EOF". */
char *vpa_output_ops_metrics_to_string (VpaMetrics *m);

/* The pools of one host (any grouping with vendor, product, dev_type,
 * numa_node and tags) into m. */
void vpa_output_ops_metrics_add_pools (VpaMetrics *m, const VpaInventory *inv, GArray *pools);

/* ------------------------------------------------------------------ */
/* Devices, check, traits                                              */
/* ------------------------------------------------------------------ */

/* One line per inventory device: ADDRESS ID TYPE NUMA SOCKET PF TAGS
 * STATE DOMAIN, where DOMAIN is the holder, or for a blocked device the
 * held relative and its holder ("0000:3b:01.1 (web1)"). only (may be
 * NULL): the devices one of that alias's specs matches. */
char *vpa_output_ops_devices_text (const VpaInventory *inv, const VpaAlias *only);
/* {"devices": [{"address", "vendor_id", "product_id", "dev_type",
 * "numa_node", "socket", "pf", "tags", "state", "domain", "blocked_by"}]}. */
char *vpa_output_ops_devices_json (const VpaInventory *inv, const VpaAlias *only, GArray *netrows);

/* libvirt's hostdev networks (VpaNetPoolRow, may be NULL or empty: ""):
 * a blank line, then NETWORK PF DEVICE NUMA SOCKET TAGS VFS FREE. */
char *vpa_output_ops_netpool_text (const VpaInventory *inv, GArray *netrows);
/* "hostdev_networks": [{"network", "active", "pf_dev", "pf", "numa_node",
 * "socket", "tags", "vfs", "free"}] into an open object. */
void vpa_output_ops_netpool_json_add (JsonBuilder *b, const VpaInventory *inv, GArray *netrows);
/* The pools JSON of vpa_output_pools_json with "hostdev_networks" after
 * "pools" when there are any. */
char *vpa_output_ops_pools_json_networks (const VpaInventory *inv, GArray *pools, GArray *netrows);
/* virt_pci_affinity_hostdev_network_free_vfs{network,pf_dev} into m. */
void vpa_output_ops_metrics_add_netpool (VpaMetrics *m, GArray *netrows);

/* {"domain": NAME, "ok": BOOL, "devices": [{"device", "address",
 * "numa_node", "status", "message"}]}. */
char *vpa_output_ops_check_json (const char *domain, GPtrArray *results, gboolean ok);

/* {"traits": [...]}. */
char *vpa_output_ops_traits_json (char **traits);

/* Writes text to path atomically (a temporary file in the same
 * directory, then rename), mode 0644: a reader such as node_exporter's
 * textfile collector sees the old file or the new one, never a part. */
gboolean vpa_output_ops_write_file (const char *path, const char *text, GError **error);

G_END_DECLS
