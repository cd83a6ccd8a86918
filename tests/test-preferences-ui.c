/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The preferences under Xvfb (issue 14 §13): where the key and the address
 * in use come from (environment, keyring, option, setting), a unit beside
 * every number, Test Connection against the mock API (success) and a dead
 * port (failure), and Forget Key, which asks first and then removes the key
 * from the keyring (the tests' in-memory keyring, tally-secret.h). */

#include "config.h"

#include <adwaita.h>
#include <string.h>

#include "tally-preferences-window.h"
#include "tally-secret.h"
#include "tally-test-app.h"
#include "tally-test-mock.h"
#include "tally-test-ui.h"

#define DEAD_URL "http://127.0.0.1:9"

static const char models_scenario[] =
  "{\"models\": ["
  "  {\"type\": \"model\", \"id\": \"claude-sonnet-5\", \"display_name\": \"Claude Sonnet 5\"},"
  "  {\"type\": \"model\", \"id\": \"claude-mock-large-1\", \"display_name\": \"Claude Mock Large\"}],"
  " \"responses\": []}";

static TallyPreferencesWindow *
open_preferences (TallyApplication *app)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "preferences", NULL);
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (TALLY_IS_PREFERENCES_WINDOW (l->data))
      return l->data;
  g_assert_not_reached ();
}

/* How many shown labels under @root read exactly @text. */
static guint
count_labels (GtkWidget  *root,
              const char *text)
{
  g_autoptr(GPtrArray) labels = tally_test_find_all (root, GTK_TYPE_LABEL);
  guint n = 0;

  for (guint i = 0; i < labels->len; i++)
    if (g_strcmp0 (gtk_label_get_text (g_ptr_array_index (labels, i)), text) == 0)
      n++;
  return n;
}

static GtkWidget *
forget_button (TallyPreferencesWindow *prefs)
{
  g_autoptr(GPtrArray) buttons = tally_test_find_all (GTK_WIDGET (prefs), GTK_TYPE_BUTTON);

  for (guint i = 0; i < buttons->len; i++)
    if (g_strcmp0 (gtk_button_get_label (g_ptr_array_index (buttons, i)), "_Forget Key…") == 0)
      return g_ptr_array_index (buttons, i);
  g_assert_not_reached ();
}

/* /tally/preferences/environment */

static void
environment_body (TallyApplication *app,
                  TallyWindow      *window,
                  gpointer          user_data)
{
  TallyTestMock *mock = user_data;
  TallyPreferencesWindow *prefs = open_preferences (app);
  g_autofree char *address = NULL;
  g_autofree char *connected = NULL;

  /* The key and the address, with where they come from. */
  g_assert_cmpstr (tally_preferences_window_get_key_status (prefs), ==, "Set by the environment");
  g_assert_cmpstr (tally_preferences_window_get_key_detail (prefs), ==,
                   "The key ending in …ment. The ANTHROPIC_API_KEY variable overrides any key stored here.");
  g_assert_cmpuint (count_labels (GTK_WIDGET (prefs), tally_preferences_window_get_key_detail (prefs)), ==, 1);
  g_assert_false (gtk_widget_get_visible (forget_button (prefs)));
  address = g_strdup_printf ("%s — from the --base-url option", tally_test_mock_get_base_url (mock));
  g_assert_cmpstr (tally_preferences_window_get_address_status (prefs), ==, address);
  g_assert_cmpuint (count_labels (GTK_WIDGET (prefs), address), ==, 1);

  /* A unit beside every number. */
  g_assert_cmpuint (count_labels (GTK_WIDGET (prefs), "tokens"), ==, 1);
  g_assert_cmpuint (count_labels (GTK_WIDGET (prefs), "US$"), ==, 1);
  g_assert_cmpuint (count_labels (GTK_WIDGET (prefs), "seconds"), ==, 3);
  g_assert_cmpuint (tally_test_find_all (GTK_WIDGET (prefs), GTK_TYPE_SPIN_BUTTON)->len, ==, 5);

  /* Test Connection: one GET /v1/models, its outcome under the button. */
  g_assert_null (tally_preferences_window_get_connection_result (prefs));
  tally_preferences_window_test_connection (prefs);
  SPIN_UNTIL (tally_preferences_window_get_connection_result (prefs) != NULL);
  connected = g_strdup_printf ("Connected: %s accepted the key and offers 2 models",
                               tally_test_mock_get_base_url (mock));
  g_assert_cmpstr (tally_preferences_window_get_connection_result (prefs), ==, connected);
  g_assert_cmpuint (count_labels (GTK_WIDGET (prefs), connected), ==, 1);

  tally_test_wait_frames (GTK_WIDGET (prefs), 3);
  tally_test_app_save_light_dark (GTK_WIDGET (prefs), "preferences-environment");
  gtk_window_destroy (GTK_WINDOW (prefs));
}

