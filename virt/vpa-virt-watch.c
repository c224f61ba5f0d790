/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fleet watcher: libvirt's events on one connection, run by GLib's
 * default main context (libvirt's default event implementation is
 * GLib's), each burst of events turned into one sync of the host.
 *
 * Every event only schedules: a sync runs settle_ms after the first
 * event of a burst, so that a VF count change (dozens of node device
 * events) or a domain start (several lifecycle events) is one
 * transaction. A lost connection (libvirtd restarted) is noticed by the
 * close callback and keepalive, and reopened with a doubling delay; the
 * host is synced in full after every (re)connection, since events were
 * missed in between.
 */
#include "vpa-virt-watch.h"

#include <signal.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "vpa-types.h"

struct _VpaVirtWatch {
  char *uri;
  VpaVirtWatchOps ops;
  VpaVirtWatchTimes times;
  virConnectPtr conn;
  int callbacks[5]; /* libvirt callback ids, -1 when none */
  guint settle_id;
  guint heartbeat_id;
  guint reconnect_id;
  guint lost_id;
  guint retry_ms;      /* the next reconnect delay */
  guint sync_retry_ms; /* the next failed-sync retry delay */
  GPtrArray *monitors; /* GFileMonitor*, one per ops.files */
  VpaVirtWatchStats stats;
};

static const VpaVirtWatchTimes default_times = { 200, 60, 500, 60000 };

static void watch_schedule (VpaVirtWatch *w, guint delay_ms);

static void
watch_warn (const VpaVirtWatch *w, const char *what, const char *message)
{
  g_autofree char *line = g_strdup_printf ("virt-pci-affinity: fleet: watch '%s': %s: %s",
                                           w->uri, what, message);
  g_autofree char *bounded = vpa_message_bound (line, VPA_MESSAGE_MAX);

  g_printerr ("%s\n", bounded);
}

static const char *
last_libvirt_error (void)
{
  virErrorPtr err = virGetLastError ();

  return err != NULL && err->message != NULL ? err->message : "unknown libvirt error";
}

/* ------------------------------------------------------------------ */
/* Syncing                                                             */
/* ------------------------------------------------------------------ */

static gboolean
watch_sync (VpaVirtWatch *w, GError **error)
{
  if (!w->ops.sync (w->ops.data, error))
    {
      w->stats.failures++;
      return FALSE;
    }
  w->stats.syncs++;
  w->sync_retry_ms = w->times.retry_min_ms;
  return TRUE;
}

static gboolean
on_settle (gpointer data)
{
  VpaVirtWatch *w = data;
  g_autoptr (GError) error = NULL;

  w->settle_id = 0;
  if (!watch_sync (w, &error))
    {
      /* The store may be down: try again later, the rows stay as they
       * were (the sync is one transaction). */
      watch_warn (w, "sync failed, retrying", error->message);
      watch_schedule (w, w->sync_retry_ms);
      w->sync_retry_ms = MIN (w->sync_retry_ms * 2, w->times.retry_max_ms);
    }
  return G_SOURCE_REMOVE;
}

/* A sync delay_ms from now, unless one is already due. */
static void
watch_schedule (VpaVirtWatch *w, guint delay_ms)
{
  if (w->settle_id == 0)
    w->settle_id = g_timeout_add (delay_ms, on_settle, w);
}

static gboolean
on_heartbeat (gpointer data)
{
  VpaVirtWatch *w = data;
  g_autoptr (GError) error = NULL;

  if (w->ops.touch (w->ops.data, &error))
    {
      w->stats.touches++;
    }
  else
    {
      /* The host may have been removed from the store: write it again. */
      w->stats.failures++;
      watch_warn (w, "refreshing last_sync failed, syncing", error->message);
      watch_schedule (w, 0);
    }
  return G_SOURCE_CONTINUE;
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

static void
on_event (VpaVirtWatch *w)
{
  w->stats.events++;
  watch_schedule (w, w->times.settle_ms);
}

static void
on_domain_lifecycle (virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
  on_event (opaque);
}

static void
on_domain_device (virConnectPtr conn, virDomainPtr dom, const char *alias, void *opaque)
{
  on_event (opaque);
}

static void
on_nodedev_lifecycle (virConnectPtr conn, virNodeDevicePtr dev, int event, int detail,
                      void *opaque)
{
  on_event (opaque);
}

static void
on_nodedev_update (virConnectPtr conn, virNodeDevicePtr dev, void *opaque)
{
  on_event (opaque);
}

/* A file a sync reads changed (written, replaced by a rename, created or
 * deleted): an event like libvirt's. */
static void
on_file_changed (GFileMonitor *monitor, GFile *file, GFile *other, GFileMonitorEvent event,
                 gpointer data)
{
  if (event == G_FILE_MONITOR_EVENT_ATTRIBUTE_CHANGED ||
      event == G_FILE_MONITOR_EVENT_PRE_UNMOUNT || event == G_FILE_MONITOR_EVENT_UNMOUNTED)
    return;
  on_event (data);
}

/* Monitors every file of ops.files; one that cannot be monitored is a
 * warning (its changes then reach the rows at the next event or
 * heartbeat-less resync), not a failure. */
static void
watch_monitor_files (VpaVirtWatch *w)
{
  w->monitors = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; w->ops.files != NULL && w->ops.files[i] != NULL; i++)
    {
      g_autoptr (GFile) file = g_file_new_for_path (w->ops.files[i]);
      g_autoptr (GError) error = NULL;
      GFileMonitor *m = g_file_monitor_file (file, G_FILE_MONITOR_WATCH_MOVES, NULL, &error);

      if (m == NULL)
        {
          watch_warn (w, "cannot monitor a file", error->message);
          continue;
        }
      g_signal_connect (m, "changed", G_CALLBACK (on_file_changed), w);
      g_ptr_array_add (w->monitors, m);
    }
}

static void watch_disconnect (VpaVirtWatch *w);
static gboolean on_reconnect (gpointer data);

static gboolean
on_lost (gpointer data)
{
  VpaVirtWatch *w = data;

  w->lost_id = 0;
  watch_warn (w, "connection lost", "reconnecting");
  watch_disconnect (w);
  if (w->reconnect_id == 0)
    w->reconnect_id = g_timeout_add (w->retry_ms, on_reconnect, w);
  return G_SOURCE_REMOVE;
}

/* Called by libvirt inside its event dispatch: the connection is torn
 * down from an idle callback instead. */
static void
on_close (virConnectPtr conn, int reason, void *opaque)
{
  VpaVirtWatch *w = opaque;

  if (w->lost_id == 0)
    w->lost_id = g_idle_add (on_lost, w);
}

/* ------------------------------------------------------------------ */
/* The connection                                                      */
/* ------------------------------------------------------------------ */

static void
watch_disconnect (VpaVirtWatch *w)
{
  if (w->conn == NULL)
    return;
  if (w->callbacks[0] >= 0)
    virConnectDomainEventDeregisterAny (w->conn, w->callbacks[0]);
  if (w->callbacks[1] >= 0)
    virConnectDomainEventDeregisterAny (w->conn, w->callbacks[1]);
  if (w->callbacks[2] >= 0)
    virConnectDomainEventDeregisterAny (w->conn, w->callbacks[2]);
  if (w->callbacks[3] >= 0)
    virConnectNodeDeviceEventDeregisterAny (w->conn, w->callbacks[3]);
  if (w->callbacks[4] >= 0)
    virConnectNodeDeviceEventDeregisterAny (w->conn, w->callbacks[4]);
  for (guint i = 0; i < G_N_ELEMENTS (w->callbacks); i++)
    w->callbacks[i] = -1;
  virConnectUnregisterCloseCallback (w->conn, on_close);
  virConnectClose (w->conn);
  w->conn = NULL;
}

static gboolean
watch_subscribe (VpaVirtWatch *w)
{
  w->callbacks[0] = virConnectDomainEventRegisterAny (
    w->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE, VIR_DOMAIN_EVENT_CALLBACK (on_domain_lifecycle),
    w, NULL);
  w->callbacks[1] = virConnectDomainEventRegisterAny (
    w->conn, NULL, VIR_DOMAIN_EVENT_ID_DEVICE_ADDED, VIR_DOMAIN_EVENT_CALLBACK (on_domain_device),
    w, NULL);
  w->callbacks[2] = virConnectDomainEventRegisterAny (
    w->conn, NULL, VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
    VIR_DOMAIN_EVENT_CALLBACK (on_domain_device), w, NULL);
  /* A driver without node devices (some test setups) still has domains. */
  w->callbacks[3] = virConnectNodeDeviceEventRegisterAny (
    w->conn, NULL, VIR_NODE_DEVICE_EVENT_ID_LIFECYCLE,
    VIR_NODE_DEVICE_EVENT_CALLBACK (on_nodedev_lifecycle), w, NULL);
  /* A PF whose VF count changed is updated as its VFs come and go. */
  w->callbacks[4] = virConnectNodeDeviceEventRegisterAny (
    w->conn, NULL, VIR_NODE_DEVICE_EVENT_ID_UPDATE, VIR_NODE_DEVICE_EVENT_CALLBACK (on_nodedev_update),
    w, NULL);
  return w->callbacks[0] >= 0 && w->callbacks[1] >= 0 && w->callbacks[2] >= 0;
}

/* Opens the connection and subscribes; the full sync is the caller's. */
static gboolean
watch_connect (VpaVirtWatch *w, GError **error)
{
  w->conn = virConnectOpenReadOnly (w->uri);
  if (w->conn == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "cannot connect to '%s': %s",
                   w->uri, last_libvirt_error ());
      return FALSE;
    }
  /* A daemon that stops answering is noticed within ~20 s; drivers
   * without keepalive (test:///) refuse it, which is fine. */
  virConnectSetKeepAlive (w->conn, 5, 3);
  if (virConnectRegisterCloseCallback (w->conn, on_close, w, NULL) < 0 || !watch_subscribe (w))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "'%s': cannot subscribe to events: %s", w->uri, last_libvirt_error ());
      watch_disconnect (w);
      return FALSE;
    }
  return TRUE;
}

