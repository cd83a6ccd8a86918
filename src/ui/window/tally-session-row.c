/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-session-row"

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "tally-application-private.h"
#include "tally-session-rename-popover.h"
#include "tally-session-row.h"

/*
 * One saved session in the sidebar: its title, when it was last used, what
 * it cost, and (while searching) the passage that matched, as plain text.
 * The full title is the row's tooltip, so titles that share a beginning
 * can be told apart. The row menu offers Pin or Unpin, Rename (a popover
 * with an entry), Export and Delete; the row only asks, by activating the
 * window's `win.*-saved-session` actions with its session's id, and the
 * window does the work (issue 14 §8, docs/architecture.md §11.1).
 */

/**
 * TallySessionRow:
 *
 * A #GtkListBoxRow for one saved session in the window's sidebar.
 */
struct _TallySessionRow
{
  GtkListBoxRow     parent_instance;

  TallySessionInfo *info;
  /* The title shown, case-folded, for the sidebar's title filter */
  char             *folded_title;
  /* The row's accessible label, as last given */
  char             *accessible_label;

  GtkLabel         *title_label;
  GtkInscription   *snippet_label;
  GtkLabel         *date_label;
  GtkLabel         *cost_label;
  GtkMenuButton    *menu_button;
  GMenuModel       *row_menu;
  /* Made the first time the session is renamed */
  GtkPopover       *rename_popover;

  /* A snippet waiting to be shown until the row is in the part of the
   * list shown (tally_session_row_set_snippet()), and the handler of the
   * frame clock's layout phase that looks whether it is. */
  char             *pending_snippet;
  GdkFrameClock    *layout_clock;
  gulong            layout_handler;
  /* Last drawn out of sight, without its children (snapshot()) */
  gboolean          culled;
};

G_DEFINE_FINAL_TYPE (TallySessionRow, tally_session_row, GTK_TYPE_LIST_BOX_ROW)

/* The local time zone, looked up once: with TZ unset, GLib 2.74's
 * g_date_time_new_*_local() read the zone from disk at every call (about
 * 20 µs), and the sidebar's day headers ask for thousands of dates each
 * time its search filter changes. */
static GTimeZone *
local_zone (void)
{
  static GTimeZone *zone = NULL;

  if (g_once_init_enter (&zone))
    g_once_init_leave (&zone, g_time_zone_new_local ());
  return zone;
}

/* @time_us in local time, or NULL out of GDateTime's range */
static GDateTime *
local_time (gint64 time_us)
{
  g_autoptr(GDateTime) utc = g_date_time_new_from_unix_utc (time_us / G_USEC_PER_SEC);

  return utc != NULL ? g_date_time_to_timezone (utc, local_zone ()) : NULL;
}

/* Local midnight at the start of @time's day */
static GDateTime *
local_midnight (GDateTime *time)
{
  return g_date_time_new (local_zone (), g_date_time_get_year (time), g_date_time_get_month (time),
                          g_date_time_get_day_of_month (time), 0, 0, 0);
}

/* Whole local calendar days from @time_us to @now_us (0 the same day, 1
 * the day before), or -1 when either time cannot be shown. */
static gint64
days_before (gint64 time_us,
             gint64 now_us)
{
  g_autoptr(GDateTime) when = local_time (time_us);
  g_autoptr(GDateTime) now = local_time (now_us);
  g_autoptr(GDateTime) when_day = NULL;
  g_autoptr(GDateTime) today = NULL;

  if (when == NULL || now == NULL)
    return -1;

  when_day = local_midnight (when);
  today = local_midnight (now);
  /* Rounded: a day with a daylight saving change is 23 or 25 hours. */
  return MAX (0, (g_date_time_difference (today, when_day) + G_TIME_SPAN_HOUR * 12) / G_TIME_SPAN_DAY);
}

/**
 * tally_session_row_format_date:
 * @time_us: a time, µs since the Unix epoch
 * @now_us: the current time, µs since the Unix epoch
 *
 * A short relative date for the sidebar: "Just now", "14:03" (today),
 * "Yesterday", a weekday within the last week, "12 March" within the year,
 * else "12 March 2025". Local time.
 *
 * Returns: (transfer full): the text
 */
