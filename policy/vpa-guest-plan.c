/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The guest PCI layout planner (vpa-guest-plan.h; docs/guest-numa.md):
 * expander buses, root ports and guest addresses for the placed devices,
 * from the layout the domain has. A pure function of structs.
 */
#include "vpa-guest-plan.h"

#include <string.h>

/* The lowest slot a device or root port takes on an expander bus. */
#define VPA_TOPO_MIN_SLOT 0

/* ------------------------------------------------------------------ */
/* Plan                                                                */
/* ------------------------------------------------------------------ */

static gboolean
is_expander_model (const char *model)
{
  return g_strcmp0 (model, "pcie-expander-bus") == 0 || g_strcmp0 (model, "pci-expander-bus") == 0;
}

static const VpaGuestController *
controller_by_alias (const VpaGuestBus *bus, const char *alias)
{
  for (guint i = 0; i < bus->controllers->len; i++)
    {
      const VpaGuestController *c = g_ptr_array_index (bus->controllers, i);
      if (g_strcmp0 (c->alias, alias) == 0)
        return c;
    }
  return NULL;
}

static const VpaGuestController *
controller_by_index (const VpaGuestBus *bus, gint index)
{
  for (guint i = 0; index >= 0 && i < bus->controllers->len; i++)
    {
      const VpaGuestController *c = g_ptr_array_index (bus->controllers, i);
      if (c->index == (guint) index)
        return c;
    }
  return NULL;
}

static const VpaGuestDeviceAddr *
device_addr (const VpaGuestBus *bus, const char *alias)
{
  for (guint i = 0; i < bus->devices->len; i++)
    {
      const VpaGuestDeviceAddr *d = g_ptr_array_index (bus->devices, i);
      if (strcmp (d->alias, alias) == 0)
        return d;
    }
  return NULL;
}

/* Whether an element other than the devices being placed sits on the
 * bus with this index (libvirt puts devices without an address into
 * free root ports, ours too). */
static gboolean
occupied_by_other (const VpaGuestBus *bus, guint index, GPtrArray *devices)
{
  for (guint i = 0; i < bus->occupants->len; i++)
    {
      const VpaGuestDeviceAddr *o = g_ptr_array_index (bus->occupants, i);
      gboolean ours = FALSE;

      /* our own controllers and alias hostdevs are re-addressed by the
       * plan or removed, never a spare's occupant (a controller naming its
       * own index as its bus included) */
      if (o->bus != (gint) index || o->ours || vpa_guest_model_topology_owns (o->alias))
        continue;
      for (guint j = 0; devices != NULL && o->alias != NULL && j < devices->len && !ours; j++)
        ours = strcmp (((const VpaTopoDevice *) g_ptr_array_index (devices, j))->device, o->alias) == 0;
      if (!ours)
        return TRUE;
    }
  return FALSE;
}

typedef struct {
  const VpaGuestBus *bus;
  const char *what;
  GPtrArray *devices; /* every VpaTopoDevice being placed */
  gboolean index_used[VPA_TOPO_INDEX_MAX + 1];
  /* indexes an element not ours names as its bus: no new controller of
   * ours takes one (it would become that element's parent; libvirt adds
   * the missing controller itself) */
  gboolean index_referenced[VPA_TOPO_INDEX_MAX + 1];
  gboolean busnr_used[256];
  guint main_top; /* highest bus number the main hierarchy may use */
  VpaGuestTopology *topo;
} Planner;

/* The domain's own expander that controller c sits under, or NULL. */
static const VpaGuestController *
own_expander_of (const VpaGuestBus *bus, const VpaGuestController *c)
{
  for (guint depth = 0; c != NULL && depth <= VPA_TOPO_INDEX_MAX; depth++)
    {
      if (is_expander_model (c->model))
        return c;
      if (c->parent <= 0 || (guint) c->parent == c->index)
        return NULL;
      c = controller_by_index (bus, c->parent);
    }
  return NULL;
}

/* Whether alias names one of the devices being placed (their guest
 * addresses are ours to write). */
