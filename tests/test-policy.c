/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include "vpa-policy.h"

/* Host: nodes 0,1 on socket 0, nodes 2,3 on socket 1; with_socketless
 * adds node 4 without a socket id (a memory-only node). */
static VpaHost *
make_host (gboolean with_socketless)
{
  g_autoptr (GError) error = NULL;
  VpaHost *host = vpa_host_new ("test");
  VpaCell cell = { 0 };

  for (gint i = 0; i < 4; i++)
    {
      cell.id = i;
      cell.socket = i / 2;
      cell.cpus = NULL;
      vpa_host_add_cell (host, &cell);
    }
  if (with_socketless)
    {
      cell.id = 4;
      cell.socket = VPA_SOCKET_NONE;
      cell.cpus = NULL;
      vpa_host_add_cell (host, &cell);
    }
  g_assert_true (vpa_host_seal (host, &error));
  g_assert_no_error (error);
  return host;
}

static void
test_resolve_precedence (void)
{
  const VpaPolicy req = VPA_POLICY_REQUIRED, pref = VPA_POLICY_PREFERRED;
  const VpaPolicy sock = VPA_POLICY_SOCKET;
  struct {
    const VpaPolicy *port, *flavor, *image, *alias;
    VpaPolicy want;
    VpaPolicySource source;
  } cases[] = {
    { NULL, NULL, NULL, NULL, VPA_POLICY_LEGACY, VPA_POLICY_SOURCE_DEFAULT },
    { NULL, NULL, NULL, &req, VPA_POLICY_REQUIRED, VPA_POLICY_SOURCE_ALIAS },
    { NULL, NULL, &pref, NULL, VPA_POLICY_PREFERRED, VPA_POLICY_SOURCE_IMAGE },
    { NULL, NULL, &pref, &req, VPA_POLICY_PREFERRED, VPA_POLICY_SOURCE_IMAGE },
    { NULL, &sock, NULL, NULL, VPA_POLICY_SOCKET, VPA_POLICY_SOURCE_FLAVOR },
    { NULL, &sock, NULL, &req, VPA_POLICY_SOCKET, VPA_POLICY_SOURCE_FLAVOR },
    { NULL, &pref, &pref, &req, VPA_POLICY_PREFERRED, VPA_POLICY_SOURCE_FLAVOR },
    { &req, NULL, NULL, NULL, VPA_POLICY_REQUIRED, VPA_POLICY_SOURCE_PORT },
    { &req, &pref, NULL, NULL, VPA_POLICY_REQUIRED, VPA_POLICY_SOURCE_PORT },
    { &req, NULL, &pref, NULL, VPA_POLICY_REQUIRED, VPA_POLICY_SOURCE_PORT },
    { &sock, &pref, &pref, &req, VPA_POLICY_SOCKET, VPA_POLICY_SOURCE_PORT },
    { &pref, NULL, NULL, &req, VPA_POLICY_PREFERRED, VPA_POLICY_SOURCE_PORT },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      VpaPolicy out = VPA_POLICY_LAST;
      VpaPolicySource source = VPA_POLICY_SOURCE_LAST;

      g_assert_true (vpa_policy_resolve (cases[i].port, cases[i].flavor, cases[i].image,
                                         cases[i].alias, &out, &source, &error));
      g_assert_no_error (error);
      g_assert_cmpint (out, ==, cases[i].want);
      g_assert_cmpint (source, ==, cases[i].source);
    }
}

static void
test_resolve_conflict (void)
{
  const VpaPolicy legacy = VPA_POLICY_LEGACY, req = VPA_POLICY_REQUIRED;
  g_autoptr (GError) error = NULL;
  VpaPolicy out;
  VpaPolicySource source;

  /* A port policy does not excuse a flavor/image conflict: Nova rejects
   * the boot before looking at ports. */
  g_assert_false (vpa_policy_resolve (&req, &legacy, &req, NULL, &out, &source, &error));
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==,
                   "image policy 'required' is not permitted to override the flavor "
                   "policy 'legacy'");
}

/* Expected allowed set per policy, as a string of tiers "ASUR" that are
 * allowed (Affine, Socket, Unknown, Remote). */
static gboolean
expect_allowed (const char *set, VpaTier tier)
{
  return strchr (set, "ASUR"[tier]) != NULL;
}

static void
check_matrix (const VpaHost *host, const VpaGuestNodes *guest, const char *const sets[])
{
  for (VpaPolicy p = 0; p < VPA_POLICY_LAST; p++)
    {
      for (VpaTier t = 0; t < VPA_TIER_LAST; t++)
        {
          gboolean want = expect_allowed (sets[p], t);
          if (vpa_policy_allows (p, host, guest, t) != want)
            {
              g_error ("policy %s tier %s: want %s", vpa_policy_to_string (p),
                       vpa_tier_to_string (t), want ? "allowed" : "refused");
            }
        }
    }
}

