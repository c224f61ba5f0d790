/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What both backends read back: the pool queries and the decoding of
 * their rows, the hosts with their cells, claims and device rows, and a
 * host rebuilt from those rows as place would see it.
 */
#include "vpa-fleet-rows.h"
#include "vpa-fleet-preselect.h"
#include "vpa-pcie.h"
#include "vpa-reserve-apply.h"

#include <string.h>

static gboolean
parse_int64 (const char *s, gint64 *out)
{
  return s != NULL && g_ascii_string_to_signed (s, 10, G_MININT64, G_MAXINT64, out, NULL);
}

/* Splits "a/b/c d/e/f" into fields; every item must have n_min..n_max
 * unsigned or signed integer fields. */
static gboolean
decode_items (const char *text, guint n_min, guint n_max, GArray *out /* gint64 rows of n_max */)
{
  g_auto (GStrv) items = g_strsplit (text != NULL ? text : "", " ", -1);

  for (guint i = 0; items[i] != NULL; i++)
    {
      g_auto (GStrv) f = NULL;
      gint64 row[8] = { 0 };
      guint n;

      if (items[i][0] == '\0')
        continue;
      f = g_strsplit (items[i], "/", -1);
      n = g_strv_length (f);
      if (n < n_min || n > n_max || n_max > G_N_ELEMENTS (row))
        return FALSE;
      for (guint k = 0; k < n; k++)
        {
          if (!g_ascii_string_to_signed (f[k], 10, G_MININT64, G_MAXINT64, &row[k], NULL))
            return FALSE;
        }
      if (n < n_max)
        row[n_max - 1] = G_MININT64;
      g_array_append_vals (out, row, n_max);
    }
  return TRUE;
}

/* A VpaCell from its rows; NULL for a malformed row. */
static gboolean
fleet_cell_decode (const VpaFleetCell *fc, VpaCell *cell)
{
  g_autoptr (GArray) cpus = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) pages = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) dist = g_array_new (FALSE, FALSE, sizeof (gint64));

  memset (cell, 0, sizeof *cell);
  if (!decode_items (fc->cpus, 1, 5, cpus) || !decode_items (fc->pages, 3, 3, pages) ||
      !decode_items (fc->distances, 2, 2, dist))
    return FALSE;
  cell->id = fc->node;
  cell->socket = fc->socket;
  cell->memory_kib = fc->memory_kib;
  cell->cpus = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < cpus->len; i += 5)
    {
      const gint64 *r = &g_array_index (cpus, gint64, i);
      guint id = (guint) r[0];
      g_array_append_val (cell->cpus, id);
      if (r[4] == G_MININT64)
        continue;
      if (cell->topo == NULL)
        cell->topo = g_array_new (FALSE, FALSE, sizeof (VpaCpuTopo));
      VpaCpuTopo t = { r[1] != 0, (gint) r[2], (gint) r[3], (guint) r[4] };
      g_array_append_val (cell->topo, t);
    }
  if (fc->pages != NULL)
    {
      cell->pages = g_array_new (FALSE, FALSE, sizeof (VpaPages));
      for (guint i = 0; i < pages->len; i += 3)
        {
          const gint64 *r = &g_array_index (pages, gint64, i);
          VpaPages pg = { (guint64) r[0], (guint64) r[1], (guint64) r[2] };
          g_array_append_val (cell->pages, pg);
        }
    }
  if (fc->distances != NULL)
    {
      cell->distances = g_array_new (FALSE, FALSE, sizeof (VpaDistance));
      for (guint i = 0; i < dist->len; i += 2)
        {
          const gint64 *r = &g_array_index (dist, gint64, i);
          VpaDistance d = { (gint) r[0], (guint) r[1] };
          g_array_append_val (cell->distances, d);
        }
    }
  return TRUE;
}