static void
test_environment (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start (models_scenario, &error);
  g_autofree char *dir = g_dir_make_tmp ("tally-preferences-ui-XXXXXX", &error);
  g_autofree char *store_path = g_build_filename (dir, "tally.db", NULL);

  g_assert_no_error (error);
  g_setenv ("ANTHROPIC_API_KEY", "sk-test-environment", TRUE);
  {
    const char *args[] = { "--store", store_path, "--base-url", tally_test_mock_get_base_url (mock), NULL };

    g_assert_cmpint (tally_test_app_run (args, environment_body, mock), ==, 0);
  }
  g_unsetenv ("ANTHROPIC_API_KEY");
  tally_test_remove_tree (dir);
}

/* /tally/preferences/short-key: a key too short to show its end says so,
 * with no empty "ending in" */

static void
short_key_body (TallyApplication *app,
                TallyWindow      *window,
                gpointer          user_data)
{
  TallyPreferencesWindow *prefs = open_preferences (app);

  g_assert_cmpstr (tally_preferences_window_get_key_detail (prefs), ==,
                   "A short key, whose end is not shown. "
                   "The ANTHROPIC_API_KEY variable overrides any key stored here.");
  g_assert_cmpuint (count_labels (GTK_WIDGET (prefs), tally_preferences_window_get_key_detail (prefs)), ==, 1);
  gtk_window_destroy (GTK_WINDOW (prefs));
}

static void
test_short_key (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-preferences-ui-XXXXXX", &error);
  g_autofree char *store_path = g_build_filename (dir, "tally.db", NULL);
  const char *args[] = { "--store", store_path, "--base-url", DEAD_URL, NULL };

  g_assert_no_error (error);
  g_setenv ("ANTHROPIC_API_KEY", "test", TRUE);
  g_assert_cmpint (tally_test_app_run (args, short_key_body, NULL), ==, 0);
  g_unsetenv ("ANTHROPIC_API_KEY");
  tally_test_remove_tree (dir);
}

/* /tally/preferences/keyring */

