/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-cards"

#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <gtksourceview/gtksource.h>
#include <string.h>

#include "tally-approval-card.h"
#include "tally-agent.h"
#include "tally-card-diff.h"
#include "tally-cards-common.h"
#include "tally-chip-layout.h"
#include "tally-json.h"
#include "tally-tool-registry.h"

/**
 * TallyApprovalCard:
 *
 * The card of a tool call that waits for the analyst (a %TALLY_BLOCK_APPROVAL
 * block; docs/architecture.md §6). It names the tool and shows what the call
 * would do: the command of a `Bash` call, the path and a coloured diff of a
 * `Write` or `Edit` (read from the workspace off the main thread), the
 * compact input of anything else, and a warning when a path lies outside
 * the workspace.
 *
 * Its buttons are named for assistive technology exactly "Allow once",
 * "Allow with changes", "Always allow" and "Deny"; "Deny and stop" sits in
 * the menu next to Deny. The three that need more than a click open an
 * inline panel first: an editor pre-filled with the pretty-printed input
 * (the edit must be a JSON object, or an error says why and the editor
 * stays open), the exact rule and scope an "always" keeps (a drop-down
 * when the gate suggested several), and an optional message for the model
 * that is sent verbatim. Escape closes a panel.
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
  GtkLabel          *state_label;
  GtkLabel          *summary_label;
  GtkScrolledWindow *diff_scroller;
  GtkTextView       *diff_view;
  GtkLabel          *diff_note;
  GtkWidget         *warning_box;
  GtkLabel          *detail_label;
  GtkWidget         *edit_panel;
  GtkSourceView     *edit_view;
  GtkLabel          *edit_error;
  GtkWidget         *always_panel;
  GtkDropDown       *rule_dropdown;
  GtkButton         *always_confirm_button;
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
  GCancellable      *diff_cancellable;
  TallyBlock        *diff_block;      /* the block whose diff is shown */
  gboolean           sent;            /* decided; waiting for the resolution */
};

G_DEFINE_FINAL_TYPE (TallyApprovalCard, tally_approval_card, TALLY_TYPE_BLOCK_WIDGET)

#define MAX_DIFF_LINES 60


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

static const char *
scope_text (const char *scope)
{
  if (g_strcmp0 (scope, "session") == 0)
    return _("for this session");
  if (g_strcmp0 (scope, "global") == 0)
    return _("everywhere");
  return _("in this workspace");
}

/* The preview: what the call would change (a diff for Write and Edit) */

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
  TallyToolContext context = { NULL, job->workspace, FALSE };
  g_autoptr(JsonNode) input = json_from_string (job->input, NULL);
  GError *error = NULL;
  char *diff;

  if (input == NULL || !JSON_NODE_HOLDS_OBJECT (input))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the input is not a JSON object");
      return;
    }

  diff = tally_tool_dup_preview (job->tool, &context, json_node_get_object (input), &error);

  if (diff == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, diff, g_free);
}

static void
show_diff (TallyApprovalCard *self,
           const char        *diff,
           const char        *note)
{
  gboolean has_diff = diff != NULL && *diff != '\0';

  if (has_diff)
    {
      g_autoptr(GString) shown = g_string_new (NULL);
      const char *p = diff;
      guint lines = 0;

      /* The card does not scroll inside the transcript: a long diff shows
       * its beginning and says how much more there is. */
      while (*p != '\0' && lines < MAX_DIFF_LINES)
        {
          const char *end = strchr (p, '\n');

          end = end != NULL ? end + 1 : p + strlen (p);
          g_string_append_len (shown, p, end - p);
          p = end;
          lines++;
        }
      if (*p != '\0')
        {
          guint more = 0;

          for (; *p != '\0'; p++)
            if (*p == '\n' || p[1] == '\0')
              more++;
          if (shown->len > 0 && shown->str[shown->len - 1] != '\n')
            g_string_append_c (shown, '\n');
          g_string_append_printf (shown, ngettext ("⋯ %u more line", "⋯ %u more lines", more), more);
        }
      tally_card_diff_show (self->diff_view, shown->str);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->diff_scroller), has_diff);
  gtk_label_set_text (self->diff_note, note != NULL ? note : "");
  gtk_widget_set_visible (GTK_WIDGET (self->diff_note), note != NULL);
}

static void
diff_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(TallyApprovalCard) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *diff = g_task_propagate_pointer (G_TASK (result), &error);

  g_assert (TALLY_IS_APPROVAL_CARD (self));
  g_assert (G_IS_TASK (result));

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      g_task_get_cancellable (G_TASK (result)) != self->diff_cancellable)
    return;

  if (diff == NULL)
    {
      g_autofree char *note = g_strdup_printf (_("No preview of the changes: %s"), error->message);
      show_diff (self, NULL, note);
    }
  else if (*diff == '\0')
    show_diff (self, NULL, _("The file would stay as it is."));
  else
    show_diff (self, diff, NULL);
}

