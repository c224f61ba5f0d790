/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-output.h"
#include "vpa-pcie.h"

#include <string.h>

/* The keys the pools were grouped by (the default when there are none). */
static VpaPoolKeys
pools_keys (GArray *pools)
{
  if (pools->len == 0)
    return VPA_POOL_KEYS_DEFAULT | VPA_POOL_KEY_SOCKET;
  return g_array_index (pools, VpaPool, 0).keys;
}

/* ------------------------------------------------------------------ */
/* Text                                                                */
/* ------------------------------------------------------------------ */

enum { COL_HOST,
       COL_VENDOR,
       COL_PRODUCT,
       COL_TYPE,
       COL_NUMA,
       COL_SOCKET,
       COL_TAGS,
       COL_PF,
       COL_PCIE_ROOT,
       COL_PCIE_SWITCH,
       COL_TOTAL,
       COL_FREE,
       COL_USED,
       COL_BLOCKED,
       COL_RESERVED,
       COL_LAST };

static const struct {
  const char *title;
  VpaPoolKeys key; /* 0: always shown */
} columns[] = {
  { "HOST", VPA_POOL_KEY_HOST },
  { "VENDOR", VPA_POOL_KEY_VENDOR },
  { "PRODUCT", VPA_POOL_KEY_PRODUCT },
  { "TYPE", VPA_POOL_KEY_DEV_TYPE },
  { "NUMA", VPA_POOL_KEY_NUMA_NODE },
  { "SOCKET", VPA_POOL_KEY_SOCKET },
  { "TAGS", VPA_POOL_KEY_TAGS },
  { "PF", VPA_POOL_KEY_PF },
  { "PCIE-ROOT", VPA_POOL_KEY_PCIE_ROOT },
  { "PCIE-SWITCH", VPA_POOL_KEY_PCIE_SWITCH },
  { "TOTAL", 0 },
  { "FREE", 0 },
  { "USED", 0 },
  { "BLOCKED", 0 },
  { "RESERVED", 0 },
};
G_STATIC_ASSERT (G_N_ELEMENTS (columns) == COL_LAST);

static char *
id_or_dash (gint v)
{
  return v < 0 ? g_strdup ("-") : g_strdup_printf ("%d", v);
}

char *
vpa_output_tags_text (GPtrArray *tags)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; tags != NULL && i < tags->len; i++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (tags, i);
      g_string_append_printf (s, "%s%s=%s", i ? "," : "", pair->key,
                              pair->value != NULL ? pair->value : "");
    }
  if (s->len == 0)
    g_string_append_c (s, '-');
  return g_string_free (s, FALSE);
}

static char **
pool_row (const VpaConfig *config, const VpaPool *p)
{
  char **row = g_new0 (char *, COL_LAST + 1);

  row[COL_HOST] = g_strdup (p->host != NULL ? p->host : "-");
  row[COL_VENDOR] = g_strdup (p->vendor_id);
  row[COL_PRODUCT] = g_strdup (p->product_id);
  row[COL_TYPE] = g_strdup (vpa_dev_type_to_string (p->dev_type));
  row[COL_NUMA] = id_or_dash (p->numa_node);
  row[COL_SOCKET] = id_or_dash (p->socket);
  row[COL_TAGS] = vpa_output_tags_text (vpa_pools_tags (p, config));
  row[COL_PF] = p->pf == VPA_ADDR_NONE ? g_strdup ("-") : vpa_addr_to_string (p->pf);
  row[COL_PCIE_ROOT] =
    p->pcie_root == VPA_ADDR_NONE ? g_strdup ("-") : vpa_pcie_root_name (p->pcie_root);
  row[COL_PCIE_SWITCH] =
    p->pcie_switch == VPA_ADDR_NONE ? g_strdup ("-") : vpa_addr_to_string (p->pcie_switch);
  row[COL_TOTAL] = g_strdup_printf ("%u", p->total);
  row[COL_FREE] = g_strdup_printf ("%u", p->free);
  row[COL_USED] = g_strdup_printf ("%u", p->used);
  row[COL_BLOCKED] = g_strdup_printf ("%u", p->blocked);
  row[COL_RESERVED] = g_strdup_printf ("%u", p->reserved);
  return row;
}

