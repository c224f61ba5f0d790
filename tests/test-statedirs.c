/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <glib/gstdio.h>
#include "vpa-statedirs.h"
#include "vpa-xml.h"
#include "vpa-domain.h"

static char *
claims_to_string (GPtrArray *claims)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);
      char buf[VPA_ADDR_BUFLEN];
      g_string_append_printf (s, "%s%s %s %s", i ? "\n" : "", c->domain,
                              vpa_addr_format (c->addr, buf),
                              c->running ? "running" : "defined");
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* data/hook/state: a running domain with a hostdev and a network VF, the
 * hooked guest itself, a half-written file, a file that vanished, and a
 * defined domain. */
static void
test_load (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *run = g_build_filename (VPA_TEST_DATA, "hook", "state", "run", NULL);
  g_autofree char *etc = g_build_filename (VPA_TEST_DATA, "hook", "state", "etc", NULL);
  const char *dirs[] = { run, "/nonexistent/qemu", etc, NULL };
  g_autoptr (GPtrArray) claims = vpa_statedirs_load (dirs, "guest", &error);
  g_autofree char *s = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (claims);
  s = claims_to_string (claims);
  g_assert_cmpstr (s, ==,
                   "other 0000:82:10.3 running\n"
                   "other 0000:81:10.1 running\n"
                   "defined 0000:82:10.1 defined");

  /* Without exclusion the guest's own running devices are claims too. */
  g_clear_pointer (&claims, g_ptr_array_unref);
  g_clear_pointer (&s, g_free);
  claims = vpa_statedirs_load (dirs, NULL, &error);
  g_assert_no_error (error);
  s = claims_to_string (claims);
  g_assert_nonnull (strstr (s, "guest 0000:3d:00.0 running"));
  g_assert_cmpuint (claims->len, ==, 5);

  /* Only the files that mention bus 0x81 (the domain "other" holds
   * 81:10.1 and 82:10.3: all of a file's claims come with it). */
  {
    const guint buses[] = { 0x81 };
    const guint none[] = { 0x17 };
    g_clear_pointer (&claims, g_ptr_array_unref);
    g_clear_pointer (&s, g_free);
    claims = vpa_statedirs_load_buses (dirs, "guest", buses, G_N_ELEMENTS (buses), &error);
    g_assert_no_error (error);
    s = claims_to_string (claims);
    g_assert_cmpstr (s, ==, "other 0000:82:10.3 running\nother 0000:81:10.1 running");
    g_clear_pointer (&claims, g_ptr_array_unref);
    claims = vpa_statedirs_load_buses (dirs, "guest", none, G_N_ELEMENTS (none), &error);
    g_assert_no_error (error);
    g_assert_cmpuint (claims->len, ==, 0);
  }
}

