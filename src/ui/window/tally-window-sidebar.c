/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "tally-application-private.h"
#include "tally-window-private.h"

/*
 * The window's sidebar: the saved sessions, pinned ones first, then newest
 * first under the headers Today, Yesterday and Earlier, filtered by the
 * search entry (titles at once, then the store's full-text index), with
 * Pin, Rename, Export and Delete (issue 14 §8). A deletion only hides the
 * row and shows a toast with Undo; the store forgets the session when the
 * toast goes away without Undo, or when the window closes.
 */

/* How long the search entry waits after a keystroke before it searches */
#define SEARCH_DELAY_MS 0

TallySessionRow *
_tally_window_find_row (TallyWindow *self,
                        const char  *id)
{
  return id != NULL ? g_hash_table_lookup (self->rows, id) : NULL;
}

/* Selects the row of @id (the session shown), or none. */
void
_tally_window_select_row_for (TallyWindow *self,
                              const char  *id)
{
  TallySessionRow *row = _tally_window_find_row (self, id);

  if (row != NULL)
    gtk_list_box_select_row (self->session_list, GTK_LIST_BOX_ROW (row));
  else
    gtk_list_box_unselect_all (self->session_list);
}

/* A row for a session whose first turn has just started, until the store
 * lists it (the refresh at the end of the turn replaces it). */
void
_tally_window_add_provisional_row (TallyWindow *self,
                                   const char  *id,
                                   const char  *text)
{
  g_autoptr(TallySessionInfo) info = tally_session_info_new (id);
  GtkWidget *row;
  glong length = g_utf8_strlen (text, -1);

  g_free (info->title);
  if (length > 80)
    {
      g_autofree char *start = g_utf8_substring (text, 0, 79);
      info->title = g_strconcat (g_strstrip (start), "…", NULL);
    }
  else
    info->title = g_strdup (text);
  g_strdelimit (info->title, "\r\n\t", ' ');
  info->created_us = info->updated_us = g_get_real_time ();
  info->turns = 0;

  row = tally_session_row_new (info);
  g_hash_table_insert (self->rows, g_strdup (id), row);
  gtk_list_box_prepend (self->session_list, row);
  gtk_list_box_select_row (self->session_list, GTK_LIST_BOX_ROW (row));
  _tally_window_refilter (self);
}

/* Pinned first, then the newest first. */
static int
session_sort_func (GtkListBoxRow *row1,
                   GtkListBoxRow *row2,
                   gpointer       user_data)
{
  TallySessionRow *a, *b;
  gint64 when_a, when_b;

  if (!TALLY_IS_SESSION_ROW (row1) || !TALLY_IS_SESSION_ROW (row2))
    return 0;
  a = TALLY_SESSION_ROW (row1);
  b = TALLY_SESSION_ROW (row2);
  if (tally_session_row_get_info (a)->pinned != tally_session_row_get_info (b)->pinned)
    return tally_session_row_get_info (a)->pinned ? -1 : 1;
  when_a = tally_session_row_get_when (a);
  when_b = tally_session_row_get_when (b);
  return when_a > when_b ? -1 : when_a < when_b ? 1 : 0;
}

/* A section header above the first row of each group (Pinned, Today,
 * Yesterday, Earlier); the list box passes the previous shown row. */
static void
session_header_func (GtkListBoxRow *row,
                     GtkListBoxRow *before,
                     gpointer       user_data)
{
  gint64 now = g_get_real_time ();
  TallySessionGroup group;
  GtkWidget *header;

  if (!TALLY_IS_SESSION_ROW (row))
    return;
  group = tally_session_row_get_group (TALLY_SESSION_ROW (row), now);
  if (before != NULL && TALLY_IS_SESSION_ROW (before) &&
      tally_session_row_get_group (TALLY_SESSION_ROW (before), now) == group)
    {
      gtk_list_box_row_set_header (row, NULL);
      return;
    }

  header = gtk_list_box_row_get_header (row);
  if (header == NULL || !GTK_IS_LABEL (header))
    {
      header = gtk_label_new (NULL);
      gtk_label_set_xalign (GTK_LABEL (header), 0);
      gtk_widget_add_css_class (header, "heading");
      gtk_widget_add_css_class (header, "session-group-header");
      gtk_list_box_row_set_header (row, header);
    }
  gtk_label_set_label (GTK_LABEL (header), tally_session_group_get_title (group));
}

