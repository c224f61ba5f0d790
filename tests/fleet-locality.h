/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Locality groups with whole-guest placement for the fleet filter's
 * fit-equals-place run: generated domains and hosts (fleet-locality.c).
 */
#pragma once

#include <glib.h>

/* Domain documents (char*), every scenario once: GPU+NIC locality
 * groups with <vpa:numa placement="auto"/>, the ports on physnet (or
 * frontend, the scenarios that ask for the NICs away from the GPUs). */
GPtrArray *vpa_test_fleet_locality_domains (const char *physnet, const char *frontend);

/* The name of domain i. */
const char *vpa_test_fleet_locality_name (guint i);

/* The hosts tools/vpa-genhost generates for the run. */
guint vpa_test_fleet_locality_n_generated (void);
const char *vpa_test_fleet_locality_generate (guint i, const char *dir);
