/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-util"

#include "config.h"

#include "tally-receipt.h"

#include <glib/gi18n.h>

#include "tally-format.h"
#include "tally-json.h"

/*
 * The receipt of a turn (docs/architecture.md §4.2, `turn_finished`), the
 * one formatter behind the window's receipt row, tally-cli's last line of
 * a turn and the Markdown export. Token counts are grouped the locale's
 * way (tally_format_count()), the cost and the time are written by
 * tally_format_cost() and tally_format_duration().
 */

/**
 * tally_receipt_init:
 * @receipt: (out caller-allocates): the receipt to fill in
 * @turn_finished: (nullable): a `turn_finished` event; @receipt keeps a
 *   pointer to its `status` string, so it must outlive @receipt
 *
 * Reads a receipt from its event. Missing or mistyped members read as
 * zero (the cost as unknown), so a damaged event still has a receipt.
 */
void
tally_receipt_init (TallyReceipt *receipt,
                    JsonObject   *turn_finished)
{
  JsonObject *usage;

  g_return_if_fail (receipt != NULL);

  *receipt = (TallyReceipt) { 0 };
  if (turn_finished == NULL)
    return;

  receipt->status = tally_json_object_get_string (turn_finished, "status", NULL);
  receipt->has_cost = tally_json_object_lookup_double (turn_finished, "cost_usd", &receipt->cost_usd);
  usage = tally_json_object_get_object (turn_finished, "usage");

  receipt->input_tokens = tally_json_object_get_int (usage, "input_tokens", 0);
  receipt->output_tokens = tally_json_object_get_int (usage, "output_tokens", 0);
  receipt->cache_read_tokens = tally_json_object_get_int (usage, "cache_read_input_tokens", 0);
  receipt->cache_write_tokens = tally_json_object_get_int (usage, "cache_creation_input_tokens", 0);
  /* A call the server answered counts, also when the turn failed in it. */
  receipt->api_calls = tally_json_object_get_int (turn_finished, "api_calls", 0) +
                       tally_json_object_get_int (turn_finished, "failed_calls", 0);
  receipt->duration_ms = tally_json_object_get_int (turn_finished, "duration_ms", 0);
}

static const char *
status_label (const char *status)
{
  if (g_strcmp0 (status, "cancelled") == 0)
    return _("Stopped");
  if (g_strcmp0 (status, "failed") == 0)
    return _("Failed");
  return _("Done");
}

/* The parts every frame shares, after the status: "$0.0123 · 1,200 in ·
 * 340 out · cache 800 read, 120 written · 2 API calls · 3.4 s"; the cache
 * part only when @always_cache or the cache was used. */
static char *
dup_parts (const TallyReceipt *receipt,
           gboolean            always_cache)
{
  g_autofree char *cost = tally_format_cost (receipt->has_cost, receipt->cost_usd);
  g_autofree char *in = tally_format_count (receipt->input_tokens, TALLY_GROUPING_LOCALE);
  g_autofree char *out = tally_format_count (receipt->output_tokens, TALLY_GROUPING_LOCALE);
  g_autofree char *duration = tally_format_duration (receipt->duration_ms);
  GString *line = g_string_new (cost);

  /* Translators: input and output tokens of a turn, e.g. "1,200 in · 340 out" */
  g_string_append_printf (line, _(" · %s in · %s out"), in, out);
  if (always_cache || receipt->cache_read_tokens > 0 || receipt->cache_write_tokens > 0)
    {
      g_autofree char *read = tally_format_count (receipt->cache_read_tokens, TALLY_GROUPING_LOCALE);
      g_autofree char *written = tally_format_count (receipt->cache_write_tokens, TALLY_GROUPING_LOCALE);

      /* Translators: prompt-cache tokens, e.g. "cache 800 read, 120 written" */
      g_string_append_printf (line, _(" · cache %s read, %s written"), read, written);
    }
  g_string_append (line, " · ");
  g_string_append_printf (line, ngettext ("%u API call", "%u API calls", (gulong) receipt->api_calls),
                          (guint) receipt->api_calls);
  g_string_append_printf (line, " · %s", duration);
  return g_string_free (line, FALSE);
}

/**
 * tally_receipt_dup_line:
 * @receipt: a receipt (tally_receipt_init())
 * @style: the frame to write it in
 *
 * Writes a receipt on one line, without a line break, in the words of
 * @style (see #TallyReceiptStyle). The window and the terminal share every
 * figure and its grouping ("$0.0123 · 1,200 in · 340 out · … · 2 API
 * calls · 3.4 s"); they differ only in how the status is written and in
 * the terminal always naming the cache. The cost keeps four decimals,
 * token counts are grouped the locale's way, the time is as
 * tally_format_duration() writes it. All the words are translated.
 *
 * Returns: (transfer full): the line
 */
char *
tally_receipt_dup_line (const TallyReceipt *receipt,
                        TallyReceiptStyle   style)
{
  g_autofree char *parts = NULL;
  GString *line;

  g_return_val_if_fail (receipt != NULL, NULL);

  switch (style)
    {
    case TALLY_RECEIPT_STYLE_TERMINAL:
      parts = dup_parts (receipt, TRUE);
      /* The status is a fixed word scripts match, not translated. */
      return g_strdup_printf ("— %s · %s", receipt->status != NULL ? receipt->status : "done", parts);

    case TALLY_RECEIPT_STYLE_MARKDOWN:
      {
        g_autofree char *cost = tally_format_cost (receipt->has_cost, receipt->cost_usd);
        g_autofree char *in = tally_format_count (receipt->input_tokens, TALLY_GROUPING_LOCALE);
        g_autofree char *out = tally_format_count (receipt->output_tokens, TALLY_GROUPING_LOCALE);
        g_autofree char *duration = tally_format_duration (receipt->duration_ms);

        line = g_string_new ("*");
        /* Translators: the receipt of a turn in the Markdown export: cost,
         * input and output tokens */
        g_string_append_printf (line, _("Receipt: %s · %s input + %s output tokens"), cost, in, out);
        if (receipt->cache_read_tokens > 0 || receipt->cache_write_tokens > 0)
          {
            g_autofree char *read = tally_format_count (receipt->cache_read_tokens, TALLY_GROUPING_LOCALE);
            g_autofree char *written = tally_format_count (receipt->cache_write_tokens, TALLY_GROUPING_LOCALE);

            /* Translators: prompt-cache tokens in the Markdown export */
            g_string_append_printf (line, _(" (cache: %s read, %s written)"), read, written);
          }
        g_string_append_printf (line, " · %s", duration);
        if (receipt->status != NULL && !g_str_equal (receipt->status, "done"))
          g_string_append_printf (line, " · %s", receipt->status);
        g_string_append_c (line, '*');
        return g_string_free (line, FALSE);
      }

    case TALLY_RECEIPT_STYLE_WINDOW:
    default:
      parts = dup_parts (receipt, FALSE);
      return g_strdup_printf ("%s · %s", status_label (receipt->status), parts);
    }
}