static gboolean
row_matches (TallyWindow     *self,
             TallySessionRow *row)
{
  /* Both tables are usually empty: no need to read and hash the id then
   * (reading it from each of 1,000 rows showed in profiles). */
  if (g_hash_table_size (self->pending_deletes) > 0 &&
      g_hash_table_contains (self->pending_deletes, tally_session_row_get_id (row)))
    return FALSE;
  if (self->search_text == NULL)
    return TRUE;
  if (strstr (tally_session_row_get_folded_title (row), self->search_text) != NULL)
    return TRUE;

  return self->search_hits != NULL && g_hash_table_size (self->search_hits) > 0 &&
         g_hash_table_contains (self->search_hits, tally_session_row_get_id (row));
}

static gboolean
session_filter_func (GtkListBoxRow *row,
                     gpointer       user_data)
{
  TallyWindow *self = user_data;

  return !TALLY_IS_SESSION_ROW (row) || row_matches (self, TALLY_SESSION_ROW (row));
}

/* The list, or why there is nothing to list: @total rows of sessions not
 * being deleted, @shown of them matching the search. */
static void
show_sidebar_page (TallyWindow *self,
                   guint        total,
                   guint        shown)
{
  /* Not opened yet: the store opens after the first frame and the list
   * is refreshed then. Asking for it here opened it on the main thread,
   * its integrity check reading the whole file, as soon as a search ran
   * before that (0.75 s for bench-search's store). */
  if (!_tally_application_store_tried (self->app))
    return;
  if (_tally_application_peek_store (self->app) == NULL)
    {
      gtk_label_set_label (self->store_status_label, tally_application_get_store_problem (self->app));
      gtk_stack_set_visible_child_name (self->sidebar_stack, "unavailable");
      return;
    }

  if (total == 0)
    gtk_stack_set_visible_child_name (self->sidebar_stack, "empty");
  else if (shown == 0)
    gtk_stack_set_visible_child_name (self->sidebar_stack, "no-results");
  else
    gtk_stack_set_visible_child_name (self->sidebar_stack, "list");
}

/* At most this share of the rows (or this many) may change whether they
 * are shown for the list box to be told row by row rather than filter
 * every row again. */
#define ROW_CHANGES_MAX_SHARE 4
#define ROW_CHANGES_MAX_MIN   8

/* Applies the search and the pending deletions again, and shows the list
 * or why there is nothing to list (no store, no saved session, none that
 * matches). Only the rows whose
 * match changed are handed to the list box, each with its neighbours'
 * headers: gtk_list_box_invalidate_filter() looks for the previous shown
 * row of every row, hidden ones included, by walking back over the hidden
 * rows, which costs the square of the rows when a search hides most of
 * them (tens of milliseconds per keystroke with 1,000 sessions). */
void
_tally_window_refilter (TallyWindow *self)
{
  guint max_changes = MAX (g_hash_table_size (self->rows) / ROW_CHANGES_MAX_SHARE, ROW_CHANGES_MAX_MIN);
  g_autoptr(GPtrArray) changed = g_ptr_array_new ();
  gboolean deleting = g_hash_table_size (self->pending_deletes) > 0;
  guint total = 0;
  guint shown = 0;
  GHashTableIter iter;
  gpointer key, value;

  /* One pass: the rows whose match changed, and how many there are and
   * match for the sidebar's page. */
  g_hash_table_iter_init (&iter, self->rows);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      gboolean matches = row_matches (self, value);

      total += !deleting || !g_hash_table_contains (self->pending_deletes, key);
      shown += matches;
      /* The list box shows a row by making it child-visible. */
      if (matches != gtk_widget_get_child_visible (value) && changed->len <= max_changes)
        g_ptr_array_add (changed, value);
    }

  if (changed->len > max_changes)
    gtk_list_box_invalidate_filter (self->session_list);
  else
    for (guint i = 0; i < changed->len; i++)
      gtk_list_box_row_changed (g_ptr_array_index (changed, i));
  show_sidebar_page (self, total, shown);
}

