/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-cards"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-question-card.h"
#include "tally-cards-common.h"
#include "tally-centring-layout.h"
#include "tally-chip-layout.h"
#include "tally-json.h"
#include "tally-questions.h"

/**
 * TallyQuestionCard:
 *
 * The card of an `AskUserQuestion` call (a %TALLY_BLOCK_QUESTION block;
 * docs/architecture.md §7.1). Each question shows its short header as a
 * chip-like label, the question, its options as toggle-button chips and an
 * "Other…" entry for free text. A chip shows its option's description under
 * the label, before anything is picked; a multi-select chip shows a check
 * box. A chip is named by its option label for assistive technology and
 * described (tooltip and accessible description) by the option's
 * description; the `preview` of the chip last chosen or focused, when it
 * has one, shows under the chips (in monospace). The description is not
 * repeated there, being on the chip.
 *
 * The chips of a single-select question form a group (choosing one
 * unchooses the others); those of a multi-select question toggle freely.
 * The number keys 1–4 toggle the options of the question that has the
 * keyboard focus. Free text is sent as typed, also together with chips.
 *
 * "Send answers" is enabled only when every question has a chip or some
 * free text; it activates `session.answer` with the question id and the
 * answers built by tally_questions_join_answer() as a JSON object.
 * "Dismiss" activates it with no answers (docs/architecture.md §3.2). What
 * the analyst chose survives the row being recycled while the card is
 * pending (it is kept with the block).
 *
 * A settled card shows the answers from the resolution, or says that the
 * questions were dismissed, timed out or were cancelled.
 */

typedef struct {
  char       *question;
  gboolean    multi;
  GtkWidget  *box;
  GtkWidget  *hint;
  GtkWidget  *flow;
  GPtrArray  *chips;          /* GtkToggleButton, borrowed */
  GPtrArray  *labels;         /* char *, option labels */
  GPtrArray  *previews;       /* char * or NULL */
  GtkEntry   *entry;
  GtkLabel   *preview;
  GtkLabel   *answer;
} Question;

/* What the analyst chose so far, kept on the block while it is pending. */
typedef struct {
  guint  n;
  guint *masks;
  char **texts;
} Draft;

struct _TallyQuestionCard
{
  TallyBlockWidget parent_instance;

  /* Template */
  GtkWidget  *content;
  GtkLabel   *title_label;
  GtkLabel   *state_label;
  GtkWidget  *questions_box;
  GtkWidget  *actions;
  GtkButton  *dismiss_button;
  GtkButton  *send_button;

  /* State */
  JsonObject *shown;          /* the details the questions were built from */
  GPtrArray  *questions;      /* Question * */
  gboolean    sent;
  gboolean    restoring;
};

G_DEFINE_FINAL_TYPE (TallyQuestionCard, tally_question_card, TALLY_TYPE_BLOCK_WIDGET)

enum {
  PROP_0,
  PROP_CAN_SEND,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];
static GQuark draft_quark;

#define MAX_NUMBER_KEYS 4

static void
question_free (Question *q)
{
  g_free (q->question);
  g_ptr_array_unref (q->chips);
  g_ptr_array_unref (q->labels);
  g_ptr_array_unref (q->previews);
  g_free (q);
}

static void
draft_free (Draft *draft)
{
  for (guint i = 0; i < draft->n; i++)
    g_free (draft->texts[i]);
  g_free (draft->texts);
  g_free (draft->masks);
  g_free (draft);
}

/* Answers */

static gboolean
text_is_blank (const char *text)
{
  for (const char *p = text; p != NULL && *p != '\0'; p = g_utf8_next_char (p))
    if (!g_unichar_isspace (g_utf8_get_char (p)))
      return FALSE;
  return TRUE;
}

