/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * TallyLedgerTotals:
 * @requests: requests sent
 * @results: tool results sent
 * @rows: rows of query results sent
 * @bytes: bytes of tool results sent (their JSON text in the requests)
 * @redactions: values replaced by `[redacted]`
 *
 * What a session sent, summed over its `request_sent` events.
 */
typedef struct
{
  gint64 requests;
  gint64 results;
  gint64 rows;
  gint64 bytes;
  gint64 redactions;
} TallyLedgerTotals;

/**
 * TallyLedgerFunc:
 * @event: a `turn_started` or `request_sent` event
 * @turn: the turn's number in the session, from 1
 * @request: 0 for the `turn_started` event; else the request's number in
 *   the turn, from 1
 * @user_data: closure
 *
 * Called by tally_ledger_foreach().
 */
typedef void (*TallyLedgerFunc) (JsonObject *event,
                                 guint       turn,
                                 guint       request,
                                 gpointer    user_data);

void      tally_ledger_foreach         (GPtrArray         *events,
                                        TallyLedgerFunc    func,
                                        gpointer           user_data);
char     *tally_ledger_dup_result_line (JsonObject        *result);
char     *tally_ledger_dup_text        (GPtrArray         *events);
void      tally_ledger_get_totals      (GPtrArray         *events,
                                        TallyLedgerTotals *totals);

G_END_DECLS
