/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Errors the analyst can act on, receipts that agree, offline for real
 * (issue 14 §4, §7, §11), in the real application under Xvfb against the
 * mock Messages API:
 *
 * - a refused key reads as one, offers Change Key… (the preferences, key
 *   field focused) and Retry, which runs the failed turn again in place:
 *   no second bubble, once only, and it succeeds;
 * - automatic retries count down beside Stop;
 * - a failing or overloaded server's advice says how many times Tally
 *   sent the request, and claims no retries when it sent it once;
 * - a reply cut in the middle offers Retry too;
 * - the receipt row says what tally-cli says, and a failed turn counts
 *   the API call the server answered;
 * - a refused connection shows the offline banner once, and the next
 *   answer clears it although the network monitor said online all along;
 * - a damaged store is refused with Salvage…, which copies its sessions
 *   into a new store beside it, leaves the damaged file as it was, and
 *   says what it copied and lost (and, when a conversation lost a part,
 *   that the model no longer sees all of the transcript).
 *
 * Screenshots of the error states, light and dark, go to
 * $G_TEST_BUILDDIR/artifacts/errors-*.png. */

#define G_LOG_DOMAIN "test-errors-ui"

#include "config.h"

#include <signal.h>
#include <string.h>

#include <sqlite3.h>

#include <adwaita.h>
#include <gtk/gtk.h>

#include "tally-application-private.h"
#include "tally-composer.h"
#include "tally-error-banner.h"
#include "tally-json.h"
#include "tally-preferences-window.h"
#include "tally-receipt-row.h"
#include "tally-receipt.h"
#include "tally-store.h"
#include "tally-test-app.h"
#include "tally-test-mock.h"
#include "tally-test-ui.h"
#include "tally-test-util.h"
#include "tally-window-private.h"

/* A stream with prompt-cache figures, so the receipt has every part. */
#define ANSWER "{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Hello! Ask me about Beanline.\"}]," \
               "\"usage\":{\"input_tokens\":6850,\"output_tokens\":412," \
               "\"cache_read_input_tokens\":1200,\"cache_creation_input_tokens\":300}}}"

/* A store in a temporary folder (tests/tally-test-app.h). */
typedef TallyTestAppFixture Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  tally_test_app_fixture_set_up (fixture, data);
  g_setenv ("ANTHROPIC_API_KEY", "sk-test-key", TRUE);
}

static guint
count_blocks (TallyWindow    *window,
              TallyBlockKind  kind)
{
  return tally_test_count_blocks (tally_session_get_transcript (tally_window_get_session (window)), kind);
}

/* The newest block of @kind in the session shown (a new reference). */
static TallyBlock *
last_block (TallyWindow    *window,
            TallyBlockKind  kind)
{
  GListModel *blocks = G_LIST_MODEL (tally_session_get_transcript (tally_window_get_session (window)));

  for (guint i = g_list_model_get_n_items (blocks); i > 0; i--)
    {
      g_autoptr(TallyBlock) block = g_list_model_get_item (blocks, i - 1);

      if (tally_block_get_kind (block) == kind)
        return g_steal_pointer (&block);
    }
  return NULL;
}

/* The banner, or the receipt row, shown for the first block of @type. */
static GtkWidget *
first_widget (TallyWindow *window,
              GType        type)
{
  GtkWidget *found = NULL;

  SPIN_UNTIL ((found = tally_test_find_first (GTK_WIDGET (window), type)) != NULL);
  return found;
}

static TallyErrorBanner *
wait_error_banner (TallyWindow *window)
{
  SPIN_UNTIL (!tally_window_is_busy (window));
  return TALLY_ERROR_BANNER (first_widget (window, TALLY_TYPE_ERROR_BANNER));
}

/* How many times the prompt's text went in the messages of request @n. */
static guint
count_prompt_in_request (TallyTestMock *mock,
                         guint          n,
                         const char    *prompt)
{
  g_autoptr(JsonObject) body = tally_test_mock_dup_request_body (mock, n);
  JsonArray *messages = json_object_get_array_member (body, "messages");
  guint count = 0;

  for (guint i = 0; i < json_array_get_length (messages); i++)
    {
      JsonNode *content = json_object_get_member (json_array_get_object_element (messages, i), "content");

      if (JSON_NODE_HOLDS_VALUE (content))
        count += g_strcmp0 (json_node_get_string (content), prompt) == 0;
      else
        for (guint j = 0; j < json_array_get_length (json_node_get_array (content)); j++)
          count += g_strcmp0 (json_object_get_string_member_with_default (
                                json_array_get_object_element (json_node_get_array (content), j), "text", NULL),
                              prompt) == 0;
    }
  return count;
}

