/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <glib/gi18n.h>
#include <gtksourceview/gtksource.h>
#include <json-glib/json-glib.h>

#include "tally-format.h"
#include "tally-json.h"
#include "tally-source-style.h"
#include "tally-sql-format.h"
#include "tally-tool-chip.h"

/**
 * TallyToolChip:
 *
 * One tool call: a card whose title row names the tool, summarises its
 * input on one line and shows its state (waiting, running, done, failed,
 * denied). Opening it shows the whole input as indented JSON and the
 * result; a `query_database` result is laid out as a table. The SQL of a
 * `query_database` or `create_chart` call is shown on its own, laid out
 * by tally_sql_format() and highlighted by GtkSourceView's `sql`
 * language in the style scheme that matches the light or dark style.
 *
 * Binding is cheap: only the one-line summary is computed then. The
 * indented input and the result (which may be a thousand-row table) are
 * built when the card is opened, and again when the result arrives while
 * it is open. Whether a card is open is remembered on its block so that a
 * recycled row comes back as it was left.
 *
 * Making a chip is cheap too: the details' widgets (the SQL view with its
 * highlighting, the result table) come from tally-tool-chip-details.ui
 * when the chip is first opened, not with the chip, so a long session's
 * first screen makes only the title rows (docs/architecture.md §11.1,
 * "Opening a long session").
 */

#define MAX_SUMMARY_CHARS 240
#define MAX_DETAIL_CHARS (64 * 1024)

struct _TallyToolChip
{
  TallyBlockWidget parent_instance;

  GtkExpander      *expander;
  GtkStack         *state_stack;
  GtkImage         *state_icon;
  GtkSpinner       *spinner;
  GtkLabel         *name_label;
  GtkLabel         *summary_label;
  GtkLabel         *duration_label;
  GtkWidget        *details;      /* NULL until first opened */
  GtkLabel         *input_title;
  GtkLabel         *input_label;
  GtkSourceView    *sql_view;
  GtkLabel         *result_title;
  TallyResultTable *table;
  GtkLabel         *result_label;

  char             *sql_text;     /* shown in @sql_view, or NULL */

  guint             details_built : 1;
};

G_DEFINE_FINAL_TYPE (TallyToolChip, tally_tool_chip, TALLY_TYPE_BLOCK_WIDGET)

/* Folds runs of white space (SQL is often laid out over lines) into one
 * space and cuts the result to a sensible length for one line. */
static char *
one_line (const char *text)
{
  GString *out = g_string_new (NULL);
  gboolean space = FALSE;
  guint chars = 0;

  for (const char *p = text; *p != '\0' && chars < MAX_SUMMARY_CHARS; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (g_unichar_isspace (c))
        {
          space = out->len > 0;
          continue;
        }
      if (space)
        {
          g_string_append_c (out, ' ');
          chars++;
          space = FALSE;
        }
      g_string_append_unichar (out, c);
      chars++;
    }

  return g_string_free (out, FALSE);
}

/**
 * tally_tool_summarize_input:
 * @tool_name: (nullable): the tool's name, e.g. `query_database`
 * @input_json: (nullable): the tool input as JSON text
 *
 * Says in one line what a tool call is about, for its chip: the SQL of a
 * `query_database` call, the path of `Read`, `Write` and `Edit`, the
 * pattern (and folder) of `Glob` and `Grep`, the command of `Bash`, the
 * table of `get_schema`; for another tool, its first string value. White
 * space runs become one space and the line is cut after a few hundred
 * characters.
 *
 * Returns: (transfer full): the summary; empty when the input is missing,
 *   not JSON or not an object
 */