static void
test_parse (void)
{
  struct {
    const char *xml;
    gboolean ok;
    const char *claims;
  } cases[] = {
    { "<domain><name>a</name><devices><interface type='hostdev'><source><address "
      "type='pci' domain='0' bus='129' slot='16' function='2'/></source></interface>"
      "<interface type='hostdev'/></devices></domain>",
      TRUE, "a 0000:81:10.2 defined" },
    { "<domstatus><domain><name>b</name><devices><interface type='network'><actual "
      "type='bridge'/></interface><hostdev mode='subsystem' type='pci'><source><address "
      "bus='0x81' slot='0x20' function='0x0'/></source></hostdev></devices></domain></domstatus>",
      TRUE, "" },
    { "<domain><name>c</name></domain>", TRUE, "" },
    /* The one strict address parser: a bare 0X, a sign or a blank is no
     * address (it once read 0X as bus 0), so it claims nothing. */
    { "<domstatus><domain><name>e</name><devices><interface type='network'><actual "
      "type='hostdev'><source><address bus='0X' slot='0x0' function='0x0'/></source></actual>"
      "</interface><interface type='network'><actual type='hostdev'><source><address "
      "bus='+5' slot='0x0' function='0x0'/></source></actual></interface><interface "
      "type='network'><actual type='hostdev'><source><address bus=' 0x5' slot='0x0' "
      "function='0x0'/></source></actual></interface><interface type='network'><actual "
      "type='hostdev'><source><address bus='0x05' slot='0x1' function='0x2'/></source>"
      "</actual></interface></devices></domain></domstatus>",
      TRUE, "e 0000:05:01.2 running" },
    /* an Intel VMD domain is a 32-bit PCI domain, as libvirt reads it */
    { "<domstatus><domain><name>v</name><devices><hostdev mode='subsystem' type='pci'>"
      "<source><address domain='0x10000' bus='0x01' slot='0x00' function='0x0'/></source>"
      "</hostdev></devices></domain></domstatus>",
      TRUE, "v 10000:01:00.0 running" },
    { "<network><name>n</name></network>", FALSE, NULL },
    { "<domain><devices/></domain>", FALSE, NULL },
    { "<domain><name>d</name><devices>", FALSE, NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
      g_autofree char *s = NULL;
      gboolean ok = vpa_statedirs_parse (&(VpaDoc){ cases[i].xml, strlen (cases[i].xml), "s.xml" }, "x", claims, &error);

      g_assert_cmpint (ok, ==, cases[i].ok);
      if (!ok)
        {
          g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
          g_assert_nonnull (strstr (error->message, "s.xml"));
          g_assert_cmpuint (claims->len, ==, 0);
          continue;
        }
      g_assert_no_error (error);
      s = claims_to_string (claims);
      g_assert_cmpstr (s, ==, cases[i].claims);
    }
}

/* A directory that exists but cannot be read must not look empty. */
static void
test_unreadable (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("vpa-statedirs-XXXXXX", &error);
  g_autofree char *file = NULL;
  const char *dirs[] = { NULL, NULL };
  g_autoptr (GPtrArray) claims = NULL;

  g_assert_no_error (error);
  file = g_build_filename (dir, "x.xml", NULL);
  g_assert_true (g_file_set_contents (file, "<domain><name>x</name></domain>", -1, &error));
  dirs[0] = file; /* a file where a directory is expected */
  claims = vpa_statedirs_load (dirs, NULL, &error);
  g_assert_null (claims);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT);
  g_assert_nonnull (strstr (error->message, file));
  g_unlink (file);
  g_rmdir (dir);
}

/* What a domain pins and binds (xml/vpa-numa-claim.c). */
static char *
numa_claim_of (const char *body)
{
  g_autofree char *xml = g_strdup_printf ("<domain type='kvm'><name>d</name>%s</domain>", body);
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (&(VpaDoc){ xml, strlen (xml), "t" }, NULL);
  g_autoptr (VpaClaim) c = NULL;
  g_autoptr (GError) error = NULL;
  GString *s = g_string_new (NULL);

  g_assert_nonnull (doc);
  if (!vpa_numa_claim (xmlDocGetRootElement (doc), "d", TRUE, "t", &c, &error))
    {
      g_string_append (s, error->message);
      return g_string_free (s, FALSE);
    }
  if (c == NULL)
    return g_string_free (s, FALSE);
  g_string_append (s, "cpus");
  for (guint i = 0; i < c->numa->dedicated->len; i++)
    g_string_append_printf (s, " %u", g_array_index (c->numa->dedicated, guint, i));
  if (c->numa->pinned->len > 0)
    g_string_append (s, "; pinned");
  for (guint i = 0; i < c->numa->pinned->len; i++)
    g_string_append_printf (s, " %u", g_array_index (c->numa->pinned, guint, i));
  for (guint i = 0; i < c->numa->memory->len; i++)
    {
      const VpaMemClaim *m = &g_array_index (c->numa->memory, VpaMemClaim, i);
      g_string_append_printf (s, "; node %d page %" G_GUINT64_FORMAT " kib %" G_GUINT64_FORMAT, m->node, m->page_kib, m->kib);
    }
  return g_string_free (s, FALSE);
}