char *
tally_session_row_format_date (gint64 time_us,
                               gint64 now_us)
{
  g_autoptr(GDateTime) when = local_time (time_us);
  g_autoptr(GDateTime) now = local_time (now_us);
  gint64 days = days_before (time_us, now_us);

  if (when == NULL || now == NULL || days < 0)
    return g_strdup ("");

  if (now_us >= time_us && now_us - time_us < 60 * G_USEC_PER_SEC)
    return g_strdup (_("Just now"));

  if (days <= 0)
    /* TRANSLATORS: a time of day in the sidebar, see strftime */
    return g_date_time_format (when, _("%H:%M"));
  if (days == 1)
    return g_strdup (_("Yesterday"));
  if (days < 7)
    return g_date_time_format (when, "%A");
  if (g_date_time_get_year (when) == g_date_time_get_year (now))
    /* TRANSLATORS: a date in the sidebar, see strftime */
    return g_date_time_format (when, _("%-d %B"));
  /* TRANSLATORS: a date in the sidebar, see strftime */
  return g_date_time_format (when, _("%-d %B %Y"));
}

/**
 * tally_session_row_get_when:
 * @self: a #TallySessionRow
 *
 * Returns: the time the sidebar sorts and groups the row by: the session's
 *   newest event, else its creation, µs since the Unix epoch
 */
gint64
tally_session_row_get_when (TallySessionRow *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION_ROW (self), 0);
  return self->info->updated_us > 0 ? self->info->updated_us : self->info->created_us;
}

/**
 * tally_session_row_get_group:
 * @self: a #TallySessionRow
 * @now_us: the current time, µs since the Unix epoch
 *
 * Which section of the sidebar the row belongs to: pinned sessions first,
 * then by local calendar day of tally_session_row_get_when().
 *
 * Returns: the group
 */
TallySessionGroup
tally_session_row_get_group (TallySessionRow *self,
                             gint64           now_us)
{
  gint64 days;

  g_return_val_if_fail (TALLY_IS_SESSION_ROW (self), TALLY_SESSION_GROUP_EARLIER);

  if (self->info->pinned)
    return TALLY_SESSION_GROUP_PINNED;
  days = days_before (tally_session_row_get_when (self), now_us);
  if (days == 0)
    return TALLY_SESSION_GROUP_TODAY;
  if (days == 1)
    return TALLY_SESSION_GROUP_YESTERDAY;
  return TALLY_SESSION_GROUP_EARLIER;
}

/**
 * tally_session_group_get_title:
 * @group: a #TallySessionGroup
 *
 * Returns: (transfer none): the section header, translated: "Pinned",
 *   "Today", "Yesterday" or "Earlier"
 */
const char *
tally_session_group_get_title (TallySessionGroup group)
{
  switch (group)
    {
    case TALLY_SESSION_GROUP_PINNED:
      return _("Pinned");
    case TALLY_SESSION_GROUP_TODAY:
      return _("Today");
    case TALLY_SESSION_GROUP_YESTERDAY:
      return _("Yesterday");
    case TALLY_SESSION_GROUP_EARLIER:
    default:
      return _("Earlier");
    }
}

/**
 * tally_session_row_format_cost:
 * @info: a session
 *
 * The session's cost for the sidebar: "$1.24" from a dollar up, "$0.0123"
 * below (four decimals, as tally-cli prints), "Price unknown" when a turn
 * ran on a model without a known price, empty before the first turn, and
 * "No answer yet" when no turn got a token back (a first turn that failed
 * is not listed as a finished "$0.0000" session; opening it offers Retry,
 * issue 14 §7).
 *
 * Returns: (transfer full): the text
 */
char *
tally_session_row_format_cost (const TallySessionInfo *info)
{
  g_return_val_if_fail (info != NULL, NULL);

  if (info->turns <= 0)
    return g_strdup ("");
  if (info->input_tokens == 0 && info->output_tokens == 0 &&
      info->cache_read_tokens == 0 && info->cache_write_tokens == 0)
    return g_strdup (_("No answer yet"));
  if (!tally_session_info_has_cost (info))
    return g_strdup (_("Price unknown"));
  if (info->cost_usd >= 1.0)
    return g_strdup_printf ("$%.2f", info->cost_usd);
  return g_strdup_printf ("$%.4f", info->cost_usd);
}

