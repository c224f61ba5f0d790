/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The guest's PCI layout written into a domain (vpa-rewrite.h,
 * vpa_rewrite_domain_topology): our expander buses and root ports, and
 * each placed device's guest address.
 */
#include "vpa-rewrite-private.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* The guest's PCI layout (<vpa:guest-numa>)                            */
/* ------------------------------------------------------------------ */

const VpaTopoPlacement *
vpa_rewrite_placement_of (Rewrite *rw, const char *alias)
{
  for (guint i = 0; rw->topo != NULL && alias != NULL && i < rw->topo->placements->len; i++)
    {
      const VpaTopoPlacement *pl = g_ptr_array_index (rw->topo->placements, i);
      if (strcmp (pl->device, alias) == 0)
        return pl;
    }
  return NULL;
}

/* <address type='pci' domain='0x0000' bus='0x05' slot='0x00' function='0x0'/> */
Elem *
vpa_rewrite_guest_address_elem (Rewrite *rw, guint bus, guint slot, Elem *parent)
{
  Elem *e = vpa_rewrite_elem_new ("address", parent);
  g_autofree char *b = g_strdup_printf ("0x%02x", bus);
  g_autofree char *sl = g_strdup_printf ("0x%02x", slot);

  vpa_rewrite_elem_attr (e, rw->dev_quote, "type", "pci");
  vpa_rewrite_elem_attr (e, rw->dev_quote, "domain", "0x0000");
  vpa_rewrite_elem_attr (e, rw->dev_quote, "bus", b);
  vpa_rewrite_elem_attr (e, rw->dev_quote, "slot", sl);
  vpa_rewrite_elem_attr (e, rw->dev_quote, "function", "0x0");
  return e;
}

Elem *
vpa_rewrite_controller_elem (Rewrite *rw, const VpaTopoController *tc)
{
  Elem *c = vpa_rewrite_elem_new ("controller", NULL);
  g_autofree char *index = g_strdup_printf ("%u", tc->index);
  Elem *alias;

  vpa_rewrite_elem_attr (c, rw->dev_quote, "type", "pci");
  vpa_rewrite_elem_attr (c, rw->dev_quote, "index", index);
  if (tc->kind == VPA_TOPO_EXPANDER)
    {
      g_autofree char *busnr = g_strdup_printf ("%u", tc->bus_nr);
      Elem *target, *node;

      vpa_rewrite_elem_attr (c, rw->dev_quote, "model", vpa_guest_model_expander_name (tc->machine));
      target = vpa_rewrite_elem_new ("target", c);
      vpa_rewrite_elem_attr (target, rw->dev_quote, "busNr", busnr);
      node = vpa_rewrite_elem_new ("node", target);
      node->text = g_strdup_printf ("%u", tc->cell);
    }
  else
    vpa_rewrite_elem_attr (c, rw->dev_quote, "model", "pcie-root-port");
  alias = vpa_rewrite_elem_new ("alias", c);
  vpa_rewrite_elem_attr (alias, rw->dev_quote, "name", tc->alias);
  if (tc->kind == VPA_TOPO_ROOT_PORT)
    vpa_rewrite_guest_address_elem (rw, tc->parent, tc->slot, c);
  return c;
}

static char *
controller_alias (xmlNode *node)
{
  g_autofree char *type = vpa_xml_prop (node, "type");

  if (!vpa_xml_is (node, "controller", NULL) || g_strcmp0 (type, "pci") != 0)
    return NULL;
  return vpa_rewrite_user_alias_of (node);
}

/* Index + 1 -> user alias of our controllers as the document has them. */
static GHashTable *
owned_indexes (xmlNode *devices)
{
  GHashTable *ret = g_hash_table_new_full (NULL, NULL, NULL, g_free);

  for (xmlNode *c = devices->children; c != NULL; c = c->next)
    {
      g_autofree char *alias = controller_alias (c);
      gint index;

      if (!vpa_guest_model_topology_owns (alias))
        continue;
      if ((index = vpa_guest_topology_controller_index (c)) >= 0)
        g_hash_table_insert (ret, GUINT_TO_POINTER ((guint) index + 1), g_steal_pointer (&alias));
    }
  return ret;
}

/* Our controllers: kept when they are exactly the plan's, replaced when
 * they differ, removed when the plan has none of that alias; the plan's
 * others go after the document's last <controller>. */
