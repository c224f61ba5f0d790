/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet store: what both database backends share (store URIs, host
 * names, canonical tags, schema version decisions, the rows of an
 * inventory) and the host filter over pool rows.
 */
#include "vpa-fleet.h"
#include "vpa-policy.h"
#include "vpa-pools.h"
#include "vpa-pipeline-numa.h"
#include "vpa-pcie.h"
#include "vpa-requests.h"

#include <string.h>
#include <json-glib/json-glib.h>

/* ------------------------------------------------------------------ */
/* Host data                                                           */
/* ------------------------------------------------------------------ */

static void fleet_claims_encode (VpaFleetHostData *data, GPtrArray *claims);

static void
fleet_device_clear (gpointer data)
{
  VpaFleetDevice *dev = data;

  g_free (dev->tags);
  g_free (dev->netdev);
  g_free (dev->held_by);
  g_free (dev->pcie_root);
  g_free (dev->pcie_port);
  g_free (dev->pcie_switch);
}

VpaFleetHostData *
vpa_fleet_host_data_new (const char *name)
{
  VpaFleetHostData *data = g_new0 (VpaFleetHostData, 1);

  data->name = g_strdup (name);
  data->cells = g_array_new (FALSE, FALSE, sizeof (VpaFleetCell));
  g_array_set_clear_func (data->cells, (GDestroyNotify) vpa_fleet_cell_clear);
  data->claims = g_array_new (FALSE, FALSE, sizeof (VpaFleetNumaClaim));
  g_array_set_clear_func (data->claims, (GDestroyNotify) vpa_fleet_numa_claim_clear);
  data->traits = g_new0 (char *, 1);
  data->devices = g_array_new (FALSE, FALSE, sizeof (VpaFleetDevice));
  g_array_set_clear_func (data->devices, fleet_device_clear);
  return data;
}

void
vpa_fleet_host_data_free (VpaFleetHostData *data)
{
  if (data == NULL)
    return;
  g_free (data->name);
  g_array_unref (data->cells);
  g_strfreev (data->traits);
  g_array_unref (data->devices);
  g_array_unref (data->claims);
  g_free (data);
}

void
vpa_fleet_host_data_add (VpaFleetHostData *data, const VpaFleetDevice *dev)
{
  VpaFleetDevice copy = *dev;

  copy.tags = g_strdup (dev->tags != NULL ? dev->tags : "{}");
  copy.tagset = vpa_fleet_tagset_key (copy.tags);
  copy.netdev = g_strdup (dev->netdev);
  copy.held_by = g_strdup (dev->held_by);
  copy.pcie_root = g_strdup (dev->pcie_root);
  copy.pcie_port = g_strdup (dev->pcie_port);
  copy.pcie_switch = g_strdup (dev->pcie_switch);
  g_array_append_val (data->devices, copy);
}

/* The device's host bridge, root port and switch, as the store keeps them. */
static void
fill_tree (const VpaHost *host, guint i, VpaFleetDevice *row)
{
  const VpaDevice *d = vpa_host_device (host, i);
  gint rp = vpa_pcie_root_port (host, i), sw = vpa_pcie_switch (host, i);

  row->pcie_root = d->pcie_root != VPA_ADDR_NONE ? vpa_pcie_root_name (d->pcie_root) : NULL;
  row->pcie_port = rp >= 0 ? vpa_addr_to_string (vpa_host_device (host, (guint) rp)->addr) : NULL;
  row->pcie_switch = sw >= 0 ? vpa_addr_to_string (vpa_host_device (host, (guint) sw)->addr)
                             : NULL;
}

VpaFleetHostData *
vpa_fleet_host_data_from_inventory (const char *name, const VpaInventory *inv)
{
  g_autoptr (VpaFleetHostData) data = vpa_fleet_host_data_new (name);
  g_autoptr (GPtrArray) tag_strings = g_ptr_array_new_with_free_func (g_free);
  const VpaHost *host = inv->host;

  g_return_val_if_fail (host->sealed, NULL);

  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *cell = &g_array_index (host->cells, VpaCell, i);
      VpaFleetCell fc;
      vpa_fleet_cell_encode (cell, &fc);
      g_array_append_val (data->cells, fc);
    }
  fleet_claims_encode (data, inv->claims);
  g_strfreev (data->traits);
  data->traits = vpa_traits_compute (inv);

  /* One canonical string per tag set of the configuration. */
  for (guint t = 0; inv->config != NULL && t < inv->config->tagsets->len; t++)
    g_ptr_array_add (tag_strings,
                     vpa_fleet_tags_canonical (g_ptr_array_index (inv->config->tagsets, t)));

  for (guint i = 0; i < host->devices->len; i++)
    {
      const VpaDevice *d = vpa_host_device (host, i);
      VpaFleetDevice row = { 0 };
      gint ts = inv->tagset[i];

      if (ts < 0)
        continue;
      row.addr = d->addr;
      memcpy (row.vendor_id, d->vendor_id, sizeof row.vendor_id);
      memcpy (row.product_id, d->product_id, sizeof row.product_id);
      row.dev_type = d->dev_type;
      row.numa_node = d->numa_node < 0 ? VPA_NUMA_NONE : d->numa_node;
      row.parent_addr = d->parent_addr;
      row.tags = (guint) ts < tag_strings->len ? g_ptr_array_index (tag_strings, ts) : NULL;
      row.netdev = d->netdev;
      row.held_by = (char *) inv->held_by[i];
      row.state = inv->state[i];
      fill_tree (host, i, &row);
      vpa_fleet_host_data_add (data, &row);
      g_free (row.pcie_root);
      g_free (row.pcie_port);
      g_free (row.pcie_switch);
    }
  return g_steal_pointer (&data);
}

/* ------------------------------------------------------------------ */
/* Node capacity rows                                                  */
/* ------------------------------------------------------------------ */

void
vpa_fleet_cell_clear (VpaFleetCell *cell)
{
  g_clear_pointer (&cell->cpus, g_free);
  g_clear_pointer (&cell->pages, g_free);
  g_clear_pointer (&cell->distances, g_free);
}

void
vpa_fleet_numa_claim_clear (VpaFleetNumaClaim *claim)
{
  g_clear_pointer (&claim->domain, g_free);
  g_clear_pointer (&claim->dedicated, g_free);
  g_clear_pointer (&claim->memory, g_free);
}

static void
sep (GString *out)
{
  if (out->len > 0)
    g_string_append_c (out, ' ');
}

