/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * TallyReceiptStyle:
 * @TALLY_RECEIPT_STYLE_WINDOW: the window's receipt row: "Done · $0.0123
 *   · 1,200 in · 340 out · cache 800 read, 120 written · 2 API calls · 3.4
 *   s": the terminal's figures, the status in words, the cache part only
 *   when the cache was used
 * @TALLY_RECEIPT_STYLE_TERMINAL: tally-cli's last line of a turn: "— done
 *   · $0.0123 · 1,200 in · 340 out · cache 800 read, 120 written · 2 API
 *   calls · 3.4 s", the status as its wire word so scripts can match it
 * @TALLY_RECEIPT_STYLE_MARKDOWN: the Markdown export's line: "*Receipt:
 *   $0.0123 · 1,200 input + 340 output tokens (cache: 800 read, 120
 *   written) · 3.4 s*", the status added when not `done`; no call count
 *   (the export has always left it out)
 *
 * The frames tally_receipt_dup_line() writes a receipt in. The parts inside
 * them (cost, counts, calls, time) are the same in all three.
 */
typedef enum {
  TALLY_RECEIPT_STYLE_WINDOW,
  TALLY_RECEIPT_STYLE_TERMINAL,
  TALLY_RECEIPT_STYLE_MARKDOWN,
} TallyReceiptStyle;

/**
 * TallyReceipt:
 * @status: (nullable): the turn's status: `done`, `cancelled` or `failed`;
 *   borrowed from the event
 * @has_cost: whether the cost is known
 * @cost_usd: the turn's cost in US dollars
 * @input_tokens: input tokens, summed over the turn's calls
 * @output_tokens: output tokens
 * @cache_read_tokens: input tokens read from the prompt cache
 * @cache_write_tokens: input tokens written to the prompt cache
 * @api_calls: the turn's API calls: its completed messages
 *   (`api_calls`) plus a call the server answered before the turn failed in
 *   it (`failed_calls`)
 * @duration_ms: the turn's wall-clock time in milliseconds
 *
 * What a turn cost, read from its `turn_finished` event
 * (docs/architecture.md §4.2) by tally_receipt_init().
 */
typedef struct {
  const char *status;
  gboolean    has_cost;
  double      cost_usd;
  gint64      input_tokens;
  gint64      output_tokens;
  gint64      cache_read_tokens;
  gint64      cache_write_tokens;
  gint64      api_calls;
  gint64      duration_ms;
} TallyReceipt;

void  tally_receipt_init     (TallyReceipt       *receipt,
                              JsonObject         *turn_finished);
char *tally_receipt_dup_line (const TallyReceipt *receipt,
                              TallyReceiptStyle   style);

G_END_DECLS
