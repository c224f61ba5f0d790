/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * check: an already placed domain's devices, request units, pinned CPUs
 * and vSwitch ports against the host and the other domains' claims, one
 * result per device (vpa-pipeline.h).
 */
#include "vpa-pipeline.h"
#include "vpa-pipeline-private.h"
#include "vpa-netpool.h"

#include <string.h>

#include "vpa-pipeline-locality.h"
#include "vpa-pipeline-vswitch.h"
#include "vpa-policy.h"
#include "vpa-keep.h"
#include "vpa-requests.h"
#include "vpa-reserve-apply.h"

void
vpa_pipeline_check_result_free (VpaCheckResult *res)
{
  if (res == NULL)
    return;
  g_free (res->device);
  g_free (res->line);
  g_free (res);
}

/* Why device idx is not free: which domain holds it or its relative. */
static char *
holder_of (const VpaInventory *inv, guint idx)
{
  const VpaDevice *dev = vpa_host_device (inv->host, idx);
  char buf[VPA_ADDR_BUFLEN];

  if (inv->state[idx] == VPA_DEV_STATE_HELD)
    return g_strdup_printf ("is held by domain '%s'", inv->held_by[idx]);
  if (dev->parent_index >= 0 && inv->state[dev->parent_index] == VPA_DEV_STATE_RESERVED)
    {
      return g_strdup_printf ("is unusable: its PF %s is reserved",
                              vpa_addr_format (vpa_host_device (inv->host, (guint) dev->parent_index)->addr, buf));
    }
  if (dev->parent_index >= 0 && inv->held_by[dev->parent_index] != NULL)
    {
      return g_strdup_printf ("is unusable: its PF %s is held by domain '%s'",
                              vpa_addr_format (vpa_host_device (inv->host, (guint) dev->parent_index)->addr, buf),
                              inv->held_by[dev->parent_index]);
    }
  for (guint i = 0; dev->vf_indices != NULL && i < dev->vf_indices->len; i++)
    {
      guint vf = g_array_index (dev->vf_indices, guint, i);
      if (inv->state[vf] == VPA_DEV_STATE_RESERVED)
        {
          return g_strdup_printf ("is unusable as a whole PF: its VF %s is reserved",
                                  vpa_addr_format (vpa_host_device (inv->host, vf)->addr, buf));
        }
      if (inv->held_by[vf] != NULL)
        {
          return g_strdup_printf ("is unusable as a whole PF: its VF %s is held by domain '%s'",
                                  vpa_addr_format (vpa_host_device (inv->host, vf)->addr, buf),
                                  inv->held_by[vf]);
        }
    }
  return g_strdup ("is not free");
}

/* One unit of a request: a port, or device N of an alias. Every unit
 * must be filled by the hostdev whose user alias is exactly its key. */
typedef struct {
  const VpaRequest *request;
  guint index; /* device number of an alias (ua-vpa-NAME-N) */
  gboolean filled;
} RequestUnit;

/* Full user alias -> RequestUnit*: a port by its device, alias units as
 * ua-vpa-NAME-N numbered per alias name across requests (the numbering
 * the rewrite writes). Exact keys: aliases 'a' and 'a-b' never meet. */
static GHashTable *
index_request_units (GPtrArray *requests, GPtrArray *order)
{
  GHashTable *units = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) next_index = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < requests->len; i++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i);
      guint n = r->kind == VPA_REQUEST_ALIAS
                  ? GPOINTER_TO_UINT (g_hash_table_lookup (next_index, r->device))
                  : 0;
      guint count = r->kind != VPA_REQUEST_ALIAS ? 1 : r->count;

      for (guint j = 0; j < count; j++)
        {
          RequestUnit *u = g_new0 (RequestUnit, 1);
          char *key = r->kind != VPA_REQUEST_ALIAS
                        ? g_strdup (r->device)
                        : g_strdup_printf (VPA_ALIAS_PREFIX "%s-%u", r->device, n + j);

          u->request = r;
          u->index = n + j;
          if (g_hash_table_contains (units, key))
            {
              g_free (key);
              g_free (u);
              continue;
            }
          g_hash_table_insert (units, key, u);
          g_ptr_array_add (order, u);
        }
      if (r->kind == VPA_REQUEST_ALIAS)
        g_hash_table_insert (next_index, r->device, GUINT_TO_POINTER (n + count));
    }
  return units;
}