/* Whether a label under @root reads @text. */
static gboolean
has_label (GtkWidget  *root,
           const char *text)
{
  g_autoptr(GPtrArray) labels = tally_test_find_all (root, GTK_TYPE_LABEL);

  for (guint i = 0; i < labels->len; i++)
    if (g_strcmp0 (gtk_label_get_label (g_ptr_array_index (labels, i)), text) == 0)
      return TRUE;
  return FALSE;
}

/* POST /v1/messages requests the mock received (the model list aside). */
static guint
count_message_requests (TallyTestMock *mock)
{
  return tally_test_mock_count_path (mock, "/v1/messages");
}

/* Keeps the preferences window @app opens next, in @out. */
static void
window_added_cb (GtkApplication          *app,
                 GtkWindow               *window,
                 TallyPreferencesWindow **out)
{
  if (TALLY_IS_PREFERENCES_WINDOW (window))
    *out = TALLY_PREFERENCES_WINDOW (window);
}

/* /tally/errors-ui/key-refused */

static void
key_saved_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  gboolean *done = user_data;

  tally_application_set_api_key_finish (TALLY_APPLICATION (object), result, NULL);
  *done = TRUE;
}

static void
key_refused_body (TallyApplication *app,
                  TallyWindow      *window,
                  gpointer          user_data)
{
  TallyTestMock *mock = user_data;
  g_autoptr(TallyBlock) failed_receipt = NULL;
  g_autoptr(TallyBlock) receipt = NULL;
  g_autoptr(TallyBlock) error_block = NULL;
  g_autofree char *terminal = NULL;
  g_autofree char *failed_turn = NULL;
  TallyErrorBanner *banner;
  TallyPreferencesWindow *prefs = NULL;
  GtkWidget *focus;
  GtkWidget *key_row;
  GtkButton *button;
  GtkWidget *row;
  TallyReceipt parts;
  guint requests;
  gboolean saved = FALSE;

  /* A key typed in (kept in memory: no keyring here), so the preferences
   * can take a new one. */
  tally_application_set_api_key_async (app, "sk-wrong-key", NULL, key_saved_cb, &saved);
  SPIN_UNTIL (saved);

  tally_window_send (window, "Hello?");
  banner = wait_error_banner (window);

  /* The analyst's words; the server's in the details. */
  g_assert_cmpstr (tally_error_banner_get_message (banner), ==, "Your API key was refused");
  g_assert_cmpstr (tally_error_banner_get_meta (banner), ==, "The server did not accept the key. Change it, then retry.");
  g_assert_true (g_str_has_prefix (tally_error_banner_get_details (banner),
                                   "The Messages API refused the API key (HTTP 401): invalid x-api-key\n"
                                   "Request ID req_"));
  g_assert_null (strstr (tally_error_banner_get_meta (banner), "x-api-key"));

  /* The failed turn's receipt counts the call the server answered. */
  failed_receipt = last_block (window, TALLY_BLOCK_RECEIPT);
  g_assert_cmpstr (tally_block_get_state (failed_receipt), ==, "failed");
  row = first_widget (window, TALLY_TYPE_RECEIPT_ROW);
  g_assert_true (g_str_has_prefix (tally_receipt_row_get_text (TALLY_RECEIPT_ROW (row)),
                                   "Failed · $0.0000 · 0 in · 0 out · 1 API call · "));

  /* The failed first turn is not listed as a finished "$0.0000" session. */
  SPIN_UNTIL (has_label (GTK_WIDGET (_tally_window_get_session_list (window)), "No answer yet"));
  g_assert_false (has_label (GTK_WIDGET (_tally_window_get_session_list (window)), "$0.0000"));

  tally_test_app_save_light_dark (GTK_WIDGET (window), "errors-key-refused");

  /* Change Key… opens the preferences with the key field focused. */
  button = tally_error_banner_get_action_button (banner);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (button)));
  g_assert_cmpstr (gtk_button_get_label (button), ==, "Change _Key…");
  g_signal_connect (app, "window-added", G_CALLBACK (window_added_cb), &prefs);
  g_signal_emit_by_name (button, "clicked");
  SPIN_UNTIL (prefs != NULL);
  g_signal_handlers_disconnect_by_func (app, window_added_cb, &prefs);
  g_assert_true (gtk_window_get_transient_for (GTK_WINDOW (prefs)) == GTK_WINDOW (window));
  key_row = tally_test_find_first (GTK_WIDGET (prefs), ADW_TYPE_PASSWORD_ENTRY_ROW);
  g_assert_nonnull (key_row);
  SPIN_UNTIL ((focus = gtk_window_get_focus (GTK_WINDOW (prefs))) != NULL &&
              (focus == key_row || gtk_widget_is_ancestor (focus, key_row)));
  gtk_window_destroy (GTK_WINDOW (prefs));

  /* Retry runs the same turn again, in place. */
  g_assert_cmpuint (count_blocks (window, TALLY_BLOCK_USER), ==, 1);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (tally_error_banner_get_retry_button (banner))));
  error_block = last_block (window, TALLY_BLOCK_ERROR);
  failed_turn = g_strdup (tally_block_get_turn_id (error_block));
  requests = count_message_requests (mock);
  g_signal_emit_by_name (tally_error_banner_get_retry_button (banner), "clicked");
  /* Gone at once, so it cannot be pressed twice. */
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (tally_error_banner_get_retry_button (banner))));
  SPIN_UNTIL (count_blocks (window, TALLY_BLOCK_RECEIPT) == 2);
  SPIN_UNTIL (!tally_window_is_busy (window));

  g_assert_cmpuint (count_blocks (window, TALLY_BLOCK_USER), ==, 1);
  g_assert_cmpuint (count_blocks (window, TALLY_BLOCK_ERROR), ==, 1);
  receipt = last_block (window, TALLY_BLOCK_RECEIPT);
  g_assert_cmpstr (tally_block_get_state (receipt), ==, "done");
  g_assert_cmpuint (count_message_requests (mock), ==, requests + 1);
  /* The prompt went once, not twice, in the retried request. */
  g_assert_cmpuint (count_prompt_in_request (mock, tally_test_mock_get_n_requests (mock) - 1, "Hello?"), ==, 1);
  g_assert_true (tally_json_object_get_bool (tally_block_get_details (error_block), "retried", FALSE));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (tally_error_banner_get_retry_button (banner))));

  /* A second Retry of the same turn does nothing but say why. */
  gtk_widget_activate_action (GTK_WIDGET (banner), "session.retry", "s", failed_turn);
  g_assert_false (tally_window_is_busy (window));
  g_assert_cmpstr (_tally_window_get_last_toast_title (window), ==, "Only the newest failed reply can be retried");
  tally_test_spin_idle ();
  g_assert_cmpuint (count_message_requests (mock), ==, requests + 1);

  /* The receipt row says what tally-cli prints for the same turn: the
   * same figures and grouping, only the status written as a word. */
  tally_receipt_init (&parts, tally_block_get_details (receipt));
  terminal = tally_receipt_dup_line (&parts, TALLY_RECEIPT_STYLE_TERMINAL);
  g_assert_true (g_str_has_prefix (terminal, "— done · "));
  g_assert_nonnull (strstr (terminal, " · 6,850 in · 412 out · cache 1,200 read, 300 written · 1 API call · "));
  {
    g_autoptr(GPtrArray) rows = tally_test_find_all (GTK_WIDGET (window), TALLY_TYPE_RECEIPT_ROW);
    const char *shown = NULL;

    for (guint i = 0; i < rows->len; i++)
      if (g_str_has_prefix (tally_receipt_row_get_text (g_ptr_array_index (rows, i)), "Done · "))
        shown = tally_receipt_row_get_text (g_ptr_array_index (rows, i));
    g_assert_nonnull (shown);
    g_assert_cmpstr (shown + strlen ("Done · "), ==, terminal + strlen ("— done · "));
    /* Not the tiny dim caption it was. */
    row = gtk_widget_get_last_child (GTK_WIDGET (g_ptr_array_index (rows, rows->len - 1)));
    g_assert_false (gtk_widget_has_css_class (row, "dim-label"));
    g_assert_false (gtk_widget_has_css_class (row, "caption"));
  }

  tally_test_app_save_light_dark (GTK_WIDGET (window), "errors-retried");
}

