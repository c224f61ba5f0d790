/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A fleet store: its URI (and the secrets in it), opening one of the two
 * backends behind VpaFleetStoreOps, and what every caller asks of it:
 * a host's sync in one transaction, the pools, the hosts.
 */
#include "vpa-fleet-store.h"
#include "vpa-pools.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Opening a store                                                     */
/* ------------------------------------------------------------------ */

char *
vpa_fleet_store_uri_redact (const char *store)
{
  const char *scheme_end = strstr (store, "://");
  g_autoptr (GString) out = NULL;
  const char *auth, *auth_end, *at, *colon;
  const char *pw;

  if (scheme_end == NULL)
    return g_strdup (store);
  out = g_string_new (NULL);
  auth = scheme_end + 3;
  auth_end = auth + strcspn (auth, "/?");
  at = memchr (auth, '@', (gsize) (auth_end - auth));
  colon = at != NULL ? memchr (auth, ':', (gsize) (at - auth)) : NULL;
  /* user:PASSWORD@ shows as user:***@ (the user and that there is a
   * password stay visible, as docs/fleet.md says) */
  if (colon != NULL)
    {
      g_string_append_len (out, store, colon - store + 1);
      g_string_append (out, "***");
      g_string_append (out, at);
    }
  else
    g_string_append (out, store);

  /* every password=... of the query string */
  for (gsize from = 0; (pw = strstr (out->str + from, "password=")) != NULL;)
    {
      gsize start = (gsize) (pw - out->str) + 9;
      gsize len = strcspn (out->str + start, "&");
      g_string_erase (out, (gssize) start, (gssize) len);
      g_string_insert (out, (gssize) start, "***");
      from = start + 3;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The passwords of a store URI as written: user:PASSWORD@ and every
 * password=... of the query (what vpa_fleet_store_uri_redact hides). */
static GPtrArray *
uri_passwords (const char *store)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  const char *scheme_end = strstr (store, "://");
  const char *auth, *auth_end, *at, *colon, *pw;

  if (scheme_end == NULL)
    return out;
  auth = scheme_end + 3;
  auth_end = auth + strcspn (auth, "/?");
  at = memchr (auth, '@', (gsize) (auth_end - auth));
  colon = at != NULL ? memchr (auth, ':', (gsize) (at - auth)) : NULL;
  if (colon != NULL && at > colon + 1)
    g_ptr_array_add (out, g_strndup (colon + 1, (gsize) (at - colon - 1)));
  for (const char *from = store; (pw = strstr (from, "password=")) != NULL;)
    {
      gsize len = strcspn (pw + 9, "&");
      if (len > 0)
        g_ptr_array_add (out, g_strndup (pw + 9, len));
      from = pw + 9 + len;
    }
  return out;
}

char *
vpa_fleet_store_message_redact (const char *message, const char *store)
{
  g_autoptr (GString) out = g_string_new (message);
  g_autofree char *uri = vpa_fleet_store_uri_redact (store);
  g_autoptr (GPtrArray) passwords = uri_passwords (store);

  g_return_val_if_fail (message != NULL && store != NULL, NULL);

  if (store[0] != '\0')
    g_string_replace (out, store, uri, 0);
  for (guint i = 0; i < passwords->len; i++)
    {
      const char *raw = passwords->pdata[i];
      g_autofree char *decoded = g_uri_unescape_string (raw, NULL);

      g_string_replace (out, raw, "***", 0);
      if (decoded != NULL && decoded[0] != '\0')
        g_string_replace (out, decoded, "***", 0);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

VpaFleetStore *
vpa_fleet_store_open (const char *store, VpaFleetOpenMode mode, GError **error)
{
  g_autofree char *uri = NULL;
  const char *colon;

  g_return_val_if_fail (store != NULL, NULL);

  uri = vpa_fleet_store_uri_redact (store);
  if (store[0] == '\0')
    {
      g_set_error_literal (error, VPA_ERROR, VPA_ERROR_INVALID,
                           "--store: empty store name");
      return NULL;
    }
  if (g_str_has_prefix (store, "postgresql://") || g_str_has_prefix (store, "postgres://"))
    return vpa_fleet_pg_open (store, uri, mode, error);
  if (g_str_has_prefix (store, "sqlite:"))
    {
      if (!g_str_has_prefix (store, "sqlite:///") || store[10] == '\0')
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "--store: '%s' is not sqlite:///ABS/PATH", uri);
          return NULL;
        }
      return vpa_fleet_sqlite_open (store + 9, uri, mode, error);
    }
  /* Anything that looks like a URI scheme is one we do not know; a
   * path with a colon needs a slash before it ("./a:b"). */
  colon = strchr (store, ':');
  if (colon != NULL && memchr (store, '/', (gsize) (colon - store)) == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "--store: '%s' is neither a file path, sqlite:///ABS/PATH nor postgresql://...",
                   uri);
      return NULL;
    }
  return vpa_fleet_sqlite_open (store, uri, mode, error);
}

