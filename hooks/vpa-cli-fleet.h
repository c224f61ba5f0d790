/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * virt-pci-affinity fleet sync|pools|filter (INTERFACE.md section 7).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* argv[0] is "fleet", argv[1] the subcommand. Prints results on stdout
 * and errors as one line on stderr; returns the exit status (0 success,
 * 1 no host passes the filter, 2 bad input or usage, 3 the store or the
 * inventory source failed). */
int vpa_cli_fleet (int argc, char **argv);

G_END_DECLS
