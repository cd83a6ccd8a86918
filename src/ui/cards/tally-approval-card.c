/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-cards"

#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <gtksourceview/gtksource.h>
#include <string.h>

#include "tally-approval-card-private.h"
#include "tally-approval-card-text.h"
#include "tally-agent.h"
#include "tally-card-diff.h"
#include "tally-centring-layout.h"
#include "tally-cards-common.h"
#include "tally-format.h"
#include "tally-chip-layout.h"
#include "tally-json.h"
#include "tally-markdown-view.h"
#include "tally-source-style.h"
#include "tally-tool-registry.h"

/**
 * TallyApprovalCard:
 *
 * The card of a tool call that waits for the analyst (a %TALLY_BLOCK_APPROVAL
 * block; docs/architecture.md §6), in the analyst's words: "Allow Tally to
 * create report.md?", "…to change report.md?", "…to run this query?". The
 * card asks the tool what the call would do (tally_tool_dup_preview(), off
 * the main thread since it reads the workspace) and shows it: a new file as
 * its content (Markdown rendered read-only, other text in a monospace
 * view), a change to a file as a line diff with line numbers, added lines
 * green and removed lines red, the command or query in monospace, and a
 * warning when a path lies outside the workspace.
 *
 * Its buttons are named for assistive technology exactly "Allow once",
 * "Allow with changes", "Always allow" and "Deny"; "Deny and stop" sits in
 * the menu next to Deny. The three that need more than a click open an
 * inline panel first: an editor holding the content (the file's new text,
 * the command, the query; the tool turns the edit back into its input with
 * tally_tool_dup_edited_input()), or the input as JSON for a tool with no
 * content to edit (the edit must be a JSON object, or an error says why and
 * the editor stays open); the rule an "always" keeps, in words ("Always
 * allow changes to files under reports/") with the exact rule and scope
 * below it and a drop-down when the gate suggested several, the most
 * specific selected and never a catch-all such as `Edit(**)`; and an
 * optional message for the model that is sent verbatim. Escape closes a
 * panel.
 *
 * While it waits, a request with a `timeout_s` counts down ("Denies in
 * 1:45") to the moment the gate denies it (docs/architecture.md §6.4), and
 * when the window is not the active one the card sends a desktop
 * notification (withdrawn once it is decided).
 *
 * The card reports the decision by activating `session.approve` (the
 * approval id, the #TallyDecision and what goes with it; docs/architecture.md
 * §3.2) and stops offering buttons; the transcript settles it when the agent emits
 * `approval_resolved`. A settled card (live or replayed from the store)
 * shows the decision, the rule or the message, and no buttons.
 */

struct _TallyApprovalCard
{
  TallyBlockWidget parent_instance;

  /* Template */
  GtkWidget         *content;
  GtkLabel          *title_label;
  GtkLabel          *countdown_label;
  GtkLabel          *state_label;
  GtkLabel          *subject_label;
  GtkLabel          *summary_label;
  GtkWidget         *content_box;
  GtkScrolledWindow *diff_scroller;
  GtkTextView       *diff_view;
  GtkLabel          *diff_note;
  GtkWidget         *warning_box;
  GtkLabel          *detail_label;
  GtkWidget         *edit_panel;
  GtkLabel          *edit_hint;
  GtkSourceView     *edit_view;
  GtkLabel          *edit_error;
  GtkWidget         *always_panel;
  GtkDropDown       *rule_dropdown;
  GtkButton         *always_confirm_button;
  GtkLabel          *rule_text_label;
  GtkLabel          *rule_label;
  GtkLabel          *scope_label;
  GtkWidget         *deny_panel;
  GtkEntry          *deny_entry;
  GtkWidget         *actions;
  GtkButton         *allow_button;
  GtkButton         *edit_button;
  GtkButton         *always_button;
  GtkButton         *deny_button;

  /* State */
  JsonObject        *shown;           /* the details the request was read from */
  JsonArray         *suggestions;     /* the request's suggestions, or NULL */
  TallyToolPreview  *preview;         /* what the call would do, best known */
  gboolean           preview_read;    /* @preview came from the workspace */
  gboolean           editing_content; /* the editor holds the content, not JSON */
  GtkWidget         *content_view;    /* in content_box, or NULL */
  GCancellable      *diff_cancellable;
  TallyBlock        *diff_block;      /* the block whose preview is read */
  gboolean           sent;            /* decided; waiting for the resolution */

  /* Waiting */
  gint64             deadline;        /* real time in µs, 0 for none */
  guint              tick_id;
  GtkWindow         *window;          /* the root watched for is-active */
  char              *notified;        /* the notification's id, once sent */
};

G_DEFINE_FINAL_TYPE (TallyApprovalCard, tally_approval_card, TALLY_TYPE_BLOCK_WIDGET)

#define MAX_DIFF_LINES 60
#define DIFF_CONTEXT 3
#define MAX_COMPARED_LINES 100000

static gint64 (*clock_now) (void) = g_get_real_time;

static void default_notify (GtkWidget     *card,
                            const char    *id,
                            GNotification *notification,
                            const char    *title,
                            const char    *body);

static TallyApprovalNotifyFunc notify_func = default_notify;


static void sync_card (TallyApprovalCard *self);

/* The request */

static JsonObject *
request_input (TallyApprovalCard *self)
{
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);

  return block != NULL ? tally_json_object_get_object (tally_block_get_details (block), "tool_input") : NULL;
}

static const char *
request_tool_name (TallyApprovalCard *self)
{
  const char *name = TALLY_BLOCK_WIDGET_BLOCK (self) != NULL ? tally_cards_details_string (TALLY_BLOCK_WIDGET_BLOCK (self), "tool_name") : NULL;

  if (name == NULL && TALLY_BLOCK_WIDGET_BLOCK (self) != NULL)
    name = tally_block_get_tool_name (TALLY_BLOCK_WIDGET_BLOCK (self));
  return name != NULL ? name : "";
}