VpaInventory *
vpa_fleet_rows_inventory (const VpaFleetHost *host, const VpaConfig *config, GError **error)
{
  g_autoptr (VpaHost) h = vpa_host_new (host->name);
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  VpaInventory *inv;

  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaFleetCell *fc = &g_array_index (host->cells, VpaFleetCell, i);
      VpaCell cell;

      if (!fleet_cell_decode (fc, &cell))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "host '%s': node %d: malformed capacity row (cpus '%s', pages '%s', distances '%s')", host->name, fc->node, fc->cpus != NULL ? fc->cpus : "", fc->pages != NULL ? fc->pages : "", fc->distances != NULL ? fc->distances : "");
          return NULL;
        }
      vpa_host_add_cell (h, &cell);
    }
  for (guint i = 0; host->devices != NULL && i < host->devices->len; i++)
    {
      const VpaDevice *d = g_ptr_array_index (host->devices, i);
      VpaDevice *copy = vpa_device_new ();

      copy->addr = d->addr;
      memcpy (copy->vendor_id, d->vendor_id, sizeof copy->vendor_id);
      memcpy (copy->product_id, d->product_id, sizeof copy->product_id);
      copy->dev_type = d->dev_type;
      copy->numa_node = d->numa_node;
      copy->parent_addr = d->parent_addr;
      copy->netdev = g_strdup (d->netdev);
      copy->class_code = d->class_code;
      copy->pcie_root = d->pcie_root;
      copy->pcie_parent = d->pcie_parent;
      vpa_host_add_device (h, copy);
    }
  for (guint i = 0; host->bridges != NULL && i < host->bridges->len; i++)
    {
      const VpaDevice *b = g_ptr_array_index (host->bridges, i);
      VpaDevice *copy = vpa_device_new ();

      copy->addr = b->addr;
      copy->class_code = b->class_code;
      copy->pcie_root = b->pcie_root;
      copy->pcie_parent = b->pcie_parent;
      vpa_host_add_device (h, copy);
    }
  for (guint i = 0; host->claims != NULL && i < host->claims->len; i++)
    g_ptr_array_add (claims, vpa_claim_copy (g_ptr_array_index (host->claims, i)));
  if (!vpa_host_seal (h, error))
    {
      g_prefix_error (error, "host '%s': ", host->name);
      return NULL;
    }
  inv = vpa_inventory_new (g_steal_pointer (&h), config, g_steal_pointer (&claims), error);
  /* A reserved device is never handed out; one its domain still names
   * is held already (its row has held_by). */
  for (guint r = 0; inv != NULL && host->reserved != NULL && r < host->reserved->len; r++)
    {
      gint i = vpa_host_lookup (inv->host, g_array_index (host->reserved, VpaAddr, r));

      if (i >= 0 && inv->state[i] != VPA_DEV_STATE_HELD)
        vpa_reserve_apply_one (inv, (guint) i);
    }
  return inv;
}

/* The columns both pool queries return, decoded by vpa_fleet_rows_pool:
 * host, vendor_id, product_id, dev_type, numa_node, socket, tagset,
 * tags (min), tags (max), total, free, held, blocked, reserved, first_addr,
 * pcie_root, pcie_port (VPA_FLEET_ROWS_POOL_COLUMNS). */
#define POOL_GROUP_COLUMNS \
  "host_id, vendor_id, product_id, dev_type, numa_node, tagset"

const char *
vpa_fleet_rows_pools_sql (gboolean one_host)
{
  /* The seed design's GROUP BY with what Nova's pools need (dev_type,
   * tags, NULL NUMA as its own group, state), joined to the host's cells
   * for the socket. MIN/MAX of tags detect a tagset key collision. */
#define POOLS_SQL(where)                                                           \
  "SELECT h.name, p.vendor_id, p.product_id, p.dev_type, p.numa_node, c.socket,"   \
  " p.tagset, p.tags, p.tags_max, p.total, p.free, p.held, p.blocked, p.reserved," \
  " p.first_addr, p.pcie_root, p.pcie_port"                                        \
  " FROM (SELECT " POOL_GROUP_COLUMNS ","                                          \
  "  MIN(tags) AS tags, MAX(tags) AS tags_max, COUNT(*) AS total,"                 \
  "  SUM(CASE WHEN state = 'free' THEN 1 ELSE 0 END) AS free,"                     \
  "  SUM(CASE WHEN state = 'held' THEN 1 ELSE 0 END) AS held,"                     \
  "  SUM(CASE WHEN state = 'blocked' THEN 1 ELSE 0 END) AS blocked,"               \
  "  SUM(CASE WHEN state = 'reserved' THEN 1 ELSE 0 END) AS reserved,"             \
  "  MIN(address) AS first_addr, NULL AS pcie_root, NULL AS pcie_port"             \
  "  FROM devices" where                                                           \
  "  GROUP BY " POOL_GROUP_COLUMNS ") AS p"                                        \
  " JOIN hosts AS h ON h.id = p.host_id"                                           \
  " LEFT JOIN host_cells AS c ON c.host_id = p.host_id AND c.node = p.numa_node"   \
  " ORDER BY h.name, p.vendor_id, p.product_id, p.dev_type,"                       \
  "  p.numa_node IS NULL, p.numa_node, p.tags"

  return one_host ? POOLS_SQL (" WHERE host_id = $1") : POOLS_SQL ("");
#undef POOLS_SQL
}

