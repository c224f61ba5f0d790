/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The configuration loader's own helpers, defined in vpa-config.c and
 * shared with the parsers of [alias NAME] (vpa-config-alias.c) and
 * [host] (vpa-config-host.c). Not for other files.
 */
#pragma once

#include "vpa-config.h"

G_BEGIN_DECLS

/* Where a message points: "FILE: [GROUP] KEY='VALUE': reason". */
typedef struct {
  const char *path;
  const char *group;
  const char *key;   /* NULL: the whole group */
  const char *value; /* NULL: the key is missing */
} Loc;

/* Sets VPA_ERROR_INVALID "FILE: [GROUP] KEY='VALUE': reason"; FALSE. */
gboolean vpa_config_loc_error (GError **error, const Loc *loc, const char *fmt, ...)
  G_GNUC_PRINTF (3, 4);
/* The value of loc's key, whitespace-stripped. */
char *vpa_config_get_value (GKeyFile *kf, const Loc *loc, GError **error);
/* An error for the first key of group not in known (NULL-terminated). */
gboolean vpa_config_check_keys (GKeyFile *kf, const Loc *group, const char *const *known,
                                GError **error);
/* Nova's vendor_id/product_id into out, four lowercase hex digits; alias:
 * exactly four digits wanted (the [pci] alias schema). */
gboolean vpa_config_parse_id (const Loc *loc, gboolean alias, char out[8], GError **error);

/* vpa-config-alias.c */
void vpa_config_alias_free (VpaAlias *alias);
/* "NAME" or "NAME:N" (N >= 2, a further spec of the same alias). */
gboolean vpa_config_alias_parse_name (const Loc *loc, const char *rest, char **name,
                                      GError **error);
gboolean vpa_config_alias_parse (VpaConfig *config, GKeyFile *kf, const char *group,
                                 const char *name, GError **error);

/* vpa-config-host.c */
gboolean vpa_config_host_parse (VpaConfig *config, GKeyFile *kf, const char *group,
                                GError **error);

G_END_DECLS
