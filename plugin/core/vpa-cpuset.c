/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libvirt cpuset/nodeset strings (vpa-cpuset.h).
 */
#include "vpa-cpuset.h"

#include <string.h>

/* One bit per id up to VPA_CPUSET_MAX: a set costs at most 8 KiB, whatever
 * its string says, and unions are word operations. */
struct _VpaBits {
  guint n_words;
  guint64 *w;
};

#define BITS_WORD(i) ((i) / 64)
#define BITS_MASK(i) (G_GUINT64_CONSTANT (1) << ((i) % 64))

VpaBits *
vpa_cpuset_bits_new (void)
{
  return g_new0 (VpaBits, 1);
}

void
vpa_cpuset_bits_free (VpaBits *bits)
{
  if (bits == NULL)
    return;
  g_free (bits->w);
  g_free (bits);
}

static void
bits_grow (VpaBits *b, guint max_id)
{
  guint need = BITS_WORD (max_id) + 1;

  if (need <= b->n_words)
    return;
  b->w = g_renew (guint64, b->w, need);
  memset (b->w + b->n_words, 0, (need - b->n_words) * sizeof (guint64));
  b->n_words = need;
}

void
vpa_cpuset_bits_set_range (VpaBits *b, guint lo, guint hi, gboolean on)
{
  if (on)
    {
      bits_grow (b, hi);
    }
  else if (BITS_WORD (lo) >= b->n_words)
    {
      return;
    }
  else if (BITS_WORD (hi) >= b->n_words)
    {
      hi = b->n_words * 64 - 1;
    }
  if (b->w == NULL || BITS_WORD (hi) >= b->n_words)
    return; /* cannot happen: grown above, or clamped to the words there are */
  for (guint i = lo; i <= hi;)
    {
      if (i % 64 == 0 && hi - i >= 63)
        {
          b->w[BITS_WORD (i)] = on ? G_MAXUINT64 : 0;
          i += 64;
          continue;
        }
      if (on)
        {
          b->w[BITS_WORD (i)] |= BITS_MASK (i);
        }
      else
        {
          b->w[BITS_WORD (i)] &= ~BITS_MASK (i);
        }
      i++;
    }
}

gboolean
vpa_cpuset_bits_has (const VpaBits *b, guint i)
{
  return b != NULL && BITS_WORD (i) < b->n_words && (b->w[BITS_WORD (i)] & BITS_MASK (i)) != 0;
}

void
vpa_cpuset_bits_or (VpaBits *dst, const VpaBits *src)
{
  if (src == NULL || src->n_words == 0)
    return;
  bits_grow (dst, src->n_words * 64 - 1);
  for (guint i = 0; i < src->n_words; i++)
    dst->w[i] |= src->w[i];
}

/* The first member >= from, or -1. */
gint
vpa_cpuset_bits_next (const VpaBits *b, guint from)
{
  for (guint wi = BITS_WORD (from); b != NULL && wi < b->n_words; wi++)
    {
      guint64 word = b->w[wi];

      if (wi == BITS_WORD (from))
        word &= ~(BITS_MASK (from) - 1);
      if (word != 0)
        return (gint) (wi * 64 + (guint) __builtin_ctzll (word));
    }
  return -1;
}

GArray *
vpa_cpuset_bits_to_array (const VpaBits *bits)
{
  GArray *ret;

  if (bits == NULL)
    return NULL;
  ret = g_array_new (FALSE, FALSE, sizeof (guint));
  for (gint i = vpa_cpuset_bits_next (bits, 0); i >= 0; i = vpa_cpuset_bits_next (bits, (guint) i + 1))
    {
      guint v = (guint) i;
      g_array_append_val (ret, v);
    }
  return ret;
}