static void
test_key_refused (Fixture       *fixture,
                  gconstpointer  unused)
{
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;

  mock = tally_test_mock_start ("{\"responses\":[{\"error\":{\"type\":\"authentication_error\","
                                "\"message\":\"invalid x-api-key\"}}," ANSWER "]}", &error);
  g_assert_no_error (error);

  g_unsetenv ("ANTHROPIC_API_KEY");
  {
    const char *args[] = { "--store", fixture->store_path, "--base-url", tally_test_mock_get_base_url (mock), NULL };

    g_assert_cmpint (tally_test_app_run (args, key_refused_body, mock), ==, 0);
  }

  /* tally-cli --replay shows the prompt once: the retry ran it in place. */
  {
    g_autofree char *ui_dir = g_path_get_dirname (TALLY_TEST_APP);
    g_autofree char *src_dir = g_path_get_dirname (ui_dir);
    g_autofree char *cli = g_build_filename (src_dir, "cli", "tally-cli", NULL);
    g_autofree char *list = NULL;
    g_autofree char *replay = NULL;
    g_auto(GStrv) fields = NULL;
    const char *list_argv[] = { cli, "--store", fixture->store_path, "--list", NULL };
    int status;

    g_assert_true (g_spawn_sync (NULL, (char **) list_argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                                 &list, NULL, &status, &error));
    g_assert_no_error (error);
    fields = g_strsplit (list, "\t", 2);
    g_assert_nonnull (fields[1]);
    {
      const char *replay_argv[] = { cli, "--store", fixture->store_path, "--replay", fields[0], NULL };

      g_assert_true (g_spawn_sync (NULL, (char **) replay_argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                                   &replay, NULL, &status, &error));
    }
    g_assert_no_error (error);
    g_assert_nonnull (strstr (replay, "> Hello?"));
    g_assert_null (strstr (strstr (replay, "> Hello?") + 1, "> Hello?"));
    g_assert_nonnull (strstr (replay, "Hello! Ask me about Beanline."));
  }
}