char *
vpa_fleet_rows_free_pools_sql (const VpaFleetRowsFreePools *which)
{
  g_autoptr (GString) out = g_string_new (
    "SELECT g.host_id AS host_id, k.vendor_id AS vendor_id, k.product_id AS product_id,"
    " k.dev_type AS dev_type, k.numa_node AS numa_node, NULL AS socket, k.tagset AS tagset,"
    " k.tags AS tags, k.tags AS tags_max, g.n AS total, g.n AS n_free, 0 AS n_held,"
    " 0 AS n_blocked, 0 AS n_reserved, g.first_addr AS first_addr, k.pcie_root AS pcie_root,"
    " k.pcie_port AS pcie_port FROM (SELECT host_id, kind_id, COUNT(*) AS n, ");

  /* Nova's pools hold only available devices; a pool is a host's free
   * devices of one kind, counted from devices_free_kinds, or with their
   * lowest address from devices_free_pools, in its order (docs/fleet.md,
   * "Device kinds"). The host (its id here) and socket are resolved by
   * the caller from the hosts it loaded. */
  g_string_append (out, which->addresses ? "MIN(address)" : "NULL");
  g_string_append (out, " AS first_addr FROM devices WHERE state = 'free'");
  if (which->skip_hosts != NULL)
    g_string_append_printf (out, " AND host_id NOT IN (VALUES %s)", which->skip_hosts);
  if (which->only_hosts != NULL)
    g_string_append_printf (out, " AND host_id IN (VALUES %s)", which->only_hosts);
  g_string_append (out, " GROUP BY host_id, kind_id) AS g"
                        " JOIN device_kinds AS k ON k.id = g.kind_id");
  /* On the groups: a condition on the kinds within the scan turns it
   * into a join over every row of the table. */
  if (which->kinds != NULL)
    g_string_append_printf (out, " WHERE %s", which->kinds);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

GHashTable *
vpa_fleet_rows_tagsets_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                (GDestroyNotify) g_ptr_array_unref);
}

/* The tags of a canonical tag string, parsed once per string. */
static GPtrArray *
tagset_get (GHashTable *tagsets, const char *tags)
{
  GPtrArray *pairs = g_hash_table_lookup (tagsets, tags);

  if (pairs == NULL)
    {
      pairs = vpa_fleet_tags_parse (tags);
      g_hash_table_insert (tagsets, g_strdup (tags), pairs);
    }
  return g_ptr_array_ref (pairs);
}

VpaPool *
vpa_fleet_rows_pool (const char *const *v, GHashTable *tagsets, const char *uri,
                     GError **error)
{
  g_autoptr (VpaPool) pool = vpa_pool_new ();
  gint64 n[5], numa = VPA_NUMA_NONE, socket = VPA_SOCKET_NONE, key;

  pool->keys = VPA_POOL_KEYS_FLEET;
  pool->host = g_strdup (v[0]);
  g_strlcpy (pool->vendor_id, v[1] != NULL ? v[1] : "", sizeof pool->vendor_id);
  g_strlcpy (pool->product_id, v[2] != NULL ? v[2] : "", sizeof pool->product_id);
  if (!vpa_dev_type_from_string (v[3], &pool->dev_type) ||
      (v[4] != NULL && !parse_int64 (v[4], &numa)) ||
      (v[5] != NULL && !parse_int64 (v[5], &socket)) || !parse_int64 (v[6], &key) ||
      v[7] == NULL || !parse_int64 (v[9], &n[0]) || !parse_int64 (v[10], &n[1]) ||
      !parse_int64 (v[11], &n[2]) || !parse_int64 (v[12], &n[3]) ||
      !parse_int64 (v[13], &n[4]) ||
      (v[14] != NULL && !vpa_addr_parse (v[14], &pool->first_addr)) ||
      (v[15] != NULL && !vpa_pcie_root_parse (v[15], &pool->pcie_root)) ||
      (v[16] != NULL && !vpa_addr_parse (v[16], &pool->pcie_port)))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': host '%s': malformed device row (dev_type '%s', address '%s')",
                   uri, v[0], v[3] != NULL ? v[3] : "", v[14] != NULL ? v[14] : "");
      return NULL;
    }
  if (g_strcmp0 (v[7], v[8]) != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': tag sets '%s' and '%s' share the key '%s'; sync the hosts again",
                   uri, v[7], v[8], v[6]);
      return NULL;
    }
  pool->numa_node = numa < 0 ? VPA_NUMA_NONE : (gint) numa;
  pool->socket = socket < 0 ? VPA_SOCKET_NONE : (gint) socket;
  pool->tags = tagset_get (tagsets, v[7]);
  pool->total = (guint) n[0];
  pool->free = (guint) n[1];
  pool->used = (guint) n[2];
  pool->blocked = (guint) n[3];
  pool->reserved = (guint) n[4];
  return g_steal_pointer (&pool);
}