static gboolean
placed_device (const Planner *p, const char *alias)
{
  for (guint j = 0; alias != NULL && p->devices != NULL && j < p->devices->len; j++)
    {
      if (strcmp (((const VpaTopoDevice *) g_ptr_array_index (p->devices, j))->device, alias) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Whether the rewrite writes or removes the guest address of occupant
 * o, a device being placed: one whose host node backs a cell gets an
 * address of the plan; one left where libvirt puts it keeps its address
 * unless it points at one of our controllers. */
static gboolean
readdressed_device (const Planner *p, const VpaGuestDeviceAddr *o)
{
  for (guint j = 0; o->alias != NULL && p->devices != NULL && j < p->devices->len; j++)
    {
      const VpaTopoDevice *d = g_ptr_array_index (p->devices, j);
      const VpaGuestController *on;

      if (strcmp (d->device, o->alias) != 0)
        continue;
      on = controller_by_index (p->bus, o->bus);
      return d->cell >= 0 || (on != NULL && vpa_guest_model_topology_owns (on->alias));
    }
  return FALSE;
}

/* Marks what the domain's own controllers take: their indexes, the main
 * hierarchy's bus numbers (bus 0 and at most one per controller, so up
 * to the highest index) and each own expander's range (its busNr and
 * one number per controller under it). */
static void
reserve_own (Planner *p)
{
  g_autofree guint *below = g_new0 (guint, VPA_TOPO_INDEX_MAX + 1);

  p->busnr_used[0] = TRUE;
  for (guint i = 0; i < p->bus->controllers->len; i++)
    {
      const VpaGuestController *c = g_ptr_array_index (p->bus->controllers, i);
      const VpaGuestController *x;

      if (vpa_guest_model_topology_owns (c->alias))
        continue;
      if (c->index <= VPA_TOPO_INDEX_MAX)
        p->index_used[c->index] = TRUE;
      x = own_expander_of (p->bus, c);
      if (x == NULL && c->index > p->main_top)
        {
          p->main_top = MIN (c->index, 255);
        }
      else if (x != NULL && x != c && x->index <= VPA_TOPO_INDEX_MAX)
        {
          below[x->index]++;
        }
    }
  for (guint i = 0; i < p->bus->occupants->len; i++)
    {
      const VpaGuestDeviceAddr *o = g_ptr_array_index (p->bus->occupants, i);
      if (o->bus >= 0 && o->bus <= VPA_TOPO_INDEX_MAX && !o->ours &&
          !vpa_guest_model_topology_owns (o->alias) && !readdressed_device (p, o))
        p->index_referenced[o->bus] = TRUE;
    }
  for (guint b = 0; b <= p->main_top; b++)
    p->busnr_used[b] = TRUE;
  for (guint i = 0; i < p->bus->controllers->len; i++)
    {
      const VpaGuestController *c = g_ptr_array_index (p->bus->controllers, i);
      if (vpa_guest_model_topology_owns (c->alias) || !is_expander_model (c->model) || c->bus_nr < 0 ||
          c->index > VPA_TOPO_INDEX_MAX)
        continue;
      guint extra = g_strcmp0 (c->model, "pci-expander-bus") == 0 ? 1 : 0; /* its bridge */
      for (guint b = (guint) c->bus_nr; b <= MIN ((guint) c->bus_nr + extra + below[c->index], 255);
           b++)
        p->busnr_used[b] = TRUE;
    }
}

static VpaTopoController *
add_controller (Planner *p, VpaTopoKind kind, char *alias, guint cell, const char *device)
{
  VpaTopoController *c = g_new0 (VpaTopoController, 1);

  c->kind = kind;
  c->alias = alias;
  c->index = G_MAXUINT;
  c->slot = G_MAXUINT;
  c->bus_nr = G_MAXUINT;
  c->cell = cell;
  c->machine = p->bus->machine;
  c->device = g_strdup (device);
  g_ptr_array_add (p->topo->controllers, c);
  return c;
}

/* Keeps the index (and slot) of our controller called alias when it is
 * of this model, under parent (G_MAXUINT: on the root bus), and its
 * index is still free. */
static void
keep_existing (Planner *p, VpaTopoController *tc, const VpaGuestController *gc, const char *model,
               guint parent)
{
  if (gc == NULL || g_strcmp0 (gc->model, model) != 0 || gc->index == 0 ||
      gc->index > VPA_TOPO_INDEX_MAX || p->index_used[gc->index])
    return;
  if (parent != G_MAXUINT && (gc->parent < 0 || (guint) gc->parent != parent || gc->index <= parent))
    return;
  tc->index = gc->index;
  p->index_used[gc->index] = TRUE;
  if (gc->slot >= VPA_TOPO_MIN_SLOT)
    tc->slot = (guint) gc->slot;
  if (gc->bus_nr > 0)
    tc->bus_nr = (guint) gc->bus_nr;
}

static gboolean
new_index (Planner *p, VpaTopoController *tc, guint above, GError **error)
{
  for (guint i = above + 1; i <= VPA_TOPO_INDEX_MAX; i++)
    {
      if (!p->index_used[i] && !p->index_referenced[i])
        {
          p->index_used[i] = TRUE;
          tc->index = i;
          return TRUE;
        }
    }
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
               "%s: <controller type='pci'>: no controller index above %u is free for '%s'",
               p->what, above, tc->alias);
  return FALSE;
}

/* The devices of one cell, in decision order. */
static GPtrArray *
cell_devices (GPtrArray *devices, guint cell)
{
  GPtrArray *out = g_ptr_array_new ();

  for (guint i = 0; i < devices->len; i++)
    {
      VpaTopoDevice *d = g_ptr_array_index (devices, i);
      if (d->cell == (gint) cell)
        g_ptr_array_add (out, d);
    }
  return out;
}

/* One cell: its expander and, on q35, one root port per device and the
 * spares; indexes of ours are kept where they fit. */
static void
plan_cell (Planner *p, guint cell, GPtrArray *devs, guint spares)
{
  const VpaGuestBus *bus = p->bus;
  g_autofree char *pxb_alias = g_strdup_printf (VPA_TOPO_PXB_PREFIX "%u", cell);
  VpaTopoController *x = add_controller (p, VPA_TOPO_EXPANDER, g_strdup (pxb_alias), cell, NULL);
  g_autoptr (GHashTable) adopted = g_hash_table_new (NULL, NULL);

  keep_existing (p, x, controller_by_alias (bus, pxb_alias), vpa_guest_model_expander_name (bus->machine),
                 G_MAXUINT);
  x->slot = G_MAXUINT; /* libvirt places the expander on the root bus */
  if (bus->machine != VPA_MACHINE_Q35)
    return;
  for (guint i = 0; i < devs->len; i++)
    {
      const VpaTopoDevice *d = g_ptr_array_index (devs, i);
      g_autofree char *alias = g_strdup_printf (VPA_TOPO_RP_PREFIX "%s", d->device);
      const VpaGuestController *gc = controller_by_alias (bus, alias);
      const VpaGuestDeviceAddr *a = device_addr (bus, d->device);
      VpaTopoController *rp = add_controller (p, VPA_TOPO_ROOT_PORT, g_strdup (alias), cell,
                                              d->device);

      /* a device hot-plugged into a spare keeps that port */
      if (gc == NULL && a != NULL && (gc = controller_by_index (bus, a->bus)) != NULL &&
          !g_str_has_prefix (gc->alias != NULL ? gc->alias : "", VPA_TOPO_SPARE_PREFIX))
        gc = NULL;
      /* a port another element sits on is that element's (its address
       * stays); the device gets a new one */
      if (gc != NULL && occupied_by_other (bus, gc->index, p->devices))
        gc = NULL;
      keep_existing (p, rp, gc, "pcie-root-port", x->index);
      if (rp->index != G_MAXUINT && gc != NULL && gc->alias != NULL)
        g_hash_table_add (adopted, (gpointer) gc);
    }
  /* spares: those another device now sits on stay (it is there) and do
   * not count; free ones up to spares */
  for (guint n = 0, free_ones = 0; n <= VPA_TOPO_SLOTS; n++)
    {
      g_autofree char *alias = g_strdup_printf (VPA_TOPO_SPARE_PREFIX "%u-%u", cell, n);
      const VpaGuestController *gc = controller_by_alias (bus, alias);
      gboolean taken;
      VpaTopoController *rp;

      if (g_hash_table_contains (adopted, gc))
        gc = NULL;
      taken = gc != NULL && occupied_by_other (bus, gc->index, p->devices);
      if (!taken && free_ones == spares)
        continue;
      rp = add_controller (p, VPA_TOPO_ROOT_PORT, g_strdup (alias), cell, NULL);
      keep_existing (p, rp, gc, "pcie-root-port", x->index);
      if (taken && rp->index == G_MAXUINT)
        {
          /* it moved under another expander (or its index is another
           * controller's): not ours to keep; its name is free for a new
           * spare, as it is when the domain is placed again */
          taken = FALSE;
          if (free_ones == spares)
            {
              g_ptr_array_remove (p->topo->controllers, rp);
              continue;
            }
        }
      rp->occupied = taken;
      free_ones += taken ? 0 : 1;
    }
}

/* New indexes, once every cell kept what it could: in plan order (by
 * cell, the expander then its root ports), each root port above its
 * expander. */
static gboolean
allocate_indexes (Planner *p, GError **error)
{
  GPtrArray *ctrls = p->topo->controllers;
  guint parent = 0;

  for (guint i = 0; i < ctrls->len; i++)
    {
      VpaTopoController *c = g_ptr_array_index (ctrls, i);

      if (c->kind == VPA_TOPO_ROOT_PORT)
        {
          c->parent = parent;
          /* kept while its expander was new: it must stand above the
           * index that expander got (as placing again requires) */
          if (c->index != G_MAXUINT && c->index <= parent)
            {
              p->index_used[c->index] = FALSE;
              c->index = G_MAXUINT;
              /* a spare kept for the element on it moves, and that
               * element stays on the old index: the spare is free now */
              c->occupied = FALSE;
            }
        }
      if (c->index == G_MAXUINT &&
          !new_index (p, c, c->kind == VPA_TOPO_EXPANDER ? 0 : parent, error))
        return FALSE;
      if (c->kind == VPA_TOPO_EXPANDER)
        parent = c->index;
    }
  return TRUE;
}

/* A spare that moved off its occupant (allocate_indexes) is one free
 * spare more than a cell wants: each cell keeps spares free ones, the
 * last of them in plan order (the highest N) dropped, as placing again
 * would not add them. */
static void
drop_surplus_spares (Planner *p, guint spares)
{
  GPtrArray *ctrls = p->topo->controllers;

  for (guint i = 0; i < ctrls->len; i++)
    {
      const VpaTopoController *x = g_ptr_array_index (ctrls, i);
      guint free_ones = 0;

      if (x->kind != VPA_TOPO_EXPANDER)
        continue;
      for (guint j = 0; j < ctrls->len; j++)
        {
          VpaTopoController *rp = g_ptr_array_index (ctrls, j);

          if (rp->kind != VPA_TOPO_ROOT_PORT || rp->cell != x->cell || rp->device != NULL ||
              rp->occupied)
            continue;
          if (++free_ones <= spares)
            continue;
          if (rp->index <= VPA_TOPO_INDEX_MAX)
            p->index_used[rp->index] = FALSE;
          g_ptr_array_remove_index (ctrls, j--); /* after its expander: i stays */
        }
    }
}

/* Slots on one expander: those an element not ours sits on stay its
 * own (libvirt refuses a PCI address used twice), kept ones first, then
 * the lowest free. */
static gboolean
assign_slots (Planner *p, const VpaTopoController *x, GPtrArray *items, guint *(*slot_of) (gpointer),
              GError **error)
{
  gboolean taken[VPA_TOPO_SLOTS] = { FALSE };

  for (guint i = 0; i < p->bus->occupants->len; i++)
    {
      const VpaGuestDeviceAddr *o = g_ptr_array_index (p->bus->occupants, i);
      /* an absent slot is 0, as libvirt reads it */
      if (o->bus == (gint) x->index && !o->ours && !vpa_guest_model_topology_owns (o->alias) &&
          !placed_device (p, o->alias))
        taken[MAX (o->slot, 0)] = TRUE;
    }
  for (guint i = 0; i < items->len; i++)
    {
      guint *slot = slot_of (g_ptr_array_index (items, i));
      if (*slot < VPA_TOPO_SLOTS && !taken[*slot])
        {
          taken[*slot] = TRUE;
        }
      else
        {
          *slot = G_MAXUINT;
        }
    }
  for (guint i = 0; i < items->len; i++)
    {
      guint *slot = slot_of (g_ptr_array_index (items, i));
      guint s = VPA_TOPO_MIN_SLOT;

      if (*slot != G_MAXUINT)
        continue;
      while (s < VPA_TOPO_SLOTS && taken[s])
        s++;
      if (s == VPA_TOPO_SLOTS)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "%s: <vpa:guest-numa>: the expander bus of guest cell %u would need more than %u slots",
                       p->what, x->cell, VPA_TOPO_SLOTS - VPA_TOPO_MIN_SLOT);
          return FALSE;
        }
      taken[s] = TRUE;
      *slot = s;
    }
  return TRUE;
}

