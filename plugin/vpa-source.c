/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The inventory source registry. The built-in sources (snapshots and
 * sysfs) come first; sources registered later (the libvirt API, which
 * takes any other URI) are tried after them, in registration order.
 */
#include "vpa-source.h"

#include <string.h>

#define SYSFS_PREFIX "sysfs:"
#define TEST_PREFIX "test://"

char *
vpa_source_snapshot_path (const char *uri)
{
  g_return_val_if_fail (uri != NULL, NULL);

  /* test:///ABS/PATH.xml; test:///default is the test driver's own
   * built-in host, not a file. */
  if (g_str_has_prefix (uri, TEST_PREFIX))
    {
      const char *path = uri + strlen (TEST_PREFIX);

      if (path[0] != '/' || strchr (path, '?') != NULL)
        return NULL;
      if (g_str_has_suffix (path, ".xml") || g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return g_strdup (path);
      return NULL;
    }
  /* Anything else that looks like a URI is not a plain path. */
  if (*uri == '\0' || strstr (uri, "://") != NULL || g_str_has_prefix (uri, SYSFS_PREFIX))
    return NULL;
  if (g_str_has_suffix (uri, ".xml") || g_file_test (uri, G_FILE_TEST_EXISTS))
    return g_strdup (uri);
  return NULL;
}

static gboolean
snapshot_probe (const char *uri)
{
  g_autofree char *path = vpa_source_snapshot_path (uri);
  return path != NULL;
}

static VpaHost *
snapshot_source_load (const char *uri, GError **error)
{
  g_autofree char *path = vpa_source_snapshot_path (uri);

  g_return_val_if_fail (path != NULL, NULL);
  return vpa_snapshot_load (path, error);
}

static gboolean
sysfs_probe (const char *uri)
{
  return g_str_has_prefix (uri, SYSFS_PREFIX);
}

static VpaHost *
sysfs_source_load (const char *uri, GError **error)
{
  const char *root = uri + strlen (SYSFS_PREFIX);

  if (*root == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "inventory source '%s' has no root directory (e.g. 'sysfs:/')", uri);
      return NULL;
    }
  return vpa_sysfs_load (root, error);
}

static const VpaSourceOps snapshot_ops = { "snapshot", snapshot_probe, snapshot_source_load };
static const VpaSourceOps sysfs_ops = { "sysfs", sysfs_probe, sysfs_source_load };

G_LOCK_DEFINE_STATIC (registry);
static GPtrArray *registry; /* const VpaSourceOps*, built-ins first */

/* Call with the lock held. */
static GPtrArray *
registry_get (void)
{
  if (registry == NULL)
    {
      registry = g_ptr_array_new ();
      g_ptr_array_add (registry, (gpointer) &snapshot_ops);
      g_ptr_array_add (registry, (gpointer) &sysfs_ops);
    }
  return registry;
}

void
vpa_source_register (const VpaSourceOps *ops)
{
  GPtrArray *reg;

  g_return_if_fail (ops != NULL && ops->probe != NULL && ops->load != NULL);

  G_LOCK (registry);
  reg = registry_get ();
  if (!g_ptr_array_find (reg, ops, NULL))
    g_ptr_array_add (reg, (gpointer) ops);
  G_UNLOCK (registry);
}

VpaHost *
vpa_source_load (const char *uri, GError **error)
{
  const VpaSourceOps *found = NULL;
  GPtrArray *reg;

  g_return_val_if_fail (uri != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  G_LOCK (registry);
  reg = registry_get ();
  for (guint i = 0; i < reg->len && found == NULL; i++)
    {
      const VpaSourceOps *ops = g_ptr_array_index (reg, i);
      if (ops->probe (uri))
        found = ops;
    }
  G_UNLOCK (registry);

  if (found == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "unknown inventory source '%s' (expected sysfs:ROOT, test:///ABS/PATH.xml or a libvirt URI)",
                   uri);
      return NULL;
    }
  return found->load (uri, error);
}