/* Characters that only format markdown: they become spaces. */
static gboolean
is_markdown_marker (gunichar c)
{
  return c == '*' || c == '#' || c == '|' || c == '`' || c == '~' || c == '>';
}

/**
 * tally_session_row_snippet_to_plain:
 * @snippet: a search excerpt of markdown text, matches between « and »
 *
 * The excerpt as the sidebar shows it: markdown markers (`*`, `#`, `|`,
 * `` ` ``, `~`, `>`, `__`, and table rules such as `---` or `:--:`) become
 * spaces, line breaks too, and runs of white space become one space (none
 * before closing punctuation), so "## Sales\n| store | £ |" reads
 * "Sales store £" and "**York**, Leeds" reads "York, Leeds". Single underscores
 * (column names such as revenue_gbp) and the « » match marks stay.
 *
 * Returns: (transfer full): the plain text, trimmed
 */
char *
tally_session_row_snippet_to_plain (const char *snippet)
{
  GString *out;
  gboolean space = FALSE;

  g_return_val_if_fail (snippet != NULL, NULL);

  out = g_string_new (NULL);
  for (const char *p = snippet; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      gboolean marker = is_markdown_marker (c) || g_unichar_isspace (c);

      if (c == '_' && p[1] == '_')
        {
          marker = TRUE;
          p++;
        }
      else if (c == '-' || c == ':')
        {
          /* A table rule or a horizontal rule: three dashes or more, with
           * the colons of its alignment. */
          const char *q = p;
          guint dashes = 0;

          while (*q == '-' || *q == ':')
            dashes += *q++ == '-';
          if (dashes >= 3)
            {
              marker = TRUE;
              p = q - 1;
            }
        }

      if (marker)
        {
          space = out->len > 0;
          continue;
        }
      /* No space before closing punctuation: "**York**, Leeds" reads
       * "York, Leeds". */
      if (space && g_utf8_strchr (",.;:!?)]»%…", -1, c) == NULL)
        g_string_append_c (out, ' ');
      space = FALSE;
      g_string_append_unichar (out, c);
    }

  return g_string_free (out, FALSE);
}