/* Whether a row showing @before would move, or change its group, when
 * it shows @after instead. */
static gboolean
sort_key_changed (TallySessionInfo *before,
                  TallySessionInfo *after)
{
  gint64 when_before = before->updated_us > 0 ? before->updated_us : before->created_us;
  gint64 when_after = after->updated_us > 0 ? after->updated_us : after->created_us;

  return before->pinned != after->pinned || when_before != when_after;
}

/* How long one turn of the main loop may spend making rows: the first
 * listing of 1,000 sessions stalled the main loop for over a second in one
 * go. The frame after a batch styles and lays out the rows it made, which
 * takes about twice as long as making them, so a batch of 12 ms stalled
 * the main loop for 35-47 ms in that frame once rows took 0.2 ms to make
 * (docs/architecture.md §2.2). */
#define MAKE_ROWS_BUDGET_US (5 * 1000)

/* The sessions of a listing that have no row yet, made a batch per turn
 * of the main loop. */
typedef struct {
  TallyWindow *self;   /* a reference */
  GPtrArray   *infos;  /* TallySessionInfo, in the store's order */
  guint        next;
} RowMaking;

static void
row_making_free (gpointer data)
{
  RowMaking *making = data;

  g_object_unref (making->self);
  g_ptr_array_unref (making->infos);
  g_free (making);
}

/* Makes rows until they are all made (TRUE) or the budget is spent. */
static gboolean
make_rows (RowMaking *making)
{
  TallyWindow *self = making->self;
  gint64 deadline = g_get_monotonic_time () + MAKE_ROWS_BUDGET_US;

  while (making->next < making->infos->len && g_get_monotonic_time () < deadline)
    {
      TallySessionInfo *info = g_ptr_array_index (making->infos, making->next++);
      GtkWidget *row;

      /* Given a row since it was listed (a first turn that started). */
      if (g_hash_table_contains (self->rows, info->id))
        continue;

      row = tally_session_row_new (info);
      if (self->search_hits != NULL)
        tally_session_row_set_snippet (TALLY_SESSION_ROW (row), g_hash_table_lookup (self->search_hits, info->id));
      g_hash_table_insert (self->rows, g_strdup (info->id), row);
      gtk_list_box_append (self->session_list, row);
    }
  return making->next >= making->infos->len;
}

/* After rows were made, moved or removed: the session shown is selected
 * (it may not be saved yet: its first turn is running), the search
 * applied, the title told. */
static void
rows_changed (TallyWindow *self)
{
  const char *current = self->session != NULL ? tally_session_get_id (self->session) : NULL;

  _tally_window_select_row_for (self, current);
  _tally_window_refilter (self);
  _tally_window_update_title (self);
}

static gboolean
make_rows_cb (gpointer data)
{
  RowMaking *making = data;
  TallyWindow *self = making->self;

  g_assert (TALLY_IS_WINDOW (self));

  /* The rows are filtered and sorted as they are added; the page, the
   * selection and the title wait for the last of them. */
  if (!self->closed)
    {
      if (!make_rows (making))
        return G_SOURCE_CONTINUE;
      rows_changed (self);
    }
  self->rows_idle = 0;
  self->refreshing--;
  return G_SOURCE_REMOVE;
}

/* Forgets the rows of an older listing still to be made. */
static void
stop_making_rows (TallyWindow *self)
{
  if (self->rows_idle == 0)
    return;
  g_clear_handle_id (&self->rows_idle, g_source_remove);
  self->refreshing--;
}

/* Shows @sessions, the store's list (the first of any id listed twice):
 * the rows of sessions still listed are kept and given their new info,
 * the others go, and rows for new ones are made, those that do not fit
 * in one turn of the main loop in the turns after it (meanwhile the
 * window counts as refreshing). Making every row again, as this did at
 * every refresh (each finished turn, rename, pin or deletion), took about
 * a second of the main thread for 1,000 sessions. */
