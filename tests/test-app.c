/* SPDX-License-Identifier: GPL-3.0-or-later */

/* End-to-end tests of `tally`, the GTK application, run in-process under
 * Xvfb: the real TallyApplication parses its command line, opens a store
 * in a temporary folder and talks to the mock Messages API. The tests drive
 * the window the way an analyst does (composer, sidebar, actions) and check
 * what it shows, what it stored and what it sent. Screenshots of a finished
 * turn, light and dark, are written to $G_TEST_BUILDDIR/artifacts/. */

#define G_LOG_DOMAIN "test-app"

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <gtk/gtk.h>

#ifdef __SANITIZE_ADDRESS__
# include <sanitizer/lsan_interface.h>
#endif

#include "tally-application-private.h"
#include "tally-block-row.h"
#include "tally-database-dialog.h"
#include "tally-data-import-bar.h"
#include "tally-error-banner.h"
#include "tally-file-chip.h"
#include "tally-event.h"
#include "tally-markdown-view.h"
#include "tally-pg-source.h"
#include "tally-model-cache.h"
#include "tally-model-table.h"
#include "tally-preferences-window.h"
#include "tally-receipt-row.h"
#include "tally-report-window.h"
#include "tally-result-table.h"
#include "tally-secret.h"
#include "tally-session-row.h"
#include "tally-store.h"
#include "tally-test-app.h"
#include "tally-test-mock.h"
#include "tally-test-pg.h"
#include "tally-test-ui.h"
#include "tally-tool-chip.h"
#include "tally-window-private.h"


#define QUESTION "Which store sold the most in March?"
#define MARCH_SQL "SELECT st.name AS store, ROUND(SUM(s.quantity * s.unit_price_gbp), 2) AS revenue_gbp " \
                  "FROM sales AS s JOIN stores AS st USING (store_id) " \
                  "WHERE s.sold_on BETWEEN '2025-03-01' AND '2025-03-31' " \
                  "GROUP BY st.store_id ORDER BY revenue_gbp DESC"
#define OFFLINE_MESSAGE "You’re offline — saved sessions still open; sending needs a connection"

/* The March question: the schema first, then one query, then an answer in
 * markdown (heading, list, and the real query result in a code block). */
static const char march_scenario[] =
  "{\n"
  "  \"models\": [\n"
  "    {\"type\": \"model\", \"id\": \"claude-sonnet-5\", \"display_name\": \"Claude Sonnet 5\"},\n"
  "    {\"type\": \"model\", \"id\": \"claude-mock-large-1\", \"display_name\": \"Claude Mock Large\"}\n"
  "  ],\n"
  "  \"responses\": [\n"
  "    {\"message\": {\"content\": [\n"
  "       {\"type\": \"text\", \"text\": \"Let me look at the tables first.\"},\n"
  "       {\"type\": \"tool_use\", \"id\": \"toolu_01Schema\", \"name\": \"get_schema\", \"input\": {}}],\n"
  "     \"usage\": {\"input_tokens\": 2100, \"output_tokens\": 30}}},\n"
  "    {\"match\": {\"contains\": \"toolu_01Schema\"},\n"
  "     \"message\": {\"content\": [\n"
  "       {\"type\": \"tool_use\", \"id\": \"toolu_02March\", \"name\": \"query_database\",\n"
  "        \"input\": {\"sql\": \"" MARCH_SQL "\"}}],\n"
  "     \"usage\": {\"input_tokens\": 2900, \"output_tokens\": 80}}},\n"
  "    {\"match\": {\"contains\": \"toolu_02March\"},\n"
  "     \"message\": {\"content\": [\n"
  "       {\"type\": \"text\", \"text\": \"## March sales by store\\n\\nRevenue in pounds, from the sales lines of March 2025:\\n\\n```\\n{{last_tool_result}}\\n```\\n\\n- The first row is the store that sold the most.\\n- Briggate opened on 15 March, so its month is short.\\n\"}],\n"
  "     \"usage\": {\"input_tokens\": 3300, \"output_tokens\": 140}}}\n"
  "  ]\n"
  "}\n";

/* A turn that stalls after its first bytes, for Stop. */
static const char stall_scenario[] =
  "{\n"
  "  \"responses\": [\n"
  "    {\"message\": {\"content\": [{\"type\": \"text\", \"text\": \"Counting the receipts of every store, one by one, day by day, from the first of January to the last of June, then adding them up per store and per month so the totals can be compared side by side…\"}]},\n"
  "     \"stall_after_bytes\": 1400}\n"
  "  ]\n"
  "}\n";

/* Harness */


/* Widget lookups */

static void
collect (GtkWidget *widget,
         GType      type,
         GPtrArray *found)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    g_ptr_array_add (found, widget);

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect (child, type, found);
}

static GPtrArray *
find_all (GtkWidget *root,
          GType      type)
{
  GPtrArray *found = g_ptr_array_new ();

  collect (root, type, found);
  return found;
}

static guint
count_visible_rows (GtkListBox *list)
{
  guint n = 0;

  for (int i = 0;; i++)
    {
      GtkListBoxRow *row = gtk_list_box_get_row_at_index (list, i);

      if (row == NULL)
        break;
      if (gtk_widget_get_child_visible (GTK_WIDGET (row)) && gtk_widget_get_visible (GTK_WIDGET (row)))
        n++;
    }
  return n;
}

static TallySessionRow *
find_session_row (TallyWindow *window,
                  const char  *id)
{
  GtkListBox *list = _tally_window_get_session_list (window);

  for (int i = 0;; i++)
    {
      GtkListBoxRow *row = gtk_list_box_get_row_at_index (list, i);

      if (row == NULL)
        return NULL;
      if (TALLY_IS_SESSION_ROW (row) && g_strcmp0 (tally_session_row_get_id (TALLY_SESSION_ROW (row)), id) == 0)
        return TALLY_SESSION_ROW (row);
    }
}

/* Screenshots */


/* Fixtures: a store in a temporary folder, and sessions written straight
 * into it as event logs (what a finished turn leaves behind). */

/* A store in a temporary folder (tests/tally-test-app.h). */
typedef TallyTestAppFixture Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  tally_test_app_fixture_set_up (fixture, data);
  /* Tests run with the key from the environment unless they unset it. */
  g_setenv ("ANTHROPIC_API_KEY", "sk-test-key", TRUE);
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
}

static void
append (TallyStore *store,
        const char *session_id,
        const char *turn_id,
        gint64     *seq,
        JsonObject *fields)
{
  g_autoptr(JsonObject) event = tally_event_stamp (fields, (*seq)++, g_get_real_time (), session_id, turn_id);
  g_autoptr(GError) error = NULL;

  json_object_unref (fields);
  g_assert_true (tally_store_append_event (store, event, &error));
  g_assert_no_error (error);
}

/* Writes a finished one-turn session; returns its id. */
static char *
seed_session (const char *store_path,
              const char *title,
              const char *answer)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *id = g_uuid_string_random ();
  g_autofree char *turn = g_uuid_string_random ();
  gint64 seq = 1;
  JsonObject *fields;

  store = tally_store_open (store_path, &error);
  g_assert_no_error (error);

  fields = tally_event_new (TALLY_EVENT_SESSION_CREATED);
  json_object_set_string_member (fields, "title", title);
  json_object_set_string_member (fields, "model", "claude-sonnet-5");
  json_object_set_string_member (fields, "workspace", g_get_tmp_dir ());
  json_object_set_string_member (fields, "database", g_getenv ("TALLY_SAMPLE_DB"));
  append (store, id, NULL, &seq, fields);

  fields = tally_event_new (TALLY_EVENT_TURN_STARTED);
  json_object_set_string_member (fields, "mode", "ask");
  json_object_set_boolean_member (fields, "thinking", FALSE);
  json_object_set_string_member (fields, "model", "claude-sonnet-5");
  json_object_set_string_member (fields, "text", title);
  append (store, id, turn, &seq, fields);

  fields = tally_event_new (TALLY_EVENT_TEXT_DELTA);
  json_object_set_int_member (fields, "call", 0);
  json_object_set_int_member (fields, "block", 0);
  json_object_set_string_member (fields, "text", answer);
  append (store, id, turn, &seq, fields);

  fields = tally_event_new (TALLY_EVENT_BLOCK_DONE);
  json_object_set_int_member (fields, "call", 0);
  json_object_set_int_member (fields, "block", 0);
  json_object_set_string_member (fields, "kind", "text");
  append (store, id, turn, &seq, fields);

  fields = tally_event_new (TALLY_EVENT_TURN_FINISHED);
  json_object_set_string_member (fields, "status", "done");
  json_object_set_double_member (fields, "cost_usd", 0.0123);
  json_object_set_int_member (fields, "duration_ms", 2400);
  json_object_set_int_member (fields, "api_calls", 1);
  tally_event_set_usage (fields, "usage", 2000, 120, 0, 0);
  append (store, id, turn, &seq, fields);

  g_assert_true (tally_store_flush (store, &error));
  g_assert_no_error (error);

  return g_steal_pointer (&id);
}

static guint
count_stored_sessions (const char *store_path)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GError) error = NULL;

  store = tally_store_open (store_path, &error);
  g_assert_no_error (error);
  sessions = tally_store_list_sessions (store, &error);
  g_assert_no_error (error);
  return sessions->len;
}

/* /tally/app/turn-and-reopen */

typedef struct {
  TallyTestMock *mock;
  char          *session_id;
  char          *trace;
  guint          requests_after_turn;
} TurnData;

