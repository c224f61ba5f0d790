/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-netpool.h"

#include <string.h>

#include "vpa-xml.h"

VpaHostdevNet *
vpa_hostdev_net_new (const char *name, gboolean active, GStrv pf_devs)
{
  VpaHostdevNet *net = g_new0 (VpaHostdevNet, 1);

  net->name = g_strdup (name);
  net->active = active;
  net->pf_devs = g_strdupv (pf_devs);
  return net;
}

void
vpa_hostdev_net_free (VpaHostdevNet *net)
{
  if (net == NULL)
    return;
  g_free (net->name);
  g_strfreev (net->pf_devs);
  g_free (net);
}

VpaHostdevNet *
vpa_hostdev_net_parse (const char *xml, gsize len, gboolean active, const char *what,
                       GError **error)
{
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (xml, len, what, error);
  g_autoptr (GPtrArray) pfs = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *name = NULL;
  g_autofree char *mode = NULL;
  xmlNode *root, *forward;

  if (doc == NULL)
    return NULL;
  root = xmlDocGetRootElement (doc);
  if (root == NULL || !vpa_xml_is (root, "network", NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: not a <network> document", what);
      return NULL;
    }
  forward = vpa_xml_child (root, "forward", NULL);
  mode = forward != NULL ? vpa_xml_prop (forward, "mode") : NULL;
  if (g_strcmp0 (mode, "hostdev") != 0)
    return NULL;
  for (xmlNode *n = forward->children; n != NULL; n = n->next)
    if (n->type == XML_ELEMENT_NODE && vpa_xml_is (n, "pf", NULL))
      {
        char *dev = vpa_xml_prop (n, "dev");
        if (dev != NULL && *dev != '\0')
          g_ptr_array_add (pfs, dev);
        else
          g_free (dev);
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
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <network> without a <name>", what);
      return NULL;
    }
  return vpa_hostdev_net_new (name, active, (GStrv) pfs->pdata);
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