static void
test_tiers (void)
{
  g_autoptr (VpaHost) host = make_host (FALSE);
  const gint nodes[] = { 0 };
  VpaGuestNodes guest = { TRUE, nodes, 1 };
  VpaGuestNodes plain = { FALSE, NULL, 0 };
  VpaGuestNodes unbound = { TRUE, NULL, 0 };

  g_assert_cmpint (vpa_policy_tier (host, &guest, 0), ==, VPA_TIER_AFFINE);
  g_assert_cmpint (vpa_policy_tier (host, &guest, 1), ==, VPA_TIER_SOCKET);
  g_assert_cmpint (vpa_policy_tier (host, &guest, 2), ==, VPA_TIER_REMOTE);
  g_assert_cmpint (vpa_policy_tier (host, &guest, VPA_NUMA_NONE), ==, VPA_TIER_UNKNOWN);
  /* A node the host does not report is simply remote. */
  g_assert_cmpint (vpa_policy_tier (host, &guest, 999), ==, VPA_TIER_REMOTE);
  g_assert_cmpint (vpa_policy_tier (host, &plain, 3), ==, VPA_TIER_AFFINE);
  g_assert_cmpint (vpa_policy_tier (host, &plain, VPA_NUMA_NONE), ==, VPA_TIER_AFFINE);
  g_assert_cmpint (vpa_policy_tier (host, &unbound, 0), ==, VPA_TIER_REMOTE);
  g_assert_cmpint (vpa_policy_tier (host, &unbound, VPA_NUMA_NONE), ==, VPA_TIER_UNKNOWN);
}

static void
test_allows_matrix (void)
{
  g_autoptr (VpaHost) host = make_host (FALSE);
  const gint nodes[] = { 1, 2 };
  VpaGuestNodes guest = { TRUE, nodes, 2 };
  /* Indexed by VpaPolicy: legacy, required, preferred, socket. */
  const char *const sets[] = { "AU", "A", "ASUR", "AS" };

  check_matrix (host, &guest, sets);
  g_assert_cmpint (vpa_policy_tier (host, &guest, 0), ==, VPA_TIER_SOCKET);
  g_assert_cmpint (vpa_policy_tier (host, &guest, 3), ==, VPA_TIER_SOCKET);
}

static void
test_allows_socketless (void)
{
  g_autoptr (VpaHost) host = make_host (TRUE);
  const gint nodes[] = { 0 };
  VpaGuestNodes guest = { TRUE, nodes, 1 };
  const char *const sets[] = { "AU", "A", "ASUR", "A" };
  g_autofree char *why = NULL;

  check_matrix (host, &guest, sets);
  why = vpa_policy_refusal (VPA_POLICY_SOCKET, host, &guest, 1);
  g_assert_cmpstr (why, ==,
                   "node 1 is not the guest's (0) and host cell 4 has no socket id, "
                   "which disables the socket policy");
}

static void
test_allows_non_numa (void)
{
  g_autoptr (VpaHost) host = make_host (TRUE);
  VpaGuestNodes plain = { FALSE, NULL, 0 };
  const char *const sets[] = { "ASUR", "ASUR", "ASUR", "ASUR" };

  check_matrix (host, &plain, sets);
  for (VpaPolicy p = 0; p < VPA_POLICY_LAST; p++)
    g_assert_null (vpa_policy_refusal (p, host, &plain, 3));
}

static void
test_allows_unbound (void)
{
  g_autoptr (VpaHost) host = make_host (FALSE);
  VpaGuestNodes unbound = { TRUE, NULL, 0 };
  const char *const sets[] = { "ASUR", "", "ASUR", "" };
  g_autofree char *why = NULL;

  check_matrix (host, &unbound, sets);
  why = vpa_policy_refusal (VPA_POLICY_REQUIRED, host, &unbound, 0);
  g_assert_nonnull (strstr (why, "<numatune><memory nodeset="));
  g_assert_nonnull (strstr (why, "<memnode>"));
}