static void
turn_body (TallyApplication *app,
           TallyWindow      *window,
           gpointer          user_data)
{
  TurnData *data = user_data;
  TallyComposer *composer = _tally_window_get_composer (window);
  GtkWidget *view = GTK_WIDGET (_tally_window_get_transcript_view (window));
  TallyModelCache *cache = tally_application_get_model_cache (app);
  g_autofree char *cache_path = tally_model_cache_get_default_path ();
  TallySession *session;
  TallyTranscript *transcript;
  g_autoptr(GPtrArray) chips = NULL;
  g_autoptr(GPtrArray) receipts = NULL;
  g_autoptr(GPtrArray) views = NULL;
  TallyToolChip *query_chip = NULL;
  TallySessionRow *row;
  gboolean found_heading = FALSE;

  /* A new session with a key: the empty page, nothing saved yet. */
  g_assert_cmpstr (_tally_window_get_page (window), ==, "empty");
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (composer)));
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "empty");
  g_assert_true (tally_application_get_online (app));

  /* The picker is filled from GET /v1/models, which is cached on disk. */
  SPIN_UNTIL (tally_model_cache_is_from_api (cache));
  g_assert_true (g_file_test (cache_path, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpuint (tally_model_cache_find (cache, "claude-mock-large-1"), !=, GTK_INVALID_LIST_POSITION);
  g_assert_cmpstr (tally_model_cache_get_display_name (cache, "claude-mock-large-1"), ==, "Claude Mock Large");
  g_assert_cmpstr (tally_model_cache_get_id (cache, gtk_drop_down_get_selected (_tally_window_get_model_dropdown (window))),
                   ==, "claude-sonnet-5");

  /* Type the question and press Send. */
  tally_composer_set_text (composer, QUESTION);
  g_assert_true (tally_composer_send (composer));
  g_assert_true (tally_window_is_busy (window));
  g_assert_true (tally_composer_get_busy (composer));
  session = tally_window_get_session (window);
  g_assert_nonnull (session);
  g_assert_cmpstr (_tally_window_get_page (window), ==, "transcript");

  /* The new session shows up in the sidebar at once. */
  row = find_session_row (window, tally_session_get_id (session));
  g_assert_nonnull (row);
  g_assert_cmpstr (tally_session_row_get_title (row), ==, QUESTION);

  SPIN_UNTIL (!tally_window_is_busy (window));
  g_assert_false (tally_composer_get_busy (composer));
  data->session_id = g_strdup (tally_session_get_id (session));
  transcript = tally_session_get_transcript (session);

  /* The model: the question, two tool calls with results, the streamed
   * answer and a receipt. */
  g_assert_cmpuint (tally_test_count_blocks (transcript, TALLY_BLOCK_USER), ==, 1);
  g_assert_cmpuint (tally_test_count_blocks (transcript, TALLY_BLOCK_TOOL_CALL), ==, 2);
  g_assert_cmpuint (tally_test_count_blocks (transcript, TALLY_BLOCK_RECEIPT), ==, 1);
  g_assert_cmpuint (tally_test_count_blocks (transcript, TALLY_BLOCK_ERROR), ==, 0);

  /* What the window shows. */
  tally_test_wait_frames (GTK_WIDGET (window), 3);

  chips = find_all (view, TALLY_TYPE_TOOL_CHIP);
  for (guint i = 0; i < chips->len; i++)
    if (g_strcmp0 (tally_tool_chip_get_name (g_ptr_array_index (chips, i)), "query_database") == 0)
      query_chip = g_ptr_array_index (chips, i);
  g_assert_nonnull (query_chip);

  /* Open the chip, as the analyst would, to see the rows. */
  gtk_expander_set_expanded (tally_tool_chip_get_expander (query_chip), TRUE);
  tally_test_wait_frames (GTK_WIDGET (window), 2);
  {
    TallyResultTable *table = tally_tool_chip_get_table (query_chip);
    gboolean has_briggate = FALSE;

    g_assert_nonnull (table);
    g_assert_cmpuint (tally_result_table_get_n_columns (table), ==, 2);
    g_assert_cmpstr (tally_result_table_get_column_title (table, 0), ==, "store");
    g_assert_cmpstr (tally_result_table_get_column_title (table, 1), ==, "revenue_gbp");
    g_assert_cmpuint (tally_result_table_get_n_rows (table), ==, 6);
    for (guint r = 0; r < tally_result_table_get_n_rows (table); r++)
      has_briggate |= g_strcmp0 (tally_result_table_get_cell (table, r, 0), "Briggate") == 0;
    g_assert_true (has_briggate);
  }

  views = find_all (view, TALLY_TYPE_MARKDOWN_VIEW);
  for (guint i = 0; i < views->len; i++)
    {
      TallyMarkdownView *markdown = g_ptr_array_index (views, i);
      g_autofree char *structure = tally_markdown_view_dup_structure (markdown);

      if (g_str_has_prefix (tally_markdown_view_get_markdown (markdown), "## March sales by store"))
        {
          g_test_message ("Answer structure: %s", structure);
          g_assert_nonnull (strstr (structure, "[h2]March sales by store[/h2]"));
          g_assert_nonnull (strstr (structure, "[li-1]"));
          g_assert_nonnull (strstr (structure, "[code-block"));
          g_assert_nonnull (strstr (structure, "Briggate"));
          g_assert_nonnull (strstr (structure, "The first row is the store that sold the most."));
          found_heading = TRUE;
        }
    }
  g_assert_true (found_heading);

  receipts = find_all (view, TALLY_TYPE_RECEIPT_ROW);
  g_assert_cmpuint (receipts->len, ==, 1);
  g_assert_nonnull (strstr (tally_receipt_row_get_text (g_ptr_array_index (receipts, 0)), "$"));

  /* The sidebar lists the saved session with its cost. */
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "list");
  g_assert_cmpuint (count_visible_rows (_tally_window_get_session_list (window)), ==, 1);
  row = find_session_row (window, data->session_id);
  g_assert_nonnull (row);
  g_assert_cmpstr (tally_session_row_get_title (row), ==, QUESTION);
  g_assert_cmpint (tally_session_row_get_info (row)->turns, ==, 1);
  g_assert_true (tally_session_info_has_cost (tally_session_row_get_info (row)));

  /* A long question as the title leaves the pickers in the header of a
   * window of an ordinary width with the sidebar open (issue 14 §6): the
   * header shows the title's start, the tooltip all of it. */
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (window)), <=, 1100);
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (_tally_window_get_model_dropdown (window))));
  g_assert_false (_tally_window_get_compact (window));
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, QUESTION);

  /* Light and dark screenshots of the finished turn. */
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_FORCE_LIGHT);
  tally_test_wait_frames (GTK_WIDGET (window), 3);
  tally_test_save_png (GTK_WIDGET (window), "app-light.png");
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_FORCE_DARK);
  g_assert_true (adw_style_manager_get_dark (adw_style_manager_get_default ()));
  tally_test_wait_frames (GTK_WIDGET (window), 3);
  tally_test_save_png (GTK_WIDGET (window), "app-dark.png");
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);

  data->trace = tally_transcript_dup_trace (transcript);
  data->requests_after_turn = tally_test_mock_get_n_requests (data->mock);
}

static void
reopen_body (TallyApplication *app,
             TallyWindow      *window,
             gpointer          user_data)
{
  TurnData *data = user_data;
  TallySession *session = tally_window_get_session (window);
  g_autofree char *trace = NULL;

  g_assert_nonnull (session);
  g_assert_cmpstr (tally_session_get_id (session), ==, data->session_id);
  g_assert_cmpstr (_tally_window_get_page (window), ==, "transcript");

  trace = tally_transcript_dup_trace (tally_session_get_transcript (session));
  g_assert_cmpstr (trace, ==, data->trace);

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpuint (count_visible_rows (_tally_window_get_session_list (window)), ==, 1);
  g_assert_true (gtk_list_box_row_is_selected (GTK_LIST_BOX_ROW (find_session_row (window, data->session_id))));
  tally_test_wait_frames (GTK_WIDGET (window), 2);
}

static void
test_turn_and_reopen (Fixture       *fixture,
                      gconstpointer  unused)
{
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonArray) requests = NULL;
  TurnData data = { 0 };
  gboolean saw_models = FALSE;

  mock = tally_test_mock_start (march_scenario, &error);
  g_assert_no_error (error);
  data.mock = mock;

  {
    const char *args[] = { "--store", fixture->store_path,
                           "--base-url", tally_test_mock_get_base_url (mock), NULL };
    g_assert_cmpint (tally_test_app_run (args, turn_body, &data), ==, 0);
  }

  /* One model list and three messages calls. */
  g_assert_cmpuint (data.requests_after_turn, ==, 4);
  requests = tally_test_mock_dup_requests (mock);
  for (guint i = 0; i < json_array_get_length (requests); i++)
    {
      JsonObject *request = json_array_get_object_element (requests, i);

      if (g_str_has_prefix (json_object_get_string_member_with_default (request, "path", ""), "/v1/models"))
        saw_models = TRUE;
    }
  g_assert_true (saw_models);

  /* A fresh instance opens the session from the store, offline: the same
   * transcript, and not one request. */
  {
    const char *args[] = { "--store", fixture->store_path,
                           "--base-url", tally_test_mock_get_base_url (mock),
                           "--session", data.session_id, NULL };
    g_assert_cmpint (tally_test_app_run (args, reopen_body, &data), ==, 0);
  }
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, data.requests_after_turn);

  g_free (data.session_id);
  g_free (data.trace);
}

/* /tally/app/files-and-export: the Q2 report scenario in auto mode (the
 * query, create_chart, Write report.md): the chart's files and the report
 * show as file chips with their real names and sizes; then Export… writes
 * the session as HTML (issue 12 §3). */

typedef struct {
  char *export_path;
} FilesData;

static TallyFileChip *
find_chip (GPtrArray  *chips,
           const char *name)
{
  for (guint i = 0; i < chips->len; i++)
    if (g_strcmp0 (tally_file_chip_get_name (g_ptr_array_index (chips, i)), name) == 0)
      return g_ptr_array_index (chips, i);
  return NULL;
}