void
vpa_fleet_cell_encode (const VpaCell *cell, VpaFleetCell *out)
{
  GString *cpus = g_string_new (NULL);

  out->node = cell->id;
  out->socket = cell->socket;
  out->memory_kib = cell->memory_kib;
  for (guint i = 0; cell->cpus != NULL && i < cell->cpus->len; i++)
    {
      sep (cpus);
      g_string_append_printf (cpus, "%u", g_array_index (cell->cpus, guint, i));
      if (cell->topo != NULL && i < cell->topo->len)
        {
          const VpaCpuTopo *t = &g_array_index (cell->topo, VpaCpuTopo, i);
          g_string_append_printf (cpus, "/%d/%d/%d/%u", t->online ? 1 : 0, t->socket, t->core,
                                  t->siblings);
        }
    }
  out->cpus = g_string_free (cpus, FALSE);
  out->pages = NULL;
  out->distances = NULL;
  if (cell->pages != NULL)
    {
      GString *pages = g_string_new (NULL);
      for (guint i = 0; i < cell->pages->len; i++)
        {
          const VpaPages *pg = &g_array_index (cell->pages, VpaPages, i);
          sep (pages);
          g_string_append_printf (pages, "%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                                  pg->size_kib, pg->total, pg->free);
        }
      out->pages = g_string_free (pages, FALSE);
    }
  if (cell->distances != NULL)
    {
      GString *dist = g_string_new (NULL);
      for (guint i = 0; i < cell->distances->len; i++)
        {
          const VpaDistance *d = &g_array_index (cell->distances, VpaDistance, i);
          sep (dist);
          g_string_append_printf (dist, "%d/%u", d->node, d->value);
        }
      out->distances = g_string_free (dist, FALSE);
    }
}

/* The CPU/memory claims of the inventory, the first of each domain (the
 * one vpa_capacity_new counts). */
static void
fleet_claims_encode (VpaFleetHostData *data, GPtrArray *claims)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; claims != NULL && i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);
      VpaFleetNumaClaim fc = { 0 };
      GString *ded, *mem;

      if (c->numa == NULL || !g_hash_table_add (seen, c->domain))
        continue;
      ded = g_string_new (NULL);
      mem = g_string_new (NULL);
      for (guint j = 0; c->numa->dedicated != NULL && j < c->numa->dedicated->len; j++)
        {
          sep (ded);
          g_string_append_printf (ded, "%u", g_array_index (c->numa->dedicated, guint, j));
        }
      for (guint j = 0; c->numa->memory != NULL && j < c->numa->memory->len; j++)
        {
          const VpaMemClaim *m = &g_array_index (c->numa->memory, VpaMemClaim, j);
          sep (mem);
          g_string_append_printf (mem, "%d/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, m->node,
                                  m->page_kib, m->kib);
        }
      fc.domain = g_strdup (c->domain);
      fc.running = c->running;
      fc.dedicated = g_string_free (ded, FALSE);
      fc.memory = g_string_free (mem, FALSE);
      g_array_append_val (data->claims, fc);
    }
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
        if (!g_ascii_string_to_signed (f[k], 10, G_MININT64, G_MAXINT64, &row[k], NULL))
          return FALSE;
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
vpa_fleet_host_inventory (const VpaFleetHost *host, const VpaConfig *config, GError **error)
{
  g_autoptr (VpaHost) h = vpa_host_new (host->name);
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);

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
  return vpa_inventory_new (g_steal_pointer (&h), config, g_steal_pointer (&claims), error);
}

/* ------------------------------------------------------------------ */
/* Tags, host names                                                    */
/* ------------------------------------------------------------------ */

static void
json_escape (GString *out, const char *s)
{
  g_string_append_c (out, '"');
  for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_printf (out, "\\%c", *p);
      else if (*p < 0x20)
        g_string_append_printf (out, "\\u%04x", *p);
      else
        g_string_append_c (out, (char) *p);
    }
  g_string_append_c (out, '"');
}

static gint
spec_pair_cmp (gconstpointer a, gconstpointer b)
{
  const VpaSpecPair *pa = *(VpaSpecPair *const *) a;
  const VpaSpecPair *pb = *(VpaSpecPair *const *) b;

  return strcmp (pa->key, pb->key);
}

char *
vpa_fleet_tags_canonical (GPtrArray *pairs)
{
  g_autoptr (GPtrArray) sorted = g_ptr_array_new ();
  GString *out = g_string_new ("{");

  for (guint i = 0; pairs != NULL && i < pairs->len; i++)
    g_ptr_array_add (sorted, g_ptr_array_index (pairs, i));
  g_ptr_array_sort (sorted, spec_pair_cmp);
  for (guint i = 0; i < sorted->len; i++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (sorted, i);
      if (i > 0)
        g_string_append_c (out, ',');
      json_escape (out, pair->key);
      g_string_append_c (out, ':');
      if (pair->value != NULL)
        json_escape (out, pair->value);
      else
        g_string_append (out, "null");
    }
  g_string_append_c (out, '}');
  return g_string_free (out, FALSE);
}

gint64
vpa_fleet_tagset_key (const char *tags)
{
  g_autoptr (GChecksum) sum = NULL;
  guint8 digest[32];
  gsize len = sizeof digest;
  guint64 key = 0;

  if (tags == NULL || strcmp (tags, "{}") == 0)
    return 0;
  sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (sum, (const guchar *) tags, -1);
  g_checksum_get_digest (sum, digest, &len);
  for (guint i = 0; i < 8; i++)
    key = (key << 8) | digest[i];
  key &= G_MAXINT64;
  /* 0 is the empty set's. */
  return key == 0 ? 1 : (gint64) key;
}

gboolean
vpa_fleet_host_name_valid (const char *name, GError **error)
{
  gsize len = name != NULL ? strlen (name) : 0;

  if (len == 0 || len > VPA_FLEET_HOST_NAME_MAX)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "--host: host name '%s' must have 1 to %d characters",
                   name != NULL ? name : "", VPA_FLEET_HOST_NAME_MAX);
      return FALSE;
    }
  for (gsize i = 0; i < len; i++)
    {
      char c = name[i];
      if (!g_ascii_isalnum (c) && c != '.' && c != '-' && c != '_')
        {
          g_autofree char *printable = g_strescape (name, NULL);
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "--host: host name '%s' has a character other than letters, digits, '.', '-' and '_' at offset %" G_GSIZE_FORMAT,
                       printable, i);
          return FALSE;
        }
    }
  return TRUE;
}

static gint
str_ptr_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

GStrv
vpa_fleet_traits_parse (const char *str)
{
  g_auto (GStrv) parts = g_strsplit (str != NULL ? str : "", " ", -1);
  g_autoptr (GPtrArray) out = g_ptr_array_new ();

  for (guint i = 0; parts[i] != NULL; i++)
    if (parts[i][0] != '\0')
      g_ptr_array_add (out, g_strdup (parts[i]));
  g_ptr_array_sort (out, str_ptr_cmp);
  g_ptr_array_add (out, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}

char *
vpa_fleet_now (void)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();

  return g_date_time_format (now, "%Y-%m-%dT%H:%M:%SZ");
}

/* ------------------------------------------------------------------ */
/* Query results                                                       */
/* ------------------------------------------------------------------ */

void
vpa_fleet_pool_free (VpaFleetPool *pool)
{
  if (pool == NULL)
    return;
  g_free (pool->host);
  g_free (pool->tags);
  g_strfreev (pool->tag_kv);
  g_free (pool->pcie_root);
  g_free (pool->pcie_port);
  g_free (pool);
}

