/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The domain rewrite edits the original bytes instead of serialising a
 * tree: libxml2 parses and validates the document and finds what to
 * change, a scanner maps every element to its byte span, and the
 * changes are spliced in. Whatever a placement does not own — comments,
 * quoting, attribute order, whitespace, character references, the XML
 * declaration, libvirt's <domstatus> — is copied byte for byte.
 */
#include "vpa-rewrite-private.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* The rewrite                                                         */
/* ------------------------------------------------------------------ */

char *
vpa_rewrite_user_alias_of (xmlNode *node)
{
  xmlNode *alias = vpa_xml_child (node, "alias", NULL);
  return alias != NULL ? vpa_xml_prop (alias, "name") : NULL;
}

static gboolean
is_pci_device (Rewrite *rw, xmlNode *node)
{
  gboolean is_pci = FALSE;
  VpaAddr addr;

  return (vpa_xml_is (node, "hostdev", NULL) || vpa_xml_is (node, "interface", NULL)) &&
         vpa_xml_hostdev_address (node, rw->what, &is_pci, &addr, NULL) && is_pci;
}

/* User alias -> PCI <interface>/<hostdev> of <devices>; the first of a
 * repeated alias wins (libvirt refuses repeats). */
static GHashTable *
devices_by_alias (Rewrite *rw, xmlNode *devices)
{
  GHashTable *ret = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    {
      char *name;
      if (!is_pci_device (rw, c) || (name = vpa_rewrite_user_alias_of (c)) == NULL)
        continue;
      if (g_hash_table_contains (ret, name))
        {
          g_free (name);
        }
      else
        {
          g_hash_table_insert (ret, name, c);
        }
    }
  return ret;
}

/* Gives a device the decided <source><address>, changing nothing when
 * it has that address already. */
static gboolean
fill_source (Rewrite *rw, xmlNode *node, VpaAddr addr, GError **error)
{
  gboolean is_iface = vpa_xml_is (node, "interface", NULL);
  gboolean is_pci;
  VpaAddr cur;
  xmlNode *source, *address, *after;
  g_autoptr (Elem) src = NULL;

  if (!vpa_xml_hostdev_address (node, rw->what, &is_pci, &cur, error))
    return FALSE;
  if (cur == addr)
    return TRUE;
  source = vpa_xml_child (node, "source", NULL);
  address = source != NULL ? vpa_xml_child (source, "address", NULL) : NULL;
  if (address != NULL)
    {
      g_autoptr (Elem) a = vpa_rewrite_address_elem (rw, addr, is_iface, NULL);
      vpa_rewrite_replace_element (rw, address, a, "");
    }
  else if (source != NULL)
    {
      g_autoptr (Elem) a = vpa_rewrite_address_elem (rw, addr, is_iface, NULL);
      vpa_rewrite_insert_child (rw, source, AT_START, NULL, a);
    }
  else
    {
      /* where libvirt writes it: after <mac> or <driver> */
      src = vpa_rewrite_elem_new ("source", NULL);
      vpa_rewrite_address_elem (rw, addr, is_iface, src);
      after = vpa_xml_child (node, is_iface ? "mac" : "driver", NULL);
      vpa_rewrite_insert_child (rw, node, after != NULL ? AFTER : AT_START, after, src);
    }
  return TRUE;
}

/* The <interface type='network'> of <devices> with this user alias. */
static xmlNode *
network_interface (xmlNode *devices, const char *alias)
{
  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    {
      g_autofree char *type = NULL;
      g_autofree char *name = NULL;

      if (vpa_xml_is (c, "interface", NULL) &&
          g_strcmp0 (type = vpa_xml_prop (c, "type"), "network") == 0 &&
          g_strcmp0 (name = vpa_rewrite_user_alias_of (c), alias) == 0)
        return c;
    }
  return NULL;
}

static gsize
skip_blanks (Rewrite *rw, gsize i, gsize stop)
{
  while (i < stop && g_ascii_isspace (rw->buf[i]))
    i++;
  return i;
}

/* The value of the attribute called name (no prefix) in node's start
 * tag, as the bytes between its quotes: [*start, *end), *quote its
 * quote. FALSE when the tag has no such attribute. The document is
 * well-formed: every attribute is NAME blanks = blanks QUOTED. */
