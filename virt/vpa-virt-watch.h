/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `fleet sync --watch` (docs/fleet.md, "The watcher"): one libvirt
 * connection and its events keep a host's fleet rows current. This
 * header needs only GLib, so that the fleet front end, which does not
 * link libvirt, can hand its callbacks to the watcher of libvpa-virt.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What the watcher calls, from its main loop. */
typedef struct {
  /* Rewrites the host's rows from a fresh inventory and claims, in one
   * transaction. */
  gboolean (*sync) (gpointer data, GError **error);
  /* Sets the host's last_sync to now without rewriting its rows. */
  gboolean (*touch) (gpointer data, GError **error);
  gpointer data;
  /* Files whose changes are events too (NULL-terminated; NULL: none):
   * what a sync reads besides libvirt, such as the configuration and
   * the reservations. A file may not exist yet. */
  const char *const *files;
} VpaVirtWatchOps;

typedef struct {
  guint settle_ms;    /* events this close together are one change (200) */
  guint heartbeat_s;  /* last_sync refreshed this often (60) */
  guint retry_min_ms; /* first reconnect or failed-sync retry delay (500) */
  guint retry_max_ms; /* the delay doubles up to this (60 000) */
} VpaVirtWatchTimes;

typedef struct {
  guint events;     /* libvirt events and file changes received */
  guint syncs;      /* successful syncs (the first included) */
  guint failures;   /* failed syncs and touches */
  guint touches;    /* successful last_sync refreshes */
  guint reconnects; /* connections re-established after a loss */
} VpaVirtWatchStats;

typedef struct _VpaVirtWatch VpaVirtWatch;

/* times NULL: the defaults above. */
VpaVirtWatch *vpa_virt_watch_new (const char *uri, const VpaVirtWatchOps *ops,
                                  const VpaVirtWatchTimes *times);
void vpa_virt_watch_free (VpaVirtWatch *watch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaVirtWatch, vpa_virt_watch_free)

/* Registers libvirt's GLib event loop (once per process), connects
 * read-only, subscribes to domain lifecycle and device events and node
 * device lifecycle events, monitors ops->files, and syncs the host in
 * full. The events are
 * then handled by the default GMainContext. VPA_ERROR_ENVIRONMENT when
 * the connection or the first sync fails. */
gboolean vpa_virt_watch_start (VpaVirtWatch *watch, GError **error);

void vpa_virt_watch_get_stats (const VpaVirtWatch *watch, VpaVirtWatchStats *stats);

/* start, then the default main loop until SIGTERM or SIGINT; TRUE on a
 * signal, FALSE when start fails. */
gboolean vpa_virt_watch_run (const char *uri, const VpaVirtWatchOps *ops, GError **error);

G_END_DECLS
