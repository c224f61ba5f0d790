/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * attach: one new port of a domain placed by the rules of place while
 * the domain's own devices stay held, and the element to hot-plug
 * (vpa-pipeline.h).
 */
#include "vpa-pipeline.h"
#include "vpa-pipeline-private.h"

#include <string.h>

#include "vpa-locality-judge.h"
#include "vpa-place.h"
#include "vpa-requests.h"
#include "vpa-pipeline-topology.h"

/* The port as place would record it: a VF for an <interface
 * type='hostdev'> is vnic-type direct. */
static void
attach_record (VpaAttachRecord *record, const VpaPortRequest *port, const VpaRequest *r,
               const VpaDevice *dev)
{
  record->device = g_strdup (port->device);
  record->physnet = g_strdup (port->physnet);
  record->vnic_type = g_strdup (port->want_pf ? "direct-physical" : "direct");
  record->trusted = port->trusted;
  record->locality_group = g_strdup (port->locality_group);
  record->has_policy = port->has_policy;
  record->policy = port->policy;
  record->addr = dev->addr;
  record->numa_node = dev->numa_node;
  record->placed_policy = r->policy;
  record->placed_source = r->policy_source;
}

/* The port joins a locality group with placed members: the devices its
 * group rules out (policy/vpa-locality-judge.h) are held. */
static void
hold_farther (VpaInventory *inv, const VpaDomain *dom, const VpaRequest *r)
{
  g_autoptr (GArray) out = vpa_locality_judge_excluded (inv, dom, r);

  /* Held after the choice: holding a PF also blocks its VFs. */
  for (guint k = 0; k < out->len; k++)
    vpa_inventory_hold (inv, g_array_index (out, guint, k), "(farther than its locality group)");
}

char *
vpa_pipeline_attach_request (VpaHost *host, const VpaPlaceOptions *opts, VpaDomain *dom,
                             const VpaPortRequest *want, const char *mac, VpaAttachRecord *record,
                             GError **error)
{
  GPtrArray *claims = opts->claims;
  const VpaConfig *config = opts->config;
  const char *alias = want->device;
  g_autoptr (VpaHost) owned = host;
  g_autoptr (GPtrArray) requests = NULL;
  g_autoptr (GPtrArray) mine = g_ptr_array_new ();
  g_autoptr (VpaInventory) inv = NULL;
  g_autoptr (VpaPlacement) placement = NULL;
  g_autoptr (VpaBind) bind = NULL;
  VpaPortRequest *port;
  const VpaAssignment *a;
  const VpaDevice *dev;
  VpaGuestNodes guest;
  gint guest_bus = -1;

  g_return_val_if_fail (host != NULL && dom != NULL && alias != NULL && record != NULL, NULL);

  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      if (g_strcmp0 (hd->alias, alias) == 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "attach: domain '%s' already has a device with alias '%s'", dom->name,
                       alias);
          return NULL;
        }
    }
  if (!g_str_has_prefix (alias, "ua-"))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "attach: --port '%s': a libvirt user alias must start with 'ua-'", alias);
      return NULL;
    }
  if (!owned->sealed && !vpa_host_seal (owned, error))
    return NULL;
  if ((bind = vpa_bind_nodes (dom, owned, error)) == NULL)
    return NULL;

  if (want->locality_group != NULL && vpa_domain_model_locality_group (dom, want->locality_group) == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "attach: --locality-group '%s': domain '%s' has no <vpa:locality-group name='%s'>",
                   want->locality_group, dom->name, want->locality_group);
      return NULL;
    }

  port = g_new0 (VpaPortRequest, 1);
  port->device = g_strdup (alias);
  port->physnet = g_strdup (want->physnet);
  port->want_pf = want->want_pf;
  port->trusted = want->trusted;
  port->has_policy = want->has_policy;
  port->policy = want->has_policy ? want->policy : VPA_POLICY_LEGACY;
  port->locality_group = g_strdup (want->locality_group);
  g_ptr_array_add (dom->ports, port);

  requests = vpa_requests_from_domain (dom, config, error);
  if (requests == NULL)
    return NULL;
  g_ptr_array_add (mine, g_ptr_array_index (requests, requests->len - 1));

  /* The domain's own devices stay held: only the new port moves. */
  inv = vpa_inventory_new_for (g_steal_pointer (&owned), config,
                               vpa_claim_filter (claims, NULL, FALSE), dom, error);
  if (inv == NULL)
    return NULL;
  if (!vpa_pipeline_config_admits_devices (config, mine, error))
    return NULL;
  vpa_pipeline_guest_from_domain (dom, bind, &guest);
  /* The guest's nodes are its binding (<numatune>, for a placed
   * placement="auto" guest the one its <vpa:placed-cell>s record): the
   * port is placed under its policy relative to them, and the binding
   * stays as it is. */
  if (((VpaRequest *) g_ptr_array_index (mine, 0))->locality_group != NULL)
    hold_farther (inv, dom, g_ptr_array_index (mine, 0));
  placement = vpa_place (inv, mine, &guest, error);
  if (placement == NULL)
    {
      /* attach never binds: a placement="auto" guest nothing placed
       * yet gets its nodes from place/define. */
      if (dom->numa_auto && guest.n_nodes == 0)
        {
          g_prefix_error (error, "attach: domain '%s' (placement=\"auto\", no binding recorded: place or define it with virt-pci-affinity first): ", dom->name);
        }
      else
        {
          g_prefix_error (error, "attach: domain '%s': ", dom->name);
        }
      return NULL;
    }
  a = g_ptr_array_index (placement->assignments, 0);
  dev = vpa_host_device (inv->host, g_array_index (a->devices, guint, 0));
  if (!vpa_pipeline_attach_guest_address (dom, bind, alias, dev, &guest_bus, error))
    return NULL;
  {
    const VpaRequest *r = g_ptr_array_index (mine, 0);

    attach_record (record, port, r, dev);
    if (r->locality_group != NULL)
      {
        record->locality = (gint) vpa_locality_judge_reached (inv, dom, r,
                                                              g_array_index (a->devices, guint, 0));
      }
  }
  return vpa_attach_interface (dev->addr, alias, mac, guest_bus);
}
