/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The reservations state file (docs/reservations.md): the hook reads it
 * as root inside every start, and it holds domain names any user allowed
 * to define domains chooses. A set read must be within the bounds,
 * ascending by address, each record of its kind; every line is in the
 * form this program writes, so formatting the set gives back the input's
 * lines (in address order), and that text reads back to the same text.
 */
#include <string.h>

#include "vpa-fuzz.h"
#include "vpa-reserve.h"

static void
check_item (const VpaReserveSet *set, guint i)
{
  const VpaReservation *r = g_ptr_array_index (set->items, i);
  g_autofree char *why = vpa_reserve_describe (r);
  g_autofree char *since = vpa_reserve_since_text (r);

  VPA_FUZZ_CHECK (r->addr != VPA_ADDR_NONE);
  VPA_FUZZ_CHECK (i == 0 || ((const VpaReservation *) g_ptr_array_index (set->items, i - 1))
                                ->addr < r->addr);
  VPA_FUZZ_CHECK (vpa_reserve_set_find (set, r->addr) == r);
  VPA_FUZZ_CHECK (r->kind < VPA_RESERVE_LAST && r->since >= 0);
  VPA_FUZZ_CHECK (why != NULL && since != NULL);
  /* a quarantine keeps its device from everyone */
  VPA_FUZZ_CHECK (r->kind != VPA_RESERVE_QUARANTINE || vpa_reserve_blocks (r, "x", NULL));
  VPA_FUZZ_CHECK (vpa_reserve_blocks (r, NULL, NULL));
  if (r->kind == VPA_RESERVE_QUARANTINE)
    {
      VPA_FUZZ_CHECK (r->reason != NULL && strlen (r->reason) <= VPA_RESERVE_REASON_MAX);
      VPA_FUZZ_CHECK (r->domain == NULL && r->uuid == NULL);
      return;
    }
  VPA_FUZZ_CHECK (r->domain != NULL && r->domain[0] != '\0');
  VPA_FUZZ_CHECK (strlen (r->domain) <= VPA_RESERVE_DOMAIN_MAX && r->reason == NULL);
  /* the domain that started with it may use it again */
  VPA_FUZZ_CHECK (!vpa_reserve_blocks (r, r->domain, r->uuid));
}

static int
str_ptr_cmp (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* The lines of text, sorted: a set's text holds the lines it was read
 * from, in address order. */
static GStrv
sorted_lines (const char *text, gsize len)
{
  g_autofree char *copy = g_strndup (text, len);
  GStrv lines = g_strsplit (copy, "\n", -1);

  qsort (lines, g_strv_length (lines), sizeof (char *), str_ptr_cmp);
  return lines;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (VpaReserveSet) set = NULL;
  g_autoptr (VpaReserveSet) again = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *text2 = NULL;
  g_auto (GStrv) in = NULL;
  g_auto (GStrv) out = NULL;

  vpa_fuzz_init ();
  set = vpa_reserve_set_parse ((const char *) data, size, "fuzz.reservations", &error);
  VPA_FUZZ_CHECK_RESULT (set != NULL, error);
  if (set == NULL)
    return 0;
  VPA_FUZZ_CHECK (set->items->len <= VPA_RESERVE_MAX);
  for (guint i = 0; i < set->items->len; i++)
    check_item (set, i);

  text = vpa_reserve_set_format (set);
  in = sorted_lines ((const char *) data, size);
  out = sorted_lines (text, strlen (text));
  if (!g_strv_equal ((const char *const *) in, (const char *const *) out))
    fprintf (stderr, "formatted set is not the input's lines:\n%s", text);
  VPA_FUZZ_CHECK (g_strv_equal ((const char *const *) in, (const char *const *) out));

  again = vpa_reserve_set_parse (text, strlen (text), "formatted", &error);
  if (again == NULL)
    fprintf (stderr, "formatted set does not read back: %s\n", error->message);
  VPA_FUZZ_CHECK (again != NULL && again->items->len == set->items->len);
  text2 = vpa_reserve_set_format (again);
  VPA_FUZZ_CHECK (strcmp (text, text2) == 0);
  return 0;
}
