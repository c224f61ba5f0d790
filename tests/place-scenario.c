/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "place-scenario.h"

#include <string.h>

#define BRUTE_MAX_NODES 400000

void
scenario_free (Scenario *sc)
{
  if (sc == NULL)
    return;
  g_free (sc->name);
  g_free (sc->skip);
  g_free (sc->nova_error);
  g_clear_error (&sc->policy_error);
  g_clear_pointer (&sc->requests, g_ptr_array_unref);
  g_clear_pointer (&sc->inv, vpa_inventory_free);
  g_clear_pointer (&sc->config, vpa_config_free);
  g_free (sc->policy_mismatch);
  g_clear_pointer (&sc->guest_nodes, g_array_unref);
  g_clear_pointer (&sc->nova_alloc, g_ptr_array_unref);
  g_free (sc->nova_failure);
  g_free (sc);
}

static const char *
str_member (JsonObject *obj, const char *key)
{
  JsonNode *n = json_object_get_member (obj, key);
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) ? json_node_get_string (n) : NULL;
}

static gint
int_member (JsonObject *obj, const char *key, gint none)
{
  JsonNode *n = json_object_get_member (obj, key);
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) ? (gint) json_node_get_int (n) : none;
}

static gboolean
addr_member (JsonObject *obj, const char *key, VpaAddr *out, GError **error)
{
  const char *s = str_member (obj, key);

  *out = VPA_ADDR_NONE;
  if (s == NULL)
    return TRUE;
  if (!vpa_addr_parse (s, out))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "bad %s '%s'", key, s);
      return FALSE;
    }
  return TRUE;
}

static VpaHost *
host_from_json (JsonObject *obj, GError **error)
{
  g_autoptr (VpaHost) host = vpa_host_new ("scenario");
  JsonArray *cells = json_object_get_array_member (obj, "host_cells");
  JsonArray *devs = json_object_get_array_member (obj, "devices");

  for (guint i = 0; cells != NULL && i < json_array_get_length (cells); i++)
    {
      JsonObject *c = json_array_get_object_element (cells, i);
      VpaCell cell = { int_member (c, "id", 0), int_member (c, "socket", VPA_SOCKET_NONE),
                       NULL, 0 };
      vpa_host_add_cell (host, &cell);
    }
  for (guint i = 0; devs != NULL && i < json_array_get_length (devs); i++)
    {
      JsonObject *d = json_array_get_object_element (devs, i);
      g_autoptr (VpaDevice) dev = vpa_device_new ();

      if (!addr_member (d, "address", &dev->addr, error) ||
          !addr_member (d, "parent_addr", &dev->parent_addr, error))
        return NULL;
      g_strlcpy (dev->vendor_id, str_member (d, "vendor_id"), sizeof dev->vendor_id);
      g_strlcpy (dev->product_id, str_member (d, "product_id"), sizeof dev->product_id);
      if (!vpa_dev_type_from_string (str_member (d, "dev_type"), &dev->dev_type))
        dev->dev_type = VPA_DEV_TYPE_PCI;
      dev->numa_node = int_member (d, "numa_node", VPA_NUMA_NONE);
      if (dev->numa_node < 0)
        dev->numa_node = VPA_NUMA_NONE;
      dev->netdev = g_strdup (str_member (d, "netdev"));
      vpa_host_add_device (host, g_steal_pointer (&dev));
    }
  if (!vpa_host_seal (host, error))
    return NULL;
  return g_steal_pointer (&host);
}

static char *
value_string (JsonNode *n)
{
  if (n == NULL || JSON_NODE_HOLDS_NULL (n))
    return NULL;
  if (json_node_get_value_type (n) == G_TYPE_BOOLEAN)
    return g_strdup (json_node_get_boolean (n) ? "true" : "false");
  if (json_node_get_value_type (n) == G_TYPE_INT64)
    return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (n));
  return g_strdup (json_node_get_string (n));
}