/* A decimal number at *pp (before end), at most VPA_CPUSET_MAX. */
static gboolean
cpuset_number (const char **pp, const char *end, guint *out)
{
  const char *p = *pp;
  guint v = 0;

  if (p == end || !g_ascii_isdigit (*p))
    return FALSE;
  for (; p < end && g_ascii_isdigit (*p); p++)
    {
      v = v * 10 + (guint) (*p - '0');
      if (v > VPA_CPUSET_MAX)
        return FALSE;
    }
  *pp = p;
  *out = v;
  return TRUE;
}

/* One comma-separated entry [p, end): "N", "N-M" or "^N", blanks around
 * allowed; parsed in place (a set of millions of entries costs one pass). */
static gboolean
cpuset_entry (const char *str, const char *p, const char *end, VpaBits *bits, GError **error)
{
  const char *q;
  gboolean neg = FALSE, ok;
  guint lo = 0, hi = 0;

  while (p < end && g_ascii_isspace (*p))
    p++;
  while (end > p && g_ascii_isspace (end[-1]))
    end--;
  q = p;
  if (q < end && *q == '^')
    {
      neg = TRUE;
      q++;
    }
  ok = cpuset_number (&q, end, &lo);
  hi = lo;
  if (ok && !neg && q < end && *q == '-')
    {
      q++;
      ok = cpuset_number (&q, end, &hi);
    }
  if (!ok || q != end)
    {
      int n = (int) MIN (end - p, 32);
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "invalid CPU or node set '%s': entry '%.*s%s' is not N, N-M or ^N with N and M at most %u",
                   str, n, p, end - p > 32 ? "…" : "", VPA_CPUSET_MAX);
      return FALSE;
    }
  if (hi < lo)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "invalid CPU or node set '%s': range '%u-%u' is reversed", str, lo, hi);
      return FALSE;
    }
  vpa_cpuset_bits_set_range (bits, lo, hi, !neg);
  return TRUE;
}

/* The set as bits; entries apply left to right. No copy of the string per
 * entry: a 10 MB "0,0,0,..." costs one pass. */
VpaBits *
vpa_cpuset_parse_bits (const char *str, GError **error)
{
  g_autoptr (VpaBits) bits = vpa_cpuset_bits_new ();
  const char *p = str;

  if (*str == '\0')
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, "invalid CPU or node set '': it is empty");
      return NULL;
    }
  for (;;)
    {
      const char *comma = strchr (p, ',');
      const char *end = comma != NULL ? comma : p + strlen (p);

      if (!cpuset_entry (str, p, end, bits, error))
        return NULL;
      if (comma == NULL)
        break;
      p = comma + 1;
    }
  if (vpa_cpuset_bits_next (bits, 0) < 0)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "invalid CPU or node set '%s': it selects nothing", str);
      return NULL;
    }
  return g_steal_pointer (&bits);
}

gboolean
vpa_cpuset_parse (const char *str, GArray **out, GError **error)
{
  g_autoptr (VpaBits) bits = NULL;

  g_return_val_if_fail (str != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((bits = vpa_cpuset_parse_bits (str, error)) == NULL)
    return FALSE;
  *out = vpa_cpuset_bits_to_array (bits);
  return TRUE;
}

static gint
guint_cmp (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

char *
vpa_cpuset_format (const GArray *set)
{
  g_autoptr (GArray) sorted = g_array_copy ((GArray *) set);
  GString *out = g_string_new (NULL);

  g_array_sort (sorted, guint_cmp);
  for (guint i = 0; i < sorted->len;)
    {
      guint lo = g_array_index (sorted, guint, i), hi = lo, j = i + 1;
      while (j < sorted->len && g_array_index (sorted, guint, j) <= hi + 1)
        hi = g_array_index (sorted, guint, j++);
      if (out->len > 0)
        g_string_append_c (out, ',');
      if (hi == lo)
        {
          g_string_append_printf (out, "%u", lo);
        }
      else
        {
          g_string_append_printf (out, "%u-%u", lo, hi);
        }
      i = j;
    }
  return g_string_free (out, FALSE);
}
