/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `request` on a libvirt connection: a defined domain's requests edited
 * in its persistent definition through virDomainSetMetadata
 * (vpa-request-edit.h; docs/virsh.md).
 */
#pragma once

#include "vpa-virt.h"
#include "vpa-request-edit.h"

G_BEGIN_DECLS

/* Applies edit to the persistent definition of domain on conn: its
 * <vpa:affinity> is replaced (VIR_DOMAIN_AFFECT_CONFIG) unless edit is
 * VPA_REQUEST_EDIT_PLACE; out->document is the definition as edited,
 * ready to place. VPA_ERROR_INVALID when there is no such domain or the
 * edit does not apply, VPA_ERROR_ENVIRONMENT when libvirt fails. */
gboolean vpa_virt_request_edit (virConnectPtr conn, const char *uri, const char *domain,
                                const VpaRequestEdit *edit, VpaRequestEditResult *out,
                                GError **error);

/* The <vpa:affinity> of domain's persistent definition, or "" when it
 * has none. */
char *vpa_virt_request_show (virConnectPtr conn, const char *uri, const char *domain,
                             GError **error);

G_END_DECLS
