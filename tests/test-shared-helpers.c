/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <string.h>

#include "tally-enums.h"
#include "tally-event.h"
#include "tally-format.h"
#include "tally-json.h"
#include "tally-tool-ask-user-question.h"
#include "tally-tool-exit-plan-mode.h"
#include "tally-types.h"

/* The small helpers the core's layers share instead of keeping private
 * copies (issue 11): each checked against known values. */

static void
test_json_set_string_or_null (void)
{
  g_autoptr(JsonObject) object = json_object_new ();
  JsonNode *node;

  tally_json_object_set_string_or_null (object, "request_id", "req_1");
  node = json_object_get_member (object, "request_id");
  g_assert_nonnull (node);
  g_assert_cmpint (json_node_get_value_type (node), ==, G_TYPE_STRING);
  g_assert_cmpstr (json_node_get_string (node), ==, "req_1");

  /* NULL writes a JSON null: the member is there, not left out. */
  tally_json_object_set_string_or_null (object, "stop_reason", NULL);
  node = json_object_get_member (object, "stop_reason");
  g_assert_nonnull (node);
  g_assert_true (JSON_NODE_HOLDS_NULL (node));

  /* It replaces a member already there, both ways. */
  tally_json_object_set_string_or_null (object, "request_id", NULL);
  g_assert_true (JSON_NODE_HOLDS_NULL (json_object_get_member (object, "request_id")));
  tally_json_object_set_string_or_null (object, "stop_reason", "end_turn");
  g_assert_cmpstr (tally_json_object_get_string (object, "stop_reason", NULL), ==, "end_turn");
  g_assert_cmpuint (json_object_get_size (object), ==, 2);
}

static void
test_json_set_string_unless_null (void)
{
  g_autoptr(JsonObject) object = json_object_new ();

  tally_json_object_set_string_unless_null (object, "tool_id", "toolu_1");
  g_assert_cmpstr (tally_json_object_get_string (object, "tool_id", NULL), ==, "toolu_1");

  /* NULL leaves the member out, and one already there as it was. */
  tally_json_object_set_string_unless_null (object, "sql", NULL);
  g_assert_false (json_object_has_member (object, "sql"));
  tally_json_object_set_string_unless_null (object, "tool_id", NULL);
  g_assert_cmpstr (tally_json_object_get_string (object, "tool_id", NULL), ==, "toolu_1");
  g_assert_cmpuint (json_object_get_size (object), ==, 1);
}

static void
test_format_time_utc (void)
{
  g_autofree char *epoch = tally_format_time_utc (0, "%Y-%m-%d %H:%M UTC", "unknown date");
  g_autofree char *iso = tally_format_time_utc (G_GINT64_CONSTANT (1700000000999999),
                                                "%Y-%m-%dT%H:%M:%SZ", "-");
  g_autofree char *before = tally_format_time_utc (G_GINT64_CONSTANT (-1000000),
                                                   "%Y-%m-%dT%H:%M:%SZ", "-");
  g_autofree char *too_late = tally_format_time_utc (G_MAXINT64, "%Y-%m-%d %H:%M UTC", "unknown date");
  g_autofree char *too_early = tally_format_time_utc (G_MININT64, "%Y", "-");

  g_assert_cmpstr (epoch, ==, "1970-01-01 00:00 UTC");
  /* The fraction of a second is dropped, not rounded. */
  g_assert_cmpstr (iso, ==, "2023-11-14T22:13:20Z");
  g_assert_cmpstr (before, ==, "1969-12-31T23:59:59Z");
  g_assert_cmpstr (too_late, ==, "unknown date");
  g_assert_cmpstr (too_early, ==, "-");
}

static void
test_enum_to_nick_or (void)
{
  g_assert_cmpstr (tally_enum_to_nick_or (TALLY_TYPE_MODE, TALLY_MODE_PLAN, TALLY_MODE_ASK), ==, "plan");
  g_assert_cmpstr (tally_enum_to_nick_or (TALLY_TYPE_MODE, 99, TALLY_MODE_AUTO), ==, "auto");
  g_assert_cmpstr (tally_enum_to_nick_or (TALLY_TYPE_MODE, -1, TALLY_MODE_ASK), ==, "ask");

  /* The _to_string() functions built on it keep their fallbacks. */
  g_assert_cmpstr (tally_mode_to_string (TALLY_MODE_AUTO), ==, "auto");
  g_assert_cmpstr (tally_mode_to_string (42), ==, "ask");
  g_assert_cmpstr (tally_turn_status_to_string (TALLY_TURN_CANCELLED), ==, "cancelled");
  g_assert_cmpstr (tally_turn_status_to_string (42), ==, "done");
  g_assert_cmpstr (tally_decision_to_string (TALLY_DECISION_ALLOW_ALWAYS), ==, "allow_always");
  g_assert_cmpstr (tally_decision_to_string (TALLY_DECISION_DENY_STOP), ==, "deny");
  g_assert_cmpstr (tally_decision_to_string (42), ==, "deny");
  g_assert_cmpstr (tally_event_type_to_name (TALLY_EVENT_TEXT_DELTA), ==, "text_delta");
  g_assert_cmpstr (tally_event_type_to_name (4242), ==, "unknown");
}

