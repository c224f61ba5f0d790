/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What another domain holds on the host's NUMA nodes: the host CPUs its
 * vCPUs are pinned to one each (a dedicated guest, ours or anyone's),
 * and the memory it binds strictly to single nodes, per page size.
 */
#include "vpa-xml.h"
#include "vpa-domain.h"
#include "vpa-cpuset.h"

#include <string.h>

#define DEFAULT_HUGEPAGE_KIB 2048

static gboolean
prop_uint (xmlNode *node, const char *attr, guint64 *out)
{
  g_autofree char *s = vpa_xml_prop (node, attr);
  return s != NULL && g_ascii_string_to_unsigned (s, 10, 0, G_MAXUINT32, out, NULL);
}

/* A scaled size (text or attribute value) in KiB; FALSE if absent or bad. */
static gboolean
size_kib (const char *value, const char *unit, guint64 *out)
{
  guint64 v, scale;

  if (value == NULL || !vpa_xml_unit_scale (unit, &scale) ||
      !g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT64 / scale, &v, NULL))
    return FALSE;
  *out = v * scale / 1024;
  return TRUE;
}

static gboolean
element_kib (xmlNode *node, guint64 *out)
{
  g_autofree char *text = node != NULL ? vpa_xml_text (node) : NULL;
  g_autofree char *unit = node != NULL ? vpa_xml_prop (node, "unit") : NULL;
  return size_kib (text, unit, out);
}

/* The vpa:numa cpu-policy of the domain, or NULL. */
static char *
vpa_cpu_policy (xmlNode *domain)
{
  xmlNode *md = vpa_xml_child (domain, "metadata", NULL);
  xmlNode *aff = md != NULL ? vpa_xml_child (md, "affinity", VPA_XMLNS) : NULL;
  xmlNode *numa = aff != NULL ? vpa_xml_child (aff, "numa", VPA_XMLNS) : NULL;

  if (numa == NULL)
    return NULL;
  return vpa_xml_prop (numa, "cpu-policy");
}

static void
add_cpu (VpaNumaUse *use, guint cpu)
{
  for (guint j = 0; j < use->dedicated->len; j++)
    if (g_array_index (use->dedicated, guint, j) == cpu)
      return;
  g_array_append_val (use->dedicated, cpu);
}

/* Every vCPU 0..n-1 pinned to exactly one host CPU: those CPUs. */
static void
claim_dedicated (xmlNode *domain, VpaNumaUse *use)
{
  xmlNode *cputune = vpa_xml_child (domain, "cputune", NULL);
  g_autofree char *policy = vpa_cpu_policy (domain);
  g_autofree gint *pin = NULL;
  guint64 n = 1;

  if (cputune == NULL || (policy != NULL && strcmp (policy, "dedicated") != 0))
    return;
  {
    g_autofree char *text = vpa_xml_text (vpa_xml_child (domain, "vcpu", NULL));
    if (text != NULL && !g_ascii_string_to_unsigned (text, 10, 1, VPA_CPUSET_MAX, &n, NULL))
      return;
  }
  pin = g_new (gint, n);
  for (guint64 i = 0; i < n; i++)
    pin[i] = -1;
  for (xmlNode *c = cputune->children; c != NULL; c = c->next)
    {
      g_autofree char *set_s = NULL;
      g_autoptr (GArray) set = NULL;
      guint64 v;

      if (!vpa_xml_is (c, "vcpupin", NULL) || !prop_uint (c, "vcpu", &v) || v >= n)
        continue;
      set_s = vpa_xml_prop (c, "cpuset");
      if (set_s == NULL || !vpa_parse_cpuset (set_s, &set, NULL) || set->len != 1)
        return;
      pin[v] = (gint) g_array_index (set, guint, 0);
    }
  for (guint64 i = 0; i < n; i++)
    if (pin[i] < 0)
      return;
  /* Ours (cpu-policy dedicated): the emulator threads share the guest's
   * CPUs, and with isolate also the pinned cores' other threads. */
  for (xmlNode *c = cputune->children; policy != NULL && c != NULL; c = c->next)
    {
      g_autofree char *set_s = NULL;
      g_autoptr (GArray) set = NULL;

      if (!vpa_xml_is (c, "emulatorpin", NULL))
        continue;
      set_s = vpa_xml_prop (c, "cpuset");
      if (set_s != NULL && vpa_parse_cpuset (set_s, &set, NULL))
        for (guint j = 0; j < set->len; j++)
          add_cpu (use, g_array_index (set, guint, j));
    }
  for (guint64 i = 0; i < n; i++)
    add_cpu (use, (guint) pin[i]);
}

