/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `request`: the edits of a domain's requests (xml/vpa-request-edit.c),
 * and the round trip through virDomainSetMetadata on the in-process
 * test:/// driver (virt/vpa-virt-request.c), placed and defined under
 * the define lock as `request ... --place` does. The real daemon's
 * round trip is tests/libvirtd/test-request.sh.
 */
#include <string.h>

#include "vpa-config.h"
#include "vpa-pipeline.h"
#include "vpa-source.h"
#include "vpa-virt-request.h"
#include "vpa-test-util.h"

#define HOST VPA_TEST_DATA "/hosts/dual-socket.xml"
#define CONF VPA_TEST_DATA "/hosts/dual-socket.conf"

static const char plain[] =
  "<domain type='test'><name>vm1</name><memory>1048576</memory>"
  "<os><type>hvm</type></os><devices>"
  "<interface type='hostdev' managed='yes'><alias name='ua-have'/></interface>"
  "</devices></domain>";

static gboolean
apply (const char *xml, VpaRequestEditOp op, const char *name, const char *const *attrs,
       VpaRequestEditResult *res, GError **error)
{
  VpaRequestEdit edit = { op, name, attrs, NULL };

  return vpa_request_edit_apply (&(VpaDoc){ xml, strlen (xml), "domain 'vm1'" }, &edit, res, error);
}

/* add-port on a domain without <vpa:affinity>: the element is created,
 * the port gets an <interface> (only when it has none), and the element
 * is as virDomainSetMetadata takes it (no namespace of its own). */