void
vpa_fleet_host_free (VpaFleetHost *host)
{
  if (host == NULL)
    return;
  g_free (host->name);
  g_strfreev (host->traits);
  g_free (host->last_sync);
  g_array_unref (host->cells);
  if (host->pools != NULL)
    g_ptr_array_unref (host->pools);
  if (host->devices != NULL)
    g_ptr_array_unref (host->devices);
  if (host->bridges != NULL)
    g_ptr_array_unref (host->bridges);
  if (host->claims != NULL)
    g_ptr_array_unref (host->claims);
  g_free (host);
}

gboolean
vpa_fleet_host_has_trait (const VpaFleetHost *host, const char *trait)
{
  return host->traits != NULL && g_strv_contains ((const char *const *) host->traits, trait);
}

/* Parses a canonical tag string into key, value, key, value, ..., NULL.
 * Configuration tags are strings; anything else is not a tag we wrote. */
static GStrv
tags_parse (const char *tags)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  JsonNode *root;
  JsonObject *obj;
  g_autoptr (GList) members = NULL;

  if (!json_parser_load_from_data (parser, tags, -1, NULL) ||
      (root = json_parser_get_root (parser)) == NULL ||
      !JSON_NODE_HOLDS_OBJECT (root))
    return g_new0 (char *, 1);
  obj = json_node_get_object (root);
  members = json_object_get_members (obj);
  for (GList *l = members; l != NULL; l = l->next)
    {
      JsonNode *value = json_object_get_member (obj, l->data);
      if (JSON_NODE_HOLDS_VALUE (value) &&
          json_node_get_value_type (value) == G_TYPE_STRING)
        {
          g_strv_builder_add (builder, l->data);
          g_strv_builder_add (builder, json_node_get_string (value));
        }
    }
  return g_strv_builder_end (builder);
}

void
vpa_fleet_pools_finish (GPtrArray *pools)
{
  g_autoptr (GHashTable) cache =
    g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) g_strfreev);

  for (guint i = 0; i < pools->len; i++)
    {
      VpaFleetPool *pool = g_ptr_array_index (pools, i);
      GStrv kv = g_hash_table_lookup (cache, pool->tags);

      if (kv == NULL)
        {
          kv = tags_parse (pool->tags);
          g_hash_table_insert (cache, pool->tags, kv);
        }
      pool->tag_kv = g_strdupv (kv);
    }
}

/* ------------------------------------------------------------------ */
/* Opening a store                                                     */
/* ------------------------------------------------------------------ */

char *
vpa_fleet_uri_redact (const char *store)
{
  const char *scheme_end = strstr (store, "://");
  g_autoptr (GString) out = NULL;
  const char *auth, *auth_end, *at, *colon;
  const char *pw;

  if (scheme_end == NULL)
    return g_strdup (store);
  out = g_string_new (NULL);
  auth = scheme_end + 3;
  auth_end = auth + strcspn (auth, "/?");
  at = memchr (auth, '@', (gsize) (auth_end - auth));
  colon = at != NULL ? memchr (auth, ':', (gsize) (at - auth)) : NULL;
  /* user:PASSWORD@ shows as user:***@ (the user and that there is a
   * password stay visible, as docs/fleet.md says) */
  if (colon != NULL)
    {
      g_string_append_len (out, store, colon - store + 1);
      g_string_append (out, "***");
      g_string_append (out, at);
    }
  else
    g_string_append (out, store);

  /* every password=... of the query string */
  for (gsize from = 0; (pw = strstr (out->str + from, "password=")) != NULL;)
    {
      gsize start = (gsize) (pw - out->str) + 9;
      gsize len = strcspn (out->str + start, "&");
      g_string_erase (out, (gssize) start, (gssize) len);
      g_string_insert (out, (gssize) start, "***");
      from = start + 3;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The passwords of a store URI as written: user:PASSWORD@ and every
 * password=... of the query (what vpa_fleet_uri_redact hides). */
static GPtrArray *
uri_passwords (const char *store)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  const char *scheme_end = strstr (store, "://");
  const char *auth, *auth_end, *at, *colon, *pw;

  if (scheme_end == NULL)
    return out;
  auth = scheme_end + 3;
  auth_end = auth + strcspn (auth, "/?");
  at = memchr (auth, '@', (gsize) (auth_end - auth));
  colon = at != NULL ? memchr (auth, ':', (gsize) (at - auth)) : NULL;
  if (colon != NULL && at > colon + 1)
    g_ptr_array_add (out, g_strndup (colon + 1, (gsize) (at - colon - 1)));
  for (const char *from = store; (pw = strstr (from, "password=")) != NULL;)
    {
      gsize len = strcspn (pw + 9, "&");
      if (len > 0)
        g_ptr_array_add (out, g_strndup (pw + 9, len));
      from = pw + 9 + len;
    }
  return out;
}

char *
vpa_fleet_message_redact (const char *message, const char *store)
{
  g_autoptr (GString) out = g_string_new (message);
  g_autofree char *uri = vpa_fleet_uri_redact (store);
  g_autoptr (GPtrArray) passwords = uri_passwords (store);

  g_return_val_if_fail (message != NULL && store != NULL, NULL);

  if (store[0] != '\0')
    g_string_replace (out, store, uri, 0);
  for (guint i = 0; i < passwords->len; i++)
    {
      const char *raw = passwords->pdata[i];
      g_autofree char *decoded = g_uri_unescape_string (raw, NULL);

      g_string_replace (out, raw, "***", 0);
      if (decoded != NULL && decoded[0] != '\0')
        g_string_replace (out, decoded, "***", 0);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

VpaFleetStore *
vpa_fleet_store_open (const char *store, VpaFleetOpenMode mode, GError **error)
{
  g_autofree char *uri = NULL;
  const char *colon;

  g_return_val_if_fail (store != NULL, NULL);

  uri = vpa_fleet_uri_redact (store);
  if (store[0] == '\0')
    {
      g_set_error_literal (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "--store: empty store name");
      return NULL;
    }
  if (g_str_has_prefix (store, "postgresql://") || g_str_has_prefix (store, "postgres://"))
    return vpa_fleet_pg_open (store, uri, mode, error);
  if (g_str_has_prefix (store, "sqlite:"))
    {
      if (!g_str_has_prefix (store, "sqlite:///") || store[10] == '\0')
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "--store: '%s' is not sqlite:///ABS/PATH", uri);
          return NULL;
        }
      return vpa_fleet_sqlite_open (store + 9, uri, mode, error);
    }
  /* Anything that looks like a URI scheme is one we do not know; a
   * path with a colon needs a slash before it ("./a:b"). */
  colon = strchr (store, ':');
  if (colon != NULL && memchr (store, '/', (gsize) (colon - store)) == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "--store: '%s' is neither a file path, sqlite:///ABS/PATH nor postgresql://...",
                   uri);
      return NULL;
    }
  return vpa_fleet_sqlite_open (store, uri, mode, error);
}

void
vpa_fleet_store_close (VpaFleetStore *store)
{
  if (store == NULL)
    return;
  store->ops->close (store);
}

