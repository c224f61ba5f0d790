/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Nova's spec dicts: the key/value pairs a device spec tags devices with
 * and a request asks for (docs/nova.md). The model every layer reads;
 * the configuration builds them (vpa-config.h).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One key/value pair of a Nova-style spec dict; value NULL is None. */
typedef struct {
  char *key;
  char *value;
} VpaSpecPair;

VpaSpecPair *vpa_spec_pair_new (const char *key, const char *value);
void vpa_spec_pair_free (VpaSpecPair *pair);

/* A spec dict: its pairs are ANDed. A request carries several, ORed. */
typedef struct {
  GPtrArray *pairs; /* VpaSpecPair*, in insertion order */
} VpaSpec;

VpaSpec *vpa_spec_new (void);
void vpa_spec_free (VpaSpec *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaSpec, vpa_spec_free)
/* Adds or replaces key; value may be NULL (None). */
void vpa_spec_set (VpaSpec *spec, const char *key, const char *value);
/* The value for key; *present tells a NULL value from an absent key. */
const char *vpa_spec_get (const VpaSpec *spec, const char *key, gboolean *present);

/* Nova's pci_device_prop_match for one value pair: case-insensitive for
 * strings, NULL matches only NULL. */
gboolean vpa_spec_value_match (const char *spec_value, const char *dev_value);

G_END_DECLS
