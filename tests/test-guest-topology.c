/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The guest PCI layout planner (xml/vpa-guest-topology.h) as a pure
 * function: domains' controllers in, expanders, root ports and device
 * slots out. The golden documents are in data/guest-numa
 * (tests/test-guest-numa.py); these cases pin the rules.
 */
#include <string.h>

#include "vpa-guest-topology.h"
#include "vpa-guest-plan.h"
#include "vpa-guest-bus-rules.h"
#include "vpa-xml.h"

static VpaGuestBus *
bus_from (const char *machine, const char *devices)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *xml = g_strdup_printf (
    "<domain type='qemu'><os><type arch='x86_64' machine='%s'>hvm</type></os>"
    "<features><acpi/></features><devices>%s</devices></domain>",
    machine, devices);
  g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (&(VpaDoc){ xml, strlen (xml), "t.xml" }, &error);

  g_assert_no_error (error);
  return vpa_guest_topology_bus_parse (xmlDocGetRootElement (doc));
}

/* "DEVICE:CELL:NODE ..." */
static GPtrArray *
devices_from (const char *spec)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_topo_device_free);
  g_auto (GStrv) items = g_strsplit (spec, " ", -1);

  for (guint i = 0; items[i] != NULL; i++)
    {
      g_auto (GStrv) f = g_strsplit (items[i], ":", 3);
      g_ptr_array_add (out, vpa_topo_device_new (f[0], atoi (f[1]), atoi (f[2])));
    }
  return out;
}

static const VpaTopoController *
find (const VpaGuestTopology *t, const char *alias)
{
  for (guint i = 0; i < t->controllers->len; i++)
    {
      const VpaTopoController *c = g_ptr_array_index (t->controllers, i);
      if (strcmp (c->alias, alias) == 0)
        return c;
    }
  g_error ("no controller %s in the plan", alias);
}

static gboolean
has (const VpaGuestTopology *t, const char *alias)
{
  for (guint i = 0; i < t->controllers->len; i++)
    {
      if (strcmp (((const VpaTopoController *) g_ptr_array_index (t->controllers, i))->alias, alias) == 0)
        return TRUE;
    }
  return FALSE;
}

static const VpaTopoPlacement *
placed (const VpaGuestTopology *t, const char *device)
{
  for (guint i = 0; i < t->placements->len; i++)
    {
      const VpaTopoPlacement *p = g_ptr_array_index (t->placements, i);
      if (strcmp (p->device, device) == 0)
        return p;
    }
  g_error ("no placement of %s", device);
}

