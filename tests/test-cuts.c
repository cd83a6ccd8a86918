/* SPDX-License-Identifier: GPL-3.0-or-later */

/* A stream cut at every byte offset of every SSE fixture (issue 10, "Keep
 * them closed"): for each fixture under tests/fixtures/sse and each offset
 * N, the mock sends the fixture's first N bytes and closes the connection
 * (`cut_after_bytes`, with the full Content-Length announced, so the client
 * sees a connection lost mid-body). The agent's turn must end `failed` with
 * one `error` event, of kind `network` for the cut, or of kind `stream`
 * once the bytes sent hold the fixture's own `error` event or invalid JSON;
 * the partial reply must stay out of the conversation; and the next request
 * of the same session must be accepted by the mock, whose `check_history`
 * validates the conversation like the API (roles, tool_use/tool_result
 * pairing, empty blocks), and complete.
 *
 * Speed: the agent runs in this process, a fresh TallyAgent per offset,
 * with no tools (the requests stay small; a cut reply never reaches a
 * tool) and no retries (a cut is not retried after a back-off). Three
 * lanes run at once (TALLY_CUTS_LANES overrides), each with one mock
 * process that serves its whole share of the offsets from one long list
 * of responses (cut, answer, cut, answer, …, in order). Every offset is
 * tried in the plain build. Under AddressSanitizer (detected with
 * __SANITIZE_ADDRESS__ or __has_feature(address_sanitizer)), where each
 * request costs several times more, the test tries every 16th offset plus
 * every offset within 4 bytes of an event boundary (the blank line ending
 * one event and the start of the next, where the interesting cuts are),
 * about an eighth of them; TALLY_CUTS_EVERY_OFFSET=1 forces every offset
 * there too. */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "tally-agent.h"
#include "tally-event.h"
#include "tally-test-mock.h"

#if defined(__SANITIZE_ADDRESS__)
# define CUTS_UNDER_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define CUTS_UNDER_ASAN 1
# endif
#endif
#ifndef CUTS_UNDER_ASAN
# define CUTS_UNDER_ASAN 0
#endif

/* Under ASan: every STRIDE-th offset, and all within NEAR of a boundary. */
#define STRIDE 16
#define NEAR 4

/* What a fixture's bytes hold, found by reading them as an SSE client
 * would, independently of Tally's decoder. */
typedef struct {
  GBytes *bytes;
  /* Offsets just past each event's terminating blank line (and the end of
   * the file when the last event is unterminated), ascending. */
  GArray *boundaries;
  /* The offset from which the bytes received hold an event that fails the
   * stream by itself (an `error` event, or data that is not JSON), or
   * G_MAXSIZE when there is none. */
  gsize   fatal_from;
} SseFacts;

static void
sse_facts_clear (SseFacts *facts)
{
  g_clear_pointer (&facts->bytes, g_bytes_unref);
  g_clear_pointer (&facts->boundaries, g_array_unref);
}

/* Whether one dispatched event fails the stream on its own. */
static gboolean
event_is_fatal (const char *name,
                GString    *data)
{
  g_autoptr(JsonParser) parser = json_parser_new ();

  if (g_strcmp0 (name, "error") == 0)
    return TRUE;
  if (data->len == 0)
    return FALSE;
  if (!json_parser_load_from_data (parser, data->str, data->len - 1, NULL))
    return TRUE;
  return JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)) &&
         g_strcmp0 (json_object_get_string_member_with_default (
                      json_node_get_object (json_parser_get_root (parser)), "type", ""),
                    "error") == 0;
}

/* Reads @path the way an event-stream reader does (lines end in CRLF, LF
 * or CR; a blank line dispatches; `event:` names, `data:` lines append;
 * anything else is ignored; the end of input dispatches what is pending). */