static guint *
controller_slot (gpointer data)
{
  return &((VpaTopoController *) data)->slot;
}

static guint *
placement_slot (gpointer data)
{
  return &((VpaTopoPlacement *) data)->slot;
}

static gboolean
range_free (const Planner *p, guint lo, guint count)
{
  if (lo == 0 || lo > VPA_TOPO_BUSNR_MAX || lo + count - 1 > 255)
    return FALSE;
  for (guint b = lo; b < lo + count; b++)
    {
      if (p->busnr_used[b])
        return FALSE;
    }
  return TRUE;
}

static void
mark_range (Planner *p, guint lo, guint count)
{
  for (guint b = lo; b < lo + count; b++)
    p->busnr_used[b] = TRUE;
}

/* Bus numbers: each expander keeps its busNr when its range is still
 * free, else takes the highest free range. */
static gboolean
assign_bus_numbers (Planner *p, GError **error)
{
  GPtrArray *ctrls = p->topo->controllers;

  for (guint i = 0; i < ctrls->len; i++)
    {
      VpaTopoController *x = g_ptr_array_index (ctrls, i);
      /* QEMU's pxb (i440fx) puts a PCI bridge of its own behind its root
       * bus, whose secondary bus holds the devices: two numbers */
      x->bus_count = x->machine == VPA_MACHINE_I440FX ? 2 : 1;
      for (guint j = 0; x->kind == VPA_TOPO_EXPANDER && j < ctrls->len; j++)
        {
          const VpaTopoController *rp = g_ptr_array_index (ctrls, j);
          if (rp->kind == VPA_TOPO_ROOT_PORT && rp->parent == x->index)
            x->bus_count++;
        }
      if (x->kind != VPA_TOPO_EXPANDER)
        continue;
      if (x->bus_nr != G_MAXUINT && range_free (p, x->bus_nr, x->bus_count))
        {
          mark_range (p, x->bus_nr, x->bus_count);
        }
      else
        {
          x->bus_nr = G_MAXUINT;
        }
    }
  for (guint i = 0; i < ctrls->len; i++)
    {
      VpaTopoController *x = g_ptr_array_index (ctrls, i);
      guint lo;

      if (x->kind != VPA_TOPO_EXPANDER || x->bus_nr != G_MAXUINT)
        continue;
      for (lo = 256 - x->bus_count; lo > 0 && !range_free (p, lo, x->bus_count); lo--)
        ;
      if (lo == 0)
        {
          if (p->main_top > 0)
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "%s: <controller type='pci' index='%u'>: the domain's own controllers may use bus numbers up to %u, which leaves no %u free for the expander bus of guest cell %u",
                           p->what, p->main_top, p->main_top, x->bus_count, x->cell);
            }
          else
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "%s: <controller type='pci'>: the domain's own expander buses leave no %u free bus numbers for the expander bus of guest cell %u",
                           p->what, x->bus_count, x->cell);
            }
          return FALSE;
        }
      x->bus_nr = lo;
      mark_range (p, lo, x->bus_count);
    }
  return TRUE;
}