/* /tally/errors-ui/countdown */

/* Keeps every text the composer's status label was given, in order. */
static void
status_changed_cb (GtkLabel   *label,
                   GParamSpec *pspec,
                   GPtrArray  *seen)
{
  const char *text = gtk_label_get_label (label);

  if (seen->len == 0 || g_strcmp0 (g_ptr_array_index (seen, seen->len - 1), text) != 0)
    g_ptr_array_add (seen, g_strdup (text));
}

static void
countdown_body (TallyApplication *app,
                TallyWindow      *window,
                gpointer          user_data)
{
  TallyComposer *composer = _tally_window_get_composer (window);
  g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) labels = tally_test_find_all (GTK_WIDGET (composer), GTK_TYPE_LABEL);
  GtkLabel *status = NULL;
  gboolean counted_down = FALSE;

  for (guint i = 0; i < labels->len; i++)
    if (gtk_widget_has_css_class (g_ptr_array_index (labels, i), "composer-status"))
      status = g_ptr_array_index (labels, i);
  g_assert_nonnull (status);
  g_signal_connect (status, "notify::label", G_CALLBACK (status_changed_cb), seen);

  g_assert_cmpstr (tally_composer_get_status (composer), ==, "");
  tally_window_send (window, "How many stores are there?");

  /* The server asked for 2 s: the composer counts them down beside Stop. */
  SPIN_UNTIL (g_strcmp0 (tally_composer_get_status (composer), "Retrying in 2 s… (attempt 2 of 5)") == 0);
  g_assert_true (tally_composer_get_busy (composer));
  tally_test_app_save_light_dark (GTK_WIDGET (window), "errors-countdown");

  SPIN_UNTIL (!tally_window_is_busy (window));
  g_assert_cmpstr (tally_composer_get_status (composer), ==, "");
  g_assert_null (tally_test_find_first (GTK_WIDGET (window), TALLY_TYPE_ERROR_BANNER));
  g_signal_handlers_disconnect_by_func (status, status_changed_cb, seen);

  /* It started at 2 s and went down (how far it got between ticks depends
   * on how busy the machine is: 1 s, or straight to "Retrying…"), then
   * cleared when the answer came. */
  g_assert_cmpuint (seen->len, >=, 3);
  g_assert_cmpstr (g_ptr_array_index (seen, 0), ==, "Retrying in 2 s… (attempt 2 of 5)");
  for (guint i = 1; i + 1 < seen->len; i++)
    {
      const char *text = g_ptr_array_index (seen, i);

      g_assert_true (g_str_equal (text, "Retrying in 1 s… (attempt 2 of 5)") ||
                     g_str_equal (text, "Retrying… (attempt 2 of 5)"));
      counted_down = TRUE;
    }
  g_assert_true (counted_down);
  g_assert_cmpstr (g_ptr_array_index (seen, seen->len - 1), ==, "");
}

static void
test_countdown (Fixture       *fixture,
                gconstpointer  unused)
{
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;

  mock = tally_test_mock_start ("{\"responses\":[{\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},"
                                "\"headers\":{\"retry-after\":\"2\"}}," ANSWER "]}", &error);
  g_assert_no_error (error);
  {
    const char *args[] = { "--store", fixture->store_path, "--base-url", tally_test_mock_get_base_url (mock), NULL };

    g_assert_cmpint (tally_test_app_run (args, countdown_body, NULL), ==, 0);
  }
  g_assert_cmpuint (count_message_requests (mock), ==, 2);
}

/* /tally/errors-ui/cut-reply */

