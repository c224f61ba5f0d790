/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "vpa-config.h"
#include "vpa-test-util.h"

static VpaConfig *
load_fixture (const char *name, GError **error)
{
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "config", name, NULL);
  gsize len = 0;
  g_autofree char *data = vpa_test_read_fixture (path, &len);

  /* the bare name keeps messages independent of the checkout */
  return vpa_config_load_data (data, len, name, error);
}

static void
test_defaults (void)
{
  g_autoptr (VpaConfig) config = vpa_config_new_default ();
  g_autoptr (VpaConfig) empty = NULL;
  g_autoptr (GError) error = NULL;
  const char *dirs[] = { "/run/libvirt/qemu", "/etc/libvirt/qemu", NULL };

  g_assert_cmpstr (config->path, ==, "(built-in defaults)");
  g_assert_cmpstr (config->inventory_source, ==, "sysfs:/");
  g_assert_true (g_strv_equal ((const char *const *) config->state_dirs, dirs));
  g_assert_cmpuint (config->device_specs->len, ==, 0);
  g_assert_cmpuint (config->aliases->len, ==, 0);
  g_assert_cmpuint (config->tagsets->len, ==, 1);
  g_assert_cmpuint (((GPtrArray *) g_ptr_array_index (config->tagsets, 0))->len, ==, 0);

  empty = load_fixture ("good-empty.conf", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (empty->path, ==, "good-empty.conf");
  g_assert_cmpstr (empty->inventory_source, ==, "sysfs:/");
  g_assert_true (g_strv_equal ((const char *const *) empty->state_dirs, dirs));
  g_assert_cmpuint (empty->device_specs->len, ==, 0);
}

static void
assert_tags (const VpaDeviceSpec *spec, const char *expected)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < spec->tags->len; i++)
    {
      const VpaSpecPair *p = g_ptr_array_index (spec->tags, i);
      g_string_append_printf (s, "%s%s=%s", i ? "," : "", p->key, p->value);
    }
  g_assert_cmpstr (s->str, ==, expected);
}

static void
test_full (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = load_fixture ("good-full.conf", &error);
  const VpaDeviceSpec *spec;
  const VpaAlias *alias;
  const VpaSpec *s;
  const char *dirs[] = { "/run/libvirt/qemu", "/etc/libvirt/qemu", NULL };

  g_assert_no_error (error);
  g_assert_nonnull (config);
  g_assert_cmpstr (config->inventory_source, ==, "sysfs:/");
  g_assert_true (g_strv_equal ((const char *const *) config->state_dirs, dirs));

  g_assert_cmpuint (config->device_specs->len, ==, 4);
  spec = g_ptr_array_index (config->device_specs, 0);
  g_assert_cmpstr (spec->name, ==, "physnet1");
  g_assert_cmpstr (spec->address, ==, "0000:81:00.*");
  g_assert_true (spec->exact_addr == VPA_ADDR_NONE);
  g_assert_cmpint (spec->glob[0], ==, 0);
  g_assert_cmpint (spec->glob[1], ==, 0x81);
  g_assert_cmpint (spec->glob[2], ==, 0);
  g_assert_cmpint (spec->glob[3], ==, -1);
  g_assert_cmpstr (spec->vendor_id, ==, "8086");
  g_assert_cmpstr (spec->product_id, ==, "1889");
  g_assert_null (spec->devname);
  assert_tags (spec, "physical_network=physnet1,trusted=true");
  g_assert_cmpuint (spec->tagset, ==, 1);

  spec = vpa_config_device_spec (config, "physnet2");
  g_assert_nonnull (spec);
  g_assert_cmpstr (spec->devname, ==, "ens2f0");
  g_assert_null (spec->address);
  g_assert_cmpstr (spec->vendor_id, ==, "");
  assert_tags (spec, "physical_network=physnet2,trusted=true");
  g_assert_cmpuint (spec->tagset, ==, 2);

  /* '-' and '_' spell the same tag; equal tag sets share an id */
  spec = vpa_config_device_spec (config, "pf");
  g_assert_true (spec->exact_addr == VPA_ADDR (0, 0x83, 0, 0));
  assert_tags (spec, "physical_network=physnet1,trusted=true");
  g_assert_cmpuint (spec->tagset, ==, 1);

  spec = vpa_config_device_spec (config, "gpu");
  g_assert_cmpstr (spec->vendor_id, ==, "10de");
  g_assert_cmpstr (spec->product_id, ==, "");
  g_assert_cmpint (spec->glob[0], ==, -1);
  g_assert_cmpint (spec->glob[1], ==, 0x3b);
  g_assert_cmpint (spec->glob[2], ==, -1);
  g_assert_cmpint (spec->glob[3], ==, -1);
  g_assert_cmpuint (spec->tagset, ==, 0);
  g_assert_cmpuint (config->tagsets->len, ==, 3);

  g_assert_cmpuint (config->aliases->len, ==, 2);
  alias = vpa_config_alias (config, "QuickAssist");
  g_assert_nonnull (alias);
  g_assert_true (alias->has_policy);
  g_assert_cmpint (alias->policy, ==, VPA_POLICY_REQUIRED);
  g_assert_cmpuint (alias->specs->len, ==, 2);
  s = g_ptr_array_index (alias->specs, 1);
  g_assert_cmpstr (vpa_spec_get (s, "vendor_id", NULL), ==, "8086");
  g_assert_cmpstr (vpa_spec_get (s, "product_id", NULL), ==, "37c8");
  g_assert_cmpstr (vpa_spec_get (s, "dev_type", NULL), ==, "type-PCI");
  g_assert_cmpuint (s->pairs->len, ==, 3);

  /* an empty numa-policy is Nova's default, not a policy of the alias */
  alias = vpa_config_alias (config, "GPU");
  g_assert_false (alias->has_policy);
  g_assert_cmpuint (alias->specs->len, ==, 1);
  s = g_ptr_array_index (alias->specs, 0);
  g_assert_cmpuint (s->pairs->len, ==, 1);
  g_assert_null (vpa_config_alias (config, "gpu"));
}