static void
rebuild_rows (TallyWindow *self,
              GPtrArray   *sessions)
{
  guint max_changes = MAX (sessions->len / ROW_CHANGES_MAX_SHARE, ROW_CHANGES_MAX_MIN);
  g_autoptr(GHashTable) listed = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) moved = g_ptr_array_new ();
  RowMaking *making;
  GHashTableIter iter;
  gpointer value;

  stop_making_rows (self);

  for (guint i = 0; i < sessions->len; i++)
    {
      TallySessionInfo *info = g_ptr_array_index (sessions, i);

      if (!g_hash_table_contains (listed, info->id))
        g_hash_table_insert (listed, info->id, info);
    }

  g_hash_table_iter_init (&iter, self->rows);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (!g_hash_table_contains (listed, tally_session_row_get_id (value)))
      {
        g_hash_table_iter_remove (&iter);
        gtk_list_box_remove (self->session_list, value);
      }

  making = g_new0 (RowMaking, 1);
  making->self = g_object_ref (self);
  making->infos = g_ptr_array_new_with_free_func ((GDestroyNotify) tally_session_info_unref);
  for (guint i = 0; i < sessions->len; i++)
    {
      TallySessionInfo *info = g_ptr_array_index (sessions, i);
      TallySessionRow *row;

      if (g_hash_table_lookup (listed, info->id) != info)
        continue;

      row = _tally_window_find_row (self, info->id);
      if (row == NULL)
        g_ptr_array_add (making->infos, tally_session_info_ref (info));
      else
        {
          /* Its snippet, if any, is already the search's. */
          if (sort_key_changed (tally_session_row_get_info (row), info))
            g_ptr_array_add (moved, row);
          tally_session_row_set_info (row, info);
        }
    }

  /* A row whose time or pin changed moves and may change its header. */
  if (moved->len > max_changes)
    {
      gtk_list_box_invalidate_sort (self->session_list);
      gtk_list_box_invalidate_headers (self->session_list);
    }
  else
    for (guint i = 0; i < moved->len; i++)
      gtk_list_box_row_changed (g_ptr_array_index (moved, i));

  if (make_rows (making))
    row_making_free (making);
  else
    {
      self->refreshing++;
      self->rows_idle = g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, make_rows_cb, making, row_making_free);
    }
  rows_changed (self);
}

static void
list_sessions_cb (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(TallyWindow) self = user_data;
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GError) error = NULL;

  g_assert (TALLY_IS_WINDOW (self));
  g_assert (TALLY_IS_STORE (object));

  sessions = tally_store_list_sessions_finish (TALLY_STORE (object), result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  /* Not cancelled, so this answers the newest request. */
  self->refreshing--;
  g_clear_object (&self->list_cancellable);
  if (self->closed)
    return;

  if (sessions == NULL)
    {
      g_autofree char *message = g_strdup_printf (_("Could not list the saved sessions: %s"), error->message);
      tally_window_add_toast (self, message);
      return;
    }

  rebuild_rows (self, sessions);
}

/* Lists the saved sessions again, in a worker thread. */
void
_tally_window_refresh_sessions (TallyWindow *self)
{
  TallyStore *store = tally_application_get_store (self->app);

  if (store == NULL)
    {
      _tally_window_refilter (self);
      return;
    }

  if (self->list_cancellable != NULL)
    {
      g_cancellable_cancel (self->list_cancellable);
      self->refreshing--;
    }
  g_clear_object (&self->list_cancellable);
  self->list_cancellable = g_cancellable_new ();
  self->refreshing++;
  tally_store_list_sessions_async (store, self->list_cancellable, list_sessions_cb, g_object_ref (self));
}

static void
session_row_activated_cb (TallyWindow   *self,
                          GtkListBoxRow *row)
{
  g_assert (TALLY_IS_WINDOW (self));

  if (!TALLY_IS_SESSION_ROW (row))
    return;

  tally_window_open_session (self, tally_session_row_get_id (TALLY_SESSION_ROW (row)));
}

