/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-pipeline.h"
#include "vpa-pipeline-private.h"
#include "vpa-netpool.h"

#include <string.h>

#include "vpa-place.h"
#include "vpa-pipeline-numa.h"
#include "vpa-pipeline-locality.h"
#include "vpa-pipeline-vswitch.h"
#include "vpa-locality-rows.h"
#include "vpa-policy.h"
#include "vpa-guest-bus-rules.h"
#include "vpa-keep.h"
#include "vpa-decide.h"
#include "vpa-requests.h"
#include "vpa-rewrite.h"
#include "vpa-xml.h"
#include "vpa-pipeline-distances.h"
#include "vpa-pipeline-hole64.h"
#include "vpa-pipeline-topology.h"
#include "vpa-reserve-apply.h"

void
vpa_pipeline_guest_from_domain (const VpaDomain *dom, const VpaBind *bind, VpaGuestNodes *guest)
{
  guest->numa_guest = dom->numa_guest;
  guest->nodes = (const gint *) (gpointer) bind->guest_nodes->data;
  guest->n_nodes = bind->guest_nodes->len;
}

char *
vpa_pipeline_format_nodes (const VpaGuestNodes *guest)
{
  GString *s;

  if (!guest->numa_guest)
    return g_strdup ("none (not a NUMA guest)");
  if (guest->n_nodes == 0)
    return g_strdup ("unbound");
  s = g_string_new (NULL);
  for (guint i = 0; i < guest->n_nodes; i++)
    g_string_append_printf (s, "%s%d", i > 0 ? "," : "", guest->nodes[i]);
  return g_string_free (s, FALSE);
}

static void
explain_placement (GString *out, const VpaInventory *inv, const VpaGuestNodes *guest,
                   const VpaPlacement *placement, const VpaDomain *dom, GPtrArray *nets)
{
  g_autofree char *nodes = vpa_pipeline_format_nodes (guest);

  g_string_append_printf (out, "guest host nodes: %s\n", nodes);
  for (guint i = 0; i < placement->assignments->len; i++)
    {
      const VpaAssignment *a = g_ptr_array_index (placement->assignments, i);
      const VpaRequest *r = a->request;

      g_string_append_printf (out, "%s: count %u, policy %s from %s%s%s\n", r->label, r->count,
                              vpa_policy_to_string (r->policy),
                              vpa_policy_source_to_string (r->policy_source),
                              r->pf_group ? ", pf-group " : "", r->pf_group ? r->pf_group : "");
      for (guint j = 0; a->candidates != NULL && j < a->candidates->len; j++)
        {
          const VpaCandidate *c = g_ptr_array_index (a->candidates, j);
          char numa[16], sock[16];

          if (c->numa_node == VPA_NUMA_NONE)
            {
              g_strlcpy (numa, "-", sizeof numa);
            }
          else
            {
              g_snprintf (numa, sizeof numa, "%d", c->numa_node);
            }
          if (c->socket == VPA_SOCKET_NONE)
            {
              g_strlcpy (sock, "-", sizeof sock);
            }
          else
            {
              g_snprintf (sock, sizeof sock, "%d", c->socket);
            }
          g_string_append_printf (out, "  pool %s node %s socket %s free %u: %s\n", c->pool,
                                  numa, sock, c->free, c->verdict);
        }
      for (guint j = 0; a->devices != NULL && j < a->devices->len; j++)
        {
          guint idx = g_array_index (a->devices, guint, j);
          const VpaDevice *d = vpa_host_device (inv->host, idx);
          const VpaPortRequest *port = r->kind == VPA_REQUEST_PORT
                                         ? vpa_netpool_port (dom, r->device)
                                         : NULL;
          const VpaHostdevNet *net = port != NULL && port->network != NULL
                                       ? vpa_netpool_network_of (inv, nets, idx)
                                       : NULL;
          char buf[VPA_ADDR_BUFLEN];

          if (net != NULL)
            {
              g_string_append_printf (out, "  -> network %s (node %d; libvirt picks the VF, "
                                           "counted on %s)\n",
                                      net->name, d->numa_node, vpa_addr_format (d->addr, buf));
            }
          else
            {
              g_string_append_printf (out, "  -> %s (node %d)\n", vpa_addr_format (d->addr, buf),
                                      d->numa_node);
            }
        }
    }
  for (guint i = 0; placement->groups != NULL && i < placement->groups->len; i++)
    {
      const VpaGroupPlacement *g = g_ptr_array_index (placement->groups, i);
      g_autofree char *rows = vpa_locality_rows (inv, g->devices);

      g_string_append_printf (out, "locality group '%s': level %s, policy %s: %s, %s%s%s\n",
                              g->name, vpa_locality_to_string (g->level),
                              g->required ? "required" : "preferred",
                              vpa_locality_to_string (g->reached), g->where,
                              g->why != NULL ? ": " : "", g->why != NULL ? g->why : "");
      g_string_append_printf (out, "  topology rows: %s\n", rows);
    }
}