gboolean
vpa_fleet_store_sync_host (VpaFleetStore *store, const VpaFleetHostData *data,
                           GError **error)
{
  g_return_val_if_fail (store != NULL && data != NULL, FALSE);

  if (!vpa_fleet_host_name_valid (data->name, error))
    return FALSE;
  return store->ops->sync_host (store, data, error);
}

/* Tag sets pair by pair, a prefix first: the order vpa_pools_generate()
 * gives them, which a comparison of the JSON strings does not. */
static gint
tag_kv_cmp (char **a, char **b)
{
  guint i;

  for (i = 0; a[i] != NULL && b[i] != NULL; i++)
    {
      gint c = strcmp (a[i], b[i]);
      if (c != 0)
        return c;
    }
  return a[i] != NULL ? 1 : b[i] != NULL ? -1
                                         : 0;
}

static gint
pool_output_cmp (gconstpointer pa, gconstpointer pb)
{
  const VpaFleetPool *a = *(VpaFleetPool *const *) pa;
  const VpaFleetPool *b = *(VpaFleetPool *const *) pb;
  gint c;

  if ((c = strcmp (a->host, b->host)) != 0 ||
      (c = strcmp (a->vendor_id, b->vendor_id)) != 0 ||
      (c = strcmp (a->product_id, b->product_id)) != 0)
    return c;
  if (a->dev_type != b->dev_type)
    return a->dev_type < b->dev_type ? -1 : 1;
  if ((c = vpa_pool_null_last_cmp (a->numa_node, b->numa_node)) != 0 ||
      (c = vpa_pool_null_last_cmp (a->socket, b->socket)) != 0)
    return c;
  return tag_kv_cmp (a->tag_kv, b->tag_kv);
}

GPtrArray *
vpa_fleet_store_query_pools (VpaFleetStore *store, const char *host, GError **error)
{
  GPtrArray *pools;

  g_return_val_if_fail (store != NULL, NULL);

  if (host != NULL && !vpa_fleet_host_name_valid (host, error))
    return NULL;
  pools = store->ops->query_pools (store, host, error);
  /* The SQL ORDER BY decides all but the order of tag sets of one
   * (vendor, product, type, node), which follows the in-process pools. */
  if (pools != NULL)
    g_ptr_array_sort (pools, pool_output_cmp);
  return pools;
}

GPtrArray *
vpa_fleet_store_load_hosts (VpaFleetStore *store, guint flags, GError **error)
{
  g_return_val_if_fail (store != NULL, NULL);

  return store->ops->load_hosts (store, flags, error);
}

gboolean
vpa_fleet_schema_check (const char *uri, const char *application, gint64 version,
                        gboolean has_tables, VpaFleetOpenMode mode,
                        gboolean *create, gboolean *upgrade, GError **error)
{
  *create = FALSE;
  *upgrade = FALSE;
  if (application == NULL)
    {
      if (has_tables)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "store '%s': not a fleet store: it has tables of ours but no schema_version",
                       uri);
          return FALSE;
        }
      if (mode != VPA_FLEET_OPEN_CREATE)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                       "store '%s': no fleet schema (run 'fleet sync' first)", uri);
          return FALSE;
        }
      *create = TRUE;
      return TRUE;
    }
  if (strcmp (application, VPA_FLEET_APPLICATION) != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': schema_version belongs to '%s', not '%s'",
                   uri, application, VPA_FLEET_APPLICATION);
      return FALSE;
    }
  if (version >= 1 && version < VPA_FLEET_SCHEMA_VERSION && mode == VPA_FLEET_OPEN_CREATE)
    {
      /* sync migrates an older store of ours through every step. */
      *upgrade = TRUE;
      return TRUE;
    }
  if (version >= 1 && version < VPA_FLEET_SCHEMA_VERSION)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': schema version '%" G_GINT64_FORMAT "' is older than this program's %d: 'fleet sync' upgrades it",
                   uri, version, VPA_FLEET_SCHEMA_VERSION);
      return FALSE;
    }
  if (version != VPA_FLEET_SCHEMA_VERSION)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': schema version '%" G_GINT64_FORMAT "' is %s than this program's %d; refusing to use it",
                   uri, version, version > VPA_FLEET_SCHEMA_VERSION ? "newer" : "older",
                   VPA_FLEET_SCHEMA_VERSION);
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* The host filter: Nova's support_requests over pool rows            */
/* ------------------------------------------------------------------ */

void
vpa_fleet_verdict_free (VpaFleetVerdict *verdict)
{
  if (verdict == NULL)
    return;
  g_free (verdict->host);
  g_free (verdict->reason);
  g_free (verdict->nodes);
  g_free (verdict);
}

/* Nova's pool key view (docs/nova.md, "Pool keys"): numa_node is an integer and
 * never equals a string, so it reads as absent here. */
static const char *
pool_tag (const VpaFleetPool *pool, const char *key)
{
  for (guint i = 0; pool->tag_kv != NULL && pool->tag_kv[i] != NULL; i += 2)
    if (strcmp (pool->tag_kv[i], key) == 0)
      return pool->tag_kv[i + 1];
  return NULL;
}

static const char *
pool_prop (const VpaFleetPool *pool, const char *key)
{
  const char *tag = pool_tag (pool, key);

  if (tag != NULL)
    return tag;
  if (strcmp (key, "vendor_id") == 0)
    return pool->vendor_id;
  if (strcmp (key, "product_id") == 0)
    return pool->product_id;
  if (strcmp (key, "dev_type") == 0)
    return vpa_dev_type_to_string (pool->dev_type);
  if (strcmp (key, "remote_managed") == 0 && pool->dev_type != VPA_DEV_TYPE_PCI)
    return "false";
  return NULL;
}

static guint
pool_key_count (const VpaFleetPool *pool)
{
  guint n = 4; /* vendor_id, product_id, numa_node, dev_type */

  for (guint i = 0; pool->tag_kv != NULL && pool->tag_kv[i] != NULL; i += 2)
    n++;
  /* the implicit remote_managed='false' of VFs and PFs */
  if (pool->dev_type != VPA_DEV_TYPE_PCI && pool_tag (pool, "remote_managed") == NULL)
    n++;
  return n;
}

static gboolean
spec_match (const VpaFleetPool *pool, const VpaSpec *spec)
{
  for (guint i = 0; i < spec->pairs->len; i++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (spec->pairs, i);
      const char *have = pool_prop (pool, pair->key);

      if (pair->value == NULL ? have != NULL
                              : have == NULL || g_ascii_strcasecmp (pair->value, have) != 0)
        return FALSE;
    }
  return TRUE;
}

gboolean
vpa_fleet_request_match (const VpaFleetPool *pool, const VpaRequest *req)
{
  for (guint i = 0; i < req->specs->len; i++)
    if (spec_match (pool, g_ptr_array_index (req->specs, i)))
      return TRUE;
  return FALSE;
}

/* Per-evaluation state of one pool. */
typedef struct {
  const VpaFleetPool *pool;
  guint count;
  gboolean gone; /* apply_requests deleted it */
  VpaTier tier;  /* of its NUMA node for the guest */
} Slot;