/* Starts computing the preview of a pending call whose tool has one, once
 * the workspace is known. */
static void
start_diff (TallyApprovalCard *self)
{
  TallyTool *tool = lookup_tool (request_tool_name (self));
  const char *workspace = tally_block_widget_get_workspace (TALLY_BLOCK_WIDGET (self));
  g_autoptr(GTask) task = NULL;
  DiffJob *job;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL || self->diff_block == TALLY_BLOCK_WIDGET_BLOCK (self) ||
      tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)) ||
      tool == NULL || !tally_tool_has_preview (tool) ||
      request_input (self) == NULL)
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
  show_diff (self, NULL, NULL);
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
  const char *rule = suggestion != NULL ? json_object_get_string_member_with_default (suggestion, "rule", NULL) : NULL;
  const char *scope = suggestion != NULL ? json_object_get_string_member_with_default (suggestion, "scope", NULL) : NULL;

  gtk_label_set_text (self->rule_label, rule != NULL ? rule : "");
  gtk_label_set_text (self->scope_label, scope_text (scope));
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

static void style_dark_cb (TallyApprovalCard *self);

/* The editor's highlighting is set up the first time it opens: most cards
 * never need it, and loading a language is not free. */
static void
ensure_editor (TallyApprovalCard *self)
{
  GtkSourceLanguageManager *languages;
  GtkSourceLanguage *json;
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->edit_view));

  if (gtk_source_buffer_get_language (GTK_SOURCE_BUFFER (buffer)) != NULL)
    return;

  languages = gtk_source_language_manager_get_default ();
  json = gtk_source_language_manager_get_language (languages, "json");
  if (json == NULL)
    return;
  gtk_source_buffer_set_language (GTK_SOURCE_BUFFER (buffer), json);
  style_dark_cb (self);
  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (style_dark_cb), self, G_CONNECT_SWAPPED);
}