/* Per inventory device, the hostdev network of nets its PF serves (names
 * borrowed from nets), for vpa_decide(); NULL without nets. */
static const char **
networks_of (const VpaInventory *inv, GPtrArray *nets)
{
  const char **out;

  if (nets == NULL)
    return NULL;
  out = g_new0 (const char *, MAX (inv->host->devices->len, 1));
  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      const VpaHostdevNet *net = vpa_netpool_network_of (inv, nets, i);
      out[i] = net != NULL ? net->name : NULL;
    }
  return out;
}

/* The requests placement works on: without nets, none for network ports. */
static void
drop_network_requests (GPtrArray *requests, const VpaDomain *dom)
{
  for (guint i = requests->len; i > 0; i--)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i - 1);
      const VpaPortRequest *port = r->kind == VPA_REQUEST_PORT
                                     ? vpa_netpool_port (dom, r->device)
                                     : NULL;

      if (port != NULL && port->network != NULL)
        g_ptr_array_remove_index (requests, i - 1);
    }
}

/* Without a device spec nothing is assignable (Nova's empty whitelist):
 * say that rather than "no device matches" for every request. */
gboolean
vpa_pipeline_config_admits_devices (const VpaConfig *config, GPtrArray *requests, GError **error)
{
  if (requests->len == 0 || config->device_specs->len > 0)
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
               "%s: no device is assignable: the configuration has no [device-spec NAME] "
               "group (add one per set of devices to pass through)",
               config->path);
  return FALSE;
}

VpaDomain *
vpa_pipeline_parse (const VpaDoc *doc, GError **error)
{
  g_autoptr (VpaDomain) dom = vpa_domain_parse (doc, error);

  if (dom == NULL || !vpa_guest_bus_rules_check (dom->bus, dom->source, error))
    return NULL;
  return g_steal_pointer (&dom);
}

/* ------------------------------------------------------------------ */
/* Placing again: keep what is still good (policy/vpa-keep.c)          */
/* ------------------------------------------------------------------ */

/* Whether a device element with user alias belongs to a request (a
 * port's or <vpa:device>'s device, a flavor alias's ua-vpa-NAME-N). */
static gboolean
alias_requested (GPtrArray *requests, const char *alias)
{
  if (alias == NULL)
    return FALSE;
  if (g_str_has_prefix (alias, VPA_ALIAS_PREFIX))
    return TRUE;
  for (guint i = 0; i < requests->len; i++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, i);
      if (r->kind != VPA_REQUEST_ALIAS && g_strcmp0 (r->device, alias) == 0)
        return TRUE;
    }
  return FALSE;
}

/* The domain's own devices that no request names (a plain <hostdev>)
 * stay its own: never handed to one of its requests. */
static void
hold_unrequested (VpaInventory *inv, const VpaDomain *dom, GPtrArray *requests)
{
  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      gint idx;

      if (hd->addr == VPA_ADDR_NONE || alias_requested (requests, hd->alias))
        continue;
      idx = vpa_host_lookup (inv->host, hd->addr);
      if (idx >= 0)
        vpa_inventory_hold (inv, (guint) idx, dom->name != NULL ? dom->name : "(this domain)");
    }
}

/* out, our rewrite of buf, may pass the bounds buf was within by what
 * the rewrites added: *grown. */
static const VpaXmlGrowth *
grown_since (const char *buf, gsize len, const char *out, gsize out_len, VpaXmlGrowth *grown)
{
  vpa_xml_growth (buf, len, out, out_len, grown);
  return grown;
}

/* One document being placed: what the caller gave. */
typedef struct {
  const VpaPlaceOptions *opts;
  const char *buf;
  gsize len;
  const char *what;
  VpaPlaceReport *report; /* may be NULL */
} Job;

/* The plan written into the document, step by step: the devices and
 * their guest PCI layout, the whole-guest binding (NULL: none), the
 * 64-bit PCI hole, the guest cells' distances. */