static char *
object_to_json (JsonObject *object,
                gboolean    pretty)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  if (object != NULL)
    json_node_set_object (node, object);
  else
    json_node_take_object (node, json_object_new ());
  return json_to_string (node, pretty);
}

/* The preview: what the call would do */

/* The tools, asked for their preview (tally_tool_dup_preview()); they are
 * stateless, so one registry serves every card. */
static TallyTool *
lookup_tool (const char *name)
{
  static TallyToolRegistry *tools;

  if (tools == NULL)
    tools = tally_tool_registry_new_default ();
  return tally_tool_registry_lookup (tools, name);
}

/* What the worker thread needs, its own copy: the input travels as text,
 * so no JSON object is shared between threads. */
typedef struct {
  TallyTool *tool;
  char *workspace;
  char *input;
} DiffJob;

static void
diff_job_free (DiffJob *job)
{
  g_clear_object (&job->tool);
  g_free (job->workspace);
  g_free (job->input);
  g_free (job);
}

static void
diff_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  DiffJob *job = task_data;
  TallyToolContext context = { NULL, job->workspace, FALSE, NULL };
  g_autoptr(JsonNode) input = json_from_string (job->input, NULL);
  GError *error = NULL;
  TallyToolPreview *preview;

  if (input == NULL || !JSON_NODE_HOLDS_OBJECT (input))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the input is not a JSON object");
      return;
    }

  preview = tally_tool_dup_preview (job->tool, &context, json_node_get_object (input), &error);

  if (preview == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, preview, (GDestroyNotify) tally_tool_preview_free);
}

static gboolean
is_markdown_path (const char *path)
{
  g_autofree char *lower = path != NULL ? g_ascii_strdown (path, -1) : NULL;

  return lower != NULL && (g_str_has_suffix (lower, ".md") || g_str_has_suffix (lower, ".markdown"));
}

/* The first MAX_DIFF_LINES lines of @text; sets @more to how many are
 * left out. The card does not scroll inside the transcript. */
static char *
head_lines (const char *text,
            guint      *more)
{
  const char *p = text;
  guint lines = 0;

  *more = 0;
  while (*p != '\0' && lines < MAX_DIFF_LINES)
    {
      const char *end = strchr (p, '\n');

      p = end != NULL ? end + 1 : p + strlen (p);
      lines++;
    }
  for (const char *q = p; *q != '\0'; q++)
    if (*q == '\n' || q[1] == '\0')
      (*more)++;
  return g_strndup (text, p - text);
}

static GtkSourceLanguage *
language_for (const TallyToolPreview *preview)
{
  GtkSourceLanguageManager *languages = gtk_source_language_manager_get_default ();

  switch (preview->kind)
    {
    case TALLY_TOOL_PREVIEW_COMMAND:
      return gtk_source_language_manager_get_language (languages, "sh");
    case TALLY_TOOL_PREVIEW_QUERY:
      return gtk_source_language_manager_get_language (languages, "sql");
    case TALLY_TOOL_PREVIEW_WRITE_FILE:
    case TALLY_TOOL_PREVIEW_CREATE_FILE:
    case TALLY_TOOL_PREVIEW_CHANGE_FILE:
    case TALLY_TOOL_PREVIEW_READ:
      return preview->subject != NULL
        ? gtk_source_language_manager_guess_language (languages, preview->subject, NULL)
        : NULL;
    case TALLY_TOOL_PREVIEW_INPUT:
    default:
      return gtk_source_language_manager_get_language (languages, "json");
    }
}

static void
clear_content (TallyApprovalCard *self)
{
  if (self->content_view != NULL)
    {
      gtk_box_remove (GTK_BOX (self->content_box), self->content_view);
      self->content_view = NULL;
    }
  gtk_widget_set_visible (self->content_box, FALSE);
}

/* A new file as its content: Markdown rendered, other text in monospace. */
static void
show_new_file (TallyApprovalCard      *self,
               const TallyToolPreview *preview)
{
  guint more = 0;
  g_autofree char *raw = head_lines (preview->new_text != NULL ? preview->new_text : "", &more);
  /* The content as it is: a bidirectional control in a script must not
   * make it read as another (tally_format_shown_as_is()). */
  g_autofree char *head = tally_format_shown_as_is (raw);

  clear_content (self);
  if (is_markdown_path (preview->subject))
    {
      self->content_view = tally_markdown_view_new ();
      tally_markdown_view_set_markdown (TALLY_MARKDOWN_VIEW (self->content_view), head);
      tally_markdown_view_finish (TALLY_MARKDOWN_VIEW (self->content_view));
    }
  else
    {
      GtkSourceBuffer *buffer = gtk_source_buffer_new (NULL);

      /* A file whose type is not known has no highlighting. */
      gtk_source_buffer_set_language (buffer, language_for (preview));

      gtk_text_buffer_set_text (GTK_TEXT_BUFFER (buffer), head, -1);
      tally_source_style_follow (buffer);
      self->content_view = gtk_source_view_new_with_buffer (buffer);
      g_object_unref (buffer);
      g_object_set (self->content_view,
                    "editable", FALSE, "cursor-visible", FALSE, "monospace", TRUE,
                    "wrap-mode", GTK_WRAP_WORD_CHAR,
                    "top-margin", 6, "bottom-margin", 6, "left-margin", 8, "right-margin", 8,
                    NULL);
    }
  gtk_widget_add_css_class (self->content_view, "card-content-view");
  gtk_box_append (GTK_BOX (self->content_box), self->content_view);
  gtk_widget_set_visible (self->content_box, TRUE);

  if (more > 0)
    {
      g_autofree char *note = g_strdup_printf (ngettext ("⋯ %u more line", "⋯ %u more lines", more), more);
      gtk_label_set_text (self->diff_note, note);
      gtk_widget_set_visible (GTK_WIDGET (self->diff_note), TRUE);
    }
}

static guint
count_lines (const char *text)
{
  guint n = 0;

  for (const char *p = text; p != NULL && *p != '\0'; p++)
    n += *p == '\n';
  return n;
}

