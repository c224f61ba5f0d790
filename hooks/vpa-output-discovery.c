/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-output-discovery.h"

#include "vpa-output.h"

static const char *
or_dash (const char *s)
{
  return s != NULL && s[0] != '\0' ? s : "-";
}

static char *
int_or_dash (gint v, gint none)
{
  return v == none ? g_strdup ("-") : g_strdup_printf ("%d", v);
}

/* The [device-spec] admitting device i, "bridge" when none can, NULL
 * when none does. */
static const char *
spec_of (const VpaHost *host, const VpaConfig *config, guint i)
{
  const VpaDeviceSpec *spec = vpa_config_match_device (config, host, i);

  if (spec != NULL)
    return spec->name;
  return vpa_config_never_assignable (g_ptr_array_index (host->devices, i)) ? "bridge" : NULL;
}

char *
vpa_output_discovery_text (const VpaHost *host, const VpaConfig *config)
{
  g_autoptr (GString) s = g_string_new (NULL);

  g_string_append_printf (s, "%-13s %-10s %-6s %-9s %-4s %-6s %-13s %-12s %-12s %-5s %s\n",
                          "ADDRESS", "ID", "CLASS", "TYPE", "NUMA", "SOCKET", "PF", "NETDEV",
                          "DRIVER", "IOMMU", "SPEC");
  for (guint i = 0; i < host->devices->len; i++)
    {
      const VpaDevice *d = g_ptr_array_index (host->devices, i);
      g_autofree char *numa = int_or_dash (d->numa_node, VPA_NUMA_NONE);
      g_autofree char *socket = int_or_dash (
        d->numa_node == VPA_NUMA_NONE ? VPA_SOCKET_NONE : vpa_host_node_socket (host, d->numa_node),
        VPA_SOCKET_NONE);
      g_autofree char *iommu = int_or_dash (d->iommu_group, -1);
      char addr[VPA_ADDR_BUFLEN], pf[VPA_ADDR_BUFLEN] = "-";

      if (d->parent_addr != VPA_ADDR_NONE)
        vpa_addr_format (d->parent_addr, pf);
      g_string_append_printf (s, "%-13s %s:%s  %04x   %-9s %-4s %-6s %-13s %-12s %-12s %-5s %s\n",
                              vpa_addr_format (d->addr, addr), d->vendor_id, d->product_id,
                              d->class_code >> 8, vpa_dev_type_to_string (d->dev_type), numa,
                              socket, pf, or_dash (d->netdev), or_dash (d->driver), iommu,
                              or_dash (spec_of (host, config, i)));
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static void
add_string_or_null (JsonBuilder *b, const char *key, const char *v)
{
  json_builder_set_member_name (b, key);
  if (v != NULL)
    {
      json_builder_add_string_value (b, v);
    }
  else
    {
      json_builder_add_null_value (b);
    }
}

static void
add_device (JsonBuilder *b, const VpaHost *host, const VpaConfig *config, guint i)
{
  const VpaDevice *d = g_ptr_array_index (host->devices, i);
  g_autofree char *klass = g_strdup_printf ("%06x", d->class_code);
  char addr[VPA_ADDR_BUFLEN], pf[VPA_ADDR_BUFLEN];

  json_builder_begin_object (b);
  add_string_or_null (b, "address", vpa_addr_format (d->addr, addr));
  add_string_or_null (b, "vendor_id", d->vendor_id);
  add_string_or_null (b, "product_id", d->product_id);
  add_string_or_null (b, "class", d->class_code != 0 ? klass : NULL);
  add_string_or_null (b, "dev_type", vpa_dev_type_to_string (d->dev_type));
  vpa_output_json_add_int_or_null (b, "numa_node", d->numa_node);
  vpa_output_json_add_int_or_null (
    b, "socket",
    d->numa_node == VPA_NUMA_NONE ? VPA_SOCKET_NONE : vpa_host_node_socket (host, d->numa_node));
  add_string_or_null (b, "pf",
                      d->parent_addr != VPA_ADDR_NONE ? vpa_addr_format (d->parent_addr, pf) : NULL);
  add_string_or_null (b, "netdev", d->netdev);
  add_string_or_null (b, "driver", d->driver);
  vpa_output_json_add_int_or_null (b, "iommu_group", d->iommu_group);
  add_string_or_null (b, "spec", spec_of (host, config, i));
  json_builder_end_object (b);
}

char *
vpa_output_discovery_json (const VpaHost *host, const VpaConfig *config)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "devices");
  json_builder_begin_array (b);
  for (guint i = 0; i < host->devices->len; i++)
    add_device (b, host, config, i);
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}
