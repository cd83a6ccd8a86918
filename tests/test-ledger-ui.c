/* SPDX-License-Identifier: GPL-3.0-or-later */

/* What leaves the machine, in the window (docs/ledger.md), under Xvfb:
 * the "Sent to the API" dialog shows a stored session's requests and
 * results, and the "Sensitive Columns" editor refuses a bad line and
 * writes a good list to the database's profile. */

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "tally-database-profile.h"
#include "tally-event.h"
#include "tally-ledger-dialog.h"
#include "tally-pg-source.h"
#include "tally-sensitive-dialog.h"
#include "tally-store.h"
#include "tally-test-ui.h"
#include "tally-test-util.h"
#include "tally-ui.h"

/* Every label's text under @widget (titles and subtitles of rows are
 * labels too), one per line. */
static void
collect_labels (GtkWidget *widget,
                GString   *out)
{
  if (GTK_IS_LABEL (widget))
    g_string_append_printf (out, "%s\n", gtk_label_get_text (GTK_LABEL (widget)));

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect_labels (child, out);
}

static char *
dup_labels (GtkWidget *widget)
{
  GString *out = g_string_new (NULL);

  collect_labels (widget, out);
  return g_string_free (out, FALSE);
}

static GtkWidget *
find_widget (GtkWidget *widget,
             GType      type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_widget (child, type);

      if (found != NULL)
        return found;
    }

  return NULL;
}

static const char * const session_events[] = {
  "{\"type\":\"session_created\",\"seq\":1,\"ts\":1000,\"session_id\":\"ledger-ui\",\"turn_id\":null,"
  "\"title\":\"Domains\",\"model\":\"claude-sonnet-5\",\"workspace\":null,\"database\":null}",
  "{\"type\":\"turn_started\",\"seq\":2,\"ts\":2000,\"session_id\":\"ledger-ui\",\"turn_id\":\"t1\","
  "\"mode\":\"ask\",\"thinking\":false,\"budget_tokens\":0,\"model\":\"claude-sonnet-5\","
  "\"text\":\"Which e-mail domains do we have?\"}",
  "{\"type\":\"request_sent\",\"seq\":3,\"ts\":3000,\"session_id\":\"ledger-ui\",\"turn_id\":\"t1\","
  "\"call\":0,\"bytes\":16405,\"results\":[]}",
  "{\"type\":\"request_sent\",\"seq\":4,\"ts\":4000,\"session_id\":\"ledger-ui\",\"turn_id\":\"t1\","
  "\"call\":1,\"bytes\":16918,\"results\":[{\"tool_id\":\"toolu_01\",\"tool_name\":\"query_database\","
  "\"is_error\":false,\"bytes\":167,\"rows\":5,\"redactions\":5,\"tables\":[\"Customer\"],"
  "\"columns\":[\"Customer.Email\"]}]}",
};

static void
test_ledger_dialog (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-ledger-ui-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "sessions.db", NULL);
  g_autoptr(TallyStore) store = NULL;
  TallyLedgerDialog *dialog;
  g_autofree char *labels = NULL;

  g_assert_no_error (error);
  store = tally_store_open (path, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (session_events); i++)
    {
      g_autoptr(JsonObject) event = tally_event_from_json (session_events[i], &error);

      g_assert_no_error (error);
      g_assert_true (tally_store_append_event (store, event, &error));
      g_assert_no_error (error);
    }
  g_assert_true (tally_store_flush (store, &error));
  g_assert_no_error (error);

  dialog = tally_ledger_dialog_new (NULL, store, "ledger-ui");
  gtk_window_present (GTK_WINDOW (dialog));
  SPIN_UNTIL (({ g_autofree char *text = dup_labels (GTK_WIDGET (dialog)); strstr (text, "Requests: 2.") != NULL; }));

  labels = dup_labels (GTK_WIDGET (dialog));
  g_assert_nonnull (strstr (labels, "Requests: 2. Tool results sent: 1, with 5 rows and 167 bytes; 5 values redacted."));
  g_assert_nonnull (strstr (labels, "Turn 1\n"));
  g_assert_nonnull (strstr (labels, "Which e-mail domains do we have?\n"));
  g_assert_nonnull (strstr (labels, "No new tool results\n"));
  g_assert_nonnull (strstr (labels, "1 tool result\n"));
  g_assert_nonnull (strstr (labels, "query_database toolu_01 · 5 rows · 167 bytes · from Customer.Email · "
                                    "5 values redacted\n"));

  gtk_window_destroy (GTK_WINDOW (dialog));
  g_clear_object (&store);
  tally_test_rm_rf (dir);
}

static void
saved_cb (TallySensitiveDialog *dialog,
          gboolean             *saved)
{
  *saved = TRUE;
}

static void
test_sensitive_dialog (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-ledger-ui-XXXXXX", &error);
  g_autofree char *database = g_build_filename (dir, "shop.sqlite", NULL);
  g_autofree char *key = tally_pg_database_key (database);
  g_autofree char *profile = tally_database_profile_dir (dir, key);
  g_autofree char *text = NULL;
  g_autofree char *labels = NULL;
  TallySensitiveDialog *dialog;
  GtkTextView *view;
  gboolean saved = FALSE;

  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (database, "", 0, &error));

  dialog = tally_sensitive_dialog_new (NULL, dir, database);
  g_object_ref_sink (dialog);
  g_signal_connect (dialog, "saved", G_CALLBACK (saved_cb), &saved);
  gtk_window_present (GTK_WINDOW (dialog));
  view = GTK_TEXT_VIEW (find_widget (GTK_WIDGET (dialog), GTK_TYPE_TEXT_VIEW));
  g_assert_nonnull (view);

  /* A line that is not a column: nothing is written, the line is named. */
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (view), "customers.email\nemail address\n", -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "sensitive.save", NULL));
  g_assert_false (saved);
  text = tally_database_profile_read (profile, TALLY_DATABASE_PROFILE_SENSITIVE_COLUMNS, &error);
  g_assert_no_error (error);
  g_assert_null (text);
  labels = dup_labels (GTK_WIDGET (dialog));
  g_assert_nonnull (strstr (labels, "Line 2: “email address” is not a column"));

  /* A good list is written as one entry per line, duplicates once. */
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (view),
                            "customers.email\n# contact data\nCustomers.Email\norders.note\n", -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "sensitive.save", NULL));
  g_assert_true (saved);
  text = tally_database_profile_read (profile, TALLY_DATABASE_PROFILE_SENSITIVE_COLUMNS, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "customers.email\norders.note\n");

  g_object_unref (dialog);
  tally_test_rm_rf (dir);
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  tally_test_prepare_ui_process ();
  adw_init ();
  tally_ui_init ();

  g_test_add_func ("/tally/ledger-ui/sent-to-api", test_ledger_dialog);
  g_test_add_func ("/tally/ledger-ui/sensitive-columns", test_sensitive_dialog);

  return g_test_run ();
}
