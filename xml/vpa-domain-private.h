/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The domain parser's own state, shared by its files (vpa-domain*.c).
 * Not for other files.
 */
#pragma once

#include "vpa-domain.h"
#include "vpa-xml.h"

G_BEGIN_DECLS

typedef struct {
  const char *what;
  gboolean strict; /* the domain has vpa:affinity */
  VpaDomain *dom;
  GHashTable *port_devices;   /* borrowed VpaPortRequest.device */
  GHashTable *placed_devices; /* borrowed VpaPlacedRecord.device */
  GArray *vcpu_cell;          /* gint16 cell index of each guest vCPU, or -1 */
  guint n_requested;          /* ports, devices and alias devices so far */
  GHashTable *other_aliases;  /* alias -> "<interface type='network'>" of non-PCI devices */
  GHashTable *net_ifaces;     /* user alias -> <source network> of <interface type='network'> */
} ParseCtx;

gboolean vpa_domain_parse_resources (ParseCtx *ctx, xmlNode *domain, GError **error);
gboolean vpa_domain_parse_implicit_cell (ParseCtx *ctx, xmlNode *domain, GError **error);
gboolean vpa_domain_parse_cells (ParseCtx *ctx, xmlNode *domain, GError **error);
gboolean vpa_domain_parse_numatune (ParseCtx *ctx, xmlNode *domain, GError **error);
gboolean vpa_domain_parse_pins (ParseCtx *ctx, xmlNode *domain, GError **error);

G_END_DECLS
