/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The guest's 64-bit PCI hole (docs/guest-numa.md, "Large BARs"): the
 * devices placed behind expander buses get their 64-bit BARs mapped by
 * the guest firmware only if the root bus's 64-bit window holds them
 * all; QEMU's default holds 32 GiB on q35 and 2 GiB on i440fx, less
 * than one GPU's BAR.
 */
#pragma once

#include "vpa-domain.h"
#include "vpa-pipeline.h"
#include "vpa-pipeline-topology.h"
#include "vpa-rewrite.h"

G_BEGIN_DECLS

/* QEMU's default 64-bit hole of the q35 and i440fx host bridges. */
#define VPA_HOLE64_DEFAULT_Q35 (G_GUINT64_CONSTANT (1) << 35)
#define VPA_HOLE64_DEFAULT_I440FX (G_GUINT64_CONSTANT (1) << 31)

/* The bytes of the 64-bit BARs of the decided devices that go behind
 * the guest's expander buses (cells: VpaCellNodes), and how many they
 * are; *unknown: the first of them whose BARs the source does not know
 * (borrowed from decisions), else NULL. */
guint64 vpa_pipeline_expander_bars (const VpaHost *host, GPtrArray *decisions,
                                    const GArray *cells, guint *n, const VpaDecision **unknown);

/* buf (transfer full, *len bytes) with <pcihole64> on the root
 * controller sized to the next power of two of the BARs of in's
 * decisions when that is more than QEMU's default and than the
 * document's, else buf itself: only with <vpa:guest-numa>, never under
 * in->keep_guest_topology (the guest's PCI layout is its ABI). buf, our
 * rewrite, may pass the document's bounds by grown. in->explain says
 * what it did, and names a device whose BARs are unknown (libvirt's
 * nodedev XML has none): the hole is then sized for the others. */
char *vpa_pipeline_rewrite_hole64 (const VpaRewriteInput *in, char *buf, gsize *len,
                                   const VpaXmlGrowth *grown, GError **error);

G_END_DECLS
