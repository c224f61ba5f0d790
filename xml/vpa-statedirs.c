/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-statedirs.h"

#include <string.h>
#include "vpa-xml.h"

gboolean
vpa_statedirs_parse (const char *buf, gsize len, const char *what,
                     const char *exclude, GPtrArray *claims, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autofree char *name = NULL;
  g_autoptr (GArray) devs = NULL;
  xmlNode *root, *dom, *n;
  gboolean running;

  g_return_val_if_fail (claims != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((doc = vpa_xml_parse_memory (buf, len, what, error)) == NULL)
    return FALSE;
  root = xmlDocGetRootElement (doc);
  running = vpa_xml_is (root, "domstatus", NULL);
  dom = running ? vpa_xml_child (root, "domain", NULL) : root;
  if (!vpa_xml_is (dom, "domain", NULL))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: root element <%s> is neither <domain> nor <domstatus><domain>",
                   what, (const char *) root->name);
      return FALSE;
    }
  n = vpa_xml_child (dom, "name", NULL);
  name = n != NULL ? vpa_xml_text (n) : NULL;
  if (name == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: <domain> without <name>", what);
      return FALSE;
    }
  if (g_strcmp0 (name, exclude) == 0)
    return TRUE;
  /* An address that does not parse claims nothing: libvirt would not
   * have written it. */
  devs = vpa_xml_domain_pci_devices (dom, what, VPA_XML_PCI_ACTUAL, NULL);
  for (guint i = 0; i < devs->len; i++)
    {
      VpaAddr addr = g_array_index (devs, VpaXmlPciDevice, i).addr;
      if (addr != VPA_ADDR_NONE)
        g_ptr_array_add (claims, vpa_claim_new (name, addr, running));
    }
  return TRUE;
}

/* Reads one state file into claims; a file that vanished, is too large
 * or does not parse adds nothing. */
static gboolean
load_file (const char *path, const char *exclude, const char *const *needles,
           GPtrArray *claims, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *buf = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &buf, &len, &local))
    {
      if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "%s", local->message);
      return FALSE;
    }
  /* Most domains hold no PCI device: skip them without parsing. */
  if (memmem (buf, len, "hostdev", strlen ("hostdev")) == NULL)
    return TRUE;
  if (needles != NULL)
    {
      gboolean any = FALSE;
      for (guint i = 0; !any && needles[i] != NULL; i++)
        any = memmem (buf, len, needles[i], strlen (needles[i])) != NULL;
      if (!any)
        return TRUE;
    }
  if (len > VPA_XML_MAX_DOCUMENT)
    {
      g_debug ("%s: skipped: %" G_GSIZE_FORMAT " bytes", path, len);
      return TRUE;
    }
  if (!vpa_statedirs_parse (buf, len, path, exclude, claims, &local))
    g_debug ("skipped: %s", local->message);
  return TRUE;
}

static gint
name_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static gboolean
load_dir (const char *dir, const char *exclude, const char *const *needles, GPtrArray *claims,
          GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GDir) d = g_dir_open (dir, 0, &local);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *entry;

  if (d == NULL)
    {
      if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "[claims] state-dirs: cannot read '%s': %s", dir, local->message);
      return FALSE;
    }
  while ((entry = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (entry, ".xml") && entry[0] != '.')
      g_ptr_array_add (names, g_strdup (entry));
  /* Name order keeps the claims (and messages naming them) stable. */
  g_ptr_array_sort (names, name_cmp);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir, g_ptr_array_index (names, i), NULL);
      if (!load_file (path, exclude, needles, claims, error))
        return FALSE;
    }
  return TRUE;
}

GPtrArray *
vpa_statedirs_load (const char *const *dirs, const char *exclude, GError **error)
{
  return vpa_statedirs_load_buses (dirs, exclude, NULL, 0, error);
}

GPtrArray *
vpa_statedirs_load_buses (const char *const *dirs, const char *exclude, const guint *buses,
                          guint n_buses, GError **error)
{
  g_auto (GStrv) needles = NULL;
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (buses != NULL)
    {
      /* libvirt writes its own files' PCI addresses as bus='0x81'; the
       * other quote is accepted for files edited by hand. */
      needles = g_new0 (char *, 2 * n_buses + 1);
      for (guint i = 0; i < n_buses; i++)
        {
          needles[2 * i] = g_strdup_printf ("bus='0x%02x'", buses[i]);
          needles[2 * i + 1] = g_strdup_printf ("bus=\"0x%02x\"", buses[i]);
        }
    }
  for (guint i = 0; dirs != NULL && dirs[i] != NULL; i++)
    {
      if (*dirs[i] == '\0')
        continue;
      if (!load_dir (dirs[i], exclude, (const char *const *) needles, claims, error))
        return NULL;
    }
  return g_steal_pointer (&claims);
}
