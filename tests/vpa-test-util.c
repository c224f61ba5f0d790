/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "vpa-test-util.h"

void
vpa_test_assert_golden (const char *path, const char *actual)
{
  g_autofree char *expected = NULL;
  g_autoptr (GError) error = NULL;

  if (g_strcmp0 (g_getenv ("VPA_TEST_REGENERATE"), "1") == 0)
    {
      g_autofree char *dir = g_path_get_dirname (path);

      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      g_file_set_contents (path, actual, -1, &error);
      g_assert_no_error (error);
      return;
    }
  if (!g_file_get_contents (path, &expected, NULL, &error))
    g_error ("%s (VPA_TEST_REGENERATE=1 writes it); actual:\n%s", error->message, actual);
  g_assert_cmpstr (actual, ==, expected);
}

char *
vpa_test_read_fixture (const char *path, gsize *len)
{
  g_autoptr (GError) error = NULL;
  char *buf = NULL;

  g_file_get_contents (path, &buf, len, &error);
  g_assert_no_error (error);
  return buf;
}

static gint
str_ptr_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

GPtrArray *
vpa_test_list_fixtures (const char *dir, const char *glob)
{
  const char *star = strchr (glob, '*');
  g_autofree char *head = NULL;
  const char *tail;
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) d = NULL;
  GPtrArray *stems = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_nonnull (star);
  head = g_strndup (glob, (gsize) (star - glob));
  tail = star + 1;
  d = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      gsize len = strlen (name);

      if (len >= strlen (head) + strlen (tail) && g_str_has_prefix (name, head) && g_str_has_suffix (name, tail))
        {
          g_ptr_array_add (stems, g_strndup (name + strlen (head),
                                             len - strlen (head) - strlen (tail)));
        }
    }
  g_assert_cmpuint (stems->len, >, 0);
  g_ptr_array_sort (stems, str_ptr_cmp);
  return stems;
}

void
vpa_test_add_fixture_cases (const char *dir, const char *glob, const char *prefix,
                            GTestDataFunc func)
{
  g_autoptr (GPtrArray) stems = vpa_test_list_fixtures (dir, glob);
  const char *star = strchr (glob, '*');

  for (guint i = 0; i < stems->len; i++)
    {
      const char *stem = g_ptr_array_index (stems, i);
      g_autofree char *test = g_strdup_printf ("%s/%s", prefix, stem);
      g_autofree char *name = g_strdup_printf ("%.*s%s%s", (int) (star - glob), glob, stem,
                                               star + 1);

      g_test_add_data_func_full (test, g_build_filename (dir, name, NULL), func, g_free);
    }
}

VpaConfig *
vpa_test_config_load (const char *text)
{
  g_autoptr (GError) error = NULL;
  VpaConfig *config = vpa_config_load_data (text, strlen (text), "t.conf", &error);

  g_assert_no_error (error);
  return config;
}

VpaDevice *
vpa_test_device_new (VpaAddr addr, const char *ids, VpaDevType type, VpaAddr parent,
                     gint numa, const char *netdev)
{
  VpaDevice *dev = vpa_device_new ();

  g_assert_cmpuint (strlen (ids), ==, 9);
  dev->addr = addr;
  g_strlcpy (dev->vendor_id, ids, 5);
  g_strlcpy (dev->product_id, ids + 5, 5);
  dev->dev_type = type;
  dev->parent_addr = parent;
  dev->numa_node = numa;
  dev->netdev = g_strdup (netdev);
  return dev;
}

VpaDevice *
vpa_test_add_device (VpaHost *host, VpaAddr addr, const char *ids, VpaDevType type,
                     VpaAddr parent, gint numa, const char *netdev)
{
  VpaDevice *dev = vpa_test_device_new (addr, ids, type, parent, numa, netdev);

  vpa_host_add_device (host, dev);
  return dev;
}

const VpaDevice *
vpa_test_device_at (const VpaHost *host, const char *addr_str)
{
  VpaAddr addr;
  gint i;

  g_assert_true (vpa_addr_parse (addr_str, &addr));
  i = vpa_host_lookup (host, addr);
  if (i < 0)
    g_error ("%s: no device %s", host->source, addr_str);
  return vpa_host_device (host, (guint) i);
}

