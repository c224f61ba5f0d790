/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The qemu hook in-process: vpa_hook_run() with the operation from the
 * first input byte and the rest as the domain XML libvirt writes to the
 * hook's stdin, against a fixed snapshot host
 * (data/hosts/dual-socket.xml and its config).
 * Exit status 0, 1 (one line on stderr) or 2; stdout only on success and
 * only a document that parses as a domain again.
 */
#include <string.h>
#include <glib/gstdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vpa-fuzz.h"
#include "vpa-domain.h"
#include "vpa-hook.h"

static const char *const ops[][2] = {
  { "prepare", "begin" },
  { "start", "begin" },
  { "migrate", "begin" },
  { "restore", "begin" },
  { "stopped", "end" },
  { "prepare", "end" },
};

/* VPA_CONFIG: the sample host's config with the snapshot as inventory,
 * and an empty claims directory; the same in audit mode for a first byte
 * with its high bit set. Written once per process. */
static char *conf_enforce, *conf_audit;

static void
hook_setup (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *dir = g_dir_make_tmp ("vpa-fuzz-hook-XXXXXX", &error);
      g_autofree char *state = NULL, *specs = NULL, *text = NULL, *audit = NULL;
      g_autofree char *spec_path = g_build_filename (VPA_FUZZ_DATA, "hosts", "dual-socket.conf", NULL);

      if (dir == NULL || !g_file_get_contents (spec_path, &specs, NULL, &error))
        g_error ("fuzz-hook: %s", error->message);
      state = g_build_filename (dir, "state", NULL);
      conf_enforce = g_build_filename (dir, "hook.conf", NULL);
      conf_audit = g_build_filename (dir, "hook-audit.conf", NULL);
      g_mkdir (state, 0700);
      /* verdicts counted in the temporary directory, logged nowhere */
      text = g_strdup_printf ("[inventory]\nsource=%s/hosts/dual-socket.xml\n[claims]\n"
                              "state-dirs=%s\n[hook]\nstate-dir=%s/verdicts\n%s",
                              VPA_FUZZ_DATA, state, dir, specs);
      audit = g_strdup_printf ("[inventory]\nsource=%s/hosts/dual-socket.xml\n[claims]\n"
                               "state-dirs=%s\n[hook]\nmode=audit\nstate-dir=%s/verdicts\n%s",
                               VPA_FUZZ_DATA, state, dir, specs);
      if (!g_file_set_contents (conf_enforce, text, -1, &error) ||
          !g_file_set_contents (conf_audit, audit, -1, &error))
        g_error ("fuzz-hook: %s", error->message);
      g_setenv ("VPA_SYSLOG_SOCKET", state, TRUE);
      g_once_init_leave (&once, 1);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *xml = NULL;
  g_autofree char *out = NULL;
  char *argv[6] = { (char *) "virt-pci-affinity-hook", (char *) "fuzz-vm", NULL, NULL,
                    (char *) "-", NULL };
  int saved, capture, ret;
  gsize out_len = 0;
  off_t end;

  vpa_fuzz_init ();
  hook_setup ();
  if (size < 1 || size - 1 > VPA_XML_MAX_DOCUMENT)
    return 0;
  argv[2] = (char *) ops[data[0] % G_N_ELEMENTS (ops)][0];
  argv[3] = (char *) ops[data[0] % G_N_ELEMENTS (ops)][1];
  xml = vpa_fuzz_strndup (data + 1, size - 1);
  g_setenv ("VPA_CONFIG", (data[0] & 0x80) != 0 ? conf_audit : conf_enforce, TRUE);

  /* The hook writes the rewritten document to fd 1 itself: a memfd. */
  fflush (stdout);
  capture = memfd_create ("hook-stdout", MFD_CLOEXEC);
  VPA_FUZZ_CHECK (capture >= 0);
  saved = dup (STDOUT_FILENO);
  dup2 (capture, STDOUT_FILENO);
  ret = vpa_hook_run (argv, xml, size - 1);
  dup2 (saved, STDOUT_FILENO);
  close (saved);

  end = lseek (capture, 0, SEEK_END);
  VPA_FUZZ_CHECK (end >= 0);
  out_len = (gsize) end;
  out = g_malloc0 (out_len + 1);
  VPA_FUZZ_CHECK (pread (capture, out, out_len, 0) == (ssize_t) out_len);
  close (capture);

  VPA_FUZZ_CHECK (ret == 0 || ret == 1 || ret == 2);
  if (ret != 0 || g_strcmp0 (argv[3], "begin") != 0)
    VPA_FUZZ_CHECK (out_len == 0);
  if (out_len > 0)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (VpaDomain) dom = vpa_domain_parse (&(VpaDoc){ out, out_len, "hook-output.xml" }, &error);
      VPA_FUZZ_CHECK (g_strcmp0 (argv[2], "migrate") == 0 || g_strcmp0 (argv[2], "restore") == 0);
      if (dom == NULL)
        fprintf (stderr, "hook output does not parse: %s\n", error->message);
      VPA_FUZZ_CHECK (dom != NULL);
    }
  return 0;
}
