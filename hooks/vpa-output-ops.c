/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-output-ops.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vpa-output.h"
#include "vpa-pools.h"
#include "vpa-reserve-apply.h"

/* ------------------------------------------------------------------ */
/* OpenMetrics                                                         */
/* ------------------------------------------------------------------ */

enum { ST_FREE,
       ST_USED,
       ST_BLOCKED,
       ST_RESERVED,
       ST_LAST };
static const char *const state_names[ST_LAST] = { "free", "used", "blocked", "reserved" };

typedef struct {
  char *labels; /* the label set without state, already escaped */
  guint count[ST_LAST];
} PoolSeries;

typedef struct {
  char *name;
  char *help;
  GHashTable *values; /* labels (escaped, may be "") -> double* */
} Gauge;

struct _VpaMetrics {
  gboolean with_host;
  GHashTable *pools; /* labels -> PoolSeries* */
  GPtrArray *gauges; /* Gauge*, in the order first set */
  GString *families; /* whole families added as text, before # EOF */
};

static void
pool_series_free (PoolSeries *s)
{
  g_free (s->labels);
  g_free (s);
}

static void
gauge_free (Gauge *g)
{
  g_free (g->name);
  g_free (g->help);
  g_hash_table_unref (g->values);
  g_free (g);
}

VpaMetrics *
vpa_output_ops_metrics_new (gboolean with_host)
{
  VpaMetrics *m = g_new0 (VpaMetrics, 1);

  m->with_host = with_host;
  m->pools = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                    (GDestroyNotify) pool_series_free);
  m->gauges = g_ptr_array_new_with_free_func ((GDestroyNotify) gauge_free);
  m->families = g_string_new (NULL);
  return m;
}

void
vpa_output_ops_metrics_free (VpaMetrics *m)
{
  if (m == NULL)
    return;
  g_hash_table_unref (m->pools);
  g_ptr_array_unref (m->gauges);
  g_string_free (m->families, TRUE);
  g_free (m);
}

/* name="value" with \, " and newline escaped as the exposition format says. */
static void
append_label (GString *s, const char *name, const char *value)
{
  if (s->len > 0)
    g_string_append_c (s, ',');
  g_string_append_printf (s, "%s=\"", name);
  for (const char *p = value != NULL ? value : ""; *p != '\0'; p++)
    {
      if (*p == '\\' || *p == '"')
        g_string_append_c (s, '\\');
      if (*p == '\n')
        {
          g_string_append (s, "\\n");
        }
      else
        {
          g_string_append_c (s, *p);
        }
    }
  g_string_append_c (s, '"');
}

static void
append_int_label (GString *s, const char *name, gint v)
{
  char buf[16];

  if (v < 0)
    {
      buf[0] = '\0';
    }
  else
    {
      g_snprintf (buf, sizeof buf, "%d", v);
    }
  append_label (s, name, buf);
}

static GString *
host_labels (const VpaMetrics *m, const char *host)
{
  GString *s = g_string_new (NULL);

  if (m->with_host)
    append_label (s, "host", host);
  return s;
}

void
vpa_output_ops_metrics_add_pool (VpaMetrics *m, const VpaConfig *config, const char *host,
                                 const VpaPool *pool)
{
  GString *s = host_labels (m, pool->host != NULL ? pool->host : host);
  PoolSeries *series;

  append_label (s, "vendor_id", pool->vendor_id);
  append_label (s, "product_id", pool->product_id);
  append_label (s, "dev_type", vpa_dev_type_to_string (pool->dev_type));
  append_int_label (s, "numa_node", pool->numa_node);
  append_int_label (s, "socket", pool->socket);
  append_label (s, "physical_network", vpa_pools_tag (pool, config, "physical_network"));
  series = g_hash_table_lookup (m->pools, s->str);
  if (series == NULL)
    {
      series = g_new0 (PoolSeries, 1);
      series->labels = g_string_free (s, FALSE);
      g_hash_table_insert (m->pools, series->labels, series);
    }
  else
    g_string_free (s, TRUE);
  series->count[ST_FREE] += pool->free;
  series->count[ST_USED] += pool->used;
  series->count[ST_BLOCKED] += pool->blocked;
  series->count[ST_RESERVED] += pool->reserved;
}