static void
cut_reply_body (TallyApplication *app,
                TallyWindow      *window,
                gpointer          user_data)
{
  g_autoptr(TallyBlock) receipt = NULL;
  TallyErrorBanner *banner;

  tally_window_send (window, "Which store sold the most?");
  banner = wait_error_banner (window);

  g_assert_cmpstr (tally_error_banner_get_message (banner), ==, "The connection was lost during the reply");
  g_assert_cmpstr (tally_error_banner_get_meta (banner), ==,
                   "The unfinished reply is kept here. Retry to ask again.");
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (tally_error_banner_get_retry_button (banner))));
  tally_test_app_save_light_dark (GTK_WIDGET (window), "errors-cut-reply");

  g_signal_emit_by_name (tally_error_banner_get_retry_button (banner), "clicked");
  SPIN_UNTIL (count_blocks (window, TALLY_BLOCK_RECEIPT) == 2);
  SPIN_UNTIL (!tally_window_is_busy (window));
  receipt = last_block (window, TALLY_BLOCK_RECEIPT);
  g_assert_cmpstr (tally_block_get_state (receipt), ==, "done");
  g_assert_cmpuint (count_blocks (window, TALLY_BLOCK_USER), ==, 1);
}

static void
test_cut_reply (Fixture       *fixture,
                gconstpointer  unused)
{
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;

  /* The first block arrives whole, the connection drops in the second:
   * content came, so the client does not retry on its own. */
  mock = tally_test_mock_start (
    "{\"responses\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Looking at March.\"},"
    "{\"type\":\"text\",\"text\":\"The busiest store in March was the Riverside branch, ahead of the "
    "station kiosk and the market hall, by a margin that held every week of the month.\"}]},"
    "\"cut_after_bytes\":1100}," ANSWER "]}", &error);
  g_assert_no_error (error);
  {
    const char *args[] = { "--store", fixture->store_path, "--base-url", tally_test_mock_get_base_url (mock), NULL };

    g_assert_cmpint (tally_test_app_run (args, cut_reply_body, NULL), ==, 0);
  }
  g_assert_cmpuint (count_message_requests (mock), ==, 2);
}

/* /tally/errors-ui/server-error-once, /tally/errors-ui/overloaded-retried:
 * the advice for a 5xx says how many times Tally sent the request, and
 * claims no retries when there were none (docs/protocol.md §11.1, §11.4). */

typedef struct {
  TallyTestMock *mock;
  guint          max_retries;  /* 0 = the client's default */
} ServerErrorData;

static void
server_error_once_body (TallyApplication *app,
                        TallyWindow      *window,
                        gpointer          user_data)
{
  ServerErrorData *data = user_data;
  g_autoptr(TallyBlock) error_block = NULL;
  TallyErrorBanner *banner;
  GtkWidget *row;

  tally_window_send (window, "Which store sold the most?");
  banner = wait_error_banner (window);

  /* x-should-retry: false forbids a retry: one request, so no "tried". */
  g_assert_cmpuint (count_message_requests (data->mock), ==, 1);
  error_block = last_block (window, TALLY_BLOCK_ERROR);
  g_assert_cmpstr (tally_block_get_state (error_block), ==, "http");
  g_assert_cmpint (tally_json_object_get_int (tally_block_get_details (error_block), "status", 0), ==, 502);
  g_assert_cmpint (tally_json_object_get_int (tally_block_get_details (error_block), "attempts", 0), ==, 1);

  g_assert_cmpstr (tally_error_banner_get_message (banner), ==, "The server had a problem");
  g_assert_cmpstr (tally_error_banner_get_meta (banner), ==, "Wait a moment, then retry.");
  g_assert_null (strstr (tally_error_banner_get_meta (banner), "tried"));

  /* The receipt agrees: one call. */
  row = first_widget (window, TALLY_TYPE_RECEIPT_ROW);
  g_assert_nonnull (strstr (tally_receipt_row_get_text (TALLY_RECEIPT_ROW (row)), " · 1 API call · "));
}

static void
test_server_error_once (Fixture       *fixture,
                        gconstpointer  unused)
{
  ServerErrorData data = { 0 };
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;

  /* A retry would get the answer, and no error would show. */
  mock = tally_test_mock_start ("{\"responses\":[{\"status\":502,\"error\":{\"type\":\"api_error\","
                                "\"message\":\"Bad gateway\"},\"headers\":{\"x-should-retry\":\"false\"}},"
                                ANSWER "]}", &error);
  g_assert_no_error (error);
  data.mock = mock;
  {
    const char *args[] = { "--store", fixture->store_path, "--base-url", tally_test_mock_get_base_url (mock), NULL };

    g_assert_cmpint (tally_test_app_run (args, server_error_once_body, &data), ==, 0);
  }
  g_assert_cmpuint (count_message_requests (mock), ==, 1);
}