static char *
question_dup_answer (Question *q)
{
  g_autoptr(GPtrArray) chosen = g_ptr_array_new ();
  const char *text = gtk_editable_get_text (GTK_EDITABLE (q->entry));

  for (guint i = 0; i < q->chips->len; i++)
    if (gtk_toggle_button_get_active (g_ptr_array_index (q->chips, i)))
      g_ptr_array_add (chosen, g_ptr_array_index (q->labels, i));
  g_ptr_array_add (chosen, NULL);

  return tally_questions_join_answer ((const char * const *) chosen->pdata,
                                      text_is_blank (text) ? NULL : text);
}

static gboolean
question_is_answered (Question *q)
{
  g_autofree char *answer = question_dup_answer (q);

  return *answer != '\0';
}

/* Drafts */

static void
save_draft (TallyQuestionCard *self)
{
  Draft *draft;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL || self->restoring || self->questions->len == 0)
    return;

  draft = g_new0 (Draft, 1);
  draft->n = self->questions->len;
  draft->masks = g_new0 (guint, draft->n);
  draft->texts = g_new0 (char *, draft->n);
  for (guint i = 0; i < draft->n; i++)
    {
      Question *q = g_ptr_array_index (self->questions, i);

      for (guint j = 0; j < q->chips->len; j++)
        if (gtk_toggle_button_get_active (g_ptr_array_index (q->chips, j)))
          draft->masks[i] |= 1u << j;
      draft->texts[i] = g_strdup (gtk_editable_get_text (GTK_EDITABLE (q->entry)));
    }
  g_object_set_qdata_full (G_OBJECT (TALLY_BLOCK_WIDGET_BLOCK (self)), draft_quark, draft, (GDestroyNotify) draft_free);
}

static void
restore_draft (TallyQuestionCard *self)
{
  Draft *draft = g_object_get_qdata (G_OBJECT (TALLY_BLOCK_WIDGET_BLOCK (self)), draft_quark);

  if (draft == NULL || draft->n != self->questions->len)
    return;

  self->restoring = TRUE;
  for (guint i = 0; i < draft->n; i++)
    {
      Question *q = g_ptr_array_index (self->questions, i);

      for (guint j = 0; j < q->chips->len; j++)
        gtk_toggle_button_set_active (g_ptr_array_index (q->chips, j), (draft->masks[i] >> j) & 1);
      gtk_editable_set_text (GTK_EDITABLE (q->entry), draft->texts[i] != NULL ? draft->texts[i] : "");
    }
  self->restoring = FALSE;
}

/* Reacting to the analyst */

static void
update_send (TallyQuestionCard *self)
{
  gboolean can_send = tally_question_card_can_send (self);

  gtk_widget_set_sensitive (GTK_WIDGET (self->send_button), can_send);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_SEND]);
}

static void
show_option (Question *q,
             guint     index)
{
  const char *preview = index < q->previews->len ? g_ptr_array_index (q->previews, index) : NULL;

  /* The option's description is on its chip already (make_chip()); only
   * the preview shows under the chips. */
  gtk_label_set_text (q->preview, preview != NULL ? preview : "");
  gtk_widget_set_visible (GTK_WIDGET (q->preview), preview != NULL && *preview != '\0');
}

static void
hide_option (Question *q)
{
  gtk_widget_set_visible (GTK_WIDGET (q->preview), FALSE);
}

static Question *
find_question (TallyQuestionCard *self,
               GtkWidget         *widget,
               guint             *chip_index)
{
  for (guint i = 0; i < self->questions->len; i++)
    {
      Question *q = g_ptr_array_index (self->questions, i);

      for (guint j = 0; j < q->chips->len; j++)
        if (g_ptr_array_index (q->chips, j) == (gpointer) widget)
          {
            if (chip_index != NULL)
              *chip_index = j;
            return q;
          }
      if ((GtkWidget *) q->entry == widget || q->box == widget)
        return q;
    }
  return NULL;
}

