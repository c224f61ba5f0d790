/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The domain rewrite. Data-driven: every data/domain/rewrite/NAME.xml is
 * rewritten with the decisions in NAME.decisions and compared with
 * NAME.out.xml (bad-NAME.xml: with the error line in bad-NAME.err);
 * the output rewritten again must be byte-identical and must parse
 * back to the decisions. VPA_TEST_REGENERATE=1 rewrites the expected
 * files (review the diff before committing).
 */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include "vpa-domain.h"
#include "vpa-rewrite.h"
#include "vpa-test-util.h"
#include "vpa-xml.h"

/* One decision a line: "port DEVICE ADDRESS NODE POLICY SOURCE" or
 * "alias NAME INDEX ADDRESS NODE POLICY SOURCE"; '#' starts a comment. */
static GPtrArray *
read_decisions (const char *path)
{
  g_autofree char *buf = vpa_test_read_fixture (path, NULL);
  g_auto (GStrv) lines = g_strsplit (buf, "\n", -1);
  GPtrArray *ret = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_plan_decision_free);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) f = NULL;
      gboolean alias;
      guint n, k;
      VpaAddr addr;
      VpaPolicy policy;
      VpaPolicySource source;
      guint64 index = 0;
      gint64 node;

      if (*g_strstrip (lines[i]) == '\0' || lines[i][0] == '#')
        continue;
      f = g_strsplit_set (lines[i], " \t", -1);
      n = g_strv_length (f);
      alias = g_strcmp0 (f[0], "alias") == 0;
      g_assert_cmpuint (n, ==, alias ? 7 : 6);
      k = alias ? 3 : 2;
      if (alias)
        {
          g_assert_true (g_ascii_string_to_unsigned (f[2], 10, 0, G_MAXUINT, &index, NULL));
        }
      else
        {
          g_assert_cmpstr (f[0], ==, "port");
        }
      g_assert_true (vpa_addr_parse (f[k], &addr));
      g_assert_true (g_ascii_string_to_signed (f[k + 1], 10, -1, G_MAXINT, &node, NULL));
      g_assert_true (vpa_policy_from_string (f[k + 2], &policy));
      g_assert_true (vpa_policy_source_from_string (f[k + 3], &source));
      g_ptr_array_add (ret, vpa_plan_decision_new (alias ? VPA_DECISION_ALIAS : VPA_DECISION_PORT,
                                                   f[1], (guint) index, addr, (gint) node, policy,
                                                   source));
    }
  return ret;
}

/* The output parses, records exactly the decisions, and every decided
 * device has its address. */
static void
assert_holds (const char *out, gsize len, GPtrArray *decisions)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaDomain) dom = vpa_domain_parse (&(VpaDoc){ out, len, "out.xml" }, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (dom->placed->len, ==, decisions->len);
  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      const VpaPlacedRecord *r = g_ptr_array_index (dom->placed, i);
      g_autofree char *alias = vpa_plan_decision_user_alias (d);
      guint found = 0;

      g_assert_cmpstr (r->device, ==, alias);
      g_assert_cmpuint (r->addr, ==, d->addr);
      g_assert_cmpint (r->numa_node, ==, d->numa_node);
      g_assert_cmpint (r->policy, ==, d->policy);
      g_assert_cmpint (r->source, ==, d->source);
      for (guint j = 0; j < dom->hostdevs->len; j++)
        {
          const VpaDomainHostdev *h = g_ptr_array_index (dom->hostdevs, j);
          if (g_strcmp0 (h->alias, alias) == 0)
            {
              g_assert_cmpuint (h->addr, ==, d->addr);
              found++;
            }
        }
      g_assert_cmpuint (found, ==, 1);
    }
  /* no ua-vpa hostdev beyond the decisions */
  for (guint j = 0; dom->has_affinity && j < dom->hostdevs->len; j++)
    {
      const VpaDomainHostdev *h = g_ptr_array_index (dom->hostdevs, j);
      gboolean named = FALSE;
      if (h->alias == NULL || !g_str_has_prefix (h->alias, VPA_ALIAS_PREFIX))
        continue;
      for (guint i = 0; i < decisions->len && !named; i++)
        {
          g_autofree char *alias = vpa_plan_decision_user_alias (g_ptr_array_index (decisions, i));
          named = strcmp (alias, h->alias) == 0;
        }
      g_assert_true (named);
    }
}