static gboolean
on_reconnect (gpointer data)
{
  VpaVirtWatch *w = data;
  g_autoptr (GError) error = NULL;

  w->reconnect_id = 0;
  if (!watch_connect (w, &error))
    {
      watch_warn (w, "reconnect failed", error->message);
      w->retry_ms = MIN (w->retry_ms * 2, w->times.retry_max_ms);
      w->reconnect_id = g_timeout_add (w->retry_ms, on_reconnect, w);
      return G_SOURCE_REMOVE;
    }
  w->stats.reconnects++;
  w->retry_ms = w->times.retry_min_ms;
  /* Whatever changed while the daemon was away: a full resync now. */
  if (w->settle_id != 0)
    g_source_remove (w->settle_id);
  w->settle_id = 0;
  watch_schedule (w, 0);
  return G_SOURCE_REMOVE;
}

/* ------------------------------------------------------------------ */

VpaVirtWatch *
vpa_virt_watch_new (const char *uri, const VpaVirtWatchOps *ops, const VpaVirtWatchTimes *times)
{
  VpaVirtWatch *w = g_new0 (VpaVirtWatch, 1);

  w->uri = g_strdup (uri);
  w->ops = *ops;
  w->times = times != NULL ? *times : default_times;
  w->retry_ms = w->times.retry_min_ms;
  w->sync_retry_ms = w->times.retry_min_ms;
  for (guint i = 0; i < G_N_ELEMENTS (w->callbacks); i++)
    w->callbacks[i] = -1;
  return w;
}