static gboolean
attr_value_span (Rewrite *rw, xmlNode *node, const char *name, gsize *start, gsize *end,
                 char *quote)
{
  const Span *span = vpa_rewrite_span_of (node);
  gsize stop = span->start_end - 1, i = span->start + 1 + span->name_len;
  gsize n = strlen (name);

  while ((i = skip_blanks (rw, i, stop)) < stop)
    {
      gsize name_start = i, name_end;

      while (i < stop && rw->buf[i] != '=' && rw->buf[i] != '/' && !g_ascii_isspace (rw->buf[i]))
        i++;
      name_end = i;
      i = skip_blanks (rw, i, stop);
      if (i >= stop || rw->buf[i] != '=')
        return FALSE; /* the '/' of an empty element */
      i = skip_blanks (rw, i + 1, stop);
      if (i >= stop || (rw->buf[i] != '"' && rw->buf[i] != '\''))
        return FALSE;
      *quote = rw->buf[i];
      *start = ++i;
      while (i < stop && rw->buf[i] != *quote)
        i++;
      *end = i++;
      if (name_end - name_start == n && memcmp (rw->buf + name_start, name, n) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Points an <interface type='network'> at the decided network: the
 * value of its <source network> changes, every other byte of the
 * element stays (prefixed attributes, character references, quotes). */
static gboolean
fill_network (Rewrite *rw, xmlNode *devices, const VpaDecision *d, GError **error)
{
  xmlNode *node = network_interface (devices, d->device);
  xmlNode *source = node != NULL ? vpa_xml_child (node, "source", NULL) : NULL;
  g_autofree char *cur = source != NULL ? vpa_xml_prop (source, "network") : NULL;
  g_autoptr (GString) text = g_string_new (NULL);
  gsize start, end;
  char quote;

  if (source == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: port '%s': no <interface type='network'> with a <source> has this user alias", rw->what, d->device);
      return FALSE;
    }
  if (g_strcmp0 (cur, d->network) == 0)
    return TRUE;
  if (attr_value_span (rw, source, "network", &start, &end, &quote))
    {
      vpa_rewrite_append_attr_value (text, quote, d->network);
    }
  else
    {
      /* no network attribute: one after the element's name */
      start = end = vpa_rewrite_span_of (source)->start + 1 + vpa_rewrite_span_of (source)->name_len;
      quote = vpa_rewrite_quote_of (rw, source, '\'');
      g_string_append_printf (text, " network=%c", quote);
      vpa_rewrite_append_attr_value (text, quote, d->network);
      g_string_append_c (text, quote);
    }
  vpa_rewrite_edit_add (rw, start, end, g_string_free (g_steal_pointer (&text), FALSE));
  return TRUE;
}

static gboolean
rewrite_ports (Rewrite *rw, xmlNode *devices, GPtrArray *decisions, GHashTable *by_alias,
               GError **error)
{
  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      xmlNode *node;

      if (d->kind == VPA_DECISION_ALIAS)
        continue;
      if (d->network != NULL)
        {
          if (!fill_network (rw, devices, d, error))
            return FALSE;
          continue;
        }
      node = g_str_has_prefix (d->device, VPA_ALIAS_PREFIX)
               ? NULL
               : g_hash_table_lookup (by_alias, d->device);
      if (node == NULL && d->kind == VPA_DECISION_DEVICE)
        continue; /* rewrite_alias_hostdevs adds it */
      if (node == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: port '%s': no <interface type='hostdev'> or PCI <hostdev> has this user alias",
                       rw->what, d->device);
          return FALSE;
        }
      if (!fill_source (rw, node, d->addr, error))
        return FALSE;
    }
  return TRUE;
}

static Elem *
alias_hostdev_elem (Rewrite *rw, const VpaDecision *d)
{
  Elem *hd = vpa_rewrite_elem_new ("hostdev", NULL);
  Elem *src, *alias;
  g_autofree char *name = vpa_plan_decision_user_alias (d);
  const VpaTopoPlacement *pl;

  vpa_rewrite_elem_attr (hd, rw->dev_quote, "mode", "subsystem");
  vpa_rewrite_elem_attr (hd, rw->dev_quote, "type", "pci");
  vpa_rewrite_elem_attr (hd, rw->dev_quote, "managed", "yes");
  src = vpa_rewrite_elem_new ("source", hd);
  vpa_rewrite_address_elem (rw, d->addr, FALSE, src);
  alias = vpa_rewrite_elem_new ("alias", hd);
  vpa_rewrite_elem_attr (alias, rw->dev_quote, "name", name);
  if ((pl = vpa_rewrite_placement_of (rw, name)) != NULL)
    vpa_rewrite_guest_address_elem (rw, pl->bus, pl->slot, hd);
  return hd;
}

/* Reuses the ua-vpa-NAME-N hostdevs the decisions name, removes the
 * others (ours by their prefix), and adds the missing ones after the
 * last remaining <hostdev>. */
static gboolean
rewrite_alias_hostdevs (Rewrite *rw, xmlNode *domain, xmlNode *devices, GPtrArray *decisions,
                        GHashTable *by_alias, GError **error)
{
  g_autoptr (GHashTable) wanted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GPtrArray) added = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_rewrite_elem_free);
  xmlNode *last_kept = NULL;

  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      if (d->kind == VPA_DECISION_ALIAS)
        g_hash_table_insert (wanted, vpa_plan_decision_user_alias (d), (gpointer) d);
    }
  for (xmlNode *c = devices != NULL ? devices->children : NULL; c != NULL; c = c->next)
    {
      g_autofree char *name = NULL;
      const VpaDecision *d;

      if (!vpa_xml_is (c, "hostdev", NULL) || !is_pci_device (rw, c))
        continue;
      name = vpa_rewrite_user_alias_of (c);
      if (name == NULL || !g_str_has_prefix (name, VPA_ALIAS_PREFIX))
        {
          last_kept = c;
          continue;
        }
      d = g_hash_table_lookup (wanted, name);
      if (d == NULL)
        {
          vpa_rewrite_remove_element (rw, c);
          continue;
        }
      if (!fill_source (rw, c, d->addr, error))
        return FALSE;
      g_hash_table_remove (wanted, name); /* a second one of that name goes */
      last_kept = c;
    }
  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      g_autofree char *name = NULL;

      if (d->kind == VPA_DECISION_DEVICE && !g_hash_table_contains (by_alias, d->device))
        g_ptr_array_add (added, alias_hostdev_elem (rw, d));
      if (d->kind != VPA_DECISION_ALIAS)
        continue;
      name = vpa_plan_decision_user_alias (d);
      if (g_hash_table_contains (wanted, name))
        g_ptr_array_add (added, alias_hostdev_elem (rw, d));
    }
  if (added->len == 0)
    return TRUE;
  if (devices == NULL)
    {
      g_autoptr (Elem) devs = vpa_rewrite_elem_new ("devices", NULL);
      for (guint i = 0; rw->topo != NULL && !rw->topo->keep && i < rw->topo->controllers->len; i++)
        g_ptr_array_add (devs->children, vpa_rewrite_controller_elem (rw, g_ptr_array_index (rw->topo->controllers, i)));
      g_ptr_array_extend_and_steal (devs->children, g_steal_pointer (&added));
      vpa_rewrite_insert_child (rw, domain, AT_END, NULL, devs);
      return TRUE;
    }
  vpa_rewrite_insert_children (rw, devices, last_kept != NULL ? AFTER : AT_END, last_kept, added);
  return TRUE;
}

