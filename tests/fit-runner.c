/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * fit-runner: the library's whole-guest fit (vpa_fit) on fit scenarios
 * (tools/conformance/FIT-FORMAT.md, "A runner's verdict"). Reads one
 * scenario (a JSON object) or a list of them on stdin and prints one
 * verdict per scenario (an object, or a list in the same order):
 *
 *   {"name": N, "fits": true, "cells": [...], "pinning": [[...]] | "cpus": [[...]],
 *    "pagesize_kb": [...], "tier_cost": T, "devices": [[ADDR...] per request]}
 *   {"name": N, "fits": false, "error": "..."}
 *   {"name": N, "unsupported": "..."}   what a libvirt domain cannot say
 *
 * Nova's inputs become the capacity as the project computes it after
 * [host] and the claims (node_from_json). Exit 0, also when a guest does
 * not fit; 2 on input it cannot read. tools/conformance/checkfit.py
 * judges the verdicts (the committed scenarios, test-fit-conformance)
 * and live-diff.py --fit fresh ones (conformance-fit-live).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "place-scenario.h"
#include "vpa-fit.h"

typedef struct {
  VpaFitGuest fit;
  gboolean small_pages; /* "small": the smallest pages, ordinary memory */
} Guest;

static GArray *
uint_list (JsonObject *o, const char *key)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (guint));
  JsonArray *arr = json_object_has_member (o, key) ? json_object_get_array_member (o, key) : NULL;

  for (guint i = 0; arr != NULL && i < json_array_get_length (arr); i++)
    {
      guint v = (guint) json_array_get_int_element (arr, i);
      g_array_append_val (a, v);
    }
  return a;
}

static gboolean
has (const GArray *a, guint v)
{
  for (guint i = 0; i < a->len; i++)
    {
      if (g_array_index (a, guint, i) == v)
        return TRUE;
    }
  return FALSE;
}

static gint64
int_member (JsonObject *o, const char *key, gint64 dflt)
{
  return json_object_has_member (o, key) && !JSON_NODE_HOLDS_NULL (json_object_get_member (o, key))
           ? json_object_get_int_member (o, key)
           : dflt;
}

static guint
sibling_group (JsonObject *hc, guint cpu, guint *set_len)
{
  JsonArray *sibs = json_object_has_member (hc, "siblings") ? json_object_get_array_member (hc, "siblings") : NULL;

  *set_len = 1;
  for (guint i = 0; sibs != NULL && i < json_array_get_length (sibs); i++)
    {
      JsonArray *set = json_array_get_array_element (sibs, i);
      guint lowest = G_MAXUINT;
      gboolean in = FALSE;
      for (guint j = 0; j < json_array_get_length (set); j++)
        {
          guint c = (guint) json_array_get_int_element (set, j);
          lowest = MIN (lowest, c);
          in = in || c == cpu;
        }
      if (in)
        {
          *set_len = json_array_get_length (set);
          return lowest;
        }
    }
  return cpu;
}

/* Nova's inputs in our model: the node as the capacity would be after
 * [host] and the claims; Nova's allocation ratios and shared vCPU usage
 * (which the project does not count) become the room left. */
