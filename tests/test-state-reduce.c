/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The reduced reading of a state file (vpa_state_reduce) against the
 * whole parse: every domain and state file of data/ and generated ones
 * give the same claims both ways, and the same again padded past the
 * bounds of a parsed document (40 000 disks, a large <metadata>).
 */
#include <string.h>
#include <glib/gstdio.h>
#include "vpa-state-reduce.h"
#include "vpa-statedirs.h"
#include "vpa-xml.h"

static void
append_uints (GString *s, const char *label, GArray *a)
{
  g_string_append_printf (s, " %s:", label);
  for (guint i = 0; i < a->len; i++)
    g_string_append_printf (s, "%s%u", i ? "," : "", g_array_index (a, guint, i));
}

/* Every field of every claim, or the error. */
static char *
claims_of (xmlDoc *doc, const GError *parse_error, const char *what)
{
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  g_autoptr (GString) s = g_string_new (NULL);
  g_autoptr (GError) error = NULL;

  if (doc == NULL)
    return g_strdup_printf ("parse error: %s", parse_error->message);
  if (!vpa_statedirs_claims (doc, what, NULL, claims, &error))
    return g_strdup_printf ("error: %s", error->message);
  for (guint i = 0; i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);
      char buf[VPA_ADDR_BUFLEN];

      g_string_append_printf (s, "%s %s %s", c->domain, vpa_addr_format (c->addr, buf),
                              c->running ? "running" : "defined");
      if (c->numa != NULL)
        {
          append_uints (s, "dedicated", c->numa->dedicated);
          append_uints (s, "pinned", c->numa->pinned);
          for (guint j = 0; j < c->numa->memory->len; j++)
            {
              const VpaMemClaim *m = &g_array_index (c->numa->memory, VpaMemClaim, j);
              g_string_append_printf (s, " mem:%d/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                                      m->node, m->page_kib, m->kib);
            }
        }
      g_string_append_c (s, '\n');
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static char *
whole_claims (const char *buf, gsize len)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (&(VpaDoc){ buf, len, "f.xml" }, &error);

  return claims_of (doc, error, "f.xml");
}

static char *
reduced_claims (const char *buf, gsize len)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (xmlDoc) doc = vpa_state_reduce (&(VpaDoc){ buf, len, "f.xml" }, &error);

  return claims_of (doc, error, "f.xml");
}

/* The document with filler inserted before the first match of at (or
 * nothing when at is absent). */
static char *
padded (const char *text, const char *at, const char *filler)
{
  const char *p = strstr (text, at);

  if (p == NULL)
    return NULL;
  return g_strdup_printf ("%.*s%s%s", (int) (p - text), text, filler, p);
}

static char *
disks (guint n)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    {
      g_string_append_printf (s,
                              "<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
                              "<source file='/var/lib/d%u.img'/><target dev='vd%u' bus='virtio'/></disk>",
                              i, i);
    }
  return g_string_free (s, FALSE);
}

static char *
metadata_filler (guint n)
{
  GString *s = g_string_new ("<x:big xmlns:x='urn:example:big'");

  for (guint i = 0; i < 300; i++)
    g_string_append_printf (s, " a%u='x'", i);
  g_string_append (s, ">");
  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "<x:e n='%u'>some text &amp; more<x:f/></x:e>", i);
  g_string_append (s, "</x:big>");
  return g_string_free (s, FALSE);
}

/* Same claims whole and reduced; and with pad, reduced again with
 * 9000 disks (36 000 elements) in <devices> and a <metadata> child of 300 attributes
 * and 20 000 elements, both past the bounds. */
static void
check_document (const char *text, const char *label, gboolean pad)
{
  static char *many, *meta;
  gsize len = strlen (text);
  g_autofree char *whole = whole_claims (text, len);
  g_autofree char *reduced = reduced_claims (text, len);
  const char *places[][2] = { { "</devices>", NULL }, { "</metadata>", NULL }, { "<devices", NULL } };

  if (many == NULL)
    {
      many = disks (9000);
      meta = metadata_filler (20000);
    }
  places[0][1] = places[2][1] = many;
  places[1][1] = meta;

  g_test_message ("%s", label);
  /* Both refuse what is not well-formed; libxml2's reader words some
   * errors differently (a state file within the bounds gets the whole
   * parse's). */
  if (g_str_has_prefix (whole, "parse error"))
    {
      if (!g_str_has_prefix (reduced, "parse error"))
        g_test_message ("whole: %s\nreduced: %s", whole, reduced);
      g_assert_true (g_str_has_prefix (reduced, "parse error"));
      return;
    }
  g_assert_cmpstr (reduced, ==, whole);
  if (!pad)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (places); i++)
    {
      g_autofree char *big = padded (text, places[i][0], places[i][1]);
      g_autofree char *got = NULL;

      if (big == NULL)
        continue;
      /* (before <devices> the disks are not in it: the domain's own
       * children, skipped all the same) */
      g_assert_false (vpa_xml_prescan (&(VpaDoc){ big, strlen (big), "f.xml" }, NULL));
      got = reduced_claims (big, strlen (big));
      g_assert_cmpstr (got, ==, whole);
    }
}