static void
test_refusal_text (void)
{
  g_autoptr (VpaHost) host = make_host (FALSE);
  const gint nodes[] = { 0 };
  VpaGuestNodes guest = { TRUE, nodes, 1 };
  g_autofree char *a = vpa_policy_refusal (VPA_POLICY_REQUIRED, host, &guest, 1);
  g_autofree char *b = vpa_policy_refusal (VPA_POLICY_REQUIRED, host, &guest, VPA_NUMA_NONE);
  g_autofree char *c = vpa_policy_refusal (VPA_POLICY_SOCKET, host, &guest, 2);
  g_autofree char *d = vpa_policy_refusal (VPA_POLICY_SOCKET, host, &guest, VPA_NUMA_NONE);
  g_autofree char *e = vpa_policy_refusal (VPA_POLICY_LEGACY, host, &guest, 1);

  g_assert_cmpstr (a, ==, "node 1 is not the guest's (0)");
  g_assert_cmpstr (b, ==, "no NUMA node (the guest is on 0)");
  g_assert_cmpstr (c, ==, "node 2 is on socket 1, which holds none of the guest's nodes (0)");
  g_assert_cmpstr (d, ==, "no NUMA node (the guest is on 0)");
  g_assert_cmpstr (e, ==, "node 1 is not the guest's (0)");
  g_assert_null (vpa_policy_refusal (VPA_POLICY_SOCKET, host, &guest, 1));
  g_assert_null (vpa_policy_refusal (VPA_POLICY_LEGACY, host, &guest, VPA_NUMA_NONE));
}

/* Steps as "TIERS/FIRST|TIERS/FIRST|..." in the letters of expect_allowed. */
static char *
steps_string (VpaPolicy policy, const VpaHost *host, const VpaGuestNodes *guest)
{
  VpaPolicyStep steps[VPA_POLICY_STEPS_MAX];
  guint n = vpa_policy_steps (policy, host, guest, steps);
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    {
      if (i > 0)
        g_string_append_c (s, '|');
      for (VpaTier t = 0; t < VPA_TIER_LAST; t++)
        {
          if (steps[i].tiers & VPA_TIER_BIT (t))
            g_string_append_c (s, "ASUR"[t]);
        }
      g_string_append_c (s, '/');
      for (VpaTier t = 0; t < VPA_TIER_LAST; t++)
        {
          if (steps[i].first & VPA_TIER_BIT (t))
            g_string_append_c (s, "ASUR"[t]);
        }
    }
  return g_string_free (s, FALSE);
}

static void
test_steps (void)
{
  g_autoptr (VpaHost) host = make_host (FALSE);
  g_autoptr (VpaHost) socketless = make_host (TRUE);
  const gint nodes[] = { 0 };
  VpaGuestNodes guest = { TRUE, nodes, 1 };
  VpaGuestNodes plain = { FALSE, NULL, 0 };
  VpaGuestNodes unbound = { TRUE, NULL, 0 };
  /* Indexed by VpaPolicy: legacy, required, preferred, socket. */
  const char *const want[] = { "A/|AU/", "A/", "A/|AU/|ASUR/AU", "A/|AS/" };

  for (VpaPolicy p = 0; p < VPA_POLICY_LAST; p++)
    {
      g_autofree char *got = steps_string (p, host, &guest);
      g_autofree char *none = steps_string (p, host, &plain);
      g_autofree char *any = steps_string (p, host, &unbound);

      g_assert_cmpstr (got, ==, want[p]);
      g_assert_cmpstr (none, ==, "ASUR/");
      g_assert_cmpstr (any, ==, "ASUR/");
    }
  /* Nova's socket filter gives nothing once a host cell has no socket. */
  {
    g_autofree char *got = steps_string (VPA_POLICY_SOCKET, socketless, &guest);
    g_assert_cmpstr (got, ==, "A/|/");
  }
}

static void
test_truthy (void)
{
  const char *const yes[] = { "1", "t", "T", "true", "True", "on", "ON", "y", "yes", "YES" };
  const char *const no[] = { "0", "false", "off", "no", "", " true", "2", "tru" };

  for (guint i = 0; i < G_N_ELEMENTS (yes); i++)
    g_assert_true (vpa_policy_truthy (yes[i]));
  for (guint i = 0; i < G_N_ELEMENTS (no); i++)
    g_assert_false (vpa_policy_truthy (no[i]));
  g_assert_false (vpa_policy_truthy (NULL));
  g_assert_true (vpa_policy_wants_pf ("type-PF"));
  g_assert_false (vpa_policy_wants_pf ("type-pf"));
  g_assert_false (vpa_policy_wants_pf (NULL));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/policy/resolve/precedence", test_resolve_precedence);
  g_test_add_func ("/policy/resolve/conflict", test_resolve_conflict);
  g_test_add_func ("/policy/tiers", test_tiers);
  g_test_add_func ("/policy/allows/matrix", test_allows_matrix);
  g_test_add_func ("/policy/allows/socketless", test_allows_socketless);
  g_test_add_func ("/policy/allows/non-numa", test_allows_non_numa);
  g_test_add_func ("/policy/allows/unbound", test_allows_unbound);
  g_test_add_func ("/policy/refusal", test_refusal_text);
  g_test_add_func ("/policy/steps", test_steps);
  g_test_add_func ("/policy/truthy", test_truthy);
  return g_test_run ();
}
