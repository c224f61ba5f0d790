/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-types.h"
#include "vpa-enum.h"
#include "vpa-pcie.h"

#include <stdio.h>
#include <string.h>

/* The quark's name is the macro's argument made a string. */
/* clang-format off */
G_DEFINE_QUARK (vpa-error-quark, vpa_error)
/* clang-format on */

/* ------------------------------------------------------------------ */

static gboolean
parse_hex_field (const char *s, gsize len, guint64 max, guint64 *out)
{
  guint64 v = 0;

  if (len == 0 || len > 8)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    {
      int d = g_ascii_xdigit_value (s[i]);
      if (d < 0)
        return FALSE;
      v = v * 16 + (guint64) d;
    }
  if (v > max)
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean
vpa_addr_parse (const char *str, VpaAddr *out)
{
  const char *colon1, *colon2, *dot;
  guint64 dom = 0, bus, slot, fn;

  g_return_val_if_fail (out != NULL, FALSE);
  if (str == NULL)
    return FALSE;

  dot = strrchr (str, '.');
  colon2 = strrchr (str, ':');
  if (dot == NULL || colon2 == NULL || dot < colon2)
    return FALSE;
  colon1 = colon2 == str ? NULL : memrchr (str, ':', (gsize) (colon2 - str));

  if (colon1 != NULL)
    {
      if (!parse_hex_field (str, (gsize) (colon1 - str), G_MAXUINT32, &dom))
        return FALSE;
      if (!parse_hex_field (colon1 + 1, (gsize) (colon2 - colon1 - 1), 0xff, &bus))
        return FALSE;
    }
  else if (!parse_hex_field (str, (gsize) (colon2 - str), 0xff, &bus))
    return FALSE;
  if (!parse_hex_field (colon2 + 1, (gsize) (dot - colon2 - 1), 0x1f, &slot))
    return FALSE;
  if (!parse_hex_field (dot + 1, strlen (dot + 1), 7, &fn))
    return FALSE;

  *out = VPA_ADDR (dom, bus, slot, fn);
  return TRUE;
}

const char *
vpa_addr_format (VpaAddr addr, char buf[VPA_ADDR_BUFLEN])
{
  if (!VPA_ADDR_IS_VALID (addr))
    {
      g_strlcpy (buf, VPA_ADDR_NONE_TEXT, VPA_ADDR_BUFLEN);
      return buf;
    }
  g_snprintf (buf, VPA_ADDR_BUFLEN, "%04x:%02x:%02x.%x", VPA_ADDR_DOMAIN (addr),
              VPA_ADDR_BUS (addr), VPA_ADDR_SLOT (addr), VPA_ADDR_FUNCTION (addr));
  return buf;
}

G_STATIC_ASSERT (sizeof VPA_ADDR_NONE_TEXT <= VPA_ADDR_BUFLEN);
G_STATIC_ASSERT (VPA_ADDR (G_MAXUINT32, 0xff, 0x1f, 7) == VPA_ADDR_MAX);
G_STATIC_ASSERT (!VPA_ADDR_IS_VALID (VPA_ADDR_NONE));

gboolean
vpa_addr_same (VpaAddr a, VpaAddr b)
{
  return VPA_ADDR_IS_VALID (a) && a == b;
}

char *
vpa_addr_to_string (VpaAddr addr)
{
  char buf[VPA_ADDR_BUFLEN];
  return g_strdup (vpa_addr_format (addr, buf));
}

/* ------------------------------------------------------------------ */

gint
vpa_enum_lookup (const char *const *names, guint n, const char *str)
{
  for (guint i = 0; str != NULL && i < n; i++)
    {
      if (strcmp (names[i], str) == 0)
        return (gint) i;
    }
  return -1;
}

VPA_ENUM_IMPL (vpa_dev_type, VpaDevType, VPA_DEV_TYPE_LAST, "type-PCI", "type-PF", "type-VF")
VPA_ENUM_IMPL (vpa_policy, VpaPolicy, VPA_POLICY_LAST, "legacy", "required", "preferred",
               "socket")
VPA_ENUM_IMPL (vpa_policy_source, VpaPolicySource, VPA_POLICY_SOURCE_LAST, "port", "flavor",
               "image", "alias", "default")

/* ------------------------------------------------------------------ */

VpaDevice *
vpa_device_new (void)
{
  VpaDevice *dev = g_new0 (VpaDevice, 1);
  dev->addr = VPA_ADDR_NONE;
  dev->dev_type = VPA_DEV_TYPE_PCI;
  dev->numa_node = VPA_NUMA_NONE;
  dev->parent_addr = VPA_ADDR_NONE;
  dev->iommu_group = -1;
  dev->parent_index = -1;
  dev->pcie_root = VPA_ADDR_NONE;
  dev->pcie_parent = VPA_ADDR_NONE;
  dev->pcie_parent_index = -1;
  return dev;
}

void
vpa_device_free (VpaDevice *dev)
{
  if (dev == NULL)
    return;
  g_free (dev->netdev);
  g_free (dev->driver);
  if (dev->vf_indices != NULL)
    g_array_unref (dev->vf_indices);
  g_free (dev);
}

VpaClaim *
vpa_claim_new (const char *domain, VpaAddr addr, gboolean running)
{
  VpaClaim *claim = g_new0 (VpaClaim, 1);
  claim->domain = g_strdup (domain);
  claim->addr = addr;
  claim->running = running;
  return claim;
}

VpaNumaUse *
vpa_numa_use_new (void)
{
  VpaNumaUse *use = g_new0 (VpaNumaUse, 1);
  use->dedicated = g_array_new (FALSE, FALSE, sizeof (guint));
  use->pinned = g_array_new (FALSE, FALSE, sizeof (guint));
  use->memory = g_array_new (FALSE, FALSE, sizeof (VpaMemClaim));
  return use;
}

static gboolean
sorted_has (const GArray *a, guint v)
{
  guint lo = 0, hi = a->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      guint x = g_array_index (a, guint, mid);
      if (x == v)
        return TRUE;
      if (x < v)
        {
          lo = mid + 1;
        }
      else
        {
          hi = mid;
        }
    }
  return FALSE;
}

