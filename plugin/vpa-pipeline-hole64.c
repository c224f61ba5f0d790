/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-pipeline-hole64.h"
#include "vpa-bars.h"
#include "vpa-guest-topology.h"
#include "vpa-rewrite.h"

guint64
vpa_pipeline_expander_bars (const VpaHost *host, GPtrArray *decisions, const GArray *cells,
                            guint *n, const VpaDecision **unknown)
{
  guint64 sum = 0;

  *n = 0;
  *unknown = NULL;
  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      gint idx;
      const VpaDevice *dev;

      /* a network port's VF is libvirt's to pick: not ours to count */
      if (d->addr == VPA_ADDR_NONE || vpa_guest_model_cell_of_node (cells, d->numa_node) < 0 ||
          (idx = vpa_host_lookup (host, d->addr)) < 0)
        continue;
      dev = vpa_host_device (host, (guint) idx);
      (*n)++;
      if (!dev->bars_known)
        {
          if (*unknown == NULL)
            *unknown = d;
          continue;
        }
      sum = dev->bar64_bytes > G_MAXUINT64 - sum ? G_MAXUINT64 : sum + dev->bar64_bytes;
    }
  return sum;
}

char *
vpa_pipeline_rewrite_hole64 (const VpaRewriteInput *rw, char *buf, gsize *len,
                             const VpaXmlGrowth *grown, GError **error)
{
  const VpaDomain *dom = rw->dom;
  g_autofree char *in = buf;
  GString *explain = rw->explain;
  const VpaDecision *unknown = NULL;
  gboolean q35;
  guint64 bytes, window;
  guint n;

  if (!dom->guest_numa || dom->bus == NULL || !dom->bus->known_machine ||
      rw->keep_guest_topology)
    return g_steal_pointer (&in);
  q35 = dom->bus->machine == VPA_MACHINE_Q35;
  bytes = vpa_pipeline_expander_bars (rw->host, rw->decisions, rw->cells, &n, &unknown);
  if (unknown != NULL && explain != NULL)
    {
      g_autofree char *alias = vpa_plan_decision_user_alias (unknown);
      char a[VPA_ADDR_BUFLEN];

      g_string_append_printf (explain, "64-bit PCI hole: the BARs of %s (%s) are unknown to the inventory (libvirt's nodedev XML has none; sysfs has them): not counted\n", alias, vpa_addr_format (unknown->addr, a));
    }
  window = vpa_bars_window (bytes);
  if (window <= (q35 ? VPA_HOLE64_DEFAULT_Q35 : VPA_HOLE64_DEFAULT_I440FX))
    return g_steal_pointer (&in);
  if (explain != NULL)
    {
      g_string_append_printf (explain,
                              "64-bit PCI hole: %u device(s) behind expander buses, 64-bit BARs "
                              "%" G_GUINT64_FORMAT " bytes: <pcihole64> at least %" G_GUINT64_FORMAT
                              " KiB on the %s\n",
                              n, bytes, window >> 10, q35 ? "pcie-root" : "pci-root");
    }
  /* QEMU refuses a hole past what 40 physical address bits reach (its
   * default guest CPUs have 40): measured, docs/guest-numa.md. */
  if (explain != NULL && window > (G_GUINT64_CONSTANT (1) << 39))
    {
      g_string_append_printf (explain,
                              "64-bit PCI hole: a window of %" G_GUINT64_FORMAT
                              " GiB needs a guest CPU with more than 40 physical address bits "
                              "(<cpu><maxphysaddr mode='passthrough'/></cpu>), else QEMU does "
                              "not start the guest\n",
                              window >> 30);
    }
  const VpaDoc doc = { in, *len, rw->what };
  return vpa_rewrite_pcihole64_grown (&doc, q35 ? "pcie-root" : "pci-root",
                                      window >> 10, grown, len, error);
}