/* Hides the snippets of the rows of the full-text hits shown, and forgets
 * the hits (the other rows show none). */
/* Takes the snippet off the row of every session in @hits that is not in
 * @keep (%NULL: every one). */
static void
clear_snippets (TallyWindow *self,
                GHashTable  *hits,
                GHashTable  *keep)
{
  GHashTableIter iter;
  gpointer key;

  if (hits == NULL)
    return;

  g_hash_table_iter_init (&iter, hits);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      TallySessionRow *row;

      if (keep != NULL && g_hash_table_contains (keep, key))
        continue;
      row = _tally_window_find_row (self, key);
      if (row != NULL)
        tally_session_row_set_snippet (row, NULL);
    }
}

static void
clear_hit_snippets (TallyWindow *self)
{
  clear_snippets (self, self->search_hits, NULL);
  g_clear_pointer (&self->search_hits, g_hash_table_unref);
}

static void
search_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(TallyWindow) self = user_data;
  g_autoptr(GPtrArray) hits = NULL;
  g_autoptr(GHashTable) old_hits = NULL;
  g_autoptr(GError) error = NULL;

  g_assert (TALLY_IS_WINDOW (self));
  g_assert (TALLY_IS_STORE (object));

  hits = tally_store_search_finish (TALLY_STORE (object), result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || self->closed)
    return;

  g_clear_object (&self->search_cancellable);

  if (hits == NULL)
    {
      /* Half-typed queries are expected to fail now and then; the title
       * filter still applies, and the hits of an older text kept by the
       * keystroke go. */
      g_debug ("Full-text search failed: %s", error->message);
      clear_hit_snippets (self);
      _tally_window_refilter (self);
      return;
    }

  /* Only the rows whose hit or snippet changed are touched: the hits of
   * an older text that the keystroke kept mostly stay hits, with the same
   * snippet. */
  old_hits = g_steal_pointer (&self->search_hits);
  self->search_hits = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; i < hits->len; i++)
    {
      TallySessionInfo *info = g_ptr_array_index (hits, i);
      TallySessionRow *row = _tally_window_find_row (self, info->id);
      const char *snippet = info->snippet != NULL ? info->snippet : "";
      const char *old_snippet = old_hits != NULL ? g_hash_table_lookup (old_hits, info->id) : NULL;

      g_hash_table_insert (self->search_hits, g_strdup (info->id), g_strdup (snippet));
      if (row != NULL && g_strcmp0 (old_snippet, snippet) != 0)
        tally_session_row_set_snippet (row, snippet);
    }
  clear_snippets (self, old_hits, self->search_hits);

  _tally_window_refilter (self);
}

static void
search_changed_cb (TallyWindow *self)
{
  g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->search_entry))));
  g_autofree char *folded = *text != '\0' ? g_utf8_casefold (text, -1) : NULL;
  /* An empty text searches nothing, so it only peeks: the entry says it
   * changed while the window is set up, and opening the store then would
   * come before the first frame (docs/architecture.md §11.1). */
  TallyStore *store = folded != NULL ? tally_application_get_store (self->app)
                                     : _tally_application_peek_store (self->app);

  g_assert (TALLY_IS_WINDOW (self));

  /* The older text's search stops, even while it runs in the store
   * (tally_store_search_async()); its answer is never shown. */
  g_cancellable_cancel (self->search_cancellable);
  g_clear_object (&self->search_cancellable);

  /* A keystroke that adds to the text or takes from its end keeps the
   * older text's hits (and snippets) until its own search answers, which
   * then changes only the rows whose hit or snippet differs: hiding every
   * hit here and showing most of them again a moment later handed the list
   * box about a hundred rows twice per keystroke, each one relaid out
   * (docs/architecture.md §11.1). Any other text drops them at once. */
  if (folded == NULL || store == NULL || self->search_text == NULL ||
      !(g_str_has_prefix (folded, self->search_text) || g_str_has_prefix (self->search_text, folded)))
    clear_hit_snippets (self);
  g_clear_pointer (&self->search_text, g_free);

  if (folded != NULL)
    {
      self->search_text = g_steal_pointer (&folded);
      if (store != NULL)
        {
          self->search_cancellable = g_cancellable_new ();
          tally_store_search_async (store, text, self->search_cancellable, search_cb, g_object_ref (self));
        }
    }

  _tally_window_refilter (self);
}