static void
overloaded_retried_body (TallyApplication *app,
                         TallyWindow      *window,
                         gpointer          user_data)
{
  ServerErrorData *data = user_data;
  g_autoptr(TallyBlock) error_block = NULL;
  g_autofree char *expected = NULL;
  TallyErrorBanner *banner;
  guint requests;

  tally_client_set_max_retries (tally_application_get_client (app), data->max_retries);

  tally_window_send (window, "Which store sold the most?");
  banner = wait_error_banner (window);

  /* The first attempt and every retry the client allows, all refused. */
  requests = count_message_requests (data->mock);
  g_assert_cmpuint (requests, ==, data->max_retries + 1);
  error_block = last_block (window, TALLY_BLOCK_ERROR);
  g_assert_cmpint (tally_json_object_get_int (tally_block_get_details (error_block), "status", 0), ==, 529);
  g_assert_cmpint (tally_json_object_get_int (tally_block_get_details (error_block), "attempts", 0), ==, requests);

  g_assert_cmpstr (tally_error_banner_get_message (banner), ==, "The server is overloaded");
  expected = g_strdup_printf ("Tally tried %u times. Wait a moment, then retry.", requests);
  g_assert_cmpstr (tally_error_banner_get_meta (banner), ==, expected);
  tally_test_app_save_light_dark (GTK_WIDGET (window), "errors-overloaded");
}

static void
test_overloaded_retried (Fixture       *fixture,
                         gconstpointer  unused)
{
  ServerErrorData data = { 0 };
  g_autoptr(TallyTestMock) mock = NULL;
  g_autoptr(GError) error = NULL;

  /* Three 529s, each asking for a 1 ms wait, and an answer a fourth
   * attempt would get: two retries allowed, so it never comes. */
#define OVERLOADED "{\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}," \
                   "\"headers\":{\"retry-after-ms\":\"1\"}}"
  mock = tally_test_mock_start ("{\"responses\":[" OVERLOADED "," OVERLOADED "," OVERLOADED ","
                                ANSWER "]}", &error);
#undef OVERLOADED
  g_assert_no_error (error);
  data.mock = mock;
  data.max_retries = 2;
  {
    const char *args[] = { "--store", fixture->store_path, "--base-url", tally_test_mock_get_base_url (mock), NULL };

    g_assert_cmpint (tally_test_app_run (args, overloaded_retried_body, &data), ==, 0);
  }
  g_assert_cmpuint (count_message_requests (mock), ==, 3);
}

/* /tally/errors-ui/offline */

typedef struct {
  guint16      port;
  const char  *dir;
  GSubprocess *mock;
  guint        revealed;   /* times the offline banner was revealed */
} OfflineData;

static void
reveal_changed_cb (GtkRevealer *revealer,
                   GParamSpec  *pspec,
                   OfflineData *data)
{
  if (gtk_revealer_get_reveal_child (revealer))
    data->revealed++;
}

/* A port on 127.0.0.1 that nothing listens on (taken, then let go). */
static guint16
closed_port (void)
{
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  guint16 port;

  g_assert_true (g_socket_bind (socket, any, FALSE, NULL));
  bound = g_socket_get_local_address (socket, NULL);
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  g_socket_close (socket, NULL);
  return port;
}

/* Starts the mock on @port (the helper picks its own port). */
static GSubprocess *
start_mock_on (guint16     port,
               const char *dir)
{
  g_autofree char *scenario = g_build_filename (dir, "answer.json", NULL);
  g_autofree char *port_text = g_strdup_printf ("%u", port);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autofree char *line = NULL;
  GSubprocess *mock;

  g_assert_true (g_file_set_contents (scenario, "{\"responses\":[" ANSWER "]}", -1, NULL));
  mock = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                           TALLY_TEST_MOCK_API, "--scenario", scenario, "--port", port_text, NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (mock));
  line = g_data_input_stream_read_line (out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (line, ==, port_text);
  return mock;
}