/* The store marks each match with « and »; show them in bold. */
static char *
snippet_markup (const char *snippet)
{
  g_autofree char *plain = tally_session_row_snippet_to_plain (snippet);
  g_autofree char *escaped = g_markup_escape_text (plain, -1);
  g_autoptr(GString) out = g_string_new (escaped);

  g_string_replace (out, "«", "<b>", 0);
  g_string_replace (out, "»", "</b>", 0);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static const char *
display_title (TallySessionInfo *info)
{
  return info->title != NULL && *info->title != '\0' ? info->title : _("Untitled Session");
}

/* Sets @label's text when it changed: a label given its text again lays
 * itself out again. */
static void
set_label_text (GtkLabel   *label,
                const char *text)
{
  if (g_strcmp0 (gtk_label_get_label (label), text) != 0)
    gtk_label_set_label (label, text);
}

/* The row's tooltip, the whole title. GTK 4.8's
 * gtk_widget_set_tooltip_text() on a visible widget asks the display where
 * the pointer is, even for the text the widget already has: on X11 a
 * round trip to the server, 0.3 to 1 ms each while it is busy. Every
 * refresh of the list (each finished turn, rename, pin or deletion) and
 * the minutely update of the dates gave each of 1,000 rows its tooltip
 * again, most of the refresh's stall in bench-search. So a row given its
 * first tooltip before it is in the list is hidden meanwhile, and a row
 * listed gets one only when its title changed. */
static void
set_tooltip (TallySessionRow *self,
             const char      *text)
{
  GtkWidget *widget = GTK_WIDGET (self);

  if (g_strcmp0 (gtk_widget_get_tooltip_text (widget), text) == 0)
    return;
  if (gtk_widget_get_parent (widget) == NULL && gtk_widget_get_visible (widget))
    {
      gtk_widget_set_visible (widget, FALSE);
      gtk_widget_set_tooltip_text (widget, text);
      gtk_widget_set_visible (widget, TRUE);
    }
  else
    gtk_widget_set_tooltip_text (widget, text);
}

/* Shows the row's info. Only what changed is set again: the list is read
 * again after each turn, rename, pin and deletion, and the dates every
 * minute, and each time every row is given its info. */
static void
update (TallySessionRow *self)
{
  g_autofree char *date = NULL;
  g_autofree char *cost = NULL;
  g_autofree char *accessible = NULL;
  const char *title;
  gint64 when;

  if (self->info == NULL)
    return;

  title = display_title (self->info);
  when = tally_session_row_get_when (self);
  date = tally_session_row_format_date (when, g_get_real_time ());
  cost = tally_session_row_format_cost (self->info);

  if (g_strcmp0 (gtk_label_get_label (self->title_label), title) != 0)
    {
      gtk_label_set_label (self->title_label, title);
      g_free (self->folded_title);
      self->folded_title = g_utf8_casefold (title, -1);
    }
  set_label_text (self->date_label, date);
  set_label_text (self->cost_label, cost);
  gtk_widget_set_visible (GTK_WIDGET (self->cost_label), *cost != '\0');
  /* Long titles are cut; the whole row names the session in full. */
  set_tooltip (self, title);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "row.pin", !self->info->pinned);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "row.unpin", self->info->pinned);

  /* One sentence for a screen reader instead of three labels. */
  if (*cost != '\0')
    accessible = g_strdup_printf (_("%s, %s, %s"), title, date, cost);
  else
    accessible = g_strdup_printf (_("%s, %s"), title, date);
  if (g_strcmp0 (accessible, self->accessible_label) != 0)
    {
      gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                      GTK_ACCESSIBLE_PROPERTY_LABEL, accessible,
                                      -1);
      g_free (self->accessible_label);
      self->accessible_label = g_steal_pointer (&accessible);
    }
}

static void
rename_cb (TallySessionRow *self,
           const char      *name)
{
  g_assert (TALLY_IS_SESSION_ROW (self));

  if (g_strcmp0 (name, self->info->title) != 0)
    gtk_widget_activate_action (GTK_WIDGET (self), "win.rename-saved-session", "(ss)",
                                self->info->id, name);
}

static void
rename_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  g_assert (TALLY_IS_SESSION_ROW (widget));

  tally_session_row_start_rename (TALLY_SESSION_ROW (widget));
}

/* Delete, Export, Pin and Unpin ask the window, with this row's session
 * id (docs/architecture.md §11.1: no signal goes up the tree). */
static void
ask_window_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  const char *id;

  g_assert (TALLY_IS_SESSION_ROW (widget));

  id = tally_session_row_get_id (TALLY_SESSION_ROW (widget));
  if (g_str_equal (action_name, "row.delete"))
    gtk_widget_activate_action (widget, "win.delete-saved-session", "s", id);
  else if (g_str_equal (action_name, "row.export"))
    gtk_widget_activate_action (widget, "win.export-saved-session", "s", id);
  else
    gtk_widget_activate_action (widget, "win.pin-saved-session", "(sb)", id,
                                g_str_equal (action_name, "row.pin"));
}

/* Whether the row lies in the part of the list shown. A row never laid
 * out counts as shown. */
static gboolean
is_in_view (TallySessionRow *self)
{
  GtkWidget *viewport = gtk_widget_get_ancestor (GTK_WIDGET (self), GTK_TYPE_VIEWPORT);
  graphene_rect_t bounds;
  int height;

  if (viewport == NULL || !gtk_widget_compute_bounds (GTK_WIDGET (self), viewport, &bounds))
    return TRUE;
  height = gtk_widget_get_height (viewport);
  return bounds.origin.y + bounds.size.height >= 0 && bounds.origin.y <= height;
}

static void
stop_watching_layout (TallySessionRow *self)
{
  /* A clock already gone took its handlers with it. */
  if (self->layout_clock != NULL)
    g_clear_signal_handler (&self->layout_handler, self->layout_clock);
  self->layout_handler = 0;
  g_clear_weak_pointer (&self->layout_clock);
}