static void
stop_search_cb (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  gtk_editable_set_text (GTK_EDITABLE (self->search_entry), "");
}

static void
search_activate_cb (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  for (int i = 0;; i++)
    {
      GtkListBoxRow *row = gtk_list_box_get_row_at_index (self->session_list, i);

      if (row == NULL)
        break;
      if (TALLY_IS_SESSION_ROW (row) && row_matches (self, TALLY_SESSION_ROW (row)))
        {
          tally_window_open_session (self, tally_session_row_get_id (TALLY_SESSION_ROW (row)));
          gtk_widget_grab_focus (GTK_WIDGET (row));
          break;
        }
    }
}

/* Why the store did not take a change to a saved session: @error's
 * message or, when there is no store, the application's store problem. */
static const char *
store_failure_reason (TallyWindow  *self,
                      const GError *error)
{
  const char *problem = tally_application_get_store_problem (self->app);

  if (error != NULL)
    return error->message;
  return problem != NULL ? problem : "";
}

/**
 * _tally_window_rename_saved_session_activate:
 * @self: a #TallyWindow
 * @parameter: `(ss)`: the session's id and its new title (trimmed, not
 *   empty)
 *
 * `win.rename-saved-session`, which a sidebar row's Rename popover
 * activates: stores the title and shows it in the row at once. A failure
 * is said in a toast.
 */
void
_tally_window_rename_saved_session_activate (TallyWindow *self,
                                             GVariant    *parameter)
{
  TallyStore *store = tally_application_get_store (self->app);
  g_autoptr(GError) error = NULL;
  TallySessionRow *row;
  TallySessionInfo *info;
  const char *id, *title;

  g_assert (TALLY_IS_WINDOW (self));

  g_variant_get (parameter, "(&s&s)", &id, &title);
  row = _tally_window_find_row (self, id);
  if (row == NULL)
    return;
  info = tally_session_row_get_info (row);

  if (store == NULL || !tally_store_rename_session (store, info->id, title, &error))
    {
      g_autofree char *message = g_strdup_printf (_("Could not rename the session: %s"),
                                                  store_failure_reason (self, error));

      tally_window_add_toast (self, message);
      return;
    }

  /* Show the new name at once; the refresh confirms it from the store. */
  g_free (info->title);
  info->title = g_strdup (title);
  tally_session_row_set_info (row, info);
  _tally_window_update_title (self);
  _tally_window_refresh_sessions (self);
}

/**
 * _tally_window_pin_saved_session_activate:
 * @self: a #TallyWindow
 * @parameter: `(sb)`: the session's id, and %TRUE to pin it or %FALSE to
 *   unpin it
 *
 * `win.pin-saved-session`, which a sidebar row's Pin and Unpin activate:
 * stores the flag and moves the row at once. A failure is said in a
 * toast.
 */
void
_tally_window_pin_saved_session_activate (TallyWindow *self,
                                          GVariant    *parameter)
{
  TallyStore *store = tally_application_get_store (self->app);
  g_autoptr(GError) error = NULL;
  TallySessionRow *row;
  TallySessionInfo *info;
  const char *id;
  gboolean pinned;

  g_assert (TALLY_IS_WINDOW (self));

  g_variant_get (parameter, "(&sb)", &id, &pinned);
  row = _tally_window_find_row (self, id);
  if (row == NULL)
    return;
  info = tally_session_row_get_info (row);

  if (store == NULL || !tally_store_set_session_pinned (store, info->id, pinned, &error))
    {
      g_autofree char *message = g_strdup_printf (pinned ? _("Could not pin the session: %s")
                                                         : _("Could not unpin the session: %s"),
                                                  store_failure_reason (self, error));

      tally_window_add_toast (self, message);
      return;
    }

  /* Move the row at once; the refresh confirms it from the store. */
  info->pinned = pinned;
  tally_session_row_set_info (row, info);
  gtk_list_box_invalidate_sort (self->session_list);
  gtk_list_box_invalidate_headers (self->session_list);
  _tally_window_refresh_sessions (self);
}

