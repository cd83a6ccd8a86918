/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The sessions sidebar and the pickers under Xvfb (issue 14 §8, §9): search
 * snippets in plain text, the full title as the row's tooltip, the Pinned /
 * Today / Yesterday / Earlier headers, a pin that survives reopening the
 * window, Export from the row menu; the mode menu's lines, the question
 * card's visible option descriptions and check boxes, the number keys in
 * the shortcuts window. Screenshots light and dark go to
 * $G_TEST_BUILDDIR/artifacts/. */

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "tally-event.h"
#include "tally-mode-menu.h"
#include "tally-question-card.h"
#include "tally-session-row.h"
#include "tally-store.h"
#include "tally-test-app.h"
#include "tally-test-ui.h"
#include "tally-test-util.h"
#include "tally-ui.h"
#include "tally-window-private.h"

#define LONG_TITLE "Flat whites by store in March 2025, per week, Leeds only"
#define LONG_TITLE_2 "Flat whites by store in March 2025, per week, York only"
#define ANSWER "## Leeds in March\n\n| store | revenue_gbp |\n|---|---:|\n| **Park Square** | 1200 |\n"

static gint64
local_midnight_us (void)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autoptr(GDateTime) midnight = g_date_time_new_local (g_date_time_get_year (now), g_date_time_get_month (now),
                                                         g_date_time_get_day_of_month (now), 0, 0, 0);

  return g_date_time_to_unix (midnight) * G_USEC_PER_SEC;
}

static TallySessionRow *
row_at (TallyWindow *window,
        int          index)
{
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (_tally_window_get_session_list (window), index);

  g_assert_true (TALLY_IS_SESSION_ROW (row));
  return TALLY_SESSION_ROW (row);
}

/* The section header above @row, or NULL. */
static const char *
header_of (TallySessionRow *row)
{
  GtkWidget *header = gtk_list_box_row_get_header (GTK_LIST_BOX_ROW (row));

  if (header == NULL)
    return NULL;
  g_assert_true (GTK_IS_LABEL (header));
  return gtk_label_get_text (GTK_LABEL (header));
}

static TallySessionRow *
row_titled (TallyWindow *window,
            const char  *title)
{
  for (int i = 0;; i++)
    {
      GtkListBoxRow *row = gtk_list_box_get_row_at_index (_tally_window_get_session_list (window), i);

      if (row == NULL)
        return NULL;
      if (g_strcmp0 (tally_session_row_get_title (TALLY_SESSION_ROW (row)), title) == 0)
        return TALLY_SESSION_ROW (row);
    }
}

/* The row's snippet, a GtkInscription (its size does not depend on its
 * text; tally-session-row.ui) */
static GtkInscription *
snippet_label (TallySessionRow *row)
{
  g_autoptr(GPtrArray) inscriptions = tally_test_find_all (GTK_WIDGET (row), GTK_TYPE_INSCRIPTION);

  for (guint i = 0; i < inscriptions->len; i++)
    if (gtk_widget_has_css_class (g_ptr_array_index (inscriptions, i), "session-snippet"))
      return g_ptr_array_index (inscriptions, i);
  g_assert_not_reached ();
}

/* Every label's text under @root, one per line. */
static char *
dup_label_texts (GtkWidget *root)
{
  g_autoptr(GPtrArray) labels = tally_test_find_all (root, GTK_TYPE_LABEL);
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < labels->len; i++)
    g_string_append_printf (out, "%s\n", gtk_label_get_text (g_ptr_array_index (labels, i)));
  return g_string_free (out, FALSE);
}

/* /tally/sidebar/snippet-plain */