static void
show_change (TallyApprovalCard      *self,
             const TallyToolPreview *preview)
{
  g_autofree char *note = NULL;
  g_autofree char *old_shown = NULL;
  g_autofree char *new_shown = NULL;
  guint added = 0, removed = 0;

  if (g_strcmp0 (preview->old_text, preview->new_text) == 0)
    {
      gtk_label_set_text (self->diff_note, _("The file would stay as it is."));
      gtk_widget_set_visible (GTK_WIDGET (self->diff_note), TRUE);
      return;
    }

  /* The comparison runs here, on the main thread: about 70 ms for two
   * different texts of 50,000 lines each, so longer files are not
   * compared on the card. */
  if (count_lines (preview->old_text) + count_lines (preview->new_text) > MAX_COMPARED_LINES)
    {
      gtk_label_set_text (self->diff_note, _("The file is too long to show its changes here."));
      gtk_widget_set_visible (GTK_WIDGET (self->diff_note), TRUE);
      return;
    }

  /* Both sides as they are (tally_format_shown_as_is()). */
  old_shown = preview->old_text != NULL ? tally_format_shown_as_is (preview->old_text) : NULL;
  new_shown = preview->new_text != NULL ? tally_format_shown_as_is (preview->new_text) : NULL;
  tally_card_diff_show (self->diff_view, old_shown, new_shown,
                        TALLY_CARD_DIFF_LINE_NUMBERS, DIFF_CONTEXT, MAX_DIFF_LINES, &added, &removed);
  gtk_widget_set_visible (GTK_WIDGET (self->diff_scroller), TRUE);

  note = tally_card_diff_dup_counts (added, removed);
  gtk_label_set_text (self->diff_note, note);
  gtk_widget_set_visible (GTK_WIDGET (self->diff_note), TRUE);
}

/* Shows what the call would do below the title; nothing when settled. */
static void
show_preview (TallyApprovalCard *self,
              const char        *error_note)
{
  clear_content (self);
  gtk_widget_set_visible (GTK_WIDGET (self->diff_scroller), FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->diff_note), FALSE);

  if (error_note != NULL)
    {
      gtk_label_set_text (self->diff_note, error_note);
      gtk_widget_set_visible (GTK_WIDGET (self->diff_note), TRUE);
      return;
    }
  if (self->preview == NULL || !self->preview_read)
    return;

  if (self->preview->kind == TALLY_TOOL_PREVIEW_CREATE_FILE)
    show_new_file (self, self->preview);
  else if (self->preview->kind == TALLY_TOOL_PREVIEW_CHANGE_FILE && self->preview->new_text != NULL)
    show_change (self, self->preview);
}

static void sync_request (TallyApprovalCard *self);

static void
diff_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(TallyApprovalCard) self = user_data;
  g_autoptr(GError) error = NULL;
  TallyToolPreview *preview = g_task_propagate_pointer (G_TASK (result), &error);

  g_assert (TALLY_IS_APPROVAL_CARD (self));
  g_assert (G_IS_TASK (result));

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      g_task_get_cancellable (G_TASK (result)) != self->diff_cancellable)
    {
      tally_tool_preview_free (preview);
      return;
    }

  if (preview == NULL)
    {
      g_autofree char *note = g_strdup_printf (_("No preview of the changes: %s"), error->message);
      show_preview (self, note);
      return;
    }

  g_clear_pointer (&self->preview, tally_tool_preview_free);
  self->preview = preview;
  self->preview_read = TRUE;
  sync_request (self);
  show_preview (self, NULL);
}

/* Starts reading the preview of a pending call, once the workspace is
 * known. */
static void
start_diff (TallyApprovalCard *self)
{
  TallyTool *tool = lookup_tool (request_tool_name (self));
  const char *workspace = tally_block_widget_get_workspace (TALLY_BLOCK_WIDGET (self));
  g_autoptr(GTask) task = NULL;
  DiffJob *job;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL || self->diff_block == TALLY_BLOCK_WIDGET_BLOCK (self) ||
      tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)) ||
      tool == NULL || request_input (self) == NULL)
    return;

  if (workspace == NULL)
    return;

  g_cancellable_cancel (self->diff_cancellable);
  g_clear_object (&self->diff_cancellable);
  self->diff_cancellable = g_cancellable_new ();
  self->diff_block = TALLY_BLOCK_WIDGET_BLOCK (self);

  job = g_new0 (DiffJob, 1);
  job->tool = g_object_ref (tool);
  job->workspace = g_strdup (workspace);
  job->input = object_to_json (request_input (self), FALSE);

  task = g_task_new (NULL, self->diff_cancellable, diff_done_cb, g_object_ref (self));
  g_task_set_source_tag (task, start_diff);
  g_task_set_task_data (task, job, (GDestroyNotify) diff_job_free);
  g_task_run_in_thread (task, diff_thread);
}

static void
clear_diff (TallyApprovalCard *self)
{
  g_cancellable_cancel (self->diff_cancellable);
  g_clear_object (&self->diff_cancellable);
  self->diff_block = NULL;
  clear_content (self);
  gtk_widget_set_visible (GTK_WIDGET (self->diff_scroller), FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->diff_note), FALSE);
}

/* Waiting: the countdown and the notification */

static void
stop_countdown (TallyApprovalCard *self)
{
  g_clear_handle_id (&self->tick_id, g_source_remove);
  self->deadline = 0;
  gtk_widget_set_visible (GTK_WIDGET (self->countdown_label), FALSE);
}