static gboolean
is_placed (const VpaGuestTopology *t, const char *device)
{
  for (guint i = 0; i < t->placements->len; i++)
    {
      if (strcmp (((const VpaTopoPlacement *) g_ptr_array_index (t->placements, i))->device, device) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Every index distinct and above its parent's; every expander's range
 * [busNr, busNr + ports] inside 1..255 and disjoint from the others. */
static void
assert_consistent (const VpaGuestTopology *t, const VpaGuestBus *bus)
{
  gboolean seen[256] = { FALSE };
  gboolean nr[256] = { FALSE };

  for (guint i = 0; i < bus->controllers->len; i++)
    {
      const VpaGuestController *c = g_ptr_array_index (bus->controllers, i);
      if (!vpa_guest_model_topology_owns (c->alias))
        seen[c->index] = TRUE;
    }
  for (guint i = 0; i < t->controllers->len; i++)
    {
      const VpaTopoController *c = g_ptr_array_index (t->controllers, i);
      g_assert_cmpuint (c->index, <=, 255);
      g_assert_false (seen[c->index]);
      seen[c->index] = TRUE;
      if (c->kind == VPA_TOPO_ROOT_PORT)
        g_assert_cmpuint (c->index, >, c->parent);
      if (c->kind != VPA_TOPO_EXPANDER)
        continue;
      g_assert_cmpuint (c->bus_nr, >=, 1);
      g_assert_cmpuint (c->bus_nr, <=, VPA_TOPO_BUSNR_MAX);
      for (guint b = c->bus_nr; b < c->bus_nr + c->bus_count; b++)
        {
          g_assert_cmpuint (b, <=, 255);
          g_assert_false (nr[b]);
          nr[b] = TRUE;
        }
    }
}

static void
test_two_cells (void)
{
  g_autoptr (VpaGuestBus) bus =
    bus_from ("q35", "<controller type='pci' index='0' model='pcie-root'/>"
                     "<controller type='pci' index='1' model='pcie-root-port'/>");
  g_autoptr (GPtrArray) devs = devices_from ("ua-a:1:1 ua-b:0:0 ua-c:-1:3");
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaGuestTopology) t = vpa_guest_plan_topology (bus, devs, 2, FALSE, "t", &error);
  const VpaTopoController *x0, *x1, *rp;

  g_assert_no_error (error);
  assert_consistent (t, bus);
  x0 = find (t, "ua-vpa-pxb-0");
  x1 = find (t, "ua-vpa-pxb-1");
  /* cells in order, each expander followed by its ports, from index 2 */
  g_assert_cmpuint (x0->index, ==, 2);
  g_assert_cmpuint (x0->bus_count, ==, 4); /* b + 2 spares + its own bus */
  g_assert_cmpuint (x0->bus_nr, ==, 252);
  g_assert_cmpuint (x1->bus_nr + x1->bus_count, ==, x0->bus_nr);
  rp = find (t, "ua-vpa-rp-ua-a");
  g_assert_cmpuint (rp->parent, ==, x1->index);
  g_assert_cmpuint (placed (t, "ua-a")->bus, ==, rp->index);
  g_assert_true (has (t, "ua-vpa-rp-spare-1-1"));
  g_assert_false (has (t, "ua-vpa-rp-spare-1-2"));
  /* a node that backs no cell: left alone */
  g_assert_false (is_placed (t, "ua-c"));
  g_assert_cmpuint (t->unplaced->len, ==, 1);
}

/* The cells' host nodes come from whatever binding the caller has: with
 * cell 0 on node 1 (a choice of whole-guest placement), a device on
 * node 1 goes behind cell 0's expander. */
static void
test_cell_of_node (void)
{
  g_autoptr (GArray) n0 = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autoptr (GArray) n1 = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autoptr (GArray) cells = g_array_new (FALSE, FALSE, sizeof (VpaCellNodes));
  gint one = 1, zero = 0, three = 3;
  VpaCellNodes c0 = { 0, n1 }, c1 = { 1, n0 };

  g_array_append_val (n1, one);
  g_array_append_val (n0, zero);
  g_array_append_val (n0, three);
  g_array_append_val (cells, c0);
  g_array_append_val (cells, c1);
  g_assert_cmpint (vpa_guest_model_cell_of_node (cells, 1), ==, 0);
  g_assert_cmpint (vpa_guest_model_cell_of_node (cells, 3), ==, 1);
  g_assert_cmpint (vpa_guest_model_cell_of_node (cells, 2), ==, -1);
  g_assert_cmpint (vpa_guest_model_cell_of_node (cells, -1), ==, -1);
}

/* The domain's own controllers: their indexes are never taken, their
 * expander's bus numbers neither, the main hierarchy's (up to its
 * highest index) neither. */
static void
test_own_controllers (void)
{
  g_autoptr (VpaGuestBus) bus = bus_from (
    "pc-q35-7.2",
    "<controller type='pci' index='0' model='pcie-root'/>"
    "<controller type='pci' index='2' model='pcie-expander-bus'><target busNr='253'/></controller>"
    "<controller type='pci' index='3' model='pcie-root-port'><address type='pci' bus='0x02' slot='0'/></controller>"
    "<controller type='pci' index='4' model='pcie-root-port'/>"
    "<controller type='pci' index='40' model='pcie-root-port'/>");
  g_autoptr (GPtrArray) devs = devices_from ("ua-a:0:0");
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaGuestTopology) t = vpa_guest_plan_topology (bus, devs, 0, FALSE, "t", &error);
  const VpaTopoController *x;

  g_assert_no_error (error);
  assert_consistent (t, bus);
  x = find (t, "ua-vpa-pxb-0");
  g_assert_cmpuint (x->index, ==, 1);
  g_assert_cmpuint (find (t, "ua-vpa-rp-ua-a")->index, ==, 5);
  /* 253..254 are the domain's expander's: ours goes below */
  g_assert_cmpuint (x->bus_nr, ==, 251);
  g_assert_cmpuint (x->bus_count, ==, 2);
}

static void
test_no_bus_number (void)
{
  g_autoptr (VpaGuestBus) bus =
    bus_from ("q35", "<controller type='pci' index='0' model='pcie-root'/>"
                     "<controller type='pci' index='253' model='pcie-root-port'/>");
  g_autoptr (GPtrArray) devs = devices_from ("ua-a:0:0");
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaGuestTopology) t = vpa_guest_plan_topology (bus, devs, 1, FALSE, "t", &error);

  g_assert_null (t);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "index='253'"));
}