static void
files_body (TallyApplication *app,
            TallyWindow      *window,
            gpointer          user_data)
{
  FilesData *data = user_data;
  TallyComposer *composer = _tally_window_get_composer (window);
  GtkWidget *view = GTK_WIDGET (_tally_window_get_transcript_view (window));
  g_autoptr(GPtrArray) chips = NULL;
  g_autoptr(GFile) output = g_file_new_for_path (data->export_path);
  g_autofree char *html = NULL;
  const char *names[] = { "report.md", "q2-revenue-by-store.svg", "q2-revenue-by-store.png" };
  TallySession *session;

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  gtk_drop_down_set_selected (_tally_window_get_mode_dropdown (window), TALLY_MODE_AUTO);
  tally_composer_set_text (composer, "Which store earned the most in Q2? Chart it and write a one-page report");
  g_assert_true (tally_composer_send (composer));
  SPIN_UNTIL (!tally_window_is_busy (window));
  session = tally_window_get_session (window);
  g_assert_cmpuint (tally_test_count_blocks (tally_session_get_transcript (session), TALLY_BLOCK_CHART), ==, 1);
  g_assert_cmpuint (tally_test_count_blocks (tally_session_get_transcript (session), TALLY_BLOCK_FILE), ==, 3);

  /* The chips, with what is on disk. */
  for (guint n = 0; n < G_N_ELEMENTS (names); n++)
    {
      TallyFileChip *chip = NULL;
      g_autoptr(GFile) file = NULL;
      g_autoptr(GFileInfo) info = NULL;
      g_autofree char *size = NULL;

      /* The list creates rows near the view; scroll down until the chip
       * has one. */
      for (guint tries = 0; chip == NULL && tries < 40; tries++)
        {
          g_autoptr(GPtrArray) scrollers = find_all (view, GTK_TYPE_SCROLLED_WINDOW);
          GtkAdjustment *adjustment;

          g_clear_pointer (&chips, g_ptr_array_unref);
          tally_test_wait_frames (GTK_WIDGET (window), 2);
          chips = find_all (view, TALLY_TYPE_FILE_CHIP);
          chip = find_chip (chips, names[n]);
          adjustment = gtk_scrolled_window_get_vadjustment (g_ptr_array_index (scrollers, 0));
          if (chip == NULL)
            gtk_adjustment_set_value (adjustment, tries == 0 ? 0 : gtk_adjustment_get_value (adjustment) + 200);
        }
      g_assert_nonnull (chip);
      g_assert_false (tally_file_chip_get_deleted (chip));
      file = tally_file_chip_dup_file (chip);
      info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_SIZE, G_FILE_QUERY_INFO_NONE, NULL, NULL);
      g_assert_nonnull (info);
      g_assert_cmpint (g_file_info_get_size (info), >, 100);
      size = g_format_size (g_file_info_get_size (info));
      g_test_message ("%s: %s", names[n], tally_file_chip_get_detail (chip));
      g_assert_true (g_str_has_prefix (tally_file_chip_get_detail (chip), size));
    }

  /* Open on report.md shows it in the report preview, with its chart. */
  g_clear_pointer (&chips, g_ptr_array_unref);
  chips = find_all (view, TALLY_TYPE_FILE_CHIP);
  g_assert_nonnull (find_chip (chips, "report.md"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (find_chip (chips, "report.md")), "file.open", NULL));
  {
    GtkApplication *gtk_app = GTK_APPLICATION (app);
    TallyReportWindow *preview = NULL;

    for (GList *l = gtk_application_get_windows (gtk_app); l != NULL; l = l->next)
      if (TALLY_IS_REPORT_WINDOW (l->data))
        preview = l->data;
    g_assert_nonnull (preview);
    g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (preview)), ==, "report.md");
    SPIN_UNTIL (_tally_report_window_get_n_loads (preview) == 1);
    g_assert_nonnull (strstr (_tally_report_window_get_html (preview), "Minster Yard"));
    g_assert_nonnull (strstr (_tally_report_window_get_html (preview), "<svg"));
    gtk_window_destroy (GTK_WINDOW (preview));
  }

  /* Export… as HTML: the page holds the question, the chart drawn inline
   * and the report's file name, and a toast offers to open it. */
  _tally_window_export_session_to (window, TALLY_EXPORT_HTML, FALSE, output);
  SPIN_UNTIL (_tally_window_get_n_exports_done (window) == 1);
  g_assert_true (g_file_get_contents (data->export_path, &html, NULL, NULL));
  g_assert_true (g_str_has_prefix (html, "<!DOCTYPE html>"));
  g_assert_nonnull (strstr (html, "Which store earned the most in Q2?"));
  g_assert_nonnull (strstr (html, "<svg"));
  g_assert_nonnull (strstr (html, "Minster Yard"));
  g_assert_null (strstr (html, "<script"));
  g_assert_cmpstr (_tally_window_get_last_toast_title (window), ==, "Exported “session.html”");
  g_assert_cmpstr (adw_toast_get_action_name (_tally_window_get_last_toast (window)), ==, "win.open-file");
}

static void
test_files_and_export (Fixture       *fixture,
                       gconstpointer  unused)
{
  g_autofree char *scenario = g_build_filename (g_getenv ("TALLY_TEST_DATA_DIR"), "scenarios", "report-q2-store.json", NULL);
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;
  FilesData data = { 0 };

  mock = tally_test_mock_start_file (scenario, &error);
  g_assert_no_error (error);
  data.export_path = g_build_filename (fixture->dir, "session.html", NULL);

  {
    const char *args[] = { "--store", fixture->store_path,
                           "--base-url", tally_test_mock_get_base_url (mock), NULL };
    g_assert_cmpint (tally_test_app_run (args, files_body, &data), ==, 0);
  }
  g_free (data.export_path);
}

/* /tally/app/first-launch */

typedef struct {
  char *session_id;
} FirstLaunchData;

static void
first_launch_body (TallyApplication *app,
                   TallyWindow      *window,
                   gpointer          user_data)
{
  FirstLaunchData *data = user_data;
  TallySessionRow *row;
  AdwPasswordEntryRow *key_row;
  g_autoptr(GPtrArray) entries = NULL;

  /* The keyring is asked, has nothing (there is none here): the first
   * launch page, and no composer. */
  SPIN_UNTIL (tally_application_get_api_key_source (app) != TALLY_API_KEY_SOURCE_LOOKING_UP);
  g_assert_cmpint (tally_application_get_api_key_source (app), ==, TALLY_API_KEY_SOURCE_NONE);
  g_assert_false (tally_application_has_api_key (app));
  g_assert_cmpstr (_tally_window_get_page (window), ==, "welcome");
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (_tally_window_get_composer (window))));

  /* The sidebar still lists the saved session and opens it offline. */
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "list");
  row = find_session_row (window, data->session_id);
  g_assert_nonnull (row);
  g_assert_cmpstr (tally_session_row_get_title (row), ==, "Quarterly espresso trend");
  tally_test_save_png (GTK_WIDGET (window), "app-welcome.png");
  g_signal_emit_by_name (_tally_window_get_session_list (window), "row-activated", row);
  /* Read in the background (docs/architecture.md §11.1). */
  SPIN_UNTIL (!_tally_window_is_opening (window));
  g_assert_nonnull (tally_window_get_session (window));
  g_assert_cmpstr (tally_session_get_id (tally_window_get_session (window)), ==, data->session_id);
  g_assert_cmpstr (_tally_window_get_page (window), ==, "transcript");
  g_assert_cmpuint (tally_test_count_blocks (tally_session_get_transcript (tally_window_get_session (window)),
                                  TALLY_BLOCK_TEXT), ==, 1);

  /* The agent of the session shown follows the preferences. */
  {
    GSettings *settings = tally_application_get_settings (app);
    TallyAgent *agent = tally_session_get_agent (tally_window_get_session (window));
    gint64 budget = 0;
    guint approval_timeout = 0;

    g_settings_set_int (settings, "thinking-budget", 4096);
    g_settings_set_uint (settings, "approval-timeout", 42);
    g_settings_set_double (settings, "max-session-cost", 1.5);
    g_object_get (agent, "thinking-budget", &budget, "approval-timeout", &approval_timeout, NULL);
    g_assert_cmpint (budget, ==, 4096);
    g_assert_cmpuint (approval_timeout, ==, 42);
    g_assert_cmpfloat_with_epsilon (tally_agent_get_max_cost (agent), 1.5, 1e-9);
    g_settings_reset (settings, "thinking-budget");
    g_settings_reset (settings, "approval-timeout");
    g_settings_reset (settings, "max-session-cost");
  }

  /* Sending without a key says what to do, and sends nothing. */
  tally_window_send (window, "And in April?");
  g_assert_false (tally_window_is_busy (window));
  g_assert_cmpstr (_tally_window_get_last_toast_title (window), ==, "Add an Anthropic API key to send messages");

  /* Back to a new session: the welcome page takes a key. Without a
   * keyring it is kept in memory for this run, and the UI says so. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.new-session", NULL);
  g_assert_cmpstr (_tally_window_get_page (window), ==, "welcome");
  entries = find_all (GTK_WIDGET (window), ADW_TYPE_PASSWORD_ENTRY_ROW);
  g_assert_cmpuint (entries->len, ==, 1);
  key_row = g_ptr_array_index (entries, 0);
  gtk_editable_set_text (GTK_EDITABLE (key_row), "  sk-typed-in-the-window  ");
  g_signal_emit_by_name (key_row, "apply");
  g_assert_true (tally_application_has_api_key (app));
  g_assert_cmpstr (_tally_window_get_page (window), ==, "empty");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (key_row)), ==, "");
  SPIN_UNTIL (g_strcmp0 (_tally_window_get_last_toast_title (window),
                         "No keyring available: the key is kept for this session only") == 0);
  g_assert_cmpint (tally_application_get_api_key_source (app), ==, TALLY_API_KEY_SOURCE_MEMORY);
}

static void
test_first_launch (Fixture       *fixture,
                   gconstpointer  unused)
{
  FirstLaunchData data = { 0 };
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };

  data.session_id = seed_session (fixture->store_path, "Quarterly espresso trend",
                                  "Espresso sales rose **12 %** from January to March.");

  g_unsetenv ("ANTHROPIC_API_KEY");
  g_assert_cmpint (tally_test_app_run (args, first_launch_body, &data), ==, 0);

  g_free (data.session_id);
}

/* /tally/app/delete-undo */

typedef struct {
  char       *first;
  char       *second;
  const char *store_path;
} DeleteData;