static void
test_rewrite_fixture (gconstpointer data)
{
  const char *dpath = data;
  g_autofree char *stem = g_strndup (dpath, strlen (dpath) - strlen (".decisions"));
  g_autofree char *path = g_strconcat (stem, ".xml", NULL);
  g_autofree char *base = g_path_get_basename (path);
  g_autoptr (GPtrArray) decisions = read_decisions (dpath);
  g_autoptr (GError) error = NULL;
  g_autofree char *in = NULL;
  g_autofree char *out = NULL;
  g_autofree char *again = NULL;
  gsize in_len, out_len = 0, again_len = 0;

  in = vpa_test_read_fixture (path, &in_len);
  out = vpa_rewrite_domain (&(VpaDoc){ in, in_len, base }, decisions, &out_len, &error);
  if (g_str_has_prefix (base, "bad-"))
    {
      g_autofree char *errfile = g_strconcat (stem, ".err", NULL);
      g_autofree char *line = NULL;

      g_assert_null (out);
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
      g_assert_null (strchr (error->message, '\n'));
      line = g_strdup_printf ("%s\n", error->message);
      vpa_test_assert_golden (errfile, line);
      return;
    }
  g_assert_no_error (error);
  g_assert_nonnull (out);
  g_assert_cmpuint (strlen (out), ==, out_len);
  {
    g_autofree char *golden = g_strconcat (stem, ".out.xml", NULL);
    vpa_test_assert_golden (golden, out);
  }
  assert_holds (out, out_len, decisions);

  again = vpa_rewrite_domain (&(VpaDoc){ out, out_len, base }, decisions, &again_len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (again_len, ==, out_len);
  g_assert_cmpstr (again, ==, out);
}

/* ------------------------------------------------------------------ */
/* Unit cases                                                          */
/* ------------------------------------------------------------------ */

static const char rich_doc[] =
  "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n"
  "<!-- leading comment -->\n"
  "<?app-instruction keep='me'?>\n"
  "<domain type='kvm' id='7' xmlns:x='http://example.org/x'>\n"
  "  <name>rich</name>\n"
  "  <description>A &amp; B &#x3C;tag&#62; <![CDATA[ <b>&</b> ]]></description>\n"
  "  <metadata>\n"
  "    <x:thing   z='1'  a = \"2\" >text</x:thing>\n"
  "    <vpa:affinity xmlns:vpa='http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0' x:note='n'>\n"
  "      <vpa:port vnic-type='direct' device='ua-p' physnet='net>1'/><!-- trailing -->\n"
  "      <x:extension/>\n"
  "    </vpa:affinity>\n"
  "  </metadata>\n"
  "  <devices>\n"
  "    <interface type='hostdev'   managed='yes'>\n"
  "      <mac address='52:54:00:00:00:01'/>\n"
  "      <x:unknown attr='&apos;q&apos;'/>\n"
  "      <alias name='ua-p'/>\n"
  "    </interface>\n"
  "    <hostdev type='pci' mode='subsystem'><source><address domain='0' bus='5' slot='0' function='0'/></source></hostdev>\n"
  "  </devices>\n"
  "</domain>\n"
  "<!-- trailing comment -->\n";

static GPtrArray *
make_decisions (const char *spec)
{
  g_autofree char *path = NULL;
  g_autoptr (GError) error = NULL;
  GPtrArray *ret;
  int fd = g_file_open_tmp ("vpa-decisions-XXXXXX", &path, &error);

  g_assert_no_error (error);
  close (fd);
  g_file_set_contents (path, spec, -1, &error);
  g_assert_no_error (error);
  ret = read_decisions (path);
  g_unlink (path);
  return ret;
}

static char *
rewrite_ok (const char *in, gsize len, GPtrArray *decisions, gsize *out_len)
{
  g_autoptr (GError) error = NULL;
  char *out = vpa_rewrite_domain (&(VpaDoc){ in, len, "t.xml" }, decisions, out_len, &error);

  g_assert_no_error (error);
  g_assert_nonnull (out);
  return out;
}

/* The caller's check runs on the output as the rewrite parses it back
 * (the pipeline's is libvirt's guest bus rules): it sees the placed
 * device, and a check that fails refuses the rewrite with its reason. */
static guint checked_placed;

static gboolean
count_placed_check (const VpaDomain *dom, GError **error)
{
  checked_placed = dom->placed != NULL ? dom->placed->len : 0;
  return TRUE;
}

static gboolean
refusing_check (const VpaDomain *dom, GError **error)
{
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "%s: a rule the output breaks", dom->source);
  return FALSE;
}

