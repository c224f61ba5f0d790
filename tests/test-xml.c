/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include "vpa-attach.h"
#include "vpa-domain.h"
#include "vpa-source.h"
#include "vpa-xml.h"

static void
test_parse_ok (void)
{
  g_autoptr (GError) error = NULL;
  const char *doc = "<domain type='kvm'><!-- c --><name>a</name></domain>";
  g_autoptr (xmlDoc) d = vpa_xml_parse_memory (&(VpaDoc){ doc, strlen (doc), "t.xml" }, &error);
  g_assert_no_error (error);
  g_assert_nonnull (d);
  g_assert_cmpstr ((const char *) xmlDocGetRootElement (d)->name, ==, "domain");
}

static void
check_refused (const char *doc, gsize len, const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (xmlDoc) d = vpa_xml_parse_memory (&(VpaDoc){ doc, len, "t.xml" }, &error);
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
  struct {
    const char *xml;
    gboolean ok, pci;
    const char *addr;
  } cases[] = {
    { "<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' "
      "bus='0x81' slot='0x10' function='0x2'/></source></hostdev>",
      TRUE, TRUE, "0000:81:10.2" },
    { "<interface type='hostdev'><source><address type='pci' domain='0' bus='129' slot='16' "
      "function='3'/></source></interface>",
      TRUE, TRUE, "0000:81:10.3" },
    { "<interface type='hostdev'><alias name='ua-x'/></interface>", TRUE, TRUE, NULL },
    { "<hostdev mode='subsystem' type='usb'><source/></hostdev>", TRUE, FALSE, NULL },
    { "<interface type='network'><source network='default'/></interface>", TRUE, FALSE, NULL },
    { "<hostdev mode='subsystem' type='pci'><alias name='ua-q'/><source><address domain='0x0000' "
      "bus='0x81' slot='0x20' function='0x0'/></source></hostdev>",
      FALSE, TRUE, NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (xmlDoc) d = vpa_xml_parse_memory (&(VpaDoc){ cases[i].xml, strlen (cases[i].xml), "d.xml" }, &error);
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
        {
          g_assert_cmpuint (a, ==, VPA_ADDR_NONE);
        }
      else
        {
          g_assert_cmpstr (vpa_addr_format (a, buf), ==, cases[i].addr);
        }
    }
}

/* The one address parser is as strict as libvirt's: the whole value, hex
 * after 0x or decimal, within range. */
static void
test_pci_address_strict (void)
{
  struct {
    const char *attrs;
    const char *addr;
  } good[] = {
    { "domain='0x0000' bus='0x81' slot='0x1f' function='0x7'", "0000:81:1f.7" },
    { "bus='0X81' slot='0X1F' function='7'", "0000:81:1f.7" },
    { "domain='0xffff' bus='255' slot='31' function='0'", "ffff:ff:1f.0" },
    { "domain='0' bus='0' slot='0' function='0'", "0000:00:00.0" },
    /* an Intel VMD domain: libvirt reads the domain as an unsigned int */
    { "domain='0x10000' bus='0x01' slot='0' function='0'", "10000:01:00.0" },
    { "domain='0xffffffff' bus='0xff' slot='0x1f' function='7'", "ffffffff:ff:1f.7" },
    { "domain='4294967295' bus='0' slot='1' function='0'", "ffffffff:00:01.0" },
  };
  const char *bad[] = {
    "bus='0X'",
    "bus='0x'",
    "bus=''",
    "bus=' 5'",
    "bus='5 '",
    "bus='+5'",
    "bus='-1'",
    "bus='0x+5'",
    "bus='5x'",
    "bus='0x1g'",
    "bus='010'",
    "bus='0x100'",
    "bus='256'",
    "slot='0x20'",
    "function='8'",
    "domain='0x100000000'",
    "domain='4294967296'",
    "domain='-0'",
    "bus='0x 5'",
  };

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autofree char *xml = g_strdup_printf ("<address %s/>", good[i].attrs);
      g_autoptr (GError) error = NULL;
      g_autoptr (xmlDoc) d = vpa_xml_parse_memory (&(VpaDoc){ xml, strlen (xml), "a.xml" }, &error);
      VpaAddr a = VPA_ADDR_NONE;
      char buf[VPA_ADDR_BUFLEN];

      g_assert_no_error (error);
      g_assert_true (vpa_xml_pci_address_parse (xmlDocGetRootElement (d), "a.xml", "", &a, &error));
      g_assert_no_error (error);
      g_assert_cmpstr (vpa_addr_format (a, buf), ==, good[i].addr);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      /* bad[i] replaces the field it names in an otherwise good address. */
      g_autofree char *field = g_strndup (bad[i], strcspn (bad[i], "="));
      g_autoptr (GString) xml = g_string_new ("<address");
      const char *fields[] = { "domain", "bus", "slot", "function" };
      g_autoptr (GError) error = NULL;
      g_autoptr (xmlDoc) d = NULL;
      g_autofree char *want = g_strdup_printf ("a.xml: <x><address %s>: not a PCI address field", bad[i]);
      VpaAddr a = VPA_ADDR_NONE;

      for (guint j = 0; j < G_N_ELEMENTS (fields); j++)
        {
          if (strcmp (fields[j], field) == 0)
            {
              g_string_append_printf (xml, " %s", bad[i]);
            }
          else
            {
              g_string_append_printf (xml, " %s='0x1'", fields[j]);
            }
        }
      g_string_append (xml, "/>");
      d = vpa_xml_parse_memory (&(VpaDoc){ xml->str, xml->len, "a.xml" }, &error);
      g_assert_no_error (error);
      g_assert_false (vpa_xml_pci_address_parse (xmlDocGetRootElement (d), "a.xml", "<x>", &a, &error));
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
      g_assert_cmpstr (error->message, ==, want);
      g_assert_cmpuint (a, ==, VPA_ADDR_NONE);
    }
}

