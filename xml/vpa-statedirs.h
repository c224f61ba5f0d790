/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Claims read from libvirt's own files, for the qemu hook (which must
 * never call back into the daemon): /run/libvirt/qemu/NAME.xml holds a
 * running domain as <domstatus>, /etc/libvirt/qemu/NAME.xml a defined one
 * as <domain>. Only their PCI devices are read: <hostdev type='pci'>,
 * <interface type='hostdev'>, and the <actual type='hostdev'> libvirt
 * records for a VF it took from a hostdev network.
 */
#pragma once

#include <libxml/tree.h>
#include "vpa-types.h"

G_BEGIN_DECLS

/* Pure: adds to claims (VpaClaim*) the PCI devices of one state file's
 * contents. A <domstatus> root gives running claims, a <domain> root
 * defined ones. A domain named exclude (may be NULL) adds nothing.
 * Errors: VPA_ERROR_INVALID for a document that does not parse or has
 * another root element; claims is then unchanged. */
gboolean vpa_statedirs_parse (const VpaDoc *doc, const char *exclude, GPtrArray *claims,
                              GError **error);

/* The same on a parsed document (whole, or as vpa_state_reduce()
 * builds it). */
gboolean vpa_statedirs_claims (xmlDoc *doc, const char *what, const char *exclude,
                               GPtrArray *claims, GError **error);

/* Reads every "*.xml" directly in each of dirs (NULL-terminated), in
 * name order. A directory that does not exist is skipped (the daemon has
 * not created it yet); a file that vanishes while scanning or does not
 * parse is skipped, so that a daemon writing its files concurrently never
 * makes this fail. Files are opened without following links and without
 * blocking: a symbolic link, a FIFO, a directory, a device node or a
 * socket (none of them libvirt's) is skipped. Errors:
 * VPA_ERROR_ENVIRONMENT when a directory or a file exists but cannot be
 * read, or a regular file is larger than VPA_XML_MAX_DOCUMENT (the
 * caller must not assume there are no claims). Returns a new array of
 * VpaClaim*. */
GPtrArray *vpa_statedirs_load (const char *const *dirs, const char *exclude,
                               GError **error);

/* The same, reading only the files that mention one of the PCI buses
 * (as libvirt writes addresses: bus='0x81'): a check of a few devices
 * needs only the claims on those devices and their relatives, and the
 * caller knows their buses. buses NULL reads every file. */
GPtrArray *vpa_statedirs_load_buses (const char *const *dirs, const char *exclude,
                                     const guint *buses, guint n_buses, GError **error);

/* The general form. */
typedef struct {
  const char *const *dirs; /* NULL-terminated */
  const char *exclude;     /* the domain whose claims are not wanted; may be NULL */
  const guint *buses;      /* NULL: every file; else only those naming one */
  guint n_buses;
  gboolean running_only; /* only <domstatus> files: running domains */
  GPtrArray *skipped;    /* may be NULL: gets one line (char*) per file skipped */
  /* NULL: every file; else only the files that may name one of these
   * addresses (vpa_statedirs_may_name), running or defined, and
   * without the "hostdev"/"cpuset"/"numatune" test: every claim on
   * one of them that reading every file gives is there (more only from
   * a file that test skips, which libvirt never writes: a caller that
   * finds a claim may only be more careful). */
  const VpaAddr *addrs;
  guint n_addrs;
  /* With addrs: the caller knows no running domain can hold one of them
   * (none is bound to a driver QEMU could use): a <domstatus> file, as
   * its root element shows, is not looked into. */
  gboolean defined_only;
} VpaStatedirsQuery;

GPtrArray *vpa_statedirs_query (const VpaStatedirsQuery *q, GError **error);

/* FALSE only when parsing the state file buf (NUL-terminated at len, as
 * the files are read) could give no claim on one of addrs (sorted
 * ascending), decided from the bytes without parsing:
 * every start tag with a bus attribute is decoded as the parser decodes
 * an <address> (vpa_xml_pci_address_fields), wherever it stands. TRUE
 * (parse it) whenever the bytes cannot tell: an encoding other than
 * UTF-8, a document type declaration (its attribute defaults), a
 * reference in an address field, a field given twice, a tag that does
 * not scan, a NUL byte. One forward pass: linear in len. */
gboolean vpa_statedirs_may_name (const char *buf, gsize len, const VpaAddr *addrs,
                                 guint n_addrs);

G_END_DECLS
