/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The sidebar's search under Xvfb (issue 15, search across 1,000
 * sessions): titles filter in the same keystroke, before the store
 * answers; a newer text cancels the older search and only its own results
 * are shown; typing on or taking from the end keeps the older hits until
 * the newer search answers, any other text drops them at once; FTS5 syntax typed into the entry gives results or the empty
 * state, never an error or a critical (criticals are fatal here); after
 * each letter typed, the rows shown are those whose title or text
 * matches, each hit with its snippet. */

#include "config.h"

#include <adwaita.h>
#include <string.h>

#include "tally-event.h"
#include "tally-session-row.h"
#include "tally-store.h"
#include "tally-test-app.h"
#include "tally-test-ui.h"
#include "tally-window-private.h"

/* One finished turn per session: its title, prompt and answer. */
static const char *sessions[][3] = {
  { "Croissant waste in York", "How much croissant waste in York?", "York threw away 40 croissants a day." },
  { "Cold brew margins", "What are the cold brew margins?", "The new pistachio latte beat cold brew on margin." },
  { "Leeds footfall", "Footfall in Leeds by weekday", "Saturdays bring twice the footfall of Mondays." },
};

/* Stores @n sessions of one finished turn each: @table[s] is the title,
 * prompt and answer of session s, last used @age_us[s] µs ago. */
static void
seed_sessions (const char    *path,
               const char   *(*table)[3],
               const gint64  *age_us,
               guint          n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyStore) store = tally_store_open (path, &error);
  gint64 now = g_get_real_time ();

  g_assert_no_error (error);
  for (guint s = 0; s < n; s++)
    {
      g_autofree char *id = g_strdup_printf ("5ea2c4e1-0000-4000-8000-%012u", s);
      JsonObject *fields[4] = {
        tally_event_new (TALLY_EVENT_SESSION_CREATED), tally_event_new (TALLY_EVENT_TURN_STARTED),
        tally_event_new (TALLY_EVENT_TEXT_DELTA), tally_event_new (TALLY_EVENT_TURN_FINISHED),
      };

      json_object_set_string_member (fields[0], "title", table[s][0]);
      json_object_set_string_member (fields[0], "model", "claude-sonnet-5");
      json_object_set_string_member (fields[1], "mode", "ask");
      json_object_set_string_member (fields[1], "text", table[s][1]);
      json_object_set_int_member (fields[2], "call", 1);
      json_object_set_int_member (fields[2], "block", 0);
      json_object_set_string_member (fields[2], "text", table[s][2]);
      json_object_set_string_member (fields[3], "status", "done");
      for (guint e = 0; e < G_N_ELEMENTS (fields); e++)
        {
          g_autoptr(JsonObject) event = tally_event_stamp (fields[e], e + 1, now - age_us[s], id,
                                                           e == 0 ? NULL : "t1");

          json_object_unref (fields[e]);
          g_assert_true (tally_store_append_event (store, event, &error));
          g_assert_no_error (error);
        }
    }
  g_assert_true (tally_store_flush (store, &error));
  g_assert_no_error (error);
}

static void
seed_store (const char *path)
{
  static const gint64 ages[] = { 3 * G_USEC_PER_SEC, 2 * G_USEC_PER_SEC, 1 * G_USEC_PER_SEC };

  G_STATIC_ASSERT (G_N_ELEMENTS (ages) == G_N_ELEMENTS (sessions));
  seed_sessions (path, sessions, ages, G_N_ELEMENTS (sessions));
}

static TallySessionRow *
row_titled (TallyWindow *window,
            const char  *title)
{
  GtkListBox *list = _tally_window_get_session_list (window);
  GtkListBoxRow *row;

  for (int i = 0; (row = gtk_list_box_get_row_at_index (list, i)) != NULL; i++)
    if (TALLY_IS_SESSION_ROW (row) && g_str_equal (tally_session_row_get_title (TALLY_SESSION_ROW (row)), title))
      return TALLY_SESSION_ROW (row);
  g_assert_not_reached ();
}

static gboolean
shown (TallyWindow *window,
       const char  *title)
{
  return gtk_widget_get_child_visible (GTK_WIDGET (row_titled (window, title)));
}

/* The text of the row's visible label or inscription (the snippet) that
 * holds @needle, or NULL */
