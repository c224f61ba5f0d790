/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Without libFuzzer: runs a target's LLVMFuzzerTestOneInput once over
 * every file named on the command line (directories are walked, sorted),
 * so the seed corpus and the data/ fixtures are regression tests in every
 * build. Prints TAP, one line per input.
 */
#include <stdio.h>
#include <string.h>

#include "vpa-fuzz.h"

static int
compare_paths (gconstpointer a, gconstpointer b)
{
  /* g_ptr_array_sort hands pointers to the elements. */
  return g_strcmp0 (*(const char *const *) a, *(const char *const *) b);
}

static void
collect (const char *path, GPtrArray *out)
{
  g_autoptr (GDir) dir = NULL;
  g_autoptr (GPtrArray) names = NULL;
  const char *name;

  /* Fake sysfs trees under data/ link back up: never follow links. */
  if (g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    return;
  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_ptr_array_add (out, g_strdup (path));
      return;
    }
  dir = g_dir_open (path, 0, NULL);
  if (dir == NULL)
    return;
  names = g_ptr_array_new_with_free_func (g_free);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      if (name[0] != '.')
        g_ptr_array_add (names, g_build_filename (path, name, NULL));
    }
  g_ptr_array_sort (names, compare_paths);
  for (guint i = 0; i < names->len; i++)
    collect (g_ptr_array_index (names, i), out);
}

int
main (int argc, char **argv)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  guint ran = 0;

  for (int i = 1; i < argc; i++)
    {
      if (!g_file_test (argv[i], G_FILE_TEST_EXISTS))
        {
          fprintf (stderr, "%s: no such file or directory\n", argv[i]);
          return 1;
        }
      collect (argv[i], files);
    }
  printf ("1..%u\n", files->len);
  for (guint i = 0; i < files->len; i++)
    {
      const char *path = g_ptr_array_index (files, i);
      g_autofree char *buf = NULL;
      gsize len = 0;
      g_autoptr (GError) error = NULL;

      if (!g_file_get_contents (path, &buf, &len, &error))
        {
          printf ("not ok %u %s # %s\n", i + 1, path, error->message);
          return 1;
        }
      /* A crash or failed invariant aborts: the test then fails naming
       * the last input printed. */
      fprintf (stderr, "# %s\n", path);
      LLVMFuzzerTestOneInput ((const uint8_t *) buf, len);
      printf ("ok %u %s\n", i + 1, path);
      ran++;
    }
  if (ran == 0)
    {
      fprintf (stderr, "no inputs\n");
      return 1;
    }
  return 0;
}