char *
vpa_test_device_string (const VpaDevice *d, gboolean with_driver)
{
  char a[VPA_ADDR_BUFLEN], p[VPA_ADDR_BUFLEN];
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "%s %s:%s class=%06x %s numa=%d parent=%s max_vfs=%u "
                             "iommu=%d netdev=%s driver=%s parent_index=%d vfs=",
                          vpa_addr_format (d->addr, a), d->vendor_id, d->product_id,
                          d->class_code, vpa_dev_type_to_string (d->dev_type), d->numa_node,
                          d->parent_addr == VPA_ADDR_NONE ? "-"
                                                          : vpa_addr_format (d->parent_addr, p),
                          d->max_vfs, d->iommu_group, d->netdev ? d->netdev : "-",
                          with_driver && d->driver ? d->driver : "-", d->parent_index);
  for (guint i = 0; d->vf_indices != NULL && i < d->vf_indices->len; i++)
    g_string_append_printf (s, "%s%u", i ? "," : "", g_array_index (d->vf_indices, guint, i));
  return g_string_free (s, FALSE);
}

void
vpa_test_assert_cells_equal (const VpaCell *a, const VpaCell *b)
{
  g_assert_cmpint (a->id, ==, b->id);
  g_assert_cmpint (a->socket, ==, b->socket);
  g_assert_cmpuint (a->memory_kib, ==, b->memory_kib);
  g_assert_cmpuint (a->cpus->len, ==, b->cpus->len);
  g_assert_cmpmem (a->cpus->data, a->cpus->len * sizeof (guint), b->cpus->data,
                   b->cpus->len * sizeof (guint));
}

void
vpa_test_assert_hosts_equal (const VpaHost *a, const VpaHost *b)
{
  g_assert_cmpuint (a->devices->len, ==, b->devices->len);
  for (guint i = 0; i < a->devices->len; i++)
    {
      g_autofree char *x = vpa_test_device_string (vpa_host_device (a, i), TRUE);
      g_autofree char *y = vpa_test_device_string (vpa_host_device (b, i), TRUE);

      g_assert_cmpstr (x, ==, y);
    }
  g_assert_cmpuint (a->cells->len, ==, b->cells->len);
  for (guint i = 0; i < a->cells->len; i++)
    {
      vpa_test_assert_cells_equal (&g_array_index (a->cells, VpaCell, i),
                                   &g_array_index (b->cells, VpaCell, i));
    }
}

void
vpa_test_assert_capacity_equal (const VpaHost *ha, const VpaHost *hb)
{
  g_assert_cmpuint (ha->cells->len, ==, hb->cells->len);
  for (guint c = 0; c < ha->cells->len; c++)
    {
      const VpaCell *a = &g_array_index (ha->cells, VpaCell, c);
      const VpaCell *b = &g_array_index (hb->cells, VpaCell, c);

      vpa_test_assert_cells_equal (a, b);
      g_assert_true ((a->topo == NULL) == (b->topo == NULL));
      for (guint i = 0; a->topo != NULL && i < a->topo->len; i++)
        {
          const VpaCpuTopo *x = &g_array_index (a->topo, VpaCpuTopo, i);
          const VpaCpuTopo *y = &g_array_index (b->topo, VpaCpuTopo, i);
          g_assert_cmpint (x->online, ==, y->online);
          g_assert_cmpint (x->socket, ==, y->socket);
          g_assert_cmpint (x->core, ==, y->core);
          g_assert_cmpuint (x->siblings, ==, y->siblings);
        }
      g_assert_cmpuint (a->pages != NULL ? a->pages->len : 0, ==, b->pages != NULL ? b->pages->len : 0);
      for (guint i = 0; a->pages != NULL && i < a->pages->len; i++)
        {
          const VpaPages *x = &g_array_index (a->pages, VpaPages, i);
          const VpaPages *y = &g_array_index (b->pages, VpaPages, i);
          g_assert_cmpuint (x->size_kib, ==, y->size_kib);
          g_assert_cmpuint (x->total, ==, y->total);
          g_assert_cmpuint (x->free, ==, y->free);
        }
      g_assert_cmpuint (a->distances != NULL ? a->distances->len : 0, ==,
                        b->distances != NULL ? b->distances->len : 0);
      for (guint i = 0; a->distances != NULL && i < a->distances->len; i++)
        {
          g_assert_cmpint (g_array_index (a->distances, VpaDistance, i).node, ==,
                           g_array_index (b->distances, VpaDistance, i).node);
          g_assert_cmpuint (g_array_index (a->distances, VpaDistance, i).value, ==,
                            g_array_index (b->distances, VpaDistance, i).value);
        }
    }
}
