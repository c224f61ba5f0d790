/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What another domain holds on the host's NUMA nodes: the host CPUs its
 * vCPUs are pinned to one each (a dedicated guest, ours or anyone's),
 * every other CPU a pin lets one of its threads run on, and the memory
 * it binds strictly to single nodes, per page size. Bounded as a domain
 * read from stdin is: at most VPA_DOMAIN_MAX_CELLS cells, memnodes and
 * pages, VPA_DOMAIN_MAX_PINS pins of each kind; sets are bitmaps and
 * lookups hashes, so the work is linear in the document.
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

  if (value == NULL || !vpa_capabilities_unit_scale (unit, &scale) ||
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

/* The set an attribute names, or NULL (absent or not a set libvirt
 * would have accepted). */
static VpaBits *
prop_set (xmlNode *node, const char *attr)
{
  g_autofree char *s = vpa_xml_prop (node, attr);
  return s != NULL ? vpa_cpuset_parse_bits (s, NULL) : NULL;
}

static gboolean
over_bound (const char *what, const char *element, const char *children, guint max,
            GError **error)
{
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: %s has more than %u %s: the CPUs and memory it holds cannot be read", what,
               element, max, children);
  return FALSE;
}

/* Counts node's children named name against max. */
static gboolean
within (xmlNode *node, const char *name, guint max, const char *what, const char *element,
        GError **error)
{
  guint n = 0;

  for (xmlNode *c = node != NULL ? node->children : NULL; c != NULL; c = c->next)
    {
      if (vpa_xml_is (c, name, NULL) && ++n > max)
        {
          g_autofree char *children = g_strdup_printf ("<%s> elements", name);
          return over_bound (what, element, children, max, error);
        }
    }
  return TRUE;
}

/* How the domain's threads are pinned, read once. */
typedef struct {
  guint64 n_vcpus;
  VpaBits *mask;     /* <vcpu cpuset> (not with placement='auto'), or NULL */
  gint *single;      /* per vCPU: its one pinned CPU, else -1 */
  VpaBits *any;      /* every CPU a pin names */
  guint n_pinned;    /* vCPUs with a vcpupin */
  gboolean emulator; /* an <emulatorpin> */
  VpaBits *emulator_set;
} Pins;

static void
pins_clear (Pins *p)
{
  g_free (p->single);
  g_clear_pointer (&p->mask, vpa_cpuset_bits_free);
  g_clear_pointer (&p->any, vpa_cpuset_bits_free);
  g_clear_pointer (&p->emulator_set, vpa_cpuset_bits_free);
}

static void
read_vcpu (xmlNode *domain, Pins *p)
{
  xmlNode *vcpu = vpa_xml_child (domain, "vcpu", NULL);
  g_autofree char *text = vcpu != NULL ? vpa_xml_text (vcpu) : NULL;
  g_autofree char *placement = vcpu != NULL ? vpa_xml_prop (vcpu, "placement") : NULL;

  p->n_vcpus = 1;
  if (text != NULL && !g_ascii_string_to_unsigned (text, 10, 1, VPA_CPUSET_MAX, &p->n_vcpus, NULL))
    p->n_vcpus = 0;
  /* placement='auto' is numad's choice at start: not a pin */
  if (vcpu != NULL && g_strcmp0 (placement, "auto") != 0)
    p->mask = prop_set (vcpu, "cpuset");
  p->single = g_new (gint, MAX (p->n_vcpus, 1));
  for (guint64 i = 0; i < p->n_vcpus; i++)
    p->single[i] = -1;
}

/* One <vcpupin>, <emulatorpin> or <iothreadpin>. */
static void
read_pin (xmlNode *c, Pins *p, guint *iothread_pins)
{
  g_autoptr (VpaBits) set = prop_set (c, "cpuset");
  guint64 v;

  if (set == NULL)
    return;
  vpa_cpuset_bits_or (p->any, set);
  if (vpa_xml_is (c, "emulatorpin", NULL))
    {
      p->emulator = TRUE;
      if (p->emulator_set == NULL)
        p->emulator_set = vpa_cpuset_bits_new ();
      vpa_cpuset_bits_or (p->emulator_set, set);
    }
  else if (vpa_xml_is (c, "iothreadpin", NULL))
    {
      (*iothread_pins)++;
    }
  else if (prop_uint (c, "vcpu", &v) && v < p->n_vcpus)
    {
      gint first = vpa_cpuset_bits_next (set, 0);
      gboolean one = first >= 0 && vpa_cpuset_bits_next (set, (guint) first + 1) < 0;

      p->n_pinned += p->single[v] == -1;
      p->single[v] = one ? first : -2;
    }
}

/* The domain's <iothreads> count (absent: none). */
static guint64
iothread_count (xmlNode *domain)
{
  g_autofree char *text = vpa_xml_text (vpa_xml_child (domain, "iothreads", NULL));
  guint64 n = 0;

  if (text == NULL || !g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT32, &n, NULL))
    return 0;
  return n;
}