static void
edit_clicked_cb (TallyApprovalCard *self)
{
  g_autofree char *pretty = object_to_json (request_input (self), TRUE);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->edit_view));

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  ensure_editor (self);

  gtk_text_buffer_set_text (buffer, pretty, -1);
  gtk_widget_set_visible (GTK_WIDGET (self->edit_error), FALSE);
  show_panel (self, self->edit_panel);
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

  if (!json_parser_load_from_data (parser, text, -1, &error))
    {
      g_autofree char *message = g_strdup_printf (_("This is not valid JSON: %s"), error->message);
      gtk_label_set_text (self->edit_error, message);
      gtk_widget_set_visible (GTK_WIDGET (self->edit_error), TRUE);
      gtk_widget_grab_focus (GTK_WIDGET (self->edit_view));
      return;
    }

  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      gtk_label_set_text (self->edit_error, _("The input must be a JSON object, in braces: { … }"));
      gtk_widget_set_visible (GTK_WIDGET (self->edit_error), TRUE);
      gtk_widget_grab_focus (GTK_WIDGET (self->edit_view));
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
      rule = json_object_get_string_member_with_default (suggestion, "rule", NULL);
      scope = json_object_get_string_member_with_default (suggestion, "scope", NULL);
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
  g_autoptr(GtkStringList) labels = gtk_string_list_new (NULL);
  g_autofree char *title = NULL;
  g_autofree char *escaped = g_markup_escape_text (tool_name, -1);
  g_autofree char *summary = NULL;
  const char *shown = NULL;
  gboolean outside = FALSE;
  JsonNode *node;

  if (g_str_equal (tool_name, "Bash"))
    title = g_strdup_printf (_("Allow <b>%s</b> to run this command?"), escaped);
  else if (g_str_equal (tool_name, "Write"))
    title = g_strdup_printf (_("Allow <b>%s</b> to create or replace this file?"), escaped);
  else if (g_str_equal (tool_name, "Edit"))
    title = g_strdup_printf (_("Allow <b>%s</b> to change this file?"), escaped);
  else
    title = g_strdup_printf (_("Allow <b>%s</b> to run?"), escaped);
  gtk_label_set_markup (self->title_label, title);

  if (g_str_equal (tool_name, "Bash"))
    shown = tally_json_object_get_string (input, "command", NULL);
  else if (g_str_equal (tool_name, "Write") || g_str_equal (tool_name, "Edit"))
    shown = tally_json_object_get_string (input, "file_path", NULL);
  summary = shown != NULL ? g_strdup (shown) : object_to_json (input, FALSE);
  gtk_label_set_text (self->summary_label, summary);

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

          if (!JSON_NODE_HOLDS_OBJECT (item))
            continue;
          suggestion = json_node_get_object (item);
          if (json_object_get_string_member_with_default (suggestion, "rule", NULL) == NULL)
            continue;
          label = json_object_get_string_member_with_default (suggestion, "label", NULL);
          if (label == NULL)
            label = json_object_get_string_member (suggestion, "rule");
          gtk_string_list_append (labels, label);
          json_array_add_object_element (self->suggestions, json_object_ref (suggestion));
        }
    }
  gtk_drop_down_set_model (self->rule_dropdown, G_LIST_MODEL (labels));
  gtk_drop_down_set_selected (self->rule_dropdown, 0);
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

  if (resolution != NULL)
    {
      reason = json_object_get_string_member_with_default (resolution, "reason", NULL);
      message = json_object_get_string_member_with_default (resolution, "message", NULL);
      rule = json_object_get_string_member_with_default (resolution, "rule", NULL);
      stop = json_object_get_boolean_member_with_default (resolution, "stop", FALSE);
      if (json_object_get_string_member_with_default (resolution, "decision", NULL) != NULL)
        state = json_object_get_string_member (resolution, "decision");
    }

  denied = g_strcmp0 (state, "deny") == 0;
  if (g_strcmp0 (reason, "timeout") == 0)
    text = _("Denied: no answer in time");
  else if (g_strcmp0 (reason, "cancel") == 0)
    text = _("Cancelled");
  else if (g_strcmp0 (reason, "dismissed") == 0)
    text = _("Dismissed");
  else if (g_strcmp0 (state, "allow_edited") == 0)
    text = _("Allowed with changes");
  else if (g_strcmp0 (state, "allow_always") == 0)
    text = _("Always allowed");
  else if (denied && stop)
    text = _("Denied, turn stopped");
  else if (denied)
    text = _("Denied");
  else
    text = _("Allowed once");

  gtk_label_set_text (self->state_label, text);
  gtk_widget_remove_css_class (GTK_WIDGET (self->state_label), "denied");
  gtk_widget_remove_css_class (GTK_WIDGET (self->state_label), "allowed");
  gtk_widget_add_css_class (GTK_WIDGET (self->state_label), denied ? "denied" : "allowed");

  if (g_strcmp0 (state, "allow_always") == 0 && rule != NULL)
    {
      const char *scope = json_object_get_string_member_with_default (resolution, "scope", NULL);
      detail = g_strdup_printf (_("Rule kept %s: %s"), scope_text (scope), rule);
    }
  else if (g_strcmp0 (state, "allow_edited") == 0 && resolution != NULL &&
           json_object_has_member (resolution, "updated_input") &&
           JSON_NODE_HOLDS_OBJECT (json_object_get_member (resolution, "updated_input")))
    {
      g_autofree char *input = object_to_json (json_object_get_object_member (resolution, "updated_input"), FALSE);
      detail = g_strdup_printf (_("Ran with: %s"), input);
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
    }
  else
    {
      gtk_widget_set_visible (GTK_WIDGET (self->detail_label), FALSE);
      start_diff (self);
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

static void
style_dark_cb (TallyApprovalCard *self)
{
  GtkSourceStyleSchemeManager *manager = gtk_source_style_scheme_manager_get_default ();
  GtkSourceStyleScheme *scheme;
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->edit_view));

  g_assert (TALLY_IS_APPROVAL_CARD (self));

  scheme = gtk_source_style_scheme_manager_get_scheme (manager, tally_cards_is_dark () ? "Adwaita-dark" : "Adwaita");
  if (scheme != NULL)
    gtk_source_buffer_set_style_scheme (GTK_SOURCE_BUFFER (buffer), scheme);
}

/* Binding and unbinding both show the current block. */
static void
tally_approval_card_bind (TallyBlockWidget *widget,
                          TallyBlock       *previous)
{
  TallyApprovalCard *self = TALLY_APPROVAL_CARD (widget);
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);   /* NULL when unbinding */

  g_clear_pointer (&self->shown, json_object_unref);

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

  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_APPROVAL_CARD);

  G_OBJECT_CLASS (tally_approval_card_parent_class)->dispose (object);
}

static void
tally_approval_card_finalize (GObject *object)
{
  TallyApprovalCard *self = (TallyApprovalCard *)object;

  g_clear_pointer (&self->suggestions, json_array_unref);
  g_clear_pointer (&self->shown, json_object_unref);

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

  gtk_source_init ();
  g_type_ensure (GTK_SOURCE_TYPE_VIEW);

  gtk_widget_class_install_action (widget_class, "card.deny-stop", NULL, deny_stop_action);
  gtk_widget_class_install_action (widget_class, "card.cancel", NULL, cancel_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "card.cancel", NULL);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/cards/tally-approval-card.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, content);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, title_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, state_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, summary_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, diff_scroller);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, diff_view);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, diff_note);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, warning_box);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, detail_label);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, edit_panel);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, edit_view);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, edit_error);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, always_panel);
  gtk_widget_class_bind_template_child (widget_class, TallyApprovalCard, rule_dropdown);
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