static void
delete_body (TallyApplication *app,
             TallyWindow      *window,
             gpointer          user_data)
{
  DeleteData *data = user_data;
  GtkListBox *list = _tally_window_get_session_list (window);
  AdwToast *toast;

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpuint (count_visible_rows (list), ==, 2);

  /* Delete the session shown: it leaves the sidebar and the window moves
   * to a new session, but the store keeps it until the toast goes. */
  g_assert_true (tally_window_open_session (window, data->first));
  SPIN_UNTIL (!_tally_window_is_opening (window));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.delete-session", NULL);
  g_assert_null (tally_window_get_session (window));
  g_assert_cmpuint (count_visible_rows (list), ==, 1);
  toast = _tally_window_get_last_toast (window);
  g_assert_nonnull (toast);
  g_assert_cmpstr (adw_toast_get_button_label (toast), ==, "_Undo");
  g_assert_cmpuint (count_stored_sessions (data->store_path), ==, 2);

  /* Undo: the row and the session come back; the toast going later
   * deletes nothing. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.undo-delete", "s", data->first);
  SPIN_UNTIL (!_tally_window_is_opening (window));
  g_assert_cmpuint (count_visible_rows (list), ==, 2);
  g_assert_nonnull (tally_window_get_session (window));
  g_assert_cmpstr (tally_session_get_id (tally_window_get_session (window)), ==, data->first);
  adw_toast_dismiss (toast);
  tally_test_spin_idle ();
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpuint (count_stored_sessions (data->store_path), ==, 2);
  g_assert_cmpuint (count_visible_rows (list), ==, 2);

  /* Delete the other one from its row, and let the toast go. */
  gtk_widget_activate_action (GTK_WIDGET (find_session_row (window, data->second)), "row.delete", NULL);
  g_assert_cmpuint (count_visible_rows (list), ==, 1);
  toast = _tally_window_get_last_toast (window);
  g_assert_nonnull (toast);
  g_assert_nonnull (strstr (_tally_window_get_last_toast_title (window), "Croissant waste"));
  adw_toast_dismiss (toast);
  tally_test_spin_idle ();
  g_assert_cmpuint (count_stored_sessions (data->store_path), ==, 1);
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_null (find_session_row (window, data->second));
  g_assert_nonnull (find_session_row (window, data->first));
  g_assert_cmpuint (count_visible_rows (list), ==, 1);
}

static void
test_delete_undo (Fixture       *fixture,
                  gconstpointer  unused)
{
  DeleteData data = { 0 };
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };

  data.first = seed_session (fixture->store_path, "Flat white by store", "Minster Yard sells the most.");
  data.second = seed_session (fixture->store_path, "Croissant waste", "Thursdays waste the most.");
  data.store_path = fixture->store_path;

  g_assert_cmpint (tally_test_app_run (args, delete_body, &data), ==, 0);
  g_assert_cmpuint (count_stored_sessions (fixture->store_path), ==, 1);

  g_free (data.first);
  g_free (data.second);
}

/* /tally/app/search-rename */

typedef struct {
  char *first;
  char *second;
} SearchData;

static void
search_body (TallyApplication *app,
             TallyWindow      *window,
             gpointer          user_data)
{
  SearchData *data = user_data;
  GtkListBox *list = _tally_window_get_session_list (window);
  GtkSearchEntry *entry = _tally_window_get_search_entry (window);
  TallySessionRow *row;

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpuint (count_visible_rows (list), ==, 2);

  /* By title */
  gtk_editable_set_text (GTK_EDITABLE (entry), "croissant");
  g_signal_emit_by_name (entry, "search-changed");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpuint (count_visible_rows (list), ==, 1);
  g_assert_true (gtk_widget_get_child_visible (GTK_WIDGET (find_session_row (window, data->second))));

  /* By what was said (full text), not in any title */
  gtk_editable_set_text (GTK_EDITABLE (entry), "Thursdays");
  g_signal_emit_by_name (entry, "search-changed");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpuint (count_visible_rows (list), ==, 1);
  g_assert_true (gtk_widget_get_child_visible (GTK_WIDGET (find_session_row (window, data->second))));

  /* Nothing */
  gtk_editable_set_text (GTK_EDITABLE (entry), "zzzqqq");
  g_signal_emit_by_name (entry, "search-changed");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpuint (count_visible_rows (list), ==, 0);
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "no-results");

  gtk_editable_set_text (GTK_EDITABLE (entry), "");
  g_signal_emit_by_name (entry, "search-changed");
  g_assert_cmpuint (count_visible_rows (list), ==, 2);
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "list");

  /* Rename from the row; the store keeps the new title, and the window
   * showing the session says it too. */
  g_assert_true (tally_window_open_session (window, data->first));
  SPIN_UNTIL (!_tally_window_is_opening (window));
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "Flat white by store");
  row = find_session_row (window, data->first);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (row), "win.rename-saved-session", "(ss)",
                                             data->first, "Flat whites, March"));
  g_assert_cmpstr (tally_session_row_get_title (find_session_row (window, data->first)), ==, "Flat whites, March");
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "Flat whites, March");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (tally_session_row_get_title (find_session_row (window, data->first)), ==, "Flat whites, March");
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "Flat whites, March");

  /* Opened again (as after a restart), it keeps the new title. */
  g_assert_true (tally_window_open_session (window, data->second));
  SPIN_UNTIL (!_tally_window_is_opening (window));
  g_assert_true (tally_window_open_session (window, data->first));
  SPIN_UNTIL (!_tally_window_is_opening (window));
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "Flat whites, March");
}

static void
test_search_rename (Fixture       *fixture,
                    gconstpointer  unused)
{
  SearchData data = { 0 };
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };

  data.first = seed_session (fixture->store_path, "Flat white by store", "Minster Yard sells the most.");
  data.second = seed_session (fixture->store_path, "Croissant waste", "Thursdays waste the most.");

  g_assert_cmpint (tally_test_app_run (args, search_body, &data), ==, 0);

  g_free (data.first);
  g_free (data.second);
}

/* /tally/app/offline */

static void
offline_body (TallyApplication *app,
              TallyWindow      *window,
              gpointer          user_data)
{
  TallyTestMock *mock = user_data;
  TallyComposer *composer = _tally_window_get_composer (window);
  g_autofree char *left = NULL;

  g_assert_false (tally_application_get_online (app));
  g_assert_cmpstr (_tally_window_get_page (window), ==, "empty");

  tally_composer_set_text (composer, QUESTION);
  tally_composer_send (composer);
  g_assert_false (tally_window_is_busy (window));
  g_assert_null (tally_window_get_session (window));
  g_assert_cmpstr (_tally_window_get_last_toast_title (window), ==, OFFLINE_MESSAGE);

  /* The question is still there to send later. */
  left = tally_composer_dup_text (composer);
  g_assert_cmpstr (left, ==, QUESTION);

  tally_test_spin_idle ();
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 0);

  /* Back online, the same question goes out. */
  _tally_application_set_network_override (app, 1);
  g_assert_true (tally_application_get_online (app));
  tally_composer_send (composer);
  g_assert_true (tally_window_is_busy (window));
  SPIN_UNTIL (!tally_window_is_busy (window));
}

static void
test_offline (Fixture       *fixture,
              gconstpointer  unused)
{
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;

  mock = tally_test_mock_start (march_scenario, &error);
  g_assert_no_error (error);

  {
    const char *args[] = { "--store", fixture->store_path,
                           "--base-url", tally_test_mock_get_base_url (mock), NULL };
    g_assert_cmpint (tally_test_app_run_with_network (args, 0, offline_body, mock), ==, 0);
  }

  /* Online again: the model list (asked for when the network came back)
   * and the three calls of the turn. */
  g_assert_cmpuint (tally_test_mock_get_n_requests (mock), ==, 4);
}

/* /tally/app/stop */

/* Whether a window action is enabled, read the way a button or a menu
 * item reads it: a hidden button with that action name, placed below the
 * window for the moment, is insensitive while the action is disabled. */
static gboolean
window_action_enabled (TallyWindow *window,
                       const char  *name)
{
  GtkWidget *button = gtk_button_new ();
  gboolean enabled;

  gtk_widget_set_visible (button, FALSE);
  gtk_widget_set_parent (button, GTK_WIDGET (window));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), name);
  enabled = gtk_widget_get_sensitive (button);
  gtk_widget_unparent (button);
  return enabled;
}

static void
stop_body (TallyApplication *app,
           TallyWindow      *window,
           gpointer          user_data)
{
  TallyComposer *composer = _tally_window_get_composer (window);
  TallyTranscript *transcript;
  GListModel *blocks;
  g_autoptr(TallyBlock) last = NULL;
  JsonObject *details;

  tally_composer_set_text (composer, "Count every receipt");
  tally_composer_send (composer);
  g_assert_true (tally_window_is_busy (window));
  g_assert_true (window_action_enabled (window, "win.stop"));
  transcript = tally_session_get_transcript (tally_window_get_session (window));

  /* Wait for the first words, then Escape. */
  SPIN_UNTIL (tally_test_count_blocks (transcript, TALLY_BLOCK_TEXT) > 0);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.stop", NULL));
  SPIN_UNTIL (!tally_window_is_busy (window));
  g_assert_false (tally_composer_get_busy (composer));

  blocks = G_LIST_MODEL (transcript);
  SPIN_UNTIL (tally_test_count_blocks (transcript, TALLY_BLOCK_RECEIPT) == 1);
  last = g_list_model_get_item (blocks, g_list_model_get_n_items (blocks) - 1);
  g_assert_cmpint (tally_block_get_kind (last), ==, TALLY_BLOCK_RECEIPT);
  details = tally_block_get_details (last);
  g_assert_nonnull (details);
  g_assert_cmpstr (json_object_get_string_member (details, "status"), ==, "cancelled");

  /* Stop is only enabled while a turn runs. */
  g_assert_false (window_action_enabled (window, "win.stop"));
}

static void
test_stop (Fixture       *fixture,
           gconstpointer  unused)
{
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;

  mock = tally_test_mock_start (stall_scenario, &error);
  g_assert_no_error (error);

  {
    const char *args[] = { "--store", fixture->store_path,
                           "--base-url", tally_test_mock_get_base_url (mock), NULL };
    g_assert_cmpint (tally_test_app_run (args, stop_body, NULL), ==, 0);
  }
}

/* /tally/app/preferences */

static void
preferences_body (TallyApplication *app,
                  TallyWindow      *window,
                  gpointer          user_data)
{
  GSettings *settings = tally_application_get_settings (app);
  TallyPreferencesWindow *prefs = NULL;
  g_autoptr(GPtrArray) spins = NULL;
  gboolean found_budget = FALSE;

  g_action_group_activate_action (G_ACTION_GROUP (app), "preferences", NULL);
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (TALLY_IS_PREFERENCES_WINDOW (l->data))
      prefs = l->data;
  g_assert_nonnull (prefs);
  g_assert_true (gtk_window_get_transient_for (GTK_WINDOW (prefs)) == GTK_WINDOW (window));

  /* ANTHROPIC_API_KEY is set: the preferences say where the key comes
   * from and do not offer to change it. */
  g_assert_cmpstr (tally_preferences_window_get_key_status (prefs), ==, "Set by the environment");

  /* Settings and widgets are bound both ways. */
  g_settings_set_int (settings, "thinking-budget", 16384);
  spins = find_all (GTK_WIDGET (prefs), GTK_TYPE_SPIN_BUTTON);
  for (guint i = 0; i < spins->len; i++)
    if ((int)gtk_spin_button_get_value (g_ptr_array_index (spins, i)) == 16384)
      found_budget = TRUE;
  g_assert_true (found_budget);
  g_settings_reset (settings, "thinking-budget");

  tally_test_wait_frames (GTK_WIDGET (prefs), 3);
  tally_test_save_png (GTK_WIDGET (prefs), "preferences.png");
  gtk_window_destroy (GTK_WINDOW (prefs));
}