static gboolean
read_pins (xmlNode *domain, Pins *p, const char *what, GError **error)
{
  xmlNode *cputune = vpa_xml_child (domain, "cputune", NULL);
  guint iothread_pins = 0;

  if (!within (cputune, "vcpupin", VPA_DOMAIN_MAX_PINS, what, "<cputune>", error) ||
      !within (cputune, "iothreadpin", VPA_DOMAIN_MAX_PINS, what, "<cputune>", error) ||
      !within (cputune, "emulatorpin", 1, what, "<cputune>", error))
    return FALSE;
  read_vcpu (domain, p);
  p->any = vpa_cpuset_bits_new ();
  for (xmlNode *c = cputune != NULL ? cputune->children : NULL; c != NULL; c = c->next)
    {
      if (vpa_xml_is (c, "vcpupin", NULL) || vpa_xml_is (c, "emulatorpin", NULL) ||
          vpa_xml_is (c, "iothreadpin", NULL))
        read_pin (c, p, &iothread_pins);
    }
  /* A thread without a pin of its own runs on <vcpu cpuset>, as libvirt
   * starts it: a vCPU, the emulator, an I/O thread. */
  if (p->mask != NULL && (p->n_pinned < p->n_vcpus || !p->emulator ||
                          iothread_pins < iothread_count (domain)))
    vpa_cpuset_bits_or (p->any, p->mask);
  return TRUE;
}

/* The CPUs our <vpa:placed-cell reserved-cpus> record (isolate's kept
 * siblings) into set; FALSE when no cell records any and <vpa:numa>
 * has no emulator-threads policy (then <emulatorpin> may be the old
 * form of the record). */
static gboolean
recorded_reserved (xmlNode *domain, VpaBits *set)
{
  xmlNode *md = vpa_xml_child (domain, "metadata", NULL);
  xmlNode *aff = md != NULL ? vpa_xml_child (md, "affinity", VPA_XMLNS) : NULL;
  xmlNode *numa = aff != NULL ? vpa_xml_child (aff, "numa", VPA_XMLNS) : NULL;
  g_autofree char *emulator = numa != NULL ? vpa_xml_prop (numa, "emulator-threads") : NULL;
  /* with an emulator-threads policy <emulatorpin> is no reservation */
  gboolean found = emulator != NULL;

  for (xmlNode *c = aff != NULL ? aff->children : NULL; c != NULL; c = c->next)
    {
      g_autoptr (VpaBits) cpus = NULL;
      g_autoptr (VpaBits) emu = NULL;

      if (!vpa_xml_is (c, "placed-cell", VPA_XMLNS))
        continue;
      /* isolate's emulator CPU is dedicated to the domain */
      if ((emu = prop_set (c, "emulator-cpus")) != NULL)
        vpa_cpuset_bits_or (set, emu);
      if ((cpus = prop_set (c, "reserved-cpus")) == NULL)
        continue;
      vpa_cpuset_bits_or (set, cpus);
      found = TRUE;
    }
  return found;
}

/* emulator-threads="isolate": <emulatorpin> is the emulator's own
 * dedicated CPU, a reservation even where the record is not read (a
 * state file read by streaming keeps <vpa:numa>, not the record). */
static gboolean
emulator_isolated (xmlNode *domain)
{
  xmlNode *md = vpa_xml_child (domain, "metadata", NULL);
  xmlNode *aff = md != NULL ? vpa_xml_child (md, "affinity", VPA_XMLNS) : NULL;
  xmlNode *numa = aff != NULL ? vpa_xml_child (aff, "numa", VPA_XMLNS) : NULL;
  g_autofree char *emulator = numa != NULL ? vpa_xml_prop (numa, "emulator-threads") : NULL;

  return g_strcmp0 (emulator, "isolate") == 0;
}