/* Placing again keeps what is there, even where a fresh plan would
 * differ: the kept expander's index and bus number, and a spare a
 * hot-plugged device (not ours) took stays, with a new free spare. */
static void
test_keeps_and_spares (void)
{
  g_autoptr (VpaGuestBus) bus = bus_from (
    "q35",
    "<controller type='pci' index='0' model='pcie-root'/>"
    "<controller type='pci' index='7' model='pcie-expander-bus'><target busNr='200'><node>0</node></target><alias name='ua-vpa-pxb-0'/></controller>"
    "<controller type='pci' index='9' model='pcie-root-port'><alias name='ua-vpa-rp-ua-a'/><address type='pci' bus='0x07' slot='0x03'/></controller>"
    "<controller type='pci' index='8' model='pcie-root-port'><alias name='ua-vpa-rp-spare-0-0'/><address type='pci' bus='0x07' slot='0x00'/></controller>"
    "<interface type='hostdev'><alias name='ua-hot'/><address type='pci' bus='0x08' slot='0'/></interface>"
    "<hostdev mode='subsystem' type='pci'><alias name='ua-a'/><address type='pci' bus='0x09' slot='0'/></hostdev>");
  g_autoptr (GPtrArray) devs = devices_from ("ua-a:0:0");
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaGuestTopology) t = vpa_guest_plan_topology (bus, devs, 1, FALSE, "t", &error);
  const VpaTopoController *x, *s0, *s1;

  g_assert_no_error (error);
  assert_consistent (t, bus);
  x = find (t, "ua-vpa-pxb-0");
  g_assert_cmpuint (x->index, ==, 7);
  g_assert_cmpuint (x->bus_nr, ==, 200);
  g_assert_cmpuint (find (t, "ua-vpa-rp-ua-a")->index, ==, 9);
  g_assert_cmpuint (find (t, "ua-vpa-rp-ua-a")->slot, ==, 3);
  s0 = find (t, "ua-vpa-rp-spare-0-0");
  s1 = find (t, "ua-vpa-rp-spare-0-1");
  g_assert_true (s0->occupied);
  g_assert_cmpuint (s0->index, ==, 8);
  g_assert_false (s1->occupied);
  g_assert_cmpuint (s1->index, ==, 10);
  g_assert_cmpuint (s1->slot, ==, 1);
  /* the first free spare is the new one */
  g_assert_null (vpa_guest_plan_bus_free_spare (bus, 0)); /* the bus as it was: taken */
}

/* keep (migrate, restore): nothing may change. */
static void
test_keep (void)
{
  g_autoptr (VpaGuestBus) bus = bus_from (
    "q35",
    "<controller type='pci' index='0' model='pcie-root'/>"
    "<controller type='pci' index='1' model='pcie-expander-bus'><target busNr='250'><node>0</node></target><alias name='ua-vpa-pxb-0'/></controller>"
    "<controller type='pci' index='2' model='pcie-root-port'><alias name='ua-vpa-rp-ua-a'/><address type='pci' bus='0x01' slot='0'/></controller>"
    "<hostdev mode='subsystem' type='pci'><alias name='ua-a'/><address type='pci' bus='0x02' slot='0'/></hostdev>");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) same = devices_from ("ua-a:0:0");
  g_autoptr (GPtrArray) moved = devices_from ("ua-a:1:1");
  g_autoptr (VpaGuestTopology) t = vpa_guest_plan_topology (bus, same, 1, TRUE, "t", &error);
  g_autoptr (VpaGuestTopology) u = NULL;

  g_assert_no_error (error);
  g_assert_true (t->keep);
  g_assert_cmpuint (t->controllers->len, ==, 0);
  g_assert_cmpuint (placed (t, "ua-a")->bus, ==, 2);
  u = vpa_guest_plan_topology (bus, moved, 1, TRUE, "t", &error);
  g_assert_null (u);
  g_assert_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE);
  g_assert_nonnull (strstr (error->message, "no expander bus"));
}

