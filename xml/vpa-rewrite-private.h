/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The rewrite's own state and machinery, shared by its files
 * (vpa-rewrite*.c). Not for other files.
 */
#pragma once

#include "vpa-rewrite.h"
#include "vpa-domain.h"
#include "vpa-guest-topology.h"
#include "vpa-xml.h"

G_BEGIN_DECLS

typedef struct {
  gsize start;     /* '<' of the start tag */
  gsize start_end; /* after its '>' */
  gsize end;       /* after the end tag ('>'), or start_end when empty */
  gsize end_tag;   /* '<' of the end tag, or start_end when empty */
  gsize name_len;  /* the qualified name follows start + 1 */
  gboolean empty;  /* <x/> */
} Span;

typedef struct {
  gsize start, end; /* replaced range of the original */
  char *text;
  guint seq;
} Edit;

/* The elements and attributes a rewrite inserts: an upper bound of how
 * far its output may pass the bounds its input was within. */

typedef VpaXmlGrowth Growth;

typedef struct {
  const char *buf;
  gsize len;
  const char *what;
  GArray *spans;                /* Span, document order of start tags */
  GArray *edits;                /* Edit */
  gboolean newlines;            /* the document puts elements on their own lines */
  char *step;                   /* one level of indentation */
  char dev_quote;               /* quote of attributes in libvirt's elements */
  char vpa_quote;               /* quote of attributes in <vpa:affinity> */
  const VpaGuestTopology *topo; /* NULL: the guest's PCI layout is not ours to write */
  GHashTable *removed;          /* xmlNode* removed by an edit */
  Growth added;                 /* markup the edits insert */
} Rewrite;

typedef struct {
  char *name;          /* qualified */
  GString *attrs;      /* " a='1' b='2'" */
  GPtrArray *children; /* Elem* */
  char *text;          /* character content (escaped already), or NULL */
} Elem;

typedef enum {
  AT_START,
  AT_END,
  AFTER,
} Where;

gboolean vpa_rewrite_scan_spans (Rewrite *rw);
gboolean vpa_rewrite_attach_spans (Rewrite *rw, xmlNode *node, guint *next);
const Span *vpa_rewrite_span_of (xmlNode *node);
void vpa_rewrite_edit_add (Rewrite *rw, gsize start, gsize end, char *text);
void vpa_rewrite_edit_clear (gpointer data);
char *vpa_rewrite_edits_apply (Rewrite *rw, gsize *out_len, GError **error);
char *vpa_rewrite_own_indent (Rewrite *rw, xmlNode *node);
char vpa_rewrite_quote_of (Rewrite *rw, xmlNode *node, char fallback);
void vpa_rewrite_learn_layout (Rewrite *rw, xmlNode *root);
void vpa_rewrite_elem_free (Elem *e);
Elem *vpa_rewrite_elem_new (const char *name, Elem *parent);
void vpa_rewrite_append_attr_value (GString *out, char quote, const char *value);
void vpa_rewrite_elem_attr (Elem *e, char quote, const char *name, const char *value);
void vpa_rewrite_elem_render (Rewrite *rw, const Elem *e, const char *indent, GString *out);
Elem *vpa_rewrite_address_elem (Rewrite *rw, VpaAddr addr, gboolean with_type, Elem *parent);
void vpa_rewrite_insert_children (Rewrite *rw, xmlNode *parent, Where where, xmlNode *after, GPtrArray *elems);
void vpa_rewrite_insert_child (Rewrite *rw, xmlNode *parent, Where where, xmlNode *after, Elem *elem);
void vpa_rewrite_remove_element (Rewrite *rw, xmlNode *node);
void vpa_rewrite_replace_element (Rewrite *rw, xmlNode *node, Elem *elem, const char *indent);
char *vpa_rewrite_user_alias_of (xmlNode *node);
xmlNode *vpa_rewrite_find_affinity (xmlNode *domain);
gboolean vpa_rewrite_check_encoding (xmlDoc *doc, const char *what, GError **error);
gboolean vpa_rewrite_map_document (Rewrite *rw, xmlDoc *doc, GError **error);
void vpa_rewrite_grow (Growth *total, const Growth *more);
VpaDomain *vpa_rewrite_parse_output (const char *out, gsize out_len, const char *what, const Growth *added, GError **error);
const VpaTopoPlacement *vpa_rewrite_placement_of (Rewrite *rw, const char *alias);
Elem *vpa_rewrite_guest_address_elem (Rewrite *rw, guint bus, guint slot, Elem *parent);
Elem *vpa_rewrite_controller_elem (Rewrite *rw, const VpaTopoController *tc);
void vpa_rewrite_topology (Rewrite *rw, xmlNode *devices);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Elem, vpa_rewrite_elem_free)

G_END_DECLS
