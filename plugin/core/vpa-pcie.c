/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host's PCIe tree (vpa-pcie.h).
 */
#include "vpa-pcie.h"
#include "vpa-enum.h"

#include <string.h>

/* Deeper chains than this are refused: real hosts have a handful of
 * bridges (root port, two cascaded switches) above an endpoint. */
#define PCIE_MAX_DEPTH 32

VPA_ENUM_TO_STRING (vpa_pcie_distance, VpaPcieDistance, VPA_PCIE_LAST, "PIX", "PXB", "PHB",
                    "NODE", "SYS")
VPA_ENUM_TO_STRING (vpa_locality, VpaLocality, VPA_LOCALITY_LAST, "switch", "root-complex",
                    "numa-node", "socket", "system")

/* "system" is no group a request may ask for. */
gboolean
vpa_locality_from_string (const char *str, VpaLocality *out)
{
  gint i = vpa_enum_lookup (vpa_locality_names, VPA_LOCALITY_SYSTEM, str);

  if (i < 0)
    return FALSE;
  *out = (VpaLocality) i;
  return TRUE;
}

char *
vpa_pcie_root_name (VpaAddr root)
{
  return g_strdup_printf ("pci%04x:%02x", VPA_ADDR_DOMAIN (root), VPA_ADDR_BUS (root));
}

gboolean
vpa_pcie_root_parse (const char *str, VpaAddr *out)
{
  const char *colon;
  guint64 dom, bus;
  char d[9];

  if (str == NULL || !g_str_has_prefix (str, "pci"))
    return FALSE;
  str += 3;
  colon = strchr (str, ':');
  if (colon == NULL || colon == str || colon - str > 8 || strlen (colon + 1) != 2)
    return FALSE;
  memcpy (d, str, (gsize) (colon - str));
  d[colon - str] = '\0';
  if (!g_ascii_isxdigit (d[0]) || !g_ascii_isxdigit (colon[1]) ||
      !g_ascii_string_to_unsigned (d, 16, 0, G_MAXUINT32, &dom, NULL) ||
      !g_ascii_string_to_unsigned (colon + 1, 16, 0, 0xff, &bus, NULL))
    return FALSE;
  *out = VPA_PCIE_ROOT (dom, bus);
  return TRUE;
}

/* A component that is a full PCI address "0000:5e:00.0". */
static gboolean
parse_component (const char *s, VpaAddr *out)
{
  return strchr (s, ':') != strrchr (s, ':') && vpa_addr_parse (s, out);
}

gboolean
vpa_pcie_parse_sysfs_path (const char *path, VpaAddr addr, VpaAddr *root, VpaAddr *parent)
{
  VpaAddr r = VPA_ADDR_NONE, p = VPA_ADDR_NONE, last = VPA_ADDR_NONE;
  gboolean in_tree = FALSE, after_devices = FALSE;

  if (path == NULL)
    return FALSE;
  /* Component by component, each copied into a small buffer: a snapshot
   * has one path per device. */
  for (const char *c = path; *c != '\0';)
    {
      const char *slash = strchr (c, '/');
      gsize len = slash != NULL ? (gsize) (slash - c) : strlen (c);
      char comp[40];
      VpaAddr a;

      if (len >= sizeof comp)
        {
          if (in_tree)
            return FALSE;
          comp[0] = '\0';
        }
      else
        {
          memcpy (comp, c, len);
          comp[len] = '\0';
        }
      c += len + (slash != NULL);
      if (len == 0)
        continue;
      if (!in_tree)
        {
          /* ".../devices/pciDDDD:BB/..." */
          in_tree = after_devices && vpa_pcie_root_parse (comp, &r);
          after_devices = strcmp (comp, "devices") == 0;
          continue;
        }
      /* A host bridge below a device (Intel VMD): a new root. */
      if (vpa_pcie_root_parse (comp, &a))
        {
          r = a;
          p = last = VPA_ADDR_NONE;
          continue;
        }
      if (!parse_component (comp, &a))
        return FALSE;
      p = last;
      last = a;
    }
  if (!in_tree || last != addr)
    return FALSE;
  *root = r;
  *parent = p;
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Sealing                                                             */
/* ------------------------------------------------------------------ */

static char *
chain_text (const VpaHost *host, const guint *stack, guint n, gint extra)
{
  GString *s = g_string_new (NULL);
  char buf[VPA_ADDR_BUFLEN];

  for (guint k = 0; k < n; k++)
    {
      g_string_append_printf (s, "%s%s", k > 0 ? " -> " : "",
                              vpa_addr_format (vpa_host_device (host, stack[k])->addr, buf));
    }
  if (extra >= 0)
    {
      g_string_append_printf (s, " -> %s",
                              vpa_addr_format (vpa_host_device (host, (guint) extra)->addr, buf));
    }
  return g_string_free (s, FALSE);
}

static gboolean
link_parents (VpaHost *host, GError **error)
{
  for (guint i = 0; i < host->devices->len; i++)
    {
      VpaDevice *dev = vpa_host_device (host, i);
      char a[VPA_ADDR_BUFLEN], b[VPA_ADDR_BUFLEN];
      gint p;

      dev->pcie_parent_index = -1;
      if (dev->pcie_parent == VPA_ADDR_NONE)
        continue;
      p = vpa_host_lookup (host, dev->pcie_parent);
      if (p < 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: PCI device '%s': broken PCIe tree: the bridge above it, '%s', is not a device of the host",
                       host->source, vpa_addr_format (dev->addr, a),
                       vpa_addr_format (dev->pcie_parent, b));
          return FALSE;
        }
      dev->pcie_parent_index = p;
    }
  return TRUE;
}