/* The over-bound bodies: one element past each bound. */
static char *
over_bound_body (const char *body)
{
  g_autoptr (GString) s = g_string_new (NULL);

  if (strcmp (body, "@PINS@") == 0)
    {
      g_string_append (s, "<vcpu>4097</vcpu><cputune>");
      for (guint i = 0; i <= 4096; i++)
        g_string_append_printf (s, "<vcpupin vcpu='%u' cpuset='%u'/>", i, i);
      g_string_append (s, "</cputune>");
    }
  else if (strcmp (body, "@CELLS@") == 0 || strcmp (body, "@MEMNODES@") == 0)
    {
      gboolean cells = strcmp (body, "@CELLS@") == 0;
      g_string_append (s, "<cpu><numa>");
      for (guint i = 0; i <= (cells ? 256u : 1u); i++)
        g_string_append_printf (s, "<cell id='%u' cpus='%u' memory='1024'/>", i, i);
      g_string_append (s, "</numa></cpu><numatune>");
      for (guint i = 0; i <= (cells ? 1u : 256u); i++)
        g_string_append_printf (s, "<memnode cellid='%u' mode='strict' nodeset='0'/>", i);
      g_string_append (s, "</numatune>");
    }
  else if (strcmp (body, "@PAGES@") == 0)
    {
      g_string_append (s, "<memoryBacking><hugepages>");
      for (guint i = 0; i <= 256; i++)
        g_string_append_printf (s, "<page size='2048' unit='KiB' nodeset='%u'/>", i);
      g_string_append (s, "</hugepages></memoryBacking>");
    }
  else
    g_string_append (s, body);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static void
test_numa_claims (void)
{
  static const struct {
    const char *body, *want;
  } cases[] = {
    /* every vCPU pinned to one CPU: dedicated */
    { "<vcpu>2</vcpu><cputune><vcpupin vcpu='0' cpuset='4'/><vcpupin vcpu='1' cpuset='5'/></cputune>", "cpus 4 5" },
    /* one vCPU unpinned (it floats), or pinned to a set: not dedicated,
     * but every CPU a pin names is pinned */
    { "<vcpu>2</vcpu><cputune><vcpupin vcpu='0' cpuset='4'/></cputune>", "cpus; pinned 4" },
    { "<vcpu>1</vcpu><cputune><vcpupin vcpu='0' cpuset='4-5'/></cputune>", "cpus; pinned 4 5" },
    /* <vcpu cpuset>: every vCPU without a pin of its own, the emulator
     * and the I/O threads run there */
    { "<vcpu cpuset='8-11'>2</vcpu>", "cpus; pinned 8 9 10 11" },
    { "<vcpu cpuset='8-11'>2</vcpu><cputune><vcpupin vcpu='0' cpuset='4'/></cputune>",
      "cpus; pinned 4 8 9 10 11" },
    /* every thread pinned otherwise: the cpuset applies to none */
    { "<vcpu cpuset='8-11'>1</vcpu><cputune><vcpupin vcpu='0' cpuset='4'/><emulatorpin cpuset='5'/></cputune>",
      "cpus 4; pinned 5" },
    { "<vcpu cpuset='8-11'>1</vcpu><iothreads>1</iothreads><cputune><vcpupin vcpu='0' cpuset='4'/>"
      "<emulatorpin cpuset='5'/></cputune>",
      "cpus 4; pinned 5 8 9 10 11" },
    { "<vcpu>1</vcpu><iothreads>1</iothreads><cputune><iothreadpin iothread='1' cpuset='6-7'/></cputune>",
      "cpus; pinned 6 7" },
    /* <emulatorpin> alone; placement='auto' is numad's choice, no pin */
    { "<vcpu>2</vcpu><cputune><emulatorpin cpuset='2-3'/></cputune>", "cpus; pinned 2 3" },
    { "<vcpu placement='auto' cpuset='8-11'>2</vcpu>", "" },
    /* no pin at all: it floats on the host's CPUs, held by nobody */
    { "<vcpu>4</vcpu>", "" },
    /* range pins for every vCPU */
    { "<vcpu>2</vcpu><cputune><vcpupin vcpu='0' cpuset='0-1'/><vcpupin vcpu='1' cpuset='0-1'/></cputune>",
      "cpus; pinned 0 1" },
    /* ours, shared: its pins are a shared set */
    { "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'><vpa:numa placement='auto' cpu-policy='shared'/></vpa:affinity></metadata>"
      "<vcpu>1</vcpu><cputune><vcpupin vcpu='0' cpuset='4'/></cputune>",
      "" },
    /* ours, dedicated: the emulator's set (isolate's kept siblings) too */
    { "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'><vpa:numa placement='auto' cpu-policy='dedicated'/></vpa:affinity></metadata>"
      "<vcpu>1</vcpu><cputune><vcpupin vcpu='0' cpuset='4'/><emulatorpin cpuset='4,12'/></cputune>",
      "cpus 4 12" },
    /* memory bound strictly to one node; several nodes: not counted */
    { "<memory unit='GiB'>2</memory><numatune><memory mode='strict' nodeset='1'/></numatune>", "cpus; node 1 page 0 kib 2097152" },
    { "<memory unit='GiB'>2</memory><numatune><memory nodeset='0-1'/></numatune>", "" },
    { "<memory unit='GiB'>2</memory><numatune><memory mode='preferred' nodeset='1'/></numatune>", "" },
    /* per cell, in the pages of that cell (a cell no page names: the
     * default hugepage size, as libvirt backs it) */
    { "<memoryBacking><hugepages><page size='1' unit='GiB' nodeset='1'/></hugepages></memoryBacking>"
      "<numatune><memnode cellid='0' mode='strict' nodeset='0'/><memnode cellid='1' mode='strict' nodeset='1'/></numatune>"
      "<cpu><numa><cell id='0' cpus='0' memory='1' unit='GiB'/><cell id='1' cpus='1' memory='2' unit='GiB'/></numa></cpu>",
      "cpus; node 0 page 2048 kib 1048576; node 1 page 1048576 kib 2097152" },
    /* bounded as a domain on stdin is: over a bound, what it holds
     * cannot be known */
    { "@PINS@", "t: <cputune> has more than 4096 <vcpupin> elements: the CPUs and memory it holds cannot be read" },
    { "@CELLS@", "t: <cpu><numa> has more than 256 <cell> elements: the CPUs and memory it holds cannot be read" },
    { "@MEMNODES@", "t: <numatune> has more than 256 <memnode> elements: the CPUs and memory it holds cannot be read" },
    { "@PAGES@", "t: <hugepages> has more than 256 <page> elements: the CPUs and memory it holds cannot be read" },
    /* <hugepages/> alone: the default 2 MiB pages */
    { "<memory unit='MiB'>512</memory><memoryBacking><hugepages/></memoryBacking><numatune><memory nodeset='0'/></numatune>", "cpus; node 0 page 2048 kib 524288" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *body = over_bound_body (cases[i].body);
      g_autofree char *got = numa_claim_of (body);
      g_assert_cmpstr (got, ==, cases[i].want);
    }
}

/* The device a file claims, in one of the ways XML can write it. */
static const char *const address_forms[] = {
  "domain='0x0000' bus='0x@X@' slot='0x01' function='0x2'",
  "domain=\"0x0000\" bus=\"0x@X@\" slot=\"0x01\" function=\"0x2\"",
  "bus='0x@X@' function='2' slot='1'",
  "domain='0' bus='@D@' slot='1' function='2'",
  "domain='0X0000' bus='0X@XU@' slot='0X01' function='0X2'",
  "domain = '0x0000'\n bus\t=\n'0x@X@' slot='0x01' function='0x2'",
  "domain='0x0000' bus='0x00@X@' slot='0x01' function='0x2'",
  "domain='0x0000' bus='&#x30;x%02x' slot='0x01' function='0x2'",
  "domain='0x0000' bus='0x@X@' slot='0x01' function='&#50;'",
  "xmlns:q='urn:q' q:bus='0x@X@' slot='0x01' function='0x2'",
  "xmlns:q='urn:q' q:bus='0x77' bus='0x@X@' slot='0x01' function='0x2'",
  "domain='0x0000' bus=' 0x@X@' slot='0x01' function='0x2'",
  "domain='0x0000' bus='0x@X@' bus='0x@X@' slot='0x01' function='0x2'",
};

/* The documents around it: libvirt's, and those whose bytes do not show
 * what the parser reads (@EL@ is the device element). */
static const char *const document_forms[] = {
  "<!--\nWARNING: THIS IS AN AUTO-GENERATED FILE.\n-->\n<domain type='kvm'><name>d</name>"
  "<devices><disk><target dev='vda' bus='virtio'/><address type='drive' bus='0' unit='0'/>"
  "</disk>@EL@</devices></domain>\n",
  "<domstatus state='running'><domain type='kvm'><name>d</name><devices>@EL@</devices>"
  "</domain></domstatus>\n",
  "<?xml version='1.0' encoding='UTF-8'?>\n<domain><name>d</name><devices>@EL@</devices>"
  "</domain>\n",
  "<?xml version='1.0' encoding='ISO-8859-1'?>\n<domain><name>d</name><devices>@EL@</devices>"
  "</domain>\n",
  "<!DOCTYPE domain [<!ATTLIST address bus CDATA '0x42'>]>\n<domain><name>d</name>"
  "<devices>@EL@</devices></domain>\n",
  "<domain><name>d</name><devices><!-- <hostdev type='pci'><source><address bus='0x42' "
  "slot='0x01' function='0x2'/></source></hostdev> -->@EL@</devices></domain>\n",
  "<domain><name>d</name><description><![CDATA[<address bus='0x42' slot='1' function='2'/>]]>"
  "</description><devices>@EL@</devices></domain>\n",
  "<domain><name>d</name><devices><controller type='usb'><alias name='usb'/><address "
  "type='pci' domain='0x0000' bus='0x42' slot='0x01' function='0x2'/></controller>@EL@"
  "<interface type='bridge'><source bridge='br0'/><address type='pci' bus='0x42' slot='1' "
  "function='2'/></interface></devices></domain>\n",
  "<domain><name>d</name><devices><controller type='usb'><address type='pci' bus='0x42' "
  "slot='1' function='2'/></controller><!-- c -->@EL@</devices></domain>\n",
};

static char *
fill_address (const char *form, guint bus)
{
  g_autoptr (GString) s = g_string_new (form);
  g_autofree char *x = g_strdup_printf ("%02x", bus);
  g_autofree char *xu = g_strdup_printf ("%02X", bus);
  g_autofree char *d = g_strdup_printf ("%u", bus);

  g_string_replace (s, "@XU@", xu, 0);
  g_string_replace (s, "@X@", x, 0);
  g_string_replace (s, "@D@", d, 0);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static gboolean
claims_one_of (const char *doc, const VpaAddr *addrs, guint n)
{
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);

  if (!vpa_statedirs_parse (&(VpaDoc){ doc, strlen (doc), "t.xml" }, NULL, claims, NULL))
    return FALSE;
  for (guint i = 0; i < claims->len; i++)
    {
      for (guint j = 0; j < n; j++)
        {
          if (((const VpaClaim *) g_ptr_array_index (claims, i))->addr == addrs[j])
            return TRUE;
        }
    }
  return FALSE;
}

/* vpa_statedirs_may_name, timed: it is one forward pass over the bytes,
 * so each input must take at most 20 ms plus 100 ns a byte (a search
 * back from every candidate took 23 s on 3.6 MB); the best of three
 * runs counts, as the machine may be busy. Under valgrind or a
 * sanitizer the figures are the tool's: not judged. */
static gboolean
timed_may_name (const char *doc, gsize len, const VpaAddr *addrs, guint n)
{
  gboolean wrapped = g_getenv ("VPA_TEST_WRAPPER") != NULL || g_getenv ("ASAN_OPTIONS") != NULL;
  gint64 bound = 20000 + (gint64) len / 10;
  gint64 us = G_MAXINT64;
  gboolean may = FALSE;

  for (guint run = 0; run < 3 && us > bound; run++)
    {
      gint64 t0 = g_get_monotonic_time ();
      may = vpa_statedirs_may_name (doc, len, addrs, n);
      us = MIN (us, g_get_monotonic_time () - t0);
    }
  if (!wrapped && us > bound)
    {
      g_error ("vpa_statedirs_may_name took %" G_GINT64_FORMAT " us on %" G_GSIZE_FORMAT " bytes",
               us, len);
    }
  return may;
}

/* vpa_statedirs_may_name never says FALSE for a file the parser reads a
 * claim on one of the addresses from, whatever the address's and the
 * document's form; and it says FALSE for libvirt's files that name
 * other devices, or the same device on another bus, which is what makes
 * the hook's fast path fast. */
static void
test_may_name (void)
{
  const guint buses[] = { 0x42, 0x43, 0x00 };
  const VpaAddr mine[] = { VPA_ADDR (0, 0x42, 1, 2), VPA_ADDR (0, 0x80, 0, 0) };
  guint checked = 0, parsed = 0;

  for (guint d = 0; d < G_N_ELEMENTS (document_forms); d++)
    {
      for (guint a = 0; a < G_N_ELEMENTS (address_forms); a++)
        {
          for (guint b = 0; b < G_N_ELEMENTS (buses); b++)
            {
              for (guint kind = 0; kind < 3; kind++)
                {
                  g_autofree char *attrs = fill_address (address_forms[a], buses[b]);
                  g_autofree char *el = g_strconcat (
                    kind == 0   ? "<hostdev mode='subsystem' type='pci'><source><address "
                    : kind == 1 ? "<interface type='hostdev'><source><address type='pci' "
                                : "<interface type='network'><actual type='hostdev'><source><address type='pci' ",
                    attrs,
                    kind == 0   ? "/></source></hostdev>"
                    : kind == 1 ? "/></source></interface>"
                                : "/></source></actual></interface>",
                    NULL);
                  g_autoptr (GString) docs = g_string_new (document_forms[d]);
                  const char *doc;

                  g_string_replace (docs, "@EL@", el, 0);
                  doc = docs->str;
                  gboolean claims = claims_one_of (doc, mine, G_N_ELEMENTS (mine));
                  gboolean may = timed_may_name (doc, strlen (doc), mine, G_N_ELEMENTS (mine));

                  if (claims && !may)
                    g_error ("a claim the scan misses: %s", doc);
                  /* libvirt's files, in libvirt's form, on another bus: no parse */
                  if (d < 2 && a == 0 && buses[b] != 0x42 && may)
                    g_error ("a file parsed for nothing: %s", doc);
                  checked++;
                  parsed += may;
                }
            }
        }
    }
  g_assert_cmpuint (parsed, <, checked);

  {
    const char *doc = "<!--\nWARNING\n-->\n<domain><name>d</name><devices>"
                      "<controller type='pci'><address type='pci' domain='0x0000' bus='0x42' "
                      "slot='0x01' function='0x3'/></controller>"
                      "<hostdev mode='subsystem' type='pci'><source><address domain='0x0000' "
                      "bus='0x43' slot='0x01' function='0x2'/></source></hostdev>"
                      "<disk><target bus='virtio'/></disk></devices></domain>\n";
    const char *named = "<domain><name>d</name><devices><hostdev mode='subsystem' type='pci'>"
                        "<source><address domain='0x0000' bus='0x80' slot='0x00' "
                        "function='0x0'/></source></hostdev></devices></domain>";
    const char *utf16 = "\xff\xfe<\0d\0";
    /* "<!--->" opens a comment; the "-->" it overlaps does not end it */
    const char *arrow = "<domain><name>d</name><devices><!---> <![CDATA[ -->"
                        "<hostdev mode='subsystem' type='pci'><source><address domain='0x0000' "
                        "bus='0x42' slot='0x01' function='0x2'/></source></hostdev><!-- ]]> -->"
                        "</devices></domain>";

    /* a guest address equal to one of the devices, outside any <source> */
    const char *guest = "<!--\nWARNING\n-->\n<domain><name>d</name><devices>"
                        "<controller type='usb'><alias name='usb'/><address type='pci' "
                        "domain='0x0000' bus='0x42' slot='0x01' function='0x2'/></controller>"
                        "<interface type='bridge'><source bridge='br0'/><model type='virtio'/>"
                        "<address type='pci' domain='0x0000' bus='0x42' slot='0x01' "
                        "function='0x2'/></interface></devices></domain>\n";
    const char *guest_comment = "<domain><name>d</name><devices><!-- a comment -->"
                                "<controller type='usb'><alias name='usb'/><address "
                                "type='pci' domain='0x0000' bus='0x42' slot='0x01' "
                                "function='0x2'/></controller></devices></domain>\n";
    const char *in_source = "<domain><name>d</name><devices><hostdev mode='subsystem' "
                            "type='pci'><source><address domain='0x0000' bus='0x42' "
                            "slot='0x01' function='0x2'/></source></hostdev><!-- c -->"
                            "</devices></domain>\n";

    g_assert_false (vpa_statedirs_may_name (doc, strlen (doc), mine, G_N_ELEMENTS (mine)));
    g_assert_false (vpa_statedirs_may_name (guest, strlen (guest), mine, G_N_ELEMENTS (mine)));
    g_assert_false (vpa_statedirs_may_name (guest_comment, strlen (guest_comment), mine,
                                            G_N_ELEMENTS (mine)));
    g_assert_true (vpa_statedirs_may_name (in_source, strlen (in_source), mine,
                                           G_N_ELEMENTS (mine)));
    g_assert_true (vpa_statedirs_may_name (named, strlen (named), mine, G_N_ELEMENTS (mine)));
    g_assert_true (vpa_statedirs_may_name (utf16, 6, mine, G_N_ELEMENTS (mine)));
    g_assert_true (claims_one_of (arrow, mine, G_N_ELEMENTS (mine)));
    g_assert_true (vpa_statedirs_may_name (arrow, strlen (arrow), mine, G_N_ELEMENTS (mine)));
  }
  {
    const VpaAddr vmd[] = { VPA_ADDR (0x10000, 0x01, 0, 0) };
    const char *doc = "<domain><name>d</name><devices><hostdev mode='subsystem' type='pci'>"
                      "<source><address domain='0x10000' bus='0x01' slot='0x00' "
                      "function='0x0'/></source></hostdev></devices></domain>";

    g_assert_true (vpa_statedirs_may_name (doc, strlen (doc), vmd, G_N_ELEMENTS (vmd)));
  }
}

/* The inputs that made the scan quadratic: a description repeating
 * " bus=x" 600 000 times, 20 000 sibling guest <address>es equal to one
 * of the devices, and the same siblings where one is inside a <source>.
 * Each against the parser, and timed. */
static void
test_may_name_linear (void)
{
  const VpaAddr mine[] = { VPA_ADDR (0, 0x42, 1, 2), VPA_ADDR (0, 0x80, 0, 0) };
  const char *head = "<domain><name>d</name>";
  const char *other = "<hostdev mode='subsystem' type='pci'><source><address domain='0x0000' "
                      "bus='0x43' slot='0x01' function='0x2'/></source></hostdev>";
  const char *sibling = "<address type='pci' domain='0x0000' bus='0x42' slot='0x01' "
                        "function='0x2'/>";
  for (guint kind = 0; kind < 3; kind++)
    {
      g_autoptr (GString) doc = g_string_new (head);
      gboolean want = kind == 2;

      if (kind == 0)
        {
          g_string_append (doc, "<description>");
          for (guint i = 0; i < 600000; i++)
            g_string_append (doc, " bus=x");
          g_string_append (doc, "</description><devices>");
        }
      else
        {
          g_string_append (doc, kind == 1 ? "<devices><controller type='usb'>"
                                          : "<devices><hostdev mode='subsystem' type='pci'><source>");
          for (guint i = 0; i < 20000; i++)
            g_string_append (doc, sibling);
          g_string_append (doc, kind == 1 ? "</controller>" : "</source></hostdev>");
        }
      g_string_append_printf (doc, "%s</devices></domain>\n", other);
      g_assert_cmpint (claims_one_of (doc->str, mine, G_N_ELEMENTS (mine)), ==, want);
      g_assert_cmpint (timed_may_name (doc->str, doc->len, mine, G_N_ELEMENTS (mine)), ==, want);
    }
}

/* defined_only skips exactly the files whose root the parser reads as
 * <domstatus>: a running domain's. Every other file, however its bytes
 * start, is judged as before. */
static void
test_defined_only (void)
{
  const char *dev = "<devices><hostdev mode='subsystem' type='pci'><source><address "
                    "domain='0x0000' bus='0x81' slot='0x10' function='0x1'/></source></hostdev>"
                    "</devices>";
  struct {
    const char *name;
    const char *head;
    const char *tail;
    gboolean running; /* the parser's verdict */
  } files[] = {
    { "a.xml", "<domstatus state='running'>\n<domain><name>a</name>", "</domain></domstatus>",
      TRUE },
    { "b.xml", "<?xml version='1.0'?>\n<!-- status -->\n<domstatus\tstate='running'><domain><name>b</name>",
      "</domain></domstatus>", TRUE },
    /* a definition whose header comment names <domstatus> */
    { "c.xml", "<!-- not a <domstatus> -->\n<domain><name>c</name>", "</domain>", FALSE },
    /* a root that only begins like it */
    { "d.xml", "<domstatusx><domain><name>d</name>", "</domain></domstatusx>", FALSE },
    { "e.xml", "<domain><name>e</name><!-- <domstatus> -->", "</domain>", FALSE },
  };
  g_autofree char *dir = g_dir_make_tmp ("vpa-statedirs-XXXXXX", NULL);
  const char *dirs[] = { dir, NULL };
  const VpaAddr addr = VPA_ADDR (0, 0x81, 0x10, 1);
  VpaStatedirsQuery q = { dirs, NULL, NULL, 0, FALSE, NULL, &addr, 1, FALSE };
  g_autoptr (GPtrArray) all = NULL;
  g_autoptr (GPtrArray) defined = NULL;
  g_autoptr (GError) error = NULL;
  guint n_defined = 0;

  g_assert_nonnull (dir);
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path = g_build_filename (dir, files[i].name, NULL);
      g_autofree char *text = g_strconcat (files[i].head, dev, files[i].tail, NULL);
      g_assert_true (g_file_set_contents (path, text, -1, NULL));
      n_defined += !files[i].running;
    }
  all = vpa_statedirs_query (&q, &error);
  g_assert_no_error (error);
  q.defined_only = TRUE;
  defined = vpa_statedirs_query (&q, &error);
  g_assert_no_error (error);
  /* d.xml does not parse as a domain: it claims nothing either way */
  g_assert_cmpuint (all->len, ==, G_N_ELEMENTS (files) - 1);
  g_assert_cmpuint (defined->len, ==, n_defined - 1);
  for (guint i = 0; i < defined->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (defined, i);
      g_assert_false (c->running);
      g_assert_cmpuint (c->addr, ==, addr);
    }
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path = g_build_filename (dir, files[i].name, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/statedirs/load", test_load);
  g_test_add_func ("/statedirs/parse", test_parse);
  g_test_add_func ("/statedirs/unreadable", test_unreadable);
  g_test_add_func ("/statedirs/numa-claims", test_numa_claims);
  g_test_add_func ("/statedirs/may-name", test_may_name);
  g_test_add_func ("/statedirs/may-name-linear", test_may_name_linear);
  g_test_add_func ("/statedirs/defined-only", test_defined_only);
  return g_test_run ();
}