static void
test_snippet_plain (void)
{
  static const struct {
    const char *snippet;
    const char *plain;
  } cases[] = {
    { "## «Leeds» in March\n\n| store | revenue_gbp |\n|---|---:|\n| **Park Square** | 1200 |",
      "«Leeds» in March store revenue_gbp Park Square 1200" },
    { "…the `SUM(quantity)` of __all__ *stores*…", "…the SUM(quantity) of all stores…" },
    { "> a quote\n- a bullet, 10:30 and -5", "a quote - a bullet, 10:30 and -5" },
    { "***", "" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *plain = tally_session_row_snippet_to_plain (cases[i].snippet);

      g_assert_cmpstr (plain, ==, cases[i].plain);
    }
}

/* /tally/sidebar/window */

typedef struct {
  char *dir;
  char *store_path;
  char *croissant;
  char *export_base;
} SidebarData;

static void
sidebar_body (TallyApplication *app,
              TallyWindow      *window,
              gpointer          user_data)
{
  SidebarData *data = user_data;
  GtkSearchEntry *entry = _tally_window_get_search_entry (window);
  TallySessionRow *row;
  GtkInscription *snippet;
  const char *text;
  GtkFileChooser *chooser;
  g_autofree char *name = NULL;
  g_autoptr(GFile) chosen = NULL;
  g_autoptr(GFile) output = NULL;
  g_autofree char *exported = NULL;
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  tally_test_wait_frames (GTK_WIDGET (window), 2);

  /* Newest first, under one header per day. */
  g_assert_cmpstr (tally_session_row_get_title (row_at (window, 0)), ==, LONG_TITLE);
  g_assert_cmpstr (header_of (row_at (window, 0)), ==, "Today");
  g_assert_cmpstr (tally_session_row_get_title (row_at (window, 1)), ==, LONG_TITLE_2);
  g_assert_cmpstr (header_of (row_at (window, 1)), ==, "Yesterday");
  g_assert_cmpstr (tally_session_row_get_title (row_at (window, 2)), ==, "Croissant waste");
  g_assert_cmpstr (header_of (row_at (window, 2)), ==, "Earlier");
  g_assert_cmpstr (tally_session_row_get_title (row_at (window, 3)), ==, "Cold brew margins");
  g_assert_null (header_of (row_at (window, 3)));

  /* The row menu's popover is made when it first opens, then kept. */
  {
    g_autoptr(GPtrArray) buttons = tally_test_find_all (GTK_WIDGET (row_at (window, 0)), GTK_TYPE_MENU_BUTTON);
    GtkMenuButton *button;
    GtkPopover *popover;

    g_assert_cmpuint (buttons->len, ==, 1);
    button = g_ptr_array_index (buttons, 0);
    g_assert_null (gtk_menu_button_get_popover (button));
    gtk_menu_button_popup (button);
    popover = gtk_menu_button_get_popover (button);
    g_assert_true (GTK_IS_POPOVER_MENU (popover));
    /* Pin, Unpin, Rename and Export; Delete */
    g_assert_cmpint (g_menu_model_get_n_items (gtk_menu_button_get_menu_model (button)), ==, 2);
    gtk_menu_button_popdown (button);
    gtk_menu_button_popup (button);
    g_assert_true (gtk_menu_button_get_popover (button) == popover);
    gtk_menu_button_popdown (button);
  }

  /* Titles cut short can be told apart: the row's tooltip is the whole. */
  g_assert_cmpstr (gtk_widget_get_tooltip_text (GTK_WIDGET (row_at (window, 0))), ==, LONG_TITLE);
  g_assert_cmpstr (gtk_widget_get_tooltip_text (GTK_WIDGET (row_at (window, 1))), ==, LONG_TITLE_2);

  tally_test_app_save_light_dark (GTK_WIDGET (window), "sidebar-groups");

  /* A search shows where it matched, as plain text. */
  gtk_editable_set_text (GTK_EDITABLE (entry), "Park Square");
  g_signal_emit_by_name (entry, "search-changed");
  row = row_titled (window, LONG_TITLE);
  snippet = snippet_label (row);
  SPIN_UNTIL (gtk_widget_get_visible (GTK_WIDGET (snippet)));
  text = gtk_inscription_get_text (snippet);
  g_test_message ("Snippet: %s", text);
  g_assert_nonnull (strstr (text, "Park Square"));
  g_assert_nonnull (strstr (text, "revenue_gbp"));
  g_assert_null (strstr (text, "**"));
  g_assert_null (strstr (text, "#"));
  g_assert_null (strstr (text, "|"));
  g_assert_null (strstr (text, "\n"));
  g_assert_null (strstr (text, "  "));
  tally_test_app_save_light_dark (GTK_WIDGET (window), "sidebar-search");
  gtk_editable_set_text (GTK_EDITABLE (entry), "");
  g_signal_emit_by_name (entry, "search-changed");

  /* Pin from the row menu: the row moves on top, under "Pinned". */
  row = row_titled (window, "Croissant waste");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (row), "row.pin", NULL));
  g_assert_true (tally_session_row_get_info (row)->pinned);
  g_assert_true (row_at (window, 0) == row);
  g_assert_cmpstr (header_of (row_at (window, 0)), ==, "Pinned");
  g_assert_cmpstr (header_of (row_at (window, 1)), ==, "Today");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (tally_session_row_get_title (row_at (window, 0)), ==, "Croissant waste");
  g_assert_true (tally_session_row_get_info (row_at (window, 0))->pinned);
  /* The refresh that confirmed it kept the rows, given the store's info
   * (making 1,000 rows again took about a second). */
  g_assert_true (row_at (window, 0) == row);

  /* Export from the row menu: the chooser, then the file. */
  row = row_titled (window, "Croissant waste");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (row), "row.export", NULL));
  SPIN_UNTIL (_tally_window_get_export_chooser (window) != NULL);
  chooser = _tally_window_get_export_chooser (window);
  g_assert_cmpstr (_tally_window_get_export_chooser_session (window), ==, data->croissant);
  name = gtk_file_chooser_get_current_name (chooser);
  g_assert_cmpstr (name, ==, "Croissant waste.md");
  /* What the chooser does on Save (its dialog cannot be driven here). */
  g_signal_emit_by_name (chooser, "response", GTK_RESPONSE_CANCEL);
  g_assert_null (_tally_window_get_export_chooser (window));
  g_assert_cmpuint (_tally_window_get_n_exports_done (window), ==, 0);
  chosen = g_file_new_for_path (data->export_base);
  output = tally_export_file_with_suffix (chosen, TALLY_EXPORT_MARKDOWN);
  _tally_window_export_session_id_to (window, data->croissant, TALLY_EXPORT_MARKDOWN, FALSE, output);
  SPIN_UNTIL (_tally_window_get_n_exports_done (window) == 1);
  exported = g_strconcat (data->export_base, ".md", NULL);
  g_assert_true (g_file_get_contents (exported, &contents, NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (contents, "Croissant waste"));
  g_assert_nonnull (strstr (contents, "Thursdays waste the most."));

  /* Markdown named croissant.pdf is written as croissant.md, which
   * exists and which the chooser did not ask about: a dialog asks, and
   * Cancel writes nothing. */
  {
    g_autofree char *typed = g_strconcat (data->export_base, ".pdf", NULL);
    g_autofree char *sentinel_path = g_build_filename (data->dir, "sentinel.md", NULL);
    g_autofree char *kept = NULL;
    g_autoptr(GFile) folder = g_file_new_for_path (data->dir);
    g_autoptr(GFile) sentinel = g_file_new_for_path (sentinel_path);
    AdwMessageDialog *question;

    g_assert_true (g_file_set_contents (exported, "the analyst's own notes", -1, NULL));

    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (row), "row.export", NULL));
    SPIN_UNTIL (_tally_window_get_export_chooser (window) != NULL);
    chooser = _tally_window_get_export_chooser (window);
    g_assert_true (gtk_file_chooser_set_current_folder (chooser, folder, &error));
    g_assert_no_error (error);
    gtk_file_chooser_set_current_name (chooser, "croissant.pdf");
    SPIN_UNTIL (tally_test_chooser_names (GTK_FILE_CHOOSER (chooser), typed));
    gtk_native_dialog_hide (GTK_NATIVE_DIALOG (chooser));
    g_signal_emit_by_name (chooser, "response", GTK_RESPONSE_ACCEPT);
    question = ADW_MESSAGE_DIALOG (tally_test_find_message_dialog ());
    g_assert_nonnull (question);
    g_assert_cmpstr (adw_message_dialog_get_heading (question), ==, "Replace “croissant.md”?");
    adw_message_dialog_response (question, "cancel");
    gtk_window_close (GTK_WINDOW (question));
    SPIN_UNTIL (tally_test_find_message_dialog () == NULL);
    /* An export started after the answer finishes; had Cancel started
     * one too, it would have finished as well, or first. */
    _tally_window_export_session_id_to (window, data->croissant, TALLY_EXPORT_MARKDOWN, FALSE, sentinel);
    SPIN_UNTIL (_tally_window_get_n_exports_done (window) >= 2);
    g_assert_cmpuint (_tally_window_get_n_exports_done (window), ==, 2);
    g_assert_true (g_file_get_contents (exported, &kept, NULL, NULL));
    g_assert_cmpstr (kept, ==, "the analyst's own notes");
    g_assert_false (g_file_test (typed, G_FILE_TEST_EXISTS));
  }
}

