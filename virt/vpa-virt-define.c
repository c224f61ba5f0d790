/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * define under the per-connection lock with a verify step: the placed
 * domain's devices and dedicated CPUs checked against every other
 * domain's before and after the define, which is rolled back on a
 * conflict (docs/libvirt.md). attach (vpa-virt-attach.c) takes the same
 * steps.
 */
#include "vpa-virt.h"
#include "vpa-virt-private.h"

#include <libvirt/virterror.h>
#include <string.h>

#include "vpa-xml.h"

/* A domain XML libvirt refuses is bad input; anything else is the
 * environment (daemon gone, permission denied, ...). */
VpaErrorCode
vpa_virt_define_error_code (void)
{
  switch (vpa_virt_last_code ())
    {
    case VIR_ERR_XML_ERROR:
    case VIR_ERR_XML_DETAIL:
    case VIR_ERR_CONFIG_UNSUPPORTED:
    case VIR_ERR_INVALID_ARG:
    case VIR_ERR_OPERATION_INVALID:
    case VIR_ERR_NO_DOMAIN:
      return VPA_ERROR_INVALID;
    default:
      return VPA_ERROR_ENVIRONMENT;
    }
}

/* Appends addr to addrs; an address used twice is bad input. */
static gboolean
add_addr (GArray *addrs, VpaAddr addr, const char *what, GError **error)
{
  for (guint i = 0; i < addrs->len; i++)
    {
      if (g_array_index (addrs, VpaAddr, i) == addr)
        {
          char buf[VPA_ADDR_BUFLEN];
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: device '%s' is used twice", what, vpa_addr_format (addr, buf));
          return FALSE;
        }
    }
  g_array_append_val (addrs, addr);
  return TRUE;
}

/* Appends the PCI addresses of node: a <domain>'s devices (whole_domain)
 * or one device element; an address used twice is bad input. */
gboolean
vpa_virt_define_collect_addrs (xmlNode *node, gboolean whole_domain, const char *what, GArray *addrs,
                               GError **error)
{
  g_autoptr (GArray) devs = NULL;

  if (!whole_domain)
    {
      gboolean is_pci;
      VpaAddr addr;

      if (!vpa_xml_hostdev_address (node, what, &is_pci, &addr, error))
        return FALSE;
      return !is_pci || addr == VPA_ADDR_NONE || add_addr (addrs, addr, what, error);
    }
  if ((devs = vpa_xml_domain_pci_devices (node, what, VPA_XML_PCI_STRICT, error)) == NULL)
    return FALSE;
  for (guint i = 0; i < devs->len; i++)
    {
      VpaAddr addr = g_array_index (devs, VpaXmlPciDevice, i).addr;
      if (addr != VPA_ADDR_NONE && !add_addr (addrs, addr, what, error))
        return FALSE;
    }
  return TRUE;
}

/* The name and PCI addresses of a placed domain XML. */
static gboolean
placed_domain_parse (const char *xml, const char *uri, char **name, GArray *addrs,
                     GArray *cpus, GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: placed domain", uri);
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (&(VpaDoc){ xml, strlen (xml), what }, error);
  xmlNode *root, *name_node;

  if (doc == NULL)
    return FALSE;
  root = xmlDocGetRootElement (doc);
  name_node = vpa_xml_is (root, "domain", NULL) ? vpa_xml_child (root, "name", NULL) : NULL;
  *name = name_node != NULL ? vpa_xml_name (name_node) : NULL;
  if (*name == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <domain><name> missing", what);
      return FALSE;
    }
  g_free (what);
  what = g_strdup_printf ("%s: domain '%s'", uri, *name);
  if (cpus != NULL)
    {
      g_autoptr (VpaClaim) numa = NULL;
      if (!vpa_numa_claim (root, *name, FALSE, what, &numa, error))
        return FALSE;
      if (numa != NULL)
        g_array_append_vals (cpus, numa->numa->dedicated->data, numa->numa->dedicated->len);
    }
  return vpa_virt_define_collect_addrs (root, TRUE, what, addrs, error);
}

/* TRUE if a and b cannot be held by two domains: the same function, or
 * a VF and its PF (needs the inventory to know the relation). */
static gboolean
addrs_conflict (const VpaHost *inventory, VpaAddr a, VpaAddr b)
{
  gint ia, ib;

  if (vpa_addr_same (a, b))
    return TRUE;
  if (inventory == NULL)
    return FALSE;
  ia = vpa_host_lookup (inventory, a);
  ib = vpa_host_lookup (inventory, b);
  if (ia >= 0 && vpa_addr_same (vpa_host_device (inventory, ia)->parent_addr, b))
    return TRUE;
  return ib >= 0 && vpa_addr_same (vpa_host_device (inventory, ib)->parent_addr, a);
}

