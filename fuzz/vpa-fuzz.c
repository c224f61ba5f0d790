/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-fuzz.h"

#include <string.h>

static void
drop_log (const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  (void) domain;
  (void) level;
  (void) message;
  (void) data;
}

void
vpa_fuzz_init (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
      g_log_set_handler ("vpa", G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO | G_LOG_LEVEL_MESSAGE,
                         drop_log, NULL);
      g_once_init_leave (&once, 1);
    }
}

char *
vpa_fuzz_strndup (const uint8_t *data, size_t size)
{
  char *s = g_malloc (size + 1);

  if (size > 0)
    memcpy (s, data, size);
  s[size] = '\0';
  return s;
}

static void
add_device (VpaHost *host, VpaAddr addr, const char *product, VpaDevType type, gint node,
            VpaAddr parent, const char *netdev)
{
  VpaDevice *dev = vpa_device_new ();

  dev->addr = addr;
  g_strlcpy (dev->vendor_id, "8086", sizeof dev->vendor_id);
  g_strlcpy (dev->product_id, product, sizeof dev->product_id);
  dev->dev_type = type;
  dev->numa_node = node;
  dev->parent_addr = parent;
  dev->max_vfs = type == VPA_DEV_TYPE_PF ? 4 : 0;
  dev->netdev = g_strdup (netdev);
  vpa_host_add_device (host, dev);
}

VpaHost *
vpa_fuzz_small_host (void)
{
  g_autoptr (VpaHost) host = vpa_host_new ("fuzz-host.xml");
  g_autoptr (GError) error = NULL;

  for (gint node = 0; node < 2; node++)
    {
      guint bus = node == 0 ? 0x81 : 0xc1;
      VpaAddr pf = VPA_ADDR (0, bus, 0, 0);
      g_autofree char *netdev = g_strdup_printf ("ens%df0", node + 1);
      VpaCell cell = { .id = node, .socket = node, .memory_kib = 1024 * 1024 };

      add_device (host, pf, "1572", VPA_DEV_TYPE_PF, node, VPA_ADDR_NONE, netdev);
      for (guint vf = 0; vf < 4; vf++)
        add_device (host, VPA_ADDR (0, bus, 2, vf), "154c", VPA_DEV_TYPE_VF, node, pf, NULL);
      add_device (host, VPA_ADDR (0, bus + 1, 0, 0), "0443", VPA_DEV_TYPE_PCI, node,
                  VPA_ADDR_NONE, NULL);
      cell.cpus = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint cpu = 0; cpu < 4; cpu++)
        {
          guint id = (guint) node * 4 + cpu;
          g_array_append_val (cell.cpus, id);
        }
      vpa_host_add_cell (host, &cell);
    }
  if (!vpa_host_seal (host, &error))
    g_error ("fuzz host: %s", error->message);
  return g_steal_pointer (&host);
}
