/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The GKeyFile configuration (docs/interface.md, "Configuration"): inventory source,
 * device specs (Nova's [pci] device_spec), aliases (Nova's [pci] alias)
 * and the hook's claim directories. Pure: parsing a buffer does no I/O
 * beyond reading the named file in vpa_config_load_file().
 */
#pragma once

#include "vpa-types.h"
#include "vpa-spec.h"
#include "vpa-reserve.h"

G_BEGIN_DECLS

/* [device-spec NAME] */
typedef struct {
  char *name;            /* the group's NAME */
  char *address;         /* glob as written, or NULL for any */
  VpaAddr exact_addr;    /* the address when fully specified, else VPA_ADDR_NONE */
  char vendor_id[8];     /* "" = any */
  char product_id[8];    /* "" = any */
  char *devname;         /* a PF netdev name, or NULL */
  GPtrArray *tags;       /* VpaSpecPair*, sorted by key; keys use '_' ("physical_network") */
  guint tagset;          /* index into VpaConfig.tagsets; equal tag sets share one */
  gint64 glob[4];        /* parsed address: domain, bus, slot, function; -1 = any */
  gboolean one_time_use; /* one-time-use=true (docs/reservations.md) */
} VpaDeviceSpec;

/* [alias NAME] and further specs of the same alias as [alias NAME:2], ... */
typedef struct {
  char *name;
  GPtrArray *specs; /* VpaSpec*, ORed: vendor_id, product_id, dev_type */
  gboolean has_policy;
  VpaPolicy policy; /* numa-policy; meaningful only if has_policy */
} VpaAlias;

/* [host] reserved-huge-pages entry: node:N,size:S,count:C */
typedef struct {
  gint node;
  guint64 size_kib;
  guint64 count;
} VpaReservedPages;

/* [physnet NAME] and [tunnel]: the host NUMA nodes a NUMA-aware vSwitch
 * serves the network from (Nova's [neutron_physnet_NAME] numa_nodes and
 * [neutron_tunnel] numa_nodes; docs/vswitch.md). */
typedef struct {
  char *physnet; /* NAME; NULL for [tunnel] */
  char *group;   /* the group as written, for messages */
  GArray *nodes; /* guint, ascending; empty: no affinity (Nova's default) */
} VpaVswitchAffinity;

void vpa_config_vswitch_affinity_free (VpaVswitchAffinity *aff);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaVswitchAffinity, vpa_config_vswitch_affinity_free)

typedef struct _VpaConfig {
  char *path;              /* for messages; "(built-in defaults)" if none */
  char *inventory_source;  /* [inventory] source, default "sysfs:/" */
  GPtrArray *device_specs; /* VpaDeviceSpec*, in file order (first match wins) */
  GPtrArray *aliases;      /* VpaAlias* */
  GStrv state_dirs;        /* [claims] state-dirs */
  GPtrArray *tagsets;      /* GPtrArray* of VpaSpecPair* (borrowed); [0] is the empty set */
  /* [host] (Nova's names): host capacity for whole-guest placement */
  GArray *cpu_dedicated_set;   /* guint CPUs, ascending; NULL: none */
  GArray *cpu_shared_set;      /* guint CPUs; NULL: every CPU not dedicated */
  guint64 reserved_memory_kib; /* per node */
  GArray *reserved_huge_pages; /* VpaReservedPages */
  gboolean cell_pack;          /* cell-allocation=pack (default spread) */
  gboolean hook_audit;         /* [hook] mode=audit (default enforce) */
  char *hook_state_dir;        /* [hook] state-dir: the verdict counters */
  GPtrArray *vswitch;          /* VpaVswitchAffinity*, in file order */
  VpaReserveSet *reservations; /* read by vpa_reserve_apply_load; NULL: none read */
  /* private: the lookups by name and by content, so that loading is
   * linear in the groups (tens of thousands of them cost milliseconds) */
  GHashTable *spec_by_name;  /* name -> VpaDeviceSpec* (borrowed) */
  GHashTable *alias_by_name; /* name -> VpaAlias* (borrowed) */
  GHashTable *tagset_by_key; /* tagset_key () -> index + 1 */
} VpaConfig;

/* Where the hook keeps its verdict counters unless [hook] state-dir says. */
#define VPA_CONFIG_STATE_DIR_DEFAULT VPA_LOCALSTATEDIR "/lib/virt-pci-affinity"

VpaConfig *vpa_config_new_default (void);
/* [hook]: mode, state-dir (vpa-config-hook.c). */
gboolean vpa_config_parse_hook (VpaConfig *config, GKeyFile *kf, const char *group,
                                GError **error);
void vpa_config_free (VpaConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaConfig, vpa_config_free)

/* Errors are VPA_ERROR_INVALID and name the file, group, key and value. */
VpaConfig *vpa_config_load_data (const char *data, gsize len, const char *path,
                                 GError **error);
VpaConfig *vpa_config_load_file (const char *path, GError **error);

/* The installed configuration file. */
#define VPA_CONFIG_DEFAULT_PATH VPA_SYSCONFDIR "/virt-pci-affinity/virt-pci-affinity.conf"

/* The one configuration lookup of the CLI and the hook: path when not
 * NULL (the CLI's --config), else $VPA_CONFIG when use_env and it is set
 * and not empty (an empty VPA_CONFIG is as unset), else
 * VPA_CONFIG_DEFAULT_PATH when it exists, else the built-in defaults. */
VpaConfig *vpa_config_lookup (const char *path, gboolean use_env, GError **error);

const VpaAlias *vpa_config_alias (const VpaConfig *config, const char *name);

/* The first device spec that matches device i of host, or NULL: the
 * device is then not in the inventory. Nothing matches without a device
 * spec (Nova's empty whitelist), and a bridge (PCI class 0x06xx) never. */
const VpaDeviceSpec *vpa_config_match_device (const VpaConfig *config,
                                              const VpaHost *host, guint i);
/* TRUE for a device no spec can make assignable (a bridge). */
gboolean vpa_config_never_assignable (const VpaDevice *dev);

/* The [device-spec] key a key is a known other name for (physnet=, as
 * Nova's users say, is physical-network=), or NULL; '-' and '_' alike,
 * any case. Such a key is refused, never taken as a tag. */
const char *vpa_config_key_alias (const char *key);

/* The [device-spec NAME] group with this NAME, or NULL. */
const VpaDeviceSpec *vpa_config_device_spec (const VpaConfig *config, const char *name);

/* [physnet NAME] or [tunnel] (vpa-config-vswitch.c): parses the group
 * into config; errors name the file, group, key and value. */
gboolean vpa_config_parse_vswitch (VpaConfig *config, GKeyFile *kf, const char *group,
                                   GError **error);
/* The affinity of physnet NAME (exact name), or of the tunnel when physnet
 * is NULL; NULL when the configuration has no such group. */
const VpaVswitchAffinity *vpa_config_vswitch (const VpaConfig *config, const char *physnet);
/* The first node of aff the host lacks, or -1. */
gint64 vpa_config_vswitch_affinity_missing_node (const VpaVswitchAffinity *aff, const VpaHost *host);
/* Every node of every [physnet]/[tunnel] group is a node of host: else
 * VPA_ERROR_INVALID naming the file, the group, the node and the host's
 * nodes. */
gboolean vpa_config_check_vswitch_nodes (const VpaConfig *config, const VpaHost *host,
                                         GError **error);

G_END_DECLS
