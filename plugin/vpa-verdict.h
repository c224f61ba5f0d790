/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hook's verdicts (docs/hook.md, "Audit mode and the trace of every
 * verdict"): whether a failed check refuses or is only audited, the one
 * log line each refusal and each would-refuse leaves, and the counter
 * file under the hook's state directory that `pools --format
 * openmetrics` and `status` read. Written only when a verdict is not a
 * pass, so a start that passes costs nothing here.
 */
#pragma once

#include <glib.h>

#include "vpa-domain-mode.h"
#include "vpa-pipeline.h"

typedef enum {
  VPA_VERDICT_REFUSED,      /* the hook refused the operation */
  VPA_VERDICT_WOULD_REFUSE, /* audit mode: logged and counted, let through */
  VPA_VERDICT_LAST
} VpaVerdict;

/* Why, as a metric label: a small fixed set (the message has the rest). */
typedef enum {
  VPA_VERDICT_REASON_CONFIG,    /* the configuration cannot be read */
  VPA_VERDICT_REASON_INPUT,     /* the domain XML or its requests cannot be read */
  VPA_VERDICT_REASON_INVENTORY, /* the inventory or the state files cannot be read */
  VPA_VERDICT_REASON_MISSING,   /* a device is not on this host */
  VPA_VERDICT_REASON_POLICY,    /* a device breaks its NUMA policy */
  VPA_VERDICT_REASON_CLAIMED,   /* another domain holds a device or CPU */
  VPA_VERDICT_REASON_UNPLACED,  /* a request has no device */
  VPA_VERDICT_REASON_PLACEMENT, /* the re-placement failed */
  VPA_VERDICT_REASON_RESERVED,  /* a device is reserved (docs/reservations.md) */
  VPA_VERDICT_REASON_LAST
} VpaVerdictReason;

/* The hook's operations, as the op label. */
typedef enum {
  VPA_VERDICT_OP_PREPARE,
  VPA_VERDICT_OP_START,
  VPA_VERDICT_OP_MIGRATE,
  VPA_VERDICT_OP_RESTORE,
  VPA_VERDICT_OP_LAST
} VpaVerdictOp;

const char *vpa_verdict_to_string (VpaVerdict v);
const char *vpa_verdict_reason_to_string (VpaVerdictReason r);
const char *vpa_verdict_op_to_string (VpaVerdictOp op);
gboolean vpa_verdict_from_string (const char *str, VpaVerdict *out);
gboolean vpa_verdict_reason_from_string (const char *str, VpaVerdictReason *out);
gboolean vpa_verdict_op_from_string (const char *str, VpaVerdictOp *out);
VpaVerdictReason vpa_verdict_reason_from_check (VpaCheckStatus status);

/* TRUE when a failed check is only audited: the host is in audit mode and
 * the domain does not ask for enforce. A document that cannot be read
 * (VPA_DOMAIN_MODE_UNKNOWN) but carries our namespace may ask for it, so
 * it is refused. */
gboolean vpa_verdict_audits (gboolean host_audit, VpaDomainMode mode, gboolean has_namespace);

typedef struct {
  const char *domain;
  VpaVerdictOp op;
  VpaVerdict verdict;
  VpaVerdictReason reason;
  const char *message; /* the line libvirt shows, without our prefix */
  gint64 when;         /* seconds since the epoch */
} VpaVerdictEvent;

/* The text of the log line: domain, op, verdict, reason and the message,
 * bounded (VPA_MESSAGE_MAX) and escaped. */
char *vpa_verdict_log_message (const VpaVerdictEvent *ev);

/* Sends the line as syslog(3) does (RFC 3164: <PRI>TIMESTAMP
 * ident[pid]: message, facility daemon, priority warning) to the datagram
 * socket at path. */
gboolean vpa_verdict_syslog_send (const char *path, const VpaVerdictEvent *ev, GError **error);

/* ---- the counter file: STATE_DIR/verdicts ------------------------- */

#define VPA_VERDICT_FILE "verdicts"
#define VPA_VERDICT_FILE_MAX (64 * 1024) /* bytes a reader accepts */
#define VPA_VERDICT_RECENT 10            /* last verdicts kept */

typedef struct {
  gint64 when;
  VpaVerdictOp op;
  VpaVerdict verdict;
  VpaVerdictReason reason;
  char *domain; /* bounded */
} VpaVerdictRecent;

typedef struct {
  guint64 count[VPA_VERDICT_OP_LAST][VPA_VERDICT_LAST][VPA_VERDICT_REASON_LAST];
  GPtrArray *recent; /* VpaVerdictRecent*, oldest first, at most VPA_VERDICT_RECENT */
} VpaVerdictCounts;

VpaVerdictCounts *vpa_verdict_counts_new (void);
void vpa_verdict_counts_free (VpaVerdictCounts *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaVerdictCounts, vpa_verdict_counts_free)

/* The file's text; parse is its inverse (doc->what names it in errors: one
 * line naming the file, the line and the value). */
char *vpa_verdict_counts_format (const VpaVerdictCounts *c);
VpaVerdictCounts *vpa_verdict_counts_parse (const VpaDoc *doc, GError **error);

/* Reads STATE_DIR/verdicts: an empty set when the file does not exist;
 * a link, a non-regular file or one over VPA_VERDICT_FILE_MAX is an
 * error. *exists (may be NULL) tells whether it was there. */
VpaVerdictCounts *vpa_verdict_counts_load (const char *state_dir, gboolean *exists,
                                           GError **error);

/* Adds ev to STATE_DIR/verdicts under an exclusive lock (waiting at most
 * about a second for it), written to a new file and renamed over the old
 * one, so that a reader sees the old or the new file, whole. Creates the
 * directory (0755) when it is missing. */
gboolean vpa_verdict_count (const char *state_dir, const VpaVerdictEvent *ev, GError **error);
