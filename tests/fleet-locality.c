/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Locality groups with whole-guest placement for the fleet filter's
 * fit-equals-place run (tests/test-fleet.c): the hosts (the gpu-server
 * sample and hosts tools/vpa-genhost writes with GPUs below PCIe
 * switches) and the domains (<vpa:numa placement="auto"/> with GPU+NIC
 * groups at every level a group may ask for, required and preferred).
 */
#include "fleet-locality.h"

#include <string.h>
#include <glib/gstdio.h>

/* One domain: groups of gpus GPUs and nics ports each, at one level. */
typedef struct {
  const char *name;
  guint cells;  /* guest NUMA cells (0: none written, one cell) */
  guint groups; /* locality groups */
  guint gpus;   /* GPUs per group */
  guint nics;   /* ports per group */
  const char *level;
  gboolean required;
  gboolean frontend; /* the ports ask for the host's second physnet */
} LocScenario;

static const LocScenario scenarios[] = {
  { "switch-required", 0, 1, 1, 1, "switch", TRUE, FALSE },
  { "switch-preferred", 0, 1, 1, 1, "switch", FALSE, FALSE },
  { "switch-required-two-groups", 0, 2, 1, 1, "switch", TRUE, FALSE },
  { "switch-required-two-cells", 2, 2, 1, 1, "switch", TRUE, FALSE },
  { "switch-required-four-gpus", 0, 1, 4, 1, "switch", TRUE, FALSE },
  { "switch-preferred-four-gpus", 0, 1, 4, 1, "switch", FALSE, FALSE },
  { "switch-required-three-groups", 0, 3, 2, 1, "switch", TRUE, FALSE },
  { "switch-required-frontend", 0, 1, 1, 1, "switch", TRUE, TRUE },
  { "root-complex-required", 0, 1, 1, 1, "root-complex", TRUE, FALSE },
  { "root-complex-required-frontend", 0, 1, 1, 1, "root-complex", TRUE, TRUE },
  { "root-complex-preferred-two-nics", 0, 1, 2, 2, "root-complex", FALSE, FALSE },
  { "root-complex-required-two-cells", 2, 2, 2, 1, "root-complex", TRUE, FALSE },
  { "numa-node-required", 0, 1, 2, 1, "numa-node", TRUE, FALSE },
  { "numa-node-required-frontend", 0, 1, 1, 1, "numa-node", TRUE, TRUE },
  { "numa-node-preferred-five-gpus", 0, 1, 5, 1, "numa-node", FALSE, FALSE },
  { "numa-node-required-five-gpus", 0, 1, 5, 1, "numa-node", TRUE, FALSE },
};

static char *
scenario_domain (const LocScenario *s, const char *physnet)
{
  g_autoptr (GString) meta = g_string_new (NULL);
  g_autoptr (GString) devs = g_string_new (NULL);
  g_autoptr (GString) cells = g_string_new (NULL);
  guint vcpus = s->cells > 0 ? 2 * s->cells : 2;

  g_string_append (meta, "<vpa:numa placement=\"auto\"/>\n");
  for (guint g = 0; g < s->groups; g++)
    {
      g_string_append_printf (meta, "<vpa:locality-group name=\"g%u\" level=\"%s\" policy=\"%s\"/>\n",
                              g, s->level, s->required ? "required" : "preferred");
      for (guint d = 0; d < s->gpus; d++)
        {
          g_string_append_printf (meta, "<vpa:device alias=\"GPU\" name=\"ua-gpu%u-%u\" locality-group=\"g%u\"/>\n",
                                  g, d, g);
        }
      for (guint n = 0; n < s->nics; n++)
        {
          g_string_append_printf (meta, "<vpa:port device=\"ua-net%u-%u\" physnet=\"%s\" locality-group=\"g%u\"/>\n",
                                  g, n, physnet, g);
          g_string_append_printf (devs, "<interface type='hostdev' managed='yes'><alias name='ua-net%u-%u'/></interface>\n",
                                  g, n);
        }
    }
  for (guint c = 0; c < s->cells; c++)
    {
      g_string_append_printf (cells, "<cell id='%u' cpus='%u-%u' memory='1048576' unit='KiB'/>\n", c,
                              2 * c, 2 * c + 1);
    }
  return g_strdup_printf ("<domain type='kvm'>\n<name>%s</name>\n<metadata>\n"
                          "<vpa:affinity xmlns:vpa=\"http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0\">\n"
                          "%s</vpa:affinity>\n</metadata>\n"
                          "<memory unit='KiB'>%u</memory>\n<vcpu placement='static'>%u</vcpu>\n"
                          "<os><type arch='x86_64' machine='q35'>hvm</type></os>\n"
                          "%s%s%s<devices>\n%s</devices>\n</domain>\n",
                          s->name, meta->str, 1048576 * MAX (s->cells, 1), vcpus,
                          s->cells > 0 ? "<cpu><numa>\n" : "", cells->str,
                          s->cells > 0 ? "</numa></cpu>\n" : "", devs->str);
}

GPtrArray *
vpa_test_fleet_locality_domains (const char *physnet, const char *frontend)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
    {
      g_ptr_array_add (out, scenario_domain (&scenarios[i],
                                             scenarios[i].frontend ? frontend : physnet));
    }
  return out;
}

/* The hosts tools/vpa-genhost writes for the run: NAME and its
 * arguments. */
static const struct {
  const char *name;
  const char *args;
} generated[] = {
  { "gen-gpu-a", "--vfs 64 --vfs-per-pf 8 --gpus 4 --gpus-per-switch 2 --nodes 2" },
  { "gen-gpu-b", "--vfs 128 --vfs-per-pf 8 --gpus 8 --gpus-per-switch 4 --nodes 4 --sockets 2 "
                 "--cpus-per-node 8 --memory-per-node-mib 16384" },
  { "gen-gpu-c", "--vfs 96 --vfs-per-pf 8 --gpus 6 --gpus-per-switch 2 --nics-per-switch 2 "
                 "--nodes 2 --sockets 1 --held 4 --held-per-domain 2" },
};

const char *
vpa_test_fleet_locality_name (guint i)
{
  return scenarios[i].name;
}

guint
vpa_test_fleet_locality_n_generated (void)
{
  return G_N_ELEMENTS (generated);
}

/* Writes generated host i into dir as NAME.xml and NAME.conf; returns
 * NAME. */
const char *
vpa_test_fleet_locality_generate (guint i, const char *dir)
{
  g_autofree char *tool = g_build_filename (VPA_TEST_DATA, "..", "tools", "vpa-genhost", NULL);
  g_autofree char *xml = g_strdup_printf ("%s/%s.xml", dir, generated[i].name);
  g_autofree char *conf = g_strdup_printf ("%s/%s.conf", dir, generated[i].name);
  g_autofree char *cmd = g_strdup_printf ("python3 %s %s --hostname %s -o %s --conf %s", tool,
                                          generated[i].args, generated[i].name, xml, conf);
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *err = NULL;
  gint status = 0;

  g_assert_true (g_shell_parse_argv (cmd, NULL, &argv, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                               NULL, NULL, NULL, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s: %s", cmd, err);
  return generated[i].name;
}