/* The first claim of another domain that conflicts with addrs, or NULL. */
static const VpaClaim *
find_conflict (GPtrArray *claims, const char *name, GArray *addrs,
               const VpaHost *inventory, VpaAddr *mine)
{
  for (guint i = 0; i < claims->len; i++)
    {
      const VpaClaim *claim = g_ptr_array_index (claims, i);

      /* A redefined domain's own old claims do not count against it. */
      if (strcmp (claim->domain, name) == 0)
        continue;
      for (guint j = 0; j < addrs->len; j++)
        {
          if (addrs_conflict (inventory, g_array_index (addrs, VpaAddr, j), claim->addr))
            {
              *mine = g_array_index (addrs, VpaAddr, j);
              return claim;
            }
        }
    }
  return NULL;
}

/* The dedicated CPUs of the defined domain another domain also pins:
 * two defines never get the same dedicated CPU. */
static gboolean
check_cpus_unclaimed (GPtrArray *claims, const char *uri, const char *name, GArray *cpus,
                      const char *when, GError **error)
{
  for (guint i = 0; cpus != NULL && i < claims->len; i++)
    {
      const VpaClaim *claim = g_ptr_array_index (claims, i);

      if (claim->numa == NULL || strcmp (claim->domain, name) == 0)
        continue;
      for (guint k = 0; k < cpus->len; k++)
        {
          if (vpa_numa_use_holds (claim->numa, g_array_index (cpus, guint, k)))
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "%s: dedicated CPU %u for domain '%s' is pinned by domain '%s'%s", uri, g_array_index (cpus, guint, k), name, claim->domain, when);
              return FALSE;
            }
        }
    }
  return TRUE;
}

gboolean
vpa_virt_define_check_unclaimed (GPtrArray *claims, const char *uri, const VpaVirtTakes *takes,
                                 const char *when, GError **error)
{
  VpaAddr mine = VPA_ADDR_NONE;
  const VpaClaim *claim = find_conflict (claims, takes->name, takes->addrs, takes->inventory, &mine);
  char buf[VPA_ADDR_BUFLEN], other[VPA_ADDR_BUFLEN];

  if (claim == NULL)
    return check_cpus_unclaimed (claims, uri, takes->name, takes->cpus, when, error);
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
               "%s: device '%s' for domain '%s' conflicts with device '%s' held by domain '%s'%s",
               uri, vpa_addr_format (mine, buf), takes->name, vpa_addr_format (claim->addr, other),
               claim->domain, when);
  return FALSE;
}

/* Takes the define lock of conn; a NULL *uri becomes the connection's
 * canonical URI (owned by *canonical). */
VpaVirtLock *
vpa_virt_define_lock (virConnectPtr conn, const char **uri, char **canonical, GError **error)
{
  vpa_virt_init ();
  *canonical = vpa_virt_conn_uri (conn, *uri);
  if (*uri == NULL)
    *uri = *canonical;
  return vpa_virt_lock_acquire (conn, *uri, VPA_VIRT_LOCK_TIMEOUT_MS, error);
}

/* Under the lock: loads the claims into *claims, runs place on them and
 * returns its XML; error if place returned NULL without setting one. */
char *
vpa_virt_define_run_place (virConnectPtr conn, VpaVirtPlaceFunc place, gpointer user_data,
                           GPtrArray **claims, const char *uri, GError **error)
{
  GError *place_error = NULL;
  char *xml;

  if ((*claims = vpa_virt_load_claims (conn, error)) == NULL)
    return NULL;
  xml = place (*claims, user_data, &place_error);

  if (xml != NULL)
    {
      g_clear_error (&place_error);
      /* cppcheck-suppress returnDanglingLifetime ; xml is the callback's, not &place_error */
      return xml;
    }
  if (place_error == NULL)
    {
      g_set_error (&place_error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                   "%s: placement produced no XML", uri);
    }
  g_propagate_error (error, place_error);
  return NULL;
}

#define VPA_VIRT_BYPASS_NOTE " (defined meanwhile without the define lock)"

/* After the change, with *claims reloaded: a define that bypassed the
 * lock may have taken one of takes->addrs. */
gboolean
vpa_virt_define_recheck_unclaimed (virConnectPtr conn, const char *uri, const VpaVirtTakes *takes,
                                   GPtrArray **claims, GError **error)
{
  g_clear_pointer (claims, g_ptr_array_unref);
  *claims = vpa_virt_load_claims (conn, error);
  return *claims != NULL &&
         vpa_virt_define_check_unclaimed (*claims, uri, takes, VPA_VIRT_BYPASS_NOTE, error);
}