static void layout_cb (TallySessionRow *self);

/* Watches the frame clock's layout phase while the row waits to come
 * into sight: a snippet to put in, or children it did not draw. */
static void
update_layout_watch (TallySessionRow *self)
{
  GdkFrameClock *clock;

  if (self->pending_snippet == NULL && !self->culled)
    {
      stop_watching_layout (self);
      return;
    }

  clock = gtk_widget_get_frame_clock (GTK_WIDGET (self));
  if (clock == NULL || self->layout_clock == clock)
    return;
  stop_watching_layout (self);
  g_set_weak_pointer (&self->layout_clock, clock);
  self->layout_handler = g_signal_connect_object (clock, "layout", G_CALLBACK (layout_cb),
                                                  self, G_CONNECT_SWAPPED);
}

/* Puts the pending snippet into the row's inscription. */
static void
show_pending_snippet (TallySessionRow *self)
{
  g_autofree char *markup = NULL;

  if (self->pending_snippet != NULL)
    {
      markup = snippet_markup (self->pending_snippet);
      g_clear_pointer (&self->pending_snippet, g_free);
      gtk_inscription_set_markup (self->snippet_label, markup);
    }
  update_layout_watch (self);
}

/* The frame clock's layout phase, after the window's own layout: the rows
 * have their places for this frame, and what is done now (a snippet put
 * into the inscription, a row queued for drawing) is painted in the same
 * frame. */