/* The guest as policy/ sees it, on the fleet host's cells. */
typedef struct {
  VpaHost *host; /* the cells only */
  VpaGuestNodes guest;
} Guest;

static VpaHost *
host_of_cells (const VpaFleetHost *host)
{
  VpaHost *out = vpa_host_new (host->name);

  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaFleetCell *fc = &g_array_index (host->cells, VpaFleetCell, i);
      VpaCell cell = { .id = fc->node, .socket = fc->socket };
      vpa_host_add_cell (out, &cell);
    }
  return out;
}

static guint
slots_sum (GPtrArray *cand)
{
  guint sum = 0;

  for (guint i = 0; i < cand->len; i++)
    sum += ((Slot *) g_ptr_array_index (cand, i))->count;
  return sum;
}

static GPtrArray *
slots_keep (GPtrArray *cand, gboolean (*keep) (const Slot *, gconstpointer), gconstpointer data)
{
  GPtrArray *out = g_ptr_array_sized_new (cand->len);

  for (guint i = 0; i < cand->len; i++)
    if (keep (g_ptr_array_index (cand, i), data))
      g_ptr_array_add (out, g_ptr_array_index (cand, i));
  return out;
}

static gboolean
keep_not_pf (const Slot *s, gconstpointer data)
{
  return s->pool->dev_type != VPA_DEV_TYPE_PF;
}

static gboolean
keep_not_remote_managed (const Slot *s, gconstpointer data)
{
  return !vpa_policy_truthy (pool_prop (s->pool, "remote_managed"));
}

/* The candidates of one policy step: those of its first tiers, then
 * the rest of its tiers, each in pool order. */
static GPtrArray *
slots_of_step (GPtrArray *cand, const VpaPolicyStep *step)
{
  GPtrArray *out = g_ptr_array_sized_new (cand->len);

  for (guint pass = 0; pass < 2; pass++)
    for (guint i = 0; i < cand->len; i++)
      {
        Slot *s = g_ptr_array_index (cand, i);
        guint bit = VPA_TIER_BIT (s->tier);

        if ((step->tiers & bit) != 0 && ((step->first & bit) != 0) == (pass == 0))
          g_ptr_array_add (out, s);
      }
  return out;
}

/* Nova's NUMA filter: policy/'s steps, the first that holds enough
 * devices (docs/nova.md, "NUMA affinity policies"). Returns a new
 * array. */
static GPtrArray *
filter_numa (GPtrArray *cand, const VpaRequest *req, const Guest *g)
{
  VpaPolicyStep steps[VPA_POLICY_STEPS_MAX];
  guint n = vpa_policy_steps (req->policy, g->host, &g->guest, steps);
  GPtrArray *out = NULL;

  for (guint i = 0; i < n; i++)
    {
      g_clear_pointer (&out, g_ptr_array_unref);
      out = slots_of_step (cand, &steps[i]);
      if (slots_sum (out) >= req->count)
        break;
    }
  return out != NULL ? out : g_ptr_array_new ();
}

static char *
nodes_to_string (const gint *nodes, guint n)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, "%s%d", i > 0 ? "," : "", nodes[i]);
  return g_string_free (out, FALSE);
}

static char *
count_reason (const VpaRequest *req, guint sum, const char *stage, const Guest *g)
{
  const VpaGuestNodes *guest = &g->guest;
  g_autofree char *nodes = nodes_to_string (guest->nodes, guest->n_nodes);

  return g_strdup_printf ("%s: needs %u, %u free %s (policy %s from %s%s%s)",
                          req->label != NULL ? req->label : req->device, req->count, sum,
                          stage, vpa_policy_to_string (req->policy),
                          vpa_policy_source_to_string (req->policy_source),
                          guest->numa_guest && guest->n_nodes > 0 ? ", guest nodes " : "",
                          guest->numa_guest && guest->n_nodes > 0 ? nodes : "");
}

static gboolean
count_check (GPtrArray *cand, const VpaRequest *req, const char *stage,
             const Guest *g, char **reason)
{
  guint sum = slots_sum (cand);

  if (sum >= req->count)
    return TRUE;
  if (reason != NULL)
    *reason = count_reason (req, sum, stage, g);
  return FALSE;
}

/* _filter_pools (docs/nova.md, "The filter order") then apply_requests'
 * taking. */
static gboolean
apply_request (GPtrArray *slots, const VpaRequest *req, const Guest *g, char **reason)
{
  g_autoptr (GPtrArray) cand = g_ptr_array_new ();
  g_autoptr (GPtrArray) step = NULL;
  guint needed = req->count;

  for (guint i = 0; i < slots->len; i++)
    {
      Slot *s = g_ptr_array_index (slots, i);
      if (!s->gone && vpa_fleet_request_match (s->pool, req))
        g_ptr_array_add (cand, s);
    }
  if (!count_check (cand, req, "devices match its spec", g, reason))
    return FALSE;
  step = filter_numa (cand, req, g);
  if (!count_check (step, req, "on the nodes its policy allows", g, reason))
    return FALSE;
  if (!vpa_request_wants_pf (req))
    {
      g_autoptr (GPtrArray) next = slots_keep (step, keep_not_pf, NULL);
      g_ptr_array_unref (step);
      step = g_steal_pointer (&next);
      if (!count_check (step, req, "left once PFs are excluded", g, reason))
        return FALSE;
    }
  if (!vpa_request_wants_remote_managed (req))
    {
      g_autoptr (GPtrArray) next = slots_keep (step, keep_not_remote_managed, NULL);
      g_ptr_array_unref (step);
      step = g_steal_pointer (&next);
      if (!count_check (step, req, "left once remote-managed devices are excluded", g, reason))
        return FALSE;
    }
  if (step->len == 0)
    {
      /* A count=0 request fails when nothing matches (docs/nova.md,
       * "Scheduler and compute claim"). */
      if (reason != NULL)
        *reason = g_strdup_printf ("%s: no pool matches",
                                   req->label != NULL ? req->label : req->device);
      return FALSE;
    }
  for (guint i = 0; i < step->len && needed > 0; i++)
    {
      Slot *s = g_ptr_array_index (step, i);
      if (s->count <= needed)
        {
          needed -= s->count;
          s->count = 0;
          s->gone = TRUE;
        }
      else
        {
          s->count -= needed;
          needed = 0;
        }
    }
  return TRUE;
}

/* Nova's pool order: fewer keys first, then the lowest member address
 * (the order after a nova-compute restart, docs/nova.md, "Pool order"). */
static gint
slot_nova_cmp (gconstpointer a, gconstpointer b)
{
  const VpaFleetPool *pa = ((const Slot *) a)->pool;
  const VpaFleetPool *pb = ((const Slot *) b)->pool;
  guint ka = pool_key_count (pa), kb = pool_key_count (pb);

  if (ka != kb)
    return ka < kb ? -1 : 1;
  return pa->first_addr < pb->first_addr ? -1 : pa->first_addr > pb->first_addr;
}

