/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `fleet-cli ARGS` runs `virt-pci-affinity fleet ARGS` for the tests, so
 * that they do not depend on the whole CLI being built.
 */
#include <locale.h>
#include "vpa-cli-fleet.h"

int
main (int argc, char **argv)
{
  char *args[64] = { (char *) "fleet" };

  setlocale (LC_ALL, "");
  for (int i = 1; i < argc && i < 63; i++)
    args[i] = argv[i];
  return vpa_cli_fleet (MIN (argc, 63), args);
}