static const char *
visible_label_with (TallySessionRow *row,
                    const char      *needle)
{
  g_autoptr(GPtrArray) labels = tally_test_find_all (GTK_WIDGET (row), GTK_TYPE_LABEL);
  g_autoptr(GPtrArray) inscriptions = tally_test_find_all (GTK_WIDGET (row), GTK_TYPE_INSCRIPTION);

  for (guint i = 0; i < labels->len; i++)
    {
      GtkLabel *label = g_ptr_array_index (labels, i);

      if (gtk_widget_get_visible (GTK_WIDGET (label)) && strstr (gtk_label_get_text (label), needle) != NULL)
        return gtk_label_get_text (label);
    }
  for (guint i = 0; i < inscriptions->len; i++)
    {
      GtkInscription *inscription = g_ptr_array_index (inscriptions, i);
      const char *text = gtk_inscription_get_text (inscription);

      if (gtk_widget_get_visible (GTK_WIDGET (inscription)) && text != NULL && strstr (text, needle) != NULL)
        return text;
    }
  return NULL;
}

/* Puts @text in the entry and has the window search for it now (the
 * entry's own signal follows on the next main-loop turn, with the same
 * text). gtk_editable_set_text() deletes the old text before it inserts
 * the new one, so the entry may first say it was emptied. */
static void
set_search (TallyWindow *window,
            const char  *text)
{
  GtkSearchEntry *entry = _tally_window_get_search_entry (window);

  gtk_editable_set_text (GTK_EDITABLE (entry), text);
  g_signal_emit_by_name (entry, "search-changed");
}

/* Types @more at the end of the search entry, or with @more NULL erases
 * its last character, as keys do (gtk_editable_set_text() first empties
 * the entry), and says at once that the search changed. */
static void
type_search (TallyWindow *window,
             const char  *more)
{
  GtkEditable *entry = GTK_EDITABLE (_tally_window_get_search_entry (window));
  int end = g_utf8_strlen (gtk_editable_get_text (entry), -1);

  if (more != NULL)
    gtk_editable_insert_text (entry, more, -1, &end);
  else
    gtk_editable_delete_text (entry, end - 1, end);
  g_signal_emit_by_name (entry, "search-changed");
}

static void
search_body (TallyApplication *app,
             TallyWindow      *window,
             gpointer          data)
{
  TallySessionRow *cold_brew;

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "list");

  /* Titles first: the row whose title matches shows in the same
   * keystroke (the entry does not wait for a pause in typing), before the
   * store has answered; the others are hidden. */
  gtk_editable_set_text (GTK_EDITABLE (_tally_window_get_search_entry (window)), "croissant w");
  SPIN_UNTIL (_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Croissant waste in York"));
  g_assert_false (shown (window, "Cold brew margins"));
  g_assert_false (shown (window, "Leeds footfall"));
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Croissant waste in York"));
  g_assert_false (shown (window, "Cold brew margins"));

  /* A newer text cancels the older search: only its results show, with
   * where it matched. "york" would show the croissant session. */
  set_search (window, "york");
  g_assert_true (_tally_window_is_refreshing (window));
  set_search (window, "pistachio");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  tally_test_wait_frames (GTK_WIDGET (window), 2);
  g_assert_false (shown (window, "Croissant waste in York"));
  g_assert_true (shown (window, "Cold brew margins"));
  g_assert_false (shown (window, "Leeds footfall"));
  cold_brew = row_titled (window, "Cold brew margins");
  g_assert_nonnull (visible_label_with (cold_brew, "pistachio latte"));
  /* The snippet's « » became markup, not text. */
  g_assert_null (visible_label_with (cold_brew, "«"));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "list");

  /* Typing on keeps the older text's hits, snippets included, until the
   * newer search answers; then only the newer text's hits show. */
  type_search (window, " lat");
  g_assert_true (_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Cold brew margins"));
  g_assert_nonnull (visible_label_with (cold_brew, "pistachio latte"));
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Cold brew margins"));
  g_assert_nonnull (visible_label_with (cold_brew, "pistachio latte"));
  g_assert_false (shown (window, "Croissant waste in York"));
  type_search (window, "z");
  g_assert_true (shown (window, "Cold brew margins"));
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_false (shown (window, "Cold brew margins"));
  g_assert_null (visible_label_with (cold_brew, "pistachio"));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "no-results");
  /* Taking from the end keeps them too; another text drops them at once. */
  set_search (window, "pistachio");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Cold brew margins"));
  type_search (window, NULL);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (_tally_window_get_search_entry (window))), ==, "pistachi");
  g_assert_true (shown (window, "Cold brew margins"));
  set_search (window, "leeds");
  g_assert_false (shown (window, "Cold brew margins"));
  g_assert_null (visible_label_with (cold_brew, "pistachio"));
  g_assert_true (shown (window, "Leeds footfall"));
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_false (shown (window, "Cold brew margins"));
  g_assert_true (shown (window, "Leeds footfall"));

  /* FTS5 syntax is taken literally: nothing, or the sessions it names. */
  set_search (window, "\"oat\" NEAR(-milk* (");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "no-results");
  set_search (window, "(pistachio");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Cold brew margins"));
  g_assert_false (shown (window, "Leeds footfall"));
  set_search (window, "\"");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, "no-results");
  g_assert_null (_tally_window_get_last_toast (window));

  /* Clearing the entry shows every session again, without snippets. */
  set_search (window, "");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_true (shown (window, "Croissant waste in York"));
  g_assert_true (shown (window, "Cold brew margins"));
  g_assert_true (shown (window, "Leeds footfall"));
  g_assert_null (visible_label_with (cold_brew, "pistachio"));
}

