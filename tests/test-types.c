/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include "vpa-types.h"

static void
test_addr_roundtrip (void)
{
  struct {
    const char *in;
    const char *out;
  } ok[] = {
    { "0000:81:00.1", "0000:81:00.1" },
    { "81:10.7", "0000:81:10.7" },
    { "0001:Ab:1f.7", "0001:ab:1f.7" },
    { "10000:00:00.0", "10000:00:00.0" },
  };
  const char *bad[] = { "", "0000:81:00", "0000:81:20.0", "0000:81:00.8",
                        "0000:181:00.0", "zz:00.0", "0000:81:00.1x", NULL };

  for (guint i = 0; i < G_N_ELEMENTS (ok); i++)
    {
      VpaAddr a;
      char buf[VPA_ADDR_BUFLEN];
      g_assert_true (vpa_addr_parse (ok[i].in, &a));
      g_assert_cmpstr (vpa_addr_format (a, buf), ==, ok[i].out);
    }
  for (guint i = 0; bad[i] != NULL; i++)
    {
      VpaAddr a;
      g_assert_false (vpa_addr_parse (bad[i], &a));
    }
  g_assert_cmpuint (VPA_ADDR (0, 0x81, 0, 1), <, VPA_ADDR (0, 0x81, 0x10, 0));
}

/* "No address" is no address: every 32-bit domain is one, none of them
 * equals it, and it is never printed as one. */
static void
test_addr_none (void)
{
  VpaAddr top = VPA_ADDR (G_MAXUINT32, 0xff, 0x1f, 7);
  VpaAddr vmd;
  char buf[VPA_ADDR_BUFLEN];

  g_assert_true (vpa_addr_parse ("ffffffff:ff:1f.7", &vmd));
  g_assert_cmpuint (vmd, ==, top);
  g_assert_true (VPA_ADDR_IS_VALID (top));
  g_assert_cmpuint (top, !=, VPA_ADDR_NONE);
  g_assert_false (VPA_ADDR_IS_VALID (VPA_ADDR_NONE));
  g_assert_cmpstr (vpa_addr_format (top, buf), ==, "ffffffff:ff:1f.7");
  g_assert_cmpstr (vpa_addr_format (VPA_ADDR_NONE, buf), ==, VPA_ADDR_NONE_TEXT);
  g_assert_null (strstr (VPA_ADDR_NONE_TEXT, ":"));
  g_assert_true (vpa_addr_same (top, top));
  g_assert_false (vpa_addr_same (VPA_ADDR_NONE, VPA_ADDR_NONE));
  g_assert_false (vpa_addr_same (VPA_ADDR_NONE, top));
  g_assert_false (vpa_addr_same (top, VPA_ADDR_NONE));
}

static void
test_enums (void)
{
  VpaPolicy p;
  VpaDevType t;

  g_assert_true (vpa_policy_from_string ("socket", &p));
  g_assert_cmpint (p, ==, VPA_POLICY_SOCKET);
  g_assert_false (vpa_policy_from_string ("Required", &p));
  g_assert_true (vpa_dev_type_from_string ("type-VF", &t));
  g_assert_cmpstr (vpa_dev_type_to_string (t), ==, "type-VF");
  g_assert_false (vpa_dev_type_from_string ("vdpa", &t));
}

static void
test_host_seal (void)
{
  g_autoptr (VpaHost) host = vpa_host_new ("test");
  g_autoptr (GError) error = NULL;
  VpaDevice *pf = vpa_device_new ();
  VpaDevice *vf;
  gint pfi;

  pf->addr = VPA_ADDR (0, 0x81, 0, 0);
  pf->dev_type = VPA_DEV_TYPE_PF;
  for (guint i = 0; i < 3; i++)
    {
      vf = vpa_device_new ();
      vf->addr = VPA_ADDR (0, 0x81, 0x10, 2 - i);
      vf->dev_type = VPA_DEV_TYPE_VF;
      vf->parent_addr = pf->addr;
      vpa_host_add_device (host, vf);
    }
  vpa_host_add_device (host, pf);
  g_assert_true (vpa_host_seal (host, &error));
  g_assert_no_error (error);

  pfi = vpa_host_lookup (host, VPA_ADDR (0, 0x81, 0, 0));
  g_assert_cmpint (pfi, ==, 0);
  g_assert_cmpuint (vpa_host_device (host, 0)->vf_indices->len, ==, 3);
  g_assert_cmpint (vpa_host_device (host, 1)->parent_index, ==, 0);
  g_assert_cmpint (vpa_host_lookup (host, VPA_ADDR (0, 0x82, 0, 0)), ==, -1);

  vf = vpa_device_new ();
  vf->addr = VPA_ADDR (0, 0x81, 0x10, 1);
  vpa_host_add_device (host, vf);
  g_assert_false (vpa_host_seal (host, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "0000:81:10.1"));
}