static void
collect (const char *dir, GPtrArray *out)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      if (g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        continue;
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        {
          collect (path, out);
        }
      else if (g_str_has_suffix (name, ".xml"))
        {
          g_ptr_array_add (out, g_steal_pointer (&path));
        }
    }
}

/* Every domain and state file of data/ (a <domain> or <domstatus> root). */
static void
test_fixtures (void)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  guint checked = 0;

  collect (VPA_TEST_DATA, files);
  for (guint i = 0; i < files->len; i++)
    {
      g_autofree char *text = NULL;
      gsize len = 0;

      if (!g_file_get_contents (files->pdata[i], &text, &len, NULL) || len > 1024 * 1024 ||
          memchr (text, '\0', len) != NULL ||
          (strstr (text, "<domain") == NULL && strstr (text, "<domstatus") == NULL))
        continue;
      /* past the bounds the whole parse has no claims to compare (the
       * hook cases prepare-state-over-bound* read them) */
      if (!vpa_xml_prescan (&(VpaDoc){ text, len, "f.xml" }, NULL))
        continue;
      /* the state files also padded past the bounds */
      check_document (text, files->pdata[i], strstr (files->pdata[i], "/state/") != NULL);
      checked++;
    }
  g_test_message ("%u documents", checked);
  g_assert_cmpuint (checked, >, 100);
}

#define NS "http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0"

/* Each element the claims read, in the forms libvirt writes and a few
 * it does not. */