static void
test_preferences (Fixture       *fixture,
                  gconstpointer  unused)
{
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };

  g_assert_cmpint (tally_test_app_run_with_network (args, 0, preferences_body, NULL), ==, 0);
}

/* /tally/app/key-refused and /tally/app/spend-cap */

/* The error banner of the session shown, once its turn has ended. */
static TallyErrorBanner *
wait_error_banner (TallyWindow *window)
{
  g_autoptr(GPtrArray) banners = NULL;

  SPIN_UNTIL (!tally_window_is_busy (window));
  SPIN_UNTIL (({ g_clear_pointer (&banners, g_ptr_array_unref);
                 banners = find_all (GTK_WIDGET (window), TALLY_TYPE_ERROR_BANNER);
                 banners->len > 0; }));
  return g_ptr_array_index (banners, banners->len - 1);
}

/* POST /v1/messages requests the mock received (the model list aside). */
static guint
count_message_requests (TallyTestMock *mock)
{
  return tally_test_mock_count_path (mock, "/v1/messages");
}

static TallyPreferencesWindow *
find_preferences (TallyApplication *app)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (TALLY_IS_PREFERENCES_WINDOW (l->data))
      return l->data;
  return NULL;
}

static void
key_refused_body (TallyApplication *app,
                  TallyWindow      *window,
                  gpointer          user_data)
{
  TallyErrorBanner *banner;
  GtkButton *button;
  TallyPreferencesWindow *prefs;

  tally_window_send (window, "Hello?");
  banner = wait_error_banner (window);
  g_assert_cmpstr (tally_error_banner_get_message (banner), ==, "Your API key was refused");
  g_assert_cmpstr (tally_error_banner_get_meta (banner), ==,
                   "The server did not accept the key. Change it, then retry.");
  /* (The model list may have been asked for first.) */
  g_assert_true (g_str_has_prefix (tally_error_banner_get_details (banner),
                                   "The Messages API refused the API key (HTTP 401): invalid x-api-key\n"
                                   "Request ID req_mock_"));
  /* Once the key is changed, the same turn can go again. */
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (tally_error_banner_get_retry_button (banner))));

  /* The way out: the key settings, in the preferences. */
  button = tally_error_banner_get_action_button (banner);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (button)));
  g_assert_cmpstr (gtk_button_get_label (button), ==, "Change _Key…");
  g_assert_null (find_preferences (app));
  g_signal_emit_by_name (button, "clicked");
  SPIN_UNTIL (find_preferences (app) != NULL);
  prefs = find_preferences (app);
  g_assert_true (gtk_window_get_transient_for (GTK_WINDOW (prefs)) == GTK_WINDOW (window));
  g_assert_cmpstr (tally_preferences_window_get_key_status (prefs), ==, "Set by the environment");
  gtk_window_destroy (GTK_WINDOW (prefs));
}

static void
test_key_refused (Fixture       *fixture,
                  gconstpointer  unused)
{
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;

  mock = tally_test_mock_start (
    "{\"responses\":[{\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}]}", &error);
  g_assert_no_error (error);

  {
    const char *args[] = { "--store", fixture->store_path,
                           "--base-url", tally_test_mock_get_base_url (mock), NULL };
    g_assert_cmpint (tally_test_app_run (args, key_refused_body, NULL), ==, 0);
  }
  g_assert_cmpuint (count_message_requests (mock), ==, 1);
}

static void
spend_cap_body (TallyApplication *app,
                TallyWindow      *window,
                gpointer          user_data)
{
  TallyTestMock *mock = user_data;
  GSettings *settings = tally_application_get_settings (app);
  TallyErrorBanner *banner;
  GtkButton *button;
  TallyAgent *agent;
  TallyTranscript *transcript;

  /* The preferences show the cap; a call costs $0.0315 here. */
  g_settings_set_double (settings, "max-session-cost", 0.01);
  {
    TallyPreferencesWindow *prefs;
    g_autoptr(GPtrArray) spins = NULL;
    gboolean shown = FALSE;

    g_action_group_activate_action (G_ACTION_GROUP (app), "preferences", NULL);
    prefs = find_preferences (app);
    g_assert_nonnull (prefs);
    spins = find_all (GTK_WIDGET (prefs), GTK_TYPE_SPIN_BUTTON);
    for (guint i = 0; i < spins->len; i++)
      if (G_APPROX_VALUE (gtk_spin_button_get_value (g_ptr_array_index (spins, i)), 0.01, 1e-9))
        shown = TRUE;
    g_assert_true (shown);
    gtk_window_destroy (GTK_WINDOW (prefs));
  }

  tally_window_send (window, "Describe the tables");
  banner = wait_error_banner (window);
  g_assert_cmpuint (count_message_requests (mock), ==, 1);
  g_assert_cmpstr (tally_error_banner_get_message (banner), ==, "Spend cap reached");
  g_assert_cmpstr (tally_error_banner_get_meta (banner), ==,
                   "This session has cost $0.0315, which reached its spend cap of $0.01. Nothing more was sent.");
  transcript = tally_session_get_transcript (tally_window_get_session (window));
  g_assert_cmpuint (tally_test_count_blocks (transcript, TALLY_BLOCK_RECEIPT), ==, 1);

  /* Raising the cap is for this session only. */
  button = tally_error_banner_get_action_button (banner);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (button)));
  g_assert_cmpstr (gtk_button_get_label (button), ==, "_Raise Cap to $0.04");
  g_signal_emit_by_name (button, "clicked");
  agent = tally_session_get_agent (tally_window_get_session (window));
  g_assert_cmpfloat_with_epsilon (tally_agent_get_max_cost (agent), 0.0415, 1e-9);
  g_assert_cmpfloat_with_epsilon (g_settings_get_double (settings, "max-session-cost"), 0.01, 1e-9);

  tally_window_send (window, "Go on");
  SPIN_UNTIL (!tally_window_is_busy (window));
  SPIN_UNTIL (tally_test_count_blocks (transcript, TALLY_BLOCK_RECEIPT) == 2);
  g_assert_cmpuint (count_message_requests (mock), ==, 2);
  g_settings_reset (settings, "max-session-cost");
}

static void
test_spend_cap (Fixture       *fixture,
                gconstpointer  unused)
{
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;

  mock = tally_test_mock_start (
    "{\"responses\":["
    "{\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_Cap1\",\"name\":\"get_schema\",\"input\":{}}],"
    "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":10000,\"output_tokens\":100}}},"
    "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Six stores and their sales.\"}],"
    "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":100,\"output_tokens\":10}}}]}", &error);
  g_assert_no_error (error);

  {
    const char *args[] = { "--store", fixture->store_path,
                           "--base-url", tally_test_mock_get_base_url (mock), NULL };
    g_assert_cmpint (tally_test_app_run (args, spend_cap_body, mock), ==, 0);
  }
}

/* /tally/app/narrow-and-sidebar */

static void
narrow_body (TallyApplication *app,
             TallyWindow      *window,
             gpointer          user_data)
{
  GSettings *settings = tally_application_get_settings (app);
  AdwFlap *flap = _tally_window_get_flap (window);

  /* Wide: F9 hides and shows the sidebar, and the choice is remembered. */
  g_assert_false (adw_flap_get_folded (flap));
  g_assert_true (adw_flap_get_reveal_flap (flap));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.toggle-sidebar", NULL));
  g_assert_false (adw_flap_get_reveal_flap (flap));
  g_assert_false (g_settings_get_boolean (settings, "sidebar-visible"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.toggle-sidebar", NULL));
  g_assert_true (g_settings_get_boolean (settings, "sidebar-visible"));

  /* Narrow: the sidebar folds away; Ctrl+F brings it back over the
   * session, and the window's size is what the settings remember. */
  g_assert_false (_tally_window_get_compact (window));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (_tally_window_get_model_dropdown (window))));
  /* Dragged narrower than the header's pickers need, the window moves them
   * into the title popover; then it can shrink to phone size. */
  gtk_window_set_default_size (GTK_WINDOW (window), 700, 700);
  SPIN_UNTIL (_tally_window_get_compact (window));
  gtk_window_set_default_size (GTK_WINDOW (window), 420, 700);
  /* (The decorations take a few pixels of the 420.) */
  SPIN_UNTIL (gtk_widget_get_width (GTK_WIDGET (window)) > 360 &&
              gtk_widget_get_width (GTK_WIDGET (window)) <= 420);
  SPIN_UNTIL (adw_flap_get_folded (flap));

  /* The pickers moved into the title popover, still tied to the same
   * choices. */
  g_assert_false (gtk_widget_get_mapped (GTK_WIDGET (_tally_window_get_model_dropdown (window))));
  g_assert_false (gtk_widget_get_mapped (GTK_WIDGET (_tally_window_get_thinking_button (window))));
  gtk_toggle_button_set_active (_tally_window_get_thinking_button (window), TRUE);
  /* (The title's popover is built the first time it opens.) */
  _tally_window_ensure_context_popover (window);
  {
    g_autoptr(GPtrArray) switches = find_all (GTK_WIDGET (window), GTK_TYPE_SWITCH);
    gboolean thinking_on = FALSE;

    for (guint i = 0; i < switches->len; i++)
      thinking_on |= gtk_switch_get_active (g_ptr_array_index (switches, i));
    g_assert_true (thinking_on);
  }
  gtk_toggle_button_set_active (_tally_window_get_thinking_button (window), FALSE);
  g_assert_false (adw_flap_get_reveal_flap (flap));
  g_assert_true (g_settings_get_boolean (settings, "sidebar-visible"));
  g_assert_cmpint (g_settings_get_int (settings, "window-width"), ==, 420);
  tally_test_wait_frames (GTK_WIDGET (window), 3);
  tally_test_save_png (GTK_WIDGET (window), "app-narrow.png");

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.search", NULL));
  g_assert_true (adw_flap_get_reveal_flap (flap));
  g_assert_true (gtk_widget_has_focus (GTK_WIDGET (_tally_window_get_search_entry (window))) ||
                 gtk_widget_is_focus (GTK_WIDGET (_tally_window_get_search_entry (window))) ||
                 gtk_widget_get_focus_child (GTK_WIDGET (_tally_window_get_search_entry (window))) != NULL);

  g_settings_reset (settings, "window-width");
  g_settings_reset (settings, "window-height");
}

