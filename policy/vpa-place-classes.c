/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Placement's classes of interchangeable free devices (same
 * match-relevant properties, NUMA node and parent PF), which request may
 * use which class, and the lexicographic weights of the flow's costs
 * (docs/placement.md). The solver over them is vpa-place.c.
 */
#include "vpa-place-private.h"

#include <string.h>

#include "vpa-request-wants.h"

/* ------------------------------------------------------------------ */
/* Classes of interchangeable free devices                             */
/* ------------------------------------------------------------------ */

static void
place_class_free (PlaceClass *c)
{
  g_array_unref (c->free_devs);
  g_free (c->label);
  g_free (c->short_label);
  g_free (c);
}

void
vpa_place_clear (Place *pl)
{
  g_clear_pointer (&pl->classes, g_ptr_array_unref);
  vpa_place_clear_derived (pl);
}

void
vpa_place_clear_derived (Place *pl)
{
  g_clear_pointer (&pl->elig, g_free);
  g_clear_pointer (&pl->wants_pf, g_free);
  g_clear_pointer (&pl->group, g_free);
  g_clear_pointer (&pl->pf_wanted, g_free);
  g_clear_pointer (&pl->vf_wanted, g_free);
  g_clear_pointer (&pl->elig_base, g_free);
  g_clear_pointer (&pl->lgroups, g_ptr_array_unref);
}

static guint
class_hash (gconstpointer p)
{
  const PlaceClass *c = p;
  guint h = g_str_hash (c->dev->vendor_id) * 31 + g_str_hash (c->dev->product_id);

  h = h * 31 + (guint) c->tagset;
  h = h * 31 + (guint) c->numa_node;
  h = h * 31 + (guint) c->dev->dev_type + (guint) c->has_netdev;
  h = h * 31 + (guint) c->pcie_port;
  return h * 31 + (guint) (c->pf_addr ^ (c->pf_addr >> 32));
}

static gboolean
class_equal (gconstpointer a, gconstpointer b)
{
  const PlaceClass *x = a, *y = b;

  return x->tagset == y->tagset && x->numa_node == y->numa_node &&
         x->has_netdev == y->has_netdev && x->pcie_port == y->pcie_port &&
         x->pcie_root == y->pcie_root &&
         x->pf_addr == y->pf_addr && x->dev->dev_type == y->dev->dev_type &&
         strcmp (x->dev->vendor_id, y->dev->vendor_id) == 0 &&
         strcmp (x->dev->product_id, y->dev->product_id) == 0;
}

static char *
class_tags (const Place *pl, const PlaceClass *c)
{
  const GPtrArray *tagsets = pl->inv->tagsets;
  const GPtrArray *tags = NULL;
  GString *s = g_string_new (NULL);

  if (tagsets != NULL && c->tagset >= 0 && (guint) c->tagset < tagsets->len)
    tags = g_ptr_array_index (tagsets, c->tagset);
  for (guint i = 0; tags != NULL && i < tags->len; i++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (tags, i);
      if (g_strcmp0 (pair->key, "physical_network") == 0 && pair->value != NULL)
        {
          g_string_append_printf (s, " %s", pair->value);
        }
      else
        {
          g_string_append_printf (s, " %s=%s", pair->key, pair->value ? pair->value : "");
        }
    }
  return g_string_free (s, FALSE);
}

static void
class_describe (const Place *pl, PlaceClass *c)
{
  g_autofree char *tags = class_tags (pl, c);
  g_autofree char *node = c->numa_node == VPA_NUMA_NONE
                            ? g_strdup ("without NUMA node")
                            : g_strdup_printf ("on node %d", c->numa_node);
  const char *type = vpa_dev_type_to_string (c->dev->dev_type);
  char pf[VPA_ADDR_BUFLEN];

  vpa_addr_format (c->pf_addr, pf);
  if (c->dev->dev_type == VPA_DEV_TYPE_PCI)
    {
      c->label = g_strdup_printf ("%s:%s %s%s", c->dev->vendor_id, c->dev->product_id, type,
                                  tags);
    }
  else
    {
      c->label = g_strdup_printf ("%s:%s %s%s %s%s", c->dev->vendor_id, c->dev->product_id,
                                  type, tags,
                                  c->dev->dev_type == VPA_DEV_TYPE_VF ? "PF " : "", pf);
    }
  c->short_label = g_strdup_printf ("%s:%s%s%s %s", c->dev->vendor_id, c->dev->product_id,
                                    c->dev->dev_type == VPA_DEV_TYPE_PF ? " type-PF" : "",
                                    tags, node);
  if (pl->split_pcie && c->pcie_port >= 0)
    {
      char rp[VPA_ADDR_BUFLEN];
      char *label = g_strdup_printf ("%s root port %s", c->label,
                                     vpa_addr_format (vpa_host_device (pl->host,
                                                                       (guint) c->pcie_port)
                                                        ->addr,
                                                      rp));
      g_free (c->label);
      c->label = label;
    }
}