static void
chip_toggled_cb (GtkToggleButton   *chip,
                 TallyQuestionCard *self)
{
  guint index = 0;
  Question *q = find_question (self, GTK_WIDGET (chip), &index);

  g_assert (TALLY_IS_QUESTION_CARD (self));

  if (q == NULL)
    return;

  if (gtk_toggle_button_get_active (chip))
    show_option (q, index);
  else
    {
      gboolean any = FALSE;

      /* Show the option still chosen, if there is one. */
      for (guint j = q->chips->len; j > 0 && !any; j--)
        if (gtk_toggle_button_get_active (g_ptr_array_index (q->chips, j - 1)))
          {
            show_option (q, j - 1);
            any = TRUE;
          }
      if (!any)
        hide_option (q);
    }

  save_draft (self);
  update_send (self);
}

static void
chip_focus_cb (GtkEventControllerFocus *controller,
               TallyQuestionCard       *self)
{
  GtkWidget *chip = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (controller));
  guint index = 0;
  Question *q = find_question (self, chip, &index);

  g_assert (TALLY_IS_QUESTION_CARD (self));

  if (q != NULL && !self->sent && !tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)))
    show_option (q, index);
}

static void
entry_changed_cb (GtkEditable       *entry,
                  TallyQuestionCard *self)
{
  g_assert (TALLY_IS_QUESTION_CARD (self));

  save_draft (self);
  update_send (self);
}

static gboolean
question_key_cb (GtkEventControllerKey *controller,
                 guint                  keyval,
                 guint                  keycode,
                 GdkModifierType        state,
                 TallyQuestionCard     *self)
{
  GtkWidget *box = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (controller));
  Question *q = find_question (self, box, NULL);
  GtkRoot *root = gtk_widget_get_root (box);
  GtkWidget *focus = root != NULL ? gtk_root_get_focus (root) : NULL;
  GtkToggleButton *chip;
  guint index;

  g_assert (TALLY_IS_QUESTION_CARD (self));

  if (q == NULL || self->sent || TALLY_BLOCK_WIDGET_BLOCK (self) == NULL || tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)))
    return FALSE;
  if ((state & (GDK_CONTROL_MASK | GDK_ALT_MASK | GDK_SUPER_MASK)) != 0)
    return FALSE;
  /* Digits typed into the free text are text. */
  if (focus != NULL && (focus == GTK_WIDGET (q->entry) ||
                        gtk_widget_is_ancestor (focus, GTK_WIDGET (q->entry))))
    return FALSE;

  if (keyval >= GDK_KEY_1 && keyval < GDK_KEY_1 + MAX_NUMBER_KEYS)
    index = keyval - GDK_KEY_1;
  else if (keyval >= GDK_KEY_KP_1 && keyval < GDK_KEY_KP_1 + MAX_NUMBER_KEYS)
    index = keyval - GDK_KEY_KP_1;
  else
    return FALSE;

  if (index >= q->chips->len)
    return FALSE;

  chip = g_ptr_array_index (q->chips, index);
  if (q->multi)
    gtk_toggle_button_set_active (chip, !gtk_toggle_button_get_active (chip));
  else
    gtk_toggle_button_set_active (chip, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (chip));
  return TRUE;
}

static void
finish (TallyQuestionCard *self,
        JsonObject        *answers)
{
  g_autoptr(TallyQuestionCard) hold = g_object_ref (self);
  g_autofree char *json = NULL;
  const char *id;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL || self->sent || tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)))
    return;

  self->sent = TRUE;
  gtk_widget_set_sensitive (self->actions, FALSE);
  gtk_widget_set_sensitive (self->questions_box, FALSE);
  id = tally_cards_details_string (TALLY_BLOCK_WIDGET_BLOCK (self), "question_id");
  if (answers != NULL)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

      json_node_set_object (node, answers);
      json = json_to_string (node, FALSE);
    }
  gtk_widget_activate_action (GTK_WIDGET (self), "session.answer", "(sms)", id != NULL ? id : "", json);
}