static void
source_clear (guint *id)
{
  if (*id != 0)
    g_source_remove (*id);
  *id = 0;
}

void
vpa_virt_watch_free (VpaVirtWatch *w)
{
  if (w == NULL)
    return;
  source_clear (&w->settle_id);
  source_clear (&w->heartbeat_id);
  source_clear (&w->reconnect_id);
  source_clear (&w->lost_id);
  if (w->monitors != NULL)
    {
      for (guint i = 0; i < w->monitors->len; i++)
        {
          GFileMonitor *m = g_ptr_array_index (w->monitors, i);
          g_signal_handlers_disconnect_by_data (m, w);
          g_file_monitor_cancel (m);
        }
      g_ptr_array_unref (w->monitors);
    }
  watch_disconnect (w);
  g_free (w->uri);
  g_free (w);
}

static void
silent_error (void *data, virErrorPtr err)
{
}

gboolean
vpa_virt_watch_start (VpaVirtWatch *w, GError **error)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      virSetErrorFunc (NULL, silent_error);
      /* GLib's default main context runs libvirt's handles and timers. */
      virEventRegisterDefaultImpl ();
      g_once_init_leave (&once, 1);
    }
  if (!watch_connect (w, error))
    return FALSE;
  /* before the first sync: a change while it reads is not missed */
  watch_monitor_files (w);
  if (!watch_sync (w, error))
    {
      g_prefix_error (error, "watch '%s': first sync: ", w->uri);
      return FALSE;
    }
  w->heartbeat_id = g_timeout_add_seconds (w->times.heartbeat_s, on_heartbeat, w);
  return TRUE;
}

void
vpa_virt_watch_get_stats (const VpaVirtWatch *w, VpaVirtWatchStats *stats)
{
  *stats = w->stats;
}

static gboolean
on_signal (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_CONTINUE;
}

gboolean
vpa_virt_watch_run (const char *uri, const VpaVirtWatchOps *ops, GError **error)
{
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr (VpaVirtWatch) w = vpa_virt_watch_new (uri, ops, NULL);
  guint term, intr;

  if (!vpa_virt_watch_start (w, error))
    return FALSE;
  term = g_unix_signal_add (SIGTERM, on_signal, loop);
  intr = g_unix_signal_add (SIGINT, on_signal, loop);
  g_main_loop_run (loop);
  g_source_remove (term);
  g_source_remove (intr);
  /* A change seen but not yet written is written before exiting. */
  if (w->settle_id != 0)
    {
      g_autoptr (GError) last = NULL;
      source_clear (&w->settle_id);
      if (!watch_sync (w, &last))
        watch_warn (w, "last sync failed", last->message);
    }
  return TRUE;
}
