/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet filter's locality check (vpa-fleet.h): a host passes only if
 * every required locality group could be placed there, judged from the
 * free pools split by host bridge and root port. Like the rest of the
 * filter it counts free devices and does not plan the placement. Each
 * group is first checked on its own, for the devices its members' NUMA
 * policies allow; then all groups together with the other requests: a
 * choice of one domain per group such that every request is met from
 * the free pools at once (a flow from requests to pools), so two groups
 * cannot both pass on the one switch that holds enough for only one.
 */
#include "vpa-fleet-filter.h"
#include "vpa-flow.h"
#include "vpa-pcie.h"

#include <string.h>

static gboolean
nodes_have (const gint *nodes, guint n, gint node)
{
  for (guint i = 0; i < n; i++)
    {
      if (nodes[i] == node)
        return TRUE;
    }
  return FALSE;
}

static gint
node_socket (const VpaFleetHost *host, gint node)
{
  for (guint i = 0; i < host->cells->len; i++)
    {
      if (g_array_index (host->cells, VpaFleetCell, i).node == node)
        return g_array_index (host->cells, VpaFleetCell, i).socket;
    }
  return VPA_SOCKET_NONE;
}

/* The devices a policy may ever take for this guest. */
static gboolean
policy_allows (const VpaFleetHost *host, const VpaRequest *req, const VpaPool *pool,
               gboolean numa_guest, const gint *nodes, guint n_nodes)
{
  gint socket;

  if (!numa_guest || n_nodes == 0 || req->policy == VPA_POLICY_PREFERRED)
    return TRUE;
  if (nodes_have (nodes, n_nodes, pool->numa_node))
    return TRUE;
  if (req->policy == VPA_POLICY_LEGACY)
    return pool->numa_node == VPA_NUMA_NONE;
  if (req->policy != VPA_POLICY_SOCKET || pool->numa_node == VPA_NUMA_NONE)
    return FALSE;
  socket = node_socket (host, pool->numa_node);
  for (guint i = 0; socket != VPA_SOCKET_NONE && i < n_nodes; i++)
    {
      if (node_socket (host, nodes[i]) == socket)
        return TRUE;
    }
  return FALSE;
}

static gboolean
wants_pf (const VpaRequest *req)
{
  for (guint i = 0; i < req->specs->len; i++)
    {
      gboolean present = FALSE;
      const char *v = vpa_spec_get (g_ptr_array_index (req->specs, i), "dev_type", &present);
      if (present && g_strcmp0 (v, "type-PF") == 0)
        return TRUE;
    }
  return FALSE;
}

/* The pool's domain at level, as a string; NULL when it has none. */
static char *
domain_of (const VpaPool *pool, VpaLocality level)
{
  switch (level)
    {
    case VPA_LOCALITY_SWITCH:
      return pool->pcie_port != VPA_ADDR_NONE ? vpa_addr_to_string (pool->pcie_port) : NULL;
    case VPA_LOCALITY_ROOT_COMPLEX:
      return pool->pcie_root != VPA_ADDR_NONE ? vpa_pcie_root_name (pool->pcie_root) : NULL;
    case VPA_LOCALITY_NUMA_NODE:
      return pool->numa_node >= 0 ? g_strdup_printf ("%d", pool->numa_node) : NULL;
    case VPA_LOCALITY_SOCKET:
      return pool->socket != VPA_SOCKET_NONE ? g_strdup_printf ("%d", pool->socket) : NULL;
    case VPA_LOCALITY_SYSTEM:
    case VPA_LOCALITY_LAST:
    default:
      return g_strdup ("");
    }
}

typedef struct {
  const VpaFleetHost *host;
  GPtrArray *requests;
  gboolean numa_guest;
  const gint *nodes;
  guint n_nodes;
} Ctx;

static gboolean
member_may (const Ctx *ctx, const VpaRequest *req, const VpaPool *pool)
{
  return pool->free > 0 && vpa_fleet_filter_request_match (pool, req) &&
         (pool->dev_type != VPA_DEV_TYPE_PF || wants_pf (req)) &&
         policy_allows (ctx->host, req, pool, ctx->numa_guest, ctx->nodes, ctx->n_nodes);
}