/* The walker: PCI hostdevs and hostdev interfaces in document order,
 * network interfaces with an <actual type='hostdev'> only when asked,
 * and a bad address an error only when strict. */
static void
test_pci_walker (void)
{
  const char *xml =
    "<domain><devices>"
    "<hostdev mode='subsystem' type='pci'><source><address bus='0x81' slot='0x0' "
    "function='0x1'/></source></hostdev>"
    "<hostdev mode='subsystem' type='usb'><source/></hostdev>"
    "<disk/>"
    "<interface type='network'><actual type='hostdev'><source><address type='pci' "
    "domain='0x0000' bus='0x82' slot='0x10' function='0x3'/></source></actual></interface>"
    "<interface type='hostdev'/>"
    "<interface type='hostdev'><source><address bus='0X' slot='0' function='0'/></source>"
    "</interface>"
    "</devices></domain>";
  g_autoptr (GError) error = NULL;
  g_autoptr (xmlDoc) d = vpa_xml_parse_memory (&(VpaDoc){ xml, strlen (xml), "w.xml" }, &error);
  g_autoptr (GArray) lenient = NULL;
  g_autoptr (GArray) actual = NULL;
  g_autoptr (GArray) strict = NULL;
  char buf[VPA_ADDR_BUFLEN];

  g_assert_no_error (error);
  lenient = vpa_xml_domain_pci_devices (xmlDocGetRootElement (d), "w.xml", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (lenient->len, ==, 3);
  g_assert_cmpstr (vpa_addr_format (g_array_index (lenient, VpaXmlPciDevice, 0).addr, buf), ==,
                   "0000:81:00.1");
  g_assert_false (g_array_index (lenient, VpaXmlPciDevice, 0).is_interface);
  g_assert_cmpuint (g_array_index (lenient, VpaXmlPciDevice, 1).addr, ==, VPA_ADDR_NONE);
  g_assert_true (g_array_index (lenient, VpaXmlPciDevice, 1).is_interface);
  g_assert_cmpuint (g_array_index (lenient, VpaXmlPciDevice, 2).addr, ==, VPA_ADDR_NONE);

  actual = vpa_xml_domain_pci_devices (xmlDocGetRootElement (d), "w.xml", VPA_XML_PCI_ACTUAL,
                                       &error);
  g_assert_no_error (error);
  g_assert_cmpuint (actual->len, ==, 4);
  g_assert_cmpstr (vpa_addr_format (g_array_index (actual, VpaXmlPciDevice, 1).addr, buf), ==,
                   "0000:82:10.3");

  strict = vpa_xml_domain_pci_devices (xmlDocGetRootElement (d), "w.xml", VPA_XML_PCI_STRICT,
                                       &error);
  g_assert_null (strict);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==,
                   "w.xml: <interface> <source><address bus='0X'>: not a PCI address field");
}