/* Attaches the free pools (their host column holding the host id) to the
 * hosts, resolving each pool's socket from the host's cells. */
gboolean
vpa_fleet_rows_attach_pools (GPtrArray *hosts, GPtrArray *pools)
{
  g_autoptr (GHashTable) by_id = g_hash_table_new (g_int64_hash, g_int64_equal);

  for (guint i = 0; i < hosts->len; i++)
    {
      VpaFleetHost *host = g_ptr_array_index (hosts, i);
      host->pools = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_pool_free);
      g_hash_table_insert (by_id, &host->id, host);
    }
  for (guint i = 0; i < pools->len; i++)
    {
      VpaPool *pool = g_ptr_array_index (pools, i);
      gint64 id;
      VpaFleetHost *host;

      if (!parse_int64 (pool->host, &id) ||
          (host = g_hash_table_lookup (by_id, &id)) == NULL)
        continue;
      g_free (pool->host);
      pool->host = g_strdup (host->name);
      for (guint c = 0; c < host->cells->len; c++)
        {
          if (g_array_index (host->cells, VpaFleetCell, c).node == pool->numa_node)
            pool->socket = g_array_index (host->cells, VpaFleetCell, c).socket;
        }
      g_ptr_array_add (host->pools, g_steal_pointer (&g_ptr_array_index (pools, i)));
    }
  return TRUE;
}

VpaFleetHost *
vpa_fleet_rows_host (const char *const *v)
{
  VpaFleetHost *host = g_new0 (VpaFleetHost, 1);

  parse_int64 (v[0], &host->id);
  host->name = g_strdup (v[1]);
  host->traits = vpa_fleet_traits_parse (v[2]);
  host->last_sync = g_strdup (v[3]);
  if (v[4] == NULL || !parse_int64 (v[4], &host->sync_version))
    host->sync_version = 0;
  host->cells = g_array_new (FALSE, FALSE, sizeof (VpaFleetCell));
  g_array_set_clear_func (host->cells, (GDestroyNotify) vpa_fleet_cell_clear);
  return host;
}

void
vpa_fleet_rows_malformed (const char *uri, const char *sql, GError **error)
{
  if (error != NULL && *error != NULL)
    {
      g_prefix_error (error, "store '%s': ", uri);
    }
  else
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "store '%s': malformed row of '%s'",
                   uri, sql);
    }
}

gboolean
vpa_fleet_rows_add_cell (GHashTable *by_id, const char *const *v, GError **error)
{
  gint64 id, node, socket = VPA_SOCKET_NONE, memory = 0;
  VpaFleetHost *host;
  VpaFleetCell cell = { 0 };

  if (!parse_int64 (v[0], &id) || !parse_int64 (v[1], &node) ||
      (v[2] != NULL && !parse_int64 (v[2], &socket)) ||
      (v[3] != NULL && !parse_int64 (v[3], &memory)))
    return FALSE;
  host = g_hash_table_lookup (by_id, &id);
  if (host == NULL)
    return TRUE;
  cell.node = (gint) node;
  cell.socket = socket < 0 ? VPA_SOCKET_NONE : (gint) socket;
  cell.memory_kib = memory < 0 ? 0 : (guint64) memory;
  cell.cpus = g_strdup (v[4]);
  cell.pages = g_strdup (v[5]);
  cell.distances = g_strdup (v[6]);
  g_array_append_val (host->cells, cell);
  return TRUE;
}