static void
layout_cb (TallySessionRow *self)
{
  g_assert (TALLY_IS_SESSION_ROW (self));

  if (!gtk_widget_get_mapped (GTK_WIDGET (self)) || !is_in_view (self))
    return;
  if (self->culled)
    {
      self->culled = FALSE;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  show_pending_snippet (self);
}

/* GTK 4.8's list box draws every row it shows, in sight or scrolled away,
 * and the cairo renderer walks all their text at every frame the window
 * paints, even one that only redraws the search entry: 1,000 rows of
 * three or four labels each took most of the paint. A row out of sight
 * draws only its own background; the first layout that brings it into
 * sight (a scroll, rows above it hidden, a taller window) has it drawn
 * again in the same frame. */
static void
tally_session_row_snapshot (GtkWidget   *widget,
                            GtkSnapshot *snapshot)
{
  TallySessionRow *self = TALLY_SESSION_ROW (widget);

  self->culled = !is_in_view (self);
  update_layout_watch (self);
  if (!self->culled)
    GTK_WIDGET_CLASS (tally_session_row_parent_class)->snapshot (widget, snapshot);
}

static void
tally_session_row_realize (GtkWidget *widget)
{
  GTK_WIDGET_CLASS (tally_session_row_parent_class)->realize (widget);

  update_layout_watch (TALLY_SESSION_ROW (widget));
}

static void
tally_session_row_unrealize (GtkWidget *widget)
{
  stop_watching_layout (TALLY_SESSION_ROW (widget));

  GTK_WIDGET_CLASS (tally_session_row_parent_class)->unrealize (widget);
}

/* A hidden row is drawn again when shown, and decides then. */
static void
tally_session_row_unmap (GtkWidget *widget)
{
  TallySessionRow *self = TALLY_SESSION_ROW (widget);

  GTK_WIDGET_CLASS (tally_session_row_parent_class)->unmap (widget);

  self->culled = FALSE;
  update_layout_watch (self);
}

static void
tally_session_row_size_allocate (GtkWidget *widget,
                                 int        width,
                                 int        height,
                                 int        baseline)
{
  TallySessionRow *self = TALLY_SESSION_ROW (widget);

  GTK_WIDGET_CLASS (tally_session_row_parent_class)->size_allocate (widget, width, height, baseline);

  /* A popover parented by hand is positioned by its parent. */
  if (self->rename_popover != NULL)
    gtk_popover_present (self->rename_popover);
}

static void
tally_session_row_dispose (GObject *object)
{
  TallySessionRow *self = (TallySessionRow *)object;

  stop_watching_layout (self);

  if (self->rename_popover != NULL)
    gtk_widget_unparent (GTK_WIDGET (self->rename_popover));
  self->rename_popover = NULL;
  gtk_widget_dispose_template (GTK_WIDGET (self), TALLY_TYPE_SESSION_ROW);

  G_OBJECT_CLASS (tally_session_row_parent_class)->dispose (object);
}

static void
tally_session_row_finalize (GObject *object)
{
  TallySessionRow *self = (TallySessionRow *)object;

  g_clear_pointer (&self->info, tally_session_info_unref);
  g_clear_pointer (&self->folded_title, g_free);
  g_clear_pointer (&self->accessible_label, g_free);
  g_clear_pointer (&self->pending_snippet, g_free);

  G_OBJECT_CLASS (tally_session_row_parent_class)->finalize (object);
}

static void
tally_session_row_class_init (TallySessionRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_session_row_dispose;
  object_class->finalize = tally_session_row_finalize;
  widget_class->size_allocate = tally_session_row_size_allocate;
  widget_class->realize = tally_session_row_realize;
  widget_class->unrealize = tally_session_row_unrealize;
  widget_class->unmap = tally_session_row_unmap;
  widget_class->snapshot = tally_session_row_snapshot;

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/tallyapp/Tally/window/tally-session-row.ui");
  gtk_widget_class_bind_template_child (widget_class, TallySessionRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, TallySessionRow, snippet_label);
  gtk_widget_class_bind_template_child (widget_class, TallySessionRow, date_label);
  gtk_widget_class_bind_template_child (widget_class, TallySessionRow, cost_label);
  gtk_widget_class_bind_template_child (widget_class, TallySessionRow, menu_button);
  gtk_widget_class_bind_template_child (widget_class, TallySessionRow, row_menu);

  gtk_widget_class_install_action (widget_class, "row.rename", NULL, rename_action);
  gtk_widget_class_install_action (widget_class, "row.delete", NULL, ask_window_action);
  gtk_widget_class_install_action (widget_class, "row.pin", NULL, ask_window_action);
  gtk_widget_class_install_action (widget_class, "row.unpin", NULL, ask_window_action);
  gtk_widget_class_install_action (widget_class, "row.export", NULL, ask_window_action);

  /* Keeps the CSS name "row" so the sidebar's navigation-sidebar style
   * (hover, selection, spacing) applies; styled by its class instead. */
}

/* The row menu's popover is made the first time it opens, not with
 * every row: GtkMenuButton builds a GtkPopoverMenu with all its items as
 * soon as it is given a model, which was about a third of making a row
 * (1,000 of them when the sidebar first lists the saved sessions). GTK
 * calls this at every opening; the model is given once. */
static void
create_row_menu_cb (GtkMenuButton *button,
                    gpointer       user_data)
{
  TallySessionRow *self = user_data;

  g_assert (TALLY_IS_SESSION_ROW (self));

  if (gtk_menu_button_get_menu_model (button) == NULL)
    gtk_menu_button_set_menu_model (button, self->row_menu);
}

static void
tally_session_row_init (TallySessionRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_widget_add_css_class (GTK_WIDGET (self), "session-row");
  /* The template set its tooltip while it was hidden. */
  gtk_widget_set_visible (GTK_WIDGET (self->menu_button), TRUE);
  gtk_menu_button_set_create_popup_func (self->menu_button, create_row_menu_cb, self, NULL);
}

/**
 * tally_session_row_new:
 * @info: the session to show
 *
 * Returns: (transfer floating): a new row
 */
GtkWidget *
tally_session_row_new (TallySessionInfo *info)
{
  TallySessionRow *self;

  g_return_val_if_fail (info != NULL, NULL);

  self = g_object_new (TALLY_TYPE_SESSION_ROW, NULL);
  tally_session_row_set_info (self, info);
  return GTK_WIDGET (self);
}

/**
 * tally_session_row_get_info:
 * @self: a #TallySessionRow
 *
 * Returns: (transfer none): the session shown
 */
TallySessionInfo *
tally_session_row_get_info (TallySessionRow *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION_ROW (self), NULL);
  return self->info;
}

/**
 * tally_session_row_set_info:
 * @self: a #TallySessionRow
 * @info: the session to show (a new reference is taken)
 *
 * Shows @info: its title, relative date and cost.
 */