/* The family virt_pci_affinity_NAME, created on first use. */
static Gauge *
gauge_get (VpaMetrics *m, const char *name, const char *help)
{
  g_autofree char *full = g_strconcat ("virt_pci_affinity_", name, NULL);
  Gauge *g;

  for (guint i = 0; i < m->gauges->len; i++)
    {
      if (strcmp (((Gauge *) m->gauges->pdata[i])->name, full) == 0)
        return m->gauges->pdata[i];
    }
  g = g_new0 (Gauge, 1);
  g->name = g_steal_pointer (&full);
  g->help = g_strdup (help);
  g->values = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_ptr_array_add (m->gauges, g);
  return g;
}

static void
gauge_set (Gauge *g, GString *labels, double value)
{
  double *v = g_new (double, 1);

  *v = value;
  g_hash_table_replace (g->values, g_string_free (labels, FALSE), v);
}

void
vpa_output_ops_metrics_set_gauge (VpaMetrics *m, const char *host, const char *name, const char *help,
                                  double value)
{
  gauge_set (gauge_get (m, name, help), host_labels (m, host), value);
}

void
vpa_output_ops_metrics_add_family (VpaMetrics *m, const char *text)
{
  g_string_append (m->families, text);
}

static gint
str_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static void
append_value (GString *out, const char *name, const char *labels, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (out, name);
  if (labels[0] != '\0')
    g_string_append_printf (out, "{%s}", labels);
  /* counts and timestamps as integers, durations with 9 digits */
  if (v == (double) (gint64) v && v < 1e15 && v > -1e15)
    {
      g_string_append_printf (out, " %" G_GINT64_FORMAT "\n", (gint64) v);
    }
  else
    {
      g_string_append_printf (out, " %s\n", g_ascii_formatd (buf, sizeof buf, "%.9g", v));
    }
}

char *
vpa_output_ops_metrics_to_string (VpaMetrics *m)
{
  GString *out = g_string_new (NULL);
  g_autofree gpointer *keys = NULL;
  guint n;

  keys = g_hash_table_get_keys_as_array (m->pools, &n);
  qsort (keys, n, sizeof keys[0], str_cmp);
  g_string_append (out, "# HELP " VPA_METRIC_POOL_DEVICES
                        " PCI devices of each pool by state (free: assignable, used: held by a "
                        "domain, blocked: a PF with a held VF or a VF of a held PF, reserved: "
                        "one-time-use or quarantined until released).\n"
                        "# TYPE " VPA_METRIC_POOL_DEVICES " gauge\n");
  for (guint i = 0; i < n; i++)
    {
      const PoolSeries *s = g_hash_table_lookup (m->pools, keys[i]);

      for (guint st = 0; st < ST_LAST; st++)
        {
          g_autofree char *labels =
            g_strdup_printf ("%s,state=\"%s\"", s->labels, state_names[st]);
          append_value (out, VPA_METRIC_POOL_DEVICES, labels, s->count[st]);
        }
    }
  for (guint i = 0; i < m->gauges->len; i++)
    {
      const Gauge *g = m->gauges->pdata[i];
      g_autofree gpointer *gk = g_hash_table_get_keys_as_array (g->values, &n);

      qsort (gk, n, sizeof gk[0], str_cmp);
      g_string_append_printf (out, "# HELP %s %s\n# TYPE %s gauge\n", g->name, g->help,
                              g->name);
      for (guint k = 0; k < n; k++)
        append_value (out, g->name, gk[k], *(double *) g_hash_table_lookup (g->values, gk[k]));
    }
  g_string_append_len (out, m->families->str, (gssize) m->families->len);
  g_string_append (out, "# EOF\n");
  return g_string_free (out, FALSE);
}