/* Whether the domain's pools hold every member, each and together. */
static gboolean
domain_holds (const Ctx *ctx, GPtrArray *members, VpaLocality level, const char *domain)
{
  guint need = 0, have = 0;

  for (guint p = 0; p < ctx->host->pools->len; p++)
    {
      const VpaPool *pool = g_ptr_array_index (ctx->host->pools, p);
      g_autofree char *d = domain_of (pool, level);
      gboolean any = FALSE;

      for (guint m = 0; m < members->len && !any; m++)
        any = member_may (ctx, g_ptr_array_index (members, m), pool);
      if (any && g_strcmp0 (d, domain) == 0)
        have += pool->free;
    }
  for (guint m = 0; m < members->len; m++)
    {
      const VpaRequest *req = g_ptr_array_index (members, m);
      guint mine = 0;

      need += req->count;
      for (guint p = 0; p < ctx->host->pools->len; p++)
        {
          const VpaPool *pool = g_ptr_array_index (ctx->host->pools, p);
          g_autofree char *d = domain_of (pool, level);
          if (member_may (ctx, req, pool) && g_strcmp0 (d, domain) == 0)
            mine += pool->free;
        }
      if (mine < req->count)
        return FALSE;
    }
  return have >= need;
}

static char *
group_unmet (const Ctx *ctx, const char *name)
{
  g_autoptr (GPtrArray) members = g_ptr_array_new ();
  g_autoptr (GString) who = g_string_new (NULL);
  VpaLocality level = VPA_LOCALITY_SWITCH;

  for (guint r = 0; r < ctx->requests->len; r++)
    {
      const VpaRequest *req = g_ptr_array_index (ctx->requests, r);
      if (g_strcmp0 (req->locality_group, name) != 0)
        continue;
      g_ptr_array_add (members, (gpointer) req);
      level = req->locality_level;
      g_string_append_printf (who, "%s%s", who->len > 0 ? ", " : "", req->label);
    }
  for (guint p = 0; p < ctx->host->pools->len; p++)
    {
      g_autofree char *d = domain_of (g_ptr_array_index (ctx->host->pools, p), level);
      if (d != NULL && domain_holds (ctx, members, level, d))
        return NULL;
    }
  return g_strdup_printf ("locality group '%s' (level %s, policy required): no %s has free "
                          "devices for all of %s",
                          name, vpa_locality_to_string (level), vpa_locality_to_string (level),
                          who->str);
}

/* One required group in the joint check: its members, its level, and
 * the domains that hold it alone (candidates). */
typedef struct {
  const char *name;
  VpaLocality level;
  GPtrArray *domains;     /* char*, owned */
  GPtrArray *pool_domain; /* char* per pool at the group's level, owned */
} JointGroup;

static void
joint_group_free (JointGroup *g)
{
  g_ptr_array_unref (g->domains);
  g_ptr_array_unref (g->pool_domain);
  g_free (g);
}

/* Assignments of domains to groups tried at the most; past it the host
 * is given the benefit of the doubt (placement on the host decides). */
#define JOINT_MAX_TRIES 4096

typedef struct {
  const Ctx *ctx;
  GPtrArray *groups; /* JointGroup* */
  gint *group_of;    /* per request: index in groups, or -1 */
  guint *choice;     /* per group: index in its domains, or G_MAXUINT (open) */
  guint tries;
} Joint;

/* Whether every request can be met at once from the free pools, each
 * member of a chosen group inside its domain (an open group's members
 * anywhere their policies allow: a relaxation that prunes). */
static gboolean
joint_flow (Joint *j)
{
  GPtrArray *pools = j->ctx->host->pools;
  GPtrArray *reqs = j->ctx->requests;
  guint n_r = reqs->len;
  VpaFlow f;
  gint64 need = 0, got;

  vpa_flow_init (&f, 2 + n_r + pools->len);
  for (guint r = 0; r < n_r; r++)
    {
      const VpaRequest *req = g_ptr_array_index (reqs, r);
      const JointGroup *g = j->group_of[r] >= 0 ? g_ptr_array_index (j->groups, j->group_of[r]) : NULL;
      guint pick = g != NULL ? j->choice[j->group_of[r]] : G_MAXUINT;

      vpa_flow_add_edge (&f, 0, 2 + r, req->count, 0);
      need += req->count;
      for (guint p = 0; p < pools->len; p++)
        {
          if (!member_may (j->ctx, req, g_ptr_array_index (pools, p)))
            continue;
          if (pick != G_MAXUINT && g_strcmp0 (g_ptr_array_index (g->pool_domain, p),
                                              g_ptr_array_index (g->domains, pick)) != 0)
            continue;
          vpa_flow_add_edge (&f, 2 + r, 2 + n_r + p, VPA_FLOW_INF, 0);
        }
    }
  for (guint p = 0; p < pools->len; p++)
    vpa_flow_add_edge (&f, 2 + n_r + p, 1, ((const VpaPool *) g_ptr_array_index (pools, p))->free, 0);
  got = vpa_flow_run (&f, 0, 1, need);
  vpa_flow_clear (&f);
  return got == need;
}