static void
test_narrow (Fixture       *fixture,
             gconstpointer  unused)
{
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };

  g_assert_cmpint (tally_test_app_run_with_network (args, 0, narrow_body, NULL), ==, 0);
}

/* /tally/app/sidebar-format */

static void
test_sidebar_format (void)
{
  g_autoptr(GDateTime) now = g_date_time_new_local (2026, 3, 10, 15, 0, 0);
  g_autoptr(GDateTime) morning = g_date_time_new_local (2026, 3, 10, 9, 5, 0);
  g_autoptr(GDateTime) yesterday = g_date_time_new_local (2026, 3, 9, 23, 59, 0);
  g_autoptr(GDateTime) days_ago = g_date_time_new_local (2026, 3, 6, 12, 0, 0);
  g_autoptr(GDateTime) january = g_date_time_new_local (2026, 1, 2, 12, 0, 0);
  g_autoptr(GDateTime) last_year = g_date_time_new_local (2025, 12, 24, 12, 0, 0);
  g_autoptr(TallySessionInfo) info = tally_session_info_new ("s1");
  gint64 now_us = g_date_time_to_unix (now) * G_USEC_PER_SEC;
  g_autofree char *text = NULL;
  g_autofree char *weekday = g_date_time_format (days_ago, "%A");
  g_autofree char *jan = g_date_time_format (january, "%-d %B");
  g_autofree char *dec = g_date_time_format (last_year, "%-d %B %Y");

#define CHECK_DATE(when_us, expected) G_STMT_START {             \
    g_free (text);                                               \
    text = tally_session_row_format_date ((when_us), now_us);    \
    g_assert_cmpstr (text, ==, (expected));                      \
  } G_STMT_END

  CHECK_DATE (now_us - 30 * G_USEC_PER_SEC, "Just now");
  CHECK_DATE (g_date_time_to_unix (morning) * G_USEC_PER_SEC, "09:05");
  CHECK_DATE (g_date_time_to_unix (yesterday) * G_USEC_PER_SEC, "Yesterday");
  CHECK_DATE (g_date_time_to_unix (days_ago) * G_USEC_PER_SEC, weekday);
  CHECK_DATE (g_date_time_to_unix (january) * G_USEC_PER_SEC, jan);
  CHECK_DATE (g_date_time_to_unix (last_year) * G_USEC_PER_SEC, dec);
#undef CHECK_DATE

  /* No turn yet: no cost. An unknown price is said, never guessed. */
  g_free (text);
  text = tally_session_row_format_cost (info);
  g_assert_cmpstr (text, ==, "");
  info->turns = 2;
  g_free (text);
  text = tally_session_row_format_cost (info);
  /* Turns that never got an answer: not a "$0.0000" session. */
  g_assert_cmpstr (text, ==, "No answer yet");
  info->input_tokens = 1200;
  g_free (text);
  text = tally_session_row_format_cost (info);
  g_assert_cmpstr (text, ==, "Price unknown");
  info->cost_usd = 0.0123;
  g_free (text);
  text = tally_session_row_format_cost (info);
  g_assert_cmpstr (text, ==, "$0.0123");
  info->cost_usd = 2.5;
  g_free (text);
  text = tally_session_row_format_cost (info);
  g_assert_cmpstr (text, ==, "$2.50");
}

/* /tally/app/model-cache */

static void
write_cache (const char *path,
             const char *base_url,
             gint64      fetched_us)
{
  g_autofree char *text = g_strdup_printf (
    "{\"base_url\": \"%s\", \"fetched_us\": %" G_GINT64_FORMAT ", \"models\": ["
    "{\"type\": \"model\", \"id\": \"claude-cached-1\", \"display_name\": \"Claude Cached\"},"
    "{\"type\": \"model\", \"id\": \"claude-sonnet-5\"},"
    "{\"type\": \"model\"}, 42]}", base_url, fetched_us);
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (path, text, -1, &error));
  g_assert_no_error (error);
}

static void
test_model_cache (Fixture       *fixture,
                  gconstpointer  unused)
{
  g_autofree char *path = g_build_filename (fixture->dir, "models.json", NULL);
  g_autoptr(TallyModelCache) missing = NULL;
  g_autoptr(TallyModelCache) damaged = NULL;
  g_autoptr(TallyModelCache) cached = NULL;
  g_autoptr(TallyModelCache) stale = NULL;
  guint n;

  /* No file, or a damaged one: the bundled table. */
  missing = tally_model_cache_new (path);
  g_assert_false (tally_model_cache_is_from_api (missing));
  g_assert_cmpuint (g_list_model_get_n_items (tally_model_cache_get_models (missing)), ==,
                    tally_model_table_get_n_models ());
  g_assert_cmpuint (tally_model_cache_find (missing, tally_model_table_get_default ()), !=,
                    GTK_INVALID_LIST_POSITION);

  g_assert_true (g_file_set_contents (path, "{\"models\": not json", -1, NULL));
  damaged = tally_model_cache_new (path);
  g_assert_false (tally_model_cache_is_from_api (damaged));
  g_assert_false (tally_model_cache_is_fresh (damaged, "http://127.0.0.1:1"));

  /* A fresh answer for one base URL: its models, in its order; entries
   * without an id are skipped; names fall back to the table or the id. */
  write_cache (path, "http://127.0.0.1:1", g_get_real_time ());
  cached = tally_model_cache_new (path);
  g_assert_true (tally_model_cache_is_from_api (cached));
  g_assert_true (tally_model_cache_is_fresh (cached, "http://127.0.0.1:1"));
  g_assert_false (tally_model_cache_is_fresh (cached, "http://127.0.0.1:2"));
  g_assert_cmpuint (g_list_model_get_n_items (tally_model_cache_get_models (cached)), ==, 2);
  g_assert_cmpstr (tally_model_cache_get_id (cached, 0), ==, "claude-cached-1");
  g_assert_cmpstr (tally_model_cache_get_display_name (cached, "claude-cached-1"), ==, "Claude Cached");
  g_assert_cmpstr (tally_model_cache_get_display_name (cached, "claude-sonnet-5"), !=, "");
  g_assert_cmpstr (tally_model_cache_get_display_name (cached, "no-such-model"), ==, "no-such-model");

  /* A saved session's model that the API no longer lists is added. */
  n = tally_model_cache_ensure (cached, "claude-retired-0");
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpuint (tally_model_cache_ensure (cached, "claude-retired-0"), ==, 2);
  g_assert_cmpuint (tally_model_cache_find (cached, "claude-retired-0"), ==, 2);
  g_assert_null (tally_model_cache_get_id (cached, 3));

  /* Two days old: used, but asked again. */
  write_cache (path, "http://127.0.0.1:1", g_get_real_time () - 2 * TALLY_MODEL_CACHE_MAX_AGE_US);
  stale = tally_model_cache_new (path);
  g_assert_true (tally_model_cache_is_from_api (stale));
  g_assert_false (tally_model_cache_is_fresh (stale, "http://127.0.0.1:1"));
}

/* /tally/app/bad-options */

static void
test_bad_base_url (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(TallyApplication) app = tally_application_new ();
      char *argv[] = { (char *)"tally", (char *)"--base-url", (char *)"ftp://example.org", NULL };

      g_application_set_flags (G_APPLICATION (app),
                               G_APPLICATION_HANDLES_COMMAND_LINE | G_APPLICATION_NON_UNIQUE);
      exit (g_application_run (G_APPLICATION (app), 3, argv));
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*--base-url must start with http:// or https://*");
}

/* /tally/app/pg-server: the database chooser's Server page against a
 * throwaway PostgreSQL cluster (issue 13 §1, docs/postgresql.md): libpq's
 * error shown in the dialog, a password that goes to the keyring (a test
 * double at the tally-secret boundary) and nowhere else, a turn that
 * queries the server, the saved connection found again by name, and the
 * role card once for the superuser. */

#define PG_QUESTION "Which stores are there?"

static const char pg_scenario[] =
  "{\"responses\": ["
  " {\"match\": {\"last_user_text_contains\": \"Which stores\"},"
  "  \"message\": {\"content\": [{\"type\": \"tool_use\", \"id\": \"toolu_pgwin\", \"name\": \"query_database\","
  "   \"input\": {\"sql\": \"SELECT name FROM stores ORDER BY store_id\"}}]}},"
  " {\"match\": {\"contains\": \"toolu_pgwin\"},"
  "  \"message\": {\"content\": [{\"type\": \"text\", \"text\": \"The stores:\\n{{last_tool_result}}\"}]}},"
  " {\"match\": {\"last_user_text_contains\": \"How many stores\"},"
  "  \"message\": {\"content\": [{\"type\": \"tool_use\", \"id\": \"toolu_pgown\", \"name\": \"query_database\","
  "   \"input\": {\"sql\": \"SELECT count(*) AS stores FROM stores\"}}]}},"
  " {\"match\": {\"contains\": \"toolu_pgown\"},"
  "  \"message\": {\"content\": [{\"type\": \"text\", \"text\": \"{{last_tool_result}}\"}]}}"
  "]}";

typedef struct {
  TallyTestPg   *cluster;
  GHashTable    *keyring;
  char          *analyst;     /* the connection string without password */
  char          *session_id;
} PgData;

/* Opens the database chooser and returns it, on its Server page. */
static TallyDatabaseDialog *
open_database_dialog (TallyWindow *window)
{
  TallyDatabaseDialog *dialog = NULL;
  GListModel *toplevels = gtk_window_get_toplevels ();

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.choose-database", NULL));
  for (guint i = 0; i < g_list_model_get_n_items (toplevels) && dialog == NULL; i++)
    {
      g_autoptr(GObject) toplevel = g_list_model_get_item (toplevels, i);

      if (TALLY_IS_DATABASE_DIALOG (toplevel) && gtk_widget_get_visible (GTK_WIDGET (toplevel)))
        dialog = TALLY_DATABASE_DIALOG (toplevel);
    }
  g_assert_nonnull (dialog);
  tally_database_dialog_set_page (dialog, "server");
  return dialog;
}

