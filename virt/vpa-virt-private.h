/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvpa-virt's own helpers, shared by its files: libvirt's errors and
 * the connection's URI (vpa-virt.c), and the steps of define that
 * attach takes too (vpa-virt-define.c). Not for other files.
 */
#pragma once

#include <libxml/tree.h>

#include "vpa-virt.h"

G_BEGIN_DECLS

/* libvirt's and libxml2's own error output silenced, once. */
void vpa_virt_init (void);
/* The code of libvirt's last error, VIR_ERR_OK when there is none. */
int vpa_virt_last_code (void);
/* libvirt's last message on one line. */
char *vpa_virt_last_message (void);
/* Sets "<fmt>: <libvirt's message>". */
void vpa_virt_set_error (GError **error, VpaErrorCode code, const char *fmt, ...)
  G_GNUC_PRINTF (3, 4);
/* The connection's canonical URI, or fallback. */
char *vpa_virt_conn_uri (virConnectPtr conn, const char *fallback);

/* The error code of a define or attach libvirt refused. */
VpaErrorCode vpa_virt_define_error_code (void);
/* Appends the PCI addresses of node: a <domain>'s devices (whole_domain)
 * or one device element; an address used twice is bad input. */
gboolean vpa_virt_define_collect_addrs (xmlNode *node, gboolean whole_domain, const char *what,
                                        GArray *addrs, GError **error);
/* What the domain being defined or attached to takes, for the checks
 * that no other domain holds it. */
typedef struct {
  const char *name;         /* the domain */
  GArray *addrs;            /* VpaAddr: its PCI devices */
  GArray *cpus;             /* guint: the CPUs it pins, or NULL */
  const VpaHost *inventory; /* to count a device's PF or VFs as it, or NULL */
} VpaVirtTakes;

/* VPA_ERROR_UNSATISFIABLE when another domain holds one of takes->addrs
 * (or, with an inventory, its PF or VF) or pins one of takes->cpus; when
 * ends the message. */
gboolean vpa_virt_define_check_unclaimed (GPtrArray *claims, const char *uri,
                                          const VpaVirtTakes *takes, const char *when,
                                          GError **error);
/* Takes the define lock of conn; a NULL *uri becomes the connection's
 * canonical URI (owned by *canonical). */
VpaVirtLock *vpa_virt_define_lock (virConnectPtr conn, const char **uri, char **canonical,
                                   GError **error);
/* Under the lock: loads the claims into *claims, runs place on them and
 * returns its XML. */
char *vpa_virt_define_run_place (virConnectPtr conn, VpaVirtPlaceFunc place,
                                 gpointer user_data, GPtrArray **claims, const char *uri,
                                 GError **error);
/* After the change, with *claims reloaded: a define that bypassed the
 * lock may have taken one of takes->addrs. */
gboolean vpa_virt_define_recheck_unclaimed (virConnectPtr conn, const char *uri,
                                            const VpaVirtTakes *takes, GPtrArray **claims,
                                            GError **error);

/* What a define replaced, to undo it. */
typedef struct {
  gboolean persistent; /* a persistent definition of that name existed */
  char *xml;           /* its inactive XML */
} PrevDef;

/* The persistent definition of name, if any, into prev. */
gboolean vpa_virt_define_previous (virConnectPtr conn, const char *uri, const char *name,
                                   PrevDef *prev, GError **error);
/* Appends suffix to error's message (error may be NULL). */
void vpa_virt_define_append_message (GError *error, const char *suffix);
/* Restores what was there before our define, saying so in error. */
void vpa_virt_define_rollback (virConnectPtr conn, virDomainPtr dom, const PrevDef *prev,
                               GError *error);

G_END_DECLS