void
vpa_output_ops_metrics_add_pools (VpaMetrics *m, const VpaInventory *inv, GArray *pools)
{
  const char *host = inv->host->hostname != NULL ? inv->host->hostname : "";

  for (guint p = 0; p < pools->len; p++)
    vpa_output_ops_metrics_add_pool (m, inv->config, host, &g_array_index (pools, VpaPool, p));
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

/* The held relative that blocks device i: its PF, or its first held VF. */
static gint
blocking_relative (const VpaInventory *inv, guint i)
{
  const VpaDevice *dev = vpa_host_device (inv->host, i);

  if (dev->parent_index >= 0 && (inv->state[dev->parent_index] == VPA_DEV_STATE_HELD ||
                                 inv->state[dev->parent_index] == VPA_DEV_STATE_RESERVED))
    return dev->parent_index;
  for (guint v = 0; dev->vf_indices != NULL && v < dev->vf_indices->len; v++)
    {
      guint vf = g_array_index (dev->vf_indices, guint, v);
      if (inv->state[vf] == VPA_DEV_STATE_HELD || inv->state[vf] == VPA_DEV_STATE_RESERVED)
        return (gint) vf;
    }
  return -1;
}

/* "free", "used" (held by a domain), "blocked" or "reserved": the pools'
 * words. */
static const char *
state_word (const VpaInventory *inv, guint i)
{
  switch (inv->state[i])
    {
    case VPA_DEV_STATE_HELD:
      return "used";
    case VPA_DEV_STATE_BLOCKED:
      return "blocked";
    case VPA_DEV_STATE_RESERVED:
      return "reserved";
    default:
      return "free";
    }
}

/* Tag set tagset of config (inv->tagset[i], a pool's), or NULL. */
static GPtrArray *
config_tags (const VpaConfig *config, gint tagset)
{
  if (tagset < 0 || (guint) tagset >= config->tagsets->len)
    return NULL;
  return g_ptr_array_index (config->tagsets, tagset);
}

static char *
int_or_dash (gint v)
{
  return v < 0 ? g_strdup ("-") : g_strdup_printf ("%d", v);
}

static char *
holder_text (const VpaInventory *inv, guint i)
{
  gint r;
  char buf[VPA_ADDR_BUFLEN];

  if (inv->state[i] == VPA_DEV_STATE_HELD)
    return g_strdup (inv->held_by[i] != NULL ? inv->held_by[i] : "?");
  if (inv->state[i] == VPA_DEV_STATE_BLOCKED && (r = blocking_relative (inv, i)) >= 0)
    {
      return g_strdup_printf ("%s (%s)",
                              vpa_addr_format (vpa_host_device (inv->host, (guint) r)->addr, buf),
                              inv->held_by[r] != NULL ? inv->held_by[r] : "reserved");
    }
  /* a reserved device a domain still names: that domain */
  if (inv->state[i] == VPA_DEV_STATE_RESERVED && inv->held_by[i] != NULL)
    return g_strdup (inv->held_by[i]);
  return g_strdup ("-");
}

/* Device i is listed: in the inventory, and matched by only's specs. */
static gboolean
listed (const VpaInventory *inv, guint i, const VpaAlias *only)
{
  if (!vpa_inventory_has (inv, i))
    return FALSE;
  for (guint s = 0; only != NULL && s < only->specs->len; s++)
    {
      if (vpa_inventory_model_spec_match (inv, i, only->specs->pdata[s]))
        return TRUE;
    }
  return only == NULL;
}

char *
vpa_output_ops_devices_text (const VpaInventory *inv, const VpaAlias *only)
{
  static const char *const header[] = { "ADDRESS", "ID", "TYPE", "NUMA", "SOCKET", "PF",
                                        "TAGS", "STATE", "DOMAIN", NULL };
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);

  g_ptr_array_add (rows, g_strdupv ((char **) header));
  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      const VpaDevice *dev = vpa_host_device (inv->host, i);
      char **row;
      char buf[VPA_ADDR_BUFLEN];

      if (!listed (inv, i, only))
        continue;
      row = g_new0 (char *, 10);
      row[0] = g_strdup (vpa_addr_format (dev->addr, buf));
      row[1] = g_strdup_printf ("%s:%s", dev->vendor_id, dev->product_id);
      row[2] = g_strdup (vpa_dev_type_to_string (dev->dev_type));
      row[3] = int_or_dash (dev->numa_node);
      row[4] = int_or_dash (vpa_host_node_socket (inv->host, dev->numa_node));
      row[5] = dev->parent_addr != VPA_ADDR_NONE ? vpa_addr_to_string (dev->parent_addr)
                                                 : g_strdup ("-");
      row[6] = vpa_output_tags_text (config_tags (inv->config, inv->tagset[i]));
      row[7] = g_strdup (state_word (inv, i));
      row[8] = holder_text (inv, i);
      g_ptr_array_add (rows, row);
    }
  return vpa_output_table_text (rows, 9, NULL, 9);
}

