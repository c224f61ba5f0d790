/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvpa-virt: everything that talks to the libvirt API. The inventory
 * source for libvirt URIs, claims from a connection's domains, and the
 * define/attach paths that must never hand out a device twice.
 *
 * Only the CLI's libvirt module (virt-pci-affinity-virt.so, loaded on
 * demand) and the tests link this library: the hook and the core never
 * load libvirt.so.
 */
#pragma once

#include <libvirt/libvirt.h>
#include "vpa-source.h"
#include "vpa-types.h"
#include "vpa-attach.h"

G_BEGIN_DECLS

G_DEFINE_AUTOPTR_CLEANUP_FUNC (virConnect, virConnectClose)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (virDomain, virDomainFree)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (virNodeDevice, virNodeDeviceFree)

/* How long define/attach wait for another define on the same connection. */
#define VPA_VIRT_LOCK_TIMEOUT_MS 30000

/* Registers the libvirt inventory source for libvirt URIs (qemu:///system,
 * test:///default, qemu+ssh://...). Snapshot URIs (test:///ABS/PATH.xml)
 * stay with the built-in streaming reader. Idempotent. */
void vpa_virt_register (void);
/* The source vpa_virt_register registers, for a front end that registers
 * it through a stub of its own (the CLI loads libvirt on demand). */
const VpaSourceOps *vpa_virt_source_ops (void);

/* Opens uri (NULL: libvirt's default) with libvirt's own stderr output
 * silenced; VPA_ERROR_ENVIRONMENT "cannot connect to 'URI': ..." on
 * failure. */
virConnectPtr vpa_virt_open (const char *uri, gboolean read_only, GError **error);

/* Devices (PCI and their netdev names) from the node device API, NUMA
 * cells from the capabilities, claims from every domain; sealed. uri
 * names the connection in messages. For a test:///ABS/PATH.xml
 * connection the cells come from the file's <capabilities> child, which
 * libvirt's test driver ignores. */
VpaHost *vpa_virt_load_host (virConnectPtr conn, const char *uri, GError **error);

/* VpaClaim* of every domain on conn: the live XML of running domains,
 * plus the next-boot (inactive) XML of running persistent ones, and the
 * inactive XML of defined ones. Sorted by domain name, then address. */
GPtrArray *vpa_virt_load_claims (virConnectPtr conn, GError **error);

/* Returns the placed XML (a whole domain for define, one device for
 * attach) given the connection's current claims, or NULL with error. */
typedef char *(*VpaVirtPlaceFunc) (GPtrArray *claims, gpointer user_data,
                                   GError **error);

/* An advisory lock serialising define/attach on one connection (flock on
 * a file named after the connection's URI; it dies with the process).
 * Waits up to timeout_ms; VPA_ERROR_ENVIRONMENT on timeout. */
typedef struct _VpaVirtLock VpaVirtLock;
VpaVirtLock *vpa_virt_lock_acquire (virConnectPtr conn, const char *uri,
                                    guint timeout_ms, GError **error);
void vpa_virt_lock_release (VpaVirtLock *lock);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaVirtLock, vpa_virt_lock_release)
/* The lock file for a connection URI (exposed for tests and docs). */
char *vpa_virt_lock_path (const char *canonical_uri);

/* Under the lock: reads the claims, calls place, defines the result,
 * then re-reads the claims. If another domain holds a device the new
 * definition uses (a define that bypassed the lock), the definition is
 * rolled back (undefined if new, the previous definition restored if
 * it replaced one) and VPA_ERROR_UNSATISFIABLE is returned. *out_name
 * (optional) receives the domain's name. */
gboolean vpa_virt_define_placed (virConnectPtr conn, const char *uri,
                                 VpaVirtPlaceFunc place, gpointer user_data,
                                 char **out_name, GError **error);
/* The same; with an inventory, a VF and its PF held by two domains also
 * count as a conflict in the verify step. */
gboolean vpa_virt_define_placed_full (virConnectPtr conn, const char *uri,
                                      const VpaHost *inventory, VpaVirtPlaceFunc place,
                                      gpointer user_data, char **out_name,
                                      GError **error);

/* Returns the device element to hot-plug given the connection's current
 * claims, and fills *record with the port's request and placement. */
typedef char *(*VpaVirtAttachFunc) (GPtrArray *claims, gpointer user_data,
                                    VpaAttachRecord *record, GError **error);

/* Where a device is hot-plugged: the domain, how (flags), and the host's
 * inventory (may be NULL). */
typedef struct {
  const char *domain;
  guint flags;
  const VpaHost *inventory;
} VpaVirtAttachTarget;

/* Hot-plug: under the same lock, place returns one <interface> or
 * <hostdev> element and its records. target->flags: VIR_DOMAIN_AFFECT_LIVE
 * and/or VIR_DOMAIN_AFFECT_CONFIG (neither: the domain's current state).
 * LIVE: attached with virDomainAttachDeviceFlags, the records added to
 * the live <vpa:affinity> with virDomainSetMetadata. CONFIG: the
 * persistent definition is defined again with the device and the
 * records, in one step. Then verified as for define (on conflict
 * detached again and the previous definition restored; inventory as for
 * vpa_virt_define_placed_full, may be NULL). *out_addr (optional)
 * receives the attached PCI address. */
gboolean vpa_virt_attach (virConnectPtr conn, const char *uri, const VpaVirtAttachTarget *target,
                          VpaVirtAttachFunc place, gpointer user_data, VpaAddr *out_addr,
                          GError **error);

/* VpaHostdevNet* (vpa-netpool.h) of the connection's networks that are
 * <forward mode='hostdev'> pools of a <pf dev>, by name; empty when the
 * connection has no network driver. uri names it in messages. */
GPtrArray *vpa_virt_load_hostdev_networks (virConnectPtr conn, const char *uri, GError **error);

G_END_DECLS
