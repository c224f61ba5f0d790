/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The CLI's loadable back ends. The executable links libvpa (GLib,
 * libxml2) and json-glib only; libvirt and the fleet store (sqlite3,
 * libpq) live in modules it dlopen()s when a command needs them, since
 * mapping and relocating their ~60 libraries costs more than `pools` on
 * a small snapshot does. Each module exports one entry point returning
 * a const table whose first field is the interface version below; the
 * modules take libvpa from the executable (which exports its symbols),
 * so there is one inventory source registry and one copy of the core.
 */
#pragma once

#include "vpa-cli-fleet.h"
#include "vpa-source.h"
#include "vpa-types.h"
#include "vpa-attach.h"
#include "vpa-request-edit.h"

G_BEGIN_DECLS

/* Bump when a table below changes. */
#define VPA_CLI_MODULE_VERSION 6

/* Returns the placed domain for define given the connection's current
 * claims (as VpaVirtPlaceFunc). */
typedef char *(*VpaCliPlaceFunc) (GPtrArray *claims, gpointer user_data, GError **error);
/* Returns the device element for attach and fills the port's records
 * (as VpaVirtAttachFunc). */
typedef char *(*VpaCliAttachFunc) (GPtrArray *claims, gpointer user_data,
                                   VpaAttachRecord *record, GError **error);

/* virt-pci-affinity-virt.so: everything that talks to libvirt. */
#define VPA_CLI_VIRT_MODULE "virt-pci-affinity-virt.so"
#define VPA_CLI_VIRT_ENTRY "vpa_cli_virt_module"

typedef struct {
  guint version;
  /* The inventory source for libvirt URIs (vpa_virt_source_ops). */
  gboolean (*probe) (const char *uri);
  VpaHost *(*load_host) (const char *uri, GError **error);
  /* VpaClaim* of the domains on uri (opened read-only). */
  GPtrArray *(*load_claims) (const char *uri, GError **error);
  /* The XML of domain name on uri; VPA_ERROR_INVALID when there is no
   * such domain. */
  char *(*domain_xml) (const char *uri, const char *name, GError **error);
  /* Opens uri, loads the inventory, and defines the XML place returns
   * under the define lock (vpa_virt_define_placed_full). */
  gboolean (*define) (const char *uri, const char *inventory_uri, VpaCliPlaceFunc place,
                      gpointer user_data, char **out_name, GError **error);
  /* The same for a hot-plug into domain (vpa_virt_attach); neither live
   * nor persistent: the domain's current state. */
  gboolean (*attach) (const char *uri, const char *inventory_uri, const char *domain,
                      gboolean live, gboolean persistent, VpaCliAttachFunc place,
                      gpointer user_data, VpaAddr *out_addr, GError **error);
  /* VpaHostdevNet* of uri (vpa_virt_load_hostdev_networks). */
  GPtrArray *(*load_networks) (const char *uri, GError **error);
  /* `fleet sync --watch` (vpa_virt_watch_run). */
  VpaFleetWatcher watch;
  /* `request`: vpa_virt_request_edit and vpa_virt_request_show. */
  gboolean (*request_edit) (const char *uri, const char *domain, const VpaRequestEdit *edit,
                            VpaRequestEditResult *out, GError **error);
  char *(*request_show) (const char *uri, const char *domain, GError **error);
  /* check --live: the report on running domain name (its live XML xml)
   * in format; *failure the line on a cell off its node, else NULL
   * (vpa-live.h). */
  char *(*check_live) (const char *name, const char *xml, const char *format, char **failure,
                       GError **error);
} VpaCliVirtModule;

const VpaCliVirtModule *vpa_cli_virt_module (void);

/* virt-pci-affinity-fleet.so: the fleet commands and their store. */
#define VPA_CLI_FLEET_MODULE "virt-pci-affinity-fleet.so"
#define VPA_CLI_FLEET_ENTRY "vpa_cli_fleet_module"

typedef struct {
  guint version;
  /* vpa_cli_fleet and vpa_cli_fleet_set_claims_loader. */
  int (*run) (int argc, char **argv);
  void (*set_claims_loader) (VpaFleetClaimsLoader loader);
  void (*set_watcher) (VpaFleetWatcher watcher);
} VpaCliFleetModule;

const VpaCliFleetModule *vpa_cli_fleet_module (void);

/* Loads file (next to the running executable, else the installed module
 * directory; loaded once) and returns the table its entry point returns,
 * checking the version. VPA_ERROR_ENVIRONMENT naming the path and why
 * (dlerror) when it is missing, does not load, or is of another version. */
gconstpointer vpa_cli_common_module_load (const char *file, const char *entry, GError **error);

G_END_DECLS