static VpaNodeCap *
node_from_json (JsonObject *hc, JsonObject *limits, const char *cpu_policy)
{
  VpaNodeCap *nc = g_new0 (VpaNodeCap, 1);
  g_autoptr (GArray) cpus = uint_list (hc, "cpus");
  g_autoptr (GArray) pinned = uint_list (hc, "pinned");
  guint64 mem = (guint64) int_member (hc, "memory_mb", 0) * 1024;
  guint64 used = (guint64) int_member (hc, "memory_used_mb", 0) * 1024;
  JsonArray *pages = json_object_has_member (hc, "mempages") ? json_object_get_array_member (hc, "mempages") : NULL;
  guint64 small_total = G_MAXUINT64;

  nc->node = (gint) json_object_get_int_member (hc, "id");
  nc->socket = (gint) int_member (hc, "socket", -1);
  nc->shared = uint_list (hc, "shared");
  nc->dedicated = uint_list (hc, "dedicated");
  nc->free_dedicated = g_array_new (FALSE, FALSE, sizeof (guint));
  nc->free_groups = g_array_new (FALSE, FALSE, sizeof (guint));
  nc->pages = g_array_new (FALSE, FALSE, sizeof (VpaNodePages));
  nc->n_cpus = cpus->len;
  nc->shared_room = G_MAXUINT;
  for (guint i = 0; i < cpus->len; i++)
    {
      guint cpu = g_array_index (cpus, guint, i), len;
      guint group = sibling_group (hc, cpu, &len);
      nc->threads_per_core = MAX (nc->threads_per_core, len);
      if (has (nc->dedicated, cpu) && !has (pinned, cpu))
        {
          g_array_append_val (nc->free_dedicated, cpu);
          g_array_append_val (nc->free_groups, group);
        }
    }
  for (guint i = 0; pages != NULL && i < json_array_get_length (pages); i++)
    {
      JsonObject *p = json_array_get_object_element (pages, i);
      VpaNodePages np = { (guint64) int_member (p, "size_kb", 0), (guint64) int_member (p, "total", 0),
                          (guint64) int_member (p, "reserved", 0), (guint64) int_member (p, "used", 0), 0 };
      np.avail = np.total > np.reserved + np.claimed ? np.total - np.reserved - np.claimed : 0;
      if (np.size_kib <= 4)
        {
          small_total = np.total * np.size_kib;
          continue;
        }
      g_array_append_val (nc->pages, np);
    }
  nc->memory_kib = mem;
  nc->claimed_kib = used;
  if (g_strcmp0 (cpu_policy, "dedicated") == 0)
    {
      nc->avail_kib = MIN (mem > used ? mem - used : 0, small_total);
    }
  else if (limits != NULL)
    {
      gdouble ram = json_object_get_double_member (limits, "ram_allocation_ratio");
      gdouble cpu = json_object_get_double_member (limits, "cpu_allocation_ratio");
      gdouble room_kib = (gdouble) mem * ram - (gdouble) used;
      gdouble room_cpu = (gdouble) nc->shared->len * cpu - (gdouble) int_member (hc, "cpu_usage", 0);
      nc->avail_kib = MIN (room_kib > 0 ? (guint64) room_kib : 0, small_total);
      nc->shared_room = room_cpu > 0 ? (guint) room_cpu : 0;
      nc->shared_used = (guint) int_member (hc, "cpu_usage", 0);
    }
  else
    nc->avail_kib = MIN (mem, small_total);
  return nc;
}

/* emulator_threads_policy: isolate is one dedicated CPU more on cell 0,
 * as the pipeline asks (vpa_pipeline_numa_cells); share leaves the fit
 * alone. */
static gboolean
emulator_from_json (JsonObject *g, GArray *cells, char **why)
{
  const char *emu = json_object_has_member (g, "emulator_threads_policy")
                      ? json_object_get_string_member (g, "emulator_threads_policy")
                      : NULL;

  if (emu == NULL || strcmp (emu, "share") == 0)
    return TRUE;
  if (strcmp (emu, "isolate") != 0)
    {
      *why = g_strdup_printf ("unknown emulator_threads_policy '%s'", emu);
      return FALSE;
    }
  if (cells->len > 0)
    g_array_index (cells, VpaFitCell, 0).emulator_cpus = 1;
  return TRUE;
}