gboolean
vpa_fleet_supports_requests (const VpaFleetHost *host, GPtrArray *requests,
                             gboolean numa_guest, const gint *nodes, guint n_nodes,
                             gdouble *weight, char **reason)
{
  g_autoptr (GArray) store = g_array_new (FALSE, FALSE, sizeof (Slot));
  g_autoptr (GPtrArray) slots = NULL;
  g_autoptr (VpaHost) cells = host_of_cells (host);
  Guest g = { cells, { numa_guest, nodes, n_nodes } };
  guint left = 0;

  /* SQL counted too few free devices of a request's spec on the whole
   * host: the first count check fails, and no row was read back. */
  if (requests != NULL && host->ruled_out > 0 && host->ruled_out <= requests->len)
    {
      if (weight != NULL)
        *weight = 0;
      if (reason != NULL)
        *reason = count_reason (g_ptr_array_index (requests, host->ruled_out - 1),
                                host->ruled_out_free, "devices match its spec", &g);
      return FALSE;
    }
  for (guint i = 0; host->pools != NULL && i < host->pools->len; i++)
    {
      Slot s = { g_ptr_array_index (host->pools, i), 0, FALSE, VPA_TIER_REMOTE };
      s.count = s.pool->free;
      s.tier = vpa_policy_tier (cells, &g.guest, s.pool->numa_node);
      if (s.count > 0)
        g_array_append_val (store, s);
    }
  g_array_sort (store, slot_nova_cmp);
  slots = g_ptr_array_sized_new (store->len);
  for (guint i = 0; i < store->len; i++)
    g_ptr_array_add (slots, &g_array_index (store, Slot, i));

  for (guint r = 0; requests != NULL && r < requests->len; r++)
    if (!apply_request (slots, g_ptr_array_index (requests, r), &g, reason))
      {
        if (weight != NULL)
          *weight = 0;
        return FALSE;
      }

  /* Weight: matching devices still free where the guest runs. */
  for (guint i = 0; i < slots->len; i++)
    {
      const Slot *s = g_ptr_array_index (slots, i);
      gboolean wanted = FALSE;

      if (s->gone || (numa_guest && n_nodes > 0 && s->tier != VPA_TIER_AFFINE))
        continue;
      for (guint r = 0; requests != NULL && r < requests->len && !wanted; r++)
        wanted = vpa_fleet_request_match (s->pool, g_ptr_array_index (requests, r));
      if (wanted)
        left += s->count;
    }
  if (weight != NULL)
    *weight = left;
  return TRUE;
}

static VpaFleetVerdict *
verdict_new (const VpaFleetHost *host, gboolean passes, gdouble weight,
             char *reason, char *nodes)
{
  VpaFleetVerdict *v = g_new0 (VpaFleetVerdict, 1);

  v->host = g_strdup (host->name);
  v->passes = passes;
  v->weight = passes ? weight : 0;
  v->reason = reason;
  v->nodes = nodes;
  return v;
}

/* A NUMA guest not bound to host nodes: the scheduler would pick its
 * nodes, so try each host node, then each socket's nodes, and keep the
 * best that passes. */
static VpaFleetVerdict *
filter_unbound (const VpaFleetHost *host, const VpaFleetQuery *query)
{
  g_autoptr (GPtrArray) sets = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autofree char *first_reason = NULL;
  g_autofree char *best_nodes = NULL;
  gdouble best = -1;

  for (guint i = 0; i < host->cells->len; i++)
    {
      GArray *set = g_array_new (FALSE, FALSE, sizeof (gint));
      g_array_append_val (set, g_array_index (host->cells, VpaFleetCell, i).node);
      g_ptr_array_add (sets, set);
    }
  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaFleetCell *c = &g_array_index (host->cells, VpaFleetCell, i);
      GArray *set;
      gboolean seen = FALSE;

      for (guint j = 0; j < i && !seen; j++)
        seen = g_array_index (host->cells, VpaFleetCell, j).socket == c->socket;
      if (seen || c->socket == VPA_SOCKET_NONE)
        continue;
      set = g_array_new (FALSE, FALSE, sizeof (gint));
      for (guint j = i; j < host->cells->len; j++)
        if (g_array_index (host->cells, VpaFleetCell, j).socket == c->socket)
          g_array_append_val (set, g_array_index (host->cells, VpaFleetCell, j).node);
      if (set->len > 1)
        g_ptr_array_add (sets, set);
      else
        g_array_unref (set);
    }

  for (guint i = 0; i < sets->len; i++)
    {
      GArray *set = g_ptr_array_index (sets, i);
      g_autofree char *reason = NULL;
      gdouble weight = 0;

      if (vpa_fleet_supports_requests (host, query->requests, TRUE,
                                       (const gint *) set->data, set->len,
                                       &weight, first_reason == NULL ? &reason : NULL))
        {
          if (weight > best)
            {
              best = weight;
              g_free (best_nodes);
              best_nodes = nodes_to_string ((const gint *) set->data, set->len);
            }
        }
      else if (first_reason == NULL)
        first_reason = g_strdup_printf ("no host node or socket takes the requests; on node %d: %s",
                                        g_array_index (set, gint, 0), reason);
    }
  if (best >= 0)
    return verdict_new (host, TRUE, best, NULL, g_steal_pointer (&best_nodes));
  return verdict_new (host, FALSE, 0, g_steal_pointer (&first_reason), NULL);
}

/* <vpa:numa placement="auto">: the host passes iff the whole-guest fit
 * place runs succeeds on the host rebuilt from its rows. */
static VpaFleetVerdict *
filter_fit (const VpaFleetHost *host, const VpaFleetQuery *query)
{
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaNumaResult) res = NULL;
  g_autoptr (GError) error = NULL;
  const gint *nodes;
  gdouble weight = 0;

  if (host->cells->len == 0)
    return verdict_new (host, FALSE, 0, g_strdup ("the host has no NUMA topology"), NULL);
  if (g_array_index (host->cells, VpaFleetCell, 0).cpus == NULL)
    return verdict_new (host, FALSE, 0, g_strdup ("the store has no node capacity for the host (sync it again)"), NULL);
  if ((inv = vpa_fleet_host_inventory (host, query->config, &error)) == NULL ||
      (res = vpa_pipeline_numa_fit (query->numa_auto, inv, query->config, inv->claims,
                                    query->requests, NULL, &error)) == NULL)
    return verdict_new (host, FALSE, 0, g_strdup (error->message), NULL);
  nodes = (const gint *) (gpointer) res->nodes->data;
  /* The rebuilt host has the synced host's PCIe tree: the fit placed the
   * locality groups as place does there, so its verdict is place's. */
  vpa_fleet_supports_requests (host, query->requests, TRUE, nodes, res->nodes->len, &weight,
                               NULL);
  return verdict_new (host, TRUE, weight, NULL, nodes_to_string (nodes, res->nodes->len));
}

char *
vpa_fleet_query_trait_unmet (const VpaFleetQuery *query, const VpaFleetHost *host)
{
  if (query->need_net_numa_trait && !vpa_fleet_host_has_trait (host, VPA_FLEET_TRAIT_NET_NUMA))
    return g_strdup ("missing trait " VPA_FLEET_TRAIT_NET_NUMA " (a port has a NUMA affinity policy)");
  if (query->need_socket_trait && !vpa_fleet_host_has_trait (host, VPA_FLEET_TRAIT_SOCKET))
    return g_strdup ("missing trait " VPA_FLEET_TRAIT_SOCKET " (the flavor/image policy is socket)");
  return NULL;
}

