/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * 64-bit BARs: the sysfs `resource` parser against lines as the kernel
 * prints them (a GPU's 32-bit BAR0, 64-bit BAR1 and BAR3, the ROM and
 * SR-IOV lines after the six standard ones), malformed lines, and the
 * power-of-two window.
 */
#include "vpa-bars.h"

static const char gpu[] = "0x00000000c2000000 0x00000000c2ffffff 0x0000000000040200\n"
                          "0x0000038000000000 0x0000039fffffffff 0x000000000014220c\n"
                          "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
                          "0x000003a000000000 0x000003a001ffffff 0x000000000014220c\n"
                          "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
                          "0x0000000000003000 0x000000000000307f 0x0000000000040101\n"
                          "0x00000000c3000000 0x00000000c307ffff 0x0000000000046200\n"
                          "0x0000040000000000 0x000004ffffffffff 0x000000000014220c\n";

static void
test_parse (void)
{
  guint64 mem64 = 1;
  g_autofree char *bad = NULL;

  g_assert_true (vpa_bars_parse_resource (gpu, &mem64, &bad));
  g_assert_null (bad);
  /* 128 GiB + 32 MiB; the 8th line (an SR-IOV BAR) is not the device's */
  g_assert_cmpuint (mem64, ==, G_GUINT64_CONSTANT (137472507904));
  g_assert_true (vpa_bars_parse_resource ("", &mem64, &bad));
  g_assert_cmpuint (mem64, ==, 0);
}

static void
test_malformed (void)
{
  static const char *const cases[][2] = {
    { "0x10 0x0f\n", "0x10 0x0f" },
    { "0x0000000000000000 0x0000000000000000 0x0000000000000000\nzzz\n", "zzz" },
    { "0x20 0x10 0x0000000000140200\n", "0x20 0x10 0x0000000000140200" },
    { "0x0 0x10000000000000000 0x200\n", "0x0 0x10000000000000000 0x200" },
    { "0x0 0xffffffffffffffff 0x0000000000100200\n", "0x0 0xffffffffffffffff 0x0000000000100200" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      guint64 mem64 = 1;
      g_autofree char *bad = NULL;

      g_assert_false (vpa_bars_parse_resource (cases[i][0], &mem64, &bad));
      g_assert_cmpstr (bad, ==, cases[i][1]);
    }
}

static void
test_window (void)
{
  g_assert_cmpuint (vpa_bars_window (0), ==, 0);
  g_assert_cmpuint (vpa_bars_window (1), ==, 1);
  g_assert_cmpuint (vpa_bars_window (G_GUINT64_CONSTANT (137472507904)), ==,
                    G_GUINT64_CONSTANT (1) << 38);
  g_assert_cmpuint (vpa_bars_window (G_GUINT64_CONSTANT (1) << 37), ==,
                    G_GUINT64_CONSTANT (1) << 37);
  g_assert_cmpuint (vpa_bars_window ((G_GUINT64_CONSTANT (1) << 63) + 1), ==, G_MAXUINT64);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/bars/parse", test_parse);
  g_test_add_func ("/bars/malformed", test_malformed);
  g_test_add_func ("/bars/window", test_window);
  return g_test_run ();
}