static void
test_edit_add_port (void)
{
  const char *const attrs[] = { "physnet", "physnet2", "policy", "required", NULL };
  g_auto (VpaRequestEditResult) res = { 0 };
  g_auto (VpaRequestEditResult) have = { 0 };
  g_autoptr (GError) error = NULL;

  g_assert_true (apply (plain, VPA_REQUEST_EDIT_ADD_PORT, "ua-new", attrs, &res, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (res.affinity, ==,
                   "<affinity>\n  <port device=\"ua-new\" physnet=\"physnet2\" policy=\"required\"/>\n</affinity>");
  g_assert_true (res.added_device);
  g_assert_nonnull (strstr (res.document, "<interface type=\"hostdev\" managed=\"yes\">"));
  g_assert_nonnull (strstr (res.document, "<alias name=\"ua-new\"/>"));

  g_assert_true (apply (plain, VPA_REQUEST_EDIT_ADD_PORT, "ua-have", NULL, &have, &error));
  g_assert_false (have.added_device);
}

/* What does not apply is refused naming the element and value; so is an
 * edit that leaves requests the parser refuses (checked as the hook
 * would read them). */
static void
test_edit_refused (void)
{
  static const struct {
    VpaRequestEditOp op;
    const char *name;
    const char *attrs[3];
    const char *message;
  } cases[] = {
    { VPA_REQUEST_EDIT_REMOVE, "ua-none", { NULL }, "domain 'vm1': no <vpa:port device='ua-none'> and no flavor alias 'ua-none' to remove" },
    { VPA_REQUEST_EDIT_ADD_PORT, "ua-have", { "vnic-type", "macvtap", NULL }, "domain 'vm1': <vpa:port device='ua-have'> vnic-type='macvtap': unknown vnic type (expected direct, direct-physical or normal)" },
    { VPA_REQUEST_EDIT_SET_NUMA, NULL, { "bogus", "1", NULL }, "domain 'vm1': <vpa:numa>: unknown attribute 'bogus'" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto (VpaRequestEditResult) res = { 0 };
      g_autoptr (GError) error = NULL;

      g_assert_false (apply (plain, cases[i].op, cases[i].name, cases[i].attrs, &res, &error));
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
      g_assert_cmpstr (error->message, ==, cases[i].message);
      g_assert_null (res.document);
    }
}

/* add-alias twice, remove: the flavor's list and the alias's records. */
static void
test_edit_alias (void)
{
  g_auto (VpaRequestEditResult) one = { 0 };
  g_auto (VpaRequestEditResult) two = { 0 };
  g_auto (VpaRequestEditResult) gone = { 0 };
  g_auto (VpaRequestEditResult) again = { 0 };
  g_autoptr (GError) error = NULL;

  g_assert_true (apply (plain, VPA_REQUEST_EDIT_ADD_ALIAS, "GPU:1", NULL, &one, &error));
  g_assert_true (apply (one.document, VPA_REQUEST_EDIT_ADD_ALIAS, "QuickAssist:2", NULL, &two,
                        &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (two.affinity, "<flavor aliases=\"GPU:1,QuickAssist:2\"/>"));
  g_assert_false (apply (two.document, VPA_REQUEST_EDIT_ADD_ALIAS, "GPU:3", NULL, &again, &error));
  g_assert_cmpstr (error->message, ==,
                   "domain 'vm1': <vpa:flavor aliases> already asks for alias 'GPU' (remove it first)");
  g_clear_error (&error);
  g_assert_true (apply (two.document, VPA_REQUEST_EDIT_REMOVE, "GPU", NULL, &gone, &error));
  g_assert_nonnull (strstr (gone.affinity, "<flavor aliases=\"QuickAssist:2\"/>"));
}

static virConnectPtr
open_rw (void)
{
  g_autoptr (GError) error = NULL;
  virConnectPtr conn = vpa_virt_open ("test://" HOST, FALSE, &error);

  g_assert_no_error (error);
  return conn;
}

static void
edit_ok (virConnectPtr conn, VpaRequestEditOp op, const char *name, const char *const *attrs,
         VpaRequestEditResult *res)
{
  g_autoptr (GError) error = NULL;
  VpaRequestEdit edit = { op, name, attrs, NULL };

  vpa_virt_request_edit (conn, NULL, "web1", &edit, res, &error);
  g_assert_no_error (error);
}

static char *
config_xml (virConnectPtr conn)
{
  g_autoptr (virDomain) dom = virDomainLookupByName (conn, "web1");

  return virDomainGetXMLDesc (dom, VIR_DOMAIN_XML_INACTIVE);
}

/* On test:///: each edit is in the persistent definition (show reads
 * it back), the live domain is not touched, remove takes it out. */
static void
test_virt_round_trip (void)
{
  g_autoptr (virConnect) conn = open_rw ();
  const char *const port[] = { "physnet", "physnet2", "policy", "preferred", NULL };
  const char *const numa[] = { "placement", "auto", "cpu-policy", "shared", NULL };
  g_auto (VpaRequestEditResult) a = { 0 };
  g_auto (VpaRequestEditResult) b = { 0 };
  g_auto (VpaRequestEditResult) c = { 0 };
  g_auto (VpaRequestEditResult) d = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree char *shown = NULL;
  g_autofree char *after = NULL;
  g_autofree char *xml = NULL;
  g_autoptr (virDomain) dom = virDomainLookupByName (conn, "web1");
  g_autofree char *live = NULL;

  shown = vpa_virt_request_show (conn, NULL, "web1", &error);
  g_assert_cmpstr (shown, ==, "");
  edit_ok (conn, VPA_REQUEST_EDIT_ADD_PORT, "ua-new", port, &a);
  edit_ok (conn, VPA_REQUEST_EDIT_ADD_ALIAS, "QuickAssist:1", NULL, &b);
  edit_ok (conn, VPA_REQUEST_EDIT_SET_NUMA, NULL, numa, &c);
  g_clear_pointer (&shown, g_free);
  shown = vpa_virt_request_show (conn, NULL, "web1", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (shown, ==,
                   "<affinity>\n"
                   "  <port device=\"ua-new\" physnet=\"physnet2\" policy=\"preferred\"/>\n"
                   "  <flavor aliases=\"QuickAssist:1\"/>\n"
                   "  <numa placement=\"auto\" cpu-policy=\"shared\"/>\n"
                   "</affinity>");
  xml = config_xml (conn);
  g_assert_nonnull (strstr (xml, "<vpa:port device=\"ua-new\""));
  live = virDomainGetXMLDesc (dom, 0);
  g_assert_null (strstr (live, "ua-new"));
  edit_ok (conn, VPA_REQUEST_EDIT_REMOVE, "ua-new", NULL, &d);
  after = vpa_virt_request_show (conn, NULL, "web1", &error);
  g_assert_null (strstr (after, "ua-new"));
  g_assert_nonnull (strstr (after, "QuickAssist:1"));
}

typedef struct {
  const char *doc;
} PlaceData;

static char *
place_doc (GPtrArray *claims, gpointer user_data, GError **error)
{
  PlaceData *pd = user_data;
  g_autoptr (VpaConfig) config = vpa_config_load_file (CONF, NULL);

  return vpa_pipeline_place (vpa_source_load ("test://" HOST, NULL), &(VpaPlaceOptions){ .claims = claims, .config = config }, &(VpaDoc){ pd->doc, strlen (pd->doc), "web1" }, NULL, error);
}

/* add-port then place (as --place): the new interface gets a VF no other
 * domain holds, recorded in <vpa:placed>; web1's own devices stay. */
static void
test_virt_place (void)
{
  g_autoptr (virConnect) conn = open_rw ();
  g_autoptr (VpaHost) inventory = vpa_source_load ("test://" HOST, NULL);
  const char *const port[] = { "physnet", "physnet2", NULL };
  g_auto (VpaRequestEditResult) a = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree char *name = NULL;
  g_autofree char *xml = NULL;
  PlaceData pd;

  edit_ok (conn, VPA_REQUEST_EDIT_ADD_PORT, "ua-new", port, &a);
  g_assert_true (a.added_device);
  pd.doc = a.document;
  g_assert_true (vpa_virt_define_placed_full (conn, NULL, inventory, place_doc, &pd, &name,
                                              &error));
  g_assert_no_error (error);
  g_assert_cmpstr (name, ==, "web1");
  xml = config_xml (conn);
  g_test_message ("%s", xml);
  g_assert_nonnull (strstr (xml, "<vpa:placed device=\"ua-new\" address=\"0000:3b:11.1\""));
  g_assert_nonnull (strstr (xml, "<alias name='ua-new'/>"));
  g_assert_nonnull (strstr (xml, "bus='0x3b' slot='0x11' function='0x1'"));
  g_assert_nonnull (strstr (xml, "bus='0x3b' slot='0x11' function='0x0'"));
}

/* A domain virt-install --print-xml wrote (on the test driver), defined
 * as virt-install would, brought under policy by request add-port and
 * place alone. Skipped without virt-install (Debian: virtinst). */
static void
test_virt_install (void)
{
  const char *argv[] = { "virt-install", "--connect", "test:///default", "--print-xml",
                         "--name", "vi1", "--memory", "64", "--vcpus", "1", "--os-variant",
                         "generic", "--virt-type", "test", "--import", "--disk", "none",
                         "--network", "none", "--graphics", "none", "--noautoconsole", NULL };
  g_autoptr (virConnect) conn = NULL;
  g_autoptr (VpaHost) inventory = vpa_source_load ("test://" HOST, NULL);
  g_autoptr (virDomain) dom = NULL;
  const char *const port[] = { "physnet", "physnet1", "policy", "required", NULL };
  VpaRequestEdit edit = { VPA_REQUEST_EDIT_ADD_PORT, "ua-net0", port, NULL };
  g_auto (VpaRequestEditResult) res = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *name = NULL;
  g_autofree char *xml = NULL;
  g_autofree char *vi = g_find_program_in_path ("virt-install");
  int status = 0;
  PlaceData pd;

  if (vi == NULL)
    {
      g_test_skip ("virt-install is not installed (Debian: virtinst)");
      return;
    }
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &out, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_cmpint (status, ==, 0);
  conn = open_rw ();
  dom = virDomainDefineXML (conn, out);
  g_assert_nonnull (dom);
  g_assert_true (vpa_virt_request_edit (conn, NULL, "vi1", &edit, &res, &error));
  g_assert_no_error (error);
  pd.doc = res.document;
  g_assert_true (vpa_virt_define_placed_full (conn, NULL, inventory, place_doc, &pd, &name,
                                              &error));
  g_assert_no_error (error);
  g_assert_cmpstr (name, ==, "vi1");
  xml = virDomainGetXMLDesc (dom, VIR_DOMAIN_XML_INACTIVE);
  g_test_message ("%s", xml);
  g_assert_nonnull (strstr (xml, "<vpa:placed device=\"ua-net0\""));
  g_assert_nonnull (strstr (xml, "<alias name='ua-net0'/>"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/request/edit/add-port", test_edit_add_port);
  g_test_add_func ("/request/edit/refused", test_edit_refused);
  g_test_add_func ("/request/edit/alias", test_edit_alias);
  g_test_add_func ("/request/virt/round-trip", test_virt_round_trip);
  g_test_add_func ("/request/virt/place", test_virt_place);
  g_test_add_func ("/request/virt/virt-install", test_virt_install);
  return g_test_run ();
}
