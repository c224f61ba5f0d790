/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Emulator threads and isolate's kept siblings (docs/placement.md,
 * "Emulator threads"): the siblings are recorded in <vpa:placed-cell
 * reserved-cpus>, never in <emulatorpin>, and claims read the record;
 * a domain placed before the record keeps them in <emulatorpin>, which
 * claims still read when no cell records any.
 */
#include <string.h>

#include "vpa-pipeline.h"
#include "vpa-source.h"
#include "vpa-test-util.h"
#include "vpa-xml.h"

#define AFFINITY "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>" \
                 "<vpa:numa placement='auto' cpu-policy='dedicated' cpu-thread-policy='isolate'/>"

/* The dedicated CPUs another domain's claim holds, "5 6 7". */
static char *
dedicated_of (const char *body)
{
  g_autofree char *xml = g_strdup_printf ("<domain type='kvm'><name>d</name><vcpu>3</vcpu>%s"
                                          "</domain>",
                                          body);
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (&(VpaDoc){ xml, strlen (xml), "t" }, NULL);
  g_autoptr (VpaClaim) c = NULL;
  g_autoptr (GError) error = NULL;
  GString *s = g_string_new (NULL);

  g_assert_nonnull (doc);
  g_assert_true (vpa_numa_claim (xmlDocGetRootElement (doc), "d", TRUE, "t", &c, &error));
  g_assert_no_error (error);
  g_assert_nonnull (c);
  for (guint i = 0; i < c->numa->dedicated->len; i++)
    g_string_append_printf (s, "%s%u", i > 0 ? " " : "", g_array_index (c->numa->dedicated, guint, i));
  return g_string_free (s, FALSE);
}

#define PINS "<cputune><vcpupin vcpu='0' cpuset='5'/><vcpupin vcpu='1' cpuset='6'/>" \
             "<vcpupin vcpu='2' cpuset='7'/><emulatorpin cpuset='%s'/></cputune>"

/* The record: the kept siblings are dedicated to the domain although
 * its emulator threads run on its vCPUs' CPUs only. */
static void
test_claims_record (void)
{
  g_autofree char *pins = g_strdup_printf (PINS, "5-7");
  g_autofree char *body = g_strconcat (AFFINITY,
                                       "<vpa:placed-cell cell='0' host-node='1' cpus='5,6,7' "
                                       "memory-kib='1048576' reserved-cpus='13,14,15'/>"
                                       "</vpa:affinity></metadata>",
                                       pins, NULL);
  g_autofree char *got = dedicated_of (body);

  g_assert_cmpstr (got, ==, "5 6 7 13 14 15");
}

/* Placed before the record: the siblings were in <emulatorpin>, and
 * still count. */
static void
test_claims_old_form (void)
{
  g_autofree char *pins = g_strdup_printf (PINS, "5-7,13-15");
  g_autofree char *body = g_strconcat (AFFINITY,
                                       "<vpa:placed-cell cell='0' host-node='1' cpus='5,6,7' "
                                       "memory-kib='1048576'/></vpa:affinity></metadata>",
                                       pins, NULL);
  g_autofree char *got = dedicated_of (body);

  g_assert_cmpstr (got, ==, "5 6 7 13 14 15");
}

/* With a record, <emulatorpin> is no reservation: a CPU only it names
 * is pinned, not dedicated. */
static void
test_claims_record_wins (void)
{
  g_autofree char *pins = g_strdup_printf (PINS, "5-7,20");
  g_autofree char *body = g_strconcat (AFFINITY,
                                       "<vpa:placed-cell cell='0' host-node='1' cpus='5,6,7' "
                                       "memory-kib='1048576' reserved-cpus='13'/>"
                                       "</vpa:affinity></metadata>",
                                       pins, NULL);
  g_autofree char *got = dedicated_of (body);

  g_assert_cmpstr (got, ==, "5 6 7 13");
}

/* emulator-threads="share": <emulatorpin> is the host's shared set, no
 * reservation: the domain claims its vCPUs' CPUs only. */
static void
test_claims_share (void)
{
  g_autofree char *pins = g_strdup_printf (PINS, "0,4,8,12");
  g_autofree char *body = g_strconcat ("<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
                                       "<vpa:numa placement='auto' cpu-policy='dedicated' "
                                       "emulator-threads='share'/>"
                                       "<vpa:placed-cell cell='0' host-node='1' cpus='5,6,7' "
                                       "memory-kib='1048576'/></vpa:affinity></metadata>",
                                       pins, NULL);
  g_autofree char *got = dedicated_of (body);

  g_assert_cmpstr (got, ==, "5 6 7");
}