static char *
rewrite_all (const Job *job, const VpaRewriteInput *rw, const VpaNumaBinding *binding,
             GError **error)
{
  g_autofree char *mid = NULL;
  VpaXmlGrowth grown;
  gsize mid_len = 0, out_len = 0;
  char *out;

  if (binding == NULL)
    {
      out = vpa_pipeline_rewrite_placed (rw, &out_len, error);
    }
  else if ((mid = vpa_pipeline_rewrite_placed (rw, &mid_len, error)) == NULL)
    {
      return NULL;
    }
  else
    {
      out = vpa_pipeline_rewrite_binding (rw, mid, mid_len, binding, &out_len, error);
    }
  if (out != NULL)
    {
      out = vpa_pipeline_rewrite_hole64 (rw, out, &out_len,
                                         grown_since (job->buf, job->len, out, out_len, &grown),
                                         error);
    }
  if (out != NULL)
    {
      out = vpa_pipeline_rewrite_distances (rw, out, &out_len,
                                            grown_since (job->buf, job->len, out, out_len, &grown),
                                            error);
    }
  if (out != NULL && job->report != NULL)
    job->report->changed = out_len != job->len || memcmp (out, job->buf, job->len) != 0;
  return out;
}

/* <vpa:numa placement="auto">: the fit chooses the nodes, then the
 * devices and the binding are written. */
static char *
place_numa (const Job *job, const VpaDomain *dom, const VpaInventory *inv, GPtrArray *requests,
            GError **error)
{
  const VpaPlaceOptions *opts = job->opts;
  g_autoptr (VpaNumaResult) res = NULL;
  g_autoptr (GPtrArray) decisions = NULL;
  g_autofree const char **networks = NULL;
  g_autofree guint *ids = NULL;
  g_autofree gint *nodes = NULL;
  g_autoptr (GPtrArray) owner = NULL;
  g_autoptr (GArray) cells = NULL;
  VpaGuestNodes guest;

  res = vpa_pipeline_numa_fit (dom, inv, opts->config, opts->claims, requests, opts->explain,
                               error);
  if (res == NULL)
    return NULL;
  guest.numa_guest = TRUE;
  guest.nodes = (const gint *) (gpointer) res->nodes->data;
  guest.n_nodes = res->nodes->len;
  if (res->fit->placement != NULL && opts->explain != NULL)
    explain_placement (opts->explain, inv, &guest, res->fit->placement, dom, opts->nets);
  networks = networks_of (inv, opts->nets);
  decisions = vpa_decide (inv,
                          res->fit->placement != NULL ? res->fit->placement->assignments : NULL,
                          dom, networks);
  /* The devices, and their guest PCI layout (<vpa:guest-numa>) on the
   * cells' chosen nodes. */
  ids = g_new (guint, MAX (res->fit->bindings->len, 1));
  nodes = g_new (gint, MAX (res->fit->bindings->len, 1));
  for (guint i = 0; i < res->fit->bindings->len; i++)
    {
      ids[i] = g_array_index (res->fit->bindings, VpaCellBinding, i).cell;
      nodes[i] = g_array_index (res->fit->bindings, VpaCellBinding, i).node;
    }
  cells = vpa_pipeline_guest_cells_of (ids, nodes, res->fit->bindings->len, &owner);
  {
    VpaRewriteInput rw = { dom, inv->host, opts->config, job->buf, job->len, job->what,
                           decisions, cells, opts->keep_guest_topology, opts->explain };
    return rewrite_all (job, &rw, &res->binding, error);
  }
}

/* keep_only: something must be placed. */
static char *
must_move (const Job *job, const char *why, GError **error)
{
  if (job->report != NULL)
    job->report->must_move = TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "not kept: %s", why);
  return NULL;
}

/* The placement of the requests not kept, around the kept devices
 * (held in inv); explained when asked, also on failure. */