gboolean
vpa_virt_define_previous (virConnectPtr conn, const char *uri, const char *name, PrevDef *prev,
                          GError **error)
{
  g_autoptr (virDomain) dom = virDomainLookupByName (conn, name);
  int persistent;

  if (dom == NULL)
    {
      if (vpa_virt_last_code () == VIR_ERR_NO_DOMAIN)
        return TRUE;
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot look up domain '%s'", uri, name);
      return FALSE;
    }
  persistent = virDomainIsPersistent (dom);
  if (persistent == 1)
    prev->xml = virDomainGetXMLDesc (dom, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
  if (persistent < 0 || (persistent == 1 && prev->xml == NULL))
    {
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot read domain '%s'", uri, name);
      return FALSE;
    }
  prev->persistent = persistent == 1;
  return TRUE;
}

void
vpa_virt_define_append_message (GError *error, const char *suffix)
{
  char *old;

  if (error == NULL)
    return;
  old = error->message;
  error->message = g_strconcat (old, suffix, NULL);
  g_free (old);
}

/* Restores what was there before our define: the replaced persistent
 * definition, or nothing (a new domain, or one that was transient). */
void
vpa_virt_define_rollback (virConnectPtr conn, virDomainPtr dom, const PrevDef *prev, GError *error)
{
  g_autofree char *msg = NULL;
  gboolean ok;

  if (prev->persistent)
    {
      g_autoptr (virDomain) restored = virDomainDefineXML (conn, prev->xml);
      ok = restored != NULL;
    }
  else
    {
      /* A new definition has no NVRAM file yet; keep any that exists. */
      ok = virDomainUndefineFlags (dom, VIR_DOMAIN_UNDEFINE_KEEP_NVRAM) == 0;
      if (!ok && (vpa_virt_last_code () == VIR_ERR_INVALID_ARG ||
                  vpa_virt_last_code () == VIR_ERR_NO_SUPPORT))
        ok = virDomainUndefine (dom) == 0;
    }
  if (ok)
    {
      vpa_virt_define_append_message (error, prev->persistent ? "; the previous definition was restored"
                                                              : "; the new definition was undefined");
      return;
    }
  msg = vpa_virt_last_message ();
  vpa_virt_define_append_message (error, "; rolling back failed: ");
  vpa_virt_define_append_message (error, msg);
}

gboolean
vpa_virt_define_placed_full (virConnectPtr conn, const char *uri, const VpaHost *inventory,
                             VpaVirtPlaceFunc place, gpointer user_data, char **out_name,
                             GError **error)
{
  g_autofree char *canonical = NULL;
  g_autoptr (VpaVirtLock) lock = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (GArray) addrs = g_array_new (FALSE, FALSE, sizeof (VpaAddr));
  g_autoptr (GArray) cpus = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (virDomain) dom = NULL;
  g_autofree char *xml = NULL;
  g_autofree char *name = NULL;
  g_autofree char *prev_xml = NULL;
  PrevDef prev = { 0 };
  VpaVirtTakes takes;
  gboolean ok;

  g_return_val_if_fail (conn != NULL, FALSE);
  g_return_val_if_fail (place != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((lock = vpa_virt_define_lock (conn, &uri, &canonical, error)) == NULL)
    return FALSE;
  if ((xml = vpa_virt_define_run_place (conn, place, user_data, &claims, uri, error)) == NULL)
    return FALSE;
  if (!placed_domain_parse (xml, uri, &name, addrs, cpus, error))
    return FALSE;
  takes = (VpaVirtTakes){ name, addrs, cpus, inventory };
  if (!vpa_virt_define_check_unclaimed (claims, uri, &takes, "", error))
    return FALSE;
  ok = vpa_virt_define_previous (conn, uri, name, &prev, error);
  prev_xml = prev.xml;
  if (!ok)
    return FALSE;

  dom = virDomainDefineXML (conn, xml);
  if (dom == NULL)
    {
      vpa_virt_set_error (error, vpa_virt_define_error_code (), "%s: cannot define domain '%s'", uri,
                          name);
      return FALSE;
    }

  if (!vpa_virt_define_recheck_unclaimed (conn, uri, &takes, &claims, error))
    {
      vpa_virt_define_rollback (conn, dom, &prev, error != NULL ? *error : NULL);
      return FALSE;
    }
  if (out_name != NULL)
    *out_name = g_steal_pointer (&name);
  return TRUE;
}

gboolean
vpa_virt_define_placed (virConnectPtr conn, const char *uri, VpaVirtPlaceFunc place,
                        gpointer user_data, char **out_name, GError **error)
{
  return vpa_virt_define_placed_full (conn, uri, NULL, place, user_data, out_name, error);
}