static void
offline_body (TallyApplication *app,
              TallyWindow      *window,
              gpointer          user_data)
{
  OfflineData *data = user_data;
  TallyErrorBanner *banner;
  g_autoptr(TallyBlock) receipt = NULL;

  /* The network monitor says online all along; the window's model list
   * may already have found the port closed. */
  _tally_application_set_network_override (app, 1);
  data->revealed = gtk_revealer_get_reveal_child (window->offline_revealer) ? 1 : 0;
  g_signal_connect (window->offline_revealer, "notify::reveal-child", G_CALLBACK (reveal_changed_cb), data);
  /* Two refused attempts: one retry. */
  tally_client_set_max_retries (tally_application_get_client (app), 1);

  tally_window_send (window, "Hello?");
  SPIN_UNTIL (gtk_revealer_get_reveal_child (window->offline_revealer));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window->offline_revealer)));
  g_assert_false (tally_application_get_online (app));
  g_assert_cmpstr (gtk_label_get_label (window->offline_label), ==,
                   "You’re offline — Tally could not reach the server. The next message tries again.");

  banner = wait_error_banner (window);
  g_assert_cmpstr (tally_error_banner_get_message (banner), ==, "Could not reach the server");
  g_assert_cmpstr (tally_error_banner_get_meta (banner), ==, "Check your connection, then retry.");
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (tally_error_banner_get_retry_button (banner))));
  /* Once, not once per attempt. */
  g_assert_cmpuint (data->revealed, ==, 1);
  tally_test_app_save_light_dark (GTK_WIDGET (window), "errors-offline");

  /* The server comes back; Retry gets through and the banner goes. */
  data->mock = start_mock_on (data->port, data->dir);
  g_signal_emit_by_name (tally_error_banner_get_retry_button (banner), "clicked");
  SPIN_UNTIL (count_blocks (window, TALLY_BLOCK_RECEIPT) == 2);
  SPIN_UNTIL (!tally_window_is_busy (window));
  receipt = last_block (window, TALLY_BLOCK_RECEIPT);
  g_assert_cmpstr (tally_block_get_state (receipt), ==, "done");
  g_assert_true (tally_application_get_online (app));
  g_assert_false (gtk_revealer_get_reveal_child (window->offline_revealer));
  /* Folded, it is hidden again (docs/architecture.md §11.1). */
  SPIN_UNTIL (!gtk_widget_get_visible (GTK_WIDGET (window->offline_revealer)));
  g_assert_cmpuint (data->revealed, ==, 1);
}

static void
test_offline (Fixture       *fixture,
              gconstpointer  unused)
{
  OfflineData data = { 0 };
  g_autofree char *base_url = NULL;

  data.port = closed_port ();
  data.dir = fixture->dir;
  base_url = g_strdup_printf ("http://127.0.0.1:%u", data.port);
  {
    const char *args[] = { "--store", fixture->store_path, "--base-url", base_url, NULL };

    g_assert_cmpint (tally_test_app_run (args, offline_body, &data), ==, 0);
  }
  if (data.mock != NULL)
    {
      g_subprocess_send_signal (data.mock, SIGTERM);
      g_subprocess_wait (data.mock, NULL, NULL);
      g_object_unref (data.mock);
    }
}

/* Salvage (docs/architecture.md §10.9) */

/* Folds the WAL into @path and overwrites the first page of its
 * `sessions` table with noise. */
static void
damage_sessions_page (const char *path)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 page;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "PRAGMA wal_checkpoint (TRUNCATE)", NULL, NULL, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT rootpage FROM sqlite_schema WHERE name = 'sessions'",
                                       -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  page = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  g_assert_cmpint (sqlite3_exec (db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  g_assert_cmpint (page, >, 1);
  tally_test_damage_page (path, page, 7);
}

typedef struct {
  const char *dir;
  const char *store_path;
} SalvageData;

static void
salvage_body (TallyApplication *app,
              TallyWindow      *window,
              gpointer          user_data)
{
  SalvageData *data = user_data;
  g_autoptr(GBytes) before = NULL;
  g_autoptr(GBytes) after = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *salvaged = NULL;
  g_autofree char *expected = NULL;
  const char *name;
  const char *label;

  /* Refused as damaged, with the offer to salvage */
  SPIN_UNTIL (gtk_widget_get_visible (GTK_WIDGET (window->salvage_button)) &&
              gtk_widget_get_mapped (GTK_WIDGET (window->salvage_button)));
  g_assert_cmpstr (tally_application_get_damaged_store (app), ==, data->store_path);
  g_assert_true (g_str_has_prefix (gtk_label_get_label (window->store_label), "Sessions cannot be saved: "));
  before = tally_test_read_bytes (data->store_path);

  g_signal_emit_by_name (window->salvage_button, "clicked");
  g_assert_false (gtk_widget_get_sensitive (GTK_WIDGET (window->salvage_button)));
  SPIN_UNTIL (!gtk_widget_get_visible (GTK_WIDGET (window->salvage_button)));

  /* The new store sits beside the damaged one and holds all three */
  dir = g_dir_open (data->dir, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "tally-salvaged-") && g_str_has_suffix (name, ".db"))
      {
        g_assert_null (salvaged);
        salvaged = g_build_filename (data->dir, name, NULL);
      }
  g_assert_nonnull (salvaged);
  {
    g_autoptr(TallyStore) store = tally_store_open (salvaged, &error);
    g_autoptr(GPtrArray) sessions = NULL;

    g_assert_no_error (error);
    sessions = tally_store_list_sessions (store, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (sessions->len, ==, 3);
  }

  /* It says so, and how to use it */
  label = gtk_label_get_label (window->store_label);
  expected = g_strdup_printf ("Salvaged into %s: 3 of 3 sessions, 12 events. "
                              "Start Tally with --store and that file to use it.", salvaged);
  g_assert_cmpstr (label, ==, expected);
  g_assert_true (gtk_label_get_selectable (window->store_label));

  /* It stays when the banners are updated again (the online state
   * changing), and Salvage… does not come back */
  g_object_notify (G_OBJECT (app), "online");
  g_assert_cmpstr (gtk_label_get_label (window->store_label), ==, expected);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (window->salvage_button)));

  /* The damaged file was only read */
  after = tally_test_read_bytes (data->store_path);
  g_assert_true (g_bytes_equal (before, after));
}