gboolean
vpa_numa_use_holds (const VpaNumaUse *use, guint cpu)
{
  return sorted_has (use->dedicated, cpu) || sorted_has (use->pinned, cpu);
}

void
vpa_numa_use_free (VpaNumaUse *use)
{
  if (use == NULL)
    return;
  g_array_unref (use->dedicated);
  g_array_unref (use->pinned);
  g_array_unref (use->memory);
  g_free (use);
}

VpaClaim *
vpa_claim_new_numa (const char *domain, gboolean running, VpaNumaUse *use)
{
  VpaClaim *claim = vpa_claim_new (domain, VPA_ADDR_NONE, running);
  claim->numa = use;
  return claim;
}

VpaClaim *
vpa_claim_copy (const VpaClaim *claim)
{
  VpaClaim *copy = vpa_claim_new (claim->domain, claim->addr, claim->running);

  if (claim->numa != NULL)
    {
      copy->numa = g_new0 (VpaNumaUse, 1);
      copy->numa->dedicated = g_array_copy (claim->numa->dedicated);
      copy->numa->pinned = g_array_copy (claim->numa->pinned);
      copy->numa->memory = g_array_copy (claim->numa->memory);
    }
  return copy;
}

void
vpa_claim_free (VpaClaim *claim)
{
  if (claim == NULL)
    return;
  g_free (claim->domain);
  vpa_numa_use_free (claim->numa);
  g_free (claim);
}

GPtrArray *
vpa_claims_filter (GPtrArray *claims, const char *exclude, gboolean running_only)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);

  for (guint i = 0; claims != NULL && i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);
      if (g_strcmp0 (c->domain, exclude) == 0 || (running_only && !c->running))
        continue;
      g_ptr_array_add (out, vpa_claim_copy (c));
    }
  return out;
}

static void
cell_clear (gpointer data)
{
  VpaCell *cell = data;
  if (cell->cpus != NULL)
    g_array_unref (cell->cpus);
  if (cell->topo != NULL)
    g_array_unref (cell->topo);
  if (cell->pages != NULL)
    g_array_unref (cell->pages);
  if (cell->distances != NULL)
    g_array_unref (cell->distances);
}

VpaHost *
vpa_host_new (const char *source)
{
  VpaHost *host = g_new0 (VpaHost, 1);
  host->source = g_strdup (source);
  host->devices = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_device_free);
  host->cells = g_array_new (FALSE, TRUE, sizeof (VpaCell));
  g_array_set_clear_func (host->cells, cell_clear);
  host->claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  return host;
}

