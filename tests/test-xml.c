/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include "vpa-xml.h"

static void
test_parse_ok (void)
{
  g_autoptr (GError) error = NULL;
  const char *doc = "<domain type='kvm'><!-- c --><name>a</name></domain>";
  g_autoptr (xmlDoc) d = vpa_xml_parse_memory (doc, strlen (doc), "t.xml", &error);
  g_assert_no_error (error);
  g_assert_nonnull (d);
  g_assert_cmpstr ((const char *) xmlDocGetRootElement (d)->name, ==, "domain");
}

static void
check_refused (const char *doc, gsize len, const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (xmlDoc) d = vpa_xml_parse_memory (doc, len, "t.xml", &error);
  g_assert_null (d);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  if (strstr (error->message, needle) == NULL)
    g_error ("'%s' not in '%s'", needle, error->message);
  g_assert_nonnull (strstr (error->message, "t.xml"));
}

static void
test_parse_refused (void)
{
  const char *laughs =
    "<?xml version='1.0'?><!DOCTYPE lolz [<!ENTITY lol 'lol'>"
    "<!ENTITY lol2 '&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;'>]>"
    "<lolz>&lol2;</lolz>";
  const char *xxe = "<?xml version='1.0'?><!DOCTYPE d [<!ENTITY x SYSTEM "
                    "'file:///etc/passwd'>]><d>&x;</d>";
  const char *trunc = "<domain><name>a</name>";

  check_refused (laughs, strlen (laughs), "document type");
  check_refused (xxe, strlen (xxe), "document type");
  check_refused (trunc, strlen (trunc), "malformed XML");
  check_refused ("", 0, "empty");
  check_refused ("x", VPA_XML_MAX_DOCUMENT + 1, "exceeds the limit");
}

static void
test_hostdev_address (void)
{
  struct { const char *xml; gboolean ok, pci; const char *addr; } cases[] = {
    { "<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' "
      "bus='0x81' slot='0x10' function='0x2'/></source></hostdev>", TRUE, TRUE, "0000:81:10.2" },
    { "<interface type='hostdev'><source><address type='pci' domain='0' bus='129' slot='16' "
      "function='3'/></source></interface>", TRUE, TRUE, "0000:81:10.3" },
    { "<interface type='hostdev'><alias name='ua-x'/></interface>", TRUE, TRUE, NULL },
    { "<hostdev mode='subsystem' type='usb'><source/></hostdev>", TRUE, FALSE, NULL },
    { "<interface type='network'><source network='default'/></interface>", TRUE, FALSE, NULL },
    { "<hostdev mode='subsystem' type='pci'><alias name='ua-q'/><source><address domain='0x0000' "
      "bus='0x81' slot='0x20' function='0x0'/></source></hostdev>", FALSE, TRUE, NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (xmlDoc) d = vpa_xml_parse_memory (cases[i].xml, strlen (cases[i].xml), "d.xml", &error);
      gboolean pci;
      VpaAddr a;
      char buf[VPA_ADDR_BUFLEN];

      g_assert_no_error (error);
      g_assert_cmpint (vpa_xml_hostdev_address (xmlDocGetRootElement (d), "d.xml", &pci, &a, &error),
                       ==, cases[i].ok);
      if (!cases[i].ok)
        {
          g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
          g_assert_nonnull (strstr (error->message, "slot='0x20'"));
          g_assert_nonnull (strstr (error->message, "ua-q"));
          continue;
        }
      g_assert_cmpint (pci, ==, cases[i].pci);
      if (cases[i].addr == NULL)
        g_assert_cmpuint (a, ==, VPA_ADDR_NONE);
      else
        g_assert_cmpstr (vpa_addr_format (a, buf), ==, cases[i].addr);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/xml/parse-ok", test_parse_ok);
  g_test_add_func ("/xml/parse-refused", test_parse_refused);
  g_test_add_func ("/xml/hostdev-address", test_hostdev_address);
  return g_test_run ();
}
