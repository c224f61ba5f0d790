/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Pools generated on demand: one pass over the devices, grouping on a
 * packed key in a small open-addressing table of pool indices, then one
 * sort of the (few) pools. Nothing is stored between calls.
 */
#include "vpa-pools.h"
#include "vpa-pcie.h"

#include <string.h>

static const struct {
  const char *name;
  VpaPoolKeys key;
} pool_key_names[] = {
  { "vendor", VPA_POOL_KEY_VENDOR },
  { "vendor_id", VPA_POOL_KEY_VENDOR },
  { "product", VPA_POOL_KEY_PRODUCT },
  { "product_id", VPA_POOL_KEY_PRODUCT },
  { "numa_node", VPA_POOL_KEY_NUMA_NODE },
  { "socket", VPA_POOL_KEY_SOCKET },
  { "dev_type", VPA_POOL_KEY_DEV_TYPE },
  { "tags", VPA_POOL_KEY_TAGS },
  { "pf", VPA_POOL_KEY_PF },
  { "pcie-root", VPA_POOL_KEY_PCIE_ROOT },
  { "pcie-switch", VPA_POOL_KEY_PCIE_SWITCH },
};

VpaPoolKeys
vpa_pools_key_from_name (const char *name)
{
  for (guint k = 0; k < G_N_ELEMENTS (pool_key_names); k++)
    {
      if (strcmp (name, pool_key_names[k].name) == 0)
        return pool_key_names[k].key;
    }
  return 0;
}

gboolean
vpa_pools_keys_parse (const char *str, VpaPoolKeys *out, GError **error)
{
  g_auto (GStrv) items = NULL;
  guint keys = 0;

  g_return_val_if_fail (str != NULL && out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  items = g_strsplit (str, ",", -1);
  for (guint i = 0; items[i] != NULL; i++)
    {
      const char *item = g_strstrip (items[i]);
      guint k;

      for (k = 0; k < G_N_ELEMENTS (pool_key_names); k++)
        {
          if (strcmp (item, pool_key_names[k].name) == 0)
            break;
        }
      if (k == G_N_ELEMENTS (pool_key_names))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "pool keys '%s': unknown key '%s' (expected vendor, product, numa_node, socket, dev_type, tags, pf, pcie-root or pcie-switch)", str, item);
          return FALSE;
        }
      keys |= pool_key_names[k].key;
    }
  if (keys == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "pool keys '%s': no key given", str);
      return FALSE;
    }
  *out = (VpaPoolKeys) keys;
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* One pool                                                            */
/* ------------------------------------------------------------------ */

static void
pool_init (VpaPool *pool)
{
  memset (pool, 0, sizeof (*pool));
  pool->numa_node = VPA_NUMA_NONE;
  pool->socket = VPA_SOCKET_NONE;
  pool->tagset = -1;
  pool->pf = VPA_ADDR_NONE;
  pool->pcie_root = VPA_ADDR_NONE;
  pool->pcie_port = VPA_ADDR_NONE;
  pool->pcie_switch = VPA_ADDR_NONE;
  pool->first_addr = VPA_ADDR_NONE;
}

VpaPool *
vpa_pool_new (void)
{
  VpaPool *pool = g_new (VpaPool, 1);

  pool_init (pool);
  return pool;
}

void
vpa_pool_clear (VpaPool *pool)
{
  g_clear_pointer (&pool->host, g_free);
  g_clear_pointer (&pool->tags, g_ptr_array_unref);
}

void
vpa_pool_free (VpaPool *pool)
{
  if (pool == NULL)
    return;
  vpa_pool_clear (pool);
  g_free (pool);
}

GPtrArray *
vpa_pools_tags (const VpaPool *pool, const VpaConfig *config)
{
  if (pool->tags != NULL)
    return pool->tags;
  if (config == NULL || pool->tagset < 0 || (guint) pool->tagset >= config->tagsets->len)
    return NULL;
  return g_ptr_array_index (config->tagsets, pool->tagset);
}

const char *
vpa_pools_tag (const VpaPool *pool, const VpaConfig *config, const char *key)
{
  GPtrArray *tags = vpa_pools_tags (pool, config);

  for (guint i = 0; tags != NULL && i < tags->len; i++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (tags, i);
      if (strcmp (pair->key, key) == 0)
        return pair->value;
    }
  return NULL;
}

gint
vpa_pools_tags_cmp (GPtrArray *a, GPtrArray *b)
{
  guint na = a != NULL ? a->len : 0, nb = b != NULL ? b->len : 0;

  for (guint i = 0; i < na && i < nb; i++)
    {
      const VpaSpecPair *pa = g_ptr_array_index (a, i);
      const VpaSpecPair *pb = g_ptr_array_index (b, i);
      gint c = strcmp (pa->key, pb->key);
      if (c == 0)
        c = g_strcmp0 (pa->value, pb->value);
      if (c != 0)
        return c;
    }
  return na < nb ? -1 : na > nb;
}

/* ------------------------------------------------------------------ */
/* Grouping                                                            */
/* ------------------------------------------------------------------ */