char *
tally_tool_summarize_input (const char *tool_name,
                            const char *input_json)
{
  g_autoptr(JsonParser) parser = NULL;
  g_autofree char *summary = NULL;
  JsonObject *input;
  JsonNode *root;
  const char *value = NULL;

  if (input_json == NULL)
    return g_strdup ("");

  parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, input_json, -1, NULL))
    return g_strdup ("");
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return g_strdup ("");
  input = json_node_get_object (root);

  if (g_strcmp0 (tool_name, "query_database") == 0)
    value = tally_json_object_get_string (input, "sql", NULL);
  else if (g_strcmp0 (tool_name, "Read") == 0 || g_strcmp0 (tool_name, "Write") == 0 ||
           g_strcmp0 (tool_name, "Edit") == 0)
    value = tally_json_object_get_string (input, "file_path", NULL);
  else if (g_strcmp0 (tool_name, "Glob") == 0 || g_strcmp0 (tool_name, "Grep") == 0)
    {
      const char *pattern = tally_json_object_get_string (input, "pattern", NULL);
      const char *path = tally_json_object_get_string (input, "path", NULL);
      const char *glob = tally_json_object_get_string (input, "glob", NULL);

      if (pattern != NULL && (path != NULL || glob != NULL))
        {
          /* Translators: a search pattern, then where it looks, e.g.
           * "revenue in reports (*.csv)" */
          if (path != NULL && glob != NULL)
            summary = g_strdup_printf (_("%s in %s (%s)"), pattern, path, glob);
          else if (path != NULL)
            summary = g_strdup_printf (_("%s in %s"), pattern, path);
          else
            summary = g_strdup_printf (_("%s (%s)"), pattern, glob);
          value = summary;
        }
      else
        value = pattern;
    }
  else if (g_strcmp0 (tool_name, "Bash") == 0)
    value = tally_json_object_get_string (input, "command", NULL);
  else if (g_strcmp0 (tool_name, "get_schema") == 0)
    {
      value = tally_json_object_get_string (input, "table", NULL);
      if (value == NULL)
        value = _("all tables");
    }

  if (value == NULL)
    {
      JsonObjectIter iter;
      const char *name;
      JsonNode *node;

      json_object_iter_init (&iter, input);
      while (value == NULL && json_object_iter_next (&iter, &name, &node))
        if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
          value = json_node_get_string (node);
    }

  return one_line (value != NULL ? value : "");
}

static char *
clip (const char *text)
{
  const char *end;

  if (text == NULL)
    return g_strdup ("");
  if (strlen (text) <= MAX_DETAIL_CHARS)
    return g_strdup (text);

  end = g_utf8_find_prev_char (text, text + MAX_DETAIL_CHARS);
  return g_strdup_printf ("%.*s…", (int) (end - text), text);
}

/* The input as the analyst best reads it: indented JSON, and the SQL of
 * `query_database` and `create_chart` apart in *@sql, laid out over lines
 * (JSON would put it on one line with "\n" escapes); the JSON is then
 * what is left (nothing for `query_database`, whose `max_rows` follows
 * the SQL as a comment). Sets *@title to the section title. */
static char *
format_input (const char  *tool_name,
              const char  *input_json,
              const char **title,
              char       **sql)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonGenerator) generator = NULL;
  g_autofree char *pretty = NULL;
  JsonNode *root;

  *title = _("Input");
  *sql = NULL;
  if (input_json == NULL)
    return g_strdup ("");
  if (!json_parser_load_from_data (parser, input_json, -1, NULL) ||
      (root = json_parser_get_root (parser)) == NULL)
    return clip (input_json);

  if ((g_strcmp0 (tool_name, "query_database") == 0 || g_strcmp0 (tool_name, "create_chart") == 0) &&
      JSON_NODE_HOLDS_OBJECT (root) && tally_json_object_get_string (json_node_get_object (root), "sql", NULL) != NULL)
    {
      JsonObject *input = json_node_get_object (root);
      g_autofree char *statement = g_strstrip (g_strdup (tally_json_object_get_string (input, "sql", NULL)));
      g_autofree char *formatted = tally_sql_format (statement);
      g_autoptr(GString) text = g_string_new (formatted);
      JsonNode *max_rows = json_object_get_member (input, "max_rows");

      if (g_strcmp0 (tool_name, "query_database") == 0)
        {
          if (max_rows != NULL && JSON_NODE_HOLDS_VALUE (max_rows) &&
              json_node_get_value_type (max_rows) == G_TYPE_INT64)
            g_string_append_printf (text, "\n-- max_rows: %" G_GINT64_FORMAT, json_node_get_int (max_rows));
          *title = _("SQL");
          *sql = clip (text->str);
          return g_strdup ("");
        }
      *sql = clip (text->str);
      json_object_remove_member (input, "sql");
    }

  generator = json_generator_new ();
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_indent (generator, 2);
  json_generator_set_root (generator, root);
  pretty = json_generator_to_data (generator, NULL);

  return clip (pretty);
}

