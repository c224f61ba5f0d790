/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the GTest programs share: golden files, fixture files (one test
 * case per file) and small hosts built by hand.
 */
#pragma once

#include "vpa-config.h"
#include "vpa-types.h"

G_BEGIN_DECLS

/* Compares actual with the golden file at path. With
 * VPA_TEST_REGENERATE=1 in the environment it writes the file instead
 * (review the diff before committing). */
void vpa_test_assert_golden (const char *path, const char *actual);

/* The contents of a fixture file, which must be readable; len may be
 * NULL. */
char *vpa_test_read_fixture (const char *path, gsize *len);

/* The names in dir matching glob, "HEAD*TAIL" (one '*'), each reduced
 * to what the '*' stands for, in byte order. dir must hold at least one
 * (a fixture directory without any is a broken checkout). */
GPtrArray *vpa_test_list_fixtures (const char *dir, const char *glob);

/* One test case per file in dir matching glob (see above), named
 * prefix/STEM after what the '*' stands for; the data is the file's
 * path. */
void vpa_test_add_fixture_cases (const char *dir, const char *glob, const char *prefix,
                                 GTestDataFunc func);

/* A configuration from text, which must load; messages name it "t.conf". */
VpaConfig *vpa_test_config_load (const char *text);

/* A device for a handmade host: ids is "VVVV:PPPP"; netdev may be NULL. */
VpaDevice *vpa_test_device_new (VpaAddr addr, const char *ids, VpaDevType type,
                                VpaAddr parent, gint numa, const char *netdev);

/* The same, added to host (which owns it). */
VpaDevice *vpa_test_add_device (VpaHost *host, VpaAddr addr, const char *ids,
                                VpaDevType type, VpaAddr parent, gint numa,
                                const char *netdev);

/* The device of a sealed host at addr_str, which must exist. */
const VpaDevice *vpa_test_device_at (const VpaHost *host, const char *addr_str);

/* Every field of a device on one line, so that a mismatch names the
 * device; the driver only when with_driver is set. */
char *vpa_test_device_string (const VpaDevice *dev, gboolean with_driver);

void vpa_test_assert_cells_equal (const VpaCell *a, const VpaCell *b);

/* The same devices (every field) and cells; claims are not compared. */
void vpa_test_assert_hosts_equal (const VpaHost *a, const VpaHost *b);
/* Cells equal with their capacity: CPU topology, pages, distances. */
void vpa_test_assert_capacity_equal (const VpaHost *a, const VpaHost *b);

G_END_DECLS
