/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The PCIe locality part of <vpa:affinity>: <vpa:device> requests,
 * <vpa:locality-group> definitions, locality-group= references and the
 * locality recorded in <vpa:placed>. Used by vpa-domain.c only.
 */
#pragma once

#include "vpa-domain.h"

G_BEGIN_DECLS

/* <vpa:device alias name locality-group>, appended to dom->devices. */
gboolean vpa_domain_parse_device (VpaDomain *dom, xmlNode *node, const char *what,
                                  GError **error);
/* <vpa:locality-group name level policy>, appended to dom->locality_groups. */
gboolean vpa_domain_parse_locality_group (VpaDomain *dom, xmlNode *node, const char *what,
                                          GError **error);
/* After the whole <vpa:affinity>: every locality-group= names a group,
 * and every group has at least two members. */
gboolean vpa_domain_check_locality (const VpaDomain *dom, const char *what, GError **error);
/* locality-group= and locality= of a <vpa:placed>. */
gboolean vpa_domain_parse_placed_locality (xmlNode *node, const char *what,
                                           VpaPlacedRecord *rec, GError **error);

G_END_DECLS