static void
sse_facts_load (SseFacts   *facts,
                const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *name = NULL;
  g_autoptr(GString) data = g_string_new (NULL);
  const char *text;
  gsize length;
  gsize pos = 0;
  gboolean pending = FALSE;
  char *contents = NULL;

  g_file_get_contents (path, &contents, &length, &error);
  g_assert_no_error (error);
  facts->bytes = g_bytes_new_take (contents, length);
  facts->boundaries = g_array_new (FALSE, FALSE, sizeof (gsize));
  facts->fatal_from = G_MAXSIZE;
  text = contents;

  while (pos <= length)
    {
      gsize start = pos;
      gsize end = pos;
      gboolean at_eof;

      while (end < length && text[end] != '\n' && text[end] != '\r')
        end++;
      at_eof = end == length;
      pos = end;
      if (!at_eof)
        pos += (text[end] == '\r' && end + 1 < length && text[end + 1] == '\n') ? 2 : 1;

      if (end == start && !at_eof)
        {
          /* A blank line: dispatch. */
          if (pending)
            {
              g_array_append_val (facts->boundaries, pos);
              if (facts->fatal_from == G_MAXSIZE && event_is_fatal (name, data))
                facts->fatal_from = pos;
            }
          g_clear_pointer (&name, g_free);
          g_string_truncate (data, 0);
          pending = FALSE;
          continue;
        }

      if (end > start && text[start] != ':')
        {
          const char *colon = memchr (text + start, ':', end - start);
          gsize field_len = colon != NULL ? (gsize) (colon - (text + start)) : end - start;
          const char *value = colon != NULL ? colon + 1 : text + end;

          if (value < text + end && *value == ' ')
            value++;
          if (field_len == 5 && memcmp (text + start, "event", 5) == 0)
            {
              g_free (name);
              name = g_strndup (value, text + end - value);
              pending = TRUE;
            }
          else if (field_len == 4 && memcmp (text + start, "data", 4) == 0)
            {
              g_string_append_len (data, value, text + end - value);
              g_string_append_c (data, '\n');
              pending = TRUE;
            }
        }

      if (at_eof)
        {
          /* The end of input delivers an unterminated last event. */
          if (pending)
            {
              g_array_append_val (facts->boundaries, length);
              if (facts->fatal_from == G_MAXSIZE && event_is_fatal (name, data))
                facts->fatal_from = length;
            }
          break;
        }
    }
}

static gboolean
every_offset (void)
{
  return !CUTS_UNDER_ASAN || g_strcmp0 (g_getenv ("TALLY_CUTS_EVERY_OFFSET"), "1") == 0;
}

/* The offsets to try: every N < length (a cut), in the plain build; plus
 * the whole body when the fixture fails by itself at its very end, so that
 * its own error kind is seen too. */
static GArray *
offsets_for (const SseFacts *facts)
{
  GArray *offsets = g_array_new (FALSE, FALSE, sizeof (gsize));
  gsize length = g_bytes_get_size (facts->bytes);
  gboolean all = every_offset ();

  for (gsize n = 0; n < length; n++)
    {
      gboolean take = all || n % STRIDE == 0 || n + 1 == length;

      for (guint i = 0; !take && i < facts->boundaries->len; i++)
        {
          gsize b = g_array_index (facts->boundaries, gsize, i);

          take = (n + NEAR >= b) && (n <= b + NEAR);
        }
      if (take)
        g_array_append_val (offsets, n);
    }

  if (facts->fatal_from <= length)
    g_array_append_val (offsets, length);

  return offsets;
}

/* The scenario: for each offset, the cut fixture, then a plain answer
 * that quotes the last user text (so it shows which request it answered). */