static VpaTopoPlacement *
placement_new (const VpaTopoDevice *d, guint bus, guint slot)
{
  VpaTopoPlacement *pl = g_new0 (VpaTopoPlacement, 1);

  pl->device = g_strdup (d->device);
  pl->bus = bus;
  pl->slot = slot;
  pl->cell = d->cell;
  pl->host_node = d->host_node;
  return pl;
}

static gboolean
place_devices (Planner *p, GPtrArray *devices, GError **error)
{
  GPtrArray *ctrls = p->topo->controllers;

  for (guint i = 0; i < ctrls->len; i++)
    {
      const VpaTopoController *x = g_ptr_array_index (ctrls, i);
      g_autoptr (GPtrArray) ports = g_ptr_array_new ();
      g_autoptr (GPtrArray) direct =
        g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_topo_placement_free);

      if (x->kind != VPA_TOPO_EXPANDER)
        continue;
      for (guint j = 0; j < ctrls->len; j++)
        {
          VpaTopoController *rp = g_ptr_array_index (ctrls, j);
          if (rp->kind == VPA_TOPO_ROOT_PORT && rp->parent == x->index)
            g_ptr_array_add (ports, rp);
        }
      if (!assign_slots (p, x, ports, controller_slot, error))
        return FALSE;
      for (guint j = 0; p->bus->machine == VPA_MACHINE_I440FX && j < devices->len; j++)
        {
          const VpaTopoDevice *d = g_ptr_array_index (devices, j);
          const VpaGuestDeviceAddr *a = device_addr (p->bus, d->device);
          if (d->cell == (gint) x->cell)
            {
              g_ptr_array_add (direct, placement_new (d, x->index,
                                                      a != NULL && a->bus == (gint) x->index && a->slot >= 0
                                                        ? (guint) a->slot
                                                        : G_MAXUINT));
            }
        }
      if (!assign_slots (p, x, direct, placement_slot, error))
        return FALSE;
      g_ptr_array_extend_and_steal (p->topo->placements, g_steal_pointer (&direct));
    }
  for (guint i = 0; p->bus->machine == VPA_MACHINE_Q35 && i < ctrls->len; i++)
    {
      const VpaTopoController *rp = g_ptr_array_index (ctrls, i);
      for (guint j = 0; rp->device != NULL && j < devices->len; j++)
        {
          const VpaTopoDevice *d = g_ptr_array_index (devices, j);
          if (strcmp (d->device, rp->device) == 0)
            g_ptr_array_add (p->topo->placements, placement_new (d, rp->index, 0));
        }
    }
  return TRUE;
}