void
vpa_host_free (VpaHost *host)
{
  if (host == NULL)
    return;
  g_free (host->source);
  g_free (host->hostname);
  g_ptr_array_unref (host->devices);
  g_array_unref (host->cells);
  g_ptr_array_unref (host->claims);
  if (host->by_addr != NULL)
    g_hash_table_unref (host->by_addr);
  g_free (host);
}

void
vpa_host_add_device (VpaHost *host, VpaDevice *dev)
{
  g_return_if_fail (host != NULL && dev != NULL);
  g_ptr_array_add (host->devices, dev);
  host->sealed = FALSE;
}

void
vpa_host_add_cell (VpaHost *host, const VpaCell *cell)
{
  VpaCell copy = *cell;
  if (copy.cpus == NULL)
    copy.cpus = g_array_new (FALSE, FALSE, sizeof (guint));
  g_array_append_val (host->cells, copy);
  host->sealed = FALSE;
}

void
vpa_host_add_claim (VpaHost *host, VpaClaim *claim)
{
  g_ptr_array_add (host->claims, claim);
}

static gint
device_cmp (gconstpointer a, gconstpointer b)
{
  const VpaDevice *da = *(VpaDevice *const *) a;
  const VpaDevice *db = *(VpaDevice *const *) b;
  return da->addr < db->addr ? -1 : da->addr > db->addr;
}

static gint
cell_cmp (gconstpointer a, gconstpointer b)
{
  const VpaCell *ca = a, *cb = b;
  return ca->id < cb->id ? -1 : ca->id > cb->id;
}

guint
vpa_addr_hash (gconstpointer p)
{
  VpaAddr a = *(const VpaAddr *) p;
  return (guint) (a ^ (a >> 32));
}

gboolean
vpa_addr_equal (gconstpointer a, gconstpointer b)
{
  return *(const VpaAddr *) a == *(const VpaAddr *) b;
}

gboolean
vpa_host_seal (VpaHost *host, GError **error)
{
  g_return_val_if_fail (host != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_ptr_array_sort (host->devices, device_cmp);
  g_array_sort (host->cells, cell_cmp);

  for (guint i = 1; i < host->cells->len; i++)
    {
      const VpaCell *c = &g_array_index (host->cells, VpaCell, i);
      if (c->id == g_array_index (host->cells, VpaCell, i - 1).id)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: NUMA cell id '%d' appears twice", host->source, c->id);
          return FALSE;
        }
    }

  if (host->by_addr != NULL)
    g_hash_table_unref (host->by_addr);
  host->by_addr = g_hash_table_new (vpa_addr_hash, vpa_addr_equal);

  for (guint i = 0; i < host->devices->len; i++)
    {
      VpaDevice *dev = vpa_host_device (host, i);
      char buf[VPA_ADDR_BUFLEN];

      if (i > 0 && vpa_host_device (host, i - 1)->addr == dev->addr)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: PCI device '%s' appears twice", host->source,
                       vpa_addr_format (dev->addr, buf));
          return FALSE;
        }
      dev->parent_index = -1;
      if (dev->vf_indices != NULL)
        g_array_set_size (dev->vf_indices, 0);
      g_hash_table_insert (host->by_addr, &dev->addr, GUINT_TO_POINTER (i + 1));
    }

  for (guint i = 0; i < host->devices->len; i++)
    {
      VpaDevice *dev = vpa_host_device (host, i);
      gint p;
      VpaDevice *pf;

      if (dev->dev_type != VPA_DEV_TYPE_VF || dev->parent_addr == VPA_ADDR_NONE)
        continue;
      p = vpa_host_lookup (host, dev->parent_addr);
      if (p < 0)
        continue;
      pf = vpa_host_device (host, (guint) p);
      if (pf->dev_type != VPA_DEV_TYPE_PF)
        continue;
      dev->parent_index = p;
      if (pf->vf_indices == NULL)
        pf->vf_indices = g_array_new (FALSE, FALSE, sizeof (guint));
      g_array_append_val (pf->vf_indices, i);
    }

  if (!vpa_pcie_seal (host, error))
    return FALSE;
  host->sealed = TRUE;
  return TRUE;
}