/* ------------------------------------------------------------------ */
/* The same hostile documents through every reader of untrusted XML:   */
/* the DOM parser, the domain parser (the hook's stdin, the CLI's      */
/* FILE) and the streaming snapshot reader.                            */
/* ------------------------------------------------------------------ */

typedef enum { READER_DOM,
               READER_DOMAIN,
               READER_SNAPSHOT } Reader;

static const char *
wrap (Reader r)
{
  return r == READER_SNAPSHOT ? "node" : "domain";
}

/* NULL result, VPA_ERROR_INVALID naming the source and containing needle,
 * and nothing of /etc/passwd in the message. */
static void
refused_by (Reader r, const char *doc, gsize len, const char *needle)
{
  g_autoptr (GError) error = NULL;
  gboolean refused = FALSE;

  switch (r)
    {
    case READER_DOM:
      {
        g_autoptr (xmlDoc) d = vpa_xml_parse_memory (&(VpaDoc){ doc, len, "t.xml" }, &error);
        refused = d == NULL;
        break;
      }
    case READER_DOMAIN:
      {
        g_autoptr (VpaDomain) d = vpa_domain_parse (&(VpaDoc){ doc, len, "t.xml" }, &error);
        refused = d == NULL;
        break;
      }
    case READER_SNAPSHOT:
      {
        g_autoptr (VpaHost) h = vpa_snapshot_load_memory (&(VpaDoc){ doc, len, "t.xml" }, &error);
        refused = h == NULL;
        break;
      }
    }
  g_assert_true (refused);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  if (strstr (error->message, needle) == NULL)
    g_error ("'%s' not in '%s'", needle, error->message);
  g_assert_nonnull (strstr (error->message, "t.xml"));
  g_assert_null (strstr (error->message, "root:"));
  g_assert_null (strchr (error->message, '\n'));
}

static void
test_hostile (gconstpointer data)
{
  Reader r = GPOINTER_TO_INT (data);
  const char *root = wrap (r);
  g_autofree char *laughs = NULL, *xxe_file = NULL, *xxe_http = NULL, *xxe_param = NULL;
  g_autofree char *undeclared = NULL;
  g_autoptr (GString) l = g_string_new ("<?xml version='1.0'?><!DOCTYPE x [<!ENTITY l0 'lol'>");
  g_autoptr (GString) deep = g_string_new (NULL);

  /* Ten levels of ten references: 10^9 "lol"s if anything expanded them. */
  for (guint i = 1; i < 10; i++)
    {
      g_string_append_printf (l, "<!ENTITY l%u '", i);
      for (guint j = 0; j < 10; j++)
        g_string_append_printf (l, "&l%u;", i - 1);
      g_string_append (l, "'>");
    }
  laughs = g_strdup_printf ("%s]><%s><name>&l9;</name></%s>", l->str, root, root);
  xxe_file = g_strdup_printf ("<?xml version='1.0'?><!DOCTYPE x [<!ENTITY x SYSTEM "
                              "'file:///etc/passwd'>]><%s><name>&x;</name></%s>",
                              root, root);
  xxe_http = g_strdup_printf ("<?xml version='1.0'?><!DOCTYPE %s SYSTEM "
                              "'http://127.0.0.1:1/x.dtd'><%s/>",
                              root, root);
  xxe_param = g_strdup_printf ("<?xml version='1.0'?><!DOCTYPE x [<!ENTITY %% p SYSTEM "
                               "'http://127.0.0.1:1/p.dtd'> %%p;]><%s/>",
                               root);
  undeclared = g_strdup_printf ("<%s><name>&x;</name></%s>", root, root);
  for (guint i = 0; i < 300; i++)
    g_string_append_printf (deep, "<%s>", i == 0 ? root : "e");
  for (guint i = 300; i > 0; i--)
    g_string_append_printf (deep, "</%s>", i == 1 ? root : "e");

  refused_by (r, laughs, strlen (laughs), "entit");
  refused_by (r, xxe_file, strlen (xxe_file), "document type");
  refused_by (r, xxe_http, strlen (xxe_http), "document type");
  refused_by (r, xxe_param, strlen (xxe_param), "document type");
  refused_by (r, undeclared, strlen (undeclared), "malformed XML");
  refused_by (r, deep->str, deep->len, "Excessive depth");
}