static gint
uint_cmp (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

/* The cells that get a device, ascending. */
static GArray *
used_cells (GPtrArray *devices)
{
  GArray *cells = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < devices->len; i++)
    {
      const VpaTopoDevice *d = g_ptr_array_index (devices, i);
      gboolean seen = FALSE;
      guint c = (guint) d->cell;

      for (guint j = 0; d->cell >= 0 && j < cells->len && !seen; j++)
        seen = g_array_index (cells, guint, j) == c;
      if (d->cell >= 0 && !seen)
        g_array_append_val (cells, c);
    }
  g_array_sort (cells, uint_cmp);
  return cells;
}

/* keep: the controllers as they are; every device must already sit on
 * its cell's expander. */
static gboolean
plan_keep (Planner *p, GPtrArray *devices, GError **error)
{
  const VpaGuestBus *bus = p->bus;

  for (guint i = 0; i < devices->len; i++)
    {
      const VpaTopoDevice *d = g_ptr_array_index (devices, i);
      const VpaGuestDeviceAddr *a = device_addr (bus, d->device);
      const VpaGuestController *on = a != NULL ? controller_by_index (bus, a->bus) : NULL;
      const VpaGuestController *x = on;
      g_autofree char *pxb = NULL;

      if (on != NULL && g_strcmp0 (on->model, "pcie-root-port") == 0)
        x = controller_by_index (bus, on->parent);
      if (d->cell < 0)
        {
          if (on != NULL && vpa_guest_model_topology_owns (on->alias))
            {
              g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                           "%s: device '%s': its new host node %d backs no guest cell, but it sits on the expander bus '%s'; the guest's controllers cannot change here",
                           p->what, d->device, d->host_node, x != NULL ? x->alias : "?");
              return FALSE;
            }
          g_ptr_array_add (p->topo->unplaced, vpa_topo_device_new (d->device, d->cell, d->host_node));
          continue;
        }
      pxb = g_strdup_printf (VPA_TOPO_PXB_PREFIX "%d", d->cell);
      if (controller_by_alias (bus, pxb) == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                       "%s: device '%s': host node %d backs guest cell %d, which has no expander bus; re-placing here would need a new one, and the guest's controllers cannot change here",
                       p->what, d->device, d->host_node, d->cell);
          return FALSE;
        }
      if (on == NULL)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                       "%s: device '%s': host node %d backs guest cell %d, but the device has no slot on that cell's expander bus; the guest's controllers cannot change here",
                       p->what, d->device, d->host_node, d->cell);
          return FALSE;
        }
      if (x == NULL || g_strcmp0 (x->alias, pxb) != 0)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE,
                       "%s: device '%s': host node %d backs guest cell %d, but the device sits on another cell's bus; the guest's controllers cannot change here",
                       p->what, d->device, d->host_node, d->cell);
          return FALSE;
        }
      {
        VpaTopoPlacement *pl = placement_new (d, (guint) a->bus, (guint) MAX (a->slot, 0));
        g_ptr_array_add (p->topo->placements, pl);
      }
    }
  return TRUE;
}