static void
send_clicked_cb (TallyQuestionCard *self)
{
  g_autoptr(JsonObject) answers = NULL;

  g_assert (TALLY_IS_QUESTION_CARD (self));

  if (!tally_question_card_can_send (self))
    return;
  answers = tally_question_card_dup_answers (self);
  finish (self, answers);
}

static void
dismiss_clicked_cb (TallyQuestionCard *self)
{
  g_assert (TALLY_IS_QUESTION_CARD (self));

  finish (self, NULL);
}

/* Building the questions */

/* A multi-select chip shows a check box that follows it; the box only
 * draws the state (the chip takes the clicks and the focus). */
static void
chip_check_sync_cb (GtkToggleButton *chip,
                    GParamSpec      *pspec,
                    GtkCheckButton  *check)
{
  gtk_check_button_set_active (check, gtk_toggle_button_get_active (chip));
}

static GtkWidget *
make_chip (Question   *q,
           guint       index,
           const char *label,
           const char *description)
{
  GtkWidget *chip = gtk_toggle_button_new ();
  GtkWidget *rows = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *number;
  GtkWidget *text;
  g_autofree char *digit = g_strdup_printf ("%u", index + 1);

  if (q->multi)
    {
      GtkWidget *check = g_object_new (GTK_TYPE_CHECK_BUTTON,
                                       "accessible-role", GTK_ACCESSIBLE_ROLE_PRESENTATION,
                                       "focusable", FALSE,
                                       "can-target", FALSE,
                                       NULL);

      gtk_widget_add_css_class (check, "chip-check");
      gtk_widget_add_css_class (chip, "multi");
      g_signal_connect_object (chip, "notify::active", G_CALLBACK (chip_check_sync_cb), check, 0);
      gtk_box_append (GTK_BOX (box), check);
    }
  if (index < MAX_NUMBER_KEYS)
    {
      number = gtk_label_new (digit);
      gtk_widget_add_css_class (number, "chip-number");
      gtk_box_append (GTK_BOX (box), number);
    }
  text = gtk_label_new (label);
  gtk_label_set_wrap (GTK_LABEL (text), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (text), 40);
  gtk_label_set_xalign (GTK_LABEL (text), 0);
  gtk_box_append (GTK_BOX (box), text);
  gtk_box_append (GTK_BOX (rows), box);

  /* The description shows before anything is picked (issue 14 §9). */
  if (description != NULL && *description != '\0')
    {
      GtkWidget *detail = gtk_label_new (description);

      gtk_label_set_wrap (GTK_LABEL (detail), TRUE);
      gtk_label_set_max_width_chars (GTK_LABEL (detail), 40);
      gtk_label_set_xalign (GTK_LABEL (detail), 0);
      gtk_widget_add_css_class (detail, "caption");
      gtk_widget_add_css_class (detail, "chip-description");
      gtk_box_append (GTK_BOX (rows), detail);
      gtk_widget_add_css_class (chip, "with-description");
    }
  gtk_button_set_child (GTK_BUTTON (chip), rows);

  gtk_widget_add_css_class (chip, "chip");
  if (description != NULL && *description != '\0')
    gtk_widget_set_tooltip_text (chip, description);
  gtk_accessible_update_property (GTK_ACCESSIBLE (chip),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, label,
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description != NULL ? description : "",
                                  -1);

  if (!q->multi && q->chips->len > 0)
    gtk_toggle_button_set_group (GTK_TOGGLE_BUTTON (chip), g_ptr_array_index (q->chips, 0));

  return chip;
}

