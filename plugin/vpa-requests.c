/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Requests from a domain (docs/nova.md, "Alias requests", "Port requests"
 * and "Policy precedence").
 */
#include "vpa-requests.h"

#include "vpa-policy.h"

static VpaSpec *
spec_copy (const VpaSpec *spec)
{
  VpaSpec *copy = vpa_spec_new ();

  for (guint i = 0; i < spec->pairs->len; i++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (spec->pairs, i);
      vpa_spec_set (copy, pair->key, pair->value);
    }
  return copy;
}

static VpaRequest *
request_from_alias (const VpaDomain *dom, const VpaConfig *config,
                    const VpaAliasRequest *ar, GError **error)
{
  const VpaAlias *alias = vpa_config_alias (config, ar->name);
  g_autoptr (VpaRequest) req = NULL;

  if (alias == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: alias '%s' in <vpa:flavor aliases> is not defined in %s",
                   dom->source, ar->name, config->path);
      return NULL;
    }
  req = vpa_request_new (VPA_REQUEST_ALIAS, ar->name, ar->count);
  for (guint i = 0; i < alias->specs->len; i++)
    g_ptr_array_add (req->specs, spec_copy (g_ptr_array_index (alias->specs, i)));
  if (!vpa_policy_resolve (NULL, dom->has_flavor_policy ? &dom->flavor_policy : NULL,
                           dom->has_image_policy ? &dom->image_policy : NULL,
                           alias->has_policy ? &alias->policy : NULL, &req->policy,
                           &req->policy_source, error))
    return NULL;
  return g_steal_pointer (&req);
}

static void
set_locality (VpaRequest *req, const VpaDomain *dom, const char *group)
{
  const VpaLocalityGroup *g = vpa_domain_model_locality_group (dom, group);

  if (g == NULL)
    return;
  req->locality_group = g_strdup (g->name);
  req->locality_level = g->level;
  req->locality_required = g->required;
}

/* <vpa:device>: one device of an alias, with the alias's policy
 * precedence (flavor = image > alias > legacy). */
static VpaRequest *
request_from_device (const VpaDomain *dom, const VpaConfig *config,
                     const VpaDeviceRequest *dr, GError **error)
{
  const VpaAlias *alias = vpa_config_alias (config, dr->alias);
  g_autoptr (VpaRequest) req = NULL;

  if (alias == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "domain '%s': <vpa:device name='%s'> alias='%s': no such alias in %s",
                   dom->name ? dom->name : "(unnamed)", dr->name, dr->alias, config->path);
      return NULL;
    }
  req = vpa_request_new (VPA_REQUEST_DEVICE, dr->name, 1);
  for (guint i = 0; i < alias->specs->len; i++)
    g_ptr_array_add (req->specs, spec_copy (g_ptr_array_index (alias->specs, i)));
  set_locality (req, dom, dr->locality_group);
  if (!vpa_policy_resolve (NULL, dom->has_flavor_policy ? &dom->flavor_policy : NULL,
                           dom->has_image_policy ? &dom->image_policy : NULL,
                           alias->has_policy ? &alias->policy : NULL, &req->policy,
                           &req->policy_source, error))
    return NULL;
  return g_steal_pointer (&req);
}

/* Nova's create_resource_requests: one spec dict, count 1. */
static VpaRequest *
request_from_port (const VpaDomain *dom, const VpaPortRequest *port, GError **error)
{
  g_autoptr (VpaRequest) req = vpa_request_new (VPA_REQUEST_PORT, port->device, 1);
  VpaSpec *spec = vpa_spec_new ();

  g_ptr_array_add (req->specs, spec);
  vpa_spec_set (spec, "physical_network", port->physnet);
  vpa_spec_set (spec, "remote_managed", "false");
  if (port->want_pf)
    vpa_spec_set (spec, "dev_type", vpa_dev_type_to_string (VPA_DEV_TYPE_PF));
  if (port->trusted >= 0)
    vpa_spec_set (spec, "trusted", port->trusted ? "true" : "false");
  req->pf_group = g_strdup (port->pf_group);
  set_locality (req, dom, port->locality_group);
  if (!vpa_policy_resolve (port->has_policy ? &port->policy : NULL,
                           dom->has_flavor_policy ? &dom->flavor_policy : NULL,
                           dom->has_image_policy ? &dom->image_policy : NULL, NULL,
                           &req->policy, &req->policy_source, error))
    return NULL;
  return g_steal_pointer (&req);
}

GPtrArray *
vpa_requests_from_domain (const VpaDomain *dom, const VpaConfig *config, GError **error)
{
  g_autoptr (GPtrArray) reqs = NULL;

  g_return_val_if_fail (dom != NULL && config != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  reqs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_request_free);
  /* The conflict is an error even without any request (Nova rejects the
   * boot); resolve once up front so the message names the domain. */
  if (dom->has_flavor_policy && dom->has_image_policy &&
      dom->flavor_policy != dom->image_policy)
    {
      VpaPolicy p;
      VpaPolicySource s;
      g_autoptr (GError) local = NULL;

      vpa_policy_resolve (NULL, &dom->flavor_policy, &dom->image_policy, NULL, &p, &s,
                          &local);
      g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: ", dom->source);
      return NULL;
    }
  for (guint i = 0; dom->alias_requests != NULL && i < dom->alias_requests->len; i++)
    {
      VpaRequest *req = request_from_alias (dom, config,
                                            g_ptr_array_index (dom->alias_requests, i),
                                            error);
      if (req == NULL)
        return NULL;
      g_ptr_array_add (reqs, req);
    }
  for (guint i = 0; dom->devices != NULL && i < dom->devices->len; i++)
    {
      VpaRequest *req = request_from_device (dom, config,
                                             g_ptr_array_index (dom->devices, i), error);
      if (req == NULL)
        return NULL;
      g_ptr_array_add (reqs, req);
    }
  for (guint i = 0; dom->ports != NULL && i < dom->ports->len; i++)
    {
      VpaRequest *req = request_from_port (dom, g_ptr_array_index (dom->ports, i), error);
      if (req == NULL)
        return NULL;
      g_ptr_array_add (reqs, req);
    }
  return g_steal_pointer (&reqs);
}