static void
count_cb (guint *count)
{
  (*count)++;
}

static void
reopen_body (TallyApplication *app,
             TallyWindow      *window,
             gpointer          user_data)
{
  SidebarData *data = user_data;
  TallySessionRow *row;
  g_autoptr(GPtrArray) popovers = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  GtkWidget *popover;
  GtkWidget *entry;
  guint tooltips_set = 0;

  SPIN_UNTIL (!_tally_window_is_refreshing (window));

  /* The pin came back from the store. */
  row = row_at (window, 0);
  g_assert_cmpstr (tally_session_row_get_id (row), ==, data->croissant);
  g_assert_cmpstr (header_of (row), ==, "Pinned");
  g_assert_cmpstr (header_of (row_at (window, 1)), ==, "Today");

  /* Unpin: back among the earlier ones. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (row), "row.unpin", NULL));
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (header_of (row_at (window, 0)), ==, "Today");
  g_assert_cmpstr (tally_session_row_get_id (row_at (window, 2)), ==, data->croissant);
  g_assert_cmpstr (header_of (row_at (window, 2)), ==, "Earlier");

  /* A refresh gives every row the store's info again, but a row whose
   * title is the same is not given its tooltip again: GTK 4.8 asks the X
   * server where the pointer is for each tooltip set (docs/architecture.md
   * §2.2). */
  row = row_titled (window, "Cold brew margins");
  g_signal_connect_swapped (row, "notify::tooltip-text", G_CALLBACK (count_cb), &tooltips_set);
  _tally_window_refresh_sessions (window);
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_true (row_titled (window, "Cold brew margins") == row);
  g_assert_cmpuint (tooltips_set, ==, 0);

  /* Rename: the row's popover is made the first time, not with every
   * row, and kept. */
  popovers = tally_test_find_all (GTK_WIDGET (row), GTK_TYPE_POPOVER);
  g_assert_cmpuint (popovers->len, ==, 0);
  g_clear_pointer (&popovers, g_ptr_array_unref);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (row), "row.rename", NULL));
  popovers = tally_test_find_all (GTK_WIDGET (row), GTK_TYPE_POPOVER);
  g_assert_cmpuint (popovers->len, ==, 1);
  popover = g_ptr_array_index (popovers, 0);
  g_assert_true (gtk_widget_get_visible (popover));
  entries = tally_test_find_all (popover, GTK_TYPE_ENTRY);
  g_assert_cmpuint (entries->len, ==, 1);
  entry = g_ptr_array_index (entries, 0);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (entry)), ==, "Cold brew margins");
  gtk_editable_set_text (GTK_EDITABLE (entry), "  Cold brew margins by store ");
  g_signal_emit_by_name (entry, "activate");
  g_assert_false (gtk_widget_get_visible (popover));
  /* Shown at once, tooltip included; the refresh confirms it. */
  g_assert_cmpstr (tally_session_row_get_title (row), ==, "Cold brew margins by store");
  g_assert_cmpstr (gtk_widget_get_tooltip_text (GTK_WIDGET (row)), ==, "Cold brew margins by store");
  g_assert_cmpuint (tooltips_set, ==, 1);
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_true (row_titled (window, "Cold brew margins by store") == row);
  g_assert_cmpuint (tooltips_set, ==, 1);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (row), "row.rename", NULL));
  g_clear_pointer (&popovers, g_ptr_array_unref);
  popovers = tally_test_find_all (GTK_WIDGET (row), GTK_TYPE_POPOVER);
  g_assert_cmpuint (popovers->len, ==, 1);
  g_assert_true (g_ptr_array_index (popovers, 0) == popover);
  gtk_popover_popdown (GTK_POPOVER (popover));
  g_signal_handlers_disconnect_by_data (row, &tooltips_set);
}