static gboolean
placed_matches (const VpaDomain *dom, GPtrArray *decisions)
{
  if (dom->placed->len != decisions->len)
    return FALSE;
  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      const VpaPlacedRecord *r = g_ptr_array_index (dom->placed, i);
      g_autofree char *name = vpa_plan_decision_user_alias (d);

      if (strcmp (name, r->device) != 0 || g_strcmp0 (r->network, d->network) != 0 ||
          (d->network == NULL && r->addr != d->addr) || r->numa_node != d->numa_node ||
          r->policy != d->policy || r->source != d->source ||
          g_strcmp0 (r->locality_group, d->locality_group) != 0 ||
          (d->locality_group != NULL && r->locality != d->locality))
        return FALSE;
    }
  return TRUE;
}

static Elem *
placed_elem (Rewrite *rw, const char *qname, const VpaDecision *d)
{
  Elem *e = vpa_rewrite_elem_new (qname, NULL);
  g_autofree char *name = vpa_plan_decision_user_alias (d);
  g_autofree char *node = g_strdup_printf ("%d", d->numa_node);
  char addr[VPA_ADDR_BUFLEN];

  vpa_rewrite_elem_attr (e, rw->vpa_quote, "device", name);
  if (d->network != NULL)
    {
      vpa_rewrite_elem_attr (e, rw->vpa_quote, "network", d->network);
    }
  else
    {
      vpa_rewrite_elem_attr (e, rw->vpa_quote, "address", vpa_addr_format (d->addr, addr));
    }
  vpa_rewrite_elem_attr (e, rw->vpa_quote, "numa-node", node);
  vpa_rewrite_elem_attr (e, rw->vpa_quote, "policy", vpa_policy_to_string (d->policy));
  vpa_rewrite_elem_attr (e, rw->vpa_quote, "source", vpa_policy_source_to_string (d->source));
  if (d->locality_group != NULL)
    {
      vpa_rewrite_elem_attr (e, rw->vpa_quote, "locality-group", d->locality_group);
      vpa_rewrite_elem_attr (e, rw->vpa_quote, "locality",
                             vpa_locality_to_string ((VpaLocality) CLAMP (d->locality, 0,
                                                                          VPA_LOCALITY_LAST - 1)));
    }
  return e;
}