void
vpa_fleet_rows_init_capacity (GPtrArray *hosts)
{
  for (guint i = 0; i < hosts->len; i++)
    {
      VpaFleetHost *host = g_ptr_array_index (hosts, i);
      host->devices = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_device_free);
      host->bridges = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_device_free);
      host->claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
      host->reserved = g_array_new (FALSE, FALSE, sizeof (VpaAddr));
    }
}

gboolean
vpa_fleet_rows_add_claim (GHashTable *by_id, const char *const *v, GError **error)
{
  g_autoptr (GArray) ded = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) mem = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (VpaNumaUse) use = NULL;
  VpaFleetHost *host;
  gint64 id;

  if (!parse_int64 (v[0], &id) || v[1] == NULL || !decode_items (v[3], 1, 1, ded) ||
      !decode_items (v[4], 3, 3, mem))
    return FALSE;
  host = g_hash_table_lookup (by_id, &id);
  if (host == NULL || host->claims == NULL)
    return TRUE;
  use = vpa_numa_use_new ();
  for (guint i = 0; i < ded->len; i++)
    {
      guint cpu = (guint) g_array_index (ded, gint64, i);
      g_array_append_val (use->dedicated, cpu);
    }
  for (guint i = 0; i < mem->len; i += 3)
    {
      const gint64 *r = &g_array_index (mem, gint64, i);
      VpaMemClaim m = { (gint) r[0], (guint64) r[1], (guint64) r[2] };
      g_array_append_val (use->memory, m);
    }
  g_ptr_array_add (host->claims, vpa_claim_new_numa (v[1], g_strcmp0 (v[2], "0") != 0 && g_strcmp0 (v[2], "f") != 0,
                                                     g_steal_pointer (&use)));
  return TRUE;
}

/* The bridge at addr among the host's rebuilt bridges, added (below
 * parent, on root) when new. FALSE when the rows disagree on where it is. */
static gboolean
fleet_bridge (VpaFleetHost *host, VpaAddr addr, VpaAddr parent, VpaAddr root)
{
  VpaDevice *b;

  /* Rows come in address order, so a device's bridges are most often
   * the last ones added: look from the end. */
  for (guint i = host->bridges->len; i > 0; i--)
    {
      b = g_ptr_array_index (host->bridges, i - 1);
      if (b->addr == addr)
        return b->pcie_parent == parent && b->pcie_root == root;
    }
  b = vpa_device_new ();
  b->addr = addr;
  b->class_code = 0x060400; /* a PCI bridge: never assignable */
  b->pcie_parent = parent;
  b->pcie_root = root;
  g_ptr_array_add (host->bridges, b);
  return TRUE;
}

/* The PCIe tree of a device row (pcie_root, pcie_port, pcie_switch):
 * the device sits below its switch, else its root port, else on its
 * host bridge's root bus; the root port and switch become bridges, so
 * that the locality levels of the rebuilt host are the synced host's. */
static gboolean
fleet_device_tree (VpaFleetHost *host, VpaDevice *dev, const char *const *v)
{
  VpaAddr root = VPA_ADDR_NONE, port = VPA_ADDR_NONE, sw = VPA_ADDR_NONE;

  if ((v[9] != NULL && !vpa_pcie_root_parse (v[9], &root)) ||
      (v[10] != NULL && !vpa_addr_parse (v[10], &port)) ||
      (v[11] != NULL && !vpa_addr_parse (v[11], &sw)) ||
      (sw != VPA_ADDR_NONE && port == VPA_ADDR_NONE) ||
      (port != VPA_ADDR_NONE && root == VPA_ADDR_NONE))
    return FALSE;
  dev->pcie_root = root;
  dev->pcie_parent = sw != VPA_ADDR_NONE ? sw : port;
  return (port == VPA_ADDR_NONE || fleet_bridge (host, port, VPA_ADDR_NONE, root)) &&
         (sw == VPA_ADDR_NONE || fleet_bridge (host, sw, port, root));
}

