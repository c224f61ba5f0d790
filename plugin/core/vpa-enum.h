/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Enum <-> string tables, written once (libvirt's VIR_ENUM_IMPL is the
 * model). In a .c file:
 *
 *   VPA_ENUM_IMPL (vpa_policy, VpaPolicy, VPA_POLICY_LAST,
 *                  "legacy", "required", "preferred", "socket")
 *
 * defines the table vpa_policy_names (checked against the count at
 * compile time), vpa_policy_to_string () (NULL for a value out of range)
 * and vpa_policy_from_string () (FALSE for NULL or an unknown name,
 * *out untouched). VPA_ENUM_TO_STRING defines the table and the first
 * only, for an enum whose names are not all accepted on input.
 */
#pragma once

#include <glib.h>

/* The index of str in names[0..n), or -1 (str NULL or not there). */
gint vpa_enum_lookup (const char *const *names, guint n, const char *str);

#define VPA_ENUM_TO_STRING(prefix, Type, last, ...)              \
  static const char *const prefix##_names[] = { __VA_ARGS__ };   \
  G_STATIC_ASSERT (G_N_ELEMENTS (prefix##_names) == (last));     \
  const char *prefix##_to_string (Type value)                    \
  {                                                              \
    g_return_val_if_fail ((guint) value < (guint) (last), NULL); \
    return prefix##_names[value];                                \
  }

#define VPA_ENUM_IMPL(prefix, Type, last, ...)                      \
  VPA_ENUM_TO_STRING (prefix, Type, last, __VA_ARGS__)              \
  gboolean prefix##_from_string (const char *str, Type *out)        \
  {                                                                 \
    gint i = vpa_enum_lookup (prefix##_names, (guint) (last), str); \
    if (i < 0)                                                      \
      return FALSE;                                                 \
    *out = (Type) i;                                                \
    return TRUE;                                                    \
  }
