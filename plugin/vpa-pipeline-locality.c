/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The check of a placed domain's locality groups (vpa-pipeline-locality.h):
 * what each group's members hold now, gathered here and judged by
 * policy/vpa-locality-judge.c.
 */
#include "vpa-pipeline-locality.h"

#include "vpa-locality.h"
#include "vpa-locality-judge.h"
#include "vpa-requests.h"

/* What a group's members hold now. */
typedef struct {
  GArray *devices;  /* guint host indices */
  GString *members; /* "ua-gpu0 0000:1a:00.0, ua-rdma0 0000:3b:00.1" */
  guint missing;    /* members without a device on this host */
  gint recorded;    /* the closest level its <vpa:placed> records say, -1: none */
} GroupNow;

static GHashTable *
hostdevs_by_alias (const VpaDomain *dom)
{
  GHashTable *by_alias = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < dom->hostdevs->len; i++)
    {
      const VpaDomainHostdev *hd = g_ptr_array_index (dom->hostdevs, i);
      if (hd->alias != NULL && !g_hash_table_contains (by_alias, hd->alias))
        g_hash_table_insert (by_alias, hd->alias, (gpointer) hd);
    }
  return by_alias;
}

static gint
recorded_level (const VpaDomain *dom, const char *group)
{
  gint level = -1;

  for (guint i = 0; i < dom->placed->len; i++)
    {
      const VpaPlacedRecord *rec = g_ptr_array_index (dom->placed, i);
      if (rec->locality >= 0 && g_strcmp0 (rec->locality_group, group) == 0 &&
          (level < 0 || rec->locality < level))
        level = rec->locality;
    }
  return level;
}

static void
group_now (const VpaInventory *inv, const VpaDomain *dom, GPtrArray *requests,
           GHashTable *by_alias, const VpaLocalityGroupState *g, GroupNow *now)
{
  now->devices = g_array_new (FALSE, FALSE, sizeof (guint));
  now->members = g_string_new (NULL);
  now->missing = 0;
  now->recorded = recorded_level (dom, g->name);
  for (guint m = 0; m < g->members->len; m++)
    {
      const VpaRequest *r = g_ptr_array_index (requests, g_array_index (g->members, guint, m));
      const VpaDomainHostdev *hd = g_hash_table_lookup (by_alias, r->device);
      gint idx = hd != NULL && hd->addr != VPA_ADDR_NONE ? vpa_host_lookup (inv->host, hd->addr)
                                                         : -1;
      char buf[VPA_ADDR_BUFLEN];

      g_string_append_printf (now->members, "%s%s %s", m > 0 ? ", " : "", r->device,
                              idx >= 0 ? vpa_addr_format (hd->addr, buf) : "(none)");
      if (idx < 0)
        {
          now->missing++;
        }
      else
        {
          g_array_append_val (now->devices, idx);
        }
    }
}

/* The check result of one group, or NULL when it cannot be judged yet
 * (vpa_locality_judge_group decides). */
static VpaCheckResult *
check_group (const VpaInventory *inv, const VpaLocalityGroupState *g, const GroupNow *now)
{
  VpaLocalityGroupNow judged = { now->devices, now->members->str, now->missing, now->recorded };
  g_autoptr (VpaLocalityVerdict) v = vpa_locality_judge_group (inv->host, g, &judged);
  VpaCheckResult *res;

  if (v == NULL)
    return NULL;
  res = g_new0 (VpaCheckResult, 1);
  res->device = g_strdup_printf ("locality group '%s'", g->name);
  res->addr = VPA_ADDR_NONE;
  res->numa_node = VPA_NUMA_NONE;
  res->status = v->refused ? VPA_CHECK_LOCALITY : VPA_CHECK_OK;
  res->note = v->note;
  res->line = g_steal_pointer (&v->line);
  return res;
}

void
vpa_pipeline_check_locality (const VpaInventory *inv, const VpaDomain *dom, GPtrArray *requests,
                             GPtrArray *results, gboolean *ok)
{
  g_autoptr (GPtrArray) groups = vpa_locality_groups (requests);
  g_autoptr (GHashTable) by_alias = NULL;

  if (groups->len == 0)
    return;
  by_alias = hostdevs_by_alias (dom);
  for (guint i = 0; i < groups->len; i++)
    {
      const VpaLocalityGroupState *g = g_ptr_array_index (groups, i);
      GroupNow now;
      VpaCheckResult *res;

      group_now (inv, dom, requests, by_alias, g, &now);
      res = check_group (inv, g, &now);
      g_array_unref (now.devices);
      g_string_free (now.members, TRUE);
      if (res == NULL)
        continue;
      if (res->status != VPA_CHECK_OK)
        *ok = FALSE;
      g_ptr_array_add (results, res);
    }
}
