/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * check --live (virt/vpa-live.c) on a fake /proc and sysfs, with the
 * page query injected: the sampling, the mapping of cells, the vCPU
 * threads and the verdict, without a running guest.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "vpa-live.h"

#define PAGE 4096
#define MIB (1024 * 1024)

/* Two cells of 64 MiB bound to nodes 0 and 1, one vCPU each, and a
 * placed VF on node 1. */
static const char domain_xml[] =
  "<domain type='kvm'><name>g1</name><memory unit='KiB'>131072</memory><vcpu>2</vcpu>"
  "<metadata><vpa:affinity xmlns:vpa='http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0'>"
  "<vpa:placed device='vf0' address='0000:81:00.1' numa-node='1' policy='required' "
  "source='flavor'/></vpa:affinity></metadata>"
  "<numatune><memnode cellid='0' mode='strict' nodeset='0'/>"
  "<memnode cellid='1' mode='strict' nodeset='1'/></numatune>"
  "<cpu><numa><cell id='0' cpus='0' memory='65536' unit='KiB'/>"
  "<cell id='1' cpus='1' memory='65536' unit='KiB'/></numa></cpu></domain>";

/* Cell 0's backend is the higher mapping (made first, mmap goes down). */
#define CELL0 0x7f0000000000ULL
#define CELL1 0x7e0000000000ULL

typedef struct {
  char *root;
  char *proc;
  char *sys;
  /* per cell: how many of each 10 sampled pages are on node 0, on node
   * 1, not resident (the rest) */
  guint on0[2];
  guint on1[2];
  guint period; /* pages in a pattern: 10, or 2 for an exact half */
  guint calls;
  gulong last_count;
  gboolean fail;
} Fake;

static void
write_file (const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *parent = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

/* /proc/PID/task/TID/stat: fields 4-38 zero, field 39 the CPU. */
static char *
stat_line (guint tid, const char *comm, guint cpu)
{
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "%u (%s) R", tid, comm);
  for (guint i = 4; i <= 38; i++)
    g_string_append (s, " 0");
  g_string_append_printf (s, " %u 0 0\n", cpu);
  return g_string_free (s, FALSE);
}

static void
fake_init (Fake *f, const char *maps)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *stat42 = stat_line (42, "qemu-system-x86", 2);
  g_autofree char *stat44 = stat_line (44, "CPU 0/KVM) x", 1);
  g_autofree char *stat45 = stat_line (45, "CPU 1/KVM", 3);

  memset (f, 0, sizeof *f);
  f->root = g_dir_make_tmp ("test-live-XXXXXX", &error);
  g_assert_no_error (error);
  f->proc = g_build_filename (f->root, "proc", NULL);
  f->sys = g_build_filename (f->root, "sys", NULL);
  write_file (f->proc, "42/maps", maps);
  write_file (f->proc, "42/task/42/comm", "qemu-system-x86\n");
  write_file (f->proc, "42/task/42/stat", stat42);
  write_file (f->proc, "43/task/43/comm", "x\n");
  write_file (f->proc, "42/task/44/comm", "CPU 0/KVM\n");
  /* a comm with ") " in it: fields count from the last ')' */
  write_file (f->proc, "42/task/44/stat", stat44);
  write_file (f->proc, "42/task/45/comm", "CPU 1/KVM\n");
  write_file (f->proc, "42/task/45/stat", stat45);
  write_file (f->sys, "devices/system/node/node0/cpulist", "0-1\n");
  write_file (f->sys, "devices/system/node/node1/cpulist", "2-3\n");
  f->period = 10;
  f->on0[0] = 10;
  f->on1[1] = 10;
}

static void
fake_clear (Fake *f)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->root);

  g_assert_cmpint (system (cmd), ==, 0);
  g_free (f->root);
  g_free (f->proc);
  g_free (f->sys);
}

/* Page i of each period in a cell: on node 0 for the first on0, node 1
 * for the next on1, not resident after. */
static int
fake_query (int pid, gulong count, void **pages, int *status, gpointer user_data)
{
  Fake *f = user_data;

  g_assert_cmpint (pid, ==, 42);
  f->calls++;
  f->last_count = count;
  if (f->fail)
    {
      errno = EPERM;
      return -1;
    }
  for (gulong i = 0; i < count; i++)
    {
      guint64 a = GPOINTER_TO_SIZE (pages[i]);
      guint cell = a >= CELL0 ? 0 : 1;
      guint k = i % f->period;

      g_assert_true (a >= CELL1 && (a < CELL1 + 64 * MIB || (a >= CELL0 && a < CELL0 + 64 * MIB)));
      g_assert_cmpuint (a % PAGE, ==, 0);
      status[i] = k < f->on0[cell] ? 0 : k < f->on0[cell] + f->on1[cell] ? 1
                                                                         : -ENOENT;
    }
  return 0;
}