static void
test_cell_socket (void)
{
  gint same[] = { 1, 1, 1 }, mixed[] = { 0, 1 }, offline[] = { 0, -1 };
  g_assert_cmpint (vpa_cell_socket_from_cpu_sockets (same, 3), ==, 1);
  g_assert_cmpint (vpa_cell_socket_from_cpu_sockets (mixed, 2), ==, VPA_SOCKET_NONE);
  g_assert_cmpint (vpa_cell_socket_from_cpu_sockets (offline, 2), ==, VPA_SOCKET_NONE);
  g_assert_cmpint (vpa_cell_socket_from_cpu_sockets (NULL, 0), ==, VPA_SOCKET_NONE);
}

/* Every printed message: one line, control characters escaped, at most
 * the bound in bytes, cut at a character boundary with "…". */
static void
test_message_bound (void)
{
  struct {
    const char *in;
    gsize max;
    const char *out;
  } cases[] = {
    { "plain", 1024, "plain" },
    { "a\nb\tc\rd\x1b[0m", 1024, "a\\nb\\tc\\x0dd\\x1b[0m" },
    { "bad \xff byte", 1024, "bad \\xff byte" },
    { "0123456789", 10, "0123456789" },
    { "0123456789a", 10, "0123456…" },
    { "héhéhéhé", 10, "héhéh…" },         /* never half a character */
    { "\n\n\n\n\n\n", 10, "\\n\\n\\n…" }, /* nor half an escape */
  };
  g_autofree char *huge = g_strnfill (9 * 1024 * 1024, 'x');
  g_autofree char *cut = vpa_message_bound (huge, VPA_MESSAGE_MAX);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *out = vpa_message_bound (cases[i].in, cases[i].max);
      g_assert_cmpstr (out, ==, cases[i].out);
      g_assert_cmpuint (strlen (out), <=, cases[i].max);
    }
  g_assert_cmpuint (strlen (cut), ==, VPA_MESSAGE_MAX);
  g_assert_true (g_str_has_suffix (cut, "x…"));
  /* a table cell: escaped alike, never cut */
  {
    g_autofree char *cell = vpa_message_escape ("evil\tvm\r\x7f");
    g_autofree char *whole = vpa_message_escape (huge);
    g_assert_cmpstr (cell, ==, "evil\\tvm\\x0d\\x7f");
    g_assert_cmpstr (whole, ==, huge);
  }
}

/* The one claims filter: order kept, the excluded domain and, if asked,
 * the domains that are not running left out, copies returned. */
static void
test_claims_filter (void)
{
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  g_autoptr (GPtrArray) all = NULL;
  g_autoptr (GPtrArray) others = NULL;
  g_autoptr (GPtrArray) running = NULL;
  g_autoptr (GPtrArray) none = vpa_claim_filter (NULL, "a", TRUE);

  g_ptr_array_add (claims, vpa_claim_new ("a", VPA_ADDR (0, 0x81, 0, 1), TRUE));
  g_ptr_array_add (claims, vpa_claim_new ("b", VPA_ADDR (0, 0x81, 0, 2), FALSE));
  g_ptr_array_add (claims, vpa_claim_new ("c", VPA_ADDR (0, 0x81, 0, 3), TRUE));
  all = vpa_claim_filter (claims, NULL, FALSE);
  others = vpa_claim_filter (claims, "a", FALSE);
  running = vpa_claim_filter (claims, "a", TRUE);

  g_assert_cmpuint (none->len, ==, 0);
  g_assert_cmpuint (all->len, ==, 3);
  g_assert_true (all->pdata[0] != claims->pdata[0]);
  g_assert_cmpstr (((VpaClaim *) all->pdata[2])->domain, ==, "c");
  g_assert_cmpuint (others->len, ==, 2);
  g_assert_cmpstr (((VpaClaim *) others->pdata[0])->domain, ==, "b");
  g_assert_false (((VpaClaim *) others->pdata[0])->running);
  g_assert_cmpuint (running->len, ==, 1);
  g_assert_cmpuint (((VpaClaim *) running->pdata[0])->addr, ==, VPA_ADDR (0, 0x81, 0, 3));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/types/addr", test_addr_roundtrip);
  g_test_add_func ("/types/addr-none", test_addr_none);
  g_test_add_func ("/types/enums", test_enums);
  g_test_add_func ("/types/host-seal", test_host_seal);
  g_test_add_func ("/types/claims-filter", test_claims_filter);
  g_test_add_func ("/types/cell-socket", test_cell_socket);
  g_test_add_func ("/types/message-bound", test_message_bound);
  return g_test_run ();
}