VpaGuestTopology *
vpa_guest_plan_topology (const VpaGuestBus *bus, GPtrArray *devices, guint spares, gboolean keep,
                         const char *what, GError **error)
{
  g_autoptr (VpaGuestTopology) topo = NULL;
  g_autoptr (GArray) cells = NULL;
  g_autofree Planner *p = g_new0 (Planner, 1);

  g_return_val_if_fail (bus != NULL && devices != NULL && what != NULL, NULL);

  /* untrusted input in the hook: the planner's loops are quadratic in
   * these, and no guest has more (indexes 0-255) */
  if (bus->controllers->len > VPA_TOPO_INDEX_MAX + 1)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "%s: <devices>: %u PCI controllers, more than a guest can have (%d)", what,
                   bus->controllers->len, VPA_TOPO_INDEX_MAX + 1);
      return NULL;
    }
  topo = vpa_guest_topology_new (bus->machine);
  p->bus = bus;
  p->what = what;
  p->topo = topo;
  p->devices = devices;
  if (keep)
    {
      if (!plan_keep (p, devices, error))
        return NULL;
      topo->keep = TRUE;
      return g_steal_pointer (&topo);
    }
  reserve_own (p);
  cells = used_cells (devices);
  for (guint i = 0; i < cells->len; i++)
    {
      guint cell = g_array_index (cells, guint, i);
      g_autoptr (GPtrArray) devs = cell_devices (devices, cell);
      plan_cell (p, cell, devs, spares);
    }
  if (!allocate_indexes (p, error))
    return NULL;
  drop_surplus_spares (p, spares);
  if (!assign_bus_numbers (p, error) || !place_devices (p, devices, error))
    return NULL;
  for (guint i = 0; i < devices->len; i++)
    {
      const VpaTopoDevice *d = g_ptr_array_index (devices, i);
      if (d->cell < 0)
        g_ptr_array_add (topo->unplaced, vpa_topo_device_new (d->device, d->cell, d->host_node));
    }
  return g_steal_pointer (&topo);
}