/* @row shows @snippet as plain text, its « » marks gone (they became bold). */
static void
assert_snippet_shown (TallySessionRow *row,
                      const char      *snippet)
{
  g_autofree char *plain = tally_session_row_snippet_to_plain (snippet);
  g_autoptr(GString) shown_text = g_string_new (plain);

  g_string_replace (shown_text, "«", "", 0);
  g_string_replace (shown_text, "»", "", 0);
  g_assert_cmpstr (visible_label_with (row, shown_text->str), ==, shown_text->str);
  g_assert_null (visible_label_with (row, "«"));
}

/* After each key of @text, once the store has answered, the rows shown
 * are exactly those whose title holds the text typed so far (case-folded)
 * or that the store's search of it finds, and each hit shows its snippet,
 * as plain text with the « » marks gone. */
static void
type_and_check (TallyApplication *app,
                TallyWindow      *window,
                const char       *text)
{
  TallyStore *store = tally_application_get_store (app);
  GtkListBox *list = _tally_window_get_session_list (window);

  gtk_editable_set_text (GTK_EDITABLE (_tally_window_get_search_entry (window)), "");
  g_signal_emit_by_name (_tally_window_get_search_entry (window), "search-changed");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));

  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      g_autofree char *key = g_strndup (p, g_utf8_next_char (p) - p);
      g_autofree char *typed = g_strndup (text, g_utf8_next_char (p) - text);
      g_autofree char *folded = g_utf8_casefold (typed, -1);
      g_autoptr(GPtrArray) hits = NULL;
      g_autoptr(GError) error = NULL;
      guint n_shown = 0;
      GtkListBoxRow *row;

      type_search (window, key);
      SPIN_UNTIL (!_tally_window_is_refreshing (window));
      tally_test_wait_frames (GTK_WIDGET (window), 1);
      hits = tally_store_search (store, typed, &error);
      g_assert_no_error (error);

      for (int i = 0; (row = gtk_list_box_get_row_at_index (list, i)) != NULL; i++)
        {
          TallySessionRow *session = TALLY_SESSION_ROW (row);
          g_autofree char *title = g_utf8_casefold (tally_session_row_get_title (session), -1);
          const char *snippet = NULL;
          gboolean want = strstr (title, folded) != NULL;

          for (guint h = 0; h < hits->len; h++)
            {
              TallySessionInfo *info = g_ptr_array_index (hits, h);

              if (g_str_equal (info->id, tally_session_row_get_id (session)))
                {
                  want = TRUE;
                  snippet = info->snippet;
                }
            }
          g_test_message ("“%s”: “%s” shown %d, wanted %d", typed, title,
                          gtk_widget_get_child_visible (GTK_WIDGET (row)), want);
          g_assert_cmpint (gtk_widget_get_child_visible (GTK_WIDGET (row)), ==, want);
          n_shown += want;
          if (snippet != NULL)
            assert_snippet_shown (session, snippet);
        }
      g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, n_shown > 0 ? "list" : "no-results");
    }
}

