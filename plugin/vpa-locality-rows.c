/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A locality group's topology rows (vpa-locality-rows.h).
 */
#include "vpa-locality-rows.h"
#include "vpa-topology.h"

char *
vpa_locality_rows (const VpaInventory *inv, const GArray *devs)
{
  const VpaHost *host = inv->host;
  g_autoptr (GPtrArray) labels = vpa_topology_labels (inv);
  GString *s = g_string_new (NULL);

  for (guint k = 0; k < devs->len; k++)
    {
      guint i = g_array_index (devs, guint, k);
      const VpaDevice *dev = vpa_host_device (host, i);
      const char *label = labels->pdata[i];
      char a[VPA_ADDR_BUFLEN], b[VPA_ADDR_BUFLEN];

      g_string_append_printf (s, "%s%s %s", k > 0 ? ", " : "", label != NULL ? label : "-",
                              vpa_addr_format (dev->addr, a));
      if (dev->parent_index >= 0)
        {
          g_string_append_printf (
            s, " (a VF of %s)",
            vpa_addr_format (vpa_host_device (host, (guint) dev->parent_index)->addr, b));
        }
    }
  return g_string_free (s, FALSE);
}
