/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * attach: one device hot-plugged into a domain, its records added to
 * the domain's <vpa:affinity>, under the define lock with the define's
 * verify step (vpa-virt-define.c; docs/libvirt.md).
 */
#include "vpa-virt.h"
#include "vpa-virt-private.h"

#include <libvirt/virterror.h>
#include <string.h>

#include "vpa-xml.h"

/* The one PCI address of a placed device element. */
static gboolean
placed_device_parse (const char *xml, const char *uri, const char *domain, GArray *addrs,
                     GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: device for domain '%s'", uri, domain);
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (&(VpaDoc){ xml, strlen (xml), what }, error);

  if (doc == NULL || !vpa_virt_define_collect_addrs (xmlDocGetRootElement (doc), FALSE, what, addrs, error))
    return FALSE;
  if (addrs->len == 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: not a PCI <hostdev> or <interface type='hostdev'> with a source address",
                   what);
      return FALSE;
    }
  return TRUE;
}

static void
rollback_attach (virDomainPtr dom, const char *xml, guint flags, GError *error)
{
  g_autofree char *msg = NULL;

  if (virDomainDetachDeviceFlags (dom, xml, flags) == 0)
    {
      vpa_virt_define_append_message (error, "; the device was detached again");
      return;
    }
  msg = vpa_virt_last_message ();
  vpa_virt_define_append_message (error, "; detaching it again failed: ");
  vpa_virt_define_append_message (error, msg);
}

/* vpa_virt_define_run_place for an attach: the callback also fills the records. */
typedef struct {
  VpaVirtAttachFunc place;
  gpointer user_data;
  VpaAttachRecord *record;
} AttachPlace;

static char *
attach_place (GPtrArray *claims, gpointer user_data, GError **error)
{
  AttachPlace *ap = user_data;
  return ap->place (claims, ap->user_data, ap->record, error);
}

/* The persistent definition, defined again with the device and its
 * records; prev receives the one it replaces. */
static gboolean
attach_config (virConnectPtr conn, const char *uri, const char *domain, const char *device,
               const VpaAttachRecord *rec, PrevDef *prev, GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: domain '%s'", uri, domain);
  g_autofree char *xml = NULL;
  g_autoptr (virDomain) defined = NULL;

  if (!vpa_virt_define_previous (conn, uri, domain, prev, error))
    return FALSE;
  if (!prev->persistent)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: domain '%s' is transient: it has no persistent definition to attach to", uri, domain);
      return FALSE;
    }
  if ((xml = vpa_attach_domain (&(VpaDoc){ prev->xml, strlen (prev->xml), what }, device, rec, error)) == NULL)
    return FALSE;
  if ((defined = virDomainDefineXML (conn, xml)) == NULL)
    {
      /* The device XML is ours: libvirt refusing it (not running, no
       * hot-plug, no free slot) is the host's state, not bad input. */
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot attach to domain '%s'", uri,
                          domain);
      return FALSE;
    }
  return TRUE;
}

/* The running domain: the device hot-plugged, its records added to the
 * live <vpa:affinity> (the device detached again when that fails). */
static gboolean
attach_live (virDomainPtr dom, const char *uri, const char *domain, const char *device,
             const VpaAttachRecord *rec, GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: domain '%s'", uri, domain);
  g_autofree char *cur = virDomainGetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, VPA_XMLNS,
                                               VIR_DOMAIN_AFFECT_LIVE);
  g_autofree char *affinity = NULL;

  if (cur == NULL && vpa_virt_last_code () != VIR_ERR_NO_DOMAIN_METADATA)
    {
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot read the metadata of domain '%s'",
                          uri, domain);
      return FALSE;
    }
  if ((affinity = vpa_attach_affinity (cur, what, rec, error)) == NULL)
    return FALSE;
  if (virDomainAttachDeviceFlags (dom, device, VIR_DOMAIN_AFFECT_LIVE) < 0)
    {
      /* The device XML is ours: libvirt refusing it (not running, no
       * hot-plug, no free slot) is the host's state, not bad input. */
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot attach to domain '%s'", uri,
                          domain);
      return FALSE;
    }
  if (virDomainSetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, affinity, "vpa", VPA_XMLNS,
                            VIR_DOMAIN_AFFECT_LIVE) < 0)
    {
      vpa_virt_set_error (error, VPA_ERROR_ENVIRONMENT, "%s: cannot record port '%s' in the metadata of domain '%s'", uri, rec->device, domain);
      rollback_attach (dom, device, VIR_DOMAIN_AFFECT_LIVE, error != NULL ? *error : NULL);
      return FALSE;
    }
  return TRUE;
}