gboolean
vpa_fleet_rows_add_device (GHashTable *by_id, const char *const *v, GError **error)
{
  g_autoptr (VpaDevice) dev = vpa_device_new ();
  VpaFleetHost *host;
  gint64 id, numa = VPA_NUMA_NONE;

  if (!parse_int64 (v[0], &id) || !vpa_addr_parse (v[1], &dev->addr) ||
      !vpa_dev_type_from_string (v[4], &dev->dev_type) ||
      (v[5] != NULL && !parse_int64 (v[5], &numa)) ||
      (v[6] != NULL && !vpa_addr_parse (v[6], &dev->parent_addr)))
    return FALSE;
  host = g_hash_table_lookup (by_id, &id);
  if (host == NULL || host->devices == NULL)
    return TRUE;
  if (!fleet_device_tree (host, dev, v))
    return FALSE;
  g_strlcpy (dev->vendor_id, v[2] != NULL ? v[2] : "", sizeof dev->vendor_id);
  g_strlcpy (dev->product_id, v[3] != NULL ? v[3] : "", sizeof dev->product_id);
  dev->numa_node = numa < 0 ? VPA_NUMA_NONE : (gint) numa;
  dev->netdev = g_strdup (v[7]);
  if (v[8] != NULL)
    g_ptr_array_add (host->claims, vpa_claim_new (v[8], dev->addr, TRUE));
  if (g_strcmp0 (v[12], "reserved") == 0 && host->reserved != NULL)
    g_array_append_val (host->reserved, dev->addr);
  g_ptr_array_add (host->devices, g_steal_pointer (&dev));
  return TRUE;
}

void
vpa_fleet_rows_init_networks (GPtrArray *hosts)
{
  for (guint i = 0; i < hosts->len; i++)
    {
      VpaFleetHost *host = g_ptr_array_index (hosts, i);
      host->networks =
        g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_config_vswitch_affinity_free);
    }
}

/* "0 2" as ascending node numbers; "" is none. */
static gboolean
decode_nodes (const char *text, GArray *out /* guint */)
{
  g_auto (GStrv) items = g_strsplit (text, " ", -1);

  for (guint i = 0; items[i] != NULL; i++)
    {
      guint64 value;
      guint node;

      if (!g_ascii_string_to_unsigned (items[i], 10, 0, G_MAXINT, &value, NULL))
        return FALSE;
      node = (guint) value;
      if (out->len > 0 && node <= g_array_index (out, guint, out->len - 1))
        return FALSE;
      g_array_append_val (out, node);
    }
  return TRUE;
}

gboolean
vpa_fleet_rows_add_network (GHashTable *by_id, const char *const *v, GError **error)
{
  g_autoptr (VpaVswitchAffinity) aff = g_new0 (VpaVswitchAffinity, 1);
  gboolean tunnel = g_strcmp0 (v[1], "tunnel") == 0;
  VpaFleetHost *host;
  gint64 id;

  if (!parse_int64 (v[0], &id))
    return FALSE;
  host = g_hash_table_lookup (by_id, &id);
  if (host == NULL || host->networks == NULL)
    return TRUE;
  aff->nodes = g_array_new (FALSE, FALSE, sizeof (guint));
  if ((!tunnel && g_strcmp0 (v[1], "physnet") != 0) || v[2] == NULL ||
      (!tunnel && v[2][0] == '\0') || v[3] == NULL || !decode_nodes (v[3], aff->nodes))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "host '%s': malformed network row (%s '%s', numa_nodes '%s')", host->name,
                   v[1] != NULL ? v[1] : "", v[2] != NULL ? v[2] : "", v[3] != NULL ? v[3] : "");
      return FALSE;
    }
  aff->physnet = tunnel ? NULL : g_strdup (v[2]);
  aff->group = tunnel ? g_strdup ("tunnel") : g_strdup_printf ("physnet %s", v[2]);
  g_ptr_array_add (host->networks, g_steal_pointer (&aff));
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Reading back, through the backend's each                            */
/* ------------------------------------------------------------------ */

typedef struct {
  GPtrArray *pools;
  GHashTable *tagsets;
  GHashTable *by_id;
  const char *uri;
} PoolRows;

static gboolean
add_pool_row (const char *const *v, gpointer data, GError **error)
{
  PoolRows *r = data;
  VpaPool *pool;

  if (r->by_id != NULL)
    return vpa_fleet_preselect_add_row (r->by_id, r->pools, r->tagsets, v, r->uri, error);
  if ((pool = vpa_fleet_rows_pool (v, r->tagsets, r->uri, error)) == NULL)
    return FALSE;
  g_ptr_array_add (r->pools, pool);
  return TRUE;
}

