/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet store's model: the rows a sync writes (from an inventory),
 * canonical tags, host names, and what queries return.
 */
#include "vpa-fleet.h"
#include "vpa-fleet-rows.h"
#include "vpa-pcie.h"
#include "vpa-pipeline-numa.h"
#include "vpa-policy.h"
#include "vpa-requests.h"
#include "vpa-traits.h"

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
  if ((inv = vpa_fleet_rows_inventory (host, query->config, &error)) == NULL ||
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