static const char maps_two[] =
  "55d000000000-55d000100000 r-xp 00000000 08:01 123 /usr/bin/qemu-system-x86_64\n"
  "7e0000000000-7e0004000000 rw-p 00000000 00:00 0 \n"
  "7e0004000000-7e0004001000 ---p 00000000 00:00 0 \n"
  "7efff0000000-7efff4000000 rw-p 00000000 08:01 9 /var/lib/some-file\n"
  "7eff00000000-7eff04000000 rwxp 00000000 00:00 0 \n"
  "7f0000000000-7f0004000000 rw-p 00000000 00:00 0 \n"
  "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n";

static VpaLiveReport *
run (Fake *f, GError **error)
{
  g_autoptr (VpaDomain) dom = vpa_domain_parse (&(VpaDoc){ domain_xml, strlen (domain_xml), "g1" }, NULL);
  VpaLiveEnv env = { .proc_root = f->proc, .sysfs_root = f->sys, .page_size = PAGE, .query = fake_query, .query_data = f };

  g_assert_nonnull (dom);
  return vpa_live_check (dom, 42, &env, error);
}

static void
test_on_node (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaLiveReport) r = NULL;
  g_autofree char *text = NULL;
  Fake f;

  fake_init (&f, maps_two);
  r = run (&f, &error);
  g_assert_no_error (error);
  g_assert_true (r->ok);
  g_assert_null (vpa_live_failure (r));
  g_assert_cmpuint (r->cells->len, ==, 2);
  /* Sampling is bounded: 64 MiB of 4 KiB pages is 16384, 1024 asked. */
  g_assert_cmpuint (f.calls, ==, 2);
  g_assert_cmpuint (f.last_count, ==, VPA_LIVE_SAMPLE_MAX);
  text = vpa_live_format (r, "text");
  g_assert_cmpstr (text, ==,
                   "OK: cell 0: bound 0: 1024/1024 sampled pages resident: node 0 100%; vCPUs: "
                   "0 on CPU 1 (node 0); devices on node 1\n"
                   "OK: cell 1: bound 1: 1024/1024 sampled pages resident: node 1 100%; vCPUs: "
                   "1 on CPU 3 (node 1); devices on node 1\n");
  fake_clear (&f);
}

static void
test_off_node (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaLiveReport) r = NULL;
  g_autofree char *json = NULL;
  g_autofree char *om = NULL;
  g_autofree char *failure = NULL;
  const VpaLiveCell *c1;
  Fake f;

  fake_init (&f, maps_two);
  /* cell 1: 6 of 10 on node 0, 4 on its node 1: off */
  f.on0[1] = 6;
  f.on1[1] = 4;
  r = run (&f, &error);
  g_assert_no_error (error);
  g_assert_false (r->ok);
  c1 = g_ptr_array_index (r->cells, 1);
  g_assert_true (c1->off);
  g_assert_false (((VpaLiveCell *) g_ptr_array_index (r->cells, 0))->off);
  g_assert_cmpuint (c1->start, ==, CELL1);
  failure = vpa_live_failure (r);
  g_assert_cmpstr (failure, ==, "cell 1: 60% of 1024 resident sampled pages off bound node 1");
  json = vpa_live_format (r, "json");
  g_assert_nonnull (strstr (json, "{\"cell\": 1, \"ok\": false, \"bound\": [1], \"sampled\": 1024, "
                                  "\"resident\": 1024, \"nodes\": {\"0\": 616, \"1\": 408}"));
  g_assert_nonnull (strstr (json, "\"devices\": [1]"));
  om = vpa_live_format (r, "openmetrics");
  g_assert_nonnull (strstr (om, "virt_pci_affinity_live_cell_off_node{domain=\"g1\",cell=\"1\"} 1\n"));
  g_assert_nonnull (strstr (om, "virt_pci_affinity_live_cell_pages{domain=\"g1\",cell=\"1\",node=\"0\"} 616\n"));
  g_assert_true (g_str_has_suffix (om, "# EOF\n"));
  fake_clear (&f);
}

/* Half off is not mostly off; nothing resident cannot be told: off. */
static void
test_threshold (void)
{
  Fake f;

  fake_init (&f, maps_two);
  f.period = 2;
  f.on0[1] = 1;
  f.on1[1] = 1;
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (VpaLiveReport) r = run (&f, &error);
    g_assert_no_error (error);
    g_assert_true (r->ok);
    g_assert_cmpuint (((VpaLiveCell *) g_ptr_array_index (r->cells, 1))->on_node[0], ==, 512);
  }
  f.on0[1] = 0;
  f.on1[1] = 0;
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (VpaLiveReport) r = run (&f, &error);
    g_assert_no_error (error);
    g_assert_false (r->ok);
    g_autofree char *failure = vpa_live_failure (r);
    g_assert_cmpuint (((VpaLiveCell *) g_ptr_array_index (r->cells, 1))->resident, ==, 0);
    g_assert_cmpstr (failure, ==, "cell 1: none of 1024 sampled pages resident, bound node 1");
  }
  fake_clear (&f);
}

/* Fail closed: no mapping of a cell's size, a query the kernel refuses,
 * a process gone. */