static void
test_output_check (void)
{
  g_autoptr (GPtrArray) decisions = make_decisions ("port ua-p 0000:81:10.2 1 required port\n");
  const VpaDoc doc = { rich_doc, strlen (rich_doc), "t.xml" };
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *refused = NULL;
  gsize out_len = 0;

  checked_placed = 0;
  out = vpa_rewrite_domain_topology (&doc, decisions, NULL, count_placed_check, &out_len, &error);
  g_assert_no_error (error);
  g_assert_nonnull (out);
  g_assert_cmpuint (checked_placed, >, 0);
  refused = vpa_rewrite_domain_topology (&doc, decisions, NULL, refusing_check, &out_len, &error);
  g_assert_null (refused);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==,
                   "t.xml: internal error: the rewritten document does not hold the placement: "
                   "t.xml: a rule the output breaks");
}

/* When a placement only adds, every byte of the input is still in the
 * output, in order. */
static void
test_insert_only_keeps_bytes (void)
{
  g_autoptr (GPtrArray) decisions = make_decisions ("port ua-p 0000:81:10.2 1 required port\n"
                                                    "alias GPU 0 0000:3b:00.0 0 legacy default\n");
  gsize out_len, j = 0;
  g_autofree char *out = rewrite_ok (rich_doc, strlen (rich_doc), decisions, &out_len);

  for (gsize i = 0; rich_doc[i] != '\0'; i++, j++)
    {
      while (j < out_len && out[j] != rich_doc[i])
        j++;
      g_assert_cmpuint (j, <, out_len);
    }
  g_assert_true (g_str_has_prefix (out, "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n"
                                        "<!-- leading comment -->\n"));
  g_assert_true (g_str_has_suffix (out, "</domain>\n<!-- trailing comment -->\n"));
  g_assert_nonnull (strstr (out, "<interface type='hostdev'   managed='yes'>\n"
                                 "      <mac address='52:54:00:00:00:01'/>\n"
                                 "      <source>\n"
                                 "        <address type='pci' domain='0x0000' bus='0x81' "
                                 "slot='0x10' function='0x2'/>\n"
                                 "      </source>\n"
                                 "      <x:unknown attr='&apos;q&apos;'/>\n"));
  g_assert_nonnull (strstr (out, "<![CDATA[ <b>&</b> ]]>"));
  g_assert_nonnull (strstr (out, "<x:thing   z='1'  a = \"2\" >text</x:thing>"));
  /* placed records follow the affinity's own quoting and prefix */
  g_assert_nonnull (strstr (out, "      <x:extension/>\n"
                                 "      <vpa:placed device='ua-p' address='0000:81:10.2' "
                                 "numa-node='1' policy='required' source='port'/>\n"));
  /* the new hostdev comes after the existing one, on its own lines */
  g_assert_nonnull (strstr (out, "</source></hostdev>\n"
                                 "    <hostdev mode='subsystem' type='pci' managed='yes'>\n"
                                 "      <source>\n"));
}

/* Placing again from scratch or over an earlier placement gives the
 * same document. */
static void
test_replace_converges (void)
{
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "domain", "rewrite", "aliases-add.xml", NULL);
  g_autoptr (GPtrArray) first = make_decisions ("alias QuickAssist 0 0000:84:00.1 1 preferred flavor\n"
                                                "alias QuickAssist 1 0000:84:00.2 1 preferred flavor\n"
                                                "alias GPU 0 0000:3b:00.0 0 preferred flavor\n");
  g_autoptr (GPtrArray) second = make_decisions ("alias QuickAssist 0 0000:84:00.3 0 required flavor\n"
                                                 "alias GPU 0 0000:3b:00.0 0 required flavor\n");
  g_autofree char *in = NULL;
  g_autofree char *a = NULL;
  g_autofree char *ab = NULL;
  g_autofree char *b = NULL;
  gsize in_len, a_len, ab_len, b_len;

  in = vpa_test_read_fixture (path, &in_len);
  a = rewrite_ok (in, in_len, first, &a_len);
  ab = rewrite_ok (a, a_len, second, &ab_len);
  b = rewrite_ok (in, in_len, second, &b_len);
  g_assert_cmpstr (a, !=, b);
  g_assert_cmpstr (ab, ==, b);
  g_assert_null (strstr (ab, "ua-vpa-QuickAssist-1"));
  g_assert_nonnull (strstr (ab, "function='0x3'"));
}

/* Nothing to record and nothing recorded: the same bytes. */
static void
test_nothing_to_do (void)
{
  const char *doc =
    "<domain type='kvm'><metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'/></metadata>"
    "<devices><hostdev mode='subsystem' type='pci'><alias name='ua-other'/></hostdev></devices>"
    "</domain>";
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  gsize len;
  g_autofree char *out = rewrite_ok (doc, strlen (doc), none, &len);

  g_assert_cmpstr (out, ==, doc);
}