static void
update_countdown (TallyApprovalCard *self)
{
  gint64 left;
  g_autofree char *text = NULL;
  guint seconds;

  if (self->deadline == 0)
    return;

  left = self->deadline - clock_now ();
  seconds = left > 0 ? (guint) ((left + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC) : 0;
  if (seconds == 0)
    text = g_strdup (_("Denying…"));
  else
    /* TRANSLATORS: minutes and seconds until an unanswered card is denied */
    text = g_strdup_printf (_("Denies in %u:%02u"), seconds / 60, seconds % 60);
  gtk_label_set_text (self->countdown_label, text);
  gtk_widget_set_visible (GTK_WIDGET (self->countdown_label), TRUE);
}

static gboolean
tick_cb (gpointer user_data)
{
  TallyApprovalCard *self = user_data;

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  update_countdown (self);
  return G_SOURCE_CONTINUE;
}

/* The gate denies a request with `timeout_s` that many seconds after its
 * event (`ts`); a request without `ts` counts from now. */
static void
start_countdown (TallyApprovalCard *self)
{
  JsonObject *details = tally_block_get_details (TALLY_BLOCK_WIDGET_BLOCK (self));
  gint64 timeout_s = tally_json_object_get_int (details, "timeout_s", 0);
  gint64 ts = tally_json_object_get_int (details, "ts", 0);

  if (self->deadline != 0 || timeout_s <= 0 || timeout_s > G_MAXINT32)
    return;

  self->deadline = (ts > 0 ? ts : clock_now ()) + timeout_s * G_USEC_PER_SEC;
  update_countdown (self);
  if (self->tick_id == 0)
    self->tick_id = g_timeout_add_seconds_full (G_PRIORITY_LOW, 1, tick_cb, self, NULL);
}

static void
default_notify (GtkWidget     *card,
                const char    *id,
                GNotification *notification,
                const char    *title,
                const char    *body)
{
  GApplication *application = g_application_get_default ();

  /* Notifications travel over the session bus; without one (a machine
   * with no desktop session, the UI tests) GLib's backend would fail. */
  if (application == NULL || !g_application_get_is_registered (application) ||
      g_application_get_dbus_connection (application) == NULL)
    return;
  if (notification != NULL)
    g_application_send_notification (application, id, notification);
  else
    g_application_withdraw_notification (application, id);
}

static void
withdraw_notification (TallyApprovalCard *self)
{
  if (self->notified == NULL)
    return;
  notify_func (GTK_WIDGET (self), self->notified, NULL, NULL, NULL);
  g_clear_pointer (&self->notified, g_free);
}

/* A card that waits while its window is in the background says so on the
 * desktop, once. */
static void
maybe_notify (TallyApprovalCard *self)
{
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);
  g_autoptr(GNotification) notification = NULL;
  const char *id, *title, *body;

  if (block == NULL || self->sent || tally_block_get_finished (block) || self->notified != NULL ||
      self->window == NULL || gtk_window_is_active (self->window))
    return;

  id = tally_cards_details_string (block, "approval_id");
  self->notified = g_strconcat ("approval-", id != NULL ? id : "", NULL);
  title = _("Tally is waiting for your approval");
  body = gtk_label_get_text (self->title_label);
  notification = g_notification_new (title);
  g_notification_set_body (notification, body);
  g_notification_set_priority (notification, G_NOTIFICATION_PRIORITY_HIGH);
  notify_func (GTK_WIDGET (self), self->notified, notification, title, body);
}

static void
window_active_cb (TallyApprovalCard *self)
{
  g_assert (TALLY_IS_APPROVAL_CARD (self));

  maybe_notify (self);
}

/* Panels */

static void
show_panel (TallyApprovalCard *self,
            GtkWidget         *panel)
{
  gtk_widget_set_visible (self->edit_panel, panel == self->edit_panel);
  gtk_widget_set_visible (self->always_panel, panel == self->always_panel);
  gtk_widget_set_visible (self->deny_panel, panel == self->deny_panel);
  gtk_widget_set_visible (self->actions, panel == NULL);

  /* Escape closes a panel; without one it is left to the window. */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "card.cancel", panel != NULL);
}

static void
close_panel (TallyApprovalCard *self,
             GtkButton         *focus)
{
  gboolean had_focus = gtk_widget_get_focus_child (GTK_WIDGET (self)) != NULL;

  show_panel (self, NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->edit_error), FALSE);
  if (had_focus && focus != NULL)
    gtk_widget_grab_focus (GTK_WIDGET (focus));
}

/* A rule that allows every call of its tool: a bare wildcard spec such
 * as `Edit(**)`. */
static gboolean
is_catch_all (const char *rule)
{
  const char *open = rule != NULL ? strchr (rule, '(') : NULL;

  if (open == NULL)
    return FALSE;
  for (const char *p = open + 1; *p != ')' && *p != '\0'; p++)
    if (*p != '*' && *p != '/')
      return FALSE;
  return TRUE;
}

static JsonObject *
selected_suggestion (TallyApprovalCard *self)
{
  guint position;

  if (self->suggestions == NULL || json_array_get_length (self->suggestions) == 0)
    return NULL;

  position = gtk_drop_down_get_selected (self->rule_dropdown);
  if (position == GTK_INVALID_LIST_POSITION || position >= json_array_get_length (self->suggestions))
    position = 0;
  return json_array_get_object_element (self->suggestions, position);
}

static void
sync_rule (TallyApprovalCard *self)
{
  JsonObject *suggestion = selected_suggestion (self);
  const char *rule = tally_json_object_get_string (suggestion, "rule", NULL);
  const char *scope = tally_json_object_get_string (suggestion, "scope", NULL);
  const char *label = tally_json_object_get_string (suggestion, "label", NULL);
  /* Rules and their labels name the model's paths: shown as they are
   * (tally_format_shown_as_is()). */
  g_autofree char *shown_label = tally_format_shown_as_is (label != NULL ? label : rule);
  g_autofree char *shown_rule = tally_format_shown_as_is (rule);

  gtk_label_set_text (self->rule_text_label, shown_label);
  gtk_label_set_text (self->rule_label, shown_rule);
  gtk_label_set_text (self->scope_label, _tally_approval_scope_text (scope));
}

/* Deciding */

