/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include "tally-event.h"

/* The constructors of the `error` and `turn_finished` events, which the
 * agent and the session's repair of an unfinished turn share instead of
 * setting the members by hand in four and two places (issue 11). The
 * members come in the order docs/architecture.md §4 lists them. */

static char *
fields_json (JsonObject *fields)
{
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), fields);

  return json_to_string (node, FALSE);
}

static void
test_error (void)
{
  g_autoptr(JsonObject) event = tally_event_new_error ("http", "Overloaded", TRUE, "req_1");
  g_autofree char *json = fields_json (event);

  g_assert_cmpstr (json, ==,
                   "{\"type\":\"error\",\"kind\":\"http\",\"message\":\"Overloaded\","
                   "\"retryable\":true,\"request_id\":\"req_1\"}");
  g_assert_cmpint (tally_event_get_event_type (event), ==, TALLY_EVENT_ERROR);
}

static void
test_error_without_request (void)
{
  g_autoptr(JsonObject) event = tally_event_new_error ("budget", "Spend cap reached", FALSE, NULL);
  g_autofree char *json = fields_json (event);

  /* No request id is a JSON null, not a missing member. */
  g_assert_cmpstr (json, ==,
                   "{\"type\":\"error\",\"kind\":\"budget\",\"message\":\"Spend cap reached\","
                   "\"retryable\":false,\"request_id\":null}");
}

static void
test_turn_finished (void)
{
  g_autoptr(JsonObject) priced = tally_event_new_turn_finished (TALLY_TURN_DONE, TRUE, 0.25, 1500, 3);
  g_autoptr(JsonObject) unpriced = tally_event_new_turn_finished (TALLY_TURN_FAILED, FALSE, 9.0, 0, 1);
  g_autofree char *priced_json = fields_json (priced);
  g_autofree char *unpriced_json = fields_json (unpriced);

  g_assert_cmpstr (priced_json, ==,
                   "{\"type\":\"turn_finished\",\"status\":\"done\",\"cost_usd\":0.25,"
                   "\"duration_ms\":1500,\"api_calls\":3}");
  /* An unknown price is null whatever cost was passed. */
  g_assert_cmpstr (unpriced_json, ==,
                   "{\"type\":\"turn_finished\",\"status\":\"failed\",\"cost_usd\":null,"
                   "\"duration_ms\":0,\"api_calls\":1}");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/event-new/error", test_error);
  g_test_add_func ("/tally/event-new/error-without-request", test_error_without_request);
  g_test_add_func ("/tally/event-new/turn-finished", test_turn_finished);

  return g_test_run ();
}