static void
rewrite_controllers (Rewrite *rw, xmlNode *devices)
{
  GPtrArray *plan = rw->topo->controllers;
  g_autoptr (GHashTable) done = g_hash_table_new (NULL, NULL);
  g_autoptr (GPtrArray) added = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_rewrite_elem_free);
  xmlNode *last = NULL;

  for (xmlNode *c = devices->children; c != NULL; c = c->next)
    {
      g_autofree char *alias = controller_alias (c);
      const VpaTopoController *tc = NULL;

      if (vpa_xml_is (c, "controller", NULL))
        last = c;
      if (!vpa_guest_model_topology_owns (alias))
        continue;
      for (guint i = 0; i < plan->len && tc == NULL; i++)
        {
          const VpaTopoController *t = g_ptr_array_index (plan, i);
          if (strcmp (t->alias, alias) == 0 && !g_hash_table_contains (done, t))
            tc = t;
        }
      if (tc == NULL)
        {
          vpa_rewrite_remove_element (rw, c);
          continue;
        }
      g_hash_table_add (done, (gpointer) tc);
      if (!vpa_guest_topology_controller_matches (c, tc))
        {
          g_autoptr (Elem) e = vpa_rewrite_controller_elem (rw, tc);
          g_autofree char *indent = vpa_rewrite_own_indent (rw, c);
          vpa_rewrite_replace_element (rw, c, e, indent);
        }
    }
  for (guint i = 0; i < plan->len; i++)
    {
      if (!g_hash_table_contains (done, g_ptr_array_index (plan, i)))
        g_ptr_array_add (added, vpa_rewrite_controller_elem (rw, g_ptr_array_index (plan, i)));
    }
  if (added->len == 0)
    return;
  if (last == NULL)
    last = vpa_xml_child (devices, "emulator", NULL);
  vpa_rewrite_insert_children (rw, devices, last != NULL ? AFTER : AT_START, last, added);
}

static gboolean
is_unplaced (Rewrite *rw, const char *alias)
{
  for (guint i = 0; i < rw->topo->unplaced->len; i++)
    {
      if (strcmp (((const VpaTopoDevice *) g_ptr_array_index (rw->topo->unplaced, i))->device, alias) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Whether the plan keeps our controller called alias at index. */
static gboolean
plan_keeps (Rewrite *rw, const char *alias, guint index)
{
  for (guint i = 0; i < rw->topo->controllers->len; i++)
    {
      const VpaTopoController *tc = g_ptr_array_index (rw->topo->controllers, i);
      if (tc->index == index && g_strcmp0 (tc->alias, alias) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Each placed device's guest <address> on its root port (or expander).
 * A device of ours left where libvirt puts it loses an address on one of
 * our controllers; another device (hot-plugged into a spare) keeps its
 * address while the plan keeps that controller. */
static void
rewrite_guest_addresses (Rewrite *rw, xmlNode *devices)
{
  g_autoptr (GHashTable) ours = owned_indexes (devices);

  for (xmlNode *c = devices->children; c != NULL; c = c->next)
    {
      g_autofree char *alias = NULL;
      const VpaTopoPlacement *pl;
      xmlNode *addr;
      gint bus, slot;

      if ((!vpa_xml_is (c, "hostdev", NULL) && !vpa_xml_is (c, "interface", NULL)) ||
          g_hash_table_contains (rw->removed, c) || (alias = vpa_rewrite_user_alias_of (c)) == NULL)
        continue;
      pl = vpa_rewrite_placement_of (rw, alias);
      addr = vpa_xml_child (c, "address", NULL);
      bus = vpa_guest_topology_address_bus (c, &slot);
      if (pl == NULL)
        {
          const char *on = bus >= 0 ? g_hash_table_lookup (ours, GUINT_TO_POINTER ((guint) bus + 1))
                                    : NULL;
          if (!rw->topo->keep && addr != NULL && on != NULL &&
              (is_unplaced (rw, alias) || !plan_keeps (rw, on, (guint) bus)))
            {
              /* every <address>: libvirt reads the first, and a second
               * would become the first */
              for (xmlNode *a = addr; a != NULL; a = a->next)
                {
                  if (vpa_xml_is (a, "address", NULL))
                    vpa_rewrite_remove_element (rw, a);
                }
            }
          continue;
        }
      if (bus == (gint) pl->bus && slot == (gint) pl->slot)
        continue;
      {
        g_autoptr (Elem) e = vpa_rewrite_guest_address_elem (rw, pl->bus, pl->slot, NULL);
        if (addr != NULL)
          {
            vpa_rewrite_replace_element (rw, addr, e, "");
          }
        else
          {
            vpa_rewrite_insert_child (rw, c, AT_END, NULL, e);
          }
      }
    }
}

void
vpa_rewrite_topology (Rewrite *rw, xmlNode *devices)
{
  if (rw->topo == NULL || devices == NULL)
    return;
  if (!rw->topo->keep)
    rewrite_controllers (rw, devices);
  rewrite_guest_addresses (rw, devices);
}