static void
append_row (GString *out, char *const *row, guint n_cols, const gboolean *shown,
            const guint *width, guint right_from)
{
  gsize start = out->len;
  gboolean first = TRUE;

  for (guint c = 0; c < n_cols; c++)
    {
      gint pad;

      if (shown != NULL && !shown[c])
        continue;
      if (!first)
        g_string_append (out, "  ");
      first = FALSE;
      pad = (gint) width[c] - (gint) g_utf8_strlen (row[c], -1);
      if (c >= right_from)
        {
          g_string_append_printf (out, "%*s%s", MAX (pad, 0), "", row[c]);
        }
      else
        {
          g_string_append_printf (out, "%s%*s", row[c], MAX (pad, 0), "");
        }
    }
  while (out->len > start && out->str[out->len - 1] == ' ')
    g_string_truncate (out, out->len - 1);
  g_string_append_c (out, '\n');
}

char *
vpa_output_table_text (GPtrArray *rows, guint n_cols, const gboolean *shown, guint right_from)
{
  g_autofree guint *width = g_new0 (guint, n_cols);
  GString *out = g_string_new (NULL);

  /* A cell may quote a name the user chose (a domain's, a tag's): its
   * control characters would break the table and the terminal. */
  for (guint r = 0; r < rows->len; r++)
    {
      for (guint c = 0; c < n_cols; c++)
        {
          char **cell = &((char **) rows->pdata[r])[c];
          char *escaped = vpa_message_escape (*cell);
          g_free (*cell);
          *cell = escaped;
        }
    }
  for (guint r = 0; r < rows->len; r++)
    {
      for (guint c = 0; c < n_cols; c++)
        width[c] = MAX (width[c], (guint) g_utf8_strlen (((char **) rows->pdata[r])[c], -1));
    }
  for (guint r = 0; r < rows->len; r++)
    append_row (out, rows->pdata[r], n_cols, shown, width, right_from);
  return g_string_free (out, FALSE);
}

/* The key columns' order: those group_by names, as named, then the other
 * key columns in their default order; the counts stay last. */
static void
column_order (const char *group_by, guint *order)
{
  g_auto (GStrv) names = g_strsplit (group_by, ",", -1);
  gboolean used[COL_TOTAL] = { FALSE };
  guint n = 0;

  for (guint i = 0; names[i] != NULL; i++)
    {
      VpaPoolKeys key = vpa_pools_key_from_name (g_strstrip (names[i]));
      for (guint c = 0; c < COL_TOTAL; c++)
        {
          if (key != 0 && columns[c].key == key && !used[c])
            {
              used[c] = TRUE;
              order[n++] = c;
            }
        }
    }
  for (guint c = 0; c < COL_TOTAL; c++)
    {
      if (!used[c])
        order[n++] = c;
    }
  for (guint c = COL_TOTAL; c < COL_LAST; c++)
    order[c] = c;
}

/* Reorders every row's key columns (and shown) by column_order; the
 * last row is the totals line when there is one. */
static void
permute_columns (GPtrArray *rows, gboolean *shown, const char *group_by, gboolean totals_line)
{
  guint order[COL_LAST];
  gboolean was[COL_LAST];
  gint total_col = -1;

  column_order (group_by, order);
  memcpy (was, shown, sizeof was);
  for (guint c = 0; c < COL_LAST; c++)
    shown[c] = was[order[c]];
  for (guint r = 0; r < rows->len; r++)
    {
      char **row = rows->pdata[r];
      char *old[COL_LAST];

      memcpy (old, row, sizeof old);
      for (guint c = 0; c < COL_LAST; c++)
        row[c] = old[order[c]];
    }
  /* "total" labels the first shown column of the totals line */
  if (totals_line && rows->len > 1)
    {
      char **totals = rows->pdata[rows->len - 1];
      for (guint c = 0; c < COL_TOTAL; c++)
        {
          if (g_strcmp0 (totals[c], "total") == 0)
            {
              g_free (totals[c]);
              totals[c] = g_strdup ("");
            }
        }
      for (guint c = 0; c < COL_TOTAL && total_col < 0; c++)
        {
          if (shown[c])
            total_col = (gint) c;
        }
      if (total_col >= 0)
        {
          g_free (totals[total_col]);
          totals[total_col] = g_strdup ("total");
        }
    }
}