static void
decide (TallyApprovalCard *self,
        TallyDecision      decision,
        JsonObject        *updated_input,
        const char        *rule,
        const char        *scope,
        const char        *message)
{
  g_autoptr(TallyApprovalCard) hold = g_object_ref (self);
  g_autofree char *input = NULL;
  const char *id;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL || self->sent || tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)))
    return;

  self->sent = TRUE;
  stop_countdown (self);
  withdraw_notification (self);
  show_panel (self, NULL);
  gtk_widget_set_sensitive (self->actions, FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "card.deny-stop", FALSE);

  id = tally_cards_details_string (TALLY_BLOCK_WIDGET_BLOCK (self), "approval_id");
  if (updated_input != NULL)
    input = object_to_json (updated_input, FALSE);
  gtk_widget_activate_action (GTK_WIDGET (self), "session.approve", "(simsmsmsms)",
                              id != NULL ? id : "", (int) decision, input, rule, scope, message);
}

static void
allow_clicked_cb (TallyApprovalCard *self)
{
  g_assert (TALLY_IS_APPROVAL_CARD (self));

  decide (self, TALLY_DECISION_ALLOW, NULL, NULL, NULL, NULL);
}

/* The editor's highlighting follows what it holds; the style scheme is
 * set up the first time it opens: most cards never need it. */
static void
ensure_editor (TallyApprovalCard *self,
               GtkSourceLanguage *language)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->edit_view));

  if (gtk_source_buffer_get_style_scheme (GTK_SOURCE_BUFFER (buffer)) == NULL)
    tally_source_style_follow (GTK_SOURCE_BUFFER (buffer));
  gtk_source_buffer_set_language (GTK_SOURCE_BUFFER (buffer), language);
}

static void
edit_clicked_cb (TallyApprovalCard *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->edit_view));
  GtkSourceLanguageManager *languages = gtk_source_language_manager_get_default ();

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  /* The content when the tool can take it back, else the input as JSON.
   * Content that holds a character a view would not show as itself (a
   * bidirectional control in a command) is edited as JSON too, where it
   * stands as an escape. */
  self->editing_content = self->preview != NULL && self->preview->edits_content && self->preview->new_text != NULL;
  if (self->editing_content)
    {
      g_autofree char *shown = tally_format_shown_as_is (self->preview->new_text);

      self->editing_content = g_str_equal (shown, self->preview->new_text);
    }
  if (self->editing_content)
    {
      ensure_editor (self, language_for (self->preview));
      gtk_label_set_text (self->edit_hint, _tally_approval_edit_hint (self->preview));
      gtk_text_buffer_set_text (buffer, self->preview->new_text, -1);
    }
  else
    {
      g_autofree char *json = object_to_json (request_input (self), TRUE);
      /* Characters a view would not show as themselves as JSON escapes:
       * the same input once parsed (tally_format_json_shown_as_is()). */
      g_autofree char *pretty = tally_format_json_shown_as_is (json);

      ensure_editor (self, gtk_source_language_manager_get_language (languages, "json"));
      gtk_label_set_text (self->edit_hint, _("Edit the input the tool will run with (a JSON object):"));
      gtk_text_buffer_set_text (buffer, pretty, -1);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->edit_error), FALSE);
  show_panel (self, self->edit_panel);
  gtk_widget_grab_focus (GTK_WIDGET (self->edit_view));
}

static void
show_edit_error (TallyApprovalCard *self,
                 const char        *message)
{
  gtk_label_set_text (self->edit_error, message);
  gtk_widget_set_visible (GTK_WIDGET (self->edit_error), TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->edit_view));
}

static void
edit_confirm_cb (TallyApprovalCard *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->edit_view));
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  GtkTextIter start, end;
  JsonNode *root;

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  text = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);

  if (self->editing_content)
    {
      TallyTool *tool = lookup_tool (request_tool_name (self));
      g_autoptr(JsonObject) edited = NULL;

      if (tool != NULL && request_input (self) != NULL)
        edited = tally_tool_dup_edited_input (tool, request_input (self), self->preview, text, &error);
      if (edited == NULL)
        {
          g_autofree char *message = g_strdup_printf (_("These changes cannot be used: %s"),
                                                      error != NULL ? error->message : _("the tool is unknown"));
          show_edit_error (self, message);
          return;
        }
      decide (self, TALLY_DECISION_ALLOW_EDITED, edited, NULL, NULL, NULL);
      return;
    }

  if (!json_parser_load_from_data (parser, text, -1, &error))
    {
      g_autofree char *message = g_strdup_printf (_("This is not valid JSON: %s"), error->message);
      show_edit_error (self, message);
      return;
    }

  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      show_edit_error (self, _("The input must be a JSON object, in braces: { … }"));
      return;
    }

  decide (self, TALLY_DECISION_ALLOW_EDITED, json_node_get_object (root), NULL, NULL, NULL);
}

static void
always_clicked_cb (TallyApprovalCard *self)
{
  g_assert (TALLY_IS_APPROVAL_CARD (self));

  sync_rule (self);
  show_panel (self, self->always_panel);
  if (gtk_widget_get_visible (GTK_WIDGET (self->rule_dropdown)))
    gtk_widget_grab_focus (GTK_WIDGET (self->rule_dropdown));
  else
    gtk_widget_grab_focus (GTK_WIDGET (self->always_confirm_button));
}

static void
always_confirm_cb (TallyApprovalCard *self)
{
  JsonObject *suggestion = selected_suggestion (self);
  const char *rule = NULL;
  const char *scope = NULL;

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  if (suggestion != NULL)
    {
      rule = tally_json_object_get_string (suggestion, "rule", NULL);
      scope = tally_json_object_get_string (suggestion, "scope", NULL);
    }

  decide (self, TALLY_DECISION_ALLOW_ALWAYS, NULL, rule, scope, NULL);
}

static void
deny_clicked_cb (TallyApprovalCard *self)
{
  g_assert (TALLY_IS_APPROVAL_CARD (self));

  show_panel (self, self->deny_panel);
  gtk_widget_grab_focus (GTK_WIDGET (self->deny_entry));
}

static const char *
deny_message (TallyApprovalCard *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->deny_entry));

  return text != NULL && *text != '\0' ? text : NULL;
}

static void
deny_confirm_cb (TallyApprovalCard *self)
{
  g_autofree char *message = g_strdup (deny_message (self));

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  decide (self, TALLY_DECISION_DENY, NULL, NULL, NULL, message);
}