void
vpa_fleet_store_close (VpaFleetStore *store)
{
  if (store == NULL)
    return;
  store->ops->close (store);
}

gboolean
vpa_fleet_store_sync_host (VpaFleetStore *store, const VpaFleetHostData *data,
                           GError **error)
{
  g_return_val_if_fail (store != NULL && data != NULL, FALSE);

  if (!vpa_fleet_host_name_valid (data->name, error))
    return FALSE;
  for (guint i = 0; i < data->devices->len; i++)
    {
      const VpaFleetDevice *dev = &g_array_index (data->devices, VpaFleetDevice, i);
      gsize len = strlen (dev->tags);
      char addr[VPA_ADDR_BUFLEN];

      if (len > VPA_FLEET_TAGS_MAX)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "host '%s': device %s: tags of %" G_GSIZE_FORMAT
                       " bytes exceed the fleet store's limit of %d (its [device-spec] tags)",
                       data->name, vpa_addr_format (dev->addr, addr), len, VPA_FLEET_TAGS_MAX);
          return FALSE;
        }
    }
  return store->ops->sync_host (store, data, error);
}

static gint
pool_output_cmp (gconstpointer pa, gconstpointer pb)
{
  const VpaPool *a = *(VpaPool *const *) pa;
  const VpaPool *b = *(VpaPool *const *) pb;
  gint c;

  if ((c = strcmp (a->host, b->host)) != 0 ||
      (c = strcmp (a->vendor_id, b->vendor_id)) != 0 ||
      (c = strcmp (a->product_id, b->product_id)) != 0)
    return c;
  if (a->dev_type != b->dev_type)
    return a->dev_type < b->dev_type ? -1 : 1;
  if ((c = vpa_pools_null_last_cmp (a->numa_node, b->numa_node)) != 0 ||
      (c = vpa_pools_null_last_cmp (a->socket, b->socket)) != 0)
    return c;
  /* Tag sets pair by pair, a prefix first: the order vpa_pools_generate()
   * gives them, which a comparison of the JSON strings does not. */
  return vpa_pools_tags_cmp (a->tags, b->tags);
}

GPtrArray *
vpa_fleet_store_query_pools (VpaFleetStore *store, const char *host, GError **error)
{
  GPtrArray *pools;

  g_return_val_if_fail (store != NULL, NULL);

  if (host != NULL && !vpa_fleet_host_name_valid (host, error))
    return NULL;
  pools = store->ops->query_pools (store, host, error);
  /* The SQL ORDER BY decides all but the order of tag sets of one
   * (vendor, product, type, node), which follows the in-process pools. */
  if (pools != NULL)
    g_ptr_array_sort (pools, pool_output_cmp);
  return pools;
}

GPtrArray *
vpa_fleet_store_load_hosts (VpaFleetStore *store, guint flags, GError **error)
{
  g_return_val_if_fail (store != NULL, NULL);

  return store->ops->load_hosts (store, flags, error);
}
