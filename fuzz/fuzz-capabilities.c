/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `virsh capabilities` output: host NUMA cells, their CPUs and sockets.
 * Cells parsed must seal into a consistent host.
 */
#include "vpa-fuzz.h"
#include "vpa-capabilities.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (VpaHost) host = NULL;
  g_autoptr (GError) error = NULL;
  gboolean ok;

  vpa_fuzz_init ();
  doc = vpa_xml_parse_memory (&(VpaDoc){ (const char *) data, size, "fuzz-caps.xml" }, &error);
  VPA_FUZZ_CHECK_RESULT (doc != NULL, error);
  if (doc == NULL)
    return 0;
  host = vpa_host_new ("fuzz-caps.xml");
  ok = vpa_capabilities_parse (xmlDocGetRootElement (doc), "fuzz-caps.xml", host, &error);
  VPA_FUZZ_CHECK_RESULT (ok, error);
  if (!ok)
    return 0;
  ok = vpa_host_seal (host, &error);
  VPA_FUZZ_CHECK_RESULT (ok, error);
  if (!ok)
    return 0;
  for (guint i = 0; i < host->cells->len; i++)
    {
      const VpaCell *cell = &g_array_index (host->cells, VpaCell, i);

      VPA_FUZZ_CHECK (i == 0 || g_array_index (host->cells, VpaCell, i - 1).id < cell->id);
      VPA_FUZZ_CHECK (vpa_host_cell (host, cell->id) == cell);
      VPA_FUZZ_CHECK (cell->socket >= VPA_SOCKET_NONE);
      VPA_FUZZ_CHECK (vpa_host_node_socket (host, cell->id) == cell->socket);
      for (guint c = 1; cell->cpus != NULL && c < cell->cpus->len; c++)
        {
          VPA_FUZZ_CHECK (g_array_index (cell->cpus, guint, c - 1) <
                          g_array_index (cell->cpus, guint, c));
        }
    }
  return 0;
}