/* Walks up from every device once (done[] marks finished ones), filling
 * unknown roots from the chain above and refusing cycles. */
static gboolean
resolve_roots (VpaHost *host, GError **error)
{
  guint n = host->devices->len;
  g_autofree guint8 *mark = g_new0 (guint8, MAX (n, 1)); /* 0 new, 1 on stack, 2 done */
  guint stack[PCIE_MAX_DEPTH + 1];

  for (guint i = 0; i < n; i++)
    {
      guint depth = 0;
      gint cur = (gint) i;
      VpaAddr root = VPA_ADDR_NONE;

      while (cur >= 0 && mark[cur] == 0)
        {
          if (depth > PCIE_MAX_DEPTH)
            {
              g_autofree char *chain = chain_text (host, stack, depth, -1);
              char buf[VPA_ADDR_BUFLEN];
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "%s: PCI device '%s': broken PCIe tree: more than %d bridges above it (%s ...)",
                           host->source, vpa_addr_format (vpa_host_device (host, i)->addr, buf),
                           PCIE_MAX_DEPTH, chain);
              return FALSE;
            }
          mark[cur] = 1;
          stack[depth++] = (guint) cur;
          cur = vpa_host_device (host, (guint) cur)->pcie_parent_index;
        }
      if (cur >= 0 && mark[cur] == 1)
        {
          g_autofree char *chain = chain_text (host, stack, depth, cur);
          char buf[VPA_ADDR_BUFLEN];
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: PCI device '%s': cyclic PCIe tree: %s",
                       host->source, vpa_addr_format (vpa_host_device (host, i)->addr, buf),
                       chain);
          return FALSE;
        }
      if (cur >= 0)
        root = vpa_host_device (host, (guint) cur)->pcie_root;
      while (depth > 0)
        {
          VpaDevice *dev = vpa_host_device (host, stack[--depth]);
          if (dev->pcie_root == VPA_ADDR_NONE)
            dev->pcie_root = root;
          root = dev->pcie_root;
          mark[stack[depth]] = 2;
        }
    }
  return TRUE;
}

gboolean
vpa_pcie_seal (VpaHost *host, GError **error)
{
  return link_parents (host, error) && resolve_roots (host, error);
}

/* ------------------------------------------------------------------ */
/* Reading the tree                                                    */
/* ------------------------------------------------------------------ */

/* The bridges above device i, root port first; their number. */
static guint
ancestors (const VpaHost *host, guint i, gint out[PCIE_MAX_DEPTH + 1])
{
  guint n = 0;
  gint p = vpa_host_device (host, i)->pcie_parent_index;

  for (; p >= 0 && n <= PCIE_MAX_DEPTH; p = vpa_host_device (host, (guint) p)->pcie_parent_index)
    out[n++] = p;
  for (guint k = 0; k < n / 2; k++)
    {
      gint t = out[k];
      out[k] = out[n - 1 - k];
      out[n - 1 - k] = t;
    }
  return n;
}

gint
vpa_pcie_root_port (const VpaHost *host, guint i)
{
  gint p = vpa_host_device (host, i)->pcie_parent_index, top = -1;
  guint n = 0;

  for (; p >= 0 && n++ <= PCIE_MAX_DEPTH; p = vpa_host_device (host, (guint) p)->pcie_parent_index)
    top = p;
  return top;
}

gint
vpa_pcie_switch (const VpaHost *host, guint i)
{
  gint chain[PCIE_MAX_DEPTH + 1];
  guint n = ancestors (host, i, chain);

  return n >= 2 ? chain[1] : -1;
}

static VpaPcieDistance
numa_distance (const VpaHost *host, const VpaDevice *a, const VpaDevice *b)
{
  (void) host;
  if (a->numa_node >= 0 && a->numa_node == b->numa_node)
    return VPA_PCIE_NODE;
  return VPA_PCIE_SYS;
}