static void
build_result (TallyToolChip *self)
{
  const char *result = tally_block_get_result (TALLY_BLOCK_WIDGET_BLOCK (self));
  gboolean is_error = tally_block_get_is_error (TALLY_BLOCK_WIDGET_BLOCK (self));
  gboolean table = FALSE;
  g_autofree char *clipped = NULL;

  gtk_widget_set_visible (GTK_WIDGET (self->result_title), result != NULL);

  if (result != NULL && !is_error &&
      g_strcmp0 (tally_block_get_tool_name (TALLY_BLOCK_WIDGET_BLOCK (self)), "query_database") == 0)
    table = tally_result_table_set_result (self->table, result);
  else
    tally_result_table_set_result (self->table, NULL);

  gtk_widget_set_visible (GTK_WIDGET (self->table), table);
  gtk_widget_set_visible (GTK_WIDGET (self->result_label), result != NULL && !table);

  clipped = clip (table ? NULL : result);
  gtk_label_set_text (self->result_label, clipped);
  if (is_error)
    gtk_widget_add_css_class (GTK_WIDGET (self->result_label), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->result_label), "error");
}

/* Makes the details' widgets, once, and puts them in the expander. */
static void
ensure_details (TallyToolChip *self)
{
  g_autoptr(GtkBuilder) builder = NULL;
  GtkSourceBuffer *buffer;
  GtkSourceLanguage *sql;

  if (self->details != NULL)
    return;

  builder = gtk_builder_new_from_resource ("/io/github/tallyapp/Tally/transcript/tally-tool-chip-details.ui");
  self->details = GTK_WIDGET (gtk_builder_get_object (builder, "details"));
  self->input_title = GTK_LABEL (gtk_builder_get_object (builder, "input_title"));
  self->input_label = GTK_LABEL (gtk_builder_get_object (builder, "input_label"));
  self->sql_view = GTK_SOURCE_VIEW (gtk_builder_get_object (builder, "sql_view"));
  self->result_title = GTK_LABEL (gtk_builder_get_object (builder, "result_title"));
  self->table = TALLY_RESULT_TABLE (gtk_builder_get_object (builder, "table"));
  self->result_label = GTK_LABEL (gtk_builder_get_object (builder, "result_label"));

  buffer = GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->sql_view)));
  sql = gtk_source_language_manager_get_language (gtk_source_language_manager_get_default (), "sql");
  tally_source_language_keep_compiled (sql);
  gtk_source_buffer_set_language (buffer, sql);
  gtk_source_buffer_set_highlight_matching_brackets (buffer, FALSE);
  tally_source_style_follow (buffer);

  /* The expander holds the details from here on (the builder's
   * reference goes with it). */
  gtk_expander_set_child (self->expander, self->details);
}

static void
build_details (TallyToolChip *self)
{
  g_autofree char *raw = NULL;
  g_autofree char *raw_sql = NULL;
  g_autofree char *input = NULL;
  const char *title;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL || self->details_built)
    return;

  ensure_details (self);

  g_clear_pointer (&self->sql_text, g_free);
  raw = format_input (tally_block_get_tool_name (TALLY_BLOCK_WIDGET_BLOCK (self)),
                      tally_block_get_tool_input (TALLY_BLOCK_WIDGET_BLOCK (self)),
                      &title, &raw_sql);
  /* What ran, character for character (tally_format_shown_as_is()). */
  input = tally_format_shown_as_is (raw);
  self->sql_text = raw_sql != NULL ? tally_format_shown_as_is (raw_sql) : NULL;
  gtk_label_set_text (self->input_title, title);
  gtk_label_set_text (self->input_label, input);
  gtk_widget_set_visible (GTK_WIDGET (self->input_label), input[0] != '\0' || self->sql_text == NULL);
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->sql_view)),
                            self->sql_text != NULL ? self->sql_text : "", -1);
  gtk_widget_set_visible (GTK_WIDGET (self->sql_view), self->sql_text != NULL);
  build_result (self);
  self->details_built = TRUE;
}