void
tally_session_row_set_info (TallySessionRow  *self,
                            TallySessionInfo *info)
{
  g_return_if_fail (TALLY_IS_SESSION_ROW (self));
  g_return_if_fail (info != NULL);

  tally_session_info_ref (info);
  g_clear_pointer (&self->info, tally_session_info_unref);
  self->info = info;
  update (self);
}

/**
 * tally_session_row_get_id:
 * @self: a #TallySessionRow
 *
 * Returns: (transfer none): the session id
 */
const char *
tally_session_row_get_id (TallySessionRow *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION_ROW (self), NULL);
  return self->info->id;
}

/**
 * tally_session_row_get_title:
 * @self: a #TallySessionRow
 *
 * Returns: (transfer none): the title shown ("Untitled Session" when the
 *   session has none)
 */
const char *
tally_session_row_get_title (TallySessionRow *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION_ROW (self), NULL);
  return display_title (self->info);
}

/**
 * tally_session_row_get_folded_title:
 * @self: a #TallySessionRow
 *
 * The title shown, case-folded with g_utf8_casefold(), as the sidebar's
 * title filter compares it: made once per title, since the filter asks
 * for every row's at every keystroke.
 *
 * Returns: (transfer none): the folded title, valid until the row's info
 *   changes
 */
const char *
tally_session_row_get_folded_title (TallySessionRow *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION_ROW (self), NULL);
  return self->folded_title;
}

/**
 * tally_session_row_set_snippet:
 * @self: a #TallySessionRow
 * @snippet: (nullable): a search excerpt with matches between « and », or
 *   %NULL to hide it
 *
 * Shows where a full-text search matched the session.
 *
 * The row takes the snippet's line at once (its inscription's height does
 * not depend on the text), but the text itself is put in only once the
 * row is in the part of the list shown, in the layout of the frame that
 * first shows it: a search brings up to 100 snippets at once, and GTK 4.8
 * draws every row of a list box, shown or scrolled away, so shaping all
 * of them took most of the paint after the answer (about 10 ms over the
 * bench's 1,000 sessions).
 */
void
tally_session_row_set_snippet (TallySessionRow *self,
                               const char      *snippet)
{
  g_return_if_fail (TALLY_IS_SESSION_ROW (self));

  if (snippet == NULL || *snippet == '\0')
    {
      g_clear_pointer (&self->pending_snippet, g_free);
      update_layout_watch (self);
      gtk_widget_set_visible (GTK_WIDGET (self->snippet_label), FALSE);
      return;
    }

  g_free (self->pending_snippet);
  self->pending_snippet = g_strdup (snippet);
  gtk_widget_set_visible (GTK_WIDGET (self->snippet_label), TRUE);
  /* A row not realized has drawn nothing yet: nothing to spare. */
  if (is_in_view (self) || gtk_widget_get_frame_clock (GTK_WIDGET (self)) == NULL)
    show_pending_snippet (self);
  else
    {
      /* Until then an older snippet must not show in its place. */
      gtk_inscription_set_text (self->snippet_label, NULL);
      update_layout_watch (self);
    }
}

/**
 * tally_session_row_start_rename:
 * @self: a #TallySessionRow
 *
 * Opens the rename popover with the current title selected.
 */
void
tally_session_row_start_rename (TallySessionRow *self)
{
  g_return_if_fail (TALLY_IS_SESSION_ROW (self));

  /* Made the first time, not with every row (a popover, an entry and a
   * button were about a fifth of making a row; docs/architecture.md
   * §2.2), and kept. */
  if (self->rename_popover == NULL)
    {
      self->rename_popover = GTK_POPOVER (tally_session_rename_popover_new ());
      gtk_widget_set_parent (GTK_WIDGET (self->rename_popover), GTK_WIDGET (self));
      g_signal_connect_object (self->rename_popover, "rename", G_CALLBACK (rename_cb),
                               self, G_CONNECT_SWAPPED);
    }
  tally_session_rename_popover_start (TALLY_SESSION_RENAME_POPOVER (self->rename_popover),
                                      self->info->title != NULL ? self->info->title : "");
}
