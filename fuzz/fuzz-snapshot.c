/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host snapshots through the streaming reader. A snapshot read must be a
 * consistent sealed host, and writing it and reading that back must give
 * the same devices, cells and claims.
 */
#include <string.h>

#include "vpa-fuzz.h"
#include "vpa-source.h"

static void
check_host (const VpaHost *host)
{
  VPA_FUZZ_CHECK (host->sealed);
  for (guint i = 0; i < host->devices->len; i++)
    {
      const VpaDevice *dev = vpa_host_device (host, i);

      VPA_FUZZ_CHECK (dev->addr != VPA_ADDR_NONE);
      VPA_FUZZ_CHECK (i == 0 || vpa_host_device (host, i - 1)->addr < dev->addr);
      VPA_FUZZ_CHECK (vpa_host_lookup (host, dev->addr) == (gint) i);
      VPA_FUZZ_CHECK (dev->dev_type < VPA_DEV_TYPE_LAST);
      VPA_FUZZ_CHECK (dev->parent_index < (gint) host->devices->len);
      if (dev->parent_index >= 0)
        {
          VPA_FUZZ_CHECK (vpa_host_device (host, (guint) dev->parent_index)->addr ==
                          dev->parent_addr);
        }
    }
  for (guint i = 1; i < host->cells->len; i++)
    {
      VPA_FUZZ_CHECK (g_array_index (host->cells, VpaCell, i - 1).id <
                      g_array_index (host->cells, VpaCell, i).id);
    }
  for (guint i = 0; i < host->claims->len; i++)
    {
      const VpaClaim *claim = g_ptr_array_index (host->claims, i);
      /* a device claim names a device; a NUMA claim holds CPUs or memory */
      VPA_FUZZ_CHECK (claim->domain != NULL && (claim->addr != VPA_ADDR_NONE) == (claim->numa == NULL));
      VPA_FUZZ_CHECK (claim->numa == NULL || claim->numa->dedicated->len > 0 || claim->numa->memory->len > 0);
    }
}

static void
check_same (const VpaHost *a, const VpaHost *b)
{
  VPA_FUZZ_CHECK (a->devices->len == b->devices->len);
  VPA_FUZZ_CHECK (a->cells->len == b->cells->len);
  VPA_FUZZ_CHECK (a->claims->len == b->claims->len);
  for (guint i = 0; i < a->devices->len; i++)
    {
      const VpaDevice *x = vpa_host_device (a, i), *y = vpa_host_device (b, i);

      VPA_FUZZ_CHECK (x->addr == y->addr && x->dev_type == y->dev_type);
      VPA_FUZZ_CHECK (x->numa_node == y->numa_node && x->parent_addr == y->parent_addr);
      VPA_FUZZ_CHECK (strcmp (x->vendor_id, y->vendor_id) == 0);
      VPA_FUZZ_CHECK (strcmp (x->product_id, y->product_id) == 0);
    }
  for (guint i = 0; i < a->cells->len; i++)
    {
      const VpaCell *x = &g_array_index (a->cells, VpaCell, i);
      const VpaCell *y = &g_array_index (b->cells, VpaCell, i);
      VPA_FUZZ_CHECK (x->id == y->id && x->socket == y->socket);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (VpaHost) again = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL;
  size_t out_len = 0;
  FILE *f;
  gboolean ok;

  vpa_fuzz_init ();
  host = vpa_snapshot_load_memory (&(VpaDoc){ (const char *) data, size, "fuzz-snapshot.xml" }, &error);
  VPA_FUZZ_CHECK_RESULT (host != NULL, error);
  if (host == NULL)
    return 0;
  check_host (host);

  f = open_memstream (&out, &out_len);
  VPA_FUZZ_CHECK (f != NULL);
  ok = vpa_snapshot_write (host, f, &error);
  fclose (f);
  VPA_FUZZ_CHECK_RESULT (ok, error);
  again = vpa_snapshot_load_memory (&(VpaDoc){ out, out_len, "rewritten.xml" }, &error);
  if (again == NULL)
    fprintf (stderr, "written snapshot does not read back: %s\n", error->message);
  VPA_FUZZ_CHECK (again != NULL);
  check_host (again);
  check_same (host, again);
  return 0;
}
