/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Text and JSON formatting of pools and traits for the front ends.
 */
#pragma once

#include <json-glib/json-glib.h>

#include "vpa-pools.h"
#include "vpa-capacity.h"

G_BEGIN_DECLS

/* The one table of pools, this host's or a fleet's: a header line, one
 * line per pool and, but for a fleet's pools (VPA_POOL_KEY_HOST), a
 * totals line. Only the columns of keys appear (HOST first); unknown
 * NUMA/socket print as "-". group_by orders the key columns as
 * vpa_output_pools_text_ordered says (NULL: the default order). config
 * holds the tag sets of pools without their own (NULL for a fleet's). */
char *vpa_output_pools_table (const VpaConfig *config, const VpaPool *const *pools,
                              guint n_pools, VpaPoolKeys keys, const char *group_by);

/* This host's pools as that table (keys: the pools', or the default). */
char *vpa_output_pools_text (const VpaInventory *inv, GArray *pools);
/* The same with the key columns in the order --group-by names them
 * (group_by NULL: the default order); a key grouped but not named (the
 * socket of a NUMA node) follows in the default order. */
char *vpa_output_pools_text_ordered (const VpaInventory *inv, GArray *pools,
                                     const char *group_by);

/* rows (each an array of n_cols strings, the header first) as an aligned
 * table, a line a row: two spaces between columns, the columns from
 * right_from on right-aligned, the others left-aligned, no trailing
 * blanks. shown (n_cols flags; NULL: all) leaves columns out. */
char *vpa_output_table_text (GPtrArray *rows, guint n_cols, const gboolean *shown,
                             guint right_from);

/* {"pools": [{"host": .., "vendor_id": .., "product_id": .., "numa_node": ..,
 * "socket": .., "dev_type": .., "tags": {..}, "address": .., "total": ..,
 * "free": .., "used": .., "blocked": ..}, ...]}: keys not grouped are left
 * out ("host" is a fleet's), unknown NUMA/socket are null. Two-space
 * indentation, trailing newline. config as for vpa_output_pools_table. */
char *vpa_output_pools_json_list (const VpaConfig *config, const VpaPool *const *pools,
                                  guint n_pools);
/* This host's pools as that JSON. */
char *vpa_output_pools_json (const VpaInventory *inv, GArray *pools);

/* Adds the "pools" member (that array) to builder's object, for front
 * ends that add members of their own. */
void vpa_output_pools_json_add (JsonBuilder *builder, const VpaConfig *config,
                                const VpaPool *const *pools, guint n_pools);
/* Adds one pool object to builder (inside an array). */
void vpa_output_pool_json_add (JsonBuilder *builder, const VpaConfig *config,
                               const VpaPool *pool);

/* A tag set (VpaSpecPair*) as "key=value,key=value", or "-" when empty:
 * the TAGS cell of every table. */
char *vpa_output_tags_text (GPtrArray *tags);
/* "tags": {"key": "value", ...} (a value NULL is null). */
void vpa_output_json_add_tags (JsonBuilder *builder, GPtrArray *tags);

/* "key": value, or null for an unknown (negative) NUMA node or socket. */
void vpa_output_json_add_int_or_null (JsonBuilder *builder, const char *key, gint value);
/* "key": "value", or null for NULL. */
void vpa_output_json_add_string_or_null (JsonBuilder *builder, const char *key,
                                         const char *value);

/* root as pretty JSON: "key": value, two-space indentation, members in
 * insertion order, a trailing newline. */
char *vpa_output_json_to_string (JsonNode *root);

/* The per-node capacity view (`nodes`): CPUs total / shared /
 * dedicated / dedicated in use, memory total and free, pages free per
 * size. */
char *vpa_output_nodes_text (const VpaCapacity *cap);
/* {"nodes": [{"node": 0, "socket": 0, "cpus": 32, "shared": 8,
 * "dedicated": 24, "dedicated_used": 2, "memory_kib": ..,
 * "memory_free_kib": .., "pages": [{"size_kib": 2048, "total": ..,
 * "reserved": .., "used": .., "free": ..}]}]} */
char *vpa_output_nodes_json (const VpaCapacity *cap);

/* One trait a line. */
char *vpa_output_traits_text (char **traits);

G_END_DECLS