static char *
scenario_for (const char *path,
              GArray     *offsets)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "check_history");
  json_builder_add_boolean_value (builder, TRUE);
  json_builder_set_member_name (builder, "responses");
  json_builder_begin_array (builder);
  for (guint i = 0; i < offsets->len; i++)
    {
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "sse_file");
      json_builder_add_string_value (builder, path);
      json_builder_set_member_name (builder, "cut_after_bytes");
      json_builder_add_int_value (builder, (gint64) g_array_index (offsets, gsize, i));
      json_builder_end_object (builder);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "message");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "content");
      json_builder_begin_array (builder);
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "text");
      json_builder_set_member_name (builder, "text");
      json_builder_add_string_value (builder, "Recovered: {{last_user_text}}");
      json_builder_end_object (builder);
      json_builder_end_array (builder);
      json_builder_set_member_name (builder, "stop_reason");
      json_builder_add_string_value (builder, "end_turn");
      json_builder_end_object (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/* A lane: one mock, one client, and the offsets it serves in order, one
 * at a time. Several lanes run at once on the main loop, so the test and
 * the mocks keep both cores busy; each lane's mock answers in order, so no
 * `match` rule is needed. */
typedef struct {
  const char        *fixture;
  const SseFacts    *facts;
  TallyToolRegistry *tools;
  TallyTestMock     *mock;
  TallyClient       *client;
  GArray            *offsets;       /* gsize, this lane's share */
  guint              next;          /* index into offsets */
  guint             *running;       /* lanes still running */
  GMainLoop         *loop;

  /* The offset being tried. */
  TallyAgent        *agent;
  GPtrArray         *events;        /* JsonObject*, both turns */
  gsize              n;
  guint              second_from;   /* first event of the second turn */
  char              *second;        /* the second prompt */
} Lane;

static void lane_start_offset (Lane *lane);

static void
event_cb (TallyAgent *agent,
          JsonObject *event,
          Lane       *lane)
{
  g_ptr_array_add (lane->events, json_object_ref (event));
}

/* Counts the events of @type from index @from on. */
static guint
count_from (GPtrArray  *events,
            guint       from,
            const char *type)
{
  guint n = 0;

  for (guint i = from; i < events->len; i++)
    if (g_str_equal (tally_event_get_type_name (g_ptr_array_index (events, i)), type))
      n++;
  return n;
}

static JsonObject *
find_from (GPtrArray  *events,
           guint       from,
           const char *type)
{
  for (guint i = from; i < events->len; i++)
    if (g_str_equal (tally_event_get_type_name (g_ptr_array_index (events, i)), type))
      return g_ptr_array_index (events, i);
  return NULL;
}

static char *
text_from (GPtrArray *events,
           guint      from)
{
  GString *text = g_string_new (NULL);

  for (guint i = from; i < events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (events, i);

      if (g_str_equal (tally_event_get_type_name (event), "text_delta"))
        g_string_append (text, json_object_get_string_member (event, "text"));
    }
  return g_string_free (text, FALSE);
}

static void
lane_finish_offset (Lane *lane)
{
  g_signal_handlers_disconnect_by_data (lane->agent, lane);
  g_clear_object (&lane->agent);
  g_clear_pointer (&lane->events, g_ptr_array_unref);
  g_clear_pointer (&lane->second, g_free);
  lane->next++;
  lane_start_offset (lane);
}

/* The second turn: accepted by the mock (which checks the history) and
 * done, answering this very prompt. */
static void
second_done_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  Lane *lane = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *expected_text = g_strdup_printf ("Recovered: %s", lane->second);
  TallyConversation *conversation = tally_agent_get_conversation (lane->agent);
  TallyTurnStatus status;

  status = tally_agent_send_finish (TALLY_AGENT (object), result, &error);
  if (status != TALLY_TURN_DONE)
    g_error ("%s cut after %" G_GSIZE_FORMAT " bytes: the next turn ended %s: %s",
             lane->fixture, lane->n, tally_turn_status_to_string (status),
             error != NULL ? error->message : "no error");
  g_assert_no_error (error);

  text = text_from (lane->events, lane->second_from);
  g_assert_cmpstr (text, ==, expected_text);
  g_assert_cmpuint (count_from (lane->events, lane->second_from, "error"), ==, 0);
  g_assert_cmpuint (count_from (lane->events, lane->second_from, "api_call"), ==, 1);
  g_assert_cmpuint (tally_conversation_get_n_messages (conversation), ==, 2);
  g_assert_cmpstr (tally_conversation_get_role (conversation, 0), ==, "user");
  g_assert_cmpstr (tally_conversation_get_role (conversation, 1), ==, "assistant");

  /* Both turns numbered their events 1, 2, 3, … without a gap. */
  for (guint i = 0; i < lane->events->len; i++)
    g_assert_cmpint (json_object_get_int_member (g_ptr_array_index (lane->events, i), "seq"), ==, i + 1);

  lane_finish_offset (lane);
}

/* The cut turn: failed, with one error of the expected kind, and nothing
 * of the partial reply in the history. */
