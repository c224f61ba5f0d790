/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reserved devices (docs/reservations.md): one-time-use devices a domain
 * has started with (Nova's one_time_use) and devices an operator
 * quarantined by hand. They live in one small state file,
 * STATE_DIR/reservations (the [hook] state-dir), that the hook and the
 * CLI both read and write: a header line, then one line per device,
 * ascending by address:
 *
 *   # virt-pci-affinity reservations 1
 *   0000:81:00.0 one-time-use 1718000000 UUID DOMAIN
 *   0000:82:00.0 quarantine 1718000000 REASON
 *
 * UUID is '-' when the domain had none; DOMAIN and REASON take the rest
 * of the line, escaped as C strings (g_strescape), so a name may hold any
 * byte. The file is bounded (VPA_RESERVE_FILE_MAX bytes, VPA_RESERVE_MAX
 * lines) and every line is checked: a file that cannot be read whole is
 * an error, never an empty set (who reads it fails closed).
 */
#pragma once

#include "vpa-types.h"

G_BEGIN_DECLS

#define VPA_RESERVE_FILE "reservations"
#define VPA_RESERVE_FILE_MAX (1024 * 1024) /* bytes a reader accepts */
#define VPA_RESERVE_MAX 4096               /* devices reserved at once */
#define VPA_RESERVE_DOMAIN_MAX 1024        /* bytes of a domain name */
#define VPA_RESERVE_REASON_MAX 256         /* bytes of a quarantine reason */

typedef enum {
  VPA_RESERVE_ONE_TIME_USE, /* a domain started with it (one-time-use=true) */
  VPA_RESERVE_QUARANTINE,   /* an operator reserved it (device quarantine) */
  VPA_RESERVE_LAST
} VpaReserveKind;

/* A device spec's one-time-use= value, as Nova's strict bool_from_string
 * reads one_time_use: 1, t, true, on, y, yes or 0, f, false, off, n, no,
 * any case, blanks around ignored. FALSE for anything else. */
gboolean vpa_reserve_one_time_use_value (const char *value, gboolean *out);

const char *vpa_reserve_kind_to_string (VpaReserveKind kind);
gboolean vpa_reserve_kind_from_string (const char *str, VpaReserveKind *out);

typedef struct {
  VpaAddr addr;
  VpaReserveKind kind;
  gint64 since; /* seconds since the epoch */
  char *domain; /* one-time-use: the domain that started with it; else NULL */
  char *uuid;   /* its UUID, NULL when unknown; quarantine: NULL */
  char *reason; /* quarantine: the operator's words; else NULL */
} VpaReservation;

VpaReservation *vpa_reserve_item_new (VpaAddr addr, VpaReserveKind kind, gint64 since,
                                      const char *domain, const char *uuid, const char *reason);
void vpa_reserve_item_free (VpaReservation *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaReservation, vpa_reserve_item_free)

/* Whether r keeps its device from the domain named name (with uuid, NULL
 * when unknown): a quarantine from every domain, a one-time-use device
 * from every domain but the one that started with it (same name, and the
 * same UUID when both are known). name NULL: from everyone. */
gboolean vpa_reserve_blocks (const VpaReservation *r, const char *name, const char *uuid);

/* Why the device is not handed out, for check's line and the hook's:
 * "is reserved: quarantined since DATE: 'REASON'; ..." with the command
 * that lifts it. */
char *vpa_reserve_describe (const VpaReservation *r);

/* SINCE as an ISO 8601 UTC time (2025-06-01T12:00:00Z). */
char *vpa_reserve_since_text (const VpaReservation *r);

typedef struct {
  char *path;       /* the file, for messages */
  GPtrArray *items; /* VpaReservation*, ascending by address, one per address */
} VpaReserveSet;

VpaReserveSet *vpa_reserve_set_new (const char *path);
void vpa_reserve_set_free (VpaReserveSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaReserveSet, vpa_reserve_set_free)

/* The reservation of addr, or NULL (a binary search). */
const VpaReservation *vpa_reserve_set_find (const VpaReserveSet *set, VpaAddr addr);
/* Adds r, replacing the reservation of its address (takes ownership). */
void vpa_reserve_set_put (VpaReserveSet *set, VpaReservation *r);
/* Removes the reservation of addr: FALSE when there is none. */
gboolean vpa_reserve_set_remove (VpaReserveSet *set, VpaAddr addr);

/* The file's text; parse is its inverse. Errors are VPA_ERROR_ENVIRONMENT
 * (the file is ours: a damaged one is the host's state, not the user's
 * input), one line naming the file, the line and the value. */
char *vpa_reserve_set_format (const VpaReserveSet *set);
VpaReserveSet *vpa_reserve_set_parse (const char *data, gsize len, const char *path,
                                      GError **error);

/* Reads STATE_DIR/reservations: an empty set when it (or STATE_DIR) does
 * not exist; a link, a FIFO, any file that is not regular, one over the
 * bounds, one that cannot be read or parsed is an error. */
VpaReserveSet *vpa_reserve_set_load (const char *state_dir, GError **error);

/* Changes STATE_DIR/reservations under an exclusive lock (waiting at most
 * about two seconds for it): reads it (an error stops here: a damaged
 * file is never overwritten), calls edit, and when edit says it changed
 * the set writes a new file, fsyncs it, renames it over the old one and
 * fsyncs the directory, so that a reader sees the old or the new file,
 * whole, also after a power cut. Creates STATE_DIR (0755) when missing. */
typedef gboolean (*VpaReserveEdit) (VpaReserveSet *set, gpointer data, gboolean *changed,
                                    GError **error);
gboolean vpa_reserve_set_update (const char *state_dir, VpaReserveEdit edit, gpointer data,
                                 GError **error);

G_END_DECLS