static void
clear_details (TallyToolChip *self)
{
  self->details_built = FALSE;
  g_clear_pointer (&self->sql_text, g_free);
  if (self->details == NULL)
    return;

  gtk_label_set_text (self->input_label, "");
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->sql_view)), "", -1);
  gtk_widget_set_visible (GTK_WIDGET (self->sql_view), FALSE);
  gtk_label_set_text (self->result_label, "");
  tally_result_table_set_result (self->table, NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->table), FALSE);
}

static const char *
state_description (const char *state)
{
  if (g_strcmp0 (state, "running") == 0)
    return _("Running");
  if (g_strcmp0 (state, "done") == 0)
    return _("Done");
  if (g_strcmp0 (state, "error") == 0)
    return _("Failed");
  if (g_strcmp0 (state, "denied") == 0)
    return _("Denied");
  return _("Waiting");
}

static void
sync_state (TallyToolChip *self)
{
  static const char * const state_classes[] = { "success", "error", "warning", NULL };
  const char *state = TALLY_BLOCK_WIDGET_BLOCK (self) != NULL ? tally_block_get_state (TALLY_BLOCK_WIDGET_BLOCK (self)) : NULL;
  const char *icon = "content-loading-symbolic";
  const char *css = NULL;
  gboolean running = g_strcmp0 (state, "running") == 0;
  g_autofree char *accessible = NULL;

  if (g_strcmp0 (state, "done") == 0)
    {
      icon = "emblem-ok-symbolic";
      css = "success";
    }
  else if (g_strcmp0 (state, "error") == 0)
    {
      icon = "dialog-error-symbolic";
      css = "error";
    }
  else if (g_strcmp0 (state, "denied") == 0)
    {
      icon = "action-unavailable-symbolic";
      css = "warning";
    }

  for (guint i = 0; state_classes[i] != NULL; i++)
    gtk_widget_remove_css_class (GTK_WIDGET (self->state_icon), state_classes[i]);
  if (css != NULL)
    gtk_widget_add_css_class (GTK_WIDGET (self->state_icon), css);

  gtk_image_set_from_icon_name (self->state_icon, icon);
  gtk_stack_set_visible_child_name (self->state_stack, running ? "spinner" : "icon");
  gtk_spinner_set_spinning (self->spinner, running);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->state_stack), state_description (state));

  /* Translators: a tool chip for assistive technology: the tool's name,
   * what the call is about and its state, e.g.
   * "query_database: SELECT 1, Done" */
  accessible = g_strdup_printf (_("%s: %s, %s"),
                                gtk_label_get_text (self->name_label),
                                gtk_label_get_text (self->summary_label),
                                state_description (state));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->expander),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, accessible,
                                  -1);
}

static void
sync_duration (TallyToolChip *self)
{
  g_autofree char *text = NULL;
  gint64 ms;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL || tally_block_get_result (TALLY_BLOCK_WIDGET_BLOCK (self)) == NULL)
    {
      gtk_widget_set_visible (GTK_WIDGET (self->duration_label), FALSE);
      return;
    }

  ms = tally_block_get_duration_ms (TALLY_BLOCK_WIDGET_BLOCK (self));
  if (ms < 1000)
    /* Translators: how long a tool ran, in milliseconds */
    text = g_strdup_printf (_("%d ms"), (int) MAX (ms, 0));
  else
    {
      char number[G_ASCII_DTOSTR_BUF_SIZE];

      /* Translators: how long a tool ran, in seconds, e.g. "1.2 s" */
      text = g_strdup_printf (_("%s s"), g_ascii_formatd (number, sizeof number, "%.1f", ms / 1000.0));
    }

  gtk_label_set_text (self->duration_label, text);
  gtk_widget_set_visible (GTK_WIDGET (self->duration_label), TRUE);
}

/* The name and the one-line summary (then the state, whose accessible
 * label includes them). */