/* The card-backed tools share the base class's refusal to run. */
static void
test_card_tools_do_not_run (void)
{
  TallyTool *(*constructors[]) (void) = { tally_tool_ask_user_question_new, tally_tool_exit_plan_mode_new };
  const char *messages[] = { "AskUserQuestion is handled by Tally, not run.",
                             "ExitPlanMode is handled by Tally, not run." };

  for (guint i = 0; i < G_N_ELEMENTS (constructors); i++)
    {
      g_autoptr(TallyTool) tool = constructors[i] ();
      g_autoptr(JsonObject) input = json_object_new ();
      g_autoptr(GError) error = NULL;
      g_autofree char *text = tally_tool_run (tool, NULL, input, NULL, &error);

      g_assert_null (text);
      g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED);
      g_assert_cmpstr (error->message, ==, messages[i]);
    }
}

/* /tally/shared/json-to-string: numbers json-glib 1.6 writes as
 * `1e+20.0` come out as JSON and parse back to the same values; strings
 * and literals are left alone. */
static void
test_json_to_string (void)
{
  static const char source[] =
    "{\"a\":1e20,\"b\":[1e17,2.5e-7,1e308,-1e20,3.5,12],\"s\":\"x 1e+20.0 \\\"e5.0\",\"t\":true,\"f\":false,\"n\":null}";
  g_autoptr(JsonNode) node = json_from_string (source, NULL);
  g_autoptr(JsonNode) back = NULL;
  g_autofree char *text = NULL;
  g_autofree char *pretty = NULL;
  g_autofree char *none = tally_json_to_string (NULL, FALSE);
  g_autoptr(GError) error = NULL;
  JsonObject *object;
  JsonArray *b;

  g_assert_nonnull (node);
  text = tally_json_to_string (node, FALSE);
  g_assert_nonnull (strstr (text, "\"a\":1e+20,"));
  back = json_from_string (text, &error);
  g_assert_no_error (error);
  object = json_node_get_object (back);
  g_assert_cmpfloat (json_object_get_double_member (object, "a"), ==, 1e20);
  b = json_object_get_array_member (object, "b");
  g_assert_cmpfloat (json_array_get_double_element (b, 0), ==, 1e17);
  g_assert_cmpfloat (json_array_get_double_element (b, 1), ==, 2.5e-7);
  g_assert_cmpfloat (json_array_get_double_element (b, 2), ==, 1e308);
  g_assert_cmpfloat (json_array_get_double_element (b, 3), ==, -1e20);
  g_assert_cmpfloat (json_array_get_double_element (b, 4), ==, 3.5);
  g_assert_cmpint (json_array_get_int_element (b, 5), ==, 12);
  g_assert_cmpstr (json_object_get_string_member (object, "s"), ==, "x 1e+20.0 \"e5.0");
  g_assert_true (json_object_get_boolean_member (object, "t"));
  g_assert_false (json_object_get_boolean_member (object, "f"));

  pretty = tally_json_to_string (node, TRUE);
  g_clear_pointer (&back, json_node_unref);
  back = json_from_string (pretty, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (none, ==, "null");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/shared/json-set-string-or-null", test_json_set_string_or_null);
  g_test_add_func ("/tally/shared/json-to-string", test_json_to_string);
  g_test_add_func ("/tally/shared/json-set-string-unless-null", test_json_set_string_unless_null);
  g_test_add_func ("/tally/shared/format-time-utc", test_format_time_utc);
  g_test_add_func ("/tally/shared/enum-to-nick-or", test_enum_to_nick_or);
  g_test_add_func ("/tally/shared/card-tools-do-not-run", test_card_tools_do_not_run);

  return g_test_run ();
}