/* VIR_DOMAIN_AFFECT_CURRENT as libvirt reads it: the running domain, or
 * the persistent definition of one that is not running. */
static guint
attach_flags (virDomainPtr dom, guint flags)
{
  if ((flags & (VIR_DOMAIN_AFFECT_LIVE | VIR_DOMAIN_AFFECT_CONFIG)) != 0)
    return flags;
  return virDomainIsActive (dom) == 1 ? VIR_DOMAIN_AFFECT_LIVE : VIR_DOMAIN_AFFECT_CONFIG;
}

/* Undoes attach_live and attach_config after a failed verification. */
static void
rollback_attached (virConnectPtr conn, virDomainPtr dom, const char *device, guint flags,
                   const PrevDef *prev, GError *error)
{
  if (flags & VIR_DOMAIN_AFFECT_LIVE)
    rollback_attach (dom, device, VIR_DOMAIN_AFFECT_LIVE, error);
  if (flags & VIR_DOMAIN_AFFECT_CONFIG)
    vpa_virt_define_rollback (conn, dom, prev, error);
}

static gboolean
attach_both (virConnectPtr conn, virDomainPtr dom, const char *uri, const char *domain,
             const char *device, const VpaAttachRecord *rec, guint flags, PrevDef *prev,
             GError **error)
{
  if ((flags & VIR_DOMAIN_AFFECT_LIVE) && !attach_live (dom, uri, domain, device, rec, error))
    return FALSE;
  if ((flags & VIR_DOMAIN_AFFECT_CONFIG) &&
      !attach_config (conn, uri, domain, device, rec, prev, error))
    {
      if (flags & VIR_DOMAIN_AFFECT_LIVE)
        rollback_attach (dom, device, VIR_DOMAIN_AFFECT_LIVE, error != NULL ? *error : NULL);
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_virt_attach (virConnectPtr conn, const char *uri, const VpaVirtAttachTarget *target,
                 VpaVirtAttachFunc place, gpointer user_data, VpaAddr *out_addr, GError **error)
{
  const char *domain = target->domain;
  guint flags = target->flags;
  g_autofree char *canonical = NULL;
  g_autoptr (VpaVirtLock) lock = NULL;
  g_autoptr (virDomain) dom = NULL;
  g_autoptr (GPtrArray) claims = NULL;
  g_autoptr (GArray) addrs = g_array_new (FALSE, FALSE, sizeof (VpaAddr));
  g_autofree char *xml = NULL;
  g_autofree char *prev_xml = NULL;
  g_auto (VpaAttachRecord) rec = { .numa_node = VPA_NUMA_NONE };
  AttachPlace ap = { place, user_data, &rec };
  VpaVirtTakes takes = { domain, addrs, NULL, target->inventory };
  PrevDef prev = { 0 };
  gboolean ok;

  g_return_val_if_fail (conn != NULL, FALSE);
  g_return_val_if_fail (domain != NULL, FALSE);
  g_return_val_if_fail (place != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((lock = vpa_virt_define_lock (conn, &uri, &canonical, error)) == NULL)
    return FALSE;
  dom = virDomainLookupByName (conn, domain);
  if (dom == NULL)
    {
      vpa_virt_set_error (error, vpa_virt_define_error_code (), "%s: cannot find domain '%s'", uri,
                          domain);
      return FALSE;
    }
  if ((xml = vpa_virt_define_run_place (conn, attach_place, &ap, &claims, uri, error)) == NULL)
    return FALSE;
  if (!placed_device_parse (xml, uri, domain, addrs, error) ||
      !vpa_virt_define_check_unclaimed (claims, uri, &takes, "", error))
    return FALSE;
  flags = attach_flags (dom, flags);
  ok = attach_both (conn, dom, uri, domain, xml, &rec, flags, &prev, error);
  prev_xml = prev.xml;
  if (!ok)
    return FALSE;
  if (!vpa_virt_define_recheck_unclaimed (conn, uri, &takes, &claims, error))
    {
      rollback_attached (conn, dom, xml, flags, &prev, error != NULL ? *error : NULL);
      return FALSE;
    }
  if (out_addr != NULL)
    *out_addr = g_array_index (addrs, VpaAddr, 0);
  return TRUE;
}
