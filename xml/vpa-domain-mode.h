/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * <vpa:affinity mode="enforce|audit">: how the hook treats a domain whose
 * check fails (docs/hook.md, "Audit mode"). Read by the domain parser and,
 * on its own, by the hook when it must decide whether to refuse.
 */
#pragma once

#include <glib.h>
#include <libxml/tree.h>
#include "vpa-domain-model.h"

/* The mode attribute of affinity (a <vpa:affinity>); what names the
 * document in the message of a value that is neither enforce nor audit. */
gboolean vpa_domain_mode_parse_attr (xmlNode *affinity, const char *what, VpaDomainMode *mode,
                                     GError **error);

/* The mode of a whole domain document, reading nothing but
 * <metadata><vpa:affinity mode>: VPA_DOMAIN_MODE_UNKNOWN when the document
 * or the attribute cannot be read. */
VpaDomainMode vpa_domain_mode_read (const char *xml, gsize len);