/* Nova's device_spec dicts as our GKeyFile text; NULL with skip set for
 * forms our configuration does not have. */
static char *
config_text (JsonObject *obj, char **skip)
{
  JsonArray *specs = json_object_has_member (obj, "device_spec")
                       ? json_object_get_array_member (obj, "device_spec")
                       : NULL;
  GString *s = g_string_new (NULL);

  /* Nova's default [{}] (or none given): every device, untagged. Our
   * configuration admits nothing without a spec; an empty one admits
   * every device. */
  if (specs == NULL)
    g_string_append (s, "[device-spec all]\n");
  for (guint i = 0; specs != NULL && i < json_array_get_length (specs); i++)
    {
      JsonObject *spec = json_array_get_object_element (specs, i);
      g_autoptr (GList) keys = json_object_get_members (spec);

      g_string_append_printf (s, "[device-spec s%u]\n", i);
      for (GList *l = keys; l != NULL; l = l->next)
        {
          const char *key = l->data;
          JsonNode *n = json_object_get_member (spec, key);
          g_autofree char *v = NULL;

          if (!JSON_NODE_HOLDS_VALUE (n) && !JSON_NODE_HOLDS_NULL (n))
            {
              *skip = g_strdup_printf ("device_spec key '%s' is not a plain value", key);
              g_string_free (s, TRUE);
              return NULL;
            }
          v = value_string (n);
          if (strcmp (key, "vendor_id") == 0)
            {
              g_string_append_printf (s, "vendor-id=%s\n", v);
            }
          else if (strcmp (key, "product_id") == 0)
            {
              g_string_append_printf (s, "product-id=%s\n", v);
            }
          else
            {
              g_string_append_printf (s, "%s=%s\n", key, v ? v : "");
            }
        }
    }
  return g_string_free (s, FALSE);
}

static gboolean
policy_member (JsonObject *obj, const char *key, VpaPolicy *out, gboolean *set,
               GError **error)
{
  const char *s = str_member (obj, key);

  *set = s != NULL;
  if (s != NULL && !vpa_policy_from_string (s, out))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: unknown policy '%s'", key, s);
      return FALSE;
    }
  return TRUE;
}

static VpaRequest *
request_from_json (Scenario *sc, JsonObject *obj, JsonObject *r, GError **error)
{
  const char *kind = str_member (r, "kind");
  g_autoptr (VpaRequest) req = vpa_request_new (g_strcmp0 (kind, "port") == 0
                                                  ? VPA_REQUEST_PORT
                                                  : VPA_REQUEST_ALIAS,
                                                str_member (r, "label"),
                                                (guint) int_member (r, "count", 1));
  JsonArray *specs = json_object_get_array_member (r, "spec");
  VpaPolicy p[4] = { 0 };
  gboolean set[4];
  const char *const keys[] = { "port_policy", "alias_policy" };
  VpaPolicySource source, want_source;
  VpaPolicy want;

  g_free (req->label);
  req->label = g_strdup (str_member (r, "label"));
  req->pf_group = g_strdup (str_member (r, "pf_group"));
  for (guint i = 0; i < json_array_get_length (specs); i++)
    {
      JsonObject *d = json_array_get_object_element (specs, i);
      g_autoptr (GList) members = json_object_get_members (d);
      VpaSpec *spec = vpa_spec_new ();

      for (GList *l = members; l != NULL; l = l->next)
        {
          g_autofree char *v = value_string (json_object_get_member (d, l->data));
          vpa_spec_set (spec, l->data, v);
        }
      g_ptr_array_add (req->specs, spec);
    }
  if (!policy_member (r, keys[0], &p[0], &set[0], error) ||
      !policy_member (obj, "flavor_policy", &p[1], &set[1], error) ||
      !policy_member (obj, "image_policy", &p[2], &set[2], error) ||
      !policy_member (r, keys[1], &p[3], &set[3], error))
    return NULL;
  if (!vpa_policy_resolve (set[0] ? &p[0] : NULL, set[1] ? &p[1] : NULL,
                           set[2] ? &p[2] : NULL, set[3] ? &p[3] : NULL, &req->policy,
                           &source, error))
    return NULL;
  req->policy_source = source;
  if (!vpa_policy_from_string (str_member (r, "policy"), &want) ||
      !vpa_policy_source_from_string (str_member (r, "source"), &want_source) ||
      want != req->policy || want_source != source)
    {
      sc->policies_match = FALSE;
      sc->policy_mismatch = g_strdup_printf ("%s: recorded %s from %s, resolved %s from %s",
                                             req->label, str_member (r, "policy"),
                                             str_member (r, "source"),
                                             vpa_policy_to_string (req->policy),
                                             vpa_policy_source_to_string (source));
    }
  return g_steal_pointer (&req);
}

