/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Writes placement decisions (vpa-plan.h) back into a domain document,
 * touching only what a placement owns: the source addresses of requested devices, the
 * ua-vpa-NAME-N hostdevs of flavor aliases, and the <vpa:placed>
 * records. Every other byte of the document is kept (see
 * docs/domain-xml.md).
 */
#pragma once

#include "vpa-types.h"
#include "vpa-plan.h"
#include "vpa-guest-topology.h"
#include "vpa-xml.h"

G_BEGIN_DECLS

/* Rewrites the domain document doc (a <domain> or a <domstatus>
 * wrapping one) so that it holds exactly
 * decisions (VpaDecision*, the complete placement of the domain, in
 * request order): each port's device gets the decided source address,
 * each alias decision a ua-vpa-NAME-N hostdev (reused when present),
 * ua-vpa hostdevs no decision names are removed, and the <vpa:placed>
 * records are replaced by one per decision. Applying it to its own
 * output with the same decisions returns the same bytes. A document
 * without <vpa:affinity> and no decisions is returned unchanged.
 * Returns a NUL-terminated buffer of *out_len bytes. */
char *vpa_rewrite_domain (const VpaDoc *doc, GPtrArray *decisions, gsize *out_len, GError **error);

/* The same, also writing the guest PCI layout topo (when not NULL): our
 * expander buses and root ports (user aliases ua-vpa-pxb-, ua-vpa-rp-)
 * become exactly the plan's (kept byte for byte when they already are),
 * and each placed device gets its guest <address type='pci'>; a device
 * of ours left where libvirt puts it loses an address on one of our
 * controllers. With topo->keep the controllers are left as they are. */
/* A rule the rewritten document, parsed, must also meet (the caller's:
 * libvirt's guest bus rules are policy/'s, which xml/ does not see). */
typedef gboolean (*VpaRewriteCheck) (const VpaDomain *dom, GError **error);

/* check may be NULL. */
char *vpa_rewrite_domain_topology (const VpaDoc *doc, GPtrArray *decisions,
                                   const VpaGuestTopology *topo, VpaRewriteCheck check,
                                   gsize *out_len, GError **error);

/* Writes binding into the domain document doc (whose <vpa:affinity>
 * holds <vpa:numa placement="auto">): <numatune> (<memory
 * mode='strict'> over every node, a strict <memnode> per cell),
 * <cputune> <vcpupin> per vCPU and <emulatorpin> (other <cputune>
 * children are kept), and one <vpa:placed-cell> per cell. Nothing else
 * changes; the same binding on its own output returns the same bytes. */
char *vpa_rewrite_numa (const VpaDoc *doc, const VpaNumaBinding *binding, gsize *out_len, GError **error);
/* The same on our own rewrite of a document: doc may pass the document's
 * bounds by the elements and attributes the earlier rewrite added
 * (vpa_xml_parse_memory_grown). */
char *vpa_rewrite_numa_grown (const VpaDoc *doc, const VpaNumaBinding *binding,
                              guint extra_elements, guint extra_attributes, gsize *out_len,
                              GError **error);

/* Writes one <distances> of <sibling id value/> into every <cell> of
 * <cpu><numa> in doc, replacing any it has (kept byte for byte when it
 * is the same). A cell distances does not name is VPA_ERROR_INVALID. */
char *vpa_rewrite_distances (const VpaDoc *doc, const VpaCellDistances *distances,
                             gsize *out_len, GError **error);
/* The same on our own rewrite of a document, which may pass the bounds
 * by grown (see vpa_rewrite_numa_grown). */
char *vpa_rewrite_distances_grown (const VpaDoc *doc, const VpaCellDistances *distances,
                                   const VpaXmlGrowth *grown, gsize *out_len, GError **error);

/* Makes the 64-bit PCI hole of the root controller (<controller
 * type='pci' model=MODEL>, pcie-root or pci-root; added at index 0 when
 * the document has none) at least kib: <pcihole64 unit='KiB'>kib</...>
 * unless it already holds as much (never lowered). */
char *vpa_rewrite_pcihole64 (const VpaDoc *doc, const char *model, guint64 kib,
                             gsize *out_len, GError **error);
/* The same on our own rewrite of a document, which may pass the bounds
 * by grown. */
char *vpa_rewrite_pcihole64_grown (const VpaDoc *doc, const char *model, guint64 kib,
                                   const VpaXmlGrowth *grown, gsize *out_len, GError **error);

G_END_DECLS
