/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Spec dicts (vpa-spec.h).
 */
#include "vpa-spec.h"

#include <string.h>

VpaSpecPair *
vpa_spec_pair_new (const char *key, const char *value)
{
  VpaSpecPair *pair = g_new0 (VpaSpecPair, 1);
  pair->key = g_strdup (key);
  pair->value = g_strdup (value);
  return pair;
}

void
vpa_spec_pair_free (VpaSpecPair *pair)
{
  if (pair == NULL)
    return;
  g_free (pair->key);
  g_free (pair->value);
  g_free (pair);
}

VpaSpec *
vpa_spec_new (void)
{
  VpaSpec *spec = g_new0 (VpaSpec, 1);
  spec->pairs = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_spec_pair_free);
  return spec;
}

void
vpa_spec_free (VpaSpec *spec)
{
  if (spec == NULL)
    return;
  g_ptr_array_unref (spec->pairs);
  g_free (spec);
}

static VpaSpecPair *
spec_find (const VpaSpec *spec, const char *key)
{
  for (guint i = 0; i < spec->pairs->len; i++)
    {
      VpaSpecPair *pair = g_ptr_array_index (spec->pairs, i);
      if (strcmp (pair->key, key) == 0)
        return pair;
    }
  return NULL;
}

void
vpa_spec_set (VpaSpec *spec, const char *key, const char *value)
{
  VpaSpecPair *pair;

  g_return_if_fail (spec != NULL && key != NULL);
  pair = spec_find (spec, key);
  if (pair == NULL)
    {
      g_ptr_array_add (spec->pairs, vpa_spec_pair_new (key, value));
      return;
    }
  g_free (pair->value);
  pair->value = g_strdup (value);
}

const char *
vpa_spec_get (const VpaSpec *spec, const char *key, gboolean *present)
{
  VpaSpecPair *pair;

  g_return_val_if_fail (spec != NULL && key != NULL, NULL);
  pair = spec_find (spec, key);
  if (present != NULL)
    *present = pair != NULL;
  return pair == NULL ? NULL : pair->value;
}

gboolean
vpa_spec_value_match (const char *spec_value, const char *dev_value)
{
  if (spec_value == NULL || dev_value == NULL)
    return spec_value == dev_value;
  /* Nova lowercases both strings; every value we compare is ASCII. */
  return g_ascii_strcasecmp (spec_value, dev_value) == 0;
}