static void
test_bad (gconstpointer data)
{
  const char *path = data;
  g_autofree char *name = g_path_get_basename (path);
  g_autofree char *stem = g_strndup (path, strlen (path) - strlen (".conf"));
  g_autofree char *errfile = g_strconcat (stem, ".err", NULL);
  g_autofree char *message = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = load_fixture (name, &error);

  g_assert_null (config);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_null (strchr (error->message, '\n'));
  message = g_strdup_printf ("%s\n", error->message);
  vpa_test_assert_golden (errfile, message);
}

static void
test_load_file (void)
{
  g_autofree char *path = g_build_filename (VPA_TEST_DATA, "config", "good-full.conf", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_file (path, &error);
  g_autoptr (VpaConfig) missing = NULL;

  g_assert_no_error (error);
  g_assert_cmpstr (config->path, ==, path);
  missing = vpa_config_load_file ("/nonexistent/vpa.conf", &error);
  g_assert_null (missing);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_true (g_str_has_prefix (error->message, "/nonexistent/vpa.conf: cannot read: "));
}

/* The one lookup of the CLI and the hook: --config, else a non-empty
 * VPA_CONFIG when the caller honours it, else the installed file or the
 * defaults. An empty VPA_CONFIG is as unset (the CLI used to try to open
 * a file named ""). */
static void
test_lookup (void)
{
  g_autofree char *good = g_build_filename (VPA_TEST_DATA, "config", "good-full.conf", NULL);
  g_autofree char *other = g_build_filename (VPA_TEST_DATA, "virt-pci-affinity.conf", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) c = NULL;
  gboolean installed = g_file_test (VPA_CONFIG_DEFAULT_PATH, G_FILE_TEST_EXISTS);

  g_setenv ("VPA_CONFIG", "", TRUE);
  c = vpa_config_lookup (NULL, TRUE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (c);
  {
    g_autoptr (VpaConfig) defaults = vpa_config_new_default ();
    g_assert_cmpstr (c->path, ==, installed ? VPA_CONFIG_DEFAULT_PATH : defaults->path);
  }
  g_clear_pointer (&c, vpa_config_free);

  g_setenv ("VPA_CONFIG", good, TRUE);
  c = vpa_config_lookup (NULL, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (c->path, ==, good);
  g_clear_pointer (&c, vpa_config_free);
  /* Not honoured: the installed file or the defaults, never $VPA_CONFIG. */
  c = vpa_config_lookup (NULL, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (c->path, !=, good);
  g_clear_pointer (&c, vpa_config_free);
  /* An explicit path wins. */
  c = vpa_config_lookup (other, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (c->path, ==, other);
  g_unsetenv ("VPA_CONFIG");
}

static void
test_spec_dict (void)
{
  g_autoptr (VpaSpec) spec = vpa_spec_new ();
  gboolean present = TRUE;

  vpa_spec_set (spec, "physical_network", "physnet1");
  vpa_spec_set (spec, "trusted", NULL);
  g_assert_cmpstr (vpa_spec_get (spec, "physical_network", &present), ==, "physnet1");
  g_assert_true (present);
  g_assert_null (vpa_spec_get (spec, "trusted", &present));
  g_assert_true (present);
  g_assert_null (vpa_spec_get (spec, "dev_type", &present));
  g_assert_false (present);
  vpa_spec_set (spec, "physical_network", "physnet2");
  g_assert_cmpstr (vpa_spec_get (spec, "physical_network", NULL), ==, "physnet2");
  g_assert_cmpuint (spec->pairs->len, ==, 2);

  g_assert_true (vpa_spec_value_match ("10DE", "10de"));
  g_assert_true (vpa_spec_value_match ("True", "true"));
  g_assert_false (vpa_spec_value_match ("physnet1", "physnet2"));
  g_assert_true (vpa_spec_value_match (NULL, NULL));
  g_assert_false (vpa_spec_value_match (NULL, "physnet1"));
  g_assert_false (vpa_spec_value_match ("physnet1", NULL));
}

/* ------------------------------------------------------------------ */

/* PF 81:00.0 (ens1f0) with VFs 81:10.0 (ens1f0v0) and 81:10.2, PF 83:00.0
 * (ens2f0) with VF 83:10.0, a GPU at 3b:00.0. */
static VpaHost *
make_host (void)
{
  VpaHost *host = vpa_host_new ("test");
  VpaAddr pf1 = VPA_ADDR (0, 0x81, 0, 0), pf2 = VPA_ADDR (0, 0x83, 0, 0);
  g_autoptr (GError) error = NULL;

  vpa_test_add_device (host, VPA_ADDR (0, 0x81, 0x10, 2), "8086:1889", VPA_DEV_TYPE_VF, pf1,
                       VPA_NUMA_NONE, NULL);
  vpa_test_add_device (host, VPA_ADDR (0, 0x81, 0x10, 0), "8086:1889", VPA_DEV_TYPE_VF, pf1,
                       VPA_NUMA_NONE, "ens1f0v0");
  vpa_test_add_device (host, pf1, "8086:1593", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, VPA_NUMA_NONE,
                       "ens1f0");
  vpa_test_add_device (host, pf2, "8086:1593", VPA_DEV_TYPE_PF, VPA_ADDR_NONE, VPA_NUMA_NONE,
                       "ens2f0");
  vpa_test_add_device (host, VPA_ADDR (0, 0x83, 0x10, 0), "8086:1889", VPA_DEV_TYPE_VF, pf2,
                       VPA_NUMA_NONE, NULL);
  vpa_test_add_device (host, VPA_ADDR (0, 0x3b, 0, 0), "10de:2236", VPA_DEV_TYPE_PCI,
                       VPA_ADDR_NONE, VPA_NUMA_NONE, NULL);
  g_assert_true (vpa_host_seal (host, &error));
  g_assert_no_error (error);
  return host;
}

/* The name of the spec matching each device in address order, "-" for none. */
static char *
match_all (const char *conf)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_data (conf, strlen (conf), "t.conf", &error);
  g_autoptr (VpaHost) host = make_host ();
  g_autoptr (GString) out = g_string_new (NULL);

  g_assert_no_error (error);
  for (guint i = 0; i < host->devices->len; i++)
    {
      const VpaDeviceSpec *spec = vpa_config_match_device (config, host, i);
      g_string_append_printf (out, "%s%s", i ? " " : "", spec ? spec->name : "-");
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
test_match (void)
{
  struct {
    const char *conf;
    const char *expected; /* 3b:00.0 81:00.0 81:10.0 81:10.2 83:00.0 83:10.0 */
  } cases[] = {
    /* first match wins, even over a more specific later spec */
    { "[device-spec a]\nvendor-id=8086\n[device-spec b]\naddress=0000:81:10.0\n",
      "- a a a a a" },
    { "[device-spec b]\naddress=0000:81:10.0\n[device-spec a]\nvendor-id=8086\n",
      "- a b a a a" },
    { "[device-spec a]\nproduct-id=1889\n", "- - a a - a" },
    { "[device-spec a]\nvendor-id=8086\nproduct-id=1593\n", "- a - - a -" },
    /* a PF's exact address also admits its VFs, a VF's only itself */
    { "[device-spec a]\naddress=0000:81:00.0\n", "- a a a - -" },
    { "[device-spec a]\naddress=0000:81:00.0\nproduct-id=1889\n", "- - a a - -" },
    { "[device-spec a]\naddress=0000:83:10.0\n", "- - - - - a" },
    { "[device-spec a]\naddress=0000:84:00.0\n", "- - - - - -" },
    /* globs */
    { "[device-spec a]\naddress=*:81:*.*\n", "- a a a - -" },
    { "[device-spec a]\naddress=81:10.\n", "- - a a - -" },
    { "[device-spec a]\naddress=:10.2\n", "- - - a - -" },
    { "[device-spec a]\naddress=.0\n", "a a a - a a" },
    { "[device-spec a]\naddress=3B:0.0\n", "a - - - - -" },
    /* devname: the device with that netdev, and a PF's VFs */
    { "[device-spec a]\ndevname=ens1f0\n", "- a a a - -" },
    { "[device-spec a]\ndevname=ens2f0\n", "- - - - a a" },
    { "[device-spec a]\ndevname=ens1f0v0\n", "- - a - - -" },
    { "[device-spec a]\ndevname=ens9\n", "- - - - - -" },
    { "[device-spec a]\ndevname=ens1f0\nvendor-id=10de\n", "- - - - - -" },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *got = match_all (cases[c].conf);
      g_test_message ("case %u: %s", c, cases[c].conf);
      g_assert_cmpstr (got, ==, cases[c].expected);
    }
}

/* Without a device spec nothing is assignable (Nova's empty whitelist). */
static void
test_match_none (void)
{
  g_autoptr (VpaConfig) config = vpa_config_new_default ();
  g_autoptr (VpaHost) host = make_host ();

  for (guint i = 0; i < host->devices->len; i++)
    g_assert_null (vpa_config_match_device (config, host, i));
}

/* A bridge (class 0x06xx) is never assignable, whatever the specs say. */
static void
test_match_bridge (void)
{
  static const char conf[] = "[device-spec all]\naddress=*:*:*.*\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_data (conf, strlen (conf), "t.conf", &error);
  g_autoptr (VpaHost) host = vpa_host_new ("bridges");
  static const guint32 classes[] = { 0x060000, 0x060400, 0x068000, 0x020000, 0x030000 };

  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (classes); i++)
    {
      VpaDevice *dev = vpa_test_add_device (host, VPA_ADDR (0, 0, i + 1, 0), "8086:0001",
                                            VPA_DEV_TYPE_PCI, VPA_ADDR_NONE, VPA_NUMA_NONE,
                                            NULL);
      dev->class_code = classes[i];
    }
  g_assert_true (vpa_host_seal (host, &error));
  for (guint i = 0; i < G_N_ELEMENTS (classes); i++)
    {
      const VpaDevice *dev = vpa_host_device (host, i);
      g_assert_cmpint (vpa_config_match_device (config, host, i) == NULL, ==,
                       (dev->class_code >> 16) == 0x06);
    }
}

/* one-time-use= (Nova's one_time_use): read as Nova reads the tag, kept
 * as a tag normalised to true or false. */
static void
test_one_time_use (void)
{
  static const char conf[] = "[device-spec nvme]\naddress=0000:81:00.0\none-time-use= Yes \n"
                             "[device-spec gpu]\naddress=0000:82:00.0\none_time_use=off\n"
                             "[device-spec nic]\naddress=0000:83:00.0\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaConfig) config = vpa_config_load_data (conf, strlen (conf), "t.conf", &error);

  g_assert_no_error (error);
  g_assert_true (vpa_config_device_spec (config, "nvme")->one_time_use);
  assert_tags (vpa_config_device_spec (config, "nvme"), "one_time_use=true");
  g_assert_false (vpa_config_device_spec (config, "gpu")->one_time_use);
  assert_tags (vpa_config_device_spec (config, "gpu"), "one_time_use=false");
  g_assert_false (vpa_config_device_spec (config, "nic")->one_time_use);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/config/defaults", test_defaults);
  g_test_add_func ("/config/full", test_full);
  g_test_add_func ("/config/load-file", test_load_file);
  g_test_add_func ("/config/lookup", test_lookup);
  g_test_add_func ("/config/spec-dict", test_spec_dict);
  g_test_add_func ("/config/match", test_match);
  g_test_add_func ("/config/match-none", test_match_none);
  g_test_add_func ("/config/match-bridge", test_match_bridge);
  g_test_add_func ("/config/one-time-use", test_one_time_use);

  vpa_test_add_fixture_cases (VPA_TEST_DATA "/config", "bad-*.conf", "/config/bad",
                              test_bad);
  return g_test_run ();
}
