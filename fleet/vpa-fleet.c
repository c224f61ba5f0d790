/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet store's model: the rows a sync writes (from an inventory),
 * canonical tags, host names, and what queries return.
 */
#include "vpa-fleet.h"
#include "vpa-pcie.h"
#include "vpa-traits.h"

#include <string.h>
#include <json-glib/json-glib.h>

/* ------------------------------------------------------------------ */
/* Host data                                                           */
/* ------------------------------------------------------------------ */

static void fleet_claims_encode (VpaFleetHostData *data, GPtrArray *claims);
static void fleet_networks_encode (VpaFleetHostData *data, const VpaConfig *config);

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
  data->networks = g_array_new (FALSE, FALSE, sizeof (VpaFleetNetwork));
  g_array_set_clear_func (data->networks, (GDestroyNotify) vpa_fleet_network_clear);
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
  g_array_unref (data->networks);
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
  fleet_networks_encode (data, inv->config);
  g_strfreev (data->traits);
  data->traits = vpa_traits_compute (inv);

  /* One canonical string per tag set of the configuration. */
  for (guint t = 0; inv->config != NULL && t < inv->config->tagsets->len; t++)
    {
      g_ptr_array_add (tag_strings,
                       vpa_fleet_tags_canonical (g_ptr_array_index (inv->config->tagsets, t)));
    }

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
/* Network affinity rows                                               */
/* ------------------------------------------------------------------ */

void
vpa_fleet_network_clear (VpaFleetNetwork *net)
{
  g_clear_pointer (&net->physnet, g_free);
  g_clear_pointer (&net->nodes, g_free);
}

/* Every [physnet NAME] and [tunnel] group, with its nodes as written
 * (an empty group too: the host says the network has no affinity). */
static void
fleet_networks_encode (VpaFleetHostData *data, const VpaConfig *config)
{
  for (guint i = 0; config != NULL && i < config->vswitch->len; i++)
    {
      const VpaVswitchAffinity *aff = g_ptr_array_index (config->vswitch, i);
      VpaFleetNetwork net = { g_strdup (aff->physnet), NULL };
      GString *nodes = g_string_new (NULL);

      for (guint j = 0; j < aff->nodes->len; j++)
        {
          sep (nodes);
          g_string_append_printf (nodes, "%u", g_array_index (aff->nodes, guint, j));
        }
      net.nodes = g_string_free (nodes, FALSE);
      g_array_append_val (data->networks, net);
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
        {
          g_string_append_printf (out, "\\%c", *p);
        }
      else if (*p < 0x20)
        {
          g_string_append_printf (out, "\\u%04x", *p);
        }
      else
        {
          g_string_append_c (out, (char) *p);
        }
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
        {
          json_escape (out, pair->value);
        }
      else
        {
          g_string_append (out, "null");
        }
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
    {
      if (parts[i][0] != '\0')
        g_ptr_array_add (out, g_strdup (parts[i]));
    }
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
  if (host->reserved != NULL)
    g_array_unref (host->reserved);
  if (host->networks != NULL)
    g_ptr_array_unref (host->networks);
  g_free (host);
}

gboolean
vpa_fleet_host_has_trait (const VpaFleetHost *host, const char *trait)
{
  return host->traits != NULL && g_strv_contains ((const char *const *) host->traits, trait);
}

static void
tag_pair_free (VpaSpecPair *pair)
{
  g_free (pair->key);
  g_free (pair->value);
  g_free (pair);
}

GPtrArray *
vpa_fleet_tags_parse (const char *tags)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) tag_pair_free);
  JsonNode *root;
  JsonObject *obj;
  g_autoptr (GList) members = NULL;

  if (tags == NULL || !json_parser_load_from_data (parser, tags, -1, NULL) ||
      (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return out;
  obj = json_node_get_object (root);
  members = json_object_get_members (obj);
  for (GList *l = members; l != NULL; l = l->next)
    {
      JsonNode *value = json_object_get_member (obj, l->data);
      if (JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_STRING)
        {
          VpaSpecPair *pair = g_new0 (VpaSpecPair, 1);
          pair->key = g_strdup (l->data);
          pair->value = g_strdup (json_node_get_string (value));
          g_ptr_array_add (out, pair);
        }
    }
  return out;
}