/* Every vCPU pinned to exactly one CPU: those are dedicated, and for
 * ours (cpu-policy dedicated) isolate's kept siblings too, from
 * <vpa:placed-cell reserved-cpus>; a domain placed before that record
 * kept them in <emulatorpin>, read instead when no cell records any
 * (docs/placement.md). Every other CPU a pin names is pinned. A shared
 * guest of ours floats on the shared set: it claims no CPU. */
static gboolean
claim_cpus (xmlNode *domain, VpaNumaUse *use, const char *what, GError **error)
{
  g_autofree char *policy = vpa_cpu_policy (domain);
  g_autoptr (VpaBits) dedicated = vpa_cpuset_bits_new ();
  g_autoptr (GArray) ded = NULL;
  g_autoptr (GArray) any = NULL;
  Pins p = { 0 };
  gboolean all_single;

  if (!read_pins (domain, &p, what, error))
    {
      pins_clear (&p);
      return FALSE;
    }
  if (g_strcmp0 (policy, "shared") == 0 || p.n_vcpus == 0)
    {
      pins_clear (&p);
      return TRUE;
    }
  all_single = TRUE;
  for (guint64 i = 0; i < p.n_vcpus && all_single; i++)
    all_single = p.single[i] >= 0;
  for (guint64 i = 0; all_single && i < p.n_vcpus; i++)
    vpa_cpuset_bits_set_range (dedicated, (guint) p.single[i], (guint) p.single[i], TRUE);
  if (all_single && policy != NULL &&
      (!recorded_reserved (domain, dedicated) || emulator_isolated (domain)))
    vpa_cpuset_bits_or (dedicated, p.emulator_set);
  ded = vpa_cpuset_bits_to_array (dedicated);
  g_array_append_vals (use->dedicated, ded->data, ded->len);
  any = vpa_cpuset_bits_to_array (p.any);
  for (guint i = 0; i < any->len; i++)
    {
      if (!vpa_cpuset_bits_has (dedicated, g_array_index (any, guint, i)))
        g_array_append_val (use->pinned, g_array_index (any, guint, i));
    }
  pins_clear (&p);
  return TRUE;
}

/* The single host node of a strict nodeset, or -1. */
static gint
strict_node (xmlNode *node)
{
  g_autofree char *mode = node != NULL ? vpa_xml_prop (node, "mode") : NULL;
  g_autoptr (VpaBits) set = NULL;
  gint first;

  if (node == NULL || (mode != NULL && strcmp (mode, "strict") != 0))
    return -1;
  if ((set = prop_set (node, "nodeset")) == NULL)
    return -1;
  first = vpa_cpuset_bits_next (set, 0);
  return first >= 0 && vpa_cpuset_bits_next (set, (guint) first + 1) < 0 ? first : -1;
}

/* One <page> of <hugepages>, parsed once. */
typedef struct {
  guint64 kib;
  VpaBits *nodeset; /* NULL: the page without nodeset */
} Page;

static void
page_clear (Page *p)
{
  g_clear_pointer (&p->nodeset, vpa_cpuset_bits_free);
}

/* The hugepages of the domain: NULL for ordinary memory, else its pages
 * (possibly none: the default size). */
static gboolean
read_pages (xmlNode *domain, GArray **out, const char *what, GError **error)
{
  xmlNode *mb = vpa_xml_child (domain, "memoryBacking", NULL);
  xmlNode *hp = mb != NULL ? vpa_xml_child (mb, "hugepages", NULL) : NULL;

  *out = NULL;
  if (hp == NULL)
    return TRUE;
  if (!within (hp, "page", VPA_DOMAIN_MAX_CELLS, what, "<hugepages>", error))
    return FALSE;
  *out = g_array_new (FALSE, FALSE, sizeof (Page));
  g_array_set_clear_func (*out, (GDestroyNotify) page_clear);
  for (xmlNode *c = hp->children; c != NULL; c = c->next)
    {
      g_autofree char *size = NULL;
      g_autofree char *unit = NULL;
      g_autofree char *nodeset = NULL;
      Page page = { 0, NULL };

      if (!vpa_xml_is (c, "page", NULL))
        continue;
      size = vpa_xml_prop (c, "size");
      unit = vpa_xml_prop (c, "unit");
      nodeset = vpa_xml_prop (c, "nodeset");
      if (!size_kib (size, unit, &page.kib))
        continue;
      if (nodeset != NULL && (page.nodeset = vpa_cpuset_parse_bits (nodeset, NULL)) == NULL)
        continue;
      g_array_append_val (*out, page);
    }
  return TRUE;
}