static void
test_sidebar_window (void)
{
  g_autoptr(GError) error = NULL;
  SidebarData data = { 0 };
  gint64 midnight = local_midnight_us ();
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *fourth = NULL;
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(TallySessionInfo) renamed = NULL;

  data.dir = g_dir_make_tmp ("tally-sidebar-ui-XXXXXX", &error);
  g_assert_no_error (error);
  data.store_path = g_build_filename (data.dir, "tally.db", NULL);
  data.export_base = g_build_filename (data.dir, "croissant", NULL);

  fourth = tally_test_seed_session (data.store_path, "Cold brew margins", "About sixty percent.",
                         midnight - 9 * G_TIME_SPAN_DAY);
  data.croissant = tally_test_seed_session (data.store_path, "Croissant waste", "Thursdays waste the most.",
                                 midnight - 4 * G_TIME_SPAN_DAY);
  second = tally_test_seed_session (data.store_path, LONG_TITLE_2, "York sold less.", midnight - 12 * G_TIME_SPAN_HOUR);
  first = tally_test_seed_session (data.store_path, LONG_TITLE, ANSWER, g_get_real_time () - G_USEC_PER_SEC);

  {
    const char *args[] = { "--store", data.store_path, "--base-url", "http://127.0.0.1:9", NULL };

    g_assert_cmpint (tally_test_app_run (args, sidebar_body, &data), ==, 0);
    g_assert_cmpint (tally_test_app_run (args, reopen_body, &data), ==, 0);
  }

  /* What the store holds after the unpin. */
  store = tally_store_open (data.store_path, &error);
  g_assert_no_error (error);
  sessions = tally_store_list_sessions (store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sessions->len, ==, 4);
  for (guint i = 0; i < sessions->len; i++)
    g_assert_false (((TallySessionInfo *)g_ptr_array_index (sessions, i))->pinned);
  /* And the rename. */
  renamed = tally_store_find_session (store, fourth, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (renamed->title, ==, "Cold brew margins by store");
  g_clear_object (&store);

  tally_test_remove_tree (data.dir);
  g_free (data.dir);
  g_free (data.store_path);
  g_free (data.croissant);
  g_free (data.export_base);
}

/* /tally/pickers/mode-menu */

static void
mode_body (TallyApplication *app,
           TallyWindow      *window,
           gpointer          user_data)
{
  GtkDropDown *dropdown = _tally_window_get_mode_dropdown (window);
  g_autofree char *texts = NULL;
  g_autoptr(GPtrArray) popovers = NULL;

  g_assert_nonnull (gtk_drop_down_get_list_factory (dropdown));

  /* Open the menu: each mode with its line. */
  g_signal_emit_by_name (dropdown, "activate");
  popovers = tally_test_find_all (GTK_WIDGET (dropdown), GTK_TYPE_POPOVER);
  g_assert_cmpuint (popovers->len, ==, 1);
  SPIN_UNTIL (gtk_widget_get_mapped (g_ptr_array_index (popovers, 0)));
  tally_test_wait_frames (GTK_WIDGET (window), 2);
  texts = dup_label_texts (g_ptr_array_index (popovers, 0));
  g_test_message ("Mode menu:\n%s", texts);
  g_assert_nonnull (strstr (texts, "Ask\nQueries and reads without asking; asks before any change\n"));
  g_assert_nonnull (strstr (texts, "Plan\nOnly reads, then proposes a plan; nothing changes until you approve it\n"));
  g_assert_nonnull (strstr (texts, "Auto-accept edits\nQueries, reads and edits files in the workspace without asking\n"));
  /* The mode in use, and only it, carries a check mark. */
  {
    g_autoptr(GPtrArray) images = tally_test_find_all (g_ptr_array_index (popovers, 0), GTK_TYPE_IMAGE);
    guint checks = 0;

    for (guint i = 0; i < images->len; i++)
      if (g_strcmp0 (gtk_image_get_icon_name (g_ptr_array_index (images, i)), "object-select-symbolic") == 0 &&
          gtk_widget_get_visible (g_ptr_array_index (images, i)))
        checks++;
    g_assert_cmpuint (checks, ==, 1);
  }
  tally_test_app_save_light_dark (g_ptr_array_index (popovers, 0), "mode-menu");
  gtk_popover_popdown (g_ptr_array_index (popovers, 0));
}

static void
test_mode_menu (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tally-sidebar-ui-XXXXXX", &error);
  g_autofree char *store_path = g_build_filename (dir, "tally.db", NULL);
  const char *args[] = { "--store", store_path, "--base-url", "http://127.0.0.1:9", NULL };

  g_assert_no_error (error);
  g_setenv ("ANTHROPIC_API_KEY", "sk-test-key", TRUE);
  g_assert_cmpint (tally_test_app_run (args, mode_body, NULL), ==, 0);
  g_unsetenv ("ANTHROPIC_API_KEY");

  /* The three lines, in mode order. */
  g_assert_cmpstr (tally_mode_get_title (TALLY_MODE_AUTO), ==, "Auto-accept edits");
  g_assert_cmpstr (tally_mode_get_description (TALLY_MODE_PLAN), ==,
                   "Only reads, then proposes a plan; nothing changes until you approve it");
  tally_test_remove_tree (dir);
}

/* /tally/pickers/question-card */

static const char question_request[] =
  "{\"type\":\"question_request\",\"turn_id\":\"t1\",\"question_id\":\"q1\",\"tool_id\":\"toolu_q\","
  "\"questions\":["
  " {\"question\":\"Which stores should the report compare?\",\"header\":\"Stores\",\"multiSelect\":true,"
  "  \"options\":["
  "   {\"label\":\"Leeds\",\"description\":\"Park Square, Leeds Station and Briggate\"},"
  "   {\"label\":\"York\",\"description\":\"Minster Yard, The Shambles and Heslington Hall\"}]},"
  " {\"question\":\"Which period should it cover?\",\"header\":\"Period\",\"options\":["
  "   {\"label\":\"Q1 2025\",\"description\":\"January to March\"},"
  "   {\"label\":\"Q2 2025\"}]}]}";

static GtkToggleButton *
chip_labelled (GtkWidget  *card,
               const char *label)
{
  g_autoptr(GPtrArray) buttons = tally_test_find_all (card, GTK_TYPE_TOGGLE_BUTTON);

  for (guint i = 0; i < buttons->len; i++)
    {
      GtkWidget *button = g_ptr_array_index (buttons, i);
      g_autofree char *texts = dup_label_texts (button);

      if (gtk_widget_has_css_class (button, "chip") && g_str_has_prefix (texts + strcspn (texts, "\n") + 1, label))
        return GTK_TOGGLE_BUTTON (button);
    }
  g_assert_not_reached ();
}

static GtkCheckButton *
check_of (GtkToggleButton *chip)
{
  GtkWidget *check = tally_test_find_first (GTK_WIDGET (chip), GTK_TYPE_CHECK_BUTTON);

  return check != NULL ? GTK_CHECK_BUTTON (check) : NULL;
}

static void
test_question_card (void)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  GtkWidget *card = tally_question_card_new ();
  GtkWindow *window = GTK_WINDOW (gtk_window_new ());
  GtkWidget *scroller = gtk_scrolled_window_new ();
  GtkToggleButton *leeds, *york, *q1, *q2;
  g_autoptr(TallyBlock) block = NULL;
  g_autofree char *leeds_text = NULL;
  g_autofree char *q1_text = NULL;
  g_autofree char *q2_text = NULL;

  tally_test_apply_event (transcript, question_request);
  block = g_list_model_get_item (G_LIST_MODEL (transcript), g_list_model_get_n_items (G_LIST_MODEL (transcript)) - 1);
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (card), block);
  gtk_widget_set_margin_start (card, 18);
  gtk_widget_set_margin_end (card, 18);
  gtk_widget_set_margin_top (card, 18);
  gtk_widget_set_margin_bottom (card, 18);
  /* In a scroller, as in the transcript. */
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), card);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_window_set_child (window, scroller);
  gtk_window_set_default_size (window, 640, 520);
  gtk_widget_set_visible (GTK_WIDGET (window), TRUE);
  SPIN_UNTIL (gtk_widget_get_mapped (card));
  tally_test_wait_frames (card, 2);

  leeds = chip_labelled (card, "Leeds");
  york = chip_labelled (card, "York");
  q1 = chip_labelled (card, "Q1 2025");
  q2 = chip_labelled (card, "Q2 2025");

  /* The descriptions show on the chips before anything is picked: the
   * number, the label, the description. */
  leeds_text = dup_label_texts (GTK_WIDGET (leeds));
  g_assert_cmpstr (leeds_text, ==, "1\nLeeds\nPark Square, Leeds Station and Briggate\n");
  q1_text = dup_label_texts (GTK_WIDGET (q1));
  g_assert_cmpstr (q1_text, ==, "1\nQ1 2025\nJanuary to March\n");
  q2_text = dup_label_texts (GTK_WIDGET (q2));
  g_assert_cmpstr (q2_text, ==, "2\nQ2 2025\n");
  g_assert_true (gtk_widget_is_drawable (GTK_WIDGET (leeds)));
  g_assert_false (gtk_toggle_button_get_active (leeds));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (leeds), "with-description"));
  g_assert_false (gtk_widget_has_css_class (GTK_WIDGET (q2), "with-description"));

  /* Multi-select chips carry a check box that follows them; single-select
   * chips have none. */
  g_assert_nonnull (check_of (leeds));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (leeds), "multi"));
  g_assert_null (check_of (q1));
  g_assert_false (gtk_check_button_get_active (check_of (york)));
  gtk_toggle_button_set_active (york, TRUE);
  g_assert_true (gtk_check_button_get_active (check_of (york)));
  g_assert_false (gtk_check_button_get_active (check_of (leeds)));
  /* The box only draws: the chip takes the clicks and the focus. */
  g_assert_false (gtk_widget_get_can_target (GTK_WIDGET (check_of (york))));
  g_assert_false (gtk_widget_get_focusable (GTK_WIDGET (check_of (york))));

  tally_test_wait_frames (card, 2);
  tally_test_app_save_light_dark (card, "question-card");
  gtk_window_destroy (window);
}