/* The line for a unit no hostdev fills. */
static char *
unfilled_line (const RequestUnit *u)
{
  const VpaRequest *r = u->request;

  if (r->kind != VPA_REQUEST_ALIAS)
    return g_strdup_printf ("%s: no device element with this alias", r->label);
  return g_strdup_printf ("%s: no device element has the user alias '" VPA_ALIAS_PREFIX
                          "%s-%u' (the flavor asks for %s:%u)",
                          r->label, r->device, u->index, r->device, r->count);
}

/* Adds one problem to the device's line; the first one sets the status. */
static void
add_problem (VpaCheckResult *res, GString *problems, VpaCheckStatus status, char *text)
{
  if (res->status == VPA_CHECK_OK)
    res->status = status;
  g_string_append_printf (problems, "%s%s", problems->len > 0 ? "; " : "", text);
  g_free (text);
}

static VpaCheckResult *
check_one (const VpaInventory *inv, const VpaGuestNodes *guest, const VpaDomainHostdev *hd,
           const VpaRequest *r)
{
  VpaCheckResult *res = g_new0 (VpaCheckResult, 1);
  g_autofree char *nodes = vpa_pipeline_format_nodes (guest);
  g_autofree char *policy = NULL;
  g_autoptr (GString) problems = g_string_new (NULL);
  char addr[VPA_ADDR_BUFLEN] = "-";
  char numa[16] = "-";
  gint idx;

  res->device = g_strdup (hd->alias != NULL ? hd->alias : vpa_addr_format (hd->addr, addr));
  res->addr = hd->addr;
  res->numa_node = VPA_NUMA_NONE;
  res->status = VPA_CHECK_OK;
  if (r != NULL)
    {
      policy = g_strdup_printf ("policy %s from %s", vpa_policy_to_string (r->policy),
                                vpa_policy_source_to_string (r->policy_source));
    }
  else
    {
      policy = g_strdup ("no request");
    }

  if (hd->addr == VPA_ADDR_NONE)
    {
      res->status = VPA_CHECK_UNPLACED;
      res->line = g_strdup_printf ("%s: no device placed yet (%s)", res->device, policy);
      return res;
    }
  vpa_addr_format (hd->addr, addr);
  idx = vpa_host_lookup (inv->host, hd->addr);
  if (idx < 0)
    {
      res->status = VPA_CHECK_MISSING;
      res->line = g_strdup_printf ("%s: device %s is not on this host (%s)", res->device, addr,
                                   policy);
      return res;
    }
  res->numa_node = vpa_host_device (inv->host, (guint) idx)->numa_node;
  if (res->numa_node != VPA_NUMA_NONE)
    g_snprintf (numa, sizeof numa, "%d", res->numa_node);

  /* Every problem of the device, not only the first. */
  if (inv->state[idx] == VPA_DEV_STATE_RESERVED)
    {
      add_problem (res, problems, VPA_CHECK_RESERVED,
                   vpa_reserve_describe (vpa_reserve_apply_of (inv, (guint) idx)));
    }
  else if (inv->state[idx] != VPA_DEV_STATE_FREE)
    {
      add_problem (res, problems, VPA_CHECK_CLAIMED, holder_of (inv, (guint) idx));
    }
  if (r != NULL && (!vpa_inventory_has (inv, (guint) idx) || !vpa_keep_request_matches (inv, (guint) idx, r)))
    {
      add_problem (res, problems, VPA_CHECK_POLICY, g_strdup_printf ("does not match %s", r->label));
    }
  else if (r != NULL &&
           !vpa_policy_allows (r->policy, inv->host, guest,
                               vpa_policy_tier (inv->host, guest, res->numa_node)))
    {
      add_problem (res, problems, VPA_CHECK_POLICY,
                   g_strdup_printf ("breaks %s: guest host nodes %s", policy, nodes));
    }
  if (res->status != VPA_CHECK_OK)
    {
      res->line = g_strdup_printf ("%s: device %s on NUMA node %s %s", res->device, addr, numa,
                                   problems->str);
      return res;
    }
  res->line = g_strdup_printf ("%s: device %s on NUMA node %s: ok (%s, guest host nodes %s)",
                               res->device, addr, numa, policy, nodes);
  return res;
}