char *
vpa_output_pools_table (const VpaConfig *config, const VpaPool *const *pools, guint n_pools,
                        VpaPoolKeys keys, const char *group_by)
{
  /* A fleet's pools are of many hosts: their sum is no one's. */
  gboolean totals_line = (keys & VPA_POOL_KEY_HOST) == 0;
  gboolean shown[COL_LAST];
  guint sums[COL_LAST - COL_TOTAL] = { 0 };
  guint first = COL_TOTAL;
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  char **header = g_new0 (char *, COL_LAST + 1);
  char **totals;

  for (guint c = 0; c < COL_LAST; c++)
    {
      shown[c] = columns[c].key == 0 || (keys & columns[c].key) != 0;
      header[c] = g_strdup (columns[c].title);
      if (c < first && shown[c])
        first = c;
    }
  g_ptr_array_add (rows, header);
  for (guint p = 0; p < n_pools; p++)
    {
      const VpaPool *pool = pools[p];
      sums[0] += pool->total;
      sums[1] += pool->free;
      sums[2] += pool->used;
      sums[3] += pool->blocked;
      sums[4] += pool->reserved;
      g_ptr_array_add (rows, pool_row (config, pool));
    }
  if (totals_line)
    {
      totals = g_new0 (char *, COL_LAST + 1);
      for (guint c = 0; c < COL_TOTAL; c++)
        totals[c] = g_strdup (c == first ? "total" : "");
      for (guint c = COL_TOTAL; c < COL_LAST; c++)
        totals[c] = g_strdup_printf ("%u", sums[c - COL_TOTAL]);
      g_ptr_array_add (rows, totals);
    }
  if (group_by != NULL)
    permute_columns (rows, shown, group_by, totals_line);
  /* counts right-aligned, the rest left-aligned */
  return vpa_output_table_text (rows, COL_LAST, shown, COL_TOTAL);
}

/* The pools of a GArray as the pointers vpa_output_pools_table takes. */
static const VpaPool **
pools_pointers (GArray *pools)
{
  const VpaPool **out = g_new (const VpaPool *, MAX (pools->len, 1));

  for (guint p = 0; p < pools->len; p++)
    out[p] = &g_array_index (pools, VpaPool, p);
  return out;
}

char *
vpa_output_pools_text_ordered (const VpaInventory *inv, GArray *pools, const char *group_by)
{
  g_autofree const VpaPool **ptrs = NULL;

  g_return_val_if_fail (inv != NULL && pools != NULL, NULL);

  ptrs = pools_pointers (pools);
  return vpa_output_pools_table (inv->config, ptrs, pools->len, pools_keys (pools), group_by);
}