/* The hugepage size backing guest cell id (cell -1: a guest without
 * cells), or 0 for ordinary memory. */
static guint64
cell_page_kib (GArray *pages, gint cell)
{
  guint64 fallback = DEFAULT_HUGEPAGE_KIB;

  if (pages == NULL)
    return 0;
  for (guint i = 0; i < pages->len; i++)
    {
      const Page *p = &g_array_index (pages, Page, i);

      if (p->nodeset == NULL)
        {
          fallback = p->kib;
        }
      else if (cell >= 0 && vpa_cpuset_bits_has (p->nodeset, (guint) cell))
        {
          return p->kib;
        }
    }
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

/* cellid -> strict node + 1 (0: not strict), the first <memnode> of each. */
static GHashTable *
memnodes (xmlNode *numatune)
{
  GHashTable *by_cell = g_hash_table_new (NULL, NULL);

  for (xmlNode *m = numatune->children; m != NULL; m = m->next)
    {
      guint64 cellid;
      if (vpa_xml_is (m, "memnode", NULL) && prop_uint (m, "cellid", &cellid) &&
          !g_hash_table_contains (by_cell, GUINT_TO_POINTER (cellid + 1)))
        {
          g_hash_table_insert (by_cell, GUINT_TO_POINTER (cellid + 1),
                               GINT_TO_POINTER (strict_node (m) + 1));
        }
    }
  return by_cell;
}

static void
claim_cells (xmlNode *numa, xmlNode *numatune, GArray *pages, gint all, VpaNumaUse *use)
{
  g_autoptr (GHashTable) by_cell = memnodes (numatune);
  guint pos = 0;

  for (xmlNode *c = numa->children; c != NULL; c = c->next)
    {
      g_autofree char *mem = NULL;
      g_autofree char *unit = NULL;
      guint64 id, kib;
      gpointer node;

      if (!vpa_xml_is (c, "cell", NULL))
        continue;
      id = pos++;
      prop_uint (c, "id", &id);
      mem = vpa_xml_prop (c, "memory");
      unit = vpa_xml_prop (c, "unit");
      if (!size_kib (mem, unit, &kib))
        continue;
      if (!g_hash_table_lookup_extended (by_cell, GUINT_TO_POINTER (id + 1), NULL, &node))
        node = GINT_TO_POINTER (all + 1);
      add_memory (use, GPOINTER_TO_INT (node) - 1, cell_page_kib (pages, (gint) id), kib);
    }
}

static gboolean
claim_memory (xmlNode *domain, VpaNumaUse *use, const char *what, GError **error)
{
  xmlNode *numatune = vpa_xml_child (domain, "numatune", NULL);
  xmlNode *cpu = vpa_xml_child (domain, "cpu", NULL);
  xmlNode *numa = cpu != NULL ? vpa_xml_child (cpu, "numa", NULL) : NULL;
  g_autoptr (GArray) pages = NULL;
  guint64 kib;
  gint all;

  if (!within (numa, "cell", VPA_DOMAIN_MAX_CELLS, what, "<cpu><numa>", error) ||
      !within (numatune, "memnode", VPA_DOMAIN_MAX_CELLS, what, "<numatune>", error) ||
      !read_pages (domain, &pages, what, error))
    return FALSE;
  if (numatune == NULL)
    return TRUE;
  all = strict_node (vpa_xml_child (numatune, "memory", NULL));
  if (numa != NULL)
    {
      claim_cells (numa, numatune, pages, all, use);
    }
  else if (element_kib (vpa_xml_child (domain, "memory", NULL), &kib))
    {
      add_memory (use, all, cell_page_kib (pages, -1), kib);
    }
  return TRUE;
}

gboolean
vpa_numa_claim (xmlNode *domain, const char *name, gboolean running, const char *what,
                VpaClaim **out, GError **error)
{
  g_autoptr (VpaNumaUse) use = vpa_numa_use_new ();

  g_return_val_if_fail (domain != NULL && name != NULL && out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  *out = NULL;
  if (vpa_xml_is (domain, "domstatus", NULL))
    domain = vpa_xml_child (domain, "domain", NULL);
  if (domain == NULL)
    return TRUE;
  if (!claim_cpus (domain, use, what, error) || !claim_memory (domain, use, what, error))
    return FALSE;
  if (use->dedicated->len > 0 || use->pinned->len > 0 || use->memory->len > 0)
    *out = vpa_claim_new_numa (name, running, g_steal_pointer (&use));
  return TRUE;
}
