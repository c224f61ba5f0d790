/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-virt-request.h"

#include <string.h>
#include <libvirt/virterror.h>

#include "vpa-constants.h"

/* "<what>: <libvirt's message>" on one line. */
static void
request_set_error (GError **error, VpaErrorCode code, const char *what)
{
  virErrorPtr err = virGetLastError ();
  g_autofree char *msg =
    g_strdup (err != NULL && err->message != NULL ? err->message : "unknown libvirt error");

  g_set_error (error, VPA_ERROR, code, "%s: %s", what, g_strdelimit (msg, "\r\n", ' '));
}

/* The persistent definition of domain (*out_dom its handle). */
static char *
config_xml (virConnectPtr conn, const char *uri, const char *domain, virDomainPtr *out_dom,
            GError **error)
{
  g_autofree char *what = NULL;
  char *xml;

  *out_dom = virDomainLookupByName (conn, domain);
  if (*out_dom == NULL)
    {
      what = g_strdup_printf ("%s: no domain '%s'", uri, domain);
      request_set_error (error, VPA_ERROR_INVALID, what);
      return NULL;
    }
  xml = virDomainGetXMLDesc (*out_dom, VIR_DOMAIN_XML_INACTIVE);
  if (xml == NULL)
    {
      what = g_strdup_printf ("%s: cannot read the definition of domain '%s'", uri, domain);
      request_set_error (error, VPA_ERROR_ENVIRONMENT, what);
    }
  return xml;
}

gboolean
vpa_virt_request_edit (virConnectPtr conn, const char *uri, const char *domain,
                       const VpaRequestEdit *edit, VpaRequestEditResult *out, GError **error)
{
  g_autoptr (virDomain) dom = NULL;
  g_autofree char *xml = NULL;
  g_autofree char *what = NULL;

  g_return_val_if_fail (conn != NULL && domain != NULL && edit != NULL, FALSE);
  if (uri == NULL)
    uri = "(default)";
  if ((xml = config_xml (conn, uri, domain, &dom, error)) == NULL)
    return FALSE;
  what = g_strdup_printf ("domain '%s'", domain);
  if (!vpa_request_edit_apply (&(VpaDoc){ xml, strlen (xml), what }, edit, out, error))
    return FALSE;
  if (edit->op == VPA_REQUEST_EDIT_PLACE)
    return TRUE;
  if (virDomainSetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, out->affinity, "vpa", VPA_XMLNS,
                            VIR_DOMAIN_AFFECT_CONFIG) < 0)
    {
      g_free (what);
      what = g_strdup_printf ("%s: cannot write the requests of domain '%s'", uri, domain);
      request_set_error (error, VPA_ERROR_ENVIRONMENT, what);
      vpa_request_edit_result_clear (out);
      return FALSE;
    }
  return TRUE;
}

char *
vpa_virt_request_show (virConnectPtr conn, const char *uri, const char *domain, GError **error)
{
  g_autoptr (virDomain) dom = NULL;
  g_autofree char *xml = NULL;
  g_autofree char *what = g_strdup_printf ("domain '%s'", domain);
  g_autoptr (GError) local = NULL;
  char *affinity;

  g_return_val_if_fail (conn != NULL && domain != NULL, NULL);
  if ((xml = config_xml (conn, uri != NULL ? uri : "(default)", domain, &dom, error)) == NULL)
    return NULL;
  affinity = vpa_request_edit_show (&(VpaDoc){ xml, strlen (xml), what }, &local);
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  return affinity != NULL ? affinity : g_strdup ("");
}
