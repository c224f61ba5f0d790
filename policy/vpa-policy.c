/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * NUMA affinity policy (docs/nova.md, "NUMA affinity policies", "The
 * socket policy" and "Policy precedence"). Nova
 * widens a policy's device set in steps (affine, then unknown or
 * same-socket, then anything) and only when the stricter set is too
 * small; here the union of those steps is the allowed set and the steps
 * become tiers, so that placement can prefer the stricter devices while
 * still using the wider set as Nova would.
 */
#include "vpa-policy.h"
#include "vpa-enum.h"

VPA_ENUM_TO_STRING (vpa_tier, VpaTier, VPA_TIER_LAST, "affine", "socket", "unknown", "remote")

gboolean
vpa_policy_resolve (const VpaPolicy *port, const VpaPolicy *flavor,
                    const VpaPolicy *image, const VpaPolicy *alias,
                    VpaPolicy *out, VpaPolicySource *out_source, GError **error)
{
  g_return_val_if_fail (out != NULL && out_source != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* Nova checks the flavor against the image at boot, whatever the
   * ports say (ImagePCINUMAPolicyForbidden). */
  if (flavor != NULL && image != NULL && *flavor != *image)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "image policy '%s' is not permitted to override the flavor policy '%s'",
                   vpa_policy_to_string (*image), vpa_policy_to_string (*flavor));
      return FALSE;
    }

  if (port != NULL)
    {
      *out = *port;
      *out_source = VPA_POLICY_SOURCE_PORT;
    }
  else if (flavor != NULL)
    {
      *out = *flavor;
      *out_source = VPA_POLICY_SOURCE_FLAVOR;
    }
  else if (image != NULL)
    {
      *out = *image;
      *out_source = VPA_POLICY_SOURCE_IMAGE;
    }
  else if (alias != NULL)
    {
      *out = *alias;
      *out_source = VPA_POLICY_SOURCE_ALIAS;
    }
  else
    {
      *out = VPA_POLICY_LEGACY;
      *out_source = VPA_POLICY_SOURCE_DEFAULT;
    }
  return TRUE;
}

static gboolean
guest_has_node (const VpaGuestNodes *guest, gint node)
{
  for (guint i = 0; i < guest->n_nodes; i++)
    {
      if (guest->nodes[i] == node)
        return TRUE;
    }
  return FALSE;
}

/* The socket of dev_numa_node when it also holds a guest node, else
 * VPA_SOCKET_NONE. Guest nodes that name no host cell contribute nothing
 * (Nova's socket filter, step 2). */
static gint
shared_socket (const VpaHost *host, const VpaGuestNodes *guest, gint dev_numa_node)
{
  gint socket = vpa_host_node_socket (host, dev_numa_node);

  if (socket == VPA_SOCKET_NONE)
    return VPA_SOCKET_NONE;
  for (guint i = 0; i < guest->n_nodes; i++)
    {
      if (vpa_host_node_socket (host, guest->nodes[i]) == socket)
        return socket;
    }
  return VPA_SOCKET_NONE;
}

VpaTier
vpa_policy_tier (const VpaHost *host, const VpaGuestNodes *guest, gint dev_numa_node)
{
  g_return_val_if_fail (host != NULL && guest != NULL, VPA_TIER_REMOTE);

  /* A guest without NUMA cells has no nodes to be near or far from. */
  if (!guest->numa_guest)
    return VPA_TIER_AFFINE;
  if (dev_numa_node == VPA_NUMA_NONE)
    return VPA_TIER_UNKNOWN;
  if (guest_has_node (guest, dev_numa_node))
    return VPA_TIER_AFFINE;
  if (shared_socket (host, guest, dev_numa_node) != VPA_SOCKET_NONE)
    return VPA_TIER_SOCKET;
  return VPA_TIER_REMOTE;
}

/* Sets steps[i]; returns the number of steps so far. */
static guint
step (VpaPolicyStep *steps, guint i, guint tiers, guint first)
{
  steps[i].tiers = tiers;
  steps[i].first = first;
  return i + 1;
}