/* Replaces the <vpa:placed> records, unless they say exactly this. */
static void
rewrite_placed (Rewrite *rw, const VpaDomain *dom, xmlNode *affinity, GPtrArray *decisions)
{
  g_autoptr (GPtrArray) elems = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_rewrite_elem_free);
  g_autofree char *qname = NULL;

  if (placed_matches (dom, decisions))
    return;
  for (xmlNode *c = affinity->children; c != NULL; c = c->next)
    {
      if (vpa_xml_is (c, "placed", VPA_XMLNS))
        vpa_rewrite_remove_element (rw, c);
    }
  /* the prefix the document gave our namespace */
  qname = affinity->ns->prefix != NULL
            ? g_strdup_printf ("%s:placed", (const char *) affinity->ns->prefix)
            : g_strdup ("placed");
  for (guint i = 0; i < decisions->len; i++)
    g_ptr_array_add (elems, placed_elem (rw, qname, g_ptr_array_index (decisions, i)));
  if (elems->len > 0)
    vpa_rewrite_insert_children (rw, affinity, AT_END, NULL, elems);
}

static gboolean
check_decisions (const char *what, GPtrArray *decisions, GError **error)
{
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < decisions->len; i++)
    {
      const VpaDecision *d = g_ptr_array_index (decisions, i);
      g_autofree char *name = NULL;

      g_return_val_if_fail (d != NULL && d->device != NULL, FALSE);
      g_return_val_if_fail (d->policy < VPA_POLICY_LAST, FALSE);
      g_return_val_if_fail (d->source < VPA_POLICY_SOURCE_LAST, FALSE);
      name = vpa_plan_decision_user_alias (d);
      if (*d->device == '\0' ||
          (d->kind == VPA_DECISION_ALIAS &&
           strspn (d->device, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
             strlen (d->device)))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: decision for device '%s': not a valid libvirt user alias", what, name);
          return FALSE;
        }
      if (d->addr == VPA_ADDR_NONE && d->network == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: decision for device '%s': no PCI address", what, name);
          return FALSE;
        }
      if (g_hash_table_contains (seen, name))
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: two decisions for device '%s'", what, name);
          return FALSE;
        }
      g_hash_table_add (seen, g_steal_pointer (&name));
    }
  return TRUE;
}

xmlNode *
vpa_rewrite_find_affinity (xmlNode *domain)
{
  xmlNode *metadata = vpa_xml_child (domain, "metadata", NULL);
  return metadata != NULL ? vpa_xml_child (metadata, "affinity", VPA_XMLNS) : NULL;
}

/* The scanner reads bytes: only encodings whose markup is ASCII. */
gboolean
vpa_rewrite_check_encoding (xmlDoc *doc, const char *what, GError **error)
{
  const char *enc = (const char *) doc->encoding;

  if (enc == NULL || g_ascii_strcasecmp (enc, "UTF-8") == 0 ||
      g_ascii_strcasecmp (enc, "UTF8") == 0 || g_ascii_strcasecmp (enc, "US-ASCII") == 0 ||
      g_ascii_strcasecmp (enc, "ASCII") == 0)
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: <?xml encoding='%s'?>: only UTF-8 documents can be rewritten", what, enc);
  return FALSE;
}

gboolean
vpa_rewrite_map_document (Rewrite *rw, xmlDoc *doc, GError **error)
{
  guint next = 0;

  if (!vpa_rewrite_scan_spans (rw) || !vpa_rewrite_attach_spans (rw, doc->children, &next) || next != rw->spans->len)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: internal error: cannot map the document's elements to its bytes",
                   rw->what);
      return FALSE;
    }
  return TRUE;
}

void
vpa_rewrite_grow (Growth *total, const Growth *more)
{
  total->elements = MIN ((guint64) total->elements + more->elements, G_MAXUINT);
  total->attributes = MIN ((guint64) total->attributes + more->attributes, G_MAXUINT);
}

/* Our own output, parsed within the input's bounds grown by what the
 * edits added (a domain at the bounds stays placeable). */
VpaDomain *
vpa_rewrite_parse_output (const char *out, gsize out_len, const char *what, const Growth *added,
                          GError **error)
{
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory_grown (&(VpaDoc){ out, out_len, what }, added->elements, added->attributes, error);

  if (doc == NULL)
    return NULL;
  return vpa_domain_parse_node (xmlDocGetRootElement (doc), what, error);
}