/* Oversized documents are refused before a byte is parsed: a domain over
 * VPA_XML_MAX_DOCUMENT, and (the streaming reader takes tens of MiB) a
 * snapshot whose length libxml2's int cannot hold. */
static void
test_oversized (void)
{
  g_autofree char *big = g_malloc (VPA_XML_MAX_DOCUMENT + 2);

  memset (big, ' ', VPA_XML_MAX_DOCUMENT + 1);
  memcpy (big, "<domain>", 8);
  big[VPA_XML_MAX_DOCUMENT + 1] = '\0';
  refused_by (READER_DOM, big, VPA_XML_MAX_DOCUMENT + 1, "exceeds the limit");
  refused_by (READER_DOMAIN, big, VPA_XML_MAX_DOCUMENT + 1, "exceeds the limit");
  /* Checked against the length alone, so the buffer may be short. */
  refused_by (READER_SNAPSHOT, "<node/>", (gsize) G_MAXINT + 1, "oversized");
}

/* The interface element attach hot-plugs, written by xml/ (the
 * pipeline hands it the device, the alias, the MAC and the guest bus). */
static void
test_attach_interface (void)
{
  g_autofree char *plain = vpa_attach_interface (VPA_ADDR (0, 0x81, 0x10, 3), "ua-hot", NULL, -1);
  g_autofree char *full = vpa_attach_interface (VPA_ADDR (0, 0x81, 0x10, 3), "ua-a&b",
                                                "52:54:00:aa:bb:cc", 0x0c);

  g_assert_cmpstr (plain, ==,
                   "<interface type='hostdev' managed='yes'>\n"
                   "  <source>\n"
                   "    <address type='pci' domain='0x0000' bus='0x81' slot='0x10' function='0x3'/>\n"
                   "  </source>\n"
                   "  <alias name='ua-hot'/>\n"
                   "</interface>\n");
  g_assert_cmpstr (full, ==,
                   "<interface type='hostdev' managed='yes'>\n"
                   "  <source>\n"
                   "    <address type='pci' domain='0x0000' bus='0x81' slot='0x10' function='0x3'/>\n"
                   "  </source>\n"
                   "  <alias name='ua-a&amp;b'/>\n"
                   "  <mac address='52:54:00:aa:bb:cc'/>\n"
                   "  <address type='pci' domain='0x0000' bus='0x0c' slot='0x00' function='0x0'/>\n"
                   "</interface>\n");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/xml/parse-ok", test_parse_ok);
  g_test_add_func ("/xml/parse-refused", test_parse_refused);
  g_test_add_func ("/xml/hostdev-address", test_hostdev_address);
  g_test_add_func ("/xml/pci-address-strict", test_pci_address_strict);
  g_test_add_func ("/xml/pci-walker", test_pci_walker);
  g_test_add_data_func ("/xml/hostile/dom", GINT_TO_POINTER (READER_DOM), test_hostile);
  g_test_add_data_func ("/xml/hostile/domain", GINT_TO_POINTER (READER_DOMAIN), test_hostile);
  g_test_add_data_func ("/xml/hostile/snapshot", GINT_TO_POINTER (READER_SNAPSHOT), test_hostile);
  g_test_add_func ("/xml/oversized", test_oversized);
  g_test_add_func ("/xml/attach-interface", test_attach_interface);
  return g_test_run ();
}