const VpaGuestController *
vpa_guest_plan_bus_free_spare (const VpaGuestBus *bus, guint cell)
{
  g_autofree char *pxb_alias = g_strdup_printf (VPA_TOPO_PXB_PREFIX "%u", cell);
  g_autofree char *prefix = g_strdup_printf (VPA_TOPO_SPARE_PREFIX "%u-", cell);
  const VpaGuestController *x = controller_by_alias (bus, pxb_alias);
  const VpaGuestController *best = NULL;
  guint64 best_n = G_MAXUINT64;

  if (x == NULL)
    return NULL;
  for (guint i = 0; i < bus->controllers->len; i++)
    {
      const VpaGuestController *c = g_ptr_array_index (bus->controllers, i);
      gboolean used = FALSE;
      guint64 n;

      if (c->alias == NULL || !g_str_has_prefix (c->alias, prefix) || c->parent != (gint) x->index)
        continue;
      used = occupied_by_other (bus, c->index, NULL);
      n = g_ascii_strtoull (c->alias + strlen (prefix), NULL, 10);
      if (!used && n < best_n)
        {
          best = c;
          best_n = n;
        }
    }
  return best;
}

/* ------------------------------------------------------------------ */
/* Explain                                                             */
/* ------------------------------------------------------------------ */