static void
keyring_body (TallyApplication *app,
              TallyWindow      *window,
              gpointer          user_data)
{
  GHashTable *keyring = user_data;
  TallyPreferencesWindow *prefs;
  AdwMessageDialog *dialog;
  const char *result;

  SPIN_UNTIL (tally_application_get_api_key_source (app) != TALLY_API_KEY_SOURCE_LOOKING_UP);
  g_assert_cmpint (tally_application_get_api_key_source (app), ==, TALLY_API_KEY_SOURCE_KEYRING);
  prefs = open_preferences (app);

  g_assert_cmpstr (tally_preferences_window_get_key_status (prefs), ==, "Stored in your keyring");
  g_assert_true (g_str_has_prefix (tally_preferences_window_get_key_detail (prefs), "The key ending in …ring. "));
  g_assert_cmpstr (tally_preferences_window_get_address_status (prefs), ==,
                   DEAD_URL " — from the ANTHROPIC_BASE_URL environment variable");

  /* Nothing listens there: the test fails, and says where and why. */
  tally_preferences_window_test_connection (prefs);
  SPIN_UNTIL (tally_preferences_window_get_connection_result (prefs) != NULL);
  result = tally_preferences_window_get_connection_result (prefs);
  g_test_message ("Failure: %s", result);
  g_assert_true (g_str_has_prefix (result, "Could not reach 127.0.0.1"));
  g_assert_nonnull (strstr (result, "Connection refused"));
  g_assert_cmpuint (count_labels (GTK_WIDGET (prefs), result), ==, 1);

  /* Forget Key asks first; Cancel keeps the key. */
  g_assert_true (gtk_widget_get_visible (forget_button (prefs)));
  g_signal_emit_by_name (forget_button (prefs), "clicked");
  dialog = tally_preferences_window_get_forget_dialog (prefs);
  g_assert_nonnull (dialog);
  g_assert_cmpstr (adw_message_dialog_get_heading (dialog), ==, "Forget the API Key?");
  tally_test_wait_frames (GTK_WIDGET (dialog), 3);
  tally_test_app_save_light_dark (GTK_WIDGET (dialog), "preferences-forget-key");
  adw_message_dialog_response (dialog, "cancel");
  g_assert_null (tally_preferences_window_get_forget_dialog (prefs));
  g_assert_cmpstr (g_hash_table_lookup (keyring, _tally_secret_get_test_key_slot ()), ==, "sk-test-keyring");
  g_assert_true (tally_application_has_api_key (app));

  /* Forget: gone from the keyring and from memory. */
  g_signal_emit_by_name (forget_button (prefs), "clicked");
  dialog = tally_preferences_window_get_forget_dialog (prefs);
  adw_message_dialog_response (dialog, "forget");
  SPIN_UNTIL (!g_hash_table_contains (keyring, _tally_secret_get_test_key_slot ()));
  g_assert_false (tally_application_has_api_key (app));
  g_assert_cmpstr (tally_preferences_window_get_key_status (prefs), ==, "No key yet");
  g_assert_null (strstr (tally_preferences_window_get_key_detail (prefs), "ending in"));
  g_assert_false (gtk_widget_get_visible (forget_button (prefs)));

  /* Without a key there is nothing to test, and it says so. */
  tally_preferences_window_test_connection (prefs);
  g_assert_cmpstr (tally_preferences_window_get_connection_result (prefs), ==,
                   "No key to test yet: paste one above first");
  gtk_window_destroy (GTK_WINDOW (prefs));
}

static void
test_keyring (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-preferences-ui-XXXXXX", &error);
  g_autofree char *store_path = g_build_filename (dir, "tally.db", NULL);
  g_autoptr(GHashTable) keyring = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  const char *args[] = { "--store", store_path, NULL };

  g_assert_no_error (error);
  g_hash_table_insert (keyring, g_strdup (_tally_secret_get_test_key_slot ()), g_strdup ("sk-test-keyring"));
  _tally_secret_set_test_keyring (keyring);
  g_setenv ("ANTHROPIC_BASE_URL", DEAD_URL, TRUE);

  g_assert_cmpint (tally_test_app_run (args, keyring_body, keyring), ==, 0);

  g_unsetenv ("ANTHROPIC_BASE_URL");
  _tally_secret_set_test_keyring (NULL);
  tally_test_remove_tree (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *home = tally_test_app_init (&argc, &argv);
  int status;

  g_unsetenv ("ANTHROPIC_API_KEY");
  g_unsetenv ("ANTHROPIC_BASE_URL");

  g_test_add_func ("/tally/preferences/environment", test_environment);
  g_test_add_func ("/tally/preferences/short-key", test_short_key);
  g_test_add_func ("/tally/preferences/keyring", test_keyring);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
