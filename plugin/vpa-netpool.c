/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-netpool.h"

#include <string.h>

#include "vpa-xml.h"

VpaHostdevNet *
vpa_netpool_hostdev_net_new (const char *name, gboolean active, GStrv pf_devs)
{
  VpaHostdevNet *net = g_new0 (VpaHostdevNet, 1);

  net->name = g_strdup (name);
  net->active = active;
  net->pf_devs = g_strdupv (pf_devs);
  return net;
}

void
vpa_netpool_hostdev_net_free (VpaHostdevNet *net)
{
  if (net == NULL)
    return;
  g_free (net->name);
  g_strfreev (net->pf_devs);
  g_free (net);
}

VpaHostdevNet *
vpa_netpool_hostdev_net_parse (const VpaDoc *doc, gboolean active, GError **error)
{
  g_autoptr (xmlDoc) parsed = vpa_xml_parse_memory (doc, error);
  g_autoptr (GPtrArray) pfs = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *name = NULL;
  g_autofree char *mode = NULL;
  xmlNode *root, *forward;

  if (parsed == NULL)
    return NULL;
  root = xmlDocGetRootElement (parsed);
  if (root == NULL || !vpa_xml_is (root, "network", NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: not a <network> document", doc->what);
      return NULL;
    }
  forward = vpa_xml_child (root, "forward", NULL);
  if (forward == NULL)
    return NULL;
  mode = vpa_xml_prop (forward, "mode");
  if (g_strcmp0 (mode, "hostdev") != 0)
    return NULL;
  for (xmlNode *n = forward->children; n != NULL; n = n->next)
    {
      if (n->type == XML_ELEMENT_NODE && vpa_xml_is (n, "pf", NULL))
        {
          char *dev = vpa_xml_prop (n, "dev");
          if (dev != NULL && *dev != '\0')
            {
              g_ptr_array_add (pfs, dev);
            }
          else
            {
              g_free (dev);
            }
        }
    }
  if (pfs->len == 0)
    return NULL;
  g_ptr_array_add (pfs, NULL);
  {
    xmlNode *nn = vpa_xml_child (root, "name", NULL);
    name = nn != NULL ? vpa_xml_text (nn) : NULL;
  }
  if (name == NULL || *name == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <network> without a <name>", doc->what);
      return NULL;
    }
  return vpa_netpool_hostdev_net_new (name, active, (GStrv) pfs->pdata);
}

static gint
pf_by_netdev (const VpaInventory *inv, const char *dev)
{
  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      const VpaDevice *d = vpa_host_device (inv->host, i);
      if (d->dev_type == VPA_DEV_TYPE_PF && g_strcmp0 (d->netdev, dev) == 0)
        return (gint) i;
    }
  return -1;
}

GArray *
vpa_netpool_rows (const VpaInventory *inv, GPtrArray *nets)
{
  GArray *rows = g_array_new (FALSE, TRUE, sizeof (VpaNetPoolRow));

  for (guint n = 0; nets != NULL && n < nets->len; n++)
    {
      const VpaHostdevNet *net = g_ptr_array_index (nets, n);

      for (guint p = 0; net->pf_devs[p] != NULL; p++)
        {
          VpaNetPoolRow row = { net, net->pf_devs[p], pf_by_netdev (inv, net->pf_devs[p]), 0, 0 };
          const VpaDevice *pf = row.pf_index >= 0 ? vpa_host_device (inv->host, (guint) row.pf_index)
                                                  : NULL;

          for (guint v = 0; pf != NULL && pf->vf_indices != NULL && v < pf->vf_indices->len; v++)
            {
              guint vf = g_array_index (pf->vf_indices, guint, v);
              if (!vpa_inventory_has (inv, vf))
                continue;
              row.vfs++;
              if (inv->state[vf] == VPA_DEV_STATE_FREE)
                row.free++;
            }
          g_array_append_val (rows, row);
        }
    }
  return rows;
}

const VpaHostdevNet *
vpa_netpool_network_of (const VpaInventory *inv, GPtrArray *nets, guint i)
{
  const VpaDevice *dev = vpa_host_device (inv->host, i);
  const VpaDevice *pf;

  if (dev->parent_index < 0 || nets == NULL)
    return NULL;
  pf = vpa_host_device (inv->host, (guint) dev->parent_index);
  for (guint n = 0; pf->netdev != NULL && n < nets->len; n++)
    {
      const VpaHostdevNet *net = g_ptr_array_index (nets, n);
      if (net->active && g_strv_contains ((const char *const *) net->pf_devs, pf->netdev))
        return net;
    }
  return NULL;
}

const VpaHostdevNet *
vpa_netpool_find (GPtrArray *nets, const char *name)
{
  for (guint n = 0; nets != NULL && n < nets->len; n++)
    {
      if (strcmp (((VpaHostdevNet *) nets->pdata[n])->name, name) == 0)
        return nets->pdata[n];
    }
  return NULL;
}

const VpaPortRequest *
vpa_netpool_port (const VpaDomain *dom, const char *device)
{
  for (guint i = 0; i < dom->ports->len; i++)
    {
      const VpaPortRequest *port = g_ptr_array_index (dom->ports, i);
      if (strcmp (port->device, device) == 0)
        return port;
    }
  return NULL;
}

gboolean
vpa_netpool_restrict (GPtrArray *requests, const VpaDomain *dom, GPtrArray *nets,
                      GError **error)
{
  for (guint i = 0; i < requests->len; i++)
    {
      VpaRequest *r = g_ptr_array_index (requests, i);
      const VpaPortRequest *port;
      g_autoptr (GPtrArray) specs = NULL;

      if (r->kind != VPA_REQUEST_PORT || (port = vpa_netpool_port (dom, r->device)) == NULL ||
          port->network == NULL)
        continue;
      specs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_spec_free);
      for (guint s = 0; s < r->specs->len; s++)
        {
          for (guint n = 0; nets != NULL && n < nets->len; n++)
            {
              const VpaHostdevNet *net = g_ptr_array_index (nets, n);

              for (guint p = 0; net->active && net->pf_devs[p] != NULL; p++)
                {
                  const VpaSpec *from = g_ptr_array_index (r->specs, s);
                  VpaSpec *spec = vpa_spec_new ();

                  for (guint k = 0; k < from->pairs->len; k++)
                    {
                      const VpaSpecPair *pair = g_ptr_array_index (from->pairs, k);
                      vpa_spec_set (spec, pair->key, pair->value);
                    }
                  vpa_spec_set (spec, VPA_PROP_PF_NETDEV, net->pf_devs[p]);
                  g_ptr_array_add (specs, spec);
                }
            }
        }
      if (specs->len == 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                       "%s: its <interface type='network'> names network '%s', and this host has no active libvirt hostdev network (<forward mode='hostdev'> with a <pf dev>) to choose from", r->label, port->network);
          return FALSE;
        }
      g_ptr_array_unref (r->specs);
      r->specs = g_steal_pointer (&specs);
    }
  return TRUE;
}