/* /tally/pickers/shortcuts */

static void
test_shortcuts (void)
{
  g_autoptr(GtkBuilder) builder = NULL;
  GtkWindow *window;
  g_autoptr(GPtrArray) shortcuts = NULL;
  gboolean found = FALSE;

  tally_ui_init ();
  builder = gtk_builder_new_from_resource ("/io/github/tallyapp/Tally/window/tally-shortcuts-window.ui");
  window = GTK_WINDOW (gtk_builder_get_object (builder, "help_overlay"));
  g_assert_true (GTK_IS_SHORTCUTS_WINDOW (window));

  shortcuts = tally_test_find_all (GTK_WIDGET (window), GTK_TYPE_SHORTCUTS_SHORTCUT);
  for (guint i = 0; i < shortcuts->len; i++)
    {
      g_autofree char *title = NULL;
      g_autofree char *accelerator = NULL;

      g_object_get (g_ptr_array_index (shortcuts, i), "title", &title, "accelerator", &accelerator, NULL);
      if (g_strcmp0 (accelerator, "1 2 3 4") == 0)
        {
          g_assert_cmpstr (title, ==, "Pick option 1, 2, 3 or 4 of the focused question");
          found = TRUE;
        }
    }
  g_assert_true (found);
  gtk_window_destroy (window);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *home = tally_test_app_init (&argc, &argv);
  int status;

  g_unsetenv ("ANTHROPIC_API_KEY");
  g_unsetenv ("ANTHROPIC_BASE_URL");

  g_test_add_func ("/tally/sidebar/snippet-plain", test_snippet_plain);
  g_test_add_func ("/tally/sidebar/window", test_sidebar_window);
  g_test_add_func ("/tally/pickers/mode-menu", test_mode_menu);
  g_test_add_func ("/tally/pickers/question-card", test_question_card);
  g_test_add_func ("/tally/pickers/shortcuts", test_shortcuts);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
