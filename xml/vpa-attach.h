/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What attach records of a hot-plugged port: its request (<vpa:port>)
 * and its placement (<vpa:placed>), as place writes them, added to a
 * domain's definition or to its <vpa:affinity> metadata, so that check,
 * the hook and placing again see the port.
 */
#pragma once

#include <glib.h>

#include "vpa-types.h"

G_BEGIN_DECLS

typedef struct {
  char *device;         /* the port's user alias */
  char *physnet;        /* NULL: none */
  char *vnic_type;      /* NULL: not written */
  gint trusted;         /* -1 (and 0, as a zeroed record has it): not written, 1 true */
  char *locality_group; /* NULL: none; else with the level reached: */
  gint locality;        /* VpaLocality the group's devices share with it */
  gboolean has_policy;
  VpaPolicy policy; /* the port's own policy, with has_policy */
  VpaAddr addr;     /* the placed device */
  gint numa_node;   /* its NUMA node, VPA_NUMA_NONE when unknown */
  VpaPolicy placed_policy;
  VpaPolicySource placed_source;
} VpaAttachRecord;

void vpa_attach_record_clear (VpaAttachRecord *rec);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VpaAttachRecord, vpa_attach_record_clear)

/* The domain document doc (a definition libvirt formatted) with the
 * device element device_xml appended to <devices> and rec's <vpa:port>
 * and <vpa:placed> appended to <metadata><vpa:affinity> (created when
 * missing). VPA_ERROR_INVALID naming doc->what when a document does not
 * parse. */
char *vpa_attach_domain (const VpaDoc *doc, const char *device_xml, const VpaAttachRecord *rec,
                         GError **error);

/* A <vpa:affinity> element (affinity_xml, or a new one when NULL) with
 * rec's records appended, as virDomainSetMetadata takes it.
 * affinity_xml is as virDomainGetMetadata returns it: <affinity> without
 * a namespace (or in VPA_XMLNS); a new element has no namespace either. */
char *vpa_attach_affinity (const char *affinity_xml, const char *what,
                           const VpaAttachRecord *rec, GError **error);

/* The <interface type='hostdev' managed='yes'> element attach hot-plugs:
 * the host device at addr as its source, the user alias alias, mac
 * (NULL: libvirt picks one) and, when guest_bus is not negative, the
 * guest PCI address slot 0 of that bus (a spare root port). */
char *vpa_attach_interface (VpaAddr addr, const char *alias, const char *mac, gint guest_bus);

G_END_DECLS