static GPtrArray *
place_rest (const Job *job, const VpaDomain *dom, VpaInventory *inv, const VpaGuestNodes *guest,
            GPtrArray *requests, GError **error)
{
  GString *explain = job->opts->explain;
  g_autoptr (VpaKeep) st = NULL;
  g_autoptr (GPtrArray) rest = g_ptr_array_new ();
  g_autoptr (VpaPlacement) placement = NULL;
  g_autoptr (VpaPlacement) failed = NULL;
  g_autoptr (GError) local = NULL;

  /* Placing again keeps what is still good; only the rest is placed,
   * around the kept devices. */
  st = vpa_keep_decide (inv, dom, guest, requests);
  for (guint i = 0; job->opts->keep_only && i < requests->len; i++)
    {
      if (!st->keep[i])
        {
          must_move (job, "a request is placed again", error);
          return NULL;
        }
    }
  for (guint i = 0; i < requests->len; i++)
    {
      if (st->keep[i])
        {
          for (guint d = 0; d < st->devices[i]->len; d++)
            {
              vpa_inventory_hold (inv, g_array_index (st->devices[i], guint, d),
                                  dom->name != NULL ? dom->name : "(this domain)");
            }
        }
      else
        {
          g_ptr_array_add (rest, g_ptr_array_index (requests, i));
        }
    }
  if (explain != NULL)
    vpa_keep_explain (explain, inv, requests, st);
  /* A failure is explained too: every request's candidates and their
   * verdicts, no devices. */
  placement = vpa_place_explain (inv, rest, guest, explain != NULL ? &failed : NULL, &local);
  if (explain != NULL && (placement != NULL || failed != NULL))
    {
      explain_placement (explain, inv, guest, placement != NULL ? placement : failed, dom,
                         job->opts->nets);
    }
  if (placement == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  return vpa_keep_merge (requests, st, placement);
}

/* parsed: buf's domain (transfer full), or NULL to parse it here. */
static char *
place_domain (VpaHost *host, VpaDomain *parsed, const Job *job, GError **error)
{
  const VpaPlaceOptions *opts = job->opts;
  g_autoptr (VpaHost) owned = host;
  g_autoptr (VpaDomain) dom = parsed;
  g_autoptr (GPtrArray) requests = NULL;
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (GPtrArray) decisions = NULL;
  g_autofree const char **networks = NULL;
  g_autoptr (GPtrArray) assignments = NULL;
  g_autoptr (GArray) cells = NULL;
  g_autoptr (VpaBind) bind = NULL;
  VpaGuestNodes guest;

  if (!owned->sealed && !vpa_host_seal (owned, error))
    return NULL;
  if (dom == NULL && (dom = vpa_pipeline_parse (&(VpaDoc){ job->buf, job->len, job->what }, error)) == NULL)
    return NULL;
  if ((bind = vpa_bind_nodes (dom, owned, error)) == NULL)
    return NULL;
  requests = vpa_requests_from_domain (dom, opts->config, error);
  if (requests == NULL)
    return NULL;
  if (opts->nets == NULL)
    {
      drop_network_requests (requests, dom);
    }
  else if (!vpa_netpool_restrict (requests, dom, opts->nets, error))
    {
      return NULL;
    }
  inv = vpa_inventory_new_for (g_steal_pointer (&owned), opts->config,
                               vpa_claim_filter (opts->claims, dom->name, FALSE), dom, error);
  if (inv == NULL)
    return NULL;
  hold_unrequested (inv, dom, requests);
  if (!vpa_pipeline_config_admits_devices (opts->config, requests, error))
    return NULL;
  if (dom->numa_auto && opts->keep_only)
    return must_move (job, "placement='auto' fits the guest again", error);
  if (dom->numa_auto)
    return place_numa (job, dom, inv, requests, error);
  vpa_pipeline_guest_from_domain (dom, bind, &guest);
  if ((assignments = place_rest (job, dom, inv, &guest, requests, error)) == NULL)
    return NULL;
  networks = networks_of (inv, opts->nets);
  decisions = vpa_decide (inv, assignments, dom, networks);
  cells = vpa_pipeline_guest_cells (dom, bind);
  {
    VpaRewriteInput rw = { dom, inv->host, opts->config, job->buf, job->len, job->what,
                           decisions, cells, opts->keep_guest_topology, opts->explain };
    return rewrite_all (job, &rw, NULL, error);
  }
}

char *
vpa_pipeline_place (VpaHost *host, const VpaPlaceOptions *opts, const VpaDoc *doc,
                    VpaPlaceReport *report, GError **error)
{
  Job job = { opts, NULL, 0, NULL, report };

  g_return_val_if_fail (host != NULL && opts != NULL && opts->config != NULL && doc != NULL &&
                          doc->buf != NULL,
                        NULL);
  job.buf = doc->buf;
  job.len = doc->len;
  job.what = doc->what;
  return place_domain (host, NULL, &job, error);
}

char *
vpa_pipeline_place_parsed (VpaHost *host, const VpaPlaceOptions *opts, VpaDomain *dom,
                           const char *buf, gsize len, VpaPlaceReport *report, GError **error)
{
  Job job = { opts, buf, len, NULL, report };

  g_return_val_if_fail (host != NULL && opts != NULL && opts->config != NULL && buf != NULL,
                        NULL);
  g_return_val_if_fail (dom != NULL, NULL);
  job.what = dom->source;
  return place_domain (host, dom, &job, error);
}
