/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The other domains' claims a hook call needs, read from libvirt's state
 * directories (vpa-statedirs.h) without reading more of them than the
 * question asks: the claims relevant to this domain's devices and their
 * PF/VF relatives and, when asked, to its host NUMA nodes.
 */
#pragma once

#include "vpa-types.h"

G_BEGIN_DECLS

typedef struct {
  const char *const *state_dirs; /* [claims] state-dirs */
  const char *exclude;           /* the domain itself; may be NULL */
  /* The devices whose holders are wanted (the domain's, their PFs, the
   * VFs of the PFs it holds whole; the caller lists them), or NULL for
   * every claim (a placement, which may use any device). */
  const VpaAddr *addrs;
  guint n_addrs;
  /* sysfs:ROOT's root, or NULL. With it a device that sysfs shows in an
   * IOMMU group and bound to a host driver (not a VFIO one) cannot be
   * held by a running QEMU domain: with running_only, when no device of
   * addrs may be held, no state file is read at all. */
  const char *sysfs_root;
  const VpaHost *known;  /* devices already read from that sysfs; may be NULL */
  gboolean running_only; /* only running domains' claims (a check) */
  /* The caller also needs what the running domains hold on host NUMA
   * nodes (CPU pins, memory): no device shortcut, every file is read. */
  gboolean nodes;
  GPtrArray *skipped; /* may be NULL: one line (char*) per file skipped */
} VpaHookClaimsQuery;

/* A new array of VpaClaim*; errors as vpa_statedirs_query(). */
GPtrArray *vpa_hook_claims (const VpaHookClaimsQuery *q, GError **error);

/* FALSE when dev, as sysfs shows it, cannot be in a running QEMU
 * domain: it is in an IOMMU group and bound to a driver that is neither
 * a VFIO driver (vfio-pci and its variants, *vfio*) nor pci-stub. TRUE
 * otherwise, also when sysfs tells nothing (no IOMMU group, unbound). */
gboolean vpa_hook_claims_may_be_assigned (const VpaDevice *dev);

G_END_DECLS