/* "reservation": what keeps a reserved device (docs/reservations.md), or
 * null. */
static void
add_reservation (JsonBuilder *b, const VpaInventory *inv, guint i)
{
  const VpaReservation *r = vpa_reserve_apply_of (inv, i);
  g_autofree char *since = r != NULL ? vpa_reserve_since_text (r) : NULL;

  json_builder_set_member_name (b, "reservation");
  if (r == NULL)
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_object (b);
  vpa_output_json_add_string_or_null (b, "kind", vpa_reserve_kind_to_string (r->kind));
  vpa_output_json_add_string_or_null (b, "since", since);
  vpa_output_json_add_string_or_null (b, "domain", r->domain);
  vpa_output_json_add_string_or_null (b, "reason", r->reason);
  json_builder_end_object (b);
}

static void
device_json (JsonBuilder *b, const VpaInventory *inv, guint i)
{
  const VpaDevice *dev = vpa_host_device (inv->host, i);
  char buf[VPA_ADDR_BUFLEN];
  gint r;

  json_builder_begin_object (b);
  vpa_output_json_add_string_or_null (b, "address", vpa_addr_format (dev->addr, buf));
  vpa_output_json_add_string_or_null (b, "vendor_id", dev->vendor_id);
  vpa_output_json_add_string_or_null (b, "product_id", dev->product_id);
  vpa_output_json_add_string_or_null (b, "dev_type", vpa_dev_type_to_string (dev->dev_type));
  vpa_output_json_add_int_or_null (b, "numa_node", dev->numa_node);
  vpa_output_json_add_int_or_null (b, "socket", vpa_host_node_socket (inv->host, dev->numa_node));
  vpa_output_json_add_string_or_null (b, "pf", dev->parent_addr != VPA_ADDR_NONE ? vpa_addr_format (dev->parent_addr, buf) : NULL);
  vpa_output_json_add_tags (b, config_tags (inv->config, inv->tagset[i]));
  vpa_output_json_add_string_or_null (b, "state", state_word (inv, i));
  vpa_output_json_add_string_or_null (b, "domain",
                                      inv->state[i] == VPA_DEV_STATE_HELD ? inv->held_by[i] : NULL);
  json_builder_set_member_name (b, "blocked_by");
  r = inv->state[i] == VPA_DEV_STATE_BLOCKED ? blocking_relative (inv, i) : -1;
  if (r < 0)
    {
      json_builder_add_null_value (b);
    }
  else
    {
      json_builder_begin_object (b);
      vpa_output_json_add_string_or_null (b, "address",
                                          vpa_addr_format (vpa_host_device (inv->host, (guint) r)->addr, buf));
      vpa_output_json_add_string_or_null (b, "domain", inv->held_by[r]);
      json_builder_end_object (b);
    }
  add_reservation (b, inv, i);
  json_builder_end_object (b);
}

char *
vpa_output_ops_devices_json (const VpaInventory *inv, const VpaAlias *only, GArray *netrows)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "devices");
  json_builder_begin_array (b);
  for (guint i = 0; i < inv->host->devices->len; i++)
    {
      if (listed (inv, i, only))
        device_json (b, inv, i);
    }
  json_builder_end_array (b);
  vpa_output_ops_netpool_json_add (b, inv, netrows);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}

/* ------------------------------------------------------------------ */
/* check, traits                                                       */
/* ------------------------------------------------------------------ */

static const char *const check_status_names[] = { "ok", "missing", "policy", "claimed",
                                                  "unplaced", "locality", "reserved" };
G_STATIC_ASSERT (G_N_ELEMENTS (check_status_names) == VPA_CHECK_LAST);