static Question *
build_question (TallyQuestionCard *self,
                JsonObject        *object)
{
  Question *q = g_new0 (Question, 1);
  const char *text = tally_json_object_get_string (object, "question", NULL);
  const char *header = tally_json_object_get_string (object, "header", NULL);
  JsonNode *options = json_object_get_member (object, "options");
  JsonNode *multi = json_object_get_member (object, "multiSelect");
  GtkEventController *keys;
  GtkWidget *top;
  GtkWidget *label;
  g_autofree char *entry_name = NULL;

  q->question = g_strdup (text != NULL ? text : "");
  q->multi = multi != NULL && JSON_NODE_HOLDS_VALUE (multi) &&
             json_node_get_value_type (multi) == G_TYPE_BOOLEAN && json_node_get_boolean (multi);
  q->chips = g_ptr_array_new ();
  q->labels = g_ptr_array_new_with_free_func (g_free);
  q->previews = g_ptr_array_new_with_free_func (g_free);

  q->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  gtk_widget_add_css_class (q->box, "question");

  top = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  if (header != NULL && *header != '\0')
    {
      label = gtk_label_new (header);
      gtk_widget_add_css_class (label, "question-header");
      gtk_widget_set_valign (label, GTK_ALIGN_START);
      gtk_box_append (GTK_BOX (top), label);
    }
  label = gtk_label_new (q->question);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_set_hexpand (label, TRUE);
  gtk_widget_add_css_class (label, "question-text");
  gtk_box_append (GTK_BOX (top), label);
  gtk_box_append (GTK_BOX (q->box), top);

  q->hint = gtk_label_new (q->multi ? _("Choose any that apply, or write your own") : _("Choose one, or write your own"));
  gtk_label_set_xalign (GTK_LABEL (q->hint), 0);
  gtk_widget_add_css_class (q->hint, "dim-label");
  gtk_widget_add_css_class (q->hint, "caption");
  gtk_box_append (GTK_BOX (q->box), q->hint);

  /* Chips keep their natural width and wrap when the card is narrow. */
  q->flow = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_set_layout_manager (q->flow, tally_chip_layout_new (6));
  gtk_widget_add_css_class (q->flow, "chips");
  gtk_accessible_update_property (GTK_ACCESSIBLE (q->flow), GTK_ACCESSIBLE_PROPERTY_LABEL, q->question, -1);
  gtk_box_append (GTK_BOX (q->box), q->flow);

  if (options != NULL && JSON_NODE_HOLDS_ARRAY (options))
    {
      JsonArray *array = json_node_get_array (options);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *node = json_array_get_element (array, i);
          JsonObject *option;
          const char *option_label;
          const char *description;
          const char *preview;
          GtkWidget *chip;
          GtkEventController *focus;

          if (!JSON_NODE_HOLDS_OBJECT (node))
            continue;
          option = json_node_get_object (node);
          option_label = tally_json_object_get_string (option, "label", NULL);
          if (option_label == NULL)
            continue;
          description = tally_json_object_get_string (option, "description", NULL);
          preview = tally_json_object_get_string (option, "preview", NULL);

          chip = make_chip (q, q->chips->len, option_label, description);
          g_ptr_array_add (q->chips, chip);
          g_ptr_array_add (q->labels, g_strdup (option_label));
          g_ptr_array_add (q->previews, g_strdup (preview));
          g_signal_connect_object (chip, "toggled", G_CALLBACK (chip_toggled_cb), self, 0);
          focus = gtk_event_controller_focus_new ();
          g_signal_connect_object (focus, "enter", G_CALLBACK (chip_focus_cb), self, 0);
          gtk_widget_add_controller (chip, focus);

          gtk_box_append (GTK_BOX (q->flow), chip);
        }
    }

  q->preview = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (q->preview, 0);
  gtk_label_set_wrap (q->preview, TRUE);
  gtk_label_set_wrap_mode (q->preview, PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (q->preview, TRUE);
  gtk_widget_set_focusable (GTK_WIDGET (q->preview), FALSE);
  gtk_widget_add_css_class (GTK_WIDGET (q->preview), "monospace");
  gtk_widget_add_css_class (GTK_WIDGET (q->preview), "card-code");
  gtk_widget_set_visible (GTK_WIDGET (q->preview), FALSE);
  gtk_box_append (GTK_BOX (q->box), GTK_WIDGET (q->preview));

  q->entry = GTK_ENTRY (gtk_entry_new ());
  gtk_entry_set_placeholder_text (q->entry, _("Other…"));
  entry_name = g_strdup_printf (_("Other answer to: %s"), q->question);
  gtk_accessible_update_property (GTK_ACCESSIBLE (q->entry), GTK_ACCESSIBLE_PROPERTY_LABEL, entry_name, -1);
  g_signal_connect_object (q->entry, "changed", G_CALLBACK (entry_changed_cb), self, 0);
  gtk_box_append (GTK_BOX (q->box), GTK_WIDGET (q->entry));

  q->answer = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (q->answer, 0);
  gtk_label_set_wrap (q->answer, TRUE);
  gtk_label_set_wrap_mode (q->answer, PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (q->answer, TRUE);
  gtk_widget_set_focusable (GTK_WIDGET (q->answer), FALSE);
  gtk_widget_add_css_class (GTK_WIDGET (q->answer), "question-answer");
  gtk_widget_set_visible (GTK_WIDGET (q->answer), FALSE);
  gtk_box_append (GTK_BOX (q->box), GTK_WIDGET (q->answer));

  keys = gtk_event_controller_key_new ();
  g_signal_connect_object (keys, "key-pressed", G_CALLBACK (question_key_cb), self, 0);
  gtk_widget_add_controller (q->box, keys);

  return q;
}

static void
clear_questions (TallyQuestionCard *self)
{
  GtkWidget *child;

  g_ptr_array_set_size (self->questions, 0);
  while ((child = gtk_widget_get_first_child (self->questions_box)) != NULL)
    gtk_box_remove (GTK_BOX (self->questions_box), child);
}

static void
build_questions (TallyQuestionCard *self)
{
  JsonObject *details = tally_block_get_details (TALLY_BLOCK_WIDGET_BLOCK (self));
  JsonNode *node = details != NULL ? json_object_get_member (details, "questions") : NULL;
  JsonArray *array;
  guint n;

  clear_questions (self);
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return;

  array = json_node_get_array (node);
  n = json_array_get_length (array);
  for (guint i = 0; i < n; i++)
    {
      JsonNode *item = json_array_get_element (array, i);
      Question *q;

      if (!JSON_NODE_HOLDS_OBJECT (item))
        continue;
      q = build_question (self, json_node_get_object (item));
      g_ptr_array_add (self->questions, q);
      gtk_box_append (GTK_BOX (self->questions_box), q->box);
    }
}

/* Showing the state */

static const char *
reason_text (const char *reason)
{
  if (g_strcmp0 (reason, "user") == 0)
    return _("Answered");
  if (g_strcmp0 (reason, "timeout") == 0)
    return _("Timed out");
  if (g_strcmp0 (reason, "cancel") == 0)
    return _("Cancelled");
  return _("Dismissed");
}

static void
sync_card (TallyQuestionCard *self)
{
  gboolean settled;
  JsonObject *resolution;
  JsonObject *answers = NULL;
  const char *reason = NULL;
  g_autofree char *accessible = NULL;
  guint n = self->questions->len;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL)
    return;

  settled = tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self));
  resolution = tally_cards_get_resolution (TALLY_BLOCK_WIDGET_BLOCK (self));
  if (resolution != NULL)
    {
      reason = tally_json_object_get_string (resolution, "reason", NULL);
      answers = tally_json_object_get_object (resolution, "answers");
    }
  if (reason == NULL && settled)
    reason = tally_block_get_state (TALLY_BLOCK_WIDGET_BLOCK (self));

  if (settled)
    gtk_label_set_text (self->title_label, ngettext ("The model asked a question", "The model asked questions", n));
  else
    {
      g_autofree char *title = n == 1 ? g_strdup (_("A question before going on"))
                                      : g_strdup_printf (ngettext ("%u question before going on",
                                                                   "%u questions before going on", n), n);
      gtk_label_set_text (self->title_label, title);
    }

  gtk_label_set_text (self->state_label, settled ? reason_text (reason) : "");
  gtk_widget_set_visible (GTK_WIDGET (self->state_label), settled);
  gtk_widget_set_visible (self->actions, !settled);
  gtk_widget_set_sensitive (self->actions, !settled && !self->sent);
  /* Only a card waiting for its resolution greys out; a settled one
   * stays readable (its chips are gone by then). */
  gtk_widget_set_sensitive (self->questions_box, settled || !self->sent);

  for (guint i = 0; i < n; i++)
    {
      Question *q = g_ptr_array_index (self->questions, i);
      const char *answer = answers != NULL ? tally_json_object_get_string (answers, q->question, NULL) : NULL;

      gtk_widget_set_visible (q->hint, !settled);
      gtk_widget_set_visible (q->flow, !settled);
      gtk_widget_set_visible (GTK_WIDGET (q->entry), !settled);
      if (settled)
        hide_option (q);

      if (settled && answer != NULL)
        {
          g_autofree char *text = g_strdup_printf (_("Answer: %s"), answer);
          gtk_label_set_text (q->answer, text);
          gtk_widget_set_visible (GTK_WIDGET (q->answer), TRUE);
        }
      else
        gtk_widget_set_visible (GTK_WIDGET (q->answer), FALSE);
    }

  if (settled)
    {
      gtk_widget_add_css_class (GTK_WIDGET (self), "settled");
      accessible = g_strdup_printf (_("Questions: %s"), reason_text (reason));
    }
  else
    {
      gtk_widget_remove_css_class (GTK_WIDGET (self), "settled");
      accessible = g_strdup (_("Questions, waiting for your answers"));
    }
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, accessible, -1);

  update_send (self);
}