static void
deny_stop_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  TallyApprovalCard *self = TALLY_APPROVAL_CARD (widget);
  g_autofree char *message = NULL;

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  if (gtk_widget_get_visible (self->deny_panel))
    message = g_strdup (deny_message (self));
  decide (self, TALLY_DECISION_DENY_STOP, NULL, NULL, NULL, message);
}

static void
cancel_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  TallyApprovalCard *self = TALLY_APPROVAL_CARD (widget);
  GtkButton *focus = NULL;

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  if (gtk_widget_get_visible (self->edit_panel))
    focus = self->edit_button;
  else if (gtk_widget_get_visible (self->always_panel))
    focus = self->always_button;
  else if (gtk_widget_get_visible (self->deny_panel))
    focus = self->deny_button;
  else
    return;

  close_panel (self, focus);
}

/* Showing the block */

static void
sync_request (TallyApprovalCard *self)
{
  const char *tool_name = request_tool_name (self);
  JsonObject *input = request_input (self);
  JsonObject *details = tally_block_get_details (TALLY_BLOCK_WIDGET_BLOCK (self));
  TallyTool *tool = lookup_tool (tool_name);
  g_autoptr(GtkStringList) labels = gtk_string_list_new (NULL);
  g_autofree char *title = NULL;
  g_autofree char *summary = NULL;
  g_autofree char *base = NULL;
  gboolean outside = FALSE;
  guint selected = 0;
  JsonNode *node;

  /* What the input alone tells, until the workspace is read. */
  if (self->preview == NULL && tool != NULL && input != NULL)
    self->preview = tally_tool_dup_preview (tool, NULL, input, NULL);

  title = _tally_approval_title_markup (self->preview, tool_name);
  gtk_label_set_markup (self->title_label, title);

  /* Files are named in the title; the path below it when it says more.
   * What the model wrote is shown character for character: a
   * bidirectional control must not make a command read as another
   * (tally_format_shown_as_is(), docs/security.md "What the analyst
   * approves"). */
  if (self->preview != NULL && self->preview->subject != NULL)
    {
      g_autofree char *subject = tally_format_shown_as_is (self->preview->subject);

      base = g_path_get_basename (self->preview->subject);
      gtk_label_set_text (self->subject_label, subject);
      gtk_widget_set_visible (GTK_WIDGET (self->subject_label), !g_str_equal (base, self->preview->subject));
      gtk_widget_set_visible (GTK_WIDGET (self->summary_label), FALSE);
    }
  else
    {
      if (self->preview != NULL && self->preview->new_text != NULL &&
          (self->preview->kind == TALLY_TOOL_PREVIEW_COMMAND || self->preview->kind == TALLY_TOOL_PREVIEW_QUERY))
        summary = tally_format_shown_as_is (self->preview->new_text);
      else
        {
          g_autofree char *json = object_to_json (input, FALSE);

          summary = tally_format_shown_as_is (json);
        }
      gtk_label_set_text (self->summary_label, summary);
      gtk_widget_set_visible (GTK_WIDGET (self->subject_label), FALSE);
      gtk_widget_set_visible (GTK_WIDGET (self->summary_label), TRUE);
    }

  if (details != NULL && json_object_has_member (details, "outside_workspace"))
    {
      node = json_object_get_member (details, "outside_workspace");
      outside = JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN &&
                json_node_get_boolean (node);
    }
  gtk_widget_set_visible (self->warning_box, outside);

  g_clear_pointer (&self->suggestions, json_array_unref);
  node = details != NULL ? json_object_get_member (details, "suggestions") : NULL;
  if (node != NULL && JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *all = json_node_get_array (node);

      /* Only well-formed suggestions are offered. */
      self->suggestions = json_array_new ();
      for (guint i = 0; i < json_array_get_length (all); i++)
        {
          JsonNode *item = json_array_get_element (all, i);
          JsonObject *suggestion;
          const char *label;
          g_autofree char *shown = NULL;

          if (!JSON_NODE_HOLDS_OBJECT (item))
            continue;
          suggestion = json_node_get_object (item);
          if (tally_json_object_get_string (suggestion, "rule", NULL) == NULL)
            continue;
          label = tally_json_object_get_string (suggestion, "label",
                                                tally_json_object_get_string (suggestion, "rule", NULL));
          shown = tally_format_shown_as_is (label);
          gtk_string_list_append (labels, shown);
          json_array_add_object_element (self->suggestions, json_object_ref (suggestion));
        }

      /* The most specific rule is selected, never a catch-all when
       * there is anything narrower. */
      for (guint i = json_array_get_length (self->suggestions); i > 0; i--)
        if (!is_catch_all (tally_json_object_get_string (json_array_get_object_element (self->suggestions, i - 1),
                                                         "rule", NULL)))
          selected = i - 1;
    }
  gtk_drop_down_set_model (self->rule_dropdown, G_LIST_MODEL (labels));
  gtk_drop_down_set_selected (self->rule_dropdown, selected);
  gtk_widget_set_visible (GTK_WIDGET (self->rule_dropdown),
                          g_list_model_get_n_items (G_LIST_MODEL (labels)) > 1);
  sync_rule (self);

  /* "Always" keeps one of the gate's suggestions; with none there is no
   * rule to keep. */
  gtk_widget_set_sensitive (GTK_WIDGET (self->always_button),
                            g_list_model_get_n_items (G_LIST_MODEL (labels)) > 0);
}