static void
letters_body (TallyApplication *app,
              TallyWindow      *window,
              gpointer          data)
{
  SPIN_UNTIL (!_tally_window_is_refreshing (window));

  /* One letter matches titles and words of several sessions, more
   * letters fewer; a quote is in no title and no word. */
  type_and_check (app, window, "cold");
  type_and_check (app, window, "weekday");
  type_and_check (app, window, "pistachio");
  type_and_check (app, window, "\"oat\"");
}

/* Whether @row, as the list last drew it (its render node is kept until
 * it is queued for drawing), shows anything but its background: some
 * pixel differs clearly from the top left one. A row out of sight draws
 * only its background (tally-session-row.c). */
static gboolean
row_has_ink (GtkListBox      *list,
             TallySessionRow *row)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree guchar *pixels = NULL;
  graphene_rect_t bounds;
  int width, height;
  gsize stride;

  g_assert_true (gtk_widget_compute_bounds (GTK_WIDGET (row), GTK_WIDGET (list), &bounds));
  width = (int) bounds.size.width;
  height = (int) bounds.size.height;
  g_assert_cmpint (width, >, 0);
  g_assert_cmpint (height, >, 0);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (-bounds.origin.x, -bounds.origin.y));
  gtk_widget_snapshot_child (GTK_WIDGET (list), GTK_WIDGET (row), snapshot);
  node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL)
    return FALSE;
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (GTK_WIDGET (list))),
                                         node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  stride = (gsize) width * 4;
  pixels = g_malloc (stride * height);
  gdk_texture_download (texture, pixels, stride);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        const guchar *p = pixels + y * stride + x * 4;
        int diff = 0;

        for (int c = 0; c < 4; c++)
          diff += ABS (p[c] - pixels[c]);
        if (diff > 120)
          return TRUE;
      }
  return FALSE;
}

/* Every row of @list in sight in @viewport is drawn, and shows @snippets'
 * snippet for its session when it has one (NULL: none checked). Returns
 * how many rows are in sight. */
static guint
check_rows_in_sight (GtkListBox *list,
                     GtkWidget  *viewport,
                     GHashTable *snippets)
{
  GtkListBoxRow *row;
  guint n = 0;

  for (int i = 0; (row = gtk_list_box_get_row_at_index (list, i)) != NULL; i++)
    {
      graphene_rect_t bounds;

      if (!gtk_widget_get_child_visible (GTK_WIDGET (row)))
        continue;
      g_assert_true (gtk_widget_compute_bounds (GTK_WIDGET (row), viewport, &bounds));
      if (bounds.origin.y + bounds.size.height <= 0 || bounds.origin.y >= gtk_widget_get_height (viewport))
        continue;
      g_test_message ("row %d “%s” in sight", i, tally_session_row_get_title (TALLY_SESSION_ROW (row)));
      g_assert_true (row_has_ink (list, TALLY_SESSION_ROW (row)));
      if (snippets != NULL)
        assert_snippet_shown (TALLY_SESSION_ROW (row),
                              g_hash_table_lookup (snippets, tally_session_row_get_id (TALLY_SESSION_ROW (row))));
      n++;
    }
  return n;
}

#define N_SCROLLED 60

/* Sixty sessions that all match "waste": more rows than the list shows.
 * Scrolled from top to bottom a page at a time, every row in sight is
 * drawn and shows its snippet in the frame that shows it, though a row
 * out of sight draws only its background and its snippet text is only put
 * in once it comes into sight (tally-session-row.c). The same holds for
 * rows that come into sight because a search hides those above them. */
