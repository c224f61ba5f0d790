/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * PCI addresses: a domain:bus:slot.function packed in a VpaAddr, its
 * parser (the one PCI address parser), its formatter and comparisons.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* domain:32 | bus:8 | slot:5 | function:3, in the low 48 bits: libvirt
 * reads a PCI domain as an unsigned int (Intel VMD domains start at
 * 0x10000). VPA_ADDR_NONE, "no address", lies beyond those 48 bits, so
 * no address equals it; test it with VPA_ADDR_IS_VALID, compare with
 * vpa_addr_same, and never print it as an address. */
typedef guint64 VpaAddr;
#define VPA_ADDR_NONE G_MAXUINT64
#define VPA_ADDR_MAX G_GUINT64_CONSTANT (0xffffffffffff)
#define VPA_ADDR_IS_VALID(a) ((a) <= VPA_ADDR_MAX)
#define VPA_ADDR(d, b, s, f)                                \
  ((((guint64) (d)) << 16) | (((guint64) (b) &0xff) << 8) | \
   (((guint64) (s) &0x1f) << 3) | ((guint64) (f) &0x7))
#define VPA_ADDR_DOMAIN(a) ((guint32) ((a) >> 16))
#define VPA_ADDR_BUS(a) ((guint) (((a) >> 8) & 0xff))
#define VPA_ADDR_SLOT(a) ((guint) (((a) >> 3) & 0x1f))
#define VPA_ADDR_FUNCTION(a) ((guint) ((a) &0x7))
/* "ffffffff:ff:1f.7" plus NUL */
#define VPA_ADDR_BUFLEN 20
/* What vpa_addr_format writes for VPA_ADDR_NONE. */
#define VPA_ADDR_NONE_TEXT "(no address)"

/* Parses "0000:81:00.1" (hex fields, the domain up to 32 bits; it may be
 * omitted). */
gboolean vpa_addr_parse (const char *str, VpaAddr *out);
/* Formats as %04x:%02x:%02x.%x into buf, returns buf; an address that
 * is not VPA_ADDR_IS_VALID as VPA_ADDR_NONE_TEXT. */
const char *vpa_addr_format (VpaAddr addr, char buf[VPA_ADDR_BUFLEN]);
char *vpa_addr_to_string (VpaAddr addr);
/* TRUE if a and b are the same address: "no address" is the same as
 * nothing, not even itself (a claim without an address names no
 * device, a device without a PF has no PF to share). */
gboolean vpa_addr_same (VpaAddr a, VpaAddr b);
/* GHashTable functions for keys that point at a VpaAddr. */
guint vpa_addr_hash (gconstpointer p);
gboolean vpa_addr_equal (gconstpointer a, gconstpointer b);

G_END_DECLS