/* Guest cells; FALSE (with *why) for what a domain cannot ask for. */
static gboolean
guest_from_json (JsonObject *g, GArray *cells, GPtrArray *keep, Guest *out,
                 char **why)
{
  JsonArray *arr = json_object_get_array_member (g, "cells");
  const char *tp = json_object_has_member (g, "cpu_thread_policy") ? json_object_get_string_member (g, "cpu_thread_policy") : "prefer";

  out->fit.cpu_policy = strcmp (json_object_get_string_member (g, "cpu_policy"), "dedicated") == 0
                          ? VPA_CPU_POLICY_DEDICATED
                          : VPA_CPU_POLICY_SHARED;
  if (!vpa_thread_policy_from_string (tp, &out->fit.thread_policy))
    {
      *why = g_strdup_printf ("unknown cpu_thread_policy '%s'", tp);
      return FALSE;
    }
  for (guint i = 0; i < json_array_get_length (arr); i++)
    {
      JsonObject *c = json_array_get_object_element (arr, i);
      VpaFitCell cell = { i, uint_list (c, "cpus"), (guint64) json_object_get_int_member (c, "memory_mb") * 1024 };
      JsonNode *ps = json_object_get_member (c, "pagesize");

      g_ptr_array_add (keep, cell.vcpus);
      g_array_append_val (cells, cell);
      if (ps == NULL || JSON_NODE_HOLDS_NULL (ps))
        continue;
      if (json_node_get_value_type (ps) == G_TYPE_STRING)
        {
          if (strcmp (json_node_get_string (ps), "small") != 0)
            {
              /* libvirt's <hugepages> names a size, never "large"/"any" */
              *why = g_strdup_printf ("page size '%s'", json_node_get_string (ps));
              return FALSE;
            }
          out->small_pages = TRUE;
          continue; /* the smallest pages: ordinary memory */
        }
      out->fit.page_kib = (guint64) json_node_get_int (ps);
    }
  out->fit.cells = cells;
  return emulator_from_json (g, cells, why);
}

/* The host nodes of hcs whose "physnets" hold physnet (NULL: "tunneled"). */
static GArray *
affinity_nodes (JsonArray *hcs, const char *physnet)
{
  GArray *nodes = g_array_new (FALSE, FALSE, sizeof (gint));

  for (guint i = 0; i < json_array_get_length (hcs); i++)
    {
      JsonObject *c = json_array_get_object_element (hcs, i);
      gboolean has = FALSE;
      gint id = (gint) json_object_get_int_member (c, "id");

      if (physnet == NULL)
        {
          has = json_object_has_member (c, "tunneled") &&
                json_object_get_boolean_member (c, "tunneled");
        }
      else if (json_object_has_member (c, "physnets"))
        {
          JsonArray *p = json_object_get_array_member (c, "physnets");
          for (guint k = 0; k < json_array_get_length (p) && !has; k++)
            has = g_strcmp0 (json_array_get_string_element (p, k), physnet) == 0;
        }
      if (has)
        g_array_append_val (nodes, id);
    }
  return nodes;
}

static void
add_rule (GPtrArray *rules, JsonArray *hcs, const char *port, const char *physnet,
          VpaPolicy policy)
{
  g_autoptr (GArray) nodes = affinity_nodes (hcs, physnet);

  if (nodes->len > 0)
    g_ptr_array_add (rules, vpa_fit_net_rule_new (port, physnet, policy, nodes));
}

/* The guest's network rules as vpa_pipeline_net_rules builds them
 * (docs/vswitch.md): every vSwitch port of "vswitch_ports" and every
 * SR-IOV port with a physnet, with the effective policy. */
static GPtrArray *
net_rules_from_json (JsonObject *obj, const Scenario *sc)
{
  GPtrArray *rules = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_fit_net_rule_free);
  JsonArray *hcs = json_object_get_array_member (obj, "host_cells");
  JsonArray *ports;
  VpaPolicy fallback = VPA_POLICY_LEGACY;

  if (!json_object_has_member (obj, "vswitch_ports"))
    return rules;
  for (const char *const *k = (const char *const[]){ "image_policy", "flavor_policy", NULL };
       *k != NULL; k++)
    {
      if (json_object_has_member (obj, *k) &&
          !JSON_NODE_HOLDS_NULL (json_object_get_member (obj, *k)))
        vpa_policy_from_string (json_object_get_string_member (obj, *k), &fallback);
    }
  ports = json_object_get_array_member (obj, "vswitch_ports");
  for (guint i = 0; i < json_array_get_length (ports); i++)
    {
      JsonObject *p = json_array_get_object_element (ports, i);
      VpaPolicy policy = fallback;
      gboolean tunneled = json_object_has_member (p, "tunneled") &&
                          json_object_get_boolean_member (p, "tunneled");

      if (json_object_has_member (p, "policy"))
        vpa_policy_from_string (json_object_get_string_member (p, "policy"), &policy);
      add_rule (rules, hcs, json_object_get_string_member (p, "device"),
                tunneled ? NULL : json_object_get_string_member (p, "physnet"), policy);
    }
  for (guint i = 0; i < sc->requests->len; i++)
    {
      const VpaRequest *r = g_ptr_array_index (sc->requests, i);
      const char *physnet = r->specs->len > 0 ? vpa_spec_get (r->specs->pdata[0],
                                                              "physical_network", NULL)
                                              : NULL;
      if (r->kind == VPA_REQUEST_PORT && physnet != NULL)
        add_rule (rules, hcs, r->device, physnet, r->policy);
    }
  return rules;
}

