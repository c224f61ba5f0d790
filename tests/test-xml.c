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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/xml/parse-ok", test_parse_ok);
  g_test_add_func ("/xml/parse-refused", test_parse_refused);
  return g_test_run ();
}