/* 1: a choice for groups g.. works; 0: none does; -1: too many tried. */
static gint
joint_search (Joint *j, guint g)
{
  const JointGroup *group;

  if (j->tries++ >= JOINT_MAX_TRIES)
    return -1;
  if (!joint_flow (j))
    return 0;
  if (g == j->groups->len)
    return 1;
  group = g_ptr_array_index (j->groups, g);
  for (guint d = 0; d < group->domains->len; d++)
    {
      gint r;
      j->choice[g] = d;
      if ((r = joint_search (j, g + 1)) != 0)
        return r;
    }
  j->choice[g] = G_MAXUINT;
  return 0;
}

static JointGroup *
joint_group_new (const Ctx *ctx, const char *name, VpaLocality level)
{
  JointGroup *g = g_new0 (JointGroup, 1);
  g_autoptr (GPtrArray) members = g_ptr_array_new ();

  g->name = name;
  g->level = level;
  g->domains = g_ptr_array_new_with_free_func (g_free);
  g->pool_domain = g_ptr_array_new_with_free_func (g_free);
  for (guint r = 0; r < ctx->requests->len; r++)
    {
      const VpaRequest *req = g_ptr_array_index (ctx->requests, r);
      if (g_strcmp0 (req->locality_group, name) == 0)
        g_ptr_array_add (members, (gpointer) req);
    }
  for (guint p = 0; p < ctx->host->pools->len; p++)
    {
      char *d = domain_of (g_ptr_array_index (ctx->host->pools, p), level);
      g_ptr_array_add (g->pool_domain, d);
      if (d != NULL && !g_ptr_array_find_with_equal_func (g->domains, d, g_str_equal, NULL) &&
          domain_holds (ctx, members, level, d))
        g_ptr_array_add (g->domains, g_strdup (d));
    }
  return g;
}

static char *
joint_unmet (const Ctx *ctx, GPtrArray *names)
{
  g_autoptr (GPtrArray) groups = g_ptr_array_new_with_free_func ((GDestroyNotify) joint_group_free);
  g_autofree gint *group_of = g_new0 (gint, MAX (ctx->requests->len, 1));
  g_autofree guint *choice = g_new (guint, MAX (names->len, 1));
  g_autoptr (GString) list = g_string_new (NULL);
  Joint j = { ctx, groups, group_of, choice, 0 };

  for (guint r = 0; r < ctx->requests->len; r++)
    {
      const VpaRequest *req = g_ptr_array_index (ctx->requests, r);
      guint i = 0;
      group_of[r] = req->locality_required &&
                        g_ptr_array_find_with_equal_func (names, req->locality_group, g_str_equal, &i)
                      ? (gint) i
                      : -1;
    }
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      VpaLocality level = VPA_LOCALITY_SWITCH;
      for (guint r = 0; r < ctx->requests->len; r++)
        {
          if (group_of[r] == (gint) i)
            level = ((const VpaRequest *) g_ptr_array_index (ctx->requests, r))->locality_level;
        }
      g_ptr_array_add (groups, joint_group_new (ctx, name, level));
      choice[i] = G_MAXUINT;
      g_string_append_printf (list, "%s'%s' (level %s)", i == 0 ? "" : ", ", name,
                              vpa_locality_to_string (level));
    }
  if (joint_search (&j, 0) != 0)
    return NULL;
  return g_strdup_printf ("locality groups %s (policy required): each has a domain with free "
                          "devices for it alone, but no choice of domains has free devices for "
                          "all of them and the other requests together",
                          list->str);
}

char *
vpa_fleet_locality_unmet (const VpaFleetHost *host, GPtrArray *requests, gboolean numa_guest,
                          const gint *nodes, guint n_nodes)
{
  Ctx ctx = { host, requests, numa_guest, nodes, n_nodes };
  g_autoptr (GPtrArray) names = g_ptr_array_new ();

  if (host->pools == NULL)
    return NULL;
  for (guint r = 0; r < requests->len; r++)
    {
      const VpaRequest *req = g_ptr_array_index (requests, r);
      char *why;

      if (req->locality_group == NULL || !req->locality_required ||
          g_ptr_array_find_with_equal_func (names, req->locality_group, g_str_equal, NULL))
        continue;
      g_ptr_array_add (names, req->locality_group);
      if ((why = group_unmet (&ctx, req->locality_group)) != NULL)
        return why;
    }
  return names->len > 0 ? joint_unmet (&ctx, names) : NULL;
}