char *
vpa_output_pools_text (const VpaInventory *inv, GArray *pools)
{
  return vpa_output_pools_text_ordered (inv, pools, NULL);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

void
vpa_output_json_add_int_or_null (JsonBuilder *b, const char *key, gint v)
{
  json_builder_set_member_name (b, key);
  if (v < 0)
    {
      json_builder_add_null_value (b);
    }
  else
    {
      json_builder_add_int_value (b, v);
    }
}

void
vpa_output_json_add_string_or_null (JsonBuilder *b, const char *key, const char *value)
{
  json_builder_set_member_name (b, key);
  if (value == NULL)
    {
      json_builder_add_null_value (b);
    }
  else
    {
      json_builder_add_string_value (b, value);
    }
}

void
vpa_output_json_add_tags (JsonBuilder *b, GPtrArray *tags)
{
  json_builder_set_member_name (b, "tags");
  json_builder_begin_object (b);
  for (guint i = 0; tags != NULL && i < tags->len; i++)
    {
      const VpaSpecPair *pair = g_ptr_array_index (tags, i);
      vpa_output_json_add_string_or_null (b, pair->key, pair->value);
    }
  json_builder_end_object (b);
}

void
vpa_output_pool_json_add (JsonBuilder *b, const VpaConfig *config, const VpaPool *pool)
{
  VpaPoolKeys k = pool->keys;

  json_builder_begin_object (b);
  if (k & VPA_POOL_KEY_HOST)
    vpa_output_json_add_string_or_null (b, "host", pool->host);
  if (k & VPA_POOL_KEY_VENDOR)
    {
      json_builder_set_member_name (b, "vendor_id");
      json_builder_add_string_value (b, pool->vendor_id);
    }
  if (k & VPA_POOL_KEY_PRODUCT)
    {
      json_builder_set_member_name (b, "product_id");
      json_builder_add_string_value (b, pool->product_id);
    }
  if (k & VPA_POOL_KEY_NUMA_NODE)
    vpa_output_json_add_int_or_null (b, "numa_node", pool->numa_node);
  if (k & VPA_POOL_KEY_SOCKET)
    vpa_output_json_add_int_or_null (b, "socket", pool->socket);
  if (k & VPA_POOL_KEY_DEV_TYPE)
    {
      json_builder_set_member_name (b, "dev_type");
      json_builder_add_string_value (b, vpa_dev_type_to_string (pool->dev_type));
    }
  if (k & VPA_POOL_KEY_TAGS)
    vpa_output_json_add_tags (b, vpa_pools_tags (pool, config));
  if (k & VPA_POOL_KEY_PF)
    {
      char buf[VPA_ADDR_BUFLEN];
      /* Nova's (2023.1+) name for the PF address of VFs, own address otherwise */
      json_builder_set_member_name (b, "address");
      json_builder_add_string_value (b, vpa_addr_format (pool->pf, buf));
    }
  if (k & VPA_POOL_KEY_PCIE_ROOT)
    {
      g_autofree char *root =
        pool->pcie_root != VPA_ADDR_NONE ? vpa_pcie_root_name (pool->pcie_root) : NULL;
      json_builder_set_member_name (b, "pcie_root");
      if (root != NULL)
        {
          json_builder_add_string_value (b, root);
        }
      else
        {
          json_builder_add_null_value (b);
        }
    }
  if (k & VPA_POOL_KEY_PCIE_SWITCH)
    {
      char buf[VPA_ADDR_BUFLEN];
      json_builder_set_member_name (b, "pcie_switch");
      if (pool->pcie_switch != VPA_ADDR_NONE)
        {
          json_builder_add_string_value (b, vpa_addr_format (pool->pcie_switch, buf));
        }
      else
        {
          json_builder_add_null_value (b);
        }
    }
  json_builder_set_member_name (b, "total");
  json_builder_add_int_value (b, pool->total);
  json_builder_set_member_name (b, "free");
  json_builder_add_int_value (b, pool->free);
  json_builder_set_member_name (b, "used");
  json_builder_add_int_value (b, pool->used);
  json_builder_set_member_name (b, "blocked");
  json_builder_add_int_value (b, pool->blocked);
  json_builder_set_member_name (b, "reserved");
  json_builder_add_int_value (b, pool->reserved);
  json_builder_end_object (b);
}

void
vpa_output_pools_json_add (JsonBuilder *b, const VpaConfig *config, const VpaPool *const *pools,
                           guint n_pools)
{
  json_builder_set_member_name (b, "pools");
  json_builder_begin_array (b);
  for (guint p = 0; p < n_pools; p++)
    vpa_output_pool_json_add (b, config, pools[p]);
  json_builder_end_array (b);
}

char *
vpa_output_pools_json_list (const VpaConfig *config, const VpaPool *const *pools, guint n_pools)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  vpa_output_pools_json_add (b, config, pools, n_pools);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}

char *
vpa_output_pools_json (const VpaInventory *inv, GArray *pools)
{
  g_autofree const VpaPool **ptrs = NULL;

  g_return_val_if_fail (inv != NULL && pools != NULL, NULL);

  ptrs = pools_pointers (pools);
  return vpa_output_pools_json_list (inv->config, ptrs, pools->len);
}