static const char *const generated[] = {
  /* pins, <vcpu cpuset>, emulator and I/O threads, our cpu-policy */
  "<domstatus state='running'><vcpus/><domain type='kvm'><name>a</name>"
  "<metadata><vpa:affinity xmlns:vpa='" NS "'><vpa:numa cpu-policy='dedicated'/></vpa:affinity>"
  "</metadata><vcpu placement='static' cpuset='0-7'>4</vcpu><iothreads>2</iothreads>"
  "<cputune><shares>10</shares><vcpupin vcpu='0' cpuset='1'/><vcpupin vcpu='1' cpuset='2'/>"
  "<vcpupin vcpu='2' cpuset='3'/><vcpupin vcpu='3' cpuset='4'/><emulatorpin cpuset='5-6'/>"
  "<iothreadpin iothread='1' cpuset='7'/></cputune><devices/></domain></domstatus>",
  /* memory: cells, memnodes, hugepages */
  "<domain type='kvm'><name>b</name><memory unit='GiB'>4</memory>"
  "<memoryBacking><hugepages><page size='1' unit='G' nodeset='0'/><page size='2048'/>"
  "</hugepages><nosharepages/></memoryBacking><numatune><memory mode='strict' nodeset='1'/>"
  "<memnode cellid='0' mode='strict' nodeset='0'/><memnode cellid='1' mode='preferred' nodeset='1'/>"
  "</numatune><cpu mode='host-passthrough'><topology sockets='1' cores='2' threads='1'/><numa>"
  "<cell id='0' cpus='0' memory='2' unit='GiB'><distances><sibling id='0' value='10'/></distances></cell>"
  "<cell id='1' cpus='1' memory='2097152'/></numa></cpu><devices/></domain>",
  /* memory without cells, strict on one node */
  "<domain><name>c</name><memory>1048576</memory><numatune><memory nodeset='0'/></numatune>"
  "<devices/></domain>",
  /* PCI devices of every kind, an address that does not parse, an actual VF */
  "<domstatus><domain><name>d</name><devices><disk type='file'/>"
  "<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' "
  "bus='0x81' slot='0x10' function='0x1'/></source><alias name='hostdev0'/></hostdev>"
  "<hostdev mode='subsystem' type='usb'><source><vendor id='0x1'/></source></hostdev>"
  "<interface type='hostdev'><source><address type='pci' bus='0x82' slot='0x00' function='0x2'/>"
  "</source></interface><interface type='network'><source network='sriov'/>"
  "<actual type='hostdev'><source><address type='pci' domain='0' bus='130' slot='16' "
  "function='3'/></source></actual></interface>"
  "<hostdev mode='subsystem' type='pci'><source><address bus='0x1ff' slot='0' function='0'/>"
  "</source></hostdev></devices></domain></domstatus>",
  /* names as libvirt keeps them: text around a child, a reference, CDATA */
  "<domain><name> sp&amp;ce <!-- c --><![CDATA[x]]><b>y</b></name><devices><hostdev type='pci'>"
  "<source><address bus='0x17' slot='0' function='1'/></source></hostdev></devices></domain>",
  /* a second <devices>, <cputune> and <name>: the first counts */
  "<domain><name>e</name><name>f</name><vcpu>1</vcpu><cputune><vcpupin vcpu='0' cpuset='3'/>"
  "</cputune><cputune><vcpupin vcpu='0' cpuset='4'/></cputune><devices/><devices>"
  "<hostdev type='pci'><source><address bus='0x17' slot='0' function='1'/></source></hostdev>"
  "</devices></domain>",
  /* elements in other namespaces: <devices> in any, our metadata only in ours */
  "<domain xmlns:o='urn:other'><name>g</name><metadata><o:affinity><o:numa cpu-policy='shared'/>"
  "</o:affinity></metadata><vcpu>1</vcpu><cputune><vcpupin vcpu='0' cpuset='3'/></cputune>"
  "<o:devices><o:hostdev type='pci'><o:source><o:address bus='0x17' slot='0' function='1'/>"
  "</o:source></o:hostdev></o:devices></domain>",
  /* namespaced attributes are not read */
  "<domain xmlns:o='urn:other'><name>h</name><vcpu>1</vcpu><cputune>"
  "<vcpupin o:vcpu='0' vcpu='0' o:cpuset='5' cpuset='3'/></cputune><devices/></domain>",
  /* over the bounds of what a domain may pin: the same error */
  NULL,
  /* not a domain */
  "<network><name>n</name><devices/></network>",
  "<domstatus><name>s</name></domstatus>",
  "<domain><devices/></domain>",
};

static void
test_generated (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (generated); i++)
    {
      g_autofree char *text = NULL;

      if (generated[i] != NULL)
        {
          text = g_strdup (generated[i]);
        }
      else
        {
          GString *s = g_string_new ("<domain><name>p</name><vcpu>5000</vcpu><cputune>");

          for (guint v = 0; v < 4097; v++)
            g_string_append_printf (s, "<vcpupin vcpu='%u' cpuset='%u'/>", v, v);
          g_string_append (s, "</cputune><devices/><metadata/></domain>");
          text = g_string_free (s, FALSE);
        }
      check_document (text, text, TRUE);
    }
}

/* Comments whose text starts with ">" or "->", before and after the
 * root and longer than the reader's first chunk (libxml2 2.9's push
 * parser refuses them as they stand), and the same bytes in CDATA,
 * where they are text the claims read. */
static void
test_comments (void)
{
  const char *openings[] = { "<!-->", "<!--->", "<!-- ->" };
  const char *domain = "<domstatus><domain><name>n<![CDATA[<!-->x<!--->]]></name><devices>"
                       "<hostdev type='pci'><source><address bus='0x17' slot='0' function='1'/>"
                       "</source></hostdev></devices></domain></domstatus>";

  for (guint i = 0; i < G_N_ELEMENTS (openings); i++)
    {
      g_autofree char *pad = g_strnfill (2000, 'c');
      g_autofree char *before = g_strdup_printf ("%s%s-->\n%s", openings[i], pad, domain);
      g_autofree char *after = g_strdup_printf ("%s\n%s%s-->", domain, openings[i], pad);
      g_autofree char *whole = whole_claims (before, strlen (before));

      g_assert_true (strstr (whole, "n<!-->x<!--->") != NULL);
      check_document (before, "comment before the root", TRUE);
      check_document (after, "comment after the root", TRUE);
    }
}