static void
scrolled_body (TallyApplication *app,
               TallyWindow      *window,
               gpointer          data)
{
  GtkListBox *list = _tally_window_get_session_list (window);
  GtkWidget *viewport = gtk_widget_get_ancestor (GTK_WIDGET (list), GTK_TYPE_VIEWPORT);
  GtkScrolledWindow *scrolled = GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (viewport, GTK_TYPE_SCROLLED_WINDOW));
  GtkAdjustment *adjustment = gtk_scrolled_window_get_vadjustment (scrolled);
  g_autoptr(GHashTable) snippets = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) hits = NULL;
  g_autoptr(GError) error = NULL;
  guint n_checked = 0;
  double value = 0;

  /* The window counts as refreshing until every row is made (rows that
   * do not fit in one turn of the main loop are made in the next ones). */
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  g_assert_nonnull (gtk_list_box_get_row_at_index (list, N_SCROLLED - 1));
  g_assert_null (gtk_list_box_get_row_at_index (list, N_SCROLLED));
  set_search (window, "waste");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  hits = tally_store_search (tally_application_get_store (app), "waste", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, N_SCROLLED);
  for (guint h = 0; h < hits->len; h++)
    {
      TallySessionInfo *info = g_ptr_array_index (hits, h);

      g_hash_table_insert (snippets, info->id, info->snippet);
    }

  tally_test_wait_frames (GTK_WIDGET (window), 2);
  g_assert_cmpfloat (gtk_adjustment_get_upper (adjustment), >, 2 * gtk_adjustment_get_page_size (adjustment));
  for (;;)
    {
      gtk_adjustment_set_value (adjustment, value);
      tally_test_wait_frames (GTK_WIDGET (window), 1);
      n_checked += check_rows_in_sight (list, viewport, snippets);
      if (value >= gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment))
        break;
      value += gtk_adjustment_get_page_size (adjustment) / 2;
    }
  /* Each row was seen at least once. */
  g_assert_cmpuint (n_checked, >=, N_SCROLLED);

  /* Back at the top, with the rows below out of sight: a search for the
   * last sessions brings them up into sight, drawn. */
  gtk_adjustment_set_value (adjustment, 0);
  tally_test_wait_frames (GTK_WIDGET (window), 1);
  set_search (window, "session 5");
  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  tally_test_wait_frames (GTK_WIDGET (window), 1);
  /* Session 5 and some of 50 to 59, which were out of sight. */
  g_assert_cmpuint (check_rows_in_sight (list, viewport, NULL), >=, 2);
}

/* Twelve sessions over three days for the headers: six Alpha, six Beta. */
static const char *grouped[][3] = {
  { "Alpha 1", "How did it go?", "Fine." }, { "Beta 1", "How did it go?", "Fine." },
  { "Alpha 2", "How did it go?", "Fine." }, { "Beta 2", "How did it go?", "Fine." },
  { "Alpha 3", "How did it go?", "Fine." }, { "Beta 3", "How did it go?", "Fine." },
  { "Alpha 4", "How did it go?", "Fine." }, { "Beta 4", "How did it go?", "Fine." },
  { "Alpha 5", "How did it go?", "Fine." }, { "Beta 5", "How did it go?", "Fine." },
  { "Alpha 6", "How did it go?", "Fine." }, { "Beta 6", "How did it go?", "Fine." },
};

/* Every row is shown when its title holds @text (case-folded; NULL for
 * all), and the first shown row of each day group, and only it, has the
 * group's header, whichever way the list box was told about the rows
 * whose match changed. Returns how many rows are shown. */
static guint
check_rows (TallyWindow *window,
            const char  *text)
{
  GtkListBox *list = _tally_window_get_session_list (window);
  g_autofree char *folded = text != NULL ? g_utf8_casefold (text, -1) : NULL;
  gint64 now = g_get_real_time ();
  int previous_group = -1;
  guint n_shown = 0;
  GtkListBoxRow *row;

  for (int i = 0; (row = gtk_list_box_get_row_at_index (list, i)) != NULL; i++)
    {
      TallySessionRow *session = TALLY_SESSION_ROW (row);
      g_autofree char *title = g_utf8_casefold (tally_session_row_get_title (session), -1);
      gboolean want = folded == NULL || strstr (title, folded) != NULL;
      GtkWidget *header = gtk_list_box_row_get_header (row);
      TallySessionGroup group = tally_session_row_get_group (session, now);

      g_test_message ("“%s”: row %d “%s” shown %d", text, i, title, gtk_widget_get_child_visible (GTK_WIDGET (row)));
      g_assert_cmpint (gtk_widget_get_child_visible (GTK_WIDGET (row)), ==, want);
      if (!want)
        {
          g_assert_null (header);
          continue;
        }
      n_shown++;
      if ((int)group == previous_group)
        g_assert_null (header);
      else
        {
          g_assert_true (GTK_IS_LABEL (header));
          g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (header)), ==, tally_session_group_get_title (group));
        }
      previous_group = group;
    }
  return n_shown;
}