static void
sync_resolution (TallyApprovalCard *self)
{
  JsonObject *resolution = tally_cards_get_resolution (TALLY_BLOCK_WIDGET_BLOCK (self));
  const char *state = tally_block_get_state (TALLY_BLOCK_WIDGET_BLOCK (self));
  const char *reason = NULL;
  const char *message = NULL;
  const char *rule = NULL;
  g_autofree char *detail = NULL;
  const char *text;
  gboolean stop = FALSE;
  gboolean denied;
  int decision = TALLY_DECISION_ALLOW;

  if (resolution != NULL)
    {
      reason = tally_json_object_get_string (resolution, "reason", NULL);
      message = tally_json_object_get_string (resolution, "message", NULL);
      rule = tally_json_object_get_string (resolution, "rule", NULL);
      stop = tally_json_object_get_bool (resolution, "stop", FALSE);
      state = tally_json_object_get_string (resolution, "decision", state);
    }

  /* The decision's nick (tally_decision_to_string()); anything else reads
   * as allowed once, as the gate settles it. */
  tally_enum_from_nick (TALLY_TYPE_DECISION, state, &decision);
  stop = stop || decision == TALLY_DECISION_DENY_STOP;
  denied = decision == TALLY_DECISION_DENY || decision == TALLY_DECISION_DENY_STOP;
  if (g_strcmp0 (reason, "timeout") == 0)
    text = _("Denied: no answer in time");
  else if (g_strcmp0 (reason, "cancel") == 0)
    text = _("Cancelled");
  else if (g_strcmp0 (reason, "dismissed") == 0)
    text = _("Dismissed");
  else
    text = _tally_approval_decision_text (decision, stop);

  gtk_label_set_text (self->state_label, text);
  gtk_widget_remove_css_class (GTK_WIDGET (self->state_label), "denied");
  gtk_widget_remove_css_class (GTK_WIDGET (self->state_label), "allowed");
  gtk_widget_add_css_class (GTK_WIDGET (self->state_label), denied ? "denied" : "allowed");

  if (decision == TALLY_DECISION_ALLOW_ALWAYS && rule != NULL)
    {
      const char *scope = tally_json_object_get_string (resolution, "scope", NULL);
      g_autofree char *shown = tally_format_shown_as_is (rule);

      detail = g_strdup_printf (_("Rule kept %s: %s"), _tally_approval_scope_text (scope), shown);
    }
  else if (decision == TALLY_DECISION_ALLOW_EDITED &&
           tally_json_object_get_object (resolution, "updated_input") != NULL)
    {
      g_autofree char *json = object_to_json (tally_json_object_get_object (resolution, "updated_input"), FALSE);
      g_autofree char *input = tally_format_shown_as_is (json);

      /* A whole file's content is no detail to read in one line. */
      if (g_utf8_strlen (input, -1) <= 160)
        detail = g_strdup_printf (_("Ran with: %s"), input);
      else
        detail = g_strdup (_("Ran with the changes made on this card"));
    }
  else if (denied && g_strcmp0 (reason, "user") == 0 && message != NULL && *message != '\0')
    detail = g_strdup_printf (_("Told the model: “%s”"), message);

  gtk_label_set_text (self->detail_label, detail != NULL ? detail : "");
  gtk_widget_set_visible (GTK_WIDGET (self->detail_label), detail != NULL);
}

static void
sync_card (TallyApprovalCard *self)
{
  gboolean settled;
  g_autofree char *accessible = NULL;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL)
    return;

  settled = tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "card.deny-stop", !settled && !self->sent);
  gtk_widget_set_visible (GTK_WIDGET (self->state_label), settled);
  gtk_widget_set_visible (self->actions, !settled);
  gtk_widget_set_sensitive (self->actions, !settled && !self->sent);

  if (settled)
    {
      show_panel (self, NULL);
      gtk_widget_set_visible (self->actions, FALSE);
      sync_resolution (self);
      /* Settled, the card looks the same live and replayed: a diff read
       * later would compare with the file as it is after the call, so a
       * settled card shows none. */
      clear_diff (self);
      stop_countdown (self);
      withdraw_notification (self);
    }
  else
    {
      gtk_widget_set_visible (GTK_WIDGET (self->detail_label), FALSE);
      start_diff (self);
      if (!self->sent)
        {
          start_countdown (self);
          maybe_notify (self);
        }
    }

  if (settled)
    accessible = g_strdup_printf (_("Approval for %s: %s"), request_tool_name (self),
                                  gtk_label_get_text (self->state_label));
  else
    accessible = g_strdup_printf (_("Approval for %s, waiting for your decision"), request_tool_name (self));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, accessible, -1);

  if (settled)
    gtk_widget_add_css_class (GTK_WIDGET (self), "settled");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self), "settled");
}

static void
block_changed_cb (TallyApprovalCard *self)
{
  JsonObject *details = tally_block_get_details (TALLY_BLOCK_WIDGET_BLOCK (self));

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  /* The reducer may hand the block over before it fills in its details,
   * and replaces them when the card settles. */
  if (details != self->shown)
    {
      g_clear_pointer (&self->shown, json_object_unref);
      if (details != NULL)
        self->shown = json_object_ref (details);
      sync_request (self);
    }
  sync_card (self);
}

/* The row sets the workspace before the block; a card shown alone may
 * get it later. */
static void
workspace_changed_cb (TallyApprovalCard *self)
{
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  if (block != NULL && !tally_block_get_finished (block))
    {
      self->diff_block = NULL;
      start_diff (self);
    }
}

/* The window the card is in: while a card waits, the window going to the
 * background sends the notification. */
static void
set_window (TallyApprovalCard *self,
            GtkWindow         *window)
{
  if (self->window == window)
    return;
  if (self->window != NULL)
    g_signal_handlers_disconnect_by_func (self->window, window_active_cb, self);
  self->window = window;
  if (window != NULL)
    {
      g_signal_connect_object (window, "notify::is-active", G_CALLBACK (window_active_cb), self, G_CONNECT_SWAPPED);
      maybe_notify (self);
    }
}

static void
tally_approval_card_root (GtkWidget *widget)
{
  GtkRoot *root;

  GTK_WIDGET_CLASS (tally_approval_card_parent_class)->root (widget);

  root = gtk_widget_get_root (widget);
  set_window (TALLY_APPROVAL_CARD (widget), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL);
}

static void
tally_approval_card_unroot (GtkWidget *widget)
{
  set_window (TALLY_APPROVAL_CARD (widget), NULL);

  GTK_WIDGET_CLASS (tally_approval_card_parent_class)->unroot (widget);
}