/**
 * _tally_window_export_saved_session_activate:
 * @self: a #TallyWindow
 * @parameter: `s`: the session's id
 *
 * `win.export-saved-session`, which a sidebar row's Export activates:
 * asks where to write the session (_tally_window_export_session()).
 */
void
_tally_window_export_saved_session_activate (TallyWindow *self,
                                             GVariant    *parameter)
{
  TallySessionRow *row = _tally_window_find_row (self, g_variant_get_string (parameter, NULL));

  g_assert (TALLY_IS_WINDOW (self));

  if (row != NULL)
    _tally_window_export_session (self, tally_session_row_get_id (row), tally_session_row_get_title (row));
}

static void
delete_toast_dismissed_cb (TallyWindow *self,
                           AdwToast    *toast)
{
  const char *id = g_object_get_data (G_OBJECT (toast), "tally-session-id");
  TallyStore *store = tally_application_get_store (self->app);
  g_autoptr(GError) error = NULL;

  g_assert (TALLY_IS_WINDOW (self));

  /* Undone: nothing to do. */
  if (id == NULL || !g_hash_table_remove (self->pending_deletes, id))
    return;

  if (store == NULL || !tally_store_delete_session (store, id, &error))
    {
      g_autofree char *message = g_strdup_printf (_("Could not delete the session: %s"),
                                                  store_failure_reason (self, error));

      tally_window_add_toast (self, message);
      _tally_window_refilter (self);
      return;
    }

  g_hash_table_remove (self->drafts, id);
  if (g_strcmp0 (self->deleted_current, id) == 0)
    g_clear_pointer (&self->deleted_current, g_free);
  _tally_window_refresh_sessions (self);
}

/* Hides @info's row and offers Undo; the store deletes the session only
 * when the toast goes away without it. */
void
_tally_window_delete_with_undo (TallyWindow      *self,
                                TallySessionInfo *info)
{
  g_autofree char *title = NULL;
  g_autofree char *escaped = NULL;
  AdwToast *toast;

  if (g_hash_table_contains (self->pending_deletes, info->id))
    return;

  g_hash_table_insert (self->pending_deletes, g_strdup (info->id), tally_session_info_ref (info));

  if (self->session != NULL && g_str_equal (tally_session_get_id (self->session), info->id))
    {
      g_autofree char *id = g_strdup (info->id);

      tally_window_new_session (self);
      self->deleted_current = g_steal_pointer (&id);
    }
  _tally_window_refilter (self);

  title = g_strdup_printf (_("“%s” deleted"),
                           info->title != NULL && *info->title != '\0' ? info->title : _("Untitled Session"));
  escaped = g_markup_escape_text (title, -1);
  toast = adw_toast_new (escaped);
  adw_toast_set_button_label (toast, _("_Undo"));
  adw_toast_set_action_name (toast, "win.undo-delete");
  adw_toast_set_action_target_value (toast, g_variant_new_string (info->id));
  adw_toast_set_priority (toast, ADW_TOAST_PRIORITY_HIGH);
  g_object_set_data_full (G_OBJECT (toast), "tally-session-id", g_strdup (info->id), g_free);
  g_signal_connect_object (toast, "dismissed", G_CALLBACK (delete_toast_dismissed_cb),
                           self, G_CONNECT_SWAPPED);

  g_free (self->last_toast_title);
  self->last_toast_title = g_steal_pointer (&title);
  g_set_weak_pointer (&self->last_toast, toast);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

/**
 * _tally_window_delete_saved_session_activate:
 * @self: a #TallyWindow
 * @parameter: `s`: the session's id
 *
 * `win.delete-saved-session`, which a sidebar row's Delete activates:
 * deletes the session with undo (_tally_window_delete_with_undo()).
 */
void
_tally_window_delete_saved_session_activate (TallyWindow *self,
                                             GVariant    *parameter)
{
  TallySessionRow *row = _tally_window_find_row (self, g_variant_get_string (parameter, NULL));

  g_assert (TALLY_IS_WINDOW (self));

  if (row != NULL)
    _tally_window_delete_with_undo (self, tally_session_row_get_info (row));
}

/* Carries out deletions whose toasts will never be dismissed. */
void
_tally_window_commit_pending_deletes (TallyWindow *self)
{
  TallyStore *store = tally_application_get_store (self->app);
  g_autofree gpointer *ids = NULL;
  guint n = 0;

  if (self->pending_deletes == NULL)
    return;

  ids = g_hash_table_get_keys_as_array (self->pending_deletes, &n);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;

      if (store != NULL && !tally_store_delete_session (store, ids[i], &error))
        g_warning ("Could not delete session %s: %s", (const char *)ids[i], error->message);
    }
  g_hash_table_remove_all (self->pending_deletes);
}