typedef struct {
  const VpaInventory *inv;
  VpaPoolKeys keys;
  GArray *pools;     /* VpaPool */
  guint *slots;      /* pool index + 1; 0 = empty */
  guint n_slots;     /* a power of two */
  gint *node_socket; /* node id -> socket, for ids < n_nodes */
  gint n_nodes;
} Grouper;

static void
copy_id (char dst[8], const char *src)
{
  memset (dst, 0, 8);
  for (guint i = 0; i < 7 && src[i] != '\0'; i++)
    dst[i] = src[i];
}

static gint
node_socket (const Grouper *g, gint node)
{
  return node >= 0 && node < g->n_nodes ? g->node_socket[node] : VPA_SOCKET_NONE;
}

/* The pool key of device i: only the grouped fields, the others at
 * fixed defaults so that they compare equal. */
static void
make_key (const Grouper *g, guint i, VpaPool *key)
{
  const VpaDevice *dev = vpa_host_device (g->inv->host, i);
  VpaPoolKeys k = g->keys;

  pool_init (key);
  key->keys = k;
  key->tagset = 0;
  if (k & VPA_POOL_KEY_VENDOR)
    copy_id (key->vendor_id, dev->vendor_id);
  if (k & VPA_POOL_KEY_PRODUCT)
    copy_id (key->product_id, dev->product_id);
  if (k & VPA_POOL_KEY_NUMA_NODE)
    key->numa_node = dev->numa_node;
  if (k & (VPA_POOL_KEY_NUMA_NODE | VPA_POOL_KEY_SOCKET))
    key->socket = node_socket (g, dev->numa_node);
  if (k & VPA_POOL_KEY_DEV_TYPE)
    key->dev_type = dev->dev_type;
  if (k & VPA_POOL_KEY_TAGS)
    key->tagset = g->inv->tagset[i];
  if (k & VPA_POOL_KEY_PF)
    {
      key->pf = dev->dev_type == VPA_DEV_TYPE_VF && dev->parent_addr != VPA_ADDR_NONE
                  ? dev->parent_addr
                  : dev->addr;
    }
  if (k & VPA_POOL_KEY_PCIE_ROOT)
    key->pcie_root = dev->pcie_root;
  if (k & VPA_POOL_KEY_PCIE_SWITCH)
    {
      gint sw = vpa_pcie_switch (g->inv->host, i);
      key->pcie_switch = sw >= 0 ? vpa_host_device (g->inv->host, (guint) sw)->addr
                                 : VPA_ADDR_NONE;
    }
}

static guint64
key_hash (const VpaPool *k)
{
  guint64 v[7];
  guint64 h = 0x9e3779b97f4a7c15ull;

  memcpy (&v[0], k->vendor_id, 8);
  memcpy (&v[1], k->product_id, 8);
  v[2] = ((guint64) (guint32) k->numa_node << 32) | (guint32) k->socket;
  v[3] = ((guint64) k->dev_type << 32) | (guint32) k->tagset;
  v[4] = k->pf;
  v[5] = k->pcie_root;
  v[6] = k->pcie_switch;
  for (guint i = 0; i < G_N_ELEMENTS (v); i++)
    {
      h ^= v[i];
      h *= 0xff51afd7ed558ccdull;
      h ^= h >> 33;
    }
  return h;
}

static gboolean
key_equal (const VpaPool *a, const VpaPool *b)
{
  return memcmp (a->vendor_id, b->vendor_id, 8) == 0 &&
         memcmp (a->product_id, b->product_id, 8) == 0 && a->numa_node == b->numa_node &&
         a->socket == b->socket && a->dev_type == b->dev_type && a->tagset == b->tagset &&
         a->pf == b->pf && a->pcie_root == b->pcie_root && a->pcie_switch == b->pcie_switch;
}

static void
grow (Grouper *g)
{
  guint n = g->n_slots * 2;
  guint *slots = g_new0 (guint, n);

  for (guint p = 0; p < g->pools->len; p++)
    {
      guint64 s = key_hash (&g_array_index (g->pools, VpaPool, p)) & (n - 1);
      while (slots[s] != 0)
        s = (s + 1) & (n - 1);
      slots[s] = p + 1;
    }
  g_free (g->slots);
  g->slots = slots;
  g->n_slots = n;
}

/* The pool for key, created on first sight. */
static VpaPool *
find_pool (Grouper *g, const VpaPool *key, VpaAddr addr)
{
  guint64 s = key_hash (key) & (g->n_slots - 1);

  for (; g->slots[s] != 0; s = (s + 1) & (g->n_slots - 1))
    {
      VpaPool *pool = &g_array_index (g->pools, VpaPool, g->slots[s] - 1);
      if (key_equal (pool, key))
        return pool;
    }
  g_array_append_val (g->pools, *key);
  g_array_index (g->pools, VpaPool, g->pools->len - 1).first_addr = addr;
  g->slots[s] = g->pools->len;
  if (g->pools->len * 2 > g->n_slots)
    grow (g);
  return &g_array_index (g->pools, VpaPool, g->pools->len - 1);
}