static void
test_i440fx (void)
{
  g_autoptr (VpaGuestBus) bus = bus_from ("pc-i440fx-7.2",
                                          "<controller type='pci' index='0' model='pci-root'/>");
  g_autoptr (GPtrArray) devs = devices_from ("ua-a:1:1 ua-b:1:1");
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaGuestTopology) t = vpa_guest_plan_topology (bus, devs, 3, FALSE, "t", &error);

  g_assert_no_error (error);
  g_assert_cmpint (t->machine, ==, VPA_MACHINE_I440FX);
  g_assert_cmpuint (t->controllers->len, ==, 1); /* no root ports, no spares */
  /* QEMU's pxb has a PCI bridge of its own: its bus and the bridge's */
  g_assert_cmpuint (find (t, "ua-vpa-pxb-1")->bus_count, ==, 2);
  g_assert_cmpuint (find (t, "ua-vpa-pxb-1")->bus_nr, ==, 254);
  g_assert_cmpuint (placed (t, "ua-a")->bus, ==, 1);
  g_assert_cmpuint (placed (t, "ua-a")->slot, ==, 0);
  g_assert_cmpuint (placed (t, "ua-b")->slot, ==, 1);
}

static void
test_machines (void)
{
  struct {
    const char *machine;
    gboolean known;
    VpaMachineKind kind;
  } cases[] = {
    { "q35", TRUE, VPA_MACHINE_Q35 },
    { "pc-q35-7.2", TRUE, VPA_MACHINE_Q35 },
    { "pc", TRUE, VPA_MACHINE_I440FX },
    { "pc-i440fx-7.2", TRUE, VPA_MACHINE_I440FX },
    { "pc-1.3", TRUE, VPA_MACHINE_I440FX },
    { "microvm", FALSE, 0 },
    { "isapc", FALSE, 0 },
    { "virt", FALSE, 0 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (VpaGuestBus) bus = bus_from (cases[i].machine, "");
      g_assert_cmpint (bus->known_machine, ==, cases[i].known);
      if (cases[i].known)
        g_assert_cmpint (bus->machine, ==, cases[i].kind);
    }
}

/* An element not ours keeps the address it has: a device's root port it
 * sits on is left to it (the device gets a new port, not on the
 * occupant's bus), and a slot of our expander it takes is no root
 * port's. */
static void
test_foreign_occupants (void)
{
  g_autoptr (VpaGuestBus) bus = bus_from (
    "q35",
    "<controller type='pci' index='0' model='pcie-root'/>"
    "<controller type='pci' index='2' model='pcie-expander-bus'><target busNr='250'><node>0</node></target><alias name='ua-vpa-pxb-0'/></controller>"
    "<controller type='pci' index='3' model='pcie-root-port'><alias name='ua-vpa-rp-ua-a'/><address type='pci' bus='0x02' slot='0x01'/></controller>"
    "<hostdev mode='subsystem' type='pci'><address type='pci' bus='0x03' slot='0'/></hostdev>"
    "<interface type='user'><address type='pci' bus='0x02' slot='0x00'/></interface>"
    "<hostdev mode='subsystem' type='pci'><alias name='ua-a'/><address type='pci' bus='0x03' slot='0'/></hostdev>");
  g_autoptr (GPtrArray) devs = devices_from ("ua-a:0:0");
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaGuestTopology) t = vpa_guest_plan_topology (bus, devs, 1, FALSE, "t", &error);
  const VpaTopoController *rp;

  g_assert_no_error (error);
  assert_consistent (t, bus);
  g_assert_cmpuint (find (t, "ua-vpa-pxb-0")->index, ==, 2);
  rp = find (t, "ua-vpa-rp-ua-a");
  g_assert_cmpuint (rp->index, !=, 3);
  g_assert_cmpuint (placed (t, "ua-a")->bus, ==, rp->index);
  g_assert_cmpuint (rp->slot, !=, 0);
  g_assert_cmpuint (find (t, "ua-vpa-rp-spare-0-0")->slot, !=, 0);
}

/* A device whose host node backs no cell stays where it is, address
 * and all: a new root port never takes the bus index it names. */
static void
test_unplaced_keeps_bus (void)
{
  g_autoptr (VpaGuestBus) bus =
    bus_from ("q35", "<controller type='pci' index='0' model='pcie-root'/>"
                     "<controller type='pci' index='1' model='pcie-root-port'/>"
                     "<interface type='hostdev'><alias name='ua-u'/><address type='pci' bus='0x03' slot='0'/></interface>");
  g_autoptr (GPtrArray) devs = devices_from ("ua-u:-1:5 ua-a:0:0");
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaGuestTopology) t = vpa_guest_plan_topology (bus, devs, 1, FALSE, "t", &error);

  g_assert_no_error (error);
  assert_consistent (t, bus);
  for (guint i = 0; i < t->controllers->len; i++)
    g_assert_cmpuint (((const VpaTopoController *) g_ptr_array_index (t->controllers, i))->index, !=, 3);
  g_assert_false (is_placed (t, "ua-u"));
}