/* Binding and unbinding both show the current block. */
static void
tally_approval_card_bind (TallyBlockWidget *widget,
                          TallyBlock       *previous)
{
  TallyApprovalCard *self = TALLY_APPROVAL_CARD (widget);
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);   /* NULL when unbinding */

  g_clear_pointer (&self->shown, json_object_unref);
  g_clear_pointer (&self->preview, tally_tool_preview_free);
  self->preview_read = FALSE;
  stop_countdown (self);
  withdraw_notification (self);

  self->sent = FALSE;
  show_panel (self, NULL);
  gtk_editable_set_text (GTK_EDITABLE (self->deny_entry), "");
  gtk_widget_set_visible (GTK_WIDGET (self->edit_error), FALSE);
  clear_diff (self);

  if (block != NULL)
    block_changed_cb (self);
}

static void
tally_approval_card_dispose (GObject *object)
{
  TallyApprovalCard *self = (TallyApprovalCard *)object;

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);
  g_cancellable_cancel (self->diff_cancellable);
  g_clear_object (&self->diff_cancellable);
  stop_countdown (self);
  withdraw_notification (self);
  set_window (self, NULL);
  self->content_view = NULL;

  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_APPROVAL_CARD);

  G_OBJECT_CLASS (tally_approval_card_parent_class)->dispose (object);
}

static void
tally_approval_card_finalize (GObject *object)
{
  TallyApprovalCard *self = (TallyApprovalCard *)object;

  g_clear_pointer (&self->suggestions, json_array_unref);
  g_clear_pointer (&self->shown, json_object_unref);
  g_clear_pointer (&self->preview, tally_tool_preview_free);
  g_free (self->notified);

  G_OBJECT_CLASS (tally_approval_card_parent_class)->finalize (object);
}

static void
tally_approval_card_class_init (TallyApprovalCardClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_approval_card_dispose;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_approval_card_bind;
  object_class->finalize = tally_approval_card_finalize;
  widget_class->root = tally_approval_card_root;
  widget_class->unroot = tally_approval_card_unroot;

  gtk_source_init ();
  g_type_ensure (GTK_SOURCE_TYPE_VIEW);

  gtk_widget_class_install_action (widget_class, "card.deny-stop", NULL, deny_stop_action);
  gtk_widget_class_install_action (widget_class, "card.cancel", NULL, cancel_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "card.cancel", NULL);

  g_type_ensure (TALLY_TYPE_CENTRING_LAYOUT);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/cards/tally-approval-card.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, content);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, title_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, countdown_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, state_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, subject_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, content_box);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, summary_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, diff_scroller);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, diff_view);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, diff_note);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, warning_box);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, detail_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, edit_panel);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, edit_hint);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, edit_view);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, edit_error);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, always_panel);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, rule_dropdown);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, rule_text_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, rule_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, always_confirm_button);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, scope_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, deny_panel);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, deny_entry);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, actions);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, allow_button);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, edit_button);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, always_button);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, deny_button);
  gtk_widget_class_bind_template_callback (widget_class, allow_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, edit_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, edit_confirm_cb);
  gtk_widget_class_bind_template_callback (widget_class, always_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, always_confirm_cb);
  gtk_widget_class_bind_template_callback (widget_class, deny_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, deny_confirm_cb);
  gtk_widget_class_set_css_name (widget_class, "tallyapprovalcard");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
tally_approval_card_init (TallyApprovalCard *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  /* The buttons wrap onto a second line in a narrow window. */
  gtk_widget_set_layout_manager (self->actions, tally_chip_layout_new (6));

  g_signal_connect_object (self->rule_dropdown, "notify::selected",
                           G_CALLBACK (sync_rule), self, G_CONNECT_SWAPPED);

  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::state", G_CALLBACK (block_changed_cb), self);
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::finished", G_CALLBACK (block_changed_cb), self);
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::tool-name", G_CALLBACK (block_changed_cb), self);
  g_signal_connect (self, "notify::workspace", G_CALLBACK (workspace_changed_cb), NULL);
}

/**
 * tally_approval_card_new:
 *
 * Creates an empty approval card; give it a block with
 * tally_block_widget_set_block().
 *
 * Returns: (transfer floating): a new #TallyApprovalCard
 */
GtkWidget *
tally_approval_card_new (void)
{
  return g_object_new (TALLY_TYPE_APPROVAL_CARD, NULL);
}

/**
 * _tally_approval_card_set_clock:
 * @now: (nullable): returns the real time in microseconds; %NULL for
 *   g_get_real_time()
 *
 * Replaces the clock the countdowns read, for the tests.
 */
void
_tally_approval_card_set_clock (gint64 (*now) (void))
{
  clock_now = now != NULL ? now : g_get_real_time;
}

/**
 * _tally_approval_card_tick:
 * @self: a #TallyApprovalCard
 *
 * Updates the countdown now, as its once-a-second timer does.
 */
void
_tally_approval_card_tick (TallyApprovalCard *self)
{
  g_return_if_fail (TALLY_IS_APPROVAL_CARD (self));

  update_countdown (self);
}

/**
 * _tally_approval_card_set_notify_func:
 * @func: (nullable): what sends and withdraws the cards' notifications;
 *   %NULL for the default application's
 *   g_application_send_notification() and
 *   g_application_withdraw_notification()
 *
 * Replaces how the cards notify, for the tests.
 */
void
_tally_approval_card_set_notify_func (TallyApprovalNotifyFunc func)
{
  notify_func = func != NULL ? func : default_notify;
}

/**
 * _tally_approval_card_get_preview:
 * @self: a #TallyApprovalCard
 *
 * Returns: (transfer none) (nullable): what the card knows the call would
 *   do; #TallyToolPreview.old_text is set once the workspace was read
 */
const TallyToolPreview *
_tally_approval_card_get_preview (TallyApprovalCard *self)
{
  g_return_val_if_fail (TALLY_IS_APPROVAL_CARD (self), NULL);

  return self->preview_read ? self->preview : NULL;
}
