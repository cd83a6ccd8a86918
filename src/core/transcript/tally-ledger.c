/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript"

#include "config.h"

#include "tally-ledger.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "tally-event.h"
#include "tally-format.h"
#include "tally-json.h"

/* The ledger of what left the machine (docs/ledger.md §4), read from a
 * session's `turn_started` and `request_sent` events: the text that
 * `tally-cli --ledger` prints and the window's "Sent to the API" dialog
 * shows. */

static void
append_strings (GString    *out,
                JsonArray  *array)
{
  for (guint i = 0; array != NULL && i < json_array_get_length (array); i++)
    {
      if (i > 0)
        g_string_append (out, ", ");
      g_string_append (out, json_array_get_string_element (array, i));
    }
}

/**
 * tally_ledger_dup_result_line:
 * @result: one element of a `request_sent` event's `results`
 *
 * One line for a tool result sent: the tool and its call id, the rows,
 * the bytes, the columns it came from and the redactions, e.g.
 * `query_database toolu_02 · 12 rows · 480 bytes · from Customer.Email ·
 * 12 values redacted`.
 *
 * Returns: (transfer full): the line, without a newline
 */
char *
tally_ledger_dup_result_line (JsonObject *result)
{
  GString *out = g_string_new (NULL);
  JsonArray *columns = tally_json_object_get_array (result, "columns");
  g_autofree char *bytes = tally_format_count (tally_json_object_get_int (result, "bytes", 0), TALLY_GROUPING_COMMA);
  gint64 redactions = tally_json_object_get_int (result, "redactions", 0);

  g_string_append_printf (out, "%s %s",
                          tally_json_object_get_string (result, "tool_name", "?"),
                          tally_json_object_get_string (result, "tool_id", "?"));
  if (json_object_get_boolean_member_with_default (result, "is_error", FALSE))
    g_string_append_printf (out, " · %s", _("error"));

  if (json_object_has_member (result, "rows") && !json_object_get_null_member (result, "rows"))
    {
      gint64 rows = tally_json_object_get_int (result, "rows", 0);
      g_autofree char *count = tally_format_count (rows, TALLY_GROUPING_COMMA);

      g_string_append (out, " · ");
      g_string_append_printf (out, g_dngettext (GETTEXT_PACKAGE, "%s row", "%s rows", (gulong) rows), count);
    }

  g_string_append (out, " · ");
  g_string_append_printf (out, _("%s bytes"), bytes);

  if (columns != NULL && json_array_get_length (columns) > 0)
    {
      g_string_append_printf (out, " · %s ", _("from"));
      append_strings (out, columns);
    }

  if (redactions > 0)
    {
      g_autofree char *count = tally_format_count (redactions, TALLY_GROUPING_COMMA);

      g_string_append (out, " · ");
      g_string_append_printf (out, g_dngettext (GETTEXT_PACKAGE, "%s value redacted",
                                                "%s values redacted", (gulong) redactions), count);
    }

  return g_string_free (out, FALSE);
}

/**
 * tally_ledger_foreach:
 * @events: (element-type JsonObject): a session's events, in order
 * @func: (scope call): called for every `turn_started` (with @request 0)
 *   and every `request_sent` event (with its number in the turn, from 1)
 * @user_data: passed to @func
 *
 * Walks the ledger of a session: its turns and their requests.
 */
void
tally_ledger_foreach (GPtrArray       *events,
                      TallyLedgerFunc  func,
                      gpointer         user_data)
{
  guint turn = 0;
  guint request = 0;

  for (guint i = 0; i < events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (events, i);

      TallyEventType type = tally_event_get_event_type (event);

      /* Only these two kinds make the ledger: a filter, so a new event
       * kind needs nothing here (docs/architecture.md §4.8). */
      if (type == TALLY_EVENT_TURN_STARTED)
        {
          request = 0;
          func (event, ++turn, 0, user_data);
        }
      else if (type == TALLY_EVENT_REQUEST_SENT)
        func (event, turn, ++request, user_data);
    }
}

static void
append_text_cb (JsonObject *event,
                guint       turn,
                guint       request,
                gpointer    user_data)
{
  GString *out = user_data;

  if (request == 0)
    {
      g_autofree char *first_line = g_strdup (tally_event_get_text (event) ? tally_event_get_text (event) : "");
      char *newline = strchr (first_line, '\n');

      if (newline != NULL)
        *newline = '\0';
      g_string_append_printf (out, "%s%s %u · %s\n", out->len > 0 ? "\n" : "", _("Turn"), turn, first_line);
      return;
    }

  {
    JsonArray *results = tally_json_object_get_array (event, "results");
    guint n = results ? json_array_get_length (results) : 0;
    g_autofree char *bytes = tally_format_count (tally_json_object_get_int (event, "bytes", 0),
                                                 TALLY_GROUPING_COMMA);

    g_string_append_printf (out, "  %s %u · ", _("Request"), request);
    g_string_append_printf (out, _("%s bytes"), bytes);
    if (n == 0)
      g_string_append_printf (out, " · %s", _("no new tool results"));
    g_string_append_c (out, '\n');

    for (guint r = 0; r < n; r++)
      {
        g_autofree char *line = tally_ledger_dup_result_line (json_array_get_object_element (results, r));

        g_string_append_printf (out, "    %s\n", line);
      }
  }
}

/**
 * tally_ledger_dup_text:
 * @events: (element-type JsonObject): a session's events, in order
 *
 * The ledger as text: per turn (its message), each request with its size
 * and one line per tool result it sent for the first time
 * (tally_ledger_dup_result_line()).
 *
 * Returns: (transfer full): the text, ending in a newline; a sentence
 *   saying so when the session sent nothing
 */
char *
tally_ledger_dup_text (GPtrArray *events)
{
  GString *out = g_string_new (NULL);

  tally_ledger_foreach (events, append_text_cb, out);

  if (out->len == 0)
    g_string_append_printf (out, "%s\n", _("This session sent nothing to the API."));

  return g_string_free (out, FALSE);
}

/**
 * tally_ledger_get_totals:
 * @events: (element-type JsonObject): a session's events
 * @totals: (out caller-allocates): the sums
 *
 * Sums the `request_sent` events of @events.
 */
void
tally_ledger_get_totals (GPtrArray         *events,
                         TallyLedgerTotals *totals)
{
  memset (totals, 0, sizeof *totals);

  for (guint i = 0; i < events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (events, i);
      JsonArray *results;

      if (tally_event_get_event_type (event) != TALLY_EVENT_REQUEST_SENT)
        continue;

      totals->requests++;
      results = tally_json_object_get_array (event, "results");
      for (guint r = 0; results != NULL && r < json_array_get_length (results); r++)
        {
          JsonObject *result = json_array_get_object_element (results, r);

          totals->results++;
          totals->rows += tally_json_object_get_int (result, "rows", 0);
          totals->bytes += tally_json_object_get_int (result, "bytes", 0);
          totals->redactions += tally_json_object_get_int (result, "redactions", 0);
        }
    }
}