/* Emits @signal (with @row, or none) on @instance, a widget of @dialog,
 * and waits until a connection was made (the dialog closed: %TRUE) or
 * failed (its error shown: %FALSE). */
static gboolean
emit_and_wait (TallyDatabaseDialog *dialog,
               gpointer             instance,
               const char          *signal,
               GtkListBoxRow       *row)
{
  g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *)&dialog);
  if (row != NULL)
    g_signal_emit_by_name (instance, signal, row);
  else
    g_signal_emit_by_name (instance, signal);
  SPIN_UNTIL (dialog == NULL || !tally_database_dialog_get_busy (dialog));
  if (dialog == NULL)
    return TRUE;
  g_object_remove_weak_pointer (G_OBJECT (dialog), (gpointer *)&dialog);
  return FALSE;
}

/* Types into the Server page and presses Connect. */
static gboolean
connect_server (TallyDatabaseDialog *dialog,
                const char          *name,
                const char          *conninfo,
                const char          *password)
{
  gtk_editable_set_text (_tally_database_dialog_get_name_entry (dialog), name);
  gtk_editable_set_text (_tally_database_dialog_get_conninfo_entry (dialog), conninfo);
  gtk_editable_set_text (_tally_database_dialog_get_password_entry (dialog), password);
  return emit_and_wait (dialog, _tally_database_dialog_get_connect_button (dialog), "clicked", NULL);
}

/* Activates the saved connection called @name, as a click on its row. */
static gboolean
connect_saved (TallyDatabaseDialog *dialog,
               const char          *name)
{
  GtkListBox *list = _tally_database_dialog_get_saved_list (dialog);
  GtkListBoxRow *row = NULL;

  for (int i = 0; row == NULL; i++)
    {
      GtkListBoxRow *candidate = gtk_list_box_get_row_at_index (list, i);

      g_assert_nonnull (candidate);
      if (g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (candidate)), name) == 0)
        row = candidate;
    }
  return emit_and_wait (dialog, list, "row-activated", row);
}

/* No key of the application's settings holds @text. */
static void
assert_settings_lack (const char *text)
{
  g_autoptr(GSettings) settings = g_settings_new (APPLICATION_ID);
  g_autoptr(GSettingsSchema) schema = NULL;
  g_auto(GStrv) keys = NULL;

  g_object_get (settings, "settings-schema", &schema, NULL);
  keys = g_settings_schema_list_keys (schema);
  for (guint i = 0; keys[i] != NULL; i++)
    {
      g_autoptr(GVariant) value = g_settings_get_value (settings, keys[i]);
      g_autofree char *printed = g_variant_print (value, FALSE);

      g_assert_null (strstr (printed, text));
    }
}

static void
pg_body (TallyApplication *app,
         TallyWindow      *window,
         gpointer          user_data)
{
  PgData *data = user_data;
  g_autoptr(GSettings) settings = g_settings_new (APPLICATION_ID);
  g_autoptr(GVariant) saved = NULL;
  g_autofree char *wrong = NULL;
  g_autofree char *owner = NULL;
  TallyDatabaseDialog *dialog;
  TallySession *session;
  const char *name;
  const char *connection;
  const char *stored;

  SPIN_UNTIL (!_tally_window_is_refreshing (window));

  /* A password in the connection string is refused: it belongs in the
   * keyring. */
  dialog = open_database_dialog (window);
  wrong = g_strdup_printf ("%s password=%s", data->analyst, TALLY_TEST_PG_PASSWORD);
  g_assert_false (connect_server (dialog, "", wrong, ""));
  g_assert_nonnull (strstr (tally_database_dialog_get_error (dialog), "Password field"));

  /* A wrong password: libpq's own message, in the dialog. */
  g_assert_false (connect_server (dialog, "Beanline", data->analyst, "not-the-password"));
  g_test_message ("Refused: %s", tally_database_dialog_get_error (dialog));
  g_assert_nonnull (strstr (tally_database_dialog_get_error (dialog), "password authentication failed"));
  g_assert_cmpuint (g_hash_table_size (data->keyring), ==, 0);
  tally_test_save_png (GTK_WIDGET (dialog), "database-dialog-error.png");

  /* The right one: connected; the password is in the keyring only. */
  g_assert_true (connect_server (dialog, "Beanline", data->analyst, TALLY_TEST_PG_PASSWORD));
  g_assert_cmpuint (_tally_secret_get_n_pg_calls (), ==, 1);
  g_assert_cmpstr (g_hash_table_lookup (data->keyring, data->analyst), ==, TALLY_TEST_PG_PASSWORD);
  saved = g_settings_get_value (settings, "pg-connections");
  g_assert_cmpuint (g_variant_n_children (saved), ==, 1);
  g_variant_get_child (saved, 0, "(&s&s)", &name, &connection);
  g_assert_cmpstr (name, ==, "Beanline");
  g_assert_cmpstr (connection, ==, data->analyst);
  assert_settings_lack (TALLY_TEST_PG_PASSWORD);
  /* A role that only reads: no card. */
  g_assert_cmpuint (_tally_window_get_n_role_warnings (window), ==, 0);
  g_assert_false (_tally_window_get_role_warning_shown (window));

  /* A turn on the server: the rows come from PostgreSQL. */
  tally_composer_set_text (_tally_window_get_composer (window), PG_QUESTION);
  g_assert_true (tally_composer_send (_tally_window_get_composer (window)));
  SPIN_UNTIL (!tally_window_is_busy (window));
  session = tally_window_get_session (window);
  g_assert_nonnull (session);
  data->session_id = g_strdup (tally_session_get_id (session));
  g_assert_cmpuint (tally_test_count_blocks (tally_session_get_transcript (session), TALLY_BLOCK_TOOL_CALL), ==, 1);
  g_assert_cmpuint (tally_test_count_blocks (tally_session_get_transcript (session), TALLY_BLOCK_ERROR), ==, 0);
  /* The agent has the connection (its password in memory only). */
  g_assert_true (g_str_has_prefix (tally_agent_get_database (tally_session_get_agent (session)), data->analyst));
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  stored = tally_session_row_get_info (find_session_row (window, data->session_id))->database;
  g_assert_cmpstr (stored, ==, data->analyst);

  /* The superuser, without a password (the socket trusts it): the card,
   * once. */
  owner = tally_test_pg_dup_conninfo (data->cluster, "tally");
  dialog = open_database_dialog (window);
  g_assert_nonnull (gtk_list_box_get_row_at_index (_tally_database_dialog_get_saved_list (dialog), 0));
  g_assert_true (connect_server (dialog, "Owner", owner, ""));
  g_assert_cmpuint (_tally_secret_get_n_pg_calls (), ==, 1);
  g_assert_cmpuint (_tally_window_get_n_role_warnings (window), ==, 1);
  g_assert_true (_tally_window_get_role_warning_shown (window));
  tally_test_save_png (GTK_WIDGET (window), "role-warning.png");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.dismiss-role-warning", NULL));
  g_assert_false (_tally_window_get_role_warning_shown (window));

  /* The saved connections, picked by name: the password comes back from
   * the keyring; the owner's card does not come back. */
  dialog = open_database_dialog (window);
  SPIN_UNTIL (gtk_widget_get_width (GTK_WIDGET (dialog)) > 0);
  tally_test_save_png (GTK_WIDGET (dialog), "database-dialog.png");
  g_assert_true (connect_saved (dialog, "Beanline"));
  g_assert_cmpuint (_tally_secret_get_n_pg_calls (), ==, 2);
  g_assert_cmpuint (_tally_window_get_n_role_warnings (window), ==, 1);
  dialog = open_database_dialog (window);
  g_assert_true (connect_saved (dialog, "Owner"));
  g_assert_cmpuint (_tally_secret_get_n_pg_calls (), ==, 3);
  g_assert_cmpuint (_tally_window_get_n_role_warnings (window), ==, 1);
  g_assert_false (_tally_window_get_role_warning_shown (window));

  g_clear_pointer (&saved, g_variant_unref);
  saved = g_settings_get_value (settings, "pg-connections");
  g_assert_cmpuint (g_variant_n_children (saved), ==, 2);
  assert_settings_lack (TALLY_TEST_PG_PASSWORD);
}

/* Reopened from the store, the session's connection gets its password
 * back from the keyring, in memory. */
static void
pg_reopen_body (TallyApplication *app,
                TallyWindow      *window,
                gpointer          user_data)
{
  PgData *data = user_data;
  TallySession *session = tally_window_get_session (window);
  TallyAgent *agent;
  g_autofree char *expected = NULL;

  g_assert_nonnull (session);
  g_assert_cmpstr (tally_session_get_id (session), ==, data->session_id);
  agent = tally_session_get_agent (session);
  expected = tally_pg_conninfo_add_password (data->analyst, TALLY_TEST_PG_PASSWORD);
  SPIN_UNTIL (g_strcmp0 (tally_agent_get_database (agent), expected) == 0);
  g_assert_cmpuint (_tally_secret_get_n_pg_calls (), ==, 1);
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
}

/* A saved session on the owner's connection, reopened: no chooser made
 * the connection, so the card comes after the turn whose query did. */
static void
pg_owner_body (TallyApplication *app,
               TallyWindow      *window,
               gpointer          user_data)
{
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_nonnull (tally_window_get_session (window));
  g_assert_cmpuint (_tally_window_get_n_role_warnings (window), ==, 0);

  tally_composer_set_text (_tally_window_get_composer (window), "How many stores are there?");
  g_assert_true (tally_composer_send (_tally_window_get_composer (window)));
  SPIN_UNTIL (!tally_window_is_busy (window));
  g_assert_cmpuint (tally_test_count_blocks (tally_session_get_transcript (tally_window_get_session (window)),
                                  TALLY_BLOCK_ERROR), ==, 0);
  g_assert_cmpuint (_tally_window_get_n_role_warnings (window), ==, 1);
  g_assert_true (_tally_window_get_role_warning_shown (window));
}

/* Whether the file at @path holds @text anywhere (a SQLite file holds
 * NULs, so not strstr()). */
static gboolean
file_holds (const char *path,
            const char *text)
{
  g_autofree char *contents = NULL;
  gsize length = 0;

  gsize n = strlen (text);

  if (!g_file_get_contents (path, &contents, &length, NULL))
    return FALSE;
  for (gsize i = 0; i + n <= length; i++)
    if (memcmp (contents + i, text, n) == 0)
      return TRUE;
  return FALSE;
}