/* What libvirt 9.0 refuses never reaches the plan; what it defines does. */
static void
test_libvirt_rules (void)
{
  static const struct {
    const char *devices;
    const char *error; /* NULL: accepted */
  } cases[] = {
    { "<controller type='pci' index='1' model='pcie-root-port'/><controller type='pci' index='01' model='pcie-root-port'/>", "another <controller type='pci'> has index 1" },
    { "<controller type='usb' index='0'/><controller type='usb' index='0'/>", NULL },
    { "<controller index='0'/><controller type='ide' index='0'/>", "another <controller type='ide'> has index 0" },
    { "<controller type='pci' index='010' model='pcie-root-port'/><controller type='pci' index='8' model='pcie-root-port'/>", NULL },
    { "<controller type='pci' index='1' model='pcie-root-port'><address type='pci' bus='0x01' slot='0'/></controller>", "plugs into a bus of lower index" },
    { "<memballoon model='virtio'><address type='pci' domain='0' bus='0' slot='0' function='0'/></memballoon><rng model='virtio'><address type='pci' domain='0' bus='0' slot='0' function='0'/></rng>", NULL },
    { "<memballoon model='virtio'><address type='pci' bus='0' slot='3'/></memballoon><rng model='virtio'><address type='pci' bus='0x00' slot='0x03' function='0'/></rng>", "used twice" },
    { "<serial type='pty'><alias name='ua-s'/></serial><console type='pty'><alias name='ua-s'/></console>", NULL },
    { "<serial type='pty'><alias name='ua-s'/></serial><channel type='pty'><alias name='ua-s'/></channel>", "repeated alias" },
    { "<graphics type='vnc'><address type='pci' bus='zz'/></graphics>", NULL },
    { "<controller type='pci' index='1' model='pcie-expander-bus'><target busNr='0x10'><node>1</node></target></controller>", NULL },
    { "<controller type='pci' index='1' model='pcie-expander-bus'><target busNr='16'><node>2</node></target></controller>", "not a guest NUMA cell" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *xml = g_strdup_printf (
        "<domain type='qemu'><os><type arch='x86_64' machine='q35'>hvm</type></os>"
        "<cpu><numa><cell id='0' cpus='0' memory='1024'/><cell cpus='1' memory='1024'/></numa></cpu>"
        "<devices><controller type='pci' index='0' model='pcie-root'/>%s</devices></domain>",
        cases[i].devices);
      g_autoptr (xmlDoc) doc = vpa_xml_parse_memory (&(VpaDoc){ xml, strlen (xml), "t.xml" }, &error);
      g_autoptr (VpaGuestBus) bus = NULL;
      gboolean ok;

      g_assert_no_error (error);
      bus = vpa_guest_topology_bus_parse (xmlDocGetRootElement (doc));
      bus->facts = vpa_guest_facts_parse (xmlDocGetRootElement (doc));
      ok = vpa_guest_bus_rules_check (bus, "t.xml", &error);
      if (cases[i].error == NULL)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
          continue;
        }
      g_assert_false (ok);
      g_assert_error (error, VPA_ERROR, VPA_ERROR_INVALID);
      if (strstr (error->message, cases[i].error) == NULL)
        g_error ("case %u: '%s' does not say '%s'", i, error->message, cases[i].error);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/guest-topology/two-cells", test_two_cells);
  g_test_add_func ("/guest-topology/cell-of-node", test_cell_of_node);
  g_test_add_func ("/guest-topology/own-controllers", test_own_controllers);
  g_test_add_func ("/guest-topology/no-bus-number", test_no_bus_number);
  g_test_add_func ("/guest-topology/keeps-and-spares", test_keeps_and_spares);
  g_test_add_func ("/guest-topology/keep", test_keep);
  g_test_add_func ("/guest-topology/i440fx", test_i440fx);
  g_test_add_func ("/guest-topology/machines", test_machines);
  g_test_add_func ("/guest-topology/foreign-occupants", test_foreign_occupants);
  g_test_add_func ("/guest-topology/unplaced-keeps-bus", test_unplaced_keeps_bus);
  g_test_add_func ("/guest-topology/libvirt-rules", test_libvirt_rules);
  return g_test_run ();
}