static GArray *
addresses_to_indices (const VpaHost *host, JsonArray *arr, GError **error)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < json_array_get_length (arr); i++)
    {
      VpaAddr a;
      gint idx;
      if (!vpa_addr_parse (json_array_get_string_element (arr, i), &a) ||
          (idx = vpa_host_lookup (host, a)) < 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "Nova allocated unknown '%s'",
                       json_array_get_string_element (arr, i));
          g_array_unref (out);
          return NULL;
        }
      g_array_append_val (out, idx);
    }
  return out;
}

static gboolean
nova_from_json (Scenario *sc, JsonObject *nova, GError **error)
{
  JsonNode *alloc;

  sc->nova_error = g_strdup (str_member (nova, "error"));
  if (sc->nova_error != NULL)
    return TRUE;
  sc->nova_ok = json_object_get_boolean_member (nova, "ok");
  sc->has_nova_support = json_object_has_member (nova, "support");
  if (sc->has_nova_support)
    sc->nova_support = json_object_get_boolean_member (nova, "support");
  sc->nova_failure = g_strdup (str_member (nova, "failure_category"));
  alloc = json_object_get_member (nova, "allocated");
  if (!sc->nova_ok || alloc == NULL || JSON_NODE_HOLDS_NULL (alloc))
    return TRUE;
  sc->nova_alloc = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  for (guint r = 0; r < json_array_get_length (json_node_get_array (alloc)); r++)
    {
      GArray *one = addresses_to_indices (
        sc->inv->host, json_array_get_array_element (json_node_get_array (alloc), r), error);
      if (one == NULL)
        return FALSE;
      g_ptr_array_add (sc->nova_alloc, one);
    }
  return TRUE;
}

static gboolean
scenario_requests (Scenario *sc, JsonObject *obj, GError **error)
{
  JsonArray *reqs = json_object_get_array_member (obj, "requests");

  sc->requests = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_request_free);
  for (guint i = 0; reqs != NULL && i < json_array_get_length (reqs); i++)
    {
      g_autoptr (GError) local = NULL;
      VpaRequest *req = request_from_json (sc, obj, json_array_get_object_element (reqs, i),
                                           &local);
      if (req == NULL)
        {
          if (sc->policy_error == NULL)
            sc->policy_error = g_steal_pointer (&local);
          continue;
        }
      g_ptr_array_add (sc->requests, req);
    }
  return TRUE;
}