/* The domain (other than self) that pins cpu, dedicated or in any
 * other form (docs/placement.md, "Claims of CPUs and memory"), or NULL. */
static const char *
cpu_holder (GPtrArray *others, guint cpu)
{
  for (guint i = 0; others != NULL && i < others->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (others, i);
      if (c->numa != NULL && vpa_numa_use_holds (c->numa, cpu))
        return c->domain;
    }
  return NULL;
}

static gboolean
cell_has_cpu (const VpaCell *cell, guint cpu)
{
  for (guint i = 0; i < cell->cpus->len; i++)
    {
      if (g_array_index (cell->cpus, guint, i) == cpu)
        return TRUE;
    }
  return FALSE;
}

/* FALSE with res's line when cpu (whose: "dedicated" or "the
 * emulator's dedicated") is not on the cell's node or another domain
 * pins it. */
static gboolean
check_cell_cpu (VpaCheckResult *res, const VpaCell *cell, GPtrArray *others,
                const VpaPlacedCell *pc, guint cpu, const char *whose)
{
  const char *holder = cpu_holder (others, cpu);

  if (!cell_has_cpu (cell, cpu))
    {
      res->status = VPA_CHECK_POLICY;
      res->line = g_strdup_printf ("guest cell %u: CPU %u is not on host node %d", pc->cell, cpu, pc->node);
      return FALSE;
    }
  if (holder != NULL)
    {
      res->status = VPA_CHECK_CLAIMED;
      res->line = g_strdup_printf ("guest cell %u: %s CPU %u on host node %d is pinned by domain '%s'", pc->cell, whose, cpu, pc->node, holder);
      return FALSE;
    }
  return TRUE;
}

/* One line per recorded guest cell: its node is on this host, and (a
 * dedicated guest) each of its CPUs, and the emulator's of
 * emulator-threads="isolate", is on that node and pinned by no other
 * domain (running ones only for a start). */
static VpaCheckResult *
check_cell (const VpaHost *host, GPtrArray *others, const VpaDomain *dom, const VpaPlacedCell *pc)
{
  VpaCheckResult *res = g_new0 (VpaCheckResult, 1);
  const VpaCell *cell = vpa_host_cell (host, pc->node);

  res->device = g_strdup_printf ("cell %u", pc->cell);
  res->addr = VPA_ADDR_NONE;
  res->numa_node = pc->node;
  if (cell == NULL)
    {
      res->status = VPA_CHECK_MISSING;
      res->line = g_strdup_printf ("guest cell %u: host node %d is not on this host", pc->cell, pc->node);
      return res;
    }
  for (guint i = 0; dom->cpu_policy == VPA_CPU_POLICY_DEDICATED && i < pc->cpus->len; i++)
    {
      if (!check_cell_cpu (res, cell, others, pc, g_array_index (pc->cpus, guint, i), "dedicated"))
        return res;
    }
  for (guint i = 0; dom->cpu_policy == VPA_CPU_POLICY_DEDICATED && pc->emulator != NULL &&
                    i < pc->emulator->len;
       i++)
    {
      if (!check_cell_cpu (res, cell, others, pc, g_array_index (pc->emulator, guint, i),
                           "the emulator's dedicated"))
        return res;
    }
  res->status = VPA_CHECK_OK;
  res->line = g_strdup_printf ("guest cell %u: host node %d, %s CPUs %u: ok", pc->cell, pc->node,
                               vpa_cpu_policy_to_string (dom->cpu_policy), pc->cpus->len);
  return res;
}

