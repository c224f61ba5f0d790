/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `request`: edits of a domain's requests (its <vpa:affinity>) without
 * hand-editing XML (docs/virsh.md). Pure: a domain document in, the new
 * <vpa:affinity> element (as virDomainSetMetadata takes it) and the new
 * document out; the result is parsed again, so an edit that would make
 * the requests unreadable is refused naming the element and value.
 */
#pragma once

#include <glib.h>
#include "vpa-types.h"

G_BEGIN_DECLS

typedef enum {
  VPA_REQUEST_EDIT_ADD_PORT,  /* a <vpa:port>, and its <interface> when none */
  VPA_REQUEST_EDIT_ADD_ALIAS, /* NAME:COUNT in <vpa:flavor aliases> */
  VPA_REQUEST_EDIT_SET_NUMA,  /* attributes of <vpa:numa> */
  VPA_REQUEST_EDIT_REMOVE,    /* a port, or a flavor alias, and its records */
  VPA_REQUEST_EDIT_PLACE,     /* no edit: the document made ready to place */
} VpaRequestEditOp;

typedef struct {
  VpaRequestEditOp op;
  const char *name;         /* the port's user alias, NAME:COUNT, or what to remove */
  const char *const *attrs; /* NULL-terminated "key", "value" pairs: the port's
                             * (physnet, policy, ...) or <vpa:numa>'s */
  const char *mac;          /* a new port's interface <mac address>, or NULL */
} VpaRequestEdit;

typedef struct {
  char *affinity;        /* the new <vpa:affinity> element */
  char *document;        /* the new domain document */
  gboolean added_device; /* an <interface> was added (a port had none): libvirt
                          * takes it only placed, with its VF */
} VpaRequestEditResult;

void vpa_request_edit_result_clear (VpaRequestEditResult *res);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VpaRequestEditResult, vpa_request_edit_result_clear)

/* Applies edit to the domain document doc (doc->what names it in errors);
 * every port without a device element gets an <interface type='hostdev'>
 * with its user alias in the document (edit->mac on the new port's).
 * VPA_ERROR_INVALID naming the element and value when the edit does not
 * apply (a port or alias that is already there, or not there to
 * remove) or leaves requests that do not parse. */
gboolean vpa_request_edit_apply (const VpaDoc *doc, const VpaRequestEdit *edit,
                                 VpaRequestEditResult *out, GError **error);

/* The <vpa:affinity> element of the domain document, or NULL (no
 * error) when it has none. The element (here and in
 * VpaRequestEditResult) is as virDomainGetMetadata returns it: without
 * its namespace. */
char *vpa_request_edit_show (const VpaDoc *doc, GError **error);

G_END_DECLS