Scenario *
scenario_from_json (JsonObject *obj, GError **error)
{
  g_autoptr (Scenario) sc = g_new0 (Scenario, 1);
  g_autofree char *conf = NULL;
  JsonNode *nodes;
  VpaHost *host;

  sc->name = g_strdup (str_member (obj, "name"));
  sc->skip = g_strdup (str_member (obj, "skip"));
  sc->policies_match = TRUE;
  sc->guest_nodes = g_array_new (FALSE, FALSE, sizeof (gint));
  if (sc->skip != NULL)
    return g_steal_pointer (&sc);
  conf = config_text (obj, &sc->skip);
  if (conf == NULL)
    return g_steal_pointer (&sc);
  sc->config = vpa_config_load_data (conf, strlen (conf), sc->name, error);
  if (sc->config == NULL)
    return NULL;
  host = host_from_json (obj, error);
  if (host == NULL)
    return NULL;
  {
    g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
    JsonArray *arr = json_object_has_member (obj, "claims")
                       ? json_object_get_array_member (obj, "claims")
                       : NULL;
    for (guint i = 0; arr != NULL && i < json_array_get_length (arr); i++)
      {
        VpaAddr a;
        if (vpa_addr_parse (json_array_get_string_element (arr, i), &a))
          g_ptr_array_add (claims, vpa_claim_new ("other", a, TRUE));
      }
    sc->inv = vpa_inventory_new (host, sc->config, g_steal_pointer (&claims), error);
    if (sc->inv == NULL)
      return NULL;
  }
  nodes = json_object_get_member (obj, "guest_nodes");
  /* Nova: no cells, or an empty list of them, is a guest without NUMA. */
  if (nodes != NULL && JSON_NODE_HOLDS_ARRAY (nodes))
    {
      for (guint i = 0; i < json_array_get_length (json_node_get_array (nodes)); i++)
        {
          gint n = (gint) json_array_get_int_element (json_node_get_array (nodes), i);
          g_array_append_val (sc->guest_nodes, n);
        }
    }
  sc->guest.numa_guest = sc->guest_nodes->len > 0;
  sc->guest.nodes = (const gint *) (void *) sc->guest_nodes->data;
  sc->guest.n_nodes = sc->guest_nodes->len;
  if (!scenario_requests (sc, obj, error))
    return NULL;
  /* A fit runner's input has no recorded outcome (tests/fit-runner.c). */
  if (json_object_has_member (obj, "nova") &&
      !nova_from_json (sc, json_object_get_object_member (obj, "nova"), error))
    return NULL;
  return g_steal_pointer (&sc);
}

GPtrArray *
scenarios_load (const char *path, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) scenario_free);
  JsonNode *root;

  if (!json_parser_load_from_file (parser, path, error))
    return NULL;
  root = json_parser_get_root (parser);
  if (JSON_NODE_HOLDS_OBJECT (root))
    {
      Scenario *sc = scenario_from_json (json_node_get_object (root), error);
      if (sc == NULL)
        return NULL;
      g_ptr_array_add (out, sc);
      return g_steal_pointer (&out);
    }
  for (guint i = 0; i < json_array_get_length (json_node_get_array (root)); i++)
    {
      JsonObject *obj = json_array_get_object_element (json_node_get_array (root), i);
      Scenario *sc = scenario_from_json (obj, error);
      if (sc == NULL)
        {
          g_prefix_error (error, "%s: scenario '%s': ", path, str_member (obj, "name"));
          return NULL;
        }
      g_ptr_array_add (out, sc);
    }
  return g_steal_pointer (&out);
}

/* ------------------------------------------------------------------ */
/* The independent checker                                             */
/* ------------------------------------------------------------------ */

static gboolean
truthy (const char *s)
{
  return s != NULL && (g_ascii_strcasecmp (s, "true") == 0 || g_ascii_strcasecmp (s, "1") == 0 ||
                       g_ascii_strcasecmp (s, "yes") == 0 || g_ascii_strcasecmp (s, "on") == 0 ||
                       g_ascii_strcasecmp (s, "t") == 0 || g_ascii_strcasecmp (s, "y") == 0);
}