static void
class_add_device (PlaceClass *c, const VpaInventory *inv, guint i)
{
  switch ((VpaDevState) inv->state[i])
    {
    case VPA_DEV_STATE_FREE:
      g_array_append_val (c->free_devs, i);
      break;
    case VPA_DEV_STATE_HELD:
      c->n_held++;
      break;
    case VPA_DEV_STATE_RESERVED:
      c->n_reserved++;
      break;
    case VPA_DEV_STATE_BLOCKED:
    case VPA_DEV_STATE_LAST:
    default:
      c->n_blocked++;
      break;
    }
}

/* Finishes a class once all its members are known. */
static void
class_finish (Place *pl, PlaceClass *c, const gint *class_of, GHashTable *pf_ids)
{
  gpointer id;

  if (!g_hash_table_lookup_extended (pf_ids, &c->pf_addr, NULL, &id))
    {
      id = GUINT_TO_POINTER (g_hash_table_size (pf_ids));
      g_hash_table_insert (pf_ids, &c->pf_addr, id);
    }
  c->pf_id = GPOINTER_TO_UINT (id);
  c->pf_class = -1;
  if (c->dev->dev_type == VPA_DEV_TYPE_VF && c->dev->parent_index >= 0 &&
      class_of[c->dev->parent_index] >= 0)
    {
      guint p = (guint) c->dev->parent_index;
      c->pf_class = class_of[p];
      c->pf_whole = pl->inv->state[p] == VPA_DEV_STATE_FREE;
    }
  c->remote_managed = vpa_policy_truthy (vpa_inventory_model_prop (pl->inv, c->rep, "remote_managed"));
  vpa_place_class_set_tier (pl, c);
  class_describe (pl, c);
}

/* One pass over the inventory. Devices are sorted by address, so the
 * classes come out ordered by their lowest member. */
void
vpa_place_build_classes (Place *pl)
{
  const VpaHost *host = pl->host;
  g_autoptr (GHashTable) index = g_hash_table_new (class_hash, class_equal);
  g_autoptr (GHashTable) pf_ids = g_hash_table_new (vpa_addr_hash, vpa_addr_equal);
  g_autofree gint *class_of = g_new (gint, MAX (host->devices->len, 1));

  pl->classes = g_ptr_array_new_with_free_func ((GDestroyNotify) place_class_free);
  for (guint i = 0; i < host->devices->len; i++)
    {
      const VpaDevice *dev = vpa_host_device (host, i);
      PlaceClass key = { 0 }, *c;

      class_of[i] = -1;
      if (!vpa_inventory_has (pl->inv, i))
        continue;
      key.dev = dev;
      key.tagset = pl->inv->tagset[i];
      key.numa_node = dev->numa_node < 0 ? VPA_NUMA_NONE : dev->numa_node;
      key.pf_addr = dev->dev_type == VPA_DEV_TYPE_VF && dev->parent_addr != VPA_ADDR_NONE
                      ? dev->parent_addr
                      : dev->addr;
      key.has_netdev = dev->dev_type == VPA_DEV_TYPE_VF && dev->netdev != NULL;
      /* Locality groups tell devices apart by where they sit. */
      key.pcie_port = pl->split_pcie ? vpa_pcie_root_port (host, i) : -1;
      key.pcie_root = pl->split_pcie ? dev->pcie_root : VPA_ADDR_NONE;
      c = g_hash_table_lookup (index, &key);
      if (c == NULL)
        {
          c = g_memdup2 (&key, sizeof key);
          c->rep = i;
          c->pf_class = (gint) pl->classes->len; /* its id until class_finish */
          c->free_devs = g_array_new (FALSE, FALSE, sizeof (guint));
          g_ptr_array_add (pl->classes, c);
          g_hash_table_insert (index, c, c);
        }
      class_of[i] = c->pf_class;
      class_add_device (c, pl->inv, i);
    }
  pl->n_cls = pl->classes->len;
  for (guint k = 0; k < pl->n_cls; k++)
    class_finish (pl, CLASS (pl, k), class_of, pf_ids);
  pl->n_pf_ids = g_hash_table_size (pf_ids);
}

/* ------------------------------------------------------------------ */
/* Which request may use which class                                   */
/* ------------------------------------------------------------------ */

static Elig
place_eligibility (const Place *pl, guint r, const PlaceClass *c, gboolean wants_rm)
{
  const VpaRequest *req = REQ (pl, r);
  gboolean match = FALSE;

  for (guint s = 0; s < req->specs->len && !match; s++)
    match = vpa_inventory_model_spec_match (pl->inv, c->rep, g_ptr_array_index (req->specs, s));
  if (!match)
    return ELIG_NONE;
  if (c->dev->dev_type == VPA_DEV_TYPE_PF && !pl->wants_pf[r])
    return ELIG_NO_PF;
  if (c->remote_managed && !wants_rm)
    return ELIG_NO_RM;
  if (!vpa_policy_allows (req->policy, pl->host, pl->guest, c->tier))
    return ELIG_POLICY;
  return ELIG_OK;
}