static void
first_done_cb (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  Lane *lane = user_data;
  g_autoptr(GError) error = NULL;
  gboolean fatal = lane->n >= lane->facts->fatal_from;
  const char *expected_kind = fatal ? "stream" : "network";
  TallyConversation *conversation = tally_agent_get_conversation (lane->agent);
  GPtrArray *events = lane->events;
  TallyTurnStatus status;
  JsonObject *event;

  status = tally_agent_send_finish (TALLY_AGENT (object), result, &error);
  if (status != TALLY_TURN_FAILED)
    g_error ("%s cut after %" G_GSIZE_FORMAT " bytes: the turn ended %s, not failed",
             lane->fixture, lane->n, tally_turn_status_to_string (status));
  g_assert_nonnull (error);

  /* One error, of the expected kind, then turn_finished failed; the reply
   * was never complete, so no tool was announced and none ran. */
  g_assert_cmpuint (count_from (events, 0, "error"), ==, 1);
  event = find_from (events, 0, "error");
  if (g_strcmp0 (json_object_get_string_member (event, "kind"), expected_kind) != 0)
    g_error ("%s cut after %" G_GSIZE_FORMAT " bytes: error kind %s (%s), expected %s",
             lane->fixture, lane->n, json_object_get_string_member (event, "kind"),
             json_object_get_string_member (event, "message"), expected_kind);
  g_assert_cmpuint (count_from (events, 0, "api_call"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (find_from (events, 0, "api_call"), "status"), ==, 200);
  g_assert_cmpuint (count_from (events, 0, "retry"), ==, 0);
  g_assert_cmpuint (count_from (events, 0, "tool_use_start"), ==, 0);
  g_assert_cmpuint (count_from (events, 0, "tool_result"), ==, 0);
  event = g_ptr_array_index (events, events->len - 1);
  g_assert_cmpstr (tally_event_get_type_name (event), ==, "turn_finished");
  g_assert_cmpstr (json_object_get_string_member (event, "status"), ==, "failed");
  g_assert_cmpint (json_object_get_int_member (event, "api_calls"), ==, 0);

  /* The partial reply stays out of the history: only the prompt is left. */
  g_assert_cmpuint (tally_conversation_get_n_messages (conversation), ==, 1);
  g_assert_cmpstr (tally_conversation_get_role (conversation, 0), ==, "user");

  /* The next request of the same session. */
  lane->second_from = events->len;
  lane->second = g_strdup_printf ("Next after %" G_GSIZE_FORMAT, lane->n);
  tally_agent_send_async (lane->agent, &(TallyTurnRequest) { .text = lane->second, .mode = TALLY_MODE_ASK },
                          NULL, second_done_cb, lane);
}

static void
lane_start_offset (Lane *lane)
{
  g_autofree char *first = NULL;

  if (lane->next >= lane->offsets->len)
    {
      if (--*lane->running == 0)
        g_main_loop_quit (lane->loop);
      return;
    }

  lane->n = g_array_index (lane->offsets, gsize, lane->next);
  lane->agent = tally_agent_new (lane->client, lane->tools);
  lane->events = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  g_signal_connect (lane->agent, "event", G_CALLBACK (event_cb), lane);

  first = g_strdup_printf ("Cut %s after %" G_GSIZE_FORMAT " bytes", lane->fixture, lane->n);
  tally_agent_send_async (lane->agent, &(TallyTurnRequest) { .text = first, .mode = TALLY_MODE_ASK },
                          NULL, first_done_cb, lane);
}

static guint
n_lanes (void)
{
  const char *value = g_getenv ("TALLY_CUTS_LANES");
  guint64 n = 3;

  if (value != NULL && !g_ascii_string_to_unsigned (value, 10, 1, 16, &n, NULL))
    g_error ("TALLY_CUTS_LANES=%s: expected 1 to 16", value);
  return (guint) n;
}

static void
test_cut_fixture (gconstpointer data)
{
  const char *fixture = data;
  g_autofree char *path = tally_test_fixture_path (fixture);
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new ();
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GArray) offsets = NULL;
  SseFacts facts = { 0 };
  gint64 started = g_get_monotonic_time ();
  guint lanes_n = n_lanes ();
  Lane *lanes = g_new0 (Lane, lanes_n);
  guint running = 0;

  sse_facts_load (&facts, path);
  g_assert_cmpuint (facts.boundaries->len, >, 0);
  offsets = offsets_for (&facts);

  for (guint l = 0; l < lanes_n; l++)
    {
      Lane *lane = &lanes[l];
      g_autoptr(GError) error = NULL;
      g_autofree char *scenario = NULL;

      lane->fixture = fixture;
      lane->facts = &facts;
      lane->tools = tools;
      lane->loop = loop;
      lane->running = &running;
      lane->offsets = g_array_new (FALSE, FALSE, sizeof (gsize));
      for (guint i = l; i < offsets->len; i += lanes_n)
        g_array_append_val (lane->offsets, g_array_index (offsets, gsize, i));
      if (lane->offsets->len == 0)
        continue;

      scenario = scenario_for (path, lane->offsets);
      lane->mock = tally_test_mock_start (scenario, &error);
      g_assert_no_error (error);
      lane->client = tally_client_new (tally_test_mock_get_base_url (lane->mock), "sk-test-key");
      tally_client_set_max_retries (lane->client, 0);
      running++;
    }

  for (guint l = 0; l < lanes_n; l++)
    if (lanes[l].mock != NULL)
      lane_start_offset (&lanes[l]);
  if (running > 0)
    g_main_loop_run (loop);

  for (guint l = 0; l < lanes_n; l++)
    {
      Lane *lane = &lanes[l];

      g_assert_cmpuint (lane->next, ==, lane->offsets->len);
      /* Two requests per offset, nothing more (no retry, no tool loop). */
      if (lane->mock != NULL)
        g_assert_cmpuint (tally_test_mock_get_n_requests (lane->mock), ==, 2 * lane->offsets->len);
      g_clear_object (&lane->client);
      g_clear_pointer (&lane->mock, tally_test_mock_free);
      g_array_unref (lane->offsets);
    }
  g_free (lanes);

  g_test_message ("%s: %u offsets of %" G_GSIZE_FORMAT " bytes (%u event boundaries, %s) in %.1f s",
                  fixture, offsets->len, g_bytes_get_size (facts.bytes), facts.boundaries->len,
                  facts.fatal_from == G_MAXSIZE ? "no error of its own" : "fails by itself",
                  (g_get_monotonic_time () - started) / 1e6);
  sse_facts_clear (&facts);
}