gboolean
scenario_device_ok (const Scenario *sc, guint r, guint i)
{
  const VpaRequest *req = g_ptr_array_index (sc->requests, r);
  const VpaDevice *dev = vpa_host_device (sc->inv->host, i);
  gboolean match = FALSE, want_pf = FALSE, want_rm = FALSE;

  if (!vpa_inventory_has (sc->inv, i) || sc->inv->state[i] != VPA_DEV_STATE_FREE)
    return FALSE;
  for (guint s = 0; s < req->specs->len; s++)
    {
      const VpaSpec *spec = g_ptr_array_index (req->specs, s);
      match = match || vpa_inventory_model_spec_match (sc->inv, i, spec);
      want_pf = want_pf || g_strcmp0 (vpa_spec_get (spec, "dev_type", NULL), "type-PF") == 0;
      want_rm = want_rm || truthy (vpa_spec_get (spec, "remote_managed", NULL));
    }
  if (!match || (dev->dev_type == VPA_DEV_TYPE_PF && !want_pf))
    return FALSE;
  if (truthy (vpa_inventory_model_prop (sc->inv, i, "remote_managed")) && !want_rm)
    return FALSE;
  return vpa_policy_allows (req->policy, sc->inv->host, &sc->guest,
                            vpa_policy_tier (sc->inv->host, &sc->guest, dev->numa_node));
}

char *
scenario_check (const Scenario *sc, GPtrArray *alloc)
{
  g_autoptr (GHashTable) used = g_hash_table_new (NULL, NULL);
  g_autoptr (GHashTable) groups = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (alloc->len != sc->requests->len)
    return g_strdup ("not one assignment per request");
  for (guint r = 0; r < alloc->len; r++)
    {
      const VpaRequest *req = g_ptr_array_index (sc->requests, r);
      GArray *devs = g_ptr_array_index (alloc, r);

      if (devs->len != req->count)
        {
          return g_strdup_printf ("%s: %u devices for count %u", req->label, devs->len,
                                  req->count);
        }
      for (guint k = 0; k < devs->len; k++)
        {
          guint i = g_array_index (devs, guint, k);
          const VpaDevice *dev = vpa_host_device (sc->inv->host, i);
          VpaAddr pf = dev->parent_addr != VPA_ADDR_NONE ? dev->parent_addr : dev->addr;
          if (!scenario_device_ok (sc, r, i))
            return g_strdup_printf ("%s: device %u not allowed", req->label, i);
          if (!g_hash_table_add (used, GUINT_TO_POINTER (i + 1)))
            return g_strdup_printf ("%s: device %u given twice", req->label, i);
          if (req->pf_group != NULL)
            {
              char *key = g_strdup_printf ("%s/%" G_GUINT64_FORMAT, req->pf_group, pf);
              if (!g_hash_table_add (groups, key))
                {
                  return g_strdup_printf ("%s: pf-group '%s' twice on one PF", req->label,
                                          req->pf_group);
                }
            }
        }
    }
  for (guint r = 0; r < alloc->len; r++)
    {
      GArray *devs = g_ptr_array_index (alloc, r);
      for (guint k = 0; k < devs->len; k++)
        {
          const VpaDevice *dev = vpa_host_device (sc->inv->host, g_array_index (devs, guint, k));
          if (dev->parent_index >= 0 &&
              g_hash_table_contains (used, GUINT_TO_POINTER (dev->parent_index + 1)))
            return g_strdup ("a PF and one of its VFs both taken");
        }
    }
  return NULL;
}

guint
scenario_tier_cost (const Scenario *sc, GPtrArray *alloc)
{
  guint cost = 0;

  for (guint r = 0; r < alloc->len; r++)
    {
      GArray *devs = g_ptr_array_index (alloc, r);
      for (guint k = 0; k < devs->len; k++)
        {
          const VpaDevice *dev = vpa_host_device (sc->inv->host, g_array_index (devs, guint, k));
          cost += vpa_policy_tier (sc->inv->host, &sc->guest, dev->numa_node);
        }
    }
  return cost;
}

GPtrArray *
placement_alloc (const VpaPlacement *pl)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);

  for (guint r = 0; r < pl->assignments->len; r++)
    {
      const VpaAssignment *a = g_ptr_array_index (pl->assignments, r);
      GArray *copy = g_array_new (FALSE, FALSE, sizeof (guint));
      g_array_append_vals (copy, a->devices->data, a->devices->len);
      g_ptr_array_add (out, copy);
    }
  return out;
}