void
vpa_guest_plan_explain (const VpaGuestTopology *topo, GString *out)
{
  g_string_append_printf (out, "guest topology (%s%s):\n",
                          topo->machine == VPA_MACHINE_Q35 ? "q35, pcie-expander-bus"
                                                           : "i440fx, pci-expander-bus",
                          topo->keep ? ", kept as the guest has it" : "");
  for (guint i = 0; i < topo->controllers->len; i++)
    {
      const VpaTopoController *x = g_ptr_array_index (topo->controllers, i);

      if (x->kind != VPA_TOPO_EXPANDER)
        continue;
      g_string_append_printf (out, "  cell %u -> %s (index %u, bus numbers %u-%u)\n", x->cell,
                              x->alias, x->index, x->bus_nr, x->bus_nr + x->bus_count - 1);
      for (guint j = 0; j < topo->controllers->len; j++)
        {
          const VpaTopoController *rp = g_ptr_array_index (topo->controllers, j);
          if (rp->kind != VPA_TOPO_ROOT_PORT || rp->parent != x->index)
            continue;
          g_string_append_printf (out, "    -> %s (index %u, slot %u)", rp->alias, rp->index,
                                  rp->slot);
          for (guint k = 0; k < topo->placements->len; k++)
            {
              const VpaTopoPlacement *pl = g_ptr_array_index (topo->placements, k);
              if (pl->bus == rp->index)
                g_string_append_printf (out, " -> %s (host node %d)", pl->device, pl->host_node);
            }
          g_string_append (out, rp->device != NULL ? "\n"
                                : rp->occupied     ? " spare, taken by another device\n"
                                                   : " spare\n");
        }
      for (guint k = 0; topo->machine == VPA_MACHINE_I440FX && k < topo->placements->len; k++)
        {
          const VpaTopoPlacement *pl = g_ptr_array_index (topo->placements, k);
          if (pl->bus == x->index)
            {
              g_string_append_printf (out, "    -> slot %u -> %s (host node %d)\n", pl->slot,
                                      pl->device, pl->host_node);
            }
        }
    }
  for (guint k = 0; topo->keep && k < topo->placements->len; k++)
    {
      const VpaTopoPlacement *pl = g_ptr_array_index (topo->placements, k);
      g_string_append_printf (out, "  cell %d -> bus index %u slot %u -> %s (host node %d)\n",
                              pl->cell, pl->bus, pl->slot, pl->device, pl->host_node);
    }
  for (guint k = 0; k < topo->unplaced->len; k++)
    {
      const VpaTopoDevice *d = g_ptr_array_index (topo->unplaced, k);
      g_string_append_printf (out, "  %s (host node %d): backs no guest cell, left where "
                                   "libvirt puts it\n",
                              d->device, d->host_node);
    }
}
