/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Drives libvpa-virt from the real-daemon suite (tests/libvirtd):
 *
 *   virt-define-helper define URI NAME SNAPSHOT   define NAME with the first
 *                                                 free VF of SNAPSHOT
 *   virt-define-helper attach URI NAME SNAPSHOT   attach one (--config)
 *   virt-define-helper lock URI TIMEOUT_MS SECS   hold the define lock
 *
 * Prints "NAME ADDRESS" on success; exits with the VpaErrorCode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vpa-source.h"
#include "vpa-virt.h"

typedef struct {
  const VpaHost *inventory;
  const char *name;
  gboolean qemu;
  gboolean device_only; /* attach: the <interface> alone */
  VpaAddr chosen;
} Placement;

/* A VF is free when neither it nor its PF is held. */
static gboolean
vf_free (GPtrArray *claims, const VpaDevice *vf)
{
  for (guint i = 0; i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);
      if (vpa_addr_same (c->addr, vf->addr) || vpa_addr_same (c->addr, vf->parent_addr))
        return FALSE;
    }
  return TRUE;
}

#define HELPER_ALIAS "ua-helper-vf"

static char *
interface_xml (VpaAddr a, const char *alias)
{
  return g_strdup_printf ("<interface type='hostdev' managed='yes'><source>"
                          "<address type='pci' domain='0x%04x' bus='0x%02x' slot='0x%02x' "
                          "function='0x%x'/></source>%s%s%s</interface>",
                          VPA_ADDR_DOMAIN (a), VPA_ADDR_BUS (a), VPA_ADDR_SLOT (a),
                          VPA_ADDR_FUNCTION (a), alias != NULL ? "<alias name='" : "",
                          alias != NULL ? alias : "", alias != NULL ? "'/>" : "");
}

static char *
domain_xml (const Placement *pl, const char *iface)
{
  if (pl->qemu)
    {
      return g_strdup_printf ("<domain type='qemu'><name>%s</name><memory unit='MiB'>64</memory>"
                              "<vcpu>1</vcpu><os><type arch='x86_64' machine='pc'>hvm</type>"
                              "</os><devices><emulator>/usr/bin/qemu-system-x86_64</emulator>"
                              "%s</devices></domain>",
                              pl->name, iface);
    }
  return g_strdup_printf ("<domain type='test'><name>%s</name><memory>65536</memory>"
                          "<os><type>hvm</type></os><devices>%s</devices></domain>",
                          pl->name, iface);
}

static char *
place_vf (GPtrArray *claims, gpointer user_data, GError **error)
{
  Placement *pl = user_data;

  for (guint i = 0; i < pl->inventory->devices->len; i++)
    {
      const VpaDevice *dev = vpa_host_device (pl->inventory, i);
      g_autofree char *iface = NULL;

      if (dev->dev_type != VPA_DEV_TYPE_VF || !vf_free (claims, dev))
        continue;
      pl->chosen = dev->addr;
      iface = interface_xml (dev->addr, pl->device_only ? HELPER_ALIAS : NULL);
      return pl->device_only ? g_steal_pointer (&iface) : domain_xml (pl, iface);
    }
  g_set_error (error, VPA_ERROR, VPA_ERROR_UNSATISFIABLE, "%s: no free VF for domain '%s'",
               pl->inventory->source, pl->name);
  return NULL;
}

/* attach: the VF and its records (a port without policy or physnet). */
static char *
attach_vf (GPtrArray *claims, gpointer user_data, VpaAttachRecord *record, GError **error)
{
  Placement *pl = user_data;
  char *iface = place_vf (claims, user_data, error);
  gint i = iface != NULL ? vpa_host_lookup (pl->inventory, pl->chosen) : -1;

  if (iface == NULL)
    return NULL;
  record->device = g_strdup (HELPER_ALIAS);
  record->vnic_type = g_strdup ("direct");
  record->addr = pl->chosen;
  record->numa_node = i >= 0 ? vpa_host_device (pl->inventory, i)->numa_node : VPA_NUMA_NONE;
  record->placed_policy = VPA_POLICY_LEGACY;
  record->placed_source = VPA_POLICY_SOURCE_DEFAULT;
  return iface;
}

static int
fail (GError *error)
{
  fprintf (stderr, "virt-define-helper: %s\n", error->message);
  return error->domain == VPA_ERROR ? error->code : 3;
}

static int
run_lock (virConnectPtr conn, const char *uri, guint timeout_ms, guint hold_s)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VpaVirtLock) lock = vpa_virt_lock_acquire (conn, uri, timeout_ms, &error);

  if (lock == NULL)
    return fail (error);
  printf ("locked\n");
  fflush (stdout);
  g_usleep ((gulong) hold_s * G_USEC_PER_SEC);
  return 0;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (virConnect) conn = NULL;
  g_autoptr (VpaHost) inventory = NULL;
  Placement pl = { 0 };
  char buf[VPA_ADDR_BUFLEN];
  gboolean ok;

  if (argc != 5)
    {
      fprintf (stderr, "usage: %s define|attach|lock URI NAME|TIMEOUT_MS SNAPSHOT|SECS\n",
               argv[0]);
      return 2;
    }
  conn = vpa_virt_open (argv[2], FALSE, &error);
  if (conn == NULL)
    return fail (error);
  if (strcmp (argv[1], "lock") == 0)
    return run_lock (conn, argv[2], (guint) atoi (argv[3]), (guint) atoi (argv[4]));

  inventory = vpa_snapshot_load (argv[4], &error);
  if (inventory == NULL)
    return fail (error);
  pl.inventory = inventory;
  pl.name = argv[3];
  pl.qemu = g_ascii_strcasecmp (virConnectGetType (conn), "QEMU") == 0;
  if (strcmp (argv[1], "define") == 0)
    {
      ok = vpa_virt_define_placed_full (conn, argv[2], inventory, place_vf, &pl, NULL, &error);
    }
  else if (strcmp (argv[1], "attach") == 0)
    {
      pl.device_only = TRUE;
      ok = vpa_virt_attach (conn, argv[2],
                            &(VpaVirtAttachTarget){ argv[3], VIR_DOMAIN_AFFECT_CONFIG, inventory },
                            attach_vf, &pl, NULL, &error);
    }
  else
    {
      fprintf (stderr, "virt-define-helper: unknown mode '%s'\n", argv[1]);
      return 2;
    }
  if (!ok)
    return fail (error);
  printf ("%s %s\n", pl.name, vpa_addr_format (pl.chosen, buf));
  return 0;
}