char *
vpa_output_ops_check_json (const char *domain, GPtrArray *results, gboolean ok)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  vpa_output_json_add_string_or_null (b, "domain", domain);
  json_builder_set_member_name (b, "ok");
  json_builder_add_boolean_value (b, ok);
  json_builder_set_member_name (b, "devices");
  json_builder_begin_array (b);
  for (guint i = 0; i < results->len; i++)
    {
      const VpaCheckResult *r = g_ptr_array_index (results, i);
      char buf[VPA_ADDR_BUFLEN];

      json_builder_begin_object (b);
      vpa_output_json_add_string_or_null (b, "device", r->device);
      vpa_output_json_add_string_or_null (b, "address",
                                          r->addr != VPA_ADDR_NONE ? vpa_addr_format (r->addr, buf) : NULL);
      vpa_output_json_add_int_or_null (b, "numa_node", r->numa_node);
      vpa_output_json_add_string_or_null (b, "status",
                                          r->status < VPA_CHECK_LAST ? check_status_names[r->status] : "?");
      vpa_output_json_add_string_or_null (b, "message", r->line);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}

char *
vpa_output_ops_traits_json (char **traits)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "traits");
  json_builder_begin_array (b);
  for (guint i = 0; traits != NULL && traits[i] != NULL; i++)
    json_builder_add_string_value (b, traits[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}

/* The file --output replaces: its permission bits (a 0600 file stays
 * 0600: the new file is created with them, never readable by more, and
 * given them exactly once renamed, whatever the umask took), and its
 * owner and group, which only root can give back. A new file, or what is
 * not a regular file, is created 0644 (less the umask), as before. */
typedef struct {
  gboolean existed;
  mode_t mode;
  uid_t uid;
  gid_t gid;
} Replaced;

static Replaced
replaced_of (const char *path)
{
  Replaced r = { FALSE, 0644, 0, 0 };
  struct stat st;

  if (lstat (path, &st) == 0 && S_ISREG (st.st_mode))
    {
      r.existed = TRUE;
      r.mode = st.st_mode & 0777;
      r.uid = st.st_uid;
      r.gid = st.st_gid;
    }
  return r;
}

/* The owner (as root) and mode of r onto the open file: 0 or an errno. */
static int
give_owner_mode (int fd, const struct stat *st, const Replaced *r)
{
  if (geteuid () == 0 && (st->st_uid != r->uid || st->st_gid != r->gid) &&
      fchown (fd, r->uid, r->gid) != 0)
    return errno;
  if ((st->st_mode & 0777) != r->mode && fchmod (fd, r->mode) != 0)
    return errno;
  return 0;
}

/* Gives the new file at path the replaced one's mode and owner, through
 * a descriptor of that very file (never through a link put there since). */
static gboolean
restore_replaced (const char *path, const Replaced *r, GError **error)
{
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  int saved;

  if (fd < 0 || fstat (fd, &st) != 0)
    {
      saved = errno;
    }
  else if (!S_ISREG (st.st_mode))
    {
      saved = EEXIST;
    }
  else
    {
      saved = give_owner_mode (fd, &st, r);
    }
  if (fd >= 0)
    close (fd);
  if (saved != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "--output: '%s' written, but the mode %04o and owner %u:%u of the file it "
                   "replaced cannot be kept: %s",
                   path, (guint) r->mode, (guint) r->uid, (guint) r->gid, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

gboolean
vpa_output_ops_write_file (const char *path, const char *text, GError **error)
{
  g_autoptr (GError) local = NULL;
  Replaced r = replaced_of (path);

  if (!g_file_set_contents_full (path, text, -1,
                                 G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_ONLY_EXISTING,
                                 (int) r.mode, &local))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "--output: %s", local->message);
      return FALSE;
    }
  return !r.existed || restore_replaced (path, &r, error);
}

/* ------------------------------------------------------------------ */
/* libvirt hostdev networks                                            */
/* ------------------------------------------------------------------ */

static const VpaDevice *
row_pf (const VpaInventory *inv, const VpaNetPoolRow *row)
{
  return row->pf_index >= 0 ? vpa_host_device (inv->host, (guint) row->pf_index) : NULL;
}

/* The tags of the PF's first VF in the inventory (its VFs' pool). */
static gint
row_tagset (const VpaInventory *inv, const VpaDevice *pf)
{
  for (guint v = 0; pf != NULL && pf->vf_indices != NULL && v < pf->vf_indices->len; v++)
    {
      guint vf = g_array_index (pf->vf_indices, guint, v);
      if (vpa_inventory_has (inv, vf))
        return inv->tagset[vf];
    }
  return -1;
}

char *
vpa_output_ops_netpool_text (const VpaInventory *inv, GArray *netrows)
{
  static const char *const header[] = { "NETWORK", "PF", "DEVICE", "NUMA", "SOCKET", "TAGS",
                                        "VFS", "FREE", NULL };
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  g_autofree char *table = NULL;

  if (netrows == NULL || netrows->len == 0)
    return g_strdup ("");
  g_ptr_array_add (rows, g_strdupv ((char **) header));
  for (guint i = 0; i < netrows->len; i++)
    {
      const VpaNetPoolRow *r = &g_array_index (netrows, VpaNetPoolRow, i);
      const VpaDevice *pf = row_pf (inv, r);
      char **row = g_new0 (char *, 9);

      row[0] = g_strdup_printf ("%s%s", r->net->name, r->net->active ? "" : " (inactive)");
      row[1] = pf != NULL ? vpa_addr_to_string (pf->addr) : g_strdup ("-");
      row[2] = g_strdup (r->pf_dev);
      row[3] = int_or_dash (pf != NULL ? pf->numa_node : -1);
      row[4] = int_or_dash (pf != NULL ? vpa_host_node_socket (inv->host, pf->numa_node) : -1);
      row[5] = vpa_output_tags_text (config_tags (inv->config, row_tagset (inv, pf)));
      row[6] = g_strdup_printf ("%u", r->vfs);
      row[7] = g_strdup_printf ("%u", r->free);
      g_ptr_array_add (rows, row);
    }
  table = vpa_output_table_text (rows, 8, NULL, 6);
  return g_strconcat ("\n", table, NULL);
}

void
vpa_output_ops_netpool_json_add (JsonBuilder *b, const VpaInventory *inv, GArray *netrows)
{
  if (netrows == NULL || netrows->len == 0)
    return;
  json_builder_set_member_name (b, "hostdev_networks");
  json_builder_begin_array (b);
  for (guint i = 0; i < netrows->len; i++)
    {
      const VpaNetPoolRow *r = &g_array_index (netrows, VpaNetPoolRow, i);
      const VpaDevice *pf = row_pf (inv, r);
      char buf[VPA_ADDR_BUFLEN];

      json_builder_begin_object (b);
      vpa_output_json_add_string_or_null (b, "network", r->net->name);
      json_builder_set_member_name (b, "active");
      json_builder_add_boolean_value (b, r->net->active);
      vpa_output_json_add_string_or_null (b, "pf_dev", r->pf_dev);
      vpa_output_json_add_string_or_null (b, "pf", pf != NULL ? vpa_addr_format (pf->addr, buf) : NULL);
      vpa_output_json_add_int_or_null (b, "numa_node", pf != NULL ? pf->numa_node : -1);
      vpa_output_json_add_int_or_null (
        b, "socket", pf != NULL ? vpa_host_node_socket (inv->host, pf->numa_node) : -1);
      vpa_output_json_add_tags (b, config_tags (inv->config, row_tagset (inv, pf)));
      json_builder_set_member_name (b, "vfs");
      json_builder_add_int_value (b, r->vfs);
      json_builder_set_member_name (b, "free");
      json_builder_add_int_value (b, r->free);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

char *
vpa_output_ops_pools_json_networks (const VpaInventory *inv, GArray *pools, GArray *netrows)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  g_autofree const VpaPool **ptrs = g_new (const VpaPool *, MAX (pools->len, 1));

  for (guint p = 0; p < pools->len; p++)
    ptrs[p] = &g_array_index (pools, VpaPool, p);
  json_builder_begin_object (b);
  vpa_output_pools_json_add (b, inv->config, ptrs, pools->len);
  vpa_output_ops_netpool_json_add (b, inv, netrows);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}

void
vpa_output_ops_metrics_add_netpool (VpaMetrics *m, GArray *netrows)
{
  for (guint i = 0; netrows != NULL && i < netrows->len; i++)
    {
      const VpaNetPoolRow *r = &g_array_index (netrows, VpaNetPoolRow, i);
      GString *labels = host_labels (m, NULL);

      append_label (labels, "network", r->net->name);
      append_label (labels, "pf_dev", r->pf_dev);
      gauge_set (gauge_get (m, "hostdev_network_free_vfs",
                            "Free VFs of the PF of each libvirt hostdev network."),
                 labels, r->free);
    }
}