/* The reducer may hand the block over before it fills in its details,
 * and replaces them when the card settles: build the questions again
 * whenever they are not the ones shown. */
static void
ensure_questions (TallyQuestionCard *self)
{
  JsonObject *details = tally_block_get_details (TALLY_BLOCK_WIDGET_BLOCK (self));

  if (details == self->shown)
    return;

  g_clear_pointer (&self->shown, json_object_unref);
  if (details != NULL)
    self->shown = json_object_ref (details);
  build_questions (self);
  if (!tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)))
    restore_draft (self);
}

static void
block_changed_cb (TallyQuestionCard *self)
{
  g_assert (TALLY_IS_QUESTION_CARD (self));

  ensure_questions (self);
  sync_card (self);
}

/* Binding and unbinding both show the current block. */
static void
tally_question_card_bind (TallyBlockWidget *widget,
                          TallyBlock       *previous)
{
  TallyQuestionCard *self = TALLY_QUESTION_CARD (widget);
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);   /* NULL when unbinding */

  g_clear_pointer (&self->shown, json_object_unref);
  self->sent = FALSE;
  clear_questions (self);

  if (block != NULL)
    {
      ensure_questions (self);
      sync_card (self);
    }
}

static void
tally_question_card_dispose (GObject *object)
{
  TallyQuestionCard *self = (TallyQuestionCard *)object;

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);
  clear_questions (self);

  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_QUESTION_CARD);

  G_OBJECT_CLASS (tally_question_card_parent_class)->dispose (object);
}