static void
headers_body (TallyApplication *app,
              TallyWindow      *window,
              gpointer          data)
{
  /* Each step from the one before it changes few rows (told row by row)
   * or many (the whole list filtered again). */
  static const struct {
    const char *text;
    guint       shown;
  } steps[] = {
    { NULL, 12 },
    { "alpha", 6 },     /* six rows hidden */
    { "alpha 3", 1 },   /* five more */
    { "", 12 },         /* eleven shown again */
    { "zzz", 0 },       /* all twelve hidden */
    { "beta", 6 },      /* six shown */
    { "beta 6", 1 },
    { "alpha 3", 1 },   /* one out, one in */
    { "", 12 },
  };

  SPIN_UNTIL (!_tally_window_is_refreshing (window));
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      if (steps[i].text != NULL)
        {
          set_search (window, steps[i].text);
          SPIN_UNTIL (!_tally_window_is_refreshing (window));
        }
      g_assert_cmpuint (check_rows (window, steps[i].text != NULL && *steps[i].text != '\0' ? steps[i].text : NULL),
                        ==, steps[i].shown);
      g_assert_cmpstr (_tally_window_get_sidebar_page (window), ==, steps[i].shown > 0 ? "list" : "no-results");
    }
}

/* /tally/search-ui/headers */
static void
test_search_headers (TallyTestAppFixture *fixture,
                     gconstpointer        data)
{
  const char *args[] = { "--store", fixture->store_path, NULL };
  gint64 ages[G_N_ELEMENTS (grouped)];

  /* Today, two days ago and ten days ago, in turn. */
  for (guint s = 0; s < G_N_ELEMENTS (grouped); s++)
    ages[s] = (s % 3 == 0 ? 60 : s % 3 == 1 ? 2 * 86400 : 10 * 86400) * G_USEC_PER_SEC + s * G_USEC_PER_SEC;
  seed_sessions (fixture->store_path, grouped, ages, G_N_ELEMENTS (grouped));
  g_assert_cmpint (tally_test_app_run (args, headers_body, NULL), ==, 0);
}

/* /tally/search-ui/scrolled-snippets */
static void
test_search_scrolled (TallyTestAppFixture *fixture,
                      gconstpointer        data)
{
  const char *args[] = { "--store", fixture->store_path, NULL };
  g_autoptr(GPtrArray) strings = g_ptr_array_new_with_free_func (g_free);
  const char *table[N_SCROLLED][3];
  gint64 ages[N_SCROLLED];

  for (guint s = 0; s < N_SCROLLED; s++)
    {
      g_ptr_array_add (strings, g_strdup_printf ("Session %u", s));
      table[s][0] = g_ptr_array_index (strings, strings->len - 1);
      g_ptr_array_add (strings, g_strdup_printf ("How much waste in week %u?", s));
      table[s][1] = g_ptr_array_index (strings, strings->len - 1);
      g_ptr_array_add (strings, g_strdup_printf ("Waste fell by %u units in week %u.", 3 * s + 7, s));
      table[s][2] = g_ptr_array_index (strings, strings->len - 1);
      ages[s] = (s + 1) * G_USEC_PER_SEC;
    }
  seed_sessions (fixture->store_path, table, ages, N_SCROLLED);
  g_assert_cmpint (tally_test_app_run (args, scrolled_body, NULL), ==, 0);
}

/* /tally/search-ui/window and /tally/search-ui/letters: @data is the
 * body, run on the three sessions of seed_store(). */
static void
test_search_seeded (TallyTestAppFixture *fixture,
                    gconstpointer        data)
{
  const char *args[] = { "--store", fixture->store_path, NULL };
  const TallyTestAppBody *body = data;

  seed_store (fixture->store_path);
  g_assert_cmpint (tally_test_app_run (args, *body, NULL), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  static const TallyTestAppBody window_body = search_body, letters = letters_body;
  g_autofree char *home = tally_test_app_init (&argc, &argv);
  int status;

  g_test_add ("/tally/search-ui/window", TallyTestAppFixture, &window_body,
              tally_test_app_fixture_set_up, test_search_seeded, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/search-ui/letters", TallyTestAppFixture, &letters,
              tally_test_app_fixture_set_up, test_search_seeded, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/search-ui/scrolled-snippets", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_search_scrolled, tally_test_app_fixture_tear_down);
  g_test_add ("/tally/search-ui/headers", TallyTestAppFixture, NULL,
              tally_test_app_fixture_set_up, test_search_headers, tally_test_app_fixture_tear_down);

  status = g_test_run ();
  tally_test_remove_tree (home);
  return status;
}