/* Damaged inputs fail cleanly or rewrite idempotently, and never reach
 * an internal error (the scanner must agree with libxml2). */
static void
test_mutations (void)
{
  static const char subst[] = "<>'\"&/:= \n-?!x";
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "domain", "rewrite", "ports.xml", NULL);
  g_autofree char *dpath = g_build_filename (VPA_TEST_DATA, "domain", "rewrite", "ports.decisions", NULL);
  g_autoptr (GPtrArray) decisions = read_decisions (dpath);
  g_autofree char *in = NULL;
  gsize in_len;
  guint ok = 0, failed = 0;

  in = vpa_test_read_fixture (path, &in_len);
  for (gsize pos = 0; pos < in_len; pos += 6)
    {
      for (guint k = 0; k < sizeof subst; k++)
        {
          g_autofree char *m = g_memdup2 (in, in_len + 1);
          g_autoptr (GError) error = NULL;
          g_autofree char *out = NULL;
          gsize len = in_len, out_len = 0;

          /* the last variant truncates */
          if (k == sizeof subst - 1)
            {
              len = pos;
            }
          else
            {
              m[pos] = subst[k];
            }
          out = vpa_rewrite_domain (&(VpaDoc){ m, len, "m.xml" }, decisions, &out_len, &error);
          g_assert_true ((out == NULL) == (error != NULL));
          if (out == NULL)
            {
              g_assert_null (strstr (error->message, "internal error"));
              failed++;
              continue;
            }
          {
            g_autofree char *again = vpa_rewrite_domain (&(VpaDoc){ out, out_len, "m.xml" }, decisions, &len, &error);
            g_assert_no_error (error);
            g_assert_cmpstr (again, ==, out);
          }
          ok++;
        }
    }
  g_assert_cmpuint (ok, >, 0);
  g_assert_cmpuint (failed, >, 0);
}

/* A domain at the document's bounds (VPA_XML_MAX_ELEMENTS and
 * VPA_XML_MAX_ATTRIBUTES_TOTAL exactly) is placed: its output passes the
 * bounds by what the placement adds and is still verified. */
static void
test_at_bounds (void)
{
  g_autoptr (GPtrArray) decisions = make_decisions ("port ua-p 0000:81:10.2 1 required port\n");
  g_autoptr (GString) doc = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL;
  gsize out_len = 0;
  /* 8 elements and 7 attributes (xmlns:vpa counts) */
  guint pad = VPA_XML_MAX_ELEMENTS - 8, attrs = VPA_XML_MAX_ATTRIBUTES_TOTAL - 7;

  g_string_append (doc, "<domain type='kvm'><name>t</name><metadata><vpa:affinity "
                        "xmlns:vpa='" VPA_XMLNS "'><vpa:port device='ua-p' physnet='net1'/>"
                        "</vpa:affinity></metadata><devices><interface type='hostdev' "
                        "managed='yes'><alias name='ua-p'/></interface>\n");
  for (guint i = 0; i < pad; i++)
    {
      guint n = i + 1 < pad ? 4 : attrs - 4 * (pad - 1);

      g_string_append (doc, "<x");
      for (guint a = 0; a < n; a++)
        g_string_append_printf (doc, " a%u='1'", a);
      g_string_append (doc, "/>\n");
    }
  g_string_append (doc, "</devices></domain>\n");
  g_assert_true (vpa_xml_prescan (&(VpaDoc){ doc->str, doc->len, "t.xml" }, &error));
  g_assert_no_error (error);

  out = vpa_rewrite_domain (&(VpaDoc){ doc->str, doc->len, "t.xml" }, decisions, &out_len, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (out, "<vpa:placed device='ua-p' address='0000:81:10.2'"));
  g_assert_false (vpa_xml_prescan (&(VpaDoc){ out, out_len, "out.xml" }, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/rewrite/insert-only-keeps-bytes", test_insert_only_keeps_bytes);
  g_test_add_func ("/rewrite/output-check", test_output_check);
  g_test_add_func ("/rewrite/replace-converges", test_replace_converges);
  g_test_add_func ("/rewrite/nothing-to-do", test_nothing_to_do);
  g_test_add_func ("/rewrite/mutations", test_mutations);
  g_test_add_func ("/rewrite/at-bounds", test_at_bounds);
  /* A case a NAME.decisions: "*.xml" would take the NAME.out.xml outputs too. */
  vpa_test_add_fixture_cases (VPA_TEST_DATA "/domain/rewrite", "*.decisions",
                              "/rewrite/fixture", test_rewrite_fixture);
  return g_test_run ();
}