/* ------------------------------------------------------------------ */
/* JSON printing: "key": value with two-space indentation, as Python's
 * json.dumps(indent=2) writes it (JsonGenerator puts a space before the
 * colon and pads empty objects). UTF-8 is kept as it is.              */
/* ------------------------------------------------------------------ */

static void
json_append_string (GString *out, const char *s)
{
  g_string_append_c (out, '"');
  for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++)
    {
      switch (*p)
        {
        case '"':
          g_string_append (out, "\\\"");
          break;
        case '\\':
          g_string_append (out, "\\\\");
          break;
        case '\n':
          g_string_append (out, "\\n");
          break;
        case '\t':
          g_string_append (out, "\\t");
          break;
        case '\r':
          g_string_append (out, "\\r");
          break;
        default:
          if (*p < 0x20)
            {
              g_string_append_printf (out, "\\u%04x", *p);
            }
          else
            {
              g_string_append_c (out, (char) *p);
            }
        }
    }
  g_string_append_c (out, '"');
}

static void
json_append_value (GString *out, JsonNode *node)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  double d;

  switch (json_node_get_value_type (node))
    {
    case G_TYPE_INT64:
      g_string_append_printf (out, "%" G_GINT64_FORMAT, json_node_get_int (node));
      break;
    case G_TYPE_BOOLEAN:
      g_string_append (out, json_node_get_boolean (node) ? "true" : "false");
      break;
    case G_TYPE_DOUBLE:
      d = json_node_get_double (node);
      g_ascii_dtostr (buf, sizeof (buf), d);
      g_string_append (out, buf);
      if (strpbrk (buf, ".eEn") == NULL)
        g_string_append (out, ".0");
      break;
    case G_TYPE_STRING:
    default:
      json_append_string (out, json_node_get_string (node));
      break;
    }
}

static void
json_append_node (GString *out, JsonNode *node, guint depth)
{
  g_autoptr (GList) members = NULL;
  guint n;

  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_NULL:
      g_string_append (out, "null");
      return;
    case JSON_NODE_VALUE:
      json_append_value (out, node);
      return;
    case JSON_NODE_ARRAY:
      n = json_array_get_length (json_node_get_array (node));
      if (n == 0)
        {
          g_string_append (out, "[]");
          return;
        }
      g_string_append (out, "[\n");
      for (guint i = 0; i < n; i++)
        {
          g_string_append_printf (out, "%*s", (int) (depth + 1) * 2, "");
          json_append_node (out, json_array_get_element (json_node_get_array (node), i),
                            depth + 1);
          g_string_append (out, i + 1 < n ? ",\n" : "\n");
        }
      g_string_append_printf (out, "%*s]", (int) depth * 2, "");
      return;
    case JSON_NODE_OBJECT:
    default:
      members = json_object_get_members (json_node_get_object (node));
      if (members == NULL)
        {
          g_string_append (out, "{}");
          return;
        }
      g_string_append (out, "{\n");
      for (GList *l = members; l != NULL; l = l->next)
        {
          g_string_append_printf (out, "%*s", (int) (depth + 1) * 2, "");
          json_append_string (out, l->data);
          g_string_append (out, ": ");
          json_append_node (out, json_object_get_member (json_node_get_object (node), l->data),
                            depth + 1);
          g_string_append (out, l->next != NULL ? ",\n" : "\n");
        }
      g_string_append_printf (out, "%*s}", (int) depth * 2, "");
      return;
    }
}

char *
vpa_output_json_to_string (JsonNode *root)
{
  GString *out = g_string_new (NULL);

  g_return_val_if_fail (root != NULL, NULL);
  json_append_node (out, root, 0);
  g_string_append_c (out, '\n');
  return g_string_free (out, FALSE);
}

/* ------------------------------------------------------------------ */

char *
vpa_output_traits_text (char **traits)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; traits != NULL && traits[i] != NULL; i++)
    g_string_append_printf (out, "%s\n", traits[i]);
  return g_string_free (out, FALSE);
}

