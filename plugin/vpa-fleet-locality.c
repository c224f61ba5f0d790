/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet filter's locality check (vpa-fleet.h): a host passes only if
 * every required locality group could be placed there, judged from the
 * free pools split by host bridge and root port. Like the rest of the
 * filter it counts free devices and does not plan the placement: each
 * group is checked on its own, for the devices its members' NUMA
 * policies allow.
 */
#include "vpa-fleet.h"

#include <string.h>

static gboolean
nodes_have (const gint *nodes, guint n, gint node)
{
  for (guint i = 0; i < n; i++)
    if (nodes[i] == node)
      return TRUE;
  return FALSE;
}

static gint
node_socket (const VpaFleetHost *host, gint node)
{
  for (guint i = 0; i < host->cells->len; i++)
    if (g_array_index (host->cells, VpaFleetCell, i).node == node)
      return g_array_index (host->cells, VpaFleetCell, i).socket;
  return VPA_SOCKET_NONE;
}

/* The devices a policy may ever take for this guest. */
static gboolean
policy_allows (const VpaFleetHost *host, const VpaRequest *req, const VpaFleetPool *pool,
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
    if (node_socket (host, nodes[i]) == socket)
      return TRUE;
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
domain_of (const VpaFleetPool *pool, VpaLocality level)
{
  switch (level)
    {
    case VPA_LOCALITY_SWITCH:
      return g_strdup (pool->pcie_port);
    case VPA_LOCALITY_ROOT_COMPLEX:
      return g_strdup (pool->pcie_root);
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
member_may (const Ctx *ctx, const VpaRequest *req, const VpaFleetPool *pool)
{
  return pool->free > 0 && vpa_fleet_request_match (pool, req) &&
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
      const VpaFleetPool *pool = g_ptr_array_index (ctx->host->pools, p);
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
          const VpaFleetPool *pool = g_ptr_array_index (ctx->host->pools, p);
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

char *
vpa_fleet_locality_unmet (const VpaFleetHost *host, GPtrArray *requests, gboolean numa_guest,
                          const gint *nodes, guint n_nodes)
{
  Ctx ctx = { host, requests, numa_guest, nodes, n_nodes };
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  if (host->pools == NULL)
    return NULL;
  for (guint r = 0; r < requests->len; r++)
    {
      const VpaRequest *req = g_ptr_array_index (requests, r);
      char *why;

      if (req->locality_group == NULL || !req->locality_required ||
          !g_hash_table_add (seen, req->locality_group))
        continue;
      if ((why = group_unmet (&ctx, req->locality_group)) != NULL)
        return why;
    }
  return NULL;
}