guint
vpa_policy_steps (VpaPolicy policy, const VpaHost *host, const VpaGuestNodes *guest,
                  VpaPolicyStep *steps)
{
  const guint affine = VPA_TIER_BIT (VPA_TIER_AFFINE);
  const guint loose = affine | VPA_TIER_BIT (VPA_TIER_UNKNOWN);

  g_return_val_if_fail (host != NULL && guest != NULL && steps != NULL, 0);
  g_return_val_if_fail (policy < VPA_POLICY_LAST, 0);

  if (!guest->numa_guest || guest->n_nodes == 0)
    return step (steps, 0, VPA_TIER_ALL, 0);
  /* Every policy tries the guest's own nodes first; required stops there. */
  step (steps, 0, affine, 0);
  switch (policy)
    {
    case VPA_POLICY_REQUIRED:
      return 1;
    case VPA_POLICY_SOCKET:
      /* Nova's socket filter gives nothing unless every host cell has a
       * socket id; else the nodes of the guest's sockets, which include
       * its own. Devices without a node never pass it. */
      return step (steps, 1,
                   vpa_host_sockets_known (host) ? affine | VPA_TIER_BIT (VPA_TIER_SOCKET) : 0, 0);
    case VPA_POLICY_LEGACY:
      return step (steps, 1, loose, 0);
    case VPA_POLICY_PREFERRED:
      step (steps, 1, loose, 0);
      return step (steps, 2, VPA_TIER_ALL, loose);
    case VPA_POLICY_LAST:
    default:
      break;
    }
  g_return_val_if_reached (0);
}

gboolean
vpa_policy_allows (VpaPolicy policy, const VpaHost *host,
                   const VpaGuestNodes *guest, VpaTier tier)
{
  VpaPolicyStep steps[VPA_POLICY_STEPS_MAX];
  guint n, tiers = 0;

  g_return_val_if_fail (host != NULL && guest != NULL, FALSE);
  g_return_val_if_fail (policy < VPA_POLICY_LAST && tier < VPA_TIER_LAST, FALSE);

  /* Unbound cells: nothing is affine, so only the policies that can
   * fall back to any node are satisfiable. */
  if (guest->numa_guest && guest->n_nodes == 0)
    return policy == VPA_POLICY_LEGACY || policy == VPA_POLICY_PREFERRED;
  n = vpa_policy_steps (policy, host, guest, steps);
  for (guint i = 0; i < n; i++)
    tiers |= steps[i].tiers;
  return (tiers & VPA_TIER_BIT (tier)) != 0;
}

gboolean
vpa_policy_truthy (const char *value)
{
  static const char *const yes[] = { "1", "t", "true", "on", "y", "yes" };

  for (guint i = 0; value != NULL && i < G_N_ELEMENTS (yes); i++)
    {
      if (g_ascii_strcasecmp (value, yes[i]) == 0)
        return TRUE;
    }
  return FALSE;
}

gboolean
vpa_policy_wants_pf (const char *dev_type)
{
  return g_strcmp0 (dev_type, "type-PF") == 0;
}

static char *
format_nodes (const VpaGuestNodes *guest)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < guest->n_nodes; i++)
    g_string_append_printf (s, "%s%d", i > 0 ? "," : "", guest->nodes[i]);
  return g_string_free (s, FALSE);
}

static char *
socket_refusal (const VpaHost *host, const VpaGuestNodes *guest, gint node)
{
  g_autofree char *nodes = format_nodes (guest);
  gint socket;

  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *c = &g_array_index (host->cells, VpaCell, i);
      if (c->socket == VPA_SOCKET_NONE)
        {
          return g_strdup_printf ("node %d is not the guest's (%s) and host cell %d has no socket id, which disables the socket policy",
                                  node, nodes, c->id);
        }
    }
  if (host->cells->len == 0)
    {
      return g_strdup_printf ("node %d is not the guest's (%s) and the host reports no NUMA cells, which disables the socket policy",
                              node, nodes);
    }
  socket = vpa_host_node_socket (host, node);
  if (socket == VPA_SOCKET_NONE)
    return g_strdup_printf ("node %d is not a host NUMA cell", node);
  return g_strdup_printf ("node %d is on socket %d, which holds none of the guest's nodes (%s)", node, socket, nodes);
}

char *
vpa_policy_refusal (VpaPolicy policy, const VpaHost *host,
                    const VpaGuestNodes *guest, gint dev_numa_node)
{
  VpaTier tier;
  g_autofree char *nodes = NULL;

  g_return_val_if_fail (host != NULL && guest != NULL, NULL);

  tier = vpa_policy_tier (host, guest, dev_numa_node);
  if (vpa_policy_allows (policy, host, guest, tier))
    return NULL;
  if (guest->n_nodes == 0)
    return g_strdup ("the guest's NUMA cells are not bound to host nodes (bind them with <numatune><memory nodeset=...> or <numatune><memnode>)");
  nodes = format_nodes (guest);
  if (tier == VPA_TIER_UNKNOWN)
    return g_strdup_printf ("no NUMA node (the guest is on %s)", nodes);
  if (policy == VPA_POLICY_SOCKET)
    return socket_refusal (host, guest, dev_numa_node);
  return g_strdup_printf ("node %d is not the guest's (%s)", dev_numa_node, nodes);
}