/* emulator-threads="isolate": the emulator's own CPU, recorded in
 * <vpa:placed-cell emulator-cpus> and pinned by <emulatorpin>, is
 * dedicated to the domain. */
static void
test_claims_isolate (void)
{
  g_autofree char *pins = g_strdup_printf (PINS, "8");
  g_autofree char *body = g_strconcat ("<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
                                       "<vpa:numa placement='auto' cpu-policy='dedicated' "
                                       "emulator-threads='isolate'/>"
                                       "<vpa:placed-cell cell='0' host-node='1' cpus='5,6,7' "
                                       "memory-kib='1048576' emulator-cpus='8'/>"
                                       "</vpa:affinity></metadata>",
                                       pins, NULL);
  g_autofree char *got = dedicated_of (body);

  g_assert_cmpstr (got, ==, "5 6 7 8");
}

/* Without the record (a state file read by streaming keeps <vpa:numa>
 * only) <emulatorpin> still reserves the emulator's CPU. */
static void
test_claims_isolate_unrecorded (void)
{
  g_autofree char *pins = g_strdup_printf (PINS, "8");
  g_autofree char *body = g_strconcat ("<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
                                       "<vpa:numa placement='auto' cpu-policy='dedicated' "
                                       "emulator-threads='isolate'/>"
                                       "</vpa:affinity></metadata>",
                                       pins, NULL);
  g_autofree char *got = dedicated_of (body);

  g_assert_cmpstr (got, ==, "5 6 7 8");
}

/* check (and the hook's prepare) of a bound isolate guest: its
 * emulator CPU pinned by another domain breaks the binding, named. */
static void
test_check_isolate_held (void)
{
  static const char xml[] =
    "<domain type='kvm'><name>emu</name><memory unit='KiB'>1048576</memory><vcpu>1</vcpu>"
    "<metadata><vpa:affinity xmlns:vpa='" VPA_XMLNS "'>"
    "<vpa:numa placement='auto' cpu-policy='dedicated' emulator-threads='isolate'/>"
    "<vpa:placed-cell cell='0' host-node='0' cpus='2' memory-kib='1048576' emulator-cpus='%s'/>"
    "</vpa:affinity></metadata>"
    "<cputune><vcpupin vcpu='0' cpuset='2'/><emulatorpin cpuset='%s'/></cputune>"
    "<numatune><memory mode='strict' nodeset='0'/></numatune>"
    "<os><type arch='x86_64'>hvm</type></os></domain>";
  /* CPU 1 of node 0 is pinned by domain 'db' of pinned.xml; 10 is free */
  static const struct {
    const char *cpu;
    gboolean ok;
    const char *line;
  } cases[] = {
    { "10", TRUE, "guest cell 0: host node 0, dedicated CPUs 1: ok" },
    { "1", FALSE, "guest cell 0: the emulator's dedicated CPU 1 on host node 0 is pinned by domain 'db'" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (VpaHost) host = vpa_source_load (VPA_TEST_DATA "/hosts/pinned.xml", &error);
      g_autoptr (VpaConfig) config = vpa_config_load_file (VPA_TEST_DATA "/hosts/pinned.conf", &error);
      g_autoptr (GPtrArray) claims = vpa_claim_filter (host->claims, NULL, FALSE);
      g_autofree char *text = g_strdup_printf (xml, cases[i].cpu, cases[i].cpu);
      g_autoptr (VpaDomain) dom = vpa_domain_parse (&(VpaDoc){ text, strlen (text), "emu.xml" }, &error);
      g_autoptr (GPtrArray) results = NULL;
      const VpaCheckResult *last;
      gboolean ok = FALSE;

      g_assert_no_error (error);
      results = vpa_pipeline_check (g_steal_pointer (&host), claims, config, dom, TRUE, &ok, &error);
      g_assert_no_error (error);
      g_assert_cmpint (ok, ==, cases[i].ok);
      last = g_ptr_array_index (results, results->len - 1);
      g_assert_cmpstr (last->line, ==, cases[i].line);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/emulator/claims-record", test_claims_record);
  g_test_add_func ("/emulator/claims-old-form", test_claims_old_form);
  g_test_add_func ("/emulator/claims-record-wins", test_claims_record_wins);
  g_test_add_func ("/emulator/claims-share", test_claims_share);
  g_test_add_func ("/emulator/claims-isolate", test_claims_isolate);
  g_test_add_func ("/emulator/claims-isolate-unrecorded", test_claims_isolate_unrecorded);
  g_test_add_func ("/emulator/check-isolate-held", test_check_isolate_held);
  return g_test_run ();
}
