/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-output-verdicts.h"

#include "vpa-types.h"

#define FAMILY "virt_pci_affinity_hook_verdicts_total"

char *
vpa_output_verdicts_openmetrics (const VpaVerdictCounts *c)
{
  GString *s = g_string_new ("# HELP " FAMILY " Operations the qemu hook refused (verdict "
                             "refused) or let through in audit mode (would-refuse), by "
                             "operation and reason.\n# TYPE " FAMILY " counter\n");

  for (guint op = 0; op < VPA_VERDICT_OP_LAST; op++)
    {
      for (guint v = 0; v < VPA_VERDICT_LAST; v++)
        {
          for (guint r = 0; r < VPA_VERDICT_REASON_LAST; r++)
            {
              g_string_append_printf (s,
                                      FAMILY "{op=\"%s\",verdict=\"%s\",reason=\"%s\"} "
                                             "%" G_GUINT64_FORMAT "\n",
                                      vpa_verdict_op_to_string (op), vpa_verdict_to_string (v),
                                      vpa_verdict_reason_to_string (r), c->count[op][v][r]);
            }
        }
    }
  return g_string_free (s, FALSE);
}

char *
vpa_output_verdicts_text (const VpaVerdictCounts *c)
{
  guint64 total[VPA_VERDICT_LAST] = { 0 };
  GString *s = g_string_new (NULL);

  for (guint op = 0; op < VPA_VERDICT_OP_LAST; op++)
    {
      for (guint v = 0; v < VPA_VERDICT_LAST; v++)
        {
          for (guint r = 0; r < VPA_VERDICT_REASON_LAST; r++)
            total[v] += c->count[op][v][r];
        }
    }
  g_string_append_printf (s, "%" G_GUINT64_FORMAT " refused, %" G_GUINT64_FORMAT " would-refuse",
                          total[VPA_VERDICT_REFUSED], total[VPA_VERDICT_WOULD_REFUSE]);
  for (guint i = c->recent->len; i > 0; i--)
    {
      const VpaVerdictRecent *r = g_ptr_array_index (c->recent, i - 1);
      g_autoptr (GDateTime) t = g_date_time_new_from_unix_utc (r->when);
      g_autofree char *when = t != NULL ? g_date_time_format_iso8601 (t) : g_strdup ("?");
      g_autofree char *dom = vpa_message_bound (r->domain, 128);

      g_string_append_printf (s, "\n  %s %s %s (%s) domain '%s'", when,
                              vpa_verdict_op_to_string (r->op), vpa_verdict_to_string (r->verdict),
                              vpa_verdict_reason_to_string (r->reason), dom);
    }
  return g_string_free (s, FALSE);
}

gboolean
vpa_output_verdicts_add (VpaMetrics *m, const char *state_dir, GError **error)
{
  gboolean exists = FALSE;
  g_autoptr (VpaVerdictCounts) c = vpa_verdict_counts_load (state_dir, &exists, error);
  g_autofree char *text = NULL;

  if (c == NULL)
    return FALSE;
  if (exists)
    {
      text = vpa_output_verdicts_openmetrics (c);
      vpa_output_ops_metrics_add_family (m, text);
    }
  return TRUE;
}
