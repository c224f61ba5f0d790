/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-cli-common.h"
#include "vpa-reserve-apply.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vpa-cli-module.h"
#include "vpa-constants.h"

void
vpa_cli_common_clear (VpaCliCommon *common)
{
  g_free (common->connect);
  g_free (common->inventory);
  g_free (common->config_path);
  g_free (common->format);
  g_strfreev (common->args);
}

int
vpa_cli_common_fail (const char *prefix, const GError *error)
{
  int code = VPA_ERROR_ENVIRONMENT;

  if (error->domain == VPA_ERROR)
    {
      code = error->code;
    }
  else if (error->domain == G_OPTION_ERROR)
    {
      code = VPA_ERROR_INVALID;
    }
  {
    g_autofree char *line = g_strconcat (prefix, error->message, NULL);
    g_autofree char *bounded = vpa_message_bound (line, VPA_MESSAGE_MAX);
    fprintf (stderr, "%s\n", bounded);
  }
  return code;
}

void
vpa_cli_common_warn (const char *message)
{
  g_autofree char *line = g_strconcat ("virt-pci-affinity: warning: ", message, NULL);
  g_autofree char *bounded = vpa_message_bound (line, VPA_MESSAGE_MAX);

  fprintf (stderr, "%s\n", bounded);
}

const char *
vpa_cli_common_connect_uri (const VpaCliCommon *common)
{
  const char *env;

  if (common->connect != NULL)
    return common->connect;
  env = g_getenv ("LIBVIRT_DEFAULT_URI");
  if (env != NULL && *env != '\0')
    return env;
  return "qemu:///system";
}

const char *
vpa_cli_common_inventory_uri (const VpaCliCommon *common)
{
  return common->inventory != NULL ? common->inventory : vpa_cli_common_connect_uri (common);
}

VpaConfig *
vpa_cli_common_load_config (const VpaCliCommon *common, GError **error)
{
  g_autoptr (VpaConfig) config = vpa_config_lookup (common->config_path, TRUE, error);

  /* with the reservations: a command that cannot read them stops rather
   * than hand out a reserved device (docs/reservations.md) */
  if (config == NULL || !vpa_reserve_apply_load (config, error))
    return NULL;
  return g_steal_pointer (&config);
}

gboolean
vpa_cli_common_format_is_json (const VpaCliCommon *common, gboolean *json, GError **error)
{
  if (common->format != NULL && strcmp (common->format, "text") != 0 &&
      strcmp (common->format, "json") != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "--format '%s': expected text or json", common->format);
      return FALSE;
    }
  *json = g_strcmp0 (common->format, "json") == 0;
  return TRUE;
}

gboolean
vpa_cli_common_read_stdin (char **buf, gsize *len, GError **error)
{
  g_autoptr (GString) s = g_string_new (NULL);
  char chunk[65536];
  size_t n;

  while ((n = fread (chunk, 1, sizeof chunk, stdin)) > 0)
    {
      g_string_append_len (s, chunk, (gssize) n);
      if (s->len > VPA_XML_MAX_DOCUMENT)
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "stdin: input exceeds the limit of 16 MiB");
          return FALSE;
        }
    }
  /* A read error is not the end of the document. */
  if (ferror (stdin))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "stdin: cannot read: %s",
                   g_strerror (errno));
      return FALSE;
    }
  *len = s->len;
  *buf = g_string_free (g_steal_pointer (&s), FALSE);
  return TRUE;
}

gboolean
vpa_cli_common_write_stdout (const char *text, GError **error)
{
  gsize len = strlen (text);

  if (fwrite (text, 1, len, stdout) != len || fflush (stdout) != 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "cannot write to stdout: %s",
                   g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

/* Next to the running executable first, so that a build tree runs with
 * its own modules and no environment; else the installed directory. */
static char *
module_path (const char *file)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);

  if (exe != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (exe);
      g_autofree char *path = g_build_filename (dir, file, NULL);

      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return g_steal_pointer (&path);
    }
  return g_build_filename (VPA_CLI_MODULEDIR, file, NULL);
}

/* dlerror () without the "PATH: " it usually starts with. */
static const char *
module_dlerror (const char *path)
{
  const char *msg = dlerror ();
  gsize len = strlen (path);

  if (msg == NULL)
    return "unknown error";
  if (strncmp (msg, path, len) == 0 && strncmp (msg + len, ": ", 2) == 0)
    return msg + len + 2;
  return msg;
}

gconstpointer
vpa_cli_common_module_load (const char *file, const char *entry, GError **error)
{
  g_autofree char *path = NULL;
  gconstpointer (*get) (void);
  const guint *table;
  void *handle;

  g_return_val_if_fail (file != NULL && entry != NULL, NULL);

  path = module_path (file);

  /* RTLD_NOW: a module of another build fails here, naming the symbol
   * it misses, rather than later in the middle of a command. */
  handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "cannot load module '%s': %s",
                   path, module_dlerror (path));
      return NULL;
    }
  get = (gconstpointer (*) (void)) dlsym (handle, entry);
  if (get == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT, "cannot load module '%s': %s",
                   path, module_dlerror (path));
      dlclose (handle);
      return NULL;
    }
  /* Every table starts with its interface version. */
  table = get ();
  if (table == NULL || *table != VPA_CLI_MODULE_VERSION)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_ENVIRONMENT,
                   "cannot load module '%s': interface version %u, expected %u", path,
                   table != NULL ? *table : 0, VPA_CLI_MODULE_VERSION);
      dlclose (handle);
      return NULL;
    }
  /* Never closed: the tables and the libraries stay in use until exit. */
  return table;
}