static void
test_salvage (Fixture       *fixture,
              gconstpointer  user_data G_GNUC_UNUSED)
{
  static const char *const titles[] = {
    "Which store sold the most?", "How did iced drinks sell?", "Is anything odd?",
  };
  const char *args[] = { "--store", fixture->store_path, "--base-url", "http://127.0.0.1:9", NULL };
  SalvageData data = { fixture->dir, fixture->store_path };

  for (guint i = 0; i < G_N_ELEMENTS (titles); i++)
    g_free (tally_test_seed_session (fixture->store_path, titles[i], "Leeds.", g_get_real_time ()));
  damage_sessions_page (fixture->store_path);

  /* The refusal is also logged, as a warning */
  g_test_expect_message ("tally-application", G_LOG_LEVEL_WARNING, "Could not open the session store *damaged*");
  g_assert_cmpint (tally_test_app_run (args, salvage_body, &data), ==, 0);
  g_test_assert_expected_messages ();
}

/* The banner's text names the sessions whose conversation lost a part,
 * in the singular and the plural, and nothing of it when none did. */
static void
test_salvage_message (void)
{
  TallySalvageReport report = { 0 };
  g_autofree char *none = NULL;
  g_autofree char *one = NULL;
  g_autofree char *two = NULL;
  g_autofree char *all_lost = NULL;
  g_autofree char *no_gaps = NULL;
  const char *plain = "Salvaged into /tmp/new.db: 4 of 5 sessions, 120 events (at least 7 lost). "
                      "Start Tally with --store and that file to use it.";

  report.sessions_salvaged = 4;
  report.sessions_lost = 1;
  report.events_salvaged = 120;
  report.events_lost = 7;
  report.messages_lost = 3;
  none = _tally_window_dup_salvage_message (&report, "/tmp/new.db");
  g_assert_cmpstr (none, ==, plain);

  /* No session readable: no event count is made up. */
  {
    TallySalvageReport lost = { 0 };

    lost.sessions_lost = 3;
    all_lost = _tally_window_dup_salvage_message (&lost, "/tmp/new.db");
    g_assert_cmpstr (all_lost, ==, "Salvaged into /tmp/new.db: 0 of 3 sessions, 0 events. "
                                   "Start Tally with --store and that file to use it.");
    lost.sessions_salvaged = 2;
    lost.events_salvaged = 40;
    no_gaps = _tally_window_dup_salvage_message (&lost, "/tmp/new.db");
    g_assert_cmpstr (no_gaps, ==, "Salvaged into /tmp/new.db: 2 of 5 sessions, 40 events. "
                                  "Start Tally with --store and that file to use it.");
  }

  report.conversations_cut = 1;
  one = _tally_window_dup_salvage_message (&report, "/tmp/new.db");
  g_assert_true (g_str_has_prefix (one, plain));
  g_assert_cmpstr (one + strlen (plain), ==,
                   " In 1 session the model no longer sees the whole transcript: "
                   "part of its conversation with the model was lost.");

  report.conversations_cut = 2;
  two = _tally_window_dup_salvage_message (&report, "/tmp/new.db");
  g_assert_true (g_str_has_prefix (two, plain));
  g_assert_cmpstr (two + strlen (plain), ==,
                   " In 2 sessions the model no longer sees the whole transcript: "
                   "part of their conversation with the model was lost.");
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *home = tally_test_app_init (&argc, &argv);
  int status;

  g_test_add ("/tally/errors-ui/key-refused", Fixture, NULL, fixture_set_up, test_key_refused, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/errors-ui/countdown", Fixture, NULL, fixture_set_up, test_countdown, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/errors-ui/cut-reply", Fixture, NULL, fixture_set_up, test_cut_reply, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/errors-ui/server-error-once", Fixture, NULL, fixture_set_up, test_server_error_once, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/errors-ui/overloaded-retried", Fixture, NULL, fixture_set_up, test_overloaded_retried, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/errors-ui/offline", Fixture, NULL, fixture_set_up, test_offline, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/errors-ui/salvage", Fixture, NULL, fixture_set_up, test_salvage, tally_test_app_fixture_tear_down);
  g_test_add_func ("/tally/errors-ui/salvage-message", test_salvage_message);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