static VpaFleetVerdict *
filter_host (const VpaFleetHost *host, const VpaFleetQuery *query)
{
  g_autofree char *reason = NULL;
  gdouble weight = 0;

  if ((reason = vpa_fleet_query_trait_unmet (query, host)) != NULL)
    return verdict_new (host, FALSE, 0, g_steal_pointer (&reason), NULL);
  if (query->numa_auto != NULL)
    return filter_fit (host, query);
  if (!query->numa_guest)
    {
      gboolean ok = vpa_fleet_supports_requests (host, query->requests, FALSE, NULL, 0,
                                                 &weight, &reason);
      if (ok && (reason = vpa_fleet_locality_unmet (host, query->requests, FALSE, NULL, 0)) != NULL)
        ok = FALSE;
      return verdict_new (host, ok, ok ? weight : 0, g_steal_pointer (&reason), NULL);
    }
  /* A NUMA guest needs a host with NUMA topology (NUMATopologyFilter). */
  if (host->cells->len == 0)
    return verdict_new (host, FALSE, 0, g_strdup ("the host has no NUMA topology"), NULL);
  if (query->n_guest_nodes == 0)
    return filter_unbound (host, query);
  for (guint i = 0; i < query->n_guest_nodes; i++)
    {
      gboolean found = FALSE;
      for (guint j = 0; j < host->cells->len && !found; j++)
        found = g_array_index (host->cells, VpaFleetCell, j).node == query->guest_nodes[i];
      if (!found)
        return verdict_new (host, FALSE, 0,
                            g_strdup_printf ("the guest is bound to host node '%d', which the host does not have",
                                             query->guest_nodes[i]),
                            NULL);
    }
  if (!vpa_fleet_supports_requests (host, query->requests, TRUE, query->guest_nodes,
                                    query->n_guest_nodes, &weight, &reason))
    return verdict_new (host, FALSE, 0, g_steal_pointer (&reason), NULL);
  if ((reason = vpa_fleet_locality_unmet (host, query->requests, TRUE, query->guest_nodes,
                                          query->n_guest_nodes)) != NULL)
    return verdict_new (host, FALSE, 0, g_steal_pointer (&reason), NULL);
  return verdict_new (host, TRUE, weight, NULL,
                      nodes_to_string (query->guest_nodes, query->n_guest_nodes));
}

static gint
verdict_cmp (gconstpointer a, gconstpointer b)
{
  const VpaFleetVerdict *va = *(VpaFleetVerdict *const *) a;
  const VpaFleetVerdict *vb = *(VpaFleetVerdict *const *) b;

  if (va->passes != vb->passes)
    return va->passes ? -1 : 1;
  if (va->weight != vb->weight)
    return va->weight > vb->weight ? -1 : 1;
  return strcmp (va->host, vb->host);
}

GPtrArray *
vpa_fleet_filter (GPtrArray *hosts, const VpaFleetQuery *query)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_fleet_verdict_free);

  for (guint i = 0; i < hosts->len; i++)
    g_ptr_array_add (out, filter_host (g_ptr_array_index (hosts, i), query));
  g_ptr_array_sort (out, verdict_cmp);
  return out;
}

/* ------------------------------------------------------------------ */
/* SQL shared by the backends                                          */
/* ------------------------------------------------------------------ */

char *
vpa_fleet_sql_schema (const char *id_type, const char *text_type, const char *table_options)
{
  return g_strdup_printf (
    "CREATE TABLE schema_version ("
    " application %2$s NOT NULL, version INTEGER NOT NULL, applied_at %2$s NOT NULL);"
    "CREATE TABLE hosts ("
    " id %1$s, name %2$s NOT NULL UNIQUE, traits %2$s NOT NULL DEFAULT '',"
    " last_sync %2$s);"
    "CREATE TABLE host_cells ("
    " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
    " node INTEGER NOT NULL, socket INTEGER,"
    " PRIMARY KEY (host_id, node))%3$s;"
    "CREATE TABLE devices ("
    " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
    " address %2$s NOT NULL,"
    " vendor_id %2$s NOT NULL, product_id %2$s NOT NULL,"
    " dev_type %2$s NOT NULL CHECK (dev_type IN ('type-PCI', 'type-PF', 'type-VF')),"
    " numa_node INTEGER, parent_addr %2$s,"
    " tags %2$s NOT NULL, tagset BIGINT NOT NULL,"
    " netdev %2$s, held_by %2$s,"
    " state %2$s NOT NULL CHECK (state IN ('free', 'held', 'blocked')),"
    " pcie_root %2$s, pcie_port %2$s, pcie_switch %2$s,"
    " PRIMARY KEY (host_id, address))%3$s;"
    /* The GROUP BY's columns in its order: pools come from an index
     * scan without a sort, and per-host deletes use the primary key. */
    "CREATE INDEX devices_pools ON devices"
    " (host_id, vendor_id, product_id, dev_type, numa_node, tagset, state);",
    id_type, text_type, table_options);
}

/* vpa_fleet_sql_schema creates version 2; each later version is one
 * script, and version 2 is also reached from 1 by its upgrade. */
char *
vpa_fleet_sql_migration (gint64 version, const char *id_type, const char *text_type,
                         const char *table_options)
{
  (void) id_type;
  switch (version)
    {
    case 2:
      return g_strdup (vpa_fleet_sql_upgrade_1_2 ());
    case 3:
      /* Node capacity (raw, as the inventory source reports it) and the
       * CPU/memory claims of the host's domains. */
      return g_strdup_printf (
        "ALTER TABLE host_cells ADD COLUMN memory_kib BIGINT;"
        "ALTER TABLE host_cells ADD COLUMN cpus %1$s;"
        "ALTER TABLE host_cells ADD COLUMN pages %1$s;"
        "ALTER TABLE host_cells ADD COLUMN distances %1$s;"
        "CREATE TABLE host_numa_claims ("
        " host_id BIGINT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,"
        " domain %1$s NOT NULL, running INTEGER NOT NULL,"
        " dedicated %1$s NOT NULL, memory %1$s NOT NULL,"
        " PRIMARY KEY (host_id, domain))%2$s;",
        text_type, table_options);
    default:
      return NULL;
    }
}

/* The columns both pool queries return, decoded by vpa_fleet_pool_from_row:
 * host, vendor_id, product_id, dev_type, numa_node, socket, tagset,
 * tags (min), tags (max), total, free, held, blocked, first_addr. */
#define POOL_GROUP_COLUMNS \
  "host_id, vendor_id, product_id, dev_type, numa_node, tagset"

