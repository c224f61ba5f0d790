/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * place-driver SCENARIO.json|-: our decision for each conformance
 * scenario, as one JSON list on stdout (tools/conformance/live-diff.py
 * compares it with Nova's). For each scenario: "name", "ok", "allocated"
 * (addresses per request), "tier_cost", "valid" (the independent check)
 * or "error"; "skip"/"policy_error" when it does not get that far.
 */
#include <stdio.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <string.h>
#include "place-scenario.h"

static void
add_alloc (JsonBuilder *b, const Scenario *sc, GPtrArray *alloc)
{
  json_builder_begin_array (b);
  for (guint r = 0; r < alloc->len; r++)
    {
      GArray *devs = g_ptr_array_index (alloc, r);
      json_builder_begin_array (b);
      for (guint k = 0; k < devs->len; k++)
        {
          char buf[VPA_ADDR_BUFLEN];
          const VpaDevice *d = vpa_host_device (sc->inv->host, g_array_index (devs, guint, k));
          json_builder_add_string_value (b, vpa_addr_format (d->addr, buf));
        }
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
}

static void
decide (JsonBuilder *b, const Scenario *sc)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaPlacement) pl = NULL;
  g_autoptr (GPtrArray) alloc = NULL;
  g_autofree char *why = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, sc->name);
  if (sc->skip != NULL || sc->policy_error != NULL)
    {
      json_builder_set_member_name (b, sc->skip ? "skip" : "policy_error");
      json_builder_add_string_value (b, sc->skip ? sc->skip : sc->policy_error->message);
      json_builder_end_object (b);
      return;
    }
  {
    guint n_valid, best, n_best;
    /* Small scenarios: whether any valid assignment exists, and the best
     * tier total, by exhaustive search. */
    if (scenario_brute_force (sc, &n_valid, &best, &n_best, NULL))
      {
        json_builder_set_member_name (b, "brute_valid");
        json_builder_add_int_value (b, n_valid);
        json_builder_set_member_name (b, "brute_best");
        json_builder_add_int_value (b, n_valid > 0 ? (gint64) best : -1);
      }
  }
  pl = vpa_place (sc->inv, sc->requests, &sc->guest, &error);
  json_builder_set_member_name (b, "ok");
  json_builder_add_boolean_value (b, pl != NULL);
  if (sc->nova_alloc != NULL)
    {
      g_autofree char *nova_why = scenario_check (sc, sc->nova_alloc);
      json_builder_set_member_name (b, "nova_valid");
      json_builder_add_boolean_value (b, nova_why == NULL);
      json_builder_set_member_name (b, "nova_splits_group");
      json_builder_add_boolean_value (b, nova_why != NULL && strstr (nova_why, "pf-group"));
    }
  if (pl == NULL)
    {
      json_builder_set_member_name (b, "error");
      json_builder_add_string_value (b, error->message);
      json_builder_end_object (b);
      return;
    }
  alloc = placement_alloc (pl);
  why = scenario_check (sc, alloc);
  json_builder_set_member_name (b, "allocated");
  add_alloc (b, sc, alloc);
  json_builder_set_member_name (b, "tier_cost");
  json_builder_add_int_value (b, scenario_tier_cost (sc, alloc));
  json_builder_set_member_name (b, "valid");
  json_builder_add_boolean_value (b, why == NULL);
  if (why != NULL)
    {
      json_builder_set_member_name (b, "invalid");
      json_builder_add_string_value (b, why);
    }
  if (sc->nova_alloc != NULL)
    {
      json_builder_set_member_name (b, "nova_tier_cost");
      json_builder_add_int_value (b, scenario_tier_cost (sc, sc->nova_alloc));
    }
  json_builder_end_object (b);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) scs = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *out = NULL;
  g_autofree char *path = NULL;

  if (argc != 2)
    {
      fprintf (stderr, "usage: place-driver SCENARIO.json|-\n");
      return 2;
    }
  if (strcmp (argv[1], "-") == 0)
    {
      g_autofree char *buf = NULL;
      gsize len = 0;
      g_autoptr (GIOChannel) in = g_io_channel_unix_new (0);
      gint fd;

      if (g_io_channel_read_to_end (in, &buf, &len, &error) != G_IO_STATUS_NORMAL)
        {
          fprintf (stderr, "stdin: %s\n", error->message);
          return 3;
        }
      fd = g_file_open_tmp ("place-driver-XXXXXX.json", &path, &error);
      if (fd < 0 || !g_file_set_contents (path, buf, (gssize) len, &error))
        {
          fprintf (stderr, "%s\n", error->message);
          return 3;
        }
      close (fd);
    }
  else
    path = g_strdup (argv[1]);
  scs = scenarios_load (path, &error);
  if (strcmp (argv[1], "-") == 0)
    g_unlink (path);
  if (scs == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 2;
    }
  json_builder_begin_array (b);
  for (guint i = 0; i < scs->len; i++)
    decide (b, g_ptr_array_index (scs, i));
  json_builder_end_array (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  out = json_generator_to_data (gen, NULL);
  printf ("%s\n", out);
  return 0;
}