static void
add_uints (JsonBuilder *b, const GArray *a)
{
  json_builder_begin_array (b);
  for (guint i = 0; a != NULL && i < a->len; i++)
    json_builder_add_int_value (b, g_array_index (a, guint, i));
  json_builder_end_array (b);
}

static void
add_fit (JsonBuilder *b, const Scenario *sc, const Guest *guest, const VpaFit *fit)
{
  json_builder_set_member_name (b, "fits");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_set_member_name (b, "cells");
  json_builder_begin_array (b);
  for (guint c = 0; c < fit->bindings->len; c++)
    json_builder_add_int_value (b, g_array_index (fit->bindings, VpaCellBinding, c).node);
  json_builder_end_array (b);
  json_builder_set_member_name (b, guest->fit.cpu_policy == VPA_CPU_POLICY_DEDICATED ? "pinning"
                                                                                     : "cpus");
  json_builder_begin_array (b);
  for (guint c = 0; c < fit->bindings->len; c++)
    add_uints (b, g_array_index (fit->bindings, VpaCellBinding, c).cpus);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "pagesize_kb");
  json_builder_begin_array (b);
  for (guint c = 0; c < fit->bindings->len; c++)
    {
      if (guest->fit.page_kib > 0)
        {
          json_builder_add_int_value (b, (gint64) guest->fit.page_kib);
        }
      else if (guest->small_pages)
        {
          json_builder_add_int_value (b, 4);
        }
      else
        {
          json_builder_add_null_value (b);
        }
    }
  json_builder_end_array (b);
  if (fit->bindings->len > 0 &&
      g_array_index (fit->bindings, VpaCellBinding, 0).emulator != NULL &&
      g_array_index (fit->bindings, VpaCellBinding, 0).emulator->len > 0)
    {
      json_builder_set_member_name (b, "emulator");
      add_uints (b, g_array_index (fit->bindings, VpaCellBinding, 0).emulator);
    }
  json_builder_set_member_name (b, "tier_cost");
  json_builder_add_int_value (b, fit->tier_total);
  if (guest->fit.net_rules != NULL)
    {
      json_builder_set_member_name (b, "net_misses");
      json_builder_add_int_value (b, fit->net_misses);
    }
  json_builder_set_member_name (b, "devices");
  json_builder_begin_array (b);
  for (guint r = 0; fit->placement != NULL && r < fit->placement->assignments->len; r++)
    {
      const VpaAssignment *a = g_ptr_array_index (fit->placement->assignments, r);
      json_builder_begin_array (b);
      for (guint k = 0; k < a->devices->len; k++)
        {
          char buf[VPA_ADDR_BUFLEN];
          guint i = g_array_index (a->devices, guint, k);
          json_builder_add_string_value (b, vpa_addr_format (vpa_host_device (sc->inv->host, i)->addr, buf));
        }
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
}