static void
test_fail_closed (void)
{
  g_autoptr (GError) e1 = NULL;
  g_autoptr (GError) e2 = NULL;
  g_autoptr (GError) e3 = NULL;
  g_autoptr (VpaLiveReport) r1 = NULL;
  g_autoptr (VpaLiveReport) r2 = NULL;
  g_autoptr (VpaLiveReport) r3 = NULL;
  Fake f;

  fake_init (&f, "7f0000000000-7f0004000000 rw-p 00000000 00:00 0 \n");
  r1 = run (&f, &e1);
  g_assert_null (r1);
  g_assert_error (e1, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_nonnull (strstr (e1->message, "no mapping of cell 1's memory (65536 KiB)"));
  fake_clear (&f);

  fake_init (&f, maps_two);
  f.fail = TRUE;
  r2 = run (&f, &e2);
  g_assert_null (r2);
  g_assert_error (e2, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_nonnull (strstr (e2->message, "cannot query the nodes of cell 0's pages"));
  g_free (f.proc);
  f.proc = g_build_filename (f.root, "gone", NULL);
  r3 = run (&f, &e3);
  g_assert_null (r3);
  g_assert_error (e3, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  fake_clear (&f);
}

/* The default query is libnuma's move_pages on the real process: this
 * test's own mapping, touched, is resident on a node of this host. */
static void
test_libnuma (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (VpaLiveReport) r = NULL;
  g_autofree char *maps = NULL;
  g_autofree char *pid_maps = g_strdup_printf ("%d/maps", (int) getpid ());
  const char xml[] = "<domain><name>self</name><memory unit='KiB'>4096</memory></domain>";
  gsize size = 4 * MIB;
  char *mem = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  VpaLiveEnv env = { 0 };
  const VpaLiveCell *c;
  Fake f;

  g_assert_true (mem != MAP_FAILED);
  memset (mem, 1, size);
  fake_init (&f, "");
  maps = g_strdup_printf ("%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER
                          "x rw-p 00000000 00:00 0 \n",
                          (guint64) GPOINTER_TO_SIZE (mem), (guint64) GPOINTER_TO_SIZE (mem) + size);
  write_file (f.proc, pid_maps, maps);
  env.proc_root = f.proc;
  env.sysfs_root = f.sys;
  dom = vpa_domain_parse (&(VpaDoc){ xml, strlen (xml), "self" }, &error);
  g_assert_no_error (error);
  r = vpa_live_check (dom, getpid (), &env, &error);
  g_assert_no_error (error);
  c = g_ptr_array_index (r->cells, 0);
  g_assert_cmpuint (c->sampled, ==, size / sysconf (_SC_PAGESIZE));
  g_assert_cmpuint (c->resident, ==, c->sampled);
  /* unbound: reported, never off */
  g_assert_true (r->ok);
  munmap (mem, size);
  fake_clear (&f);
}

static void
test_maps_parse (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) maps = vpa_live_maps_parse (&(VpaDoc){ maps_two, strlen (maps_two), "maps" }, &error);
  g_autoptr (GArray) memfd = NULL;
  g_autoptr (GArray) bad = NULL;
  const char memfd_line[] = "7f0000000000-7f0004000000 rw-s 00000000 00:01 7 /memfd:ram-node0 "
                            "(deleted)\n";

  g_assert_no_error (error);
  /* the two anonymous backends: the file mapping, the stack, the
   * read-only ones and TCG's code buffer (rwx, of a cell's size) are
   * left out */
  g_assert_cmpuint (maps->len, ==, 2);
  g_assert_cmpuint (g_array_index (maps, VpaLiveMapping, 1).start, ==, CELL0);
  memfd = vpa_live_maps_parse (&(VpaDoc){ memfd_line, strlen (memfd_line), "maps" }, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (memfd->len, ==, 1);
  bad = vpa_live_maps_parse (&(VpaDoc){ "garbage\n", 8, "/proc/42/maps" }, &error);
  g_assert_null (bad);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_cmpstr (error->message, ==, "/proc/42/maps: line 1: not a mapping: 'garbage'");
}

static void
test_stat_cpu (void)
{
  gint cpu = -1;
  g_autofree char *line = stat_line (7, "a) b) c", 5);

  g_assert_true (vpa_live_stat_cpu (line, &cpu));
  g_assert_cmpint (cpu, ==, 5);
  g_assert_false (vpa_live_stat_cpu ("7 (a) R 1 2\n", &cpu));
  g_assert_false (vpa_live_stat_cpu ("no paren", &cpu));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/live/on-node", test_on_node);
  g_test_add_func ("/live/off-node", test_off_node);
  g_test_add_func ("/live/threshold", test_threshold);
  g_test_add_func ("/live/fail-closed", test_fail_closed);
  g_test_add_func ("/live/libnuma", test_libnuma);
  g_test_add_func ("/live/maps-parse", test_maps_parse);
  g_test_add_func ("/live/stat-cpu", test_stat_cpu);
  return g_test_run ();
}