static void
sync_tool (TallyToolChip *self)
{
  g_autofree char *summary = NULL;
  g_autofree char *raw = NULL;
  const char *name = NULL;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) != NULL)
    {
      name = tally_block_get_tool_name (TALLY_BLOCK_WIDGET_BLOCK (self));
      raw = tally_tool_summarize_input (name, tally_block_get_tool_input (TALLY_BLOCK_WIDGET_BLOCK (self)));

      /* The model's text shown as it is (tally_format_shown_as_is()). */
      summary = tally_format_shown_as_is (raw);
    }

  gtk_label_set_text (self->name_label, name != NULL ? name : "");
  gtk_label_set_text (self->summary_label, summary != NULL ? summary : "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->summary_label),
                               summary != NULL && summary[0] != '\0' ? summary : NULL);
  sync_state (self);
}

static void
block_tool_changed_cb (TallyToolChip *self)
{
  g_assert (TALLY_IS_TOOL_CHIP (self));

  sync_tool (self);
  if (self->details_built)
    {
      self->details_built = FALSE;
      build_details (self);
    }
}

static void
block_result_changed_cb (TallyToolChip *self)
{
  g_assert (TALLY_IS_TOOL_CHIP (self));

  sync_duration (self);
  if (self->details_built)
    build_result (self);
}

static void
expanded_changed_cb (TallyToolChip *self)
{
  gboolean expanded = gtk_expander_get_expanded (self->expander);

  g_assert (TALLY_IS_TOOL_CHIP (self));

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL)
    return;
  tally_block_widget_set_expanded (TALLY_BLOCK_WIDGET (self), expanded);
  if (expanded)
    build_details (self);
}

/* Binding and unbinding both show the current block. */
static void
tally_tool_chip_bind (TallyBlockWidget *widget,
                      TallyBlock       *previous)
{
  TallyToolChip *self = TALLY_TOOL_CHIP (widget);
  gboolean expanded;

  clear_details (self);

  /* Writes the block's own state back to it (or nothing when unbinding). */
  expanded = tally_block_widget_get_expanded (widget);
  gtk_expander_set_expanded (self->expander, expanded);

  sync_tool (self);
  sync_duration (self);
  if (expanded)
    build_details (self);
}

static void
tally_tool_chip_dispose (GObject *object)
{
  TallyToolChip *self = (TallyToolChip *)object;

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_TOOL_CHIP);
  g_clear_pointer (&self->sql_text, g_free);

  G_OBJECT_CLASS (tally_tool_chip_parent_class)->dispose (object);
}

static void
tally_tool_chip_class_init (TallyToolChipClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_tool_chip_dispose;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_tool_chip_bind;
  TALLY_BLOCK_WIDGET_CLASS (klass)->unbind = tally_tool_chip_bind;

  g_type_ensure (TALLY_TYPE_RESULT_TABLE);
  gtk_source_init ();
  g_type_ensure (GTK_SOURCE_TYPE_VIEW);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/transcript/tally-tool-chip.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyToolChip, expander);
  gtk_widget_class_bind_template_child (widget_class, TallyToolChip, state_stack);
  gtk_widget_class_bind_template_child (widget_class, TallyToolChip, state_icon);
  gtk_widget_class_bind_template_child (widget_class, TallyToolChip, spinner);
  gtk_widget_class_bind_template_child (widget_class, TallyToolChip, name_label);
  gtk_widget_class_bind_template_child (widget_class, TallyToolChip, summary_label);
  gtk_widget_class_bind_template_child (widget_class, TallyToolChip, duration_label);
  gtk_widget_class_set_css_name (widget_class, "tallytoolchip");
}

static void
tally_tool_chip_init (TallyToolChip *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  g_signal_connect_object (self->expander, "notify::expanded",
                           G_CALLBACK (expanded_changed_cb), self, G_CONNECT_SWAPPED);

  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::tool-name", G_CALLBACK (block_tool_changed_cb), self);
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::state", G_CALLBACK (sync_state), self);
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::result", G_CALLBACK (block_result_changed_cb), self);
}

/**
 * tally_tool_chip_new:
 *
 * Creates an empty chip for a %TALLY_BLOCK_TOOL_CALL block.
 *
 * Returns: (transfer floating): a new #TallyToolChip
 */
GtkWidget *
tally_tool_chip_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_CHIP, NULL);
}


