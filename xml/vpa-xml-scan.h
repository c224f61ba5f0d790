/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One forward pass over the markup of a document's bytes, before any
 * parser sees them: what the pre-scans that bound libxml2's work
 * (vpa_xml_prescan, the reduced reading's census) count. Comments, CDATA
 * sections, processing instructions, declarations and end tags are
 * passed over; start tags are returned with their attributes.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  const char *pos;  /* where the scan stands */
  const char *stop; /* the document's end */
  /* end tags passed over before the start tag last returned */
  guint end_tags;
  /* when not NULL, gsize offsets from base of the text of each comment
   * that misleads libxml2's push parser (vpa_xml_scan_comment_misleads) */
  GArray *misleading;
  const char *base;
} VpaXmlScan;

/* A scan of [buf, buf + len); misleading as VpaXmlScan says, or NULL. */
void vpa_xml_scan_init (VpaXmlScan *scan, const char *buf, gsize len, GArray *misleading);

/* The next start tag's '<' ('<' then anything but '!', '?', '/'), its
 * attributes (every '=' outside a quoted value) in *n_attrs; pos then
 * stands past its '>' (or at stop). NULL at the end of the bytes. */
const char *vpa_xml_scan_next (VpaXmlScan *scan, guint *n_attrs);

/* A comment whose text (after "<!--") starts with ">" or "->" ("<!-->",
 * "<!--->") is well-formed, but libxml2 2.9's push parser, which its
 * streaming reader is built on, takes the "-->" it overlaps for the
 * comment's end when the comment stands outside the root element and
 * runs past the first chunk the reader gives it, and then refuses the
 * document. */
gboolean vpa_xml_scan_comment_misleads (const char *text, const char *stop);

/* The line (from 1) of p in buf, for messages. */
guint vpa_xml_scan_line (const char *buf, const char *p);

G_END_DECLS