void
vpa_place_build_eligibility (Place *pl)
{
  g_autoptr (GHashTable) groups = g_hash_table_new (g_str_hash, g_str_equal);

  pl->elig = g_new0 (guint8, MAX ((gsize) pl->n_req * pl->n_cls, 1));
  pl->wants_pf = g_new0 (gboolean, MAX (pl->n_req, 1));
  pl->group = g_new (gint, MAX (pl->n_req, 1));
  for (guint r = 0; r < pl->n_req; r++)
    {
      const VpaRequest *req = REQ (pl, r);
      gboolean wants_rm = vpa_request_wants_remote_managed (req);
      gpointer id;

      pl->wants_pf[r] = vpa_request_wants_pf (req);
      for (guint c = 0; c < pl->n_cls; c++)
        {
          pl->elig[(gsize) r * pl->n_cls + c] = place_eligibility (pl, r, CLASS (pl, c),
                                                                   wants_rm);
        }
      pl->group[r] = -1;
      if (req->pf_group == NULL)
        continue;
      if (!g_hash_table_lookup_extended (groups, req->pf_group, NULL, &id))
        {
          id = GUINT_TO_POINTER (g_hash_table_size (groups));
          g_hash_table_insert (groups, req->pf_group, id);
        }
      pl->group[r] = (gint) GPOINTER_TO_UINT (id);
    }
  pl->n_groups = g_hash_table_size (groups);
}

/* Lexicographic weights: the tier sum decides, then (socket and remote
 * tiers) the NUMA distance to the guest, then the whole-PF penalty, then
 * the class rank (lowest address). Each weight exceeds the largest
 * possible total of everything below it. */
#define PENALTY_MAX 2

/* Within the socket and remote tiers the nearest device first, by the
 * host's distance matrix (Kubernetes' prefer-closest-numa-nodes). */
void
vpa_place_class_set_tier (const Place *pl, PlaceClass *c)
{
  c->tier = vpa_policy_tier (pl->host, pl->guest, c->numa_node);
  c->dist = 0;
  if (c->tier != VPA_TIER_SOCKET && c->tier != VPA_TIER_REMOTE)
    return;
  c->dist = VPA_PLACE_DIST_MAX;
  for (guint i = 0; i < pl->guest->n_nodes; i++)
    {
      guint d = vpa_host_distance (pl->host, pl->guest->nodes[i], c->numa_node);
      if (d != G_MAXUINT)
        c->dist = MIN (c->dist, d > 10 ? MIN (d - 10, VPA_PLACE_DIST_MAX) : 0);
    }
}

void
vpa_place_weights (Place *pl)
{
  gint64 flow = 0, free_total = 0;

  for (guint r = 0; r < pl->n_req; r++)
    flow += REQ (pl, r)->count;
  for (guint c = 0; c < pl->n_cls; c++)
    free_total += CLASS (pl, c)->free_devs->len;
  flow = MAX (MIN (flow, free_total), 1);
  pl->w_rank = (flow * (gint64) pl->n_cls < ((gint64) 1 << 30)) ? 1 : 0;
  pl->w_pen = pl->w_rank * flow * (gint64) pl->n_cls + 1;
  pl->w_dist = flow * (PENALTY_MAX * pl->w_pen + pl->w_rank * (gint64) pl->n_cls) + 1;
  pl->w_tier = flow * (VPA_PLACE_DIST_MAX * pl->w_dist + PENALTY_MAX * pl->w_pen +
                       pl->w_rank * (gint64) pl->n_cls) +
               1;
}

/* Whole PFs are worth keeping: a PF some request may take, or whose VFs
 * some request may take, costs more to break or to take. */
void
vpa_place_build_demand (Place *pl)
{
  pl->pf_wanted = g_new0 (gboolean, MAX (pl->n_cls, 1));
  pl->vf_wanted = g_new0 (gboolean, MAX (pl->n_cls, 1));
  for (guint c = 0; c < pl->n_cls; c++)
    {
      const PlaceClass *k = CLASS (pl, c);
      for (guint r = 0; r < pl->n_req; r++)
        {
          if (ELIG (pl, r, c) != ELIG_OK)
            continue;
          if (k->dev->dev_type == VPA_DEV_TYPE_PF)
            {
              pl->pf_wanted[c] = TRUE;
            }
          else if (k->pf_class >= 0)
            {
              pl->vf_wanted[k->pf_class] = TRUE;
            }
        }
    }
}