GPtrArray *
vpa_fleet_rows_read_pools (VpaFleetStore *store, const char *sql, const char *const *params,
                           guint n_params, GHashTable *by_id, GError **error)
{
  g_autoptr (GPtrArray) pools = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_pool_free);
  g_autoptr (GHashTable) tagsets = vpa_fleet_rows_tagsets_new ();
  PoolRows r = { pools, tagsets, by_id, store->uri };
  guint n = by_id != NULL ? VPA_FLEET_PRESELECT_COLUMNS : VPA_FLEET_ROWS_POOL_COLUMNS;

  G_STATIC_ASSERT (VPA_FLEET_PRESELECT_COLUMNS <= VPA_FLEET_ROWS_MAX_COLUMNS);
  if (!store->ops->each (store, sql, params, n_params, n, "reading pools", add_pool_row, &r,
                         error))
    return NULL;
  return g_steal_pointer (&pools);
}

typedef struct {
  GHashTable *by_id;
  VpaFleetRowsAdd add;
  const char *uri;
  const char *sql;
} AddRows;

static gboolean
add_row (const char *const *v, gpointer data, GError **error)
{
  AddRows *a = data;

  if (a->add (a->by_id, v, error))
    return TRUE;
  vpa_fleet_rows_malformed (a->uri, a->sql, error);
  return FALSE;
}

/* Feeds every row of sql to add (a vpa_fleet_rows_add_*). */
static gboolean
read_rows (VpaFleetStore *store, const char *sql, guint n, GHashTable *by_id,
           VpaFleetRowsAdd add, GError **error)
{
  AddRows a = { by_id, add, store->uri, sql };

  return store->ops->each (store, sql, NULL, 0, n, sql, add_row, &a, error);
}

typedef struct {
  GPtrArray *hosts;
  GHashTable *by_id;
} HostRows;

static gboolean
add_host_row (const char *const *v, gpointer data, GError **error)
{
  HostRows *h = data;
  VpaFleetHost *host = vpa_fleet_rows_host (v);

  g_ptr_array_add (h->hosts, host);
  g_hash_table_insert (h->by_id, &host->id, host);
  return TRUE;
}

gboolean
vpa_fleet_rows_read_hosts (VpaFleetStore *store, GPtrArray *hosts, guint flags, GError **error)
{
  g_autoptr (GHashTable) by_id = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GPtrArray) pools = NULL;
  const VpaFleetQuery *query = store->preselect;
  g_autofree char *pools_sql = NULL;
  HostRows h = { hosts, by_id };

  if (!store->ops->each (store, VPA_FLEET_ROWS_SQL_HOSTS, NULL, 0,
                         VPA_FLEET_ROWS_SQL_HOSTS_COLUMNS, "reading hosts", add_host_row, &h,
                         error) ||
      !read_rows (store, VPA_FLEET_ROWS_SQL_CELLS, 7, by_id, vpa_fleet_rows_add_cell, error))
    return FALSE;
  if (flags & VPA_FLEET_LOAD_NETWORKS)
    {
      vpa_fleet_rows_init_networks (hosts);
      if (!read_rows (store, VPA_FLEET_ROWS_SQL_NETWORKS, 4, by_id, vpa_fleet_rows_add_network,
                      error))
        return FALSE;
    }
  if (flags & VPA_FLEET_LOAD_CAPACITY)
    {
      vpa_fleet_rows_init_capacity (hosts);
      if (!read_rows (store, VPA_FLEET_ROWS_SQL_DEVICES, VPA_FLEET_ROWS_SQL_DEVICES_COLUMNS, by_id,
                      vpa_fleet_rows_add_device, error) ||
          !read_rows (store, VPA_FLEET_ROWS_SQL_CLAIMS, 5, by_id, vpa_fleet_rows_add_claim, error))
        return FALSE;
    }
  if (!(flags & VPA_FLEET_LOAD_POOLS))
    return TRUE;
  if (query != NULL)
    return vpa_fleet_preselect_read_pools (store, query, hosts, by_id, error);
  pools_sql = vpa_fleet_rows_free_pools_sql (&(VpaFleetRowsFreePools){ .addresses = TRUE });
  pools = vpa_fleet_rows_read_pools (store, pools_sql, NULL, 0, NULL, error);
  return pools != NULL && vpa_fleet_rows_attach_pools (hosts, pools);
}