/**
 * tally_tool_chip_get_name:
 * @self: a #TallyToolChip
 *
 * Returns: (transfer none): the tool name shown
 */
const char *
tally_tool_chip_get_name (TallyToolChip *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_CHIP (self), NULL);
  return gtk_label_get_text (self->name_label);
}

/**
 * tally_tool_chip_get_summary:
 * @self: a #TallyToolChip
 *
 * Returns: (transfer none): the one-line input summary shown (see
 *   tally_tool_summarize_input())
 */
const char *
tally_tool_chip_get_summary (TallyToolChip *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_CHIP (self), NULL);
  return gtk_label_get_text (self->summary_label);
}

/**
 * tally_tool_chip_get_state:
 * @self: a #TallyToolChip
 *
 * Returns: (transfer none) (nullable): the state shown: `pending`,
 *   `running`, `done`, `error` or `denied`, %NULL when unbound
 */
const char *
tally_tool_chip_get_state (TallyToolChip *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_CHIP (self), NULL);
  return TALLY_BLOCK_WIDGET_BLOCK (self) != NULL ? tally_block_get_state (TALLY_BLOCK_WIDGET_BLOCK (self)) : NULL;
}

/**
 * tally_tool_chip_get_expander:
 * @self: a #TallyToolChip
 *
 * Returns: (transfer none): the expander that opens the details
 */
GtkExpander *
tally_tool_chip_get_expander (TallyToolChip *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_CHIP (self), NULL);
  return self->expander;
}

/**
 * tally_tool_chip_get_table:
 * @self: a #TallyToolChip
 *
 * The details are made when the chip is first opened; asking for the
 * table makes them (empty) if the chip has not been opened yet.
 *
 * Returns: (transfer none): the table that shows a `query_database`
 *   result (filled once the chip has been opened)
 */
TallyResultTable *
tally_tool_chip_get_table (TallyToolChip *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_CHIP (self), NULL);
  ensure_details (self);
  return self->table;
}

/**
 * tally_tool_chip_get_input_text:
 * @self: a #TallyToolChip
 *
 * Returns: (transfer none): the input shown when open: the statement of
 *   a `query_database` call (as tally_tool_chip_get_sql_text()), indented
 *   JSON for other tools (without the `sql` member of `create_chart`);
 *   empty until the chip is first opened
 */
const char *
tally_tool_chip_get_input_text (TallyToolChip *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_CHIP (self), NULL);

  if (self->details == NULL)
    return "";

  if (!gtk_widget_get_visible (GTK_WIDGET (self->input_label)) && self->sql_text != NULL)
    return self->sql_text;
  return gtk_label_get_text (self->input_label);
}

/**
 * tally_tool_chip_get_sql_text:
 * @self: a #TallyToolChip
 *
 * Returns: (transfer none) (nullable): the SQL shown highlighted when
 *   open, laid out by tally_sql_format(): the statement of a
 *   `query_database` call (then a `-- max_rows: N` comment when the call
 *   set it) or of a `create_chart` call; %NULL when the call has none or
 *   the chip was not opened
 */
const char *
tally_tool_chip_get_sql_text (TallyToolChip *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_CHIP (self), NULL);
  return self->sql_text;
}

/**
 * tally_tool_chip_get_sql_view:
 * @self: a #TallyToolChip
 *
 * Asking for the view makes the details (empty) if the chip has not
 * been opened yet; for tests.
 *
 * Returns: (transfer none): the view that shows the SQL (hidden when
 *   the call has none or the chip was not opened)
 */
GtkWidget *
tally_tool_chip_get_sql_view (TallyToolChip *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_CHIP (self), NULL);
  ensure_details (self);
  return GTK_WIDGET (self->sql_view);
}

/**
 * tally_tool_chip_get_result_text:
 * @self: a #TallyToolChip
 *
 * Returns: (transfer none): the result shown as text when open (empty
 *   when it is shown as a table, and until the chip is first opened)
 */
const char *
tally_tool_chip_get_result_text (TallyToolChip *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL_CHIP (self), NULL);
  if (self->details == NULL)
    return "";
  return gtk_label_get_text (self->result_label);
}
