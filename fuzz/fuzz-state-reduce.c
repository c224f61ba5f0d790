/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The reduced reading of a state file (vpa_state_reduce), against the
 * whole parse: whenever both read a document, the claims are the same.
 * And the byte scanner that decides which files are parsed
 * (vpa_statedirs_may_name), against the parse: it never skips a file
 * the parse finds a claim in, and it stays linear in the bytes (timed
 * against one plain pass over them, so that sanitizers and valgrind slow
 * both alike).
 */
#include <stdlib.h>
#include <string.h>

#include "vpa-fuzz.h"
#include "vpa-state-reduce.h"
#include "vpa-statedirs.h"
#include "vpa-xml.h"

/* The claims of doc, every field, or the error's message. */
static char *
claims_of (xmlDoc *doc)
{
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  g_autoptr (GString) s = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  gboolean ok = vpa_statedirs_claims (doc, "fuzz.xml", NULL, claims, &error);

  VPA_FUZZ_CHECK_RESULT (ok, error);
  if (!ok)
    return g_strdup (error->message);
  for (guint i = 0; i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);

      g_string_append_printf (s, "%s %" G_GUINT64_FORMAT " %d", c->domain, (guint64) c->addr,
                              c->running);
      if (c->numa == NULL)
        continue;
      for (guint j = 0; j < c->numa->dedicated->len; j++)
        g_string_append_printf (s, " d%u", g_array_index (c->numa->dedicated, guint, j));
      for (guint j = 0; j < c->numa->pinned->len; j++)
        g_string_append_printf (s, " p%u", g_array_index (c->numa->pinned, guint, j));
      for (guint j = 0; j < c->numa->memory->len; j++)
        {
          const VpaMemClaim *m = &g_array_index (c->numa->memory, VpaMemClaim, j);
          g_string_append_printf (s, " m%d/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, m->node,
                                  m->page_kib, m->kib);
        }
      g_string_append_c (s, '\n');
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static int
addr_cmp (const void *a, const void *b)
{
  VpaAddr x = *(const VpaAddr *) a, y = *(const VpaAddr *) b;

  return x < y ? -1 : x > y;
}

/* One plain pass over the bytes: the yardstick of "linear". */
static gint64
plain_pass_usec (const char *buf, gsize len)
{
  gint64 t0 = g_get_monotonic_time ();
  volatile guint h = 0;

  for (gsize i = 0; i < len; i++)
    h = h * 31 + (guchar) buf[i];
  (void) h;
  return g_get_monotonic_time () - t0;
}

/* The scanner says "may name" for every address the parse claims. */
static void
check_scanner (const char *data, gsize size, xmlDoc *whole)
{
  g_autoptr (GPtrArray) claims = g_ptr_array_new_with_free_func ((GDestroyNotify) vpa_claim_free);
  g_autoptr (GArray) addrs = g_array_new (FALSE, FALSE, sizeof (VpaAddr));
  g_autofree char *buf = g_malloc (size + 1);
  gint64 t0, spent, plain;
  gboolean may;

  if (!vpa_statedirs_claims (whole, "fuzz.xml", NULL, claims, NULL))
    return;
  for (guint i = 0; i < claims->len; i++)
    {
      const VpaClaim *c = g_ptr_array_index (claims, i);

      if (VPA_ADDR_IS_VALID (c->addr))
        g_array_append_val (addrs, c->addr);
    }
  if (addrs->len == 0)
    return;
  qsort (addrs->data, addrs->len, sizeof (VpaAddr), addr_cmp);
  memcpy (buf, data, size);
  buf[size] = '\0'; /* as the files are read */
  t0 = g_get_monotonic_time ();
  may = vpa_statedirs_may_name (buf, size, (const VpaAddr *) (gpointer) addrs->data, addrs->len);
  spent = g_get_monotonic_time () - t0;
  plain = plain_pass_usec (buf, size);
  VPA_FUZZ_CHECK (may);
  if (spent > 1000 * plain + 500000)
    {
      fprintf (stderr, "may_name: %" G_GINT64_FORMAT " us, a plain pass %" G_GINT64_FORMAT " us, %zu bytes\n", spent, plain, size);
      VPA_FUZZ_CHECK (spent <= 1000 * plain + 500000);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *buf = (const char *) data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) whole_error = NULL;
  g_autoptr (xmlDoc) reduced = NULL;
  g_autoptr (xmlDoc) whole = NULL;
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;

  vpa_fuzz_init ();
  reduced = vpa_state_reduce (&(VpaDoc){ buf, size, "fuzz.xml" }, &error);
  VPA_FUZZ_CHECK_RESULT (reduced != NULL, error);
  if (reduced == NULL)
    VPA_FUZZ_CHECK (strstr (error->message, "fuzz.xml") != NULL);
  whole = vpa_xml_parse_memory (&(VpaDoc){ buf, size, "fuzz.xml" }, &whole_error);
  VPA_FUZZ_CHECK_RESULT (whole != NULL, whole_error);
  /* what parses whole is read reduced too, but for the census's bound
   * on distinct names (a document within the bounds may have more;
   * the hook parses those whole) */
  VPA_FUZZ_CHECK (whole == NULL || reduced != NULL ||
                  strstr (error->message, "distinct names") != NULL);
  if (whole != NULL)
    check_scanner (buf, size, whole);
  if (whole == NULL || reduced == NULL)
    return 0;
  a = claims_of (whole);
  b = claims_of (reduced);
  if (strcmp (a, b) != 0)
    {
      fprintf (stderr, "whole: %s\nreduced: %s\n", a, b);
      VPA_FUZZ_CHECK (strcmp (a, b) == 0);
    }
  return 0;
}