static void
test_pg_server (Fixture       *fixture,
                gconstpointer  unused)
{
  g_autoptr(TallyTestPg) cluster = NULL;
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GHashTable) keyring = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSettings) settings = g_settings_new (APPLICATION_ID);
  g_autoptr(JsonArray) requests = NULL;
  g_autofree char *skip_reason = NULL;
  g_autofree char *conninfo = NULL;
  g_autofree char *wal = NULL;
  g_autofree char *recorded = NULL;
  PgData data = { 0 };

  cluster = tally_test_pg_start (&skip_reason, &error);
  if (cluster == NULL)
    {
      g_assert_no_error (error);
      g_test_skip (skip_reason ? skip_reason : "no PostgreSQL server");
      return;
    }
  mock = tally_test_mock_start (pg_scenario, &error);
  g_assert_no_error (error);

  conninfo = tally_test_pg_dup_conninfo (cluster, "analyst");
  data.cluster = cluster;
  data.keyring = keyring;
  data.analyst = tally_pg_conninfo_redact (conninfo);
  _tally_secret_set_test_keyring (keyring);
  {
    const char *args[] = { "--store", fixture->store_path,
                           "--base-url", tally_test_mock_get_base_url (mock), NULL };
    g_assert_cmpint (tally_test_app_run (args, pg_body, &data), ==, 0);
  }
  _tally_secret_set_test_keyring (keyring);
  {
    const char *args[] = { "--store", fixture->store_path,
                           "--base-url", tally_test_mock_get_base_url (mock),
                           "--session", data.session_id, NULL };
    g_assert_cmpint (tally_test_app_run (args, pg_reopen_body, &data), ==, 0);
  }
  {
    g_autofree char *owner = tally_test_pg_dup_conninfo (cluster, "tally");
    g_autofree char *sample = g_strdup (g_getenv ("TALLY_SAMPLE_DB"));
    g_autofree char *owner_session = NULL;

    /* seed_session() records TALLY_SAMPLE_DB as the session's database. */
    g_setenv ("TALLY_SAMPLE_DB", owner, TRUE);
    owner_session = seed_session (fixture->store_path, "Owner", "Hello.");
    g_setenv ("TALLY_SAMPLE_DB", sample, TRUE);
    {
      const char *args[] = { "--store", fixture->store_path,
                             "--base-url", tally_test_mock_get_base_url (mock),
                             "--session", owner_session, NULL };
      g_assert_cmpint (tally_test_app_run (args, pg_owner_body, NULL), ==, 0);
    }
  }
  _tally_secret_set_test_keyring (NULL);

  /* The query reached the server and its rows went to the model, which
   * was told the engine; the password went nowhere. */
  requests = tally_test_mock_dup_requests (mock);
  {
    g_autoptr(JsonNode) node = json_node_init_array (json_node_alloc (), requests);

    recorded = json_to_string (node, FALSE);
  }
  g_assert_nonnull (strstr (recorded, "Leeds Station"));
  g_assert_nonnull (strstr (recorded, "PostgreSQL 1"));
  g_assert_null (strstr (recorded, TALLY_TEST_PG_PASSWORD));

  /* The store keeps the connection without its password. */
  wal = g_strconcat (fixture->store_path, "-wal", NULL);
  g_assert_true (file_holds (fixture->store_path, data.analyst) || file_holds (wal, data.analyst));
  g_assert_false (file_holds (fixture->store_path, TALLY_TEST_PG_PASSWORD));
  g_assert_false (file_holds (wal, TALLY_TEST_PG_PASSWORD));
  assert_settings_lack (TALLY_TEST_PG_PASSWORD);

  g_settings_reset (settings, "pg-connections");
  g_free (data.analyst);
  g_free (data.session_id);
}


/* /tally/app/open-data-files: `win.open-data-files` is installed and on the
 * database row; the import it runs after the chooser (called here without
 * one) shows its bar, refuses a bad file leaving the database as it was,
 * then makes the imported database the session's (docs/data-files.md). */

typedef struct {
  char *good;
  char *bad;
} DataFilesData;

static gboolean
has_class_action (GtkWidget  *widget,
                  const char *name)
{
  GtkWidgetClass *klass = GTK_WIDGET_GET_CLASS (widget);
  const char *action_name;
  const GVariantType *parameter_type;
  const char *property_name;
  GType owner;

  /* GTK 4.8 fills every out argument: none may be NULL. */
  for (guint i = 0;
       gtk_widget_class_query_action (klass, i, &owner, &action_name, &parameter_type, &property_name);
       i++)
    if (g_str_equal (action_name, name))
      return TRUE;
  return FALSE;
}

static gboolean
has_actionable (GtkWidget  *root,
                const char *action_name)
{
  g_autoptr(GPtrArray) buttons = find_all (root, GTK_TYPE_BUTTON);

  for (guint i = 0; i < buttons->len; i++)
    if (g_strcmp0 (gtk_actionable_get_action_name (g_ptr_array_index (buttons, i)), action_name) == 0)
      return TRUE;
  return FALSE;
}

static void
data_files_body (TallyApplication *app,
                 TallyWindow      *window,
                 gpointer          user_data)
{
  DataFilesData *data = user_data;
  const char *good[] = { data->good, NULL };
  const char *bad[] = { data->bad, NULL };
  g_autofree char *before = g_strdup (window->database);
  g_autofree char *database = NULL;
  TallyDataImportBar *bar;

  g_assert_true (has_class_action (GTK_WIDGET (window), "win.open-data-files"));
  _tally_window_ensure_context_popover (window);
  g_assert_true (has_actionable (GTK_WIDGET (window->context_popover), "win.open-data-files"));

  _tally_window_import_data_files (window, bad);
  bar = _tally_window_get_data_import_bar (window);
  g_assert_nonnull (bar);
  g_assert_true (_tally_window_is_importing (window));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (bar)));
  g_assert_cmpstr (tally_data_import_bar_get_title (bar), ==, "Importing “ragged.csv”…");
  SPIN_UNTIL (!_tally_window_is_importing (window));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (bar)));
  g_assert_cmpstr (window->database, ==, before);

  _tally_window_import_data_files (window, good);
  g_assert_nonnull (window->workspace);
  database = g_build_filename (window->workspace, ".tally", "data.db", NULL);
  SPIN_UNTIL (!_tally_window_is_importing (window));
  SPIN_UNTIL (tally_data_import_bar_get_fraction (bar) == 1.0);
  g_assert_cmpstr (window->database, ==, database);
  g_assert_true (g_file_test (database, G_FILE_TEST_IS_REGULAR));
  if (window->session != NULL)
    g_assert_cmpstr (tally_agent_get_database (tally_session_get_agent (window->session)), ==, database);

  /* The database chooser's File page (past its native chooser) refuses a
   * file that is neither SQLite nor data, and hands a data file to the
   * same import. */
  {
    g_autofree char *text = g_build_filename (window->workspace, "not-a-database.txt", NULL);
    g_autofree char *events = g_build_filename (tally_test_data_dir (), "data", "import", "events.jsonl", NULL);
    TallyDatabaseDialog *dialog = open_database_dialog (window);
    g_autoptr(GPtrArray) pages = NULL;
    gboolean refused = FALSE;

    g_assert_true (g_file_set_contents (text, "hello\n", -1, NULL));
    tally_database_dialog_set_page (dialog, "file");
    _tally_database_dialog_choose_file (dialog, text);
    pages = find_all (GTK_WIDGET (dialog), ADW_TYPE_STATUS_PAGE);
    for (guint i = 0; i < pages->len; i++)
      refused |= g_strcmp0 (adw_status_page_get_description (g_ptr_array_index (pages, i)),
                            "“not-a-database.txt” is not a SQLite database") == 0;
    g_assert_true (refused);
    g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));
    g_assert_false (_tally_window_is_importing (window));

    g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *) &dialog);
    _tally_database_dialog_choose_file (dialog, events);
    g_assert_true (_tally_window_is_importing (window));
    g_assert_cmpstr (tally_data_import_bar_get_title (bar), ==, "Importing “events.jsonl”…");
    SPIN_UNTIL (dialog == NULL);
    SPIN_UNTIL (!_tally_window_is_importing (window));
    SPIN_UNTIL (tally_data_import_bar_get_fraction (bar) == 1.0);
    g_assert_cmpstr (window->database, ==, database);
  }
}

static void
test_open_data_files (Fixture       *fixture,
                      gconstpointer  unused)
{
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };
  DataFilesData data = {
    g_build_filename (tally_test_data_dir (), "data", "import", "sales.csv", NULL),
    g_build_filename (tally_test_data_dir (), "data", "import", "ragged.csv", NULL),
  };

  g_assert_cmpint (tally_test_app_run_with_network (args, 0, data_files_body, &data), ==, 0);
  g_free (data.good);
  g_free (data.bad);
}

int
main (int   argc,
      char *argv[])
{
  /* No keyring and no session bus, settings in memory, a temporary home,
   * animations off (tally_test_app_init()). */
  g_autofree char *home = tally_test_app_init (&argc, &argv);
  int status;

  g_test_add ("/tally/app/turn-and-reopen", Fixture, NULL, fixture_set_up, test_turn_and_reopen, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/files-and-export", Fixture, NULL, fixture_set_up, test_files_and_export, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/first-launch", Fixture, NULL, fixture_set_up, test_first_launch, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/delete-undo", Fixture, NULL, fixture_set_up, test_delete_undo, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/search-rename", Fixture, NULL, fixture_set_up, test_search_rename, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/offline", Fixture, NULL, fixture_set_up, test_offline, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/stop", Fixture, NULL, fixture_set_up, test_stop, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/preferences", Fixture, NULL, fixture_set_up, test_preferences, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/key-refused", Fixture, NULL, fixture_set_up, test_key_refused, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/spend-cap", Fixture, NULL, fixture_set_up, test_spend_cap, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/narrow-and-sidebar", Fixture, NULL, fixture_set_up, test_narrow, tally_test_app_fixture_tear_down);
  g_test_add_func ("/tally/app/bad-base-url", test_bad_base_url);
  g_test_add_func ("/tally/app/sidebar-format", test_sidebar_format);
  g_test_add ("/tally/app/pg-server", Fixture, NULL, fixture_set_up, test_pg_server, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/open-data-files", Fixture, NULL, fixture_set_up, test_open_data_files, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/app/model-cache", Fixture, NULL, fixture_set_up, test_model_cache, tally_test_app_fixture_tear_down);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