/* ------------------------------------------------------------------ */
/* Nodes                                                               */
/* ------------------------------------------------------------------ */

static char *
pages_text (const VpaNodeCap *nc)
{
  GString *s = g_string_new (NULL);

  for (guint p = 0; p < nc->pages->len; p++)
    {
      const VpaNodePages *np = &g_array_index (nc->pages, VpaNodePages, p);
      g_string_append_printf (s, "%s%" G_GUINT64_FORMAT "K:%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                              s->len > 0 ? " " : "", np->size_kib, np->avail, np->total);
    }
  if (s->len == 0)
    g_string_append (s, "-");
  return g_string_free (s, FALSE);
}

char *
vpa_output_nodes_text (const VpaCapacity *cap)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  const char *const header[] = { "node", "socket", "cpus", "shared", "dedicated", "dedicated-used",
                                 "memory-kib", "memory-free-kib", "pages-free/total", NULL };

  g_ptr_array_add (rows, g_strdupv ((char **) header));
  for (guint i = 0; i < cap->nodes->len; i++)
    {
      const VpaNodeCap *nc = g_ptr_array_index (cap->nodes, i);
      char **row = g_new0 (char *, 10);

      row[0] = g_strdup_printf ("%d", nc->node);
      row[1] = nc->socket >= 0 ? g_strdup_printf ("%d", nc->socket) : g_strdup ("-");
      row[2] = g_strdup_printf ("%u", nc->n_cpus);
      row[3] = g_strdup_printf ("%u", nc->shared->len);
      row[4] = g_strdup_printf ("%u", nc->dedicated->len);
      row[5] = g_strdup_printf ("%u", nc->dedicated->len - nc->free_dedicated->len);
      row[6] = g_strdup_printf ("%" G_GUINT64_FORMAT, nc->memory_kib);
      row[7] = g_strdup_printf ("%" G_GUINT64_FORMAT, nc->avail_kib);
      row[8] = pages_text (nc);
      g_ptr_array_add (rows, row);
    }
  return vpa_output_table_text (rows, 9, NULL, 2);
}

char *
vpa_output_nodes_json (const VpaCapacity *cap)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "nodes");
  json_builder_begin_array (b);
  for (guint i = 0; i < cap->nodes->len; i++)
    {
      const VpaNodeCap *nc = g_ptr_array_index (cap->nodes, i);

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "node");
      json_builder_add_int_value (b, nc->node);
      vpa_output_json_add_int_or_null (b, "socket", nc->socket);
      json_builder_set_member_name (b, "cpus");
      json_builder_add_int_value (b, nc->n_cpus);
      json_builder_set_member_name (b, "shared");
      json_builder_add_int_value (b, nc->shared->len);
      json_builder_set_member_name (b, "dedicated");
      json_builder_add_int_value (b, nc->dedicated->len);
      json_builder_set_member_name (b, "dedicated_used");
      json_builder_add_int_value (b, nc->dedicated->len - nc->free_dedicated->len);
      json_builder_set_member_name (b, "memory_kib");
      json_builder_add_int_value (b, (gint64) nc->memory_kib);
      json_builder_set_member_name (b, "memory_free_kib");
      json_builder_add_int_value (b, (gint64) nc->avail_kib);
      json_builder_set_member_name (b, "pages");
      json_builder_begin_array (b);
      for (guint p = 0; p < nc->pages->len; p++)
        {
          const VpaNodePages *np = &g_array_index (nc->pages, VpaNodePages, p);
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "size_kib");
          json_builder_add_int_value (b, (gint64) np->size_kib);
          json_builder_set_member_name (b, "total");
          json_builder_add_int_value (b, (gint64) np->total);
          json_builder_set_member_name (b, "reserved");
          json_builder_add_int_value (b, (gint64) np->reserved);
          json_builder_set_member_name (b, "used");
          json_builder_add_int_value (b, (gint64) np->claimed);
          json_builder_set_member_name (b, "free");
          json_builder_add_int_value (b, (gint64) np->avail);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return vpa_output_json_to_string (root);
}