static void
check_cells (const VpaHost *host, GPtrArray *claims, const VpaDomain *dom, gboolean running_only,
             GPtrArray *results, gboolean *ok)
{
  g_autoptr (GPtrArray) others = vpa_claim_filter (claims, dom->name, running_only);

  for (guint i = 0; i < dom->placed_cells->len; i++)
    {
      VpaCheckResult *res = check_cell (host, others, dom, &g_array_index (dom->placed_cells, VpaPlacedCell, i));
      if (res->status != VPA_CHECK_OK)
        *ok = FALSE;
      g_ptr_array_add (results, res);
    }
}

/* A port on a hostdev network with no VF yet (a defined domain): checked
 * on a free VF of its network's PF, which all share the PF's node. */
static VpaCheckResult *
check_network_port (const VpaInventory *inv, const VpaGuestNodes *guest, const VpaRequest *r,
                    const VpaPortRequest *port, GPtrArray *nets)
{
  const VpaHostdevNet *net = vpa_netpool_find (nets, port->network);
  VpaCheckResult *res;
  char pfaddr[VPA_ADDR_BUFLEN] = "-";

  if (nets == NULL)
    {
      res = g_new0 (VpaCheckResult, 1);
      res->device = g_strdup (r->device);
      res->addr = VPA_ADDR_NONE;
      res->numa_node = VPA_NUMA_NONE;
      res->status = VPA_CHECK_OK;
      res->line = g_strdup_printf ("%s: network '%s': libvirt picks the VF when the domain starts, checked then", r->device, port->network);
      return res;
    }
  for (guint p = 0; net != NULL && net->active && net->pf_devs[p] != NULL; p++)
    {
      for (guint i = 0; i < inv->host->devices->len; i++)
        {
          const VpaDevice *d = vpa_host_device (inv->host, i);
          VpaDomainHostdev hd = { (char *) r->device, d->addr, TRUE };
          g_autofree char *line = NULL;
          char vf[VPA_ADDR_BUFLEN];
          const char *rest;

          if (d->parent_index < 0 || inv->state[i] != VPA_DEV_STATE_FREE ||
              g_strcmp0 (vpa_host_device (inv->host, (guint) d->parent_index)->netdev,
                         net->pf_devs[p]) != 0 ||
              !vpa_inventory_has (inv, i) || !vpa_keep_request_matches (inv, i, r))
            continue;
          res = check_one (inv, guest, &hd, r);
          /* "DEV: device VF on NUMA node N: ..." -> "DEV: network 'NET' (PF's VFs) on ..." */
          vpa_addr_format (d->addr, vf);
          vpa_addr_format (vpa_host_device (inv->host, (guint) d->parent_index)->addr, pfaddr);
          rest = strstr (res->line, vf);
          line = g_strdup_printf ("%s: network '%s' (VFs of PF %s)%s", r->device, net->name, pfaddr,
                                  rest != NULL ? rest + strlen (vf) : "");
          g_free (res->line);
          res->line = g_steal_pointer (&line);
          res->addr = VPA_ADDR_NONE;
          return res;
        }
    }
  res = g_new0 (VpaCheckResult, 1);
  res->device = g_strdup (r->device);
  res->addr = VPA_ADDR_NONE;
  res->numa_node = VPA_NUMA_NONE;
  res->status = net != NULL && net->active ? VPA_CHECK_CLAIMED : VPA_CHECK_MISSING;
  res->line = net != NULL && net->active
                ? g_strdup_printf ("%s: network '%s' has no free VF that matches %s", r->device,
                                   port->network, r->label)
                : g_strdup_printf ("%s: network '%s' is not an active libvirt hostdev network of this host", r->device, port->network);
  return res;
}

