/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Text and JSON of the topology view (vpa-output-topology.h).
 */
#include "vpa-output-topology.h"
#include "vpa-output.h"

#include <json-glib/json-glib.h>
#include <string.h>

static const char *
cell (const VpaTopology *topo, guint r, guint c)
{
  return r == c ? "X" : vpa_pcie_distance_to_string (vpa_topology_at (topo, r, c));
}

/* The device's place in the tree: host bridge, root port, switch. */
static void
device_tree (const VpaHost *host, guint i, char **root, char **port, char **sw)
{
  const VpaDevice *dev = vpa_host_device (host, i);
  gint rp = vpa_pcie_root_port (host, i), s = vpa_pcie_switch (host, i);

  *root = dev->pcie_root != VPA_ADDR_NONE ? vpa_pcie_root_name (dev->pcie_root) : NULL;
  *port = rp >= 0 ? vpa_addr_to_string (vpa_host_device (host, (guint) rp)->addr) : NULL;
  *sw = s >= 0 ? vpa_addr_to_string (vpa_host_device (host, (guint) s)->addr) : NULL;
}

static char *
link_text (const VpaDevice *dev)
{
  char speed[16];

  if (dev->link_speed == 0 && dev->link_width == 0)
    return g_strdup ("-");
  return g_strdup_printf ("%s GT/s x%u",
                          dev->link_speed != 0 ? vpa_pcie_format_speed (dev->link_speed, speed)
                                               : "?",
                          dev->link_width);
}

/* "free/total" VFs in the inventory, "-" when it has none there. */
static char *
vfs_text (const VpaInventory *inv, guint i)
{
  guint free_vfs, total;

  if (!vpa_topology_vfs (inv, i, &free_vfs, &total))
    return g_strdup ("-");
  return g_strdup_printf ("%u/%u", free_vfs, total);
}

static char *
dash (char *s)
{
  return s != NULL ? s : g_strdup ("-");
}

static const char legend[] =
  "\n"
  "  X    = Self\n"
  "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
  "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
  "within a NUMA node\n"
  "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
  "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
  "Bridge)\n"
  "  PIX  = Connection traversing at most a single PCIe bridge\n";

char *
vpa_output_topology_text (const VpaInventory *inv, const VpaTopology *topo)
{
  const VpaHost *host = inv->host;
  guint n = topo->devices->len;
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  g_autoptr (GPtrArray) devs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  g_autofree char *matrix = NULL, *list = NULL;
  char **header = g_new0 (char *, n + 4);
  static const char *const titles[] = { "DEVICE", "ADDRESS", "ID", "TYPE", "HOST-BRIDGE",
                                        "ROOT-PORT", "SWITCH", "LINK", "NETDEV", "FREE-VFS", NULL };

  header[0] = g_strdup ("");
  for (guint c = 0; c < n; c++)
    header[c + 1] = g_strdup (topo->labels->pdata[c]);
  header[n + 1] = g_strdup ("NUMA");
  header[n + 2] = g_strdup ("CPUS");
  g_ptr_array_add (rows, header);
  g_ptr_array_add (devs, g_strdupv ((char **) titles));
  for (guint r = 0; r < n; r++)
    {
      guint i = g_array_index (topo->devices, guint, r);
      const VpaDevice *dev = vpa_host_device (host, i);
      char **row = g_new0 (char *, n + 4);
      char **d = g_new0 (char *, 11);
      char *root, *port, *sw;

      row[0] = g_strdup (topo->labels->pdata[r]);
      for (guint c = 0; c < n; c++)
        row[c + 1] = g_strdup (cell (topo, r, c));
      row[n + 1] = dev->numa_node >= 0 ? g_strdup_printf ("%d", dev->numa_node) : g_strdup ("-");
      row[n + 2] = vpa_topology_node_cpus (host, dev->numa_node);
      g_ptr_array_add (rows, row);

      device_tree (host, i, &root, &port, &sw);
      d[0] = g_strdup (topo->labels->pdata[r]);
      d[1] = vpa_addr_to_string (dev->addr);
      d[2] = g_strdup_printf ("%s:%s", dev->vendor_id, dev->product_id);
      d[3] = g_strdup (vpa_dev_type_to_string (dev->dev_type));
      d[4] = dash (root);
      d[5] = dash (port);
      d[6] = dash (sw);
      d[7] = link_text (dev);
      d[8] = g_strdup (dev->netdev != NULL ? dev->netdev : "-");
      d[9] = vfs_text (inv, i);
      g_ptr_array_add (devs, d);
    }
  matrix = vpa_output_table_text (rows, n + 3, NULL, n + 3);
  list = vpa_output_table_text (devs, 10, NULL, 10);
  return g_strconcat (matrix, "\n", list, legend, NULL);
}

static void
add_string_or_null (JsonBuilder *b, const char *key, const char *value)
{
  json_builder_set_member_name (b, key);
  if (value != NULL)
    {
      json_builder_add_string_value (b, value);
    }
  else
    {
      json_builder_add_null_value (b);
    }
}

static void
add_device (JsonBuilder *b, const VpaInventory *inv, const VpaTopology *topo, guint r)
{
  const VpaHost *host = inv->host;
  guint i = g_array_index (topo->devices, guint, r);
  gboolean vfs;
  guint free_vfs, total;
  const VpaDevice *dev = vpa_host_device (host, i);
  g_autofree char *root = NULL, *port = NULL, *sw = NULL, *cpus = NULL, *addr = NULL;
  char speed[16];

  device_tree (host, i, &root, &port, &sw);
  cpus = dev->numa_node >= 0 ? vpa_topology_node_cpus (host, dev->numa_node) : NULL;
  addr = vpa_addr_to_string (dev->addr);
  json_builder_begin_object (b);
  add_string_or_null (b, "label", topo->labels->pdata[r]);
  add_string_or_null (b, "address", addr);
  add_string_or_null (b, "vendor_id", dev->vendor_id);
  add_string_or_null (b, "product_id", dev->product_id);
  add_string_or_null (b, "dev_type", vpa_dev_type_to_string (dev->dev_type));
  vpa_output_json_add_int_or_null (b, "numa_node", dev->numa_node);
  add_string_or_null (b, "cpus", cpus != NULL && strcmp (cpus, "-") != 0 ? cpus : NULL);
  add_string_or_null (b, "pcie_root", root);
  add_string_or_null (b, "root_port", port);
  add_string_or_null (b, "pcie_switch", sw);
  add_string_or_null (b, "link_speed",
                      dev->link_speed != 0 ? vpa_pcie_format_speed (dev->link_speed, speed) : NULL);
  vpa_output_json_add_int_or_null (b, "link_width", dev->link_width != 0 ? dev->link_width : -1);
  add_string_or_null (b, "netdev", dev->netdev);
  vfs = vpa_topology_vfs (inv, i, &free_vfs, &total);
  vpa_output_json_add_int_or_null (b, "vfs_free", vfs ? (gint) free_vfs : -1);
  vpa_output_json_add_int_or_null (b, "vfs_total", vfs ? (gint) total : -1);
  json_builder_end_object (b);
}

char *
vpa_output_topology_json (const VpaInventory *inv, const VpaTopology *topo)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;
  guint n = topo->devices->len;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "devices");
  json_builder_begin_array (b);
  for (guint r = 0; r < n; r++)
    add_device (b, inv, topo, r);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "matrix");
  json_builder_begin_array (b);
  for (guint r = 0; r < n; r++)
    {
      json_builder_begin_array (b);
      for (guint c = 0; c < n; c++)
        json_builder_add_string_value (b, cell (topo, r, c));
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}