/**
 * _tally_window_undo_delete:
 * @self: a #TallyWindow
 * @id: the id of a session deleted with undo
 *
 * Takes the deletion back while its toast is up: the row returns, and the
 * session is shown again when it was shown before and the analyst has not
 * started anything else.
 */
void
_tally_window_undo_delete (TallyWindow *self,
                           const char  *id)
{
  gboolean was_current = g_strcmp0 (self->deleted_current, id) == 0;

  if (!g_hash_table_remove (self->pending_deletes, id))
    return;

  _tally_window_refilter (self);

  /* Bring the session back where it was, unless the analyst moved on. */
  if (was_current && self->session == NULL)
    {
      g_autofree char *text = tally_composer_dup_text (self->composer);

      if (text == NULL || *text == '\0')
        tally_window_open_session (self, id);
    }
  g_clear_pointer (&self->deleted_current, g_free);
}

/* The relative dates ("Just now", "14:03", "Yesterday") age; redraw them
 * once a minute. */
static gboolean
refresh_dates_cb (gpointer user_data)
{
  TallyWindow *self = user_data;
  GHashTableIter iter;
  gpointer value;

  g_assert (TALLY_IS_WINDOW (self));

  g_hash_table_iter_init (&iter, self->rows);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    tally_session_row_set_info (value, tally_session_row_get_info (value));
  /* Today becomes Yesterday at midnight. */
  gtk_list_box_invalidate_headers (self->session_list);

  return G_SOURCE_CONTINUE;
}

/**
 * _tally_window_sidebar_class_init:
 * @widget_class: the window's class
 *
 * Binds the sidebar's template callbacks.
 */
void
_tally_window_sidebar_class_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_callback (widget_class, search_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, stop_search_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_activate_cb);
  gtk_widget_class_bind_template_callback (widget_class, session_row_activated_cb);
}

/**
 * _tally_window_sidebar_init:
 * @self: a #TallyWindow
 *
 * Sets the sidebar's filter (title, full-text hits, pending deletions),
 * its order (pinned, then newest) and its date headers.
 */
void
_tally_window_sidebar_init (TallyWindow *self)
{
  gtk_list_box_set_filter_func (self->session_list, session_filter_func, self, NULL);
  gtk_list_box_set_sort_func (self->session_list, session_sort_func, self, NULL);
  gtk_list_box_set_header_func (self->session_list, session_header_func, self, NULL);
  /* Each keystroke searches at once: the titles filter in the same frame
   * and a newer keystroke cancels the older search, so waiting for a pause
   * in typing (GtkSearchEntry waits 150 ms) would only add to the time
   * from a key to its results (issue 15: at most 50 ms). */
  gtk_search_entry_set_search_delay (self->search_entry, SEARCH_DELAY_MS);
  self->dates_timeout = g_timeout_add_seconds (60, refresh_dates_cb, self);
}