/* What cannot be read still fails, naming the file and element. */
static void
test_refused (void)
{
  const char *cases[][2] = {
    { "<!DOCTYPE domain [<!ENTITY a 'b'>]><domain><name>&a;</name></domain>",
      "f.xml: document type declarations are not accepted" },
    { "<domain><name>x</name><devices></domain>", "f.xml:1: malformed XML: " },
    { "", "f.xml: empty document" },
  };
  g_autoptr (GString) kept = g_string_new ("<domain><name>x</name><devices>");
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (xmlDoc) doc = NULL;

      g_clear_error (&error);
      doc = vpa_state_reduce (&(VpaDoc){ cases[i][0], strlen (cases[i][0]), "f.xml" }, &error);
      g_assert_null (doc);
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
      g_assert_true (g_str_has_prefix (error->message, cases[i][1]));
    }
  /* 40 000 <hostdev>s are what the claims read: past the bounds */
  for (guint i = 0; i < 40000; i++)
    g_string_append (kept, "<hostdev mode='subsystem' type='usb'/>");
  g_string_append (kept, "</devices></domain>");
  g_clear_error (&error);
  g_assert_null (vpa_state_reduce (&(VpaDoc){ kept->str, kept->len, "f.xml" }, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "element <hostdev>: the claims read more than 32768 elements"));
}

static void
assert_refused (GString *doc, const char *message)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (xmlDoc) reduced = vpa_state_reduce (&(VpaDoc){ doc->str, doc->len, "f.xml" }, &error);

  g_assert_null (reduced);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  if (strstr (error->message, message) == NULL)
    g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, message));
}

/* What would make libxml2's work grow faster than the bytes is refused
 * before it sees them: distinct names (its dictionary), attribute pairs
 * (its duplicate check), declarations in scope (its namespace search). */
static void
test_census (void)
{
  g_autoptr (GString) names = g_string_new ("<domain><name>x</name><metadata>");
  g_autoptr (GString) decls = g_string_new ("<domain><name>x</name><metadata>");
  g_autoptr (GString) pairs = g_string_new ("<domain><name>x</name><metadata>");
  g_autoptr (GString) many = g_string_new ("<domain><name>x</name><metadata>");
  g_autoptr (GString) scope = g_string_new ("<domain><name>x</name><metadata>");
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < 70000; i++)
    g_string_append_printf (names, "<e%u/>", i);
  for (guint i = 0; i < 70000; i++)
    g_string_append_printf (decls, "<x:e xmlns:x='urn:%u'/>", i);
  for (guint i = 0; i < 600; i++)
    {
      g_string_append (pairs, "<e");
      for (guint a = 0; a < 256; a++)
        g_string_append_printf (pairs, " a%u='1'", a);
      g_string_append (pairs, "/>");
    }
  /* 200 levels declaring 200 namespaces each, then 30 000 elements
   * under them: libxml2 would search 40 000 declarations for each */
  for (guint i = 0; i < 200; i++)
    {
      g_string_append (scope, "<d");
      for (guint a = 0; a < 200; a++)
        g_string_append_printf (scope, " xmlns:p%u='urn:x'", a);
      g_string_append (scope, ">");
    }
  for (guint i = 0; i < 30000; i++)
    g_string_append (scope, "<e/>");
  for (guint i = 0; i < 200; i++)
    g_string_append (scope, "</d>");
  /* the same names again and again are not distinct: read */
  for (guint i = 0; i < 70000; i++)
    g_string_append_printf (many, "<e%u a%u='%u'/>", i % 100, i % 100, i);
  g_string_append (names, "</metadata></domain>");
  g_string_append (decls, "</metadata></domain>");
  g_string_append (pairs, "</metadata></domain>");
  g_string_append (many, "</metadata></domain>");
  g_string_append (scope, "</metadata></domain>");
  assert_refused (names, "f.xml:1: the document has more than 65536 distinct names");
  assert_refused (decls, "more than 65536 distinct names of elements, attributes and namespaces");
  assert_refused (pairs, "f.xml:1: the document has more than 16711680 pairs of attributes");
  assert_refused (scope, "f.xml:1: the document has more than 268435456 namespace declarations in scope to search");
  doc = vpa_state_reduce (&(VpaDoc){ many->str, many->len, "f.xml" }, &error);
  g_assert_no_error (error);
  g_assert_nonnull (doc);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/state-reduce/fixtures", test_fixtures);
  g_test_add_func ("/state-reduce/generated", test_generated);
  g_test_add_func ("/state-reduce/comments", test_comments);
  g_test_add_func ("/state-reduce/refused", test_refused);
  g_test_add_func ("/state-reduce/census", test_census);
  return g_test_run ();
}