gint
vpa_host_lookup (const VpaHost *host, VpaAddr addr)
{
  gpointer v;

  g_return_val_if_fail (host != NULL && host->by_addr != NULL, -1);
  v = g_hash_table_lookup (host->by_addr, &addr);
  return v == NULL ? -1 : (gint) GPOINTER_TO_UINT (v) - 1;
}

const VpaCell *
vpa_host_cell (const VpaHost *host, gint id)
{
  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *c = &g_array_index (host->cells, VpaCell, i);
      if (c->id == id)
        return c;
    }
  return NULL;
}

gint
vpa_host_node_socket (const VpaHost *host, gint node)
{
  const VpaCell *c = vpa_host_cell (host, node);
  return c == NULL ? VPA_SOCKET_NONE : c->socket;
}

gboolean
vpa_host_sockets_known (const VpaHost *host)
{
  if (host->cells->len == 0)
    return FALSE;
  for (guint i = 0; i < host->cells->len; i++)
    {
      if (g_array_index (host->cells, VpaCell, i).socket == VPA_SOCKET_NONE)
        return FALSE;
    }
  return TRUE;
}

gint
vpa_cell_socket_from_cpu_sockets (const gint *sockets, guint n)
{
  if (n == 0)
    return VPA_SOCKET_NONE;
  for (guint i = 0; i < n; i++)
    {
      if (sockets[i] < 0 || sockets[i] != sockets[0])
        return VPA_SOCKET_NONE;
    }
  return sockets[0];
}

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

static void
append_escaped (GString *out, const char *p, gsize len)
{
  if (len == 1 && *p == '\n')
    {
      g_string_append (out, "\\n");
    }
  else if (len == 1 && *p == '\t')
    {
      g_string_append (out, "\\t");
    }
  else if (len == 1 && ((guchar) *p < 0x20 || *p == 0x7f || (guchar) *p >= 0x80))
    {
      g_string_append_printf (out, "\\x%02x", (guchar) *p);
    }
  else
    {
      g_string_append_len (out, p, (gssize) len);
    }
}

char *
vpa_message_bound (const char *message, gsize max)
{
  static const char ellipsis[] = "…";
  const gsize ell = sizeof ellipsis - 1;
  const char *p, *end;
  gsize fit = 0; /* longest prefix (in out) that leaves room for the ellipsis */
  GString *out;

  g_return_val_if_fail (message != NULL, NULL);
  g_return_val_if_fail (max > ell + 4, NULL);

  end = message + strlen (message);
  out = g_string_sized_new (MIN ((gsize) (end - message), max) + 1);
  for (p = message; p < end && out->len <= max;)
    {
      gunichar c = g_utf8_get_char_validated (p, end - p);
      gsize len = c == (gunichar) -1 || c == (gunichar) -2 ? 1
                                                           : (gsize) g_utf8_skip[*(const guchar *) p];

      if (out->len + ell <= max)
        fit = out->len;
      append_escaped (out, p, len);
      p += len;
    }
  if (p < end || out->len > max)
    {
      g_string_truncate (out, fit);
      g_string_append (out, ellipsis);
    }
  return g_string_free (out, FALSE);
}

char *
vpa_message_escape (const char *text)
{
  g_return_val_if_fail (text != NULL, NULL);
  return vpa_message_bound (text, G_MAXSIZE);
}

guint
vpa_host_distance (const VpaHost *host, gint from, gint to)
{
  const VpaCell *c = vpa_host_cell (host, from);

  if (from == to)
    return 10;
  for (guint i = 0; c != NULL && c->distances != NULL && i < c->distances->len; i++)
    {
      const VpaDistance *d = &g_array_index (c->distances, VpaDistance, i);
      if (d->node == to)
        return d->value;
    }
  return G_MAXUINT;
}

const VpaPages *
vpa_cell_pages (const VpaCell *cell, guint64 size_kib)
{
  for (guint i = 0; cell->pages != NULL && i < cell->pages->len; i++)
    {
      const VpaPages *p = &g_array_index (cell->pages, VpaPages, i);
      if (p->size_kib == size_kib)
        return p;
    }
  return NULL;
}

/* ------------------------------------------------------------------ */

VPA_ENUM_IMPL (vpa_cpu_policy, VpaCpuPolicy, VPA_CPU_POLICY_LAST, "shared", "dedicated")
VPA_ENUM_IMPL (vpa_thread_policy, VpaThreadPolicy, VPA_THREAD_POLICY_LAST, "prefer", "isolate",
               "require")