/* One verdict object for the scenario obj; FALSE on input it cannot load. */
static gboolean
run_scenario (JsonBuilder *b, JsonObject *obj, GError **error)
{
  g_autoptr (Scenario) sc = NULL;
  g_autoptr (GArray) cells = g_array_new (FALSE, TRUE, sizeof (VpaFitCell));
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (GPtrArray) nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_node_cap_free);
  g_autoptr (VpaFit) fit = NULL;
  g_autoptr (GError) fit_error = NULL;
  g_autofree char *why = NULL;
  g_autoptr (GPtrArray) rules = NULL;
  JsonObject *limits, *g;
  JsonArray *hcs;
  VpaCapacity cap;
  Guest guest = { 0 };

  if (!json_object_has_member (obj, "host_cells") || !json_object_has_member (obj, "guest"))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "scenario '%s': no host_cells or guest", json_object_has_member (obj, "name") ? json_object_get_string_member (obj, "name") : "?");
      return FALSE;
    }
  if ((sc = scenario_from_json (obj, error)) == NULL)
    return FALSE;
  g = json_object_get_object_member (obj, "guest");
  limits = json_object_has_member (obj, "limits") ? json_object_get_object_member (obj, "limits") : NULL;
  hcs = json_object_get_array_member (obj, "host_cells");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, sc->name);
  guest.fit.cell_pack = json_object_has_member (obj, "cell_allocation") &&
                        strcmp (json_object_get_string_member (obj, "cell_allocation"), "pack") == 0;
  if (sc->skip != NULL || sc->policy_error != NULL)
    why = g_strdup (sc->skip != NULL ? sc->skip : sc->policy_error->message);
  if (why != NULL || !guest_from_json (g, cells, keep, &guest, &why))
    {
      json_builder_set_member_name (b, "unsupported");
      json_builder_add_string_value (b, why);
      json_builder_end_object (b);
      return TRUE;
    }
  for (guint i = 0; i < json_array_get_length (hcs); i++)
    {
      g_ptr_array_add (nodes, node_from_json (json_array_get_object_element (hcs, i), limits,
                                              json_object_get_string_member (g, "cpu_policy")));
    }
  cap.nodes = nodes;
  rules = net_rules_from_json (obj, sc);
  guest.fit.net_rules = rules->len > 0 ? rules : NULL;
  fit = vpa_fit (&cap, sc->inv, sc->requests, &guest.fit, NULL, &fit_error);
  if (fit != NULL)
    {
      add_fit (b, sc, &guest, fit);
    }
  else
    {
      json_builder_set_member_name (b, "fits");
      json_builder_add_boolean_value (b, FALSE);
      json_builder_set_member_name (b, "error");
      json_builder_add_string_value (b, fit_error->message);
    }
  json_builder_end_object (b);
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GIOChannel) in = g_io_channel_unix_new (STDIN_FILENO);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *out = NULL;
  g_autoptr (JsonNode) root = NULL;
  JsonNode *doc;
  gsize len = 0;
  gboolean ok = TRUE;

  if (argc != 1)
    {
      fprintf (stderr, "usage: %s < SCENARIO.json\n", argv[0]);
      return 2;
    }
  if (g_io_channel_read_to_end (in, &text, &len, &error) != G_IO_STATUS_NORMAL ||
      !json_parser_load_from_data (parser, text, (gssize) len, &error))
    {
      fprintf (stderr, "fit-runner: stdin: %s\n", error != NULL ? error->message : "read error");
      return 2;
    }
  doc = json_parser_get_root (parser);
  if (doc != NULL && JSON_NODE_HOLDS_ARRAY (doc))
    {
      JsonArray *arr = json_node_get_array (doc);
      json_builder_begin_array (b);
      for (guint i = 0; ok && i < json_array_get_length (arr); i++)
        ok = run_scenario (b, json_array_get_object_element (arr, i), &error);
      json_builder_end_array (b);
    }
  else if (doc != NULL && JSON_NODE_HOLDS_OBJECT (doc))
    {
      ok = run_scenario (b, json_node_get_object (doc), &error);
    }
  else
    {
      fprintf (stderr, "fit-runner: stdin: not a scenario or a list of scenarios\n");
      return 2;
    }
  if (!ok)
    {
      fprintf (stderr, "fit-runner: %s\n", error->message);
      return 2;
    }
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  out = json_generator_to_data (gen, NULL);
  printf ("%s\n", out);
  return 0;
}