static void
tally_question_card_finalize (GObject *object)
{
  TallyQuestionCard *self = (TallyQuestionCard *)object;

  g_ptr_array_unref (self->questions);
  g_clear_pointer (&self->shown, json_object_unref);

  G_OBJECT_CLASS (tally_question_card_parent_class)->finalize (object);
}

static void
tally_question_card_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  TallyQuestionCard *self = TALLY_QUESTION_CARD (object);

  switch (prop_id)
    {
    case PROP_CAN_SEND:
      g_value_set_boolean (value, tally_question_card_can_send (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_question_card_class_init (TallyQuestionCardClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_question_card_dispose;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_question_card_bind;
  object_class->finalize = tally_question_card_finalize;
  object_class->get_property = tally_question_card_get_property;

  draft_quark = g_quark_from_static_string ("tally-question-card-draft");

  /**
   * TallyQuestionCard:can-send:
   *
   * Whether "Send answers" would send: the card is pending and every
   * question has a chosen option or free text that is not blank.
   */
  properties[PROP_CAN_SEND] =
    g_param_spec_boolean ("can-send", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (TALLY_TYPE_CENTRING_LAYOUT);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/cards/tally-question-card.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyQuestionCard, content);
  gtk_widget_class_bind_template_child (widget_class, TallyQuestionCard, title_label);
  gtk_widget_class_bind_template_child (widget_class, TallyQuestionCard, state_label);
  gtk_widget_class_bind_template_child (widget_class, TallyQuestionCard, questions_box);
  gtk_widget_class_bind_template_child (widget_class, TallyQuestionCard, actions);
  gtk_widget_class_bind_template_child (widget_class, TallyQuestionCard, dismiss_button);
  gtk_widget_class_bind_template_child (widget_class, TallyQuestionCard, send_button);
  gtk_widget_class_bind_template_callback (widget_class, send_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, dismiss_clicked_cb);
  gtk_widget_class_set_css_name (widget_class, "tallyquestioncard");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
tally_question_card_init (TallyQuestionCard *self)
{
  self->questions = g_ptr_array_new_with_free_func ((GDestroyNotify) question_free);
  gtk_widget_init_template (GTK_WIDGET (self));

  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::state", G_CALLBACK (block_changed_cb), self);
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::finished", G_CALLBACK (block_changed_cb), self);
}

/**
 * tally_question_card_new:
 *
 * Creates an empty question card; give it a block with
 * tally_block_widget_set_block().
 *
 * Returns: (transfer floating): a new #TallyQuestionCard
 */
GtkWidget *
tally_question_card_new (void)
{
  return g_object_new (TALLY_TYPE_QUESTION_CARD, NULL);
}

/**
 * tally_question_card_can_send:
 * @self: a #TallyQuestionCard
 *
 * Returns: whether the card is pending and every question has an answer
 *   (a chosen option or free text that is not blank)
 */
gboolean
tally_question_card_can_send (TallyQuestionCard *self)
{
  g_return_val_if_fail (TALLY_IS_QUESTION_CARD (self), FALSE);

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL || self->sent || tally_block_get_finished (TALLY_BLOCK_WIDGET_BLOCK (self)) ||
      self->questions->len == 0)
    return FALSE;

  for (guint i = 0; i < self->questions->len; i++)
    if (!question_is_answered (g_ptr_array_index (self->questions, i)))
      return FALSE;
  return TRUE;
}

/**
 * tally_question_card_dup_answers:
 * @self: a #TallyQuestionCard
 *
 * Builds the answers as they stand: for each question its text → the
 * chosen labels in option order, then the free text as typed, joined by
 * ", " (tally_questions_join_answer()). Questions without an answer map
 * to "".
 *
 * Returns: (transfer full): a new JSON object
 */
JsonObject *
tally_question_card_dup_answers (TallyQuestionCard *self)
{
  JsonObject *answers;

  g_return_val_if_fail (TALLY_IS_QUESTION_CARD (self), NULL);

  answers = json_object_new ();
  for (guint i = 0; i < self->questions->len; i++)
    {
      Question *q = g_ptr_array_index (self->questions, i);
      g_autofree char *answer = question_dup_answer (q);

      json_object_set_string_member (answers, q->question, answer);
    }
  return answers;
}