const char *
vpa_fleet_sql_pools (gboolean one_host)
{
  /* The seed design's GROUP BY with what Nova's pools need (dev_type,
   * tags, NULL NUMA as its own group, state), joined to the host's cells
   * for the socket. MIN/MAX of tags detect a tagset key collision. */
#define POOLS_SQL(where)                                                             \
  "SELECT h.name, p.vendor_id, p.product_id, p.dev_type, p.numa_node, c.socket,"     \
  " p.tagset, p.tags, p.tags_max, p.total, p.free, p.held, p.blocked, p.first_addr," \
  " p.pcie_root, p.pcie_port"                                                        \
  " FROM (SELECT " POOL_GROUP_COLUMNS ","                                            \
  "  MIN(tags) AS tags, MAX(tags) AS tags_max, COUNT(*) AS total,"                   \
  "  SUM(CASE WHEN state = 'free' THEN 1 ELSE 0 END) AS free,"                       \
  "  SUM(CASE WHEN state = 'held' THEN 1 ELSE 0 END) AS held,"                       \
  "  SUM(CASE WHEN state = 'blocked' THEN 1 ELSE 0 END) AS blocked,"                 \
  "  MIN(address) AS first_addr, NULL AS pcie_root, NULL AS pcie_port"               \
  "  FROM devices" where                                                             \
  "  GROUP BY " POOL_GROUP_COLUMNS ") AS p"                                          \
  " JOIN hosts AS h ON h.id = p.host_id"                                             \
  " LEFT JOIN host_cells AS c ON c.host_id = p.host_id AND c.node = p.numa_node"     \
  " ORDER BY h.name, p.vendor_id, p.product_id, p.dev_type,"                         \
  "  p.numa_node IS NULL, p.numa_node, p.tags"

  return one_host ? POOLS_SQL (" WHERE host_id = $1") : POOLS_SQL ("");
#undef POOLS_SQL
}

const char *
vpa_fleet_sql_free_pools (void)
{
  /* Nova's pools hold only available devices; the host (its id here)
   * and socket are resolved by the caller from the hosts it loaded. */
  return "SELECT host_id, vendor_id, product_id, dev_type, numa_node, NULL,"
         " tagset, MIN(tags), MAX(tags), COUNT(*), COUNT(*), 0, 0, MIN(address),"
         " pcie_root, pcie_port"
         " FROM devices WHERE state = 'free'"
         " GROUP BY " POOL_GROUP_COLUMNS ", pcie_root, pcie_port";
}

const char *
vpa_fleet_sql_upgrade_1_2 (void)
{
  return "ALTER TABLE devices ADD COLUMN pcie_root TEXT;"
         "ALTER TABLE devices ADD COLUMN pcie_port TEXT;"
         "ALTER TABLE devices ADD COLUMN pcie_switch TEXT;";
}

static gboolean
parse_int64 (const char *s, gint64 *out)
{
  return s != NULL && g_ascii_string_to_signed (s, 10, G_MININT64, G_MAXINT64, out, NULL);
}

VpaFleetPool *
vpa_fleet_pool_from_row (const char *const *v, const char *uri, GError **error)
{
  g_autoptr (VpaFleetPool) pool = g_new0 (VpaFleetPool, 1);
  gint64 n[4], numa = VPA_NUMA_NONE, socket = VPA_SOCKET_NONE;

  pool->host = g_strdup (v[0]);
  g_strlcpy (pool->vendor_id, v[1] != NULL ? v[1] : "", sizeof pool->vendor_id);
  g_strlcpy (pool->product_id, v[2] != NULL ? v[2] : "", sizeof pool->product_id);
  if (!vpa_dev_type_from_string (v[3], &pool->dev_type) ||
      (v[4] != NULL && !parse_int64 (v[4], &numa)) ||
      (v[5] != NULL && !parse_int64 (v[5], &socket)) ||
      !parse_int64 (v[6], &pool->tagset) || v[7] == NULL ||
      !parse_int64 (v[9], &n[0]) || !parse_int64 (v[10], &n[1]) ||
      !parse_int64 (v[11], &n[2]) || !parse_int64 (v[12], &n[3]) ||
      !vpa_addr_parse (v[13], &pool->first_addr))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "store '%s': host '%s': malformed device row (dev_type '%s', address '%s')",
                   uri, v[0], v[3] != NULL ? v[3] : "", v[13] != NULL ? v[13] : "");
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
  pool->tags = g_strdup (v[7]);
  pool->pcie_root = g_strdup (v[14]);
  pool->pcie_port = g_strdup (v[15]);
  pool->total = (guint) n[0];
  pool->free = (guint) n[1];
  pool->held = (guint) n[2];
  pool->blocked = (guint) n[3];
  return g_steal_pointer (&pool);
}

/* Attaches the free pools (their host column holding the host id) to the
 * hosts, resolving each pool's socket from the host's cells. */
gboolean
vpa_fleet_hosts_attach_pools (GPtrArray *hosts, GPtrArray *pools)
{
  g_autoptr (GHashTable) by_id = g_hash_table_new (g_int64_hash, g_int64_equal);

  for (guint i = 0; i < hosts->len; i++)
    {
      VpaFleetHost *host = g_ptr_array_index (hosts, i);
      host->pools = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_fleet_pool_free);
      g_hash_table_insert (by_id, &host->id, host);
    }
  for (guint i = 0; i < pools->len; i++)
    {
      VpaFleetPool *pool = g_ptr_array_index (pools, i);
      gint64 id;
      VpaFleetHost *host;

      if (!parse_int64 (pool->host, &id) ||
          (host = g_hash_table_lookup (by_id, &id)) == NULL)
        continue;
      g_free (pool->host);
      pool->host = g_strdup (host->name);
      for (guint c = 0; c < host->cells->len; c++)
        if (g_array_index (host->cells, VpaFleetCell, c).node == pool->numa_node)
          pool->socket = g_array_index (host->cells, VpaFleetCell, c).socket;
      g_ptr_array_add (host->pools, g_steal_pointer (&g_ptr_array_index (pools, i)));
    }
  return TRUE;
}

VpaFleetHost *
vpa_fleet_host_from_row (const char *const *v)
{
  VpaFleetHost *host = g_new0 (VpaFleetHost, 1);

  parse_int64 (v[0], &host->id);
  host->name = g_strdup (v[1]);
  host->traits = vpa_fleet_traits_parse (v[2]);
  host->last_sync = g_strdup (v[3]);
  host->cells = g_array_new (FALSE, FALSE, sizeof (VpaFleetCell));
  g_array_set_clear_func (host->cells, (GDestroyNotify) vpa_fleet_cell_clear);
  return host;
}

gboolean
vpa_fleet_host_add_cell_row (GHashTable *by_id, const char *const *v)
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
vpa_fleet_hosts_init_capacity (GPtrArray *hosts)
{
  for (guint i = 0; i < hosts->len; i++)
    {
      VpaFleetHost *host = g_ptr_array_index (hosts, i);
      host->devices = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_device_free);
      host->bridges = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_device_free);
      host->claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
    }
}

gboolean
vpa_fleet_host_add_claim_row (GHashTable *by_id, const char *const *v)
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
vpa_fleet_host_add_device_row (GHashTable *by_id, const char *const *v)
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
  g_ptr_array_add (host->devices, g_steal_pointer (&dev));
  return TRUE;
}