static void
grouper_init (Grouper *g, const VpaInventory *inv, VpaPoolKeys keys)
{
  const GArray *cells = inv->host->cells;

  g->inv = inv;
  g->keys = keys;
  g->pools = g_array_new (FALSE, TRUE, sizeof (VpaPool));
  g_array_set_clear_func (g->pools, (GDestroyNotify) vpa_pool_clear);
  g->n_slots = 64;
  g->slots = g_new0 (guint, g->n_slots);
  g->n_nodes = 0;
  for (guint c = 0; c < cells->len; c++)
    g->n_nodes = MAX (g->n_nodes, g_array_index (cells, VpaCell, c).id + 1);
  g->node_socket = g_new (gint, MAX (g->n_nodes, 1));
  for (gint n = 0; n < g->n_nodes; n++)
    g->node_socket[n] = VPA_SOCKET_NONE;
  for (guint c = 0; c < cells->len; c++)
    {
      const VpaCell *cell = &g_array_index (cells, VpaCell, c);
      if (cell->id >= 0)
        g->node_socket[cell->id] = cell->socket;
    }
}

/* ------------------------------------------------------------------ */
/* Ordering                                                            */
/* ------------------------------------------------------------------ */

static gint
tagset_order_cmp (gconstpointer a, gconstpointer b, gpointer data)
{
  const VpaConfig *config = data;

  return vpa_pools_tags_cmp (g_ptr_array_index (config->tagsets, *(const guint *) a),
                             g_ptr_array_index (config->tagsets, *(const guint *) b));
}

/* Rank of every tag set by content, so the order does not depend on the
 * order of the device specs in the file. */
static guint *
tagset_ranks (const VpaConfig *config)
{
  guint n = config->tagsets->len;
  g_autofree guint *order = g_new (guint, n);
  guint *rank = g_new (guint, n);

  for (guint i = 0; i < n; i++)
    order[i] = i;
  /* A file may hold tens of thousands of device specs: n log n. */
  g_qsort_with_data (order, (gint) n, sizeof (guint), tagset_order_cmp, (gpointer) config);
  for (guint i = 0; i < n; i++)
    rank[order[i]] = i;
  return rank;
}

gint
vpa_pools_null_last_cmp (gint a, gint b)
{
  if (a == b)
    return 0;
  if (a < 0)
    return 1;
  if (b < 0)
    return -1;
  return a < b ? -1 : 1;
}

static gint
pool_cmp (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const VpaPool *a = pa, *b = pb;
  const guint *rank = data;
  gint c;

  if ((c = strcmp (a->vendor_id, b->vendor_id)) != 0)
    return c;
  if ((c = strcmp (a->product_id, b->product_id)) != 0)
    return c;
  if (a->dev_type != b->dev_type)
    return a->dev_type < b->dev_type ? -1 : 1;
  if ((c = vpa_pools_null_last_cmp (a->numa_node, b->numa_node)) != 0)
    return c;
  if ((c = vpa_pools_null_last_cmp (a->socket, b->socket)) != 0)
    return c;
  if (rank[a->tagset] != rank[b->tagset])
    return rank[a->tagset] < rank[b->tagset] ? -1 : 1;
  if (a->pf != b->pf)
    return a->pf < b->pf ? -1 : 1;
  if (a->pcie_root != b->pcie_root)
    return a->pcie_root < b->pcie_root ? -1 : 1; /* unknown (all ones) last */
  if (a->pcie_switch != b->pcie_switch)
    return a->pcie_switch < b->pcie_switch ? -1 : 1;
  return a->first_addr < b->first_addr ? -1 : a->first_addr > b->first_addr;
}

GArray *
vpa_pools_generate (const VpaInventory *inv, VpaPoolKeys keys)
{
  Grouper g;
  g_autofree guint *rank = NULL;
  const VpaHost *host;

  g_return_val_if_fail (inv != NULL, NULL);

  host = inv->host;
  /* a socket derived from the NUMA node is meaningful too */
  if (keys & VPA_POOL_KEY_NUMA_NODE)
    keys |= VPA_POOL_KEY_SOCKET;
  grouper_init (&g, inv, keys);
  for (guint i = 0; i < host->devices->len; i++)
    {
      VpaPool key;
      VpaPool *pool;

      if (inv->tagset[i] < 0)
        continue;
      make_key (&g, i, &key);
      pool = find_pool (&g, &key, vpa_host_device (host, i)->addr);
      pool->total++;
      switch ((VpaDevState) inv->state[i])
        {
        case VPA_DEV_STATE_HELD:
          pool->used++;
          break;
        case VPA_DEV_STATE_BLOCKED:
          pool->blocked++;
          break;
        case VPA_DEV_STATE_RESERVED:
          pool->reserved++;
          break;
        case VPA_DEV_STATE_FREE:
        case VPA_DEV_STATE_LAST:
        default:
          pool->free++;
          break;
        }
    }
  g_free (g.slots);
  g_free (g.node_socket);

  rank = tagset_ranks (inv->config);
  g_array_sort_with_data (g.pools, pool_cmp, rank);
  return g.pools;
}