/* Our own output must parse, meet the caller's check and record exactly
 * the decisions. */
static gboolean
verify_output (const char *out, gsize out_len, const char *what, const Growth *added,
               GPtrArray *decisions, VpaRewriteCheck check, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (VpaDomain) dom = vpa_rewrite_parse_output (out, out_len, what, added, &local);

  if (dom != NULL && (check == NULL || check (dom, &local)) && placed_matches (dom, decisions))
    return TRUE;
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: internal error: the rewritten document does not hold the placement%s%s",
               what, local != NULL ? ": " : "", local != NULL ? local->message : "");
  return FALSE;
}

static char *
rewrite_tree (Rewrite *rw, xmlDoc *doc, const VpaDomain *dom, GPtrArray *decisions,
              gsize *out_len, GError **error)
{
  xmlNode *root = xmlDocGetRootElement (doc);
  xmlNode *domain = vpa_xml_is (root, "domstatus", NULL) ? vpa_xml_child (root, "domain", NULL)
                                                         : root;
  xmlNode *affinity = vpa_rewrite_find_affinity (domain);
  xmlNode *devices = vpa_xml_child (domain, "devices", NULL);
  g_autoptr (GHashTable) by_alias = NULL;

  if (affinity == NULL)
    {
      if (decisions->len > 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <metadata> has no <vpa:affinity> to record the placement in",
                       rw->what);
          return NULL;
        }
      *out_len = rw->len;
      return g_strndup (rw->buf, rw->len);
    }
  if (!vpa_rewrite_map_document (rw, doc, error))
    return NULL;
  vpa_rewrite_learn_layout (rw, root);
  rw->vpa_quote = vpa_rewrite_quote_of (rw, affinity, '"');
  by_alias = devices_by_alias (rw, devices);
  if (!rewrite_ports (rw, devices, decisions, by_alias, error) ||
      !rewrite_alias_hostdevs (rw, domain, devices, decisions, by_alias, error))
    return NULL;
  vpa_rewrite_topology (rw, devices);
  rewrite_placed (rw, dom, affinity, decisions);
  return vpa_rewrite_edits_apply (rw, out_len, error);
}

char *
vpa_rewrite_domain (const VpaDoc *doc, GPtrArray *decisions, gsize *out_len, GError **error)
{
  return vpa_rewrite_domain_topology (doc, decisions, NULL, NULL, out_len, error);
}

/* Parses and rewrites buf; its tree and the maps into it are freed on
 * return, before the caller parses the output to verify it, so that
 * one libxml2 tree is alive at a time (see docs/reliability.md). */
static char *
rewrite_placement (const char *buf, gsize len, const char *what, GPtrArray *decisions,
                   const VpaGuestTopology *topo, gsize *out_len, Growth *added,
                   GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (VpaDomain) dom = NULL;
  g_autoptr (GArray) spans = g_array_new (FALSE, FALSE, sizeof (Span));
  g_autoptr (GArray) edits = g_array_new (FALSE, FALSE, sizeof (Edit));
  g_autoptr (GHashTable) removed = g_hash_table_new (NULL, NULL);
  Rewrite rw = { buf, len, what, spans, edits };
  char *out;

  rw.topo = topo;
  rw.removed = removed;
  g_array_set_clear_func (edits, vpa_rewrite_edit_clear);
  if ((doc = vpa_xml_parse_memory (&(VpaDoc){ buf, len, what }, error)) == NULL ||
      !vpa_rewrite_check_encoding (doc, what, error) ||
      (dom = vpa_domain_parse_node (xmlDocGetRootElement (doc), what, error)) == NULL ||
      !check_decisions (what, decisions, error))
    return NULL;
  out = rewrite_tree (&rw, doc, dom, decisions, out_len, error);
  g_free (rw.step);
  *added = rw.added;
  return out;
}

char *
vpa_rewrite_domain_topology (const VpaDoc *doc, GPtrArray *decisions,
                             const VpaGuestTopology *topo, VpaRewriteCheck check, gsize *out_len,
                             GError **error)
{
  g_autofree char *out = NULL;
  Growth added = { 0, 0 };

  g_return_val_if_fail (doc != NULL && doc->what != NULL, NULL);
  g_return_val_if_fail (decisions != NULL, NULL);
  g_return_val_if_fail (out_len != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  out = rewrite_placement (doc->buf, doc->len, doc->what, decisions, topo, out_len, &added, error);
  if (out == NULL || !verify_output (out, *out_len, doc->what, &added, decisions, check, error))
    return NULL;
  return g_steal_pointer (&out);
}