GPtrArray *
vpa_pipeline_check (VpaHost *host, GPtrArray *claims, const VpaConfig *config,
                    const VpaDomain *dom, gboolean running_only, gboolean *ok, GError **error)
{
  VpaPlaceOptions opts = { .claims = claims, .config = config };

  return vpa_pipeline_check_nets (host, &opts, dom, running_only, ok, error);
}

GPtrArray *
vpa_pipeline_check_nets (VpaHost *host, const VpaPlaceOptions *opts, const VpaDomain *dom,
                         gboolean running_only, gboolean *ok, GError **error)
{
  GPtrArray *claims = opts->claims;
  const VpaConfig *config = opts->config;
  GPtrArray *nets = opts->nets;
  g_autoptr (VpaHost) owned = host;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GPtrArray) requests = NULL;
  g_autoptr (GPtrArray) results = NULL;
  g_autoptr (GHashTable) units = NULL;
  g_autoptr (GPtrArray) order = NULL;
  g_autoptr (VpaBind) bind = NULL;
  VpaGuestNodes guest;

  g_return_val_if_fail (host != NULL && config != NULL && dom != NULL && ok != NULL, NULL);

  *ok = TRUE;
  if (!owned->sealed && !vpa_host_seal (owned, error))
    return NULL;
  if ((bind = vpa_bind_nodes (dom, owned, error)) == NULL)
    return NULL;
  requests = vpa_requests_from_domain (dom, config, error);
  if (requests == NULL)
    return NULL;
  /* Other domains' claims (running ones only for a start), with PF/VF
   * exclusivity: a VF whose PF another domain holds is not ours either. */
  inv = vpa_inventory_new_for (g_steal_pointer (&owned), config,
                               vpa_claim_filter (claims, dom->name, running_only), dom, error);
  if (inv == NULL)
    return NULL;
  vpa_pipeline_guest_from_domain (dom, bind, &guest);

  results = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_pipeline_check_result_free);
  order = g_ptr_array_new ();
  units = index_request_units (requests, order);
  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      RequestUnit *u = hd->alias != NULL ? g_hash_table_lookup (units, hd->alias) : NULL;
      VpaCheckResult *res = check_one (inv, &guest, hd, u != NULL ? u->request : NULL);

      if (u != NULL)
        u->filled = TRUE;
      if (res->status != VPA_CHECK_OK)
        *ok = FALSE;
      g_ptr_array_add (results, res);
    }
  /* Every unit of every request needs its device: a port whose device
   * element is gone, an alias device never added, are broken requests. */
  for (guint i = 0; i < order->len; i++)
    {
      const RequestUnit *u = g_ptr_array_index (order, i);
      const VpaPortRequest *port = NULL;
      VpaCheckResult *res;

      if (u->filled)
        continue;
      /* A port on a hostdev network has no device element of its own:
       * the VF libvirt takes from the network is checked instead. */
      if (u->request->kind == VPA_REQUEST_PORT)
        port = vpa_netpool_port (dom, u->request->device);
      if (port != NULL && port->network != NULL)
        {
          res = check_network_port (inv, &guest, u->request, port, nets);
          if (res->status != VPA_CHECK_OK)
            *ok = FALSE;
          g_ptr_array_add (results, res);
          continue;
        }
      res = g_new0 (VpaCheckResult, 1);
      res->device = u->request->kind != VPA_REQUEST_ALIAS
                      ? g_strdup (u->request->device)
                      : g_strdup_printf (VPA_ALIAS_PREFIX "%s-%u", u->request->device, u->index);
      res->addr = VPA_ADDR_NONE;
      res->numa_node = VPA_NUMA_NONE;
      res->status = VPA_CHECK_UNPLACED;
      res->line = unfilled_line (u);
      *ok = FALSE;
      g_ptr_array_add (results, res);
    }
  vpa_pipeline_check_locality (inv, dom, requests, results, ok);
  check_cells (inv->host, claims, dom, running_only, results, ok);
  if (!vpa_pipeline_check_vswitch (inv->host, config, dom, bind, results, ok, error))
    return NULL;
  return g_steal_pointer (&results);
}