/* The facts reader agrees with what the fixtures' README says about them. */
static void
test_facts (void)
{
  struct { const char *name; gboolean fatal; } expected[] = {
    { "docs_basic_text.sse", FALSE },
    { "docs_error_event.sse", TRUE },
    { "docs_web_search_server_tool_use.sse", TRUE },
    { "sdk_py_error_event.sse", TRUE },
    { "sdk_py_basic_response.sse", FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_autofree char *path = tally_test_fixture_path (expected[i].name);
      SseFacts facts = { 0 };

      sse_facts_load (&facts, path);
      g_assert_cmpint (facts.fatal_from != G_MAXSIZE, ==, expected[i].fatal);
      sse_facts_clear (&facts);
    }

  /* docs_error_event.sse is one unterminated event: it fails only once
   * the whole body is in; sdk_py_error_event.sse ends with its blank line. */
  {
    g_autofree char *path = tally_test_fixture_path ("docs_error_event.sse");
    SseFacts facts = { 0 };

    sse_facts_load (&facts, path);
    g_assert_cmpuint (facts.boundaries->len, ==, 1);
    g_assert_cmpuint (facts.fatal_from, ==, g_bytes_get_size (facts.bytes));
    sse_facts_clear (&facts);
  }
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *fixtures = NULL;
  g_autoptr(GError) error = NULL;
  const char *name;

  /* The mock is on 127.0.0.1: asking the system's proxy settings for each
   * of the thousands of connections would only cost time. */
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/cuts/facts", test_facts);

  fixtures = g_build_filename (tally_test_data_dir (), "fixtures", "sse", NULL);
  dir = g_dir_open (fixtures, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".sse"))
      g_ptr_array_add (names, g_strdup (name));
  g_assert_cmpuint (names->len, >, 0);
  g_ptr_array_sort (names, compare_names);

  for (guint i = 0; i < names->len; i++)
    {
      const char *fixture = g_ptr_array_index (names, i);
      g_autofree char *base = g_strndup (fixture, strlen (fixture) - strlen (".sse"));
      g_autofree char *test_path = g_strdup_printf ("/tally/cuts/%s", base);

      g_test_add_data_func (test_path, fixture, test_cut_fixture);
    }

  return g_test_run ();
}