VpaPcieDistance
vpa_pcie_distance (const VpaHost *host, guint a, guint b)
{
  const VpaDevice *da = vpa_host_device (host, a), *db = vpa_host_device (host, b);
  gint ca[PCIE_MAX_DEPTH + 1], cb[PCIE_MAX_DEPTH + 1];
  guint na, nb, k = 0;

  if (da->pcie_root == VPA_ADDR_NONE || da->pcie_root != db->pcie_root)
    return numa_distance (host, da, db);
  na = ancestors (host, a, ca);
  nb = ancestors (host, b, cb);
  if (na == 0 || nb == 0 || ca[0] != cb[0])
    return VPA_PCIE_PHB;
  /* Below one root port: bridges left on each side below the common
   * ones; one each (two downstream ports of one switch) or none is a
   * single switch. */
  while (k < na && k < nb && ca[k] == cb[k])
    k++;
  return na - k <= 1 && nb - k <= 1 ? VPA_PCIE_PIX : VPA_PCIE_PXB;
}

gboolean
vpa_pcie_locality_key (const VpaHost *host, guint i, VpaLocality level, gint64 *key)
{
  const VpaDevice *dev = vpa_host_device (host, i);
  gint v;

  switch (level)
    {
    case VPA_LOCALITY_SWITCH:
      v = vpa_pcie_root_port (host, i);
      *key = v;
      return v >= 0;
    case VPA_LOCALITY_ROOT_COMPLEX:
      *key = (gint64) dev->pcie_root;
      return dev->pcie_root != VPA_ADDR_NONE;
    case VPA_LOCALITY_NUMA_NODE:
      *key = dev->numa_node;
      return dev->numa_node >= 0;
    case VPA_LOCALITY_SOCKET:
      v = dev->numa_node >= 0 ? vpa_host_node_socket (host, dev->numa_node) : VPA_SOCKET_NONE;
      *key = v;
      return v != VPA_SOCKET_NONE;
    case VPA_LOCALITY_SYSTEM:
    case VPA_LOCALITY_LAST:
    default:
      *key = 0;
      return TRUE;
    }
}

VpaLocality
vpa_pcie_locality_of (const VpaHost *host, const guint *devices, guint n)
{
  for (guint level = 0; level < VPA_LOCALITY_SYSTEM; level++)
    {
      gboolean all = TRUE;
      gint64 first = 0;

      for (guint k = 0; k < n && all; k++)
        {
          gint64 key;
          all = vpa_pcie_locality_key (host, devices[k], (VpaLocality) level, &key) &&
                (k == 0 || key == first);
          if (k == 0)
            first = key;
        }
      if (all)
        return (VpaLocality) level;
    }
  return VPA_LOCALITY_SYSTEM;
}

char *
vpa_pcie_sysfs_path (const VpaHost *host, guint i)
{
  const VpaDevice *dev = vpa_host_device (host, i);
  gint chain[PCIE_MAX_DEPTH + 1];
  guint n;
  GString *s;
  char buf[VPA_ADDR_BUFLEN];
  g_autofree char *root = NULL;

  if (dev->pcie_root == VPA_ADDR_NONE)
    return NULL;
  n = ancestors (host, i, chain);
  root = vpa_pcie_root_name (dev->pcie_root);
  s = g_string_new ("/sys/devices/");
  g_string_append (s, root);
  for (guint k = 0; k < n; k++)
    g_string_append_printf (s, "/%s", vpa_addr_format (vpa_host_device (host, (guint) chain[k])->addr, buf));
  g_string_append_printf (s, "/%s", vpa_addr_format (dev->addr, buf));
  return g_string_free (s, FALSE);
}

gboolean
vpa_pcie_parse_speed (const char *s, guint16 *tenths)
{
  guint64 whole = 0, frac = 0;
  const char *p = s;
  const char *start;

  if (s == NULL)
    return FALSE;
  while (g_ascii_isspace (*p))
    p++;
  start = p;
  while (g_ascii_isdigit (*p) && whole < 10000)
    whole = whole * 10 + (guint64) (*p++ - '0');
  if (p == start || whole >= 10000)
    return FALSE;
  if (*p == '.')
    {
      p++;
      if (!g_ascii_isdigit (*p))
        return FALSE;
      frac = (guint64) (*p++ - '0');
      while (*p == '0')
        p++;
    }
  if (*p != '\0' && *p != ' ')
    return FALSE;
  *tenths = (guint16) (whole * 10 + frac);
  return TRUE;
}

const char *
vpa_pcie_format_speed (guint16 tenths, char buf[16])
{
  if (tenths % 10 == 0)
    {
      g_snprintf (buf, 16, "%u", tenths / 10u);
    }
  else
    {
      g_snprintf (buf, 16, "%u.%u", tenths / 10u, tenths % 10u);
    }
  return buf;
}
