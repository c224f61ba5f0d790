/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hostdev networks of a libvirt connection (vpa-netpool.h).
 */
#include <stdlib.h>
#include <string.h>

#include <libvirt/virterror.h>

#include "vpa-virt.h"
#include "vpa-netpool.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC (virNetwork, virNetworkFree)

static char *
last_message (void)
{
  virErrorPtr err = virGetLastError ();
  char *msg = g_strdup (err != NULL && err->message != NULL ? err->message
                                                            : "unknown libvirt error");
  return g_strdelimit (msg, "\r\n", ' ');
}

static gint
net_cmp (gconstpointer a, gconstpointer b)
{
  const VpaHostdevNet *x = *(VpaHostdevNet *const *) a, *y = *(VpaHostdevNet *const *) b;
  return strcmp (x->name, y->name);
}

GPtrArray *
vpa_virt_load_hostdev_networks (virConnectPtr conn, const char *uri, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_netpool_hostdev_net_free);
  virNetworkPtr *nets = NULL;
  int n = virConnectListAllNetworks (conn, &nets, 0);

  if (n < 0)
    {
      virErrorPtr err = virGetLastError ();
      g_autofree char *msg = NULL;

      /* A connection without a network driver has no hostdev networks. */
      if (err != NULL && err->code == VIR_ERR_NO_SUPPORT)
        return g_steal_pointer (&out);
      msg = last_message ();
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "cannot list the networks of '%s': %s",
                   uri, msg);
      return NULL;
    }
  for (int i = 0; i < n; i++)
    {
      g_autoptr (virNetwork) net = nets[i];
      g_autofree char *xml = NULL;
      g_autofree char *what = NULL;
      g_autoptr (GError) local = NULL;
      VpaHostdevNet *hn;

      if (out == NULL)
        continue; /* frees the remaining ones after an error */
      what = g_strdup_printf ("network '%s' on '%s'", virNetworkGetName (net), uri);
      if ((xml = virNetworkGetXMLDesc (net, 0)) == NULL)
        {
          g_autofree char *msg = last_message ();
          g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "cannot read %s: %s", what, msg);
          g_clear_pointer (&out, g_ptr_array_unref);
          continue;
        }
      hn = vpa_netpool_hostdev_net_parse (&(VpaDoc){ xml, strlen (xml), what }, virNetworkIsActive (net) == 1, &local);
      if (local != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          g_clear_pointer (&out, g_ptr_array_unref);
          continue;
        }
      if (hn != NULL)
        g_ptr_array_add (out, hn);
    }
  free (nets);
  if (out != NULL)
    g_ptr_array_sort (out, net_cmp);
  return out != NULL ? g_steal_pointer (&out) : NULL;
}