/* ------------------------------------------------------------------ */
/* Brute force                                                         */
/* ------------------------------------------------------------------ */

typedef struct {
  const Scenario *sc;
  GPtrArray *cand; /* per request: GArray of allowed device indices */
  GPtrArray *cur;  /* per request: GArray being built */
  guint nodes, n_valid, best, n_best;
  GPtrArray *best_alloc;
  gboolean aborted;
} Brute;

static GPtrArray *
alloc_copy (GPtrArray *alloc)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);

  for (guint r = 0; r < alloc->len; r++)
    {
      GArray *src = g_ptr_array_index (alloc, r);
      GArray *copy = g_array_new (FALSE, FALSE, sizeof (guint));
      g_array_append_vals (copy, src->data, src->len);
      g_ptr_array_add (out, copy);
    }
  return out;
}

static void
brute_leaf (Brute *b)
{
  g_autofree char *why = scenario_check (b->sc, b->cur);
  guint cost;

  if (why != NULL)
    return;
  b->n_valid++;
  cost = scenario_tier_cost (b->sc, b->cur);
  if (cost < b->best)
    {
      b->best = cost;
      b->n_best = 0;
      g_clear_pointer (&b->best_alloc, g_ptr_array_unref);
      b->best_alloc = alloc_copy (b->cur);
    }
  if (cost == b->best)
    b->n_best++;
}

/* Chooses the devices of request r, in increasing candidate order from
 * position start (combinations, not permutations). */
static void
brute_step (Brute *b, guint r, guint start)
{
  const VpaRequest *req;
  GArray *cur, *cand;

  if (b->aborted || ++b->nodes > BRUTE_MAX_NODES)
    {
      b->aborted = TRUE;
      return;
    }
  if (r == b->sc->requests->len)
    {
      brute_leaf (b);
      return;
    }
  req = g_ptr_array_index (b->sc->requests, r);
  cur = g_ptr_array_index (b->cur, r);
  cand = g_ptr_array_index (b->cand, r);
  if (cur->len == req->count)
    {
      brute_step (b, r + 1, 0);
      return;
    }
  for (guint k = start; k < cand->len; k++)
    {
      guint i = g_array_index (cand, guint, k);
      gboolean taken = FALSE;
      for (guint q = 0; q <= r && !taken; q++)
        {
          GArray *other = g_ptr_array_index (b->cur, q);
          for (guint j = 0; j < other->len && !taken; j++)
            taken = g_array_index (other, guint, j) == i;
        }
      if (taken)
        continue;
      g_array_append_val (cur, i);
      brute_step (b, r, k + 1);
      g_array_set_size (cur, cur->len - 1);
    }
}

gboolean
scenario_brute_force (const Scenario *sc, guint *n_valid, guint *best, guint *n_best,
                      GPtrArray **best_alloc)
{
  Brute b = { sc, NULL, NULL, 0, 0, G_MAXUINT, 0, NULL, FALSE };

  b.cand = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  b.cur = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  for (guint r = 0; r < sc->requests->len; r++)
    {
      GArray *c = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint i = 0; i < sc->inv->host->devices->len; i++)
        {
          if (scenario_device_ok (sc, r, i))
            g_array_append_val (c, i);
        }
      g_ptr_array_add (b.cand, c);
      g_ptr_array_add (b.cur, g_array_new (FALSE, FALSE, sizeof (guint)));
    }
  brute_step (&b, 0, 0);
  g_ptr_array_unref (b.cand);
  g_ptr_array_unref (b.cur);
  *n_valid = b.n_valid;
  *best = b.best;
  *n_best = b.n_best;
  if (best_alloc != NULL)
    *best_alloc = g_steal_pointer (&b.best_alloc);
  g_clear_pointer (&b.best_alloc, g_ptr_array_unref);
  return !b.aborted;
}