/* The single host node of a strict nodeset, or -1. */
static gint
strict_node (xmlNode *node)
{
  g_autofree char *mode = node != NULL ? vpa_xml_prop (node, "mode") : NULL;
  g_autofree char *set_s = node != NULL ? vpa_xml_prop (node, "nodeset") : NULL;
  g_autoptr (GArray) set = NULL;

  if (set_s == NULL || (mode != NULL && strcmp (mode, "strict") != 0))
    return -1;
  if (!vpa_parse_cpuset (set_s, &set, NULL) || set->len != 1)
    return -1;
  return (gint) g_array_index (set, guint, 0);
}

/* The hugepage size backing guest cell id (cell -1: a guest without
 * cells), or 0 for ordinary memory. */
static guint64
cell_page_kib (xmlNode *domain, gint cell)
{
  xmlNode *mb = vpa_xml_child (domain, "memoryBacking", NULL);
  xmlNode *hp = mb != NULL ? vpa_xml_child (mb, "hugepages", NULL) : NULL;
  guint64 fallback = DEFAULT_HUGEPAGE_KIB;
  gboolean any_page = FALSE;

  if (hp == NULL)
    return 0;
  for (xmlNode *c = hp->children; c != NULL; c = c->next)
    {
      g_autofree char *size = NULL;
      g_autofree char *unit = NULL;
      g_autofree char *nodeset = NULL;
      g_autoptr (GArray) set = NULL;
      guint64 kib;

      if (!vpa_xml_is (c, "page", NULL))
        continue;
      any_page = TRUE;
      size = vpa_xml_prop (c, "size");
      unit = vpa_xml_prop (c, "unit");
      nodeset = vpa_xml_prop (c, "nodeset");
      if (!size_kib (size, unit, &kib))
        continue;
      if (nodeset == NULL)
        {
          fallback = kib;
          continue;
        }
      if (cell >= 0 && vpa_parse_cpuset (nodeset, &set, NULL))
        for (guint i = 0; i < set->len; i++)
          if (g_array_index (set, guint, i) == (guint) cell)
            return kib;
    }
  (void) any_page;
  return fallback;
}

static void
add_memory (VpaNumaUse *use, gint node, guint64 page_kib, guint64 kib)
{
  VpaMemClaim m = { node, page_kib, kib };

  if (node < 0 || kib == 0)
    return;
  for (guint i = 0; i < use->memory->len; i++)
    {
      VpaMemClaim *o = &g_array_index (use->memory, VpaMemClaim, i);
      if (o->node == node && o->page_kib == page_kib)
        {
          o->kib += kib;
          return;
        }
    }
  g_array_append_val (use->memory, m);
}

static void
claim_memory (xmlNode *domain, VpaNumaUse *use)
{
  xmlNode *numatune = vpa_xml_child (domain, "numatune", NULL);
  xmlNode *memory = numatune != NULL ? vpa_xml_child (numatune, "memory", NULL) : NULL;
  xmlNode *cpu = vpa_xml_child (domain, "cpu", NULL);
  xmlNode *numa = cpu != NULL ? vpa_xml_child (cpu, "numa", NULL) : NULL;
  gint all = strict_node (memory);
  guint64 kib;
  guint pos = 0;

  if (numatune == NULL)
    return;
  if (numa == NULL)
    {
      if (element_kib (vpa_xml_child (domain, "memory", NULL), &kib))
        add_memory (use, all, cell_page_kib (domain, -1), kib);
      return;
    }
  for (xmlNode *c = numa->children; c != NULL; c = c->next, pos++)
    {
      g_autofree char *mem = NULL;
      g_autofree char *unit = NULL;
      guint64 id = pos;
      gint node = all;

      if (!vpa_xml_is (c, "cell", NULL))
        {
          pos--;
          continue;
        }
      prop_uint (c, "id", &id);
      mem = vpa_xml_prop (c, "memory");
      unit = vpa_xml_prop (c, "unit");
      if (!size_kib (mem, unit, &kib))
        continue;
      for (xmlNode *m = numatune->children; m != NULL; m = m->next)
        {
          guint64 cellid;
          if (vpa_xml_is (m, "memnode", NULL) && prop_uint (m, "cellid", &cellid) &&
              cellid == id)
            {
              node = strict_node (m);
              break;
            }
        }
      add_memory (use, node, cell_page_kib (domain, (gint) id), kib);
    }
}

VpaClaim *
vpa_xml_numa_claim (xmlNode *domain, const char *name, gboolean running)
{
  g_autoptr (VpaNumaUse) use = vpa_numa_use_new ();

  g_return_val_if_fail (domain != NULL && name != NULL, NULL);
  if (vpa_xml_is (domain, "domstatus", NULL))
    domain = vpa_xml_child (domain, "domain", NULL);
  if (domain == NULL)
    return NULL;
  claim_dedicated (domain, use);
  claim_memory (domain, use);
  if (use->dedicated->len == 0 && use->memory->len == 0)
    return NULL;
  return vpa_claim_new_numa (name, running, g_steal_pointer (&use));
}
