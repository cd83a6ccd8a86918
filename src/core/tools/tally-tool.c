/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool.h"
#include "tally-tool-private.h"
#include "tally-json.h"

#include <math.h>
#include <string.h>

/**
 * tally_tool_error_quark:
 *
 * Returns the quark of the %TALLY_TOOL_ERROR domain, registered under the
 * name "tally-tool-error-quark".
 *
 * Returns: the error domain quark
 */
G_DEFINE_QUARK (tally-tool-error-quark, tally_tool_error)

/**
 * TallyTool:
 *
 * The base class of the analyst's tools. A tool is a stateless object: its
 * class says what the model sees (name, description, input schema) and its
 * `run` vfunc does the work in a worker thread, reading only the
 * #TallyToolContext and the input it is given.
 */
G_DEFINE_ABSTRACT_TYPE (TallyTool, tally_tool, G_TYPE_OBJECT)

static void
tally_tool_class_init (TallyToolClass *klass)
{
}

static void
tally_tool_init (TallyTool *self)
{
}

/**
 * tally_tool_get_name:
 * @self: a #TallyTool
 *
 * Returns: (transfer none): the name the model calls the tool by, e.g.
 *   "query_database"
 */
const char *
tally_tool_get_name (TallyTool *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL (self), NULL);

  return TALLY_TOOL_GET_CLASS (self)->name;
}

/**
 * tally_tool_get_description:
 * @self: a #TallyTool
 *
 * Returns: (transfer none): the description the model reads, in Tally's
 *   own words
 */
const char *
tally_tool_get_description (TallyTool *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL (self), NULL);

  return TALLY_TOOL_GET_CLASS (self)->description;
}

/**
 * tally_tool_get_input_schema:
 * @self: a #TallyTool
 *
 * Returns: (transfer none): the JSON Schema of the tool's input as JSON
 *   text (an object schema), as sent in the request's `tools[].input_schema`
 */
const char *
tally_tool_get_input_schema (TallyTool *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL (self), NULL);

  return TALLY_TOOL_GET_CLASS (self)->input_schema;
}

/**
 * tally_tool_is_read_only:
 * @self: a #TallyTool
 *
 * Returns: %TRUE when the tool never changes a file or the database, so the
 *   permission gate may allow it in `plan` and `ask` modes
 */
gboolean
tally_tool_is_read_only (TallyTool *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL (self), FALSE);

  return TALLY_TOOL_GET_CLASS (self)->read_only;
}

/**
 * tally_tool_adds_files_only:
 * @self: a #TallyTool
 *
 * Returns: %TRUE when the tool's only change is adding new files inside
 *   the workspace (#TallyToolClass.adds_files_only), so the permission
 *   gate runs it without a card in `ask` and `auto` and refuses it in
 *   `plan`
 */
gboolean
tally_tool_adds_files_only (TallyTool *self)
{
  g_return_val_if_fail (TALLY_IS_TOOL (self), FALSE);

  return TALLY_TOOL_GET_CLASS (self)->adds_files_only;
}

/**
 * tally_tool_run:
 * @self: a #TallyTool
 * @context: what the tool may touch (database, workspace)
 * @input: the `input` object of the model's `tool_use` block
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs the tool synchronously, blocking the calling thread: call it from a
 * worker thread, or use tally_tool_run_async(). A tool's artifact (see
 * tally_tool_run_full()) is dropped.
 *
 * Errors are in the %TALLY_TOOL_ERROR domain (see #TallyToolError); a
 * cancelled run fails with %G_IO_ERROR_CANCELLED.
 *
 * Returns: (transfer full): the text of the `tool_result`, or %NULL with
 *   @error set; the error message is written for the model to read
 */
char *
tally_tool_run (TallyTool              *self,
                const TallyToolContext *context,
                JsonObject             *input,
                GCancellable           *cancellable,
                GError                **error)
{
  return tally_tool_run_full (self, context, input, cancellable, NULL, error);
}

/**
 * tally_tool_run_full:
 * @self: a #TallyTool
 * @context: what the tool may touch (database, workspace)
 * @input: the `input` object of the model's `tool_use` block
 * @cancellable: (nullable): a #GCancellable
 * @artifact: (out) (optional) (nullable) (transfer full): the run's
 *   artifact, a JSON object, or %NULL when the tool made none (only
 *   `create_chart` makes one: the fields of a `chart_created` event)
 * @error: return location for a #GError
 *
 * Like tally_tool_run(), and also returns the artifact of tools that
 * set #TallyToolClass.run_with_artifact. Blocking.
 *
 * Returns: (transfer full): the text of the `tool_result`, or %NULL with
 *   @error set (%TALLY_TOOL_ERROR, or %G_IO_ERROR_CANCELLED)
 */
char *
tally_tool_run_full (TallyTool              *self,
                     const TallyToolContext *context,
                     JsonObject             *input,
                     GCancellable           *cancellable,
                     JsonObject            **artifact,
                     GError                **error)
{
  TallyToolClass *klass;
  static const TallyToolContext empty_context = { NULL, NULL };
  g_autoptr(JsonObject) made = NULL;
  char *text;

  g_return_val_if_fail (TALLY_IS_TOOL (self), NULL);
  g_return_val_if_fail (!cancellable || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (artifact != NULL)
    *artifact = NULL;

  klass = TALLY_TOOL_GET_CLASS (self);

  if (klass->run == NULL && klass->run_with_artifact == NULL)
    {
      /* A card-backed tool (docs/architecture.md §7) */
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "%s is handled by Tally, not run.", klass->name ? klass->name : "?");
      return NULL;
    }

  if (!tally_tool_input_check (input, error))
    return NULL;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  if (context == NULL)
    context = &empty_context;

  if (klass->run_with_artifact != NULL)
    text = klass->run_with_artifact (self, context, input, cancellable, &made, error);
  else
    text = klass->run (self, context, input, cancellable, error);

  if (text != NULL && artifact != NULL)
    *artifact = g_steal_pointer (&made);

  return text;
}

typedef struct {
  TallyToolContext  context;
  JsonObject       *input;
} RunData;

/* What a threaded run returns: the text, and the artifact as JSON text
 * (parsed again in the caller's thread, see copy_input()). */
typedef struct {
  char *text;
  char *artifact;
} RunResult;

static void
run_result_free (RunResult *result)
{
  g_free (result->text);
  g_free (result->artifact);
  g_free (result);
}

static void
run_data_free (RunData *data)
{
  g_clear_pointer (&data->context.database_path, g_free);
  g_clear_pointer (&data->context.workspace, g_free);
  g_clear_pointer (&data->context.sensitive_columns, g_strfreev);
  g_clear_pointer (&data->input, json_object_unref);
  g_free (data);
}

/* JsonObject's reference count is not atomic, and the task (with its data)
 * may be finalized in the worker thread. So the worker gets a private copy
 * of the input made here, in the caller's thread, and never shares a
 * reference count with the caller. */
static JsonObject *
copy_input (JsonObject *input)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(JsonNode) copy = NULL;
  g_autofree char *text = NULL;

  json_node_set_object (node, input);
  text = tally_json_to_string (node, FALSE);
  copy = json_from_string (text, NULL);

  if (copy == NULL || !JSON_NODE_HOLDS_OBJECT (copy))
    return json_object_new ();

  return json_object_ref (json_node_get_object (copy));
}

static void
run_thread (GTask        *task,
            gpointer      source_object,
            gpointer      task_data,
            GCancellable *cancellable)
{
  RunData *data = task_data;
  GError *error = NULL;
  g_autoptr(JsonObject) artifact = NULL;
  RunResult *result;
  char *text;

  text = tally_tool_run_full (TALLY_TOOL (source_object), &data->context,
                              data->input, cancellable, &artifact, &error);

  if (text == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  result = g_new0 (RunResult, 1);
  result->text = text;
  if (artifact != NULL)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

      json_node_set_object (node, artifact);
      result->artifact = tally_json_to_string (node, FALSE);
    }
  g_task_return_pointer (task, result, (GDestroyNotify) run_result_free);
}

/**
 * tally_tool_run_async:
 * @self: a #TallyTool
 * @context: what the tool may touch; copied, so the caller may free it
 *   once this returns
 * @input: the `input` object of the model's `tool_use` block; copied
 * @cancellable: (nullable): a #GCancellable
 * @callback: called in the caller's thread-default main context when done
 * @user_data: closure for @callback
 *
 * Runs the tool in a worker thread (g_task_run_in_thread()). Finish with
 * tally_tool_run_finish().
 */
void
tally_tool_run_async (TallyTool              *self,
                      const TallyToolContext *context,
                      JsonObject             *input,
                      GCancellable           *cancellable,
                      GAsyncReadyCallback     callback,
                      gpointer                user_data)
{
  g_autoptr(GTask) task = NULL;
  RunData *data;

  g_return_if_fail (TALLY_IS_TOOL (self));
  g_return_if_fail (!cancellable || G_IS_CANCELLABLE (cancellable));

  data = g_new0 (RunData, 1);
  if (context != NULL)
    {
      data->context.database_path = g_strdup (context->database_path);
      data->context.workspace = g_strdup (context->workspace);
      data->context.allow_outside_workspace = context->allow_outside_workspace;
      data->context.sensitive_columns = g_strdupv (context->sensitive_columns);
    }
  data->input = input ? copy_input (input) : NULL;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_tool_run_async);
  g_task_set_task_data (task, data, (GDestroyNotify) run_data_free);
  g_task_set_name (task, "[tally] tool run");
  g_task_run_in_thread (task, run_thread);
}

/**
 * tally_tool_run_finish:
 * @self: a #TallyTool
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Completes tally_tool_run_async().
 *
 * Returns: (transfer full): the text of the `tool_result`, or %NULL with
 *   @error set (%TALLY_TOOL_ERROR, or %G_IO_ERROR_CANCELLED)
 */
char *
tally_tool_run_finish (TallyTool     *self,
                       GAsyncResult  *result,
                       GError       **error)
{
  return tally_tool_run_finish_full (self, result, NULL, error);
}

/**
 * tally_tool_run_finish_full:
 * @self: a #TallyTool
 * @result: the #GAsyncResult given to the callback
 * @artifact: (out) (optional) (nullable) (transfer full): the run's
 *   artifact (see tally_tool_run_full()), or %NULL
 * @error: return location for a #GError
 *
 * Completes tally_tool_run_async(), with the artifact.
 *
 * Returns: (transfer full): the text of the `tool_result`, or %NULL with
 *   @error set (%TALLY_TOOL_ERROR, or %G_IO_ERROR_CANCELLED)
 */
char *
tally_tool_run_finish_full (TallyTool     *self,
                            GAsyncResult  *result,
                            JsonObject   **artifact,
                            GError       **error)
{
  RunResult *run_result;
  char *text;

  g_return_val_if_fail (TALLY_IS_TOOL (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_tool_run_async, NULL);

  if (artifact != NULL)
    *artifact = NULL;

  run_result = g_task_propagate_pointer (G_TASK (result), error);
  if (run_result == NULL)
    return NULL;

  if (artifact != NULL && run_result->artifact != NULL)
    {
      g_autoptr(JsonNode) node = json_from_string (run_result->artifact, NULL);

      if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
        *artifact = json_object_ref (json_node_get_object (node));
    }

  text = g_steal_pointer (&run_result->text);
  run_result_free (run_result);
  return text;
}

/**
 * tally_tool_dup_paths:
 * @self: a #TallyTool
 * @input: (nullable): the `input` object of a `tool_use` block
 *
 * Lists the file paths a call with @input would touch, exactly as written
 * in the input (absolute or relative to the workspace, not resolved), so
 * the permission gate can resolve them with tally_tool_resolve_path() and
 * send a call that reaches outside the workspace to an approval card. Pure:
 * the file system is not consulted. `Read`, `Write` and `Edit` name their
 * `file_path`; `Glob` and `Grep` their `path` when one is given. A member
 * that is missing or not a string is not listed (the run will refuse it).
 *
 * Returns: (transfer full) (nullable) (array zero-terminated=1): the paths,
 *   or %NULL when the call names none; free with g_strfreev()
 */
char **
tally_tool_dup_paths (TallyTool  *self,
                      JsonObject *input)
{
  TallyToolClass *klass;

  g_return_val_if_fail (TALLY_IS_TOOL (self), NULL);

  klass = TALLY_TOOL_GET_CLASS (self);

  if (input == NULL)
    return NULL;

  if (klass->dup_paths != NULL)
    return klass->dup_paths (self, input);

  if (klass->path_member != NULL)
    return tally_tool_dup_member_path (input, klass->path_member);

  return NULL;
}

/**
 * tally_tool_preview_new:
 * @kind: what the call would do
 * @subject: (nullable): the file or folder it touches, as shown
 *
 * Creates a preview with no texts; fill in #TallyToolPreview.old_text and
 * #TallyToolPreview.new_text with allocated strings.
 *
 * Returns: (transfer full): a new #TallyToolPreview; free it with
 *   tally_tool_preview_free()
 */
TallyToolPreview *
tally_tool_preview_new (TallyToolPreviewKind  kind,
                        const char           *subject)
{
  TallyToolPreview *preview = g_new0 (TallyToolPreview, 1);

  preview->kind = kind;
  preview->subject = g_strdup (subject);
  return preview;
}

/**
 * tally_tool_preview_free:
 * @preview: (nullable) (transfer full): a #TallyToolPreview
 *
 * Frees @preview and its strings.
 */
void
tally_tool_preview_free (TallyToolPreview *preview)
{
  if (preview == NULL)
    return;

  g_free (preview->subject);
  g_free (preview->old_text);
  g_free (preview->new_text);
  g_free (preview);
}

/* The preview of a tool without its own: its kind and content member say
 * what it does; a read-only tool that names a path reads it. */
static TallyToolPreview *
default_preview (TallyTool  *self,
                 JsonObject *input)
{
  TallyToolClass *klass = TALLY_TOOL_GET_CLASS (self);
  TallyToolPreviewKind kind = klass->preview_kind;
  g_auto(GStrv) paths = tally_tool_dup_paths (self, input);
  TallyToolPreview *preview;

  if (kind == TALLY_TOOL_PREVIEW_INPUT && klass->read_only && paths != NULL && paths[0] != NULL)
    kind = TALLY_TOOL_PREVIEW_READ;

  preview = tally_tool_preview_new (kind, kind == TALLY_TOOL_PREVIEW_READ ? paths[0] : NULL);
  if (klass->content_member != NULL)
    {
      const char *text = NULL;

      if (tally_tool_input_get_string (input, klass->content_member, FALSE, &text, NULL) && text != NULL)
        {
          preview->new_text = g_strdup (text);
          preview->edits_content = TRUE;
        }
    }
  return preview;
}

/**
 * tally_tool_dup_preview:
 * @self: a #TallyTool
 * @context: (nullable): where the call would run (the workspace paths
 *   resolve against), or %NULL to look at the input alone
 * @input: the `input` object of a `tool_use` block
 * @error: return location for a #GError
 *
 * Says what the call would do, for its approval card: for `Write` the new
 * file's content or, for a file that exists, its text before and after;
 * for `Edit` the file before and after; for `Bash` the command; for
 * `query_database` the query; for a read-only tool the path it reads.
 * With a @context that has a workspace this reads the file system: call it
 * in a worker thread. With a %NULL @context nothing is read and a `Write`
 * is %TALLY_TOOL_PREVIEW_WRITE_FILE.
 *
 * Errors: the ones the call itself would meet reading its input and file,
 * with the same messages (%TALLY_TOOL_ERROR_INVALID_INPUT,
 * %TALLY_TOOL_ERROR_NOT_FOUND, %TALLY_TOOL_ERROR_REFUSED,
 * %TALLY_TOOL_ERROR_FAILED).
 *
 * Returns: (transfer full): the preview, or %NULL with @error set
 */
TallyToolPreview *
tally_tool_dup_preview (TallyTool               *self,
                        const TallyToolContext  *context,
                        JsonObject              *input,
                        GError                 **error)
{
  TallyToolClass *klass;

  g_return_val_if_fail (TALLY_IS_TOOL (self), NULL);
  g_return_val_if_fail (input != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  klass = TALLY_TOOL_GET_CLASS (self);
  if (klass->dup_preview != NULL)
    return klass->dup_preview (self, context != NULL && context->workspace != NULL ? context : NULL,
                               input, error);
  return default_preview (self, input);
}

/**
 * tally_tool_dup_edited_input:
 * @self: a #TallyTool
 * @input: the call's input as the model sent it
 * @preview: the call's preview (tally_tool_dup_preview()), with
 *   #TallyToolPreview.edits_content set
 * @text: the analyst's edit of #TallyToolPreview.new_text
 * @error: return location for a #GError
 *
 * Builds the input that runs instead when the analyst allows a call with
 * changes: @input with the edited content in place (the command, the
 * query, the file's content). For `Edit` the edit is the whole file as it
 * should end up, and the input replaces the file's text as previewed
 * (#TallyToolPreview.old_text) by @text.
 *
 * Errors: %TALLY_TOOL_ERROR_INVALID_INPUT when the preview has no editable
 * content.
 *
 * Returns: (transfer full): the new input, or %NULL with @error set
 */
JsonObject *
tally_tool_dup_edited_input (TallyTool               *self,
                             JsonObject              *input,
                             const TallyToolPreview  *preview,
                             const char              *text,
                             GError                 **error)
{
  TallyToolClass *klass;
  JsonObject *edited;
  g_autoptr(JsonNode) copy = NULL;
  g_autoptr(JsonNode) node = NULL;

  g_return_val_if_fail (TALLY_IS_TOOL (self), NULL);
  g_return_val_if_fail (input != NULL, NULL);
  g_return_val_if_fail (preview != NULL, NULL);
  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  klass = TALLY_TOOL_GET_CLASS (self);
  if (!preview->edits_content || (klass->dup_edited_input == NULL && klass->content_member == NULL))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "A call of %s has no content to edit", klass->name);
      return NULL;
    }

  if (klass->dup_edited_input != NULL)
    return klass->dup_edited_input (self, input, preview, text, error);

  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, input);
  copy = json_node_copy (node);
  edited = json_object_ref (json_node_get_object (copy));
  json_object_set_string_member (edited, klass->content_member, text);
  return edited;
}

/**
 * tally_tool_dup_summary:
 * @self: a #TallyTool
 * @input: (nullable): the `input` object of a `tool_use` block
 *
 * Returns a one-line summary of a call for people (approval cards, tool
 * chips, the CLI): the command for `Bash`, the file path for `Write` and
 * `Edit`, and by default the input as compact JSON. Line breaks in the
 * summary are shown as "⏎" so it stays on one line; it is not shortened.
 *
 * Returns: (transfer full): the summary, never %NULL ("{}" for a %NULL
 *   input)
 */
char *
tally_tool_dup_summary (TallyTool  *self,
                        JsonObject *input)
{
  TallyToolClass *klass;
  g_autofree char *summary = NULL;
  GString *line;

  g_return_val_if_fail (TALLY_IS_TOOL (self), NULL);

  klass = TALLY_TOOL_GET_CLASS (self);

  if (input != NULL && klass->dup_summary != NULL)
    summary = klass->dup_summary (self, input);
  else if (input != NULL && klass->summary_member != NULL)
    summary = tally_tool_dup_member_string (input, klass->summary_member);

  if (summary == NULL)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

      if (input != NULL)
        json_node_set_object (node, input);
      else
        json_node_take_object (node, json_object_new ());
      /* The generator escapes line breaks inside strings, so the JSON
       * text is one line already. */
      return tally_json_to_string (node, FALSE);
    }

  line = g_string_new (NULL);
  for (const char *p = summary; *p != '\0'; p++)
    {
      if (*p == '\r' && p[1] == '\n')
        continue;
      if (*p == '\n' || *p == '\r')
        g_string_append (line, "⏎");
      else
        g_string_append_c (line, *p);
    }

  return g_string_free (line, FALSE);
}

/**
 * tally_tool_dup_member_path:
 * @input: (nullable): a tool input
 * @member: the member holding a path, e.g. "file_path"
 *
 * What tally_tool_dup_paths() returns for a tool that names at most one
 * path, in #TallyToolClass.path_member: the string that
 * tally_tool_dup_member_string() reads, as an array.
 *
 * Returns: (transfer full) (nullable): a one-element array with the
 *   member's string, or %NULL when it is missing, empty or not a string
 */
char **
tally_tool_dup_member_path (JsonObject *input,
                            const char *member)
{
  char *path = tally_tool_dup_member_string (input, member);
  char **paths;

  if (path == NULL)
    return NULL;

  paths = g_new0 (char *, 2);
  paths[0] = path;

  return paths;
}

/**
 * tally_tool_dup_member_string:
 * @input: (nullable): a tool input
 * @member: a member name
 *
 * What tally_tool_dup_summary() starts from for a tool with a
 * #TallyToolClass.summary_member: the member's string.
 *
 * Returns: (transfer full) (nullable): a copy of the string, or %NULL when
 *   it is missing, empty or not a string
 */
char *
tally_tool_dup_member_string (JsonObject *input,
                              const char *member)
{
  const char *value = NULL;

  if (!tally_tool_input_get_string (input, member, FALSE, &value, NULL) ||
      value == NULL || value[0] == '\0')
    return NULL;

  return g_strdup (value);
}

/**
 * tally_tool_input_check:
 * @input: (nullable): a tool input
 * @error: return location for a #GError
 *
 * The first check of a tool input: there must be one, a JSON object.
 * tally_tool_run_full() makes it before any tool runs; the previews and
 * diffs of Write and Edit, which read the input without a run, make it
 * too.
 *
 * Returns: %TRUE when @input is an object; %FALSE with
 *   %TALLY_TOOL_ERROR_INVALID_INPUT otherwise
 */
gboolean
tally_tool_input_check (JsonObject  *input,
                        GError     **error)
{
  if (input != NULL)
    return TRUE;

  g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                       "The tool input must be a JSON object");
  return FALSE;
}

/* Whether @node is of the JSON Schema type named @type ("string",
 * "integer", …). An integer is a number without a fractional part (3 and
 * 3.0 alike), as the tools' own readers take it
 * (tally_tool_input_get_uint()). A type this check does not know passes:
 * the tool's own run checks the rest. */
static gboolean
node_has_schema_type (JsonNode   *node,
                      const char *type)
{
  GType value_type = JSON_NODE_HOLDS_VALUE (node) ? json_node_get_value_type (node) : G_TYPE_INVALID;

  if (g_str_equal (type, "string"))
    return value_type == G_TYPE_STRING;
  if (g_str_equal (type, "integer"))
    return value_type == G_TYPE_INT64 ||
           (value_type == G_TYPE_DOUBLE && isfinite (json_node_get_double (node)) &&
            json_node_get_double (node) == floor (json_node_get_double (node)));
  if (g_str_equal (type, "number"))
    return value_type == G_TYPE_INT64 || value_type == G_TYPE_DOUBLE;
  if (g_str_equal (type, "boolean"))
    return value_type == G_TYPE_BOOLEAN;
  if (g_str_equal (type, "array"))
    return JSON_NODE_HOLDS_ARRAY (node);
  if (g_str_equal (type, "object"))
    return JSON_NODE_HOLDS_OBJECT (node);
  if (g_str_equal (type, "null"))
    return JSON_NODE_HOLDS_NULL (node);
  return TRUE;
}

/* Whether @node matches the "type" of @property (a type name or an array
 * of them; no "type" matches anything). Sets @wanted to the first name. */
static gboolean
node_matches_property (JsonNode    *node,
                       JsonObject  *property,
                       const char **wanted)
{
  JsonNode *type = property != NULL ? json_object_get_member (property, "type") : NULL;

  *wanted = NULL;
  if (type == NULL)
    return TRUE;

  if (JSON_NODE_HOLDS_VALUE (type) && json_node_get_value_type (type) == G_TYPE_STRING)
    {
      *wanted = json_node_get_string (type);
      return node_has_schema_type (node, *wanted);
    }

  if (JSON_NODE_HOLDS_ARRAY (type))
    {
      JsonArray *names = json_node_get_array (type);

      for (guint i = 0; i < json_array_get_length (names); i++)
        {
          const char *name = json_array_get_string_element (names, i);

          if (name == NULL)
            continue;
          if (*wanted == NULL)
            *wanted = name;
          if (node_has_schema_type (node, name))
            return TRUE;
        }
      return *wanted == NULL;
    }

  return TRUE;
}

/* A JSON Schema type name as words: "a string", "an integer", "true or
 * false" for a boolean. */
static const char *
with_article (const char *type)
{
  static const struct { const char *type; const char *words; } names[] = {
    { "string", "a string" }, { "integer", "an integer" }, { "number", "a number" },
    { "boolean", "true or false" }, { "array", "an array" }, { "object", "an object" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_str_equal (type, names[i].type))
      return names[i].words;
  return type;
}

/* The tool class's input schema, parsed once per tool type and kept for
 * the process (the tools' schemas are static strings). */
static JsonObject *
class_schema (TallyToolClass *klass)
{
  static GQuark quark;
  GType type = G_TYPE_FROM_CLASS (klass);
  JsonNode *schema;

  if (quark == 0)
    quark = g_quark_from_static_string ("tally-tool-parsed-input-schema");

  schema = g_type_get_qdata (type, quark);
  if (schema == NULL && klass->input_schema != NULL)
    {
      schema = json_from_string (klass->input_schema, NULL);
      if (schema != NULL && !JSON_NODE_HOLDS_OBJECT (schema))
        g_clear_pointer (&schema, json_node_unref);
      if (schema != NULL)
        g_type_set_qdata (type, quark, schema);
    }
  return schema != NULL ? json_node_get_object (schema) : NULL;
}

/* Every member @required names is present and not null, unless its
 * property's type names null. */
static gboolean
check_required (JsonObject  *input,
                JsonArray   *required,
                JsonObject  *properties,
                GError     **error)
{
  for (guint i = 0; required != NULL && i < json_array_get_length (required); i++)
    {
      const char *name = json_array_get_string_element (required, i);
      JsonNode *node = name != NULL ? json_object_get_member (input, name) : NULL;
      const char *wanted = NULL;

      if (name == NULL || (node != NULL && !JSON_NODE_HOLDS_NULL (node)))
        continue;
      if (node == NULL)
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT, "`%s` is required", name);
          return FALSE;
        }

      /* A type that names null allows it. */
      if (node_matches_property (node, tally_json_object_get_object (properties, name), &wanted) &&
          wanted != NULL)
        continue;
      if (wanted != NULL)
        g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                     "`%s` must be %s, not null", name, with_article (wanted));
      else
        g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                     "`%s` is required, not null", name);
      return FALSE;
    }
  return TRUE;
}

/* Every member of @input that @properties names, and that is not null,
 * has its property's type. */
static gboolean
check_types (JsonObject  *input,
             JsonObject  *properties,
             GError     **error)
{
  JsonObjectIter iter;
  const char *name;
  JsonNode *node;

  if (properties == NULL)
    return TRUE;

  json_object_iter_init (&iter, input);
  while (json_object_iter_next (&iter, &name, &node))
    {
      const char *wanted = NULL;
      char number[G_ASCII_DTOSTR_BUF_SIZE];

      if (JSON_NODE_HOLDS_NULL (node) || !json_object_has_member (properties, name) ||
          node_matches_property (node, tally_json_object_get_object (properties, name), &wanted))
        continue;

      /* "not a number" would read oddly after "an integer". */
      if (g_str_equal (wanted, "integer") && JSON_NODE_HOLDS_VALUE (node) &&
          json_node_get_value_type (node) == G_TYPE_DOUBLE)
        {
          /* The model reads it: a point, whatever the locale. */
          g_ascii_formatd (number, sizeof number, "%g", json_node_get_double (node));
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                       "`%s` must be a whole number, not %s", name, number);
        }
      else
        g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                     "`%s` must be %s, not %s", name, with_article (wanted), tally_json_node_describe (node));
      return FALSE;
    }
  return TRUE;
}

/**
 * tally_tool_check_input_schema:
 * @self: a #TallyTool
 * @input: the call's input, a JSON object
 * @error: return location for a #GError
 *
 * Checks a call's input against the top level of the tool's
 * #TallyToolClass.input_schema (a subset of JSON Schema, as the Messages
 * API's tool definitions use it): every member in "required" is present
 * and not null, and every member given has the "type" its property names
 * (a type name or an array of them). An optional member given as null
 * reads as absent, as the tools' own readers take it. The tool's path
 * member (#TallyToolClass.path_member), when given, must be a non-empty
 * string: the approval gate and its suggested rules name calls by that
 * path (docs/security.md, "Tool input").
 *
 * The agent makes this check before the approval gate, so an input that
 * fails it is refused without a card; the tool's run checks the rest
 * (values, ranges, the workspace).
 *
 * Returns: %TRUE when @input passes; %FALSE with
 *   %TALLY_TOOL_ERROR_INVALID_INPUT and a message naming the member and
 *   what arrived (for example "`file_path` must be a string, not an
 *   array") otherwise
 */
gboolean
tally_tool_check_input_schema (TallyTool   *self,
                               JsonObject  *input,
                               GError     **error)
{
  TallyToolClass *klass;
  JsonObject *schema;

  g_return_val_if_fail (TALLY_IS_TOOL (self), FALSE);

  if (!tally_tool_input_check (input, error))
    return FALSE;

  klass = TALLY_TOOL_GET_CLASS (self);
  schema = class_schema (klass);
  if (schema != NULL)
    {
      JsonObject *properties = tally_json_object_get_object (schema, "properties");

      if (!check_required (input, tally_json_object_get_array (schema, "required"), properties, error) ||
          !check_types (input, properties, error))
        return FALSE;
    }

  if (klass->path_member != NULL)
    {
      const char *path = NULL;

      if (!tally_tool_input_get_string (input, klass->path_member, FALSE, &path, error))
        return FALSE;
      if (path != NULL && path[0] == '\0')
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                       "`%s` must not be empty", klass->path_member);
          return FALSE;
        }
    }

  return TRUE;
}

/**
 * tally_tool_input_get_string:
 * @input: the tool input
 * @member: the member name
 * @required: whether the member must be present
 * @value: (out) (transfer none): the string, or %NULL when an optional
 *   member is absent or null
 * @error: return location for a #GError
 *
 * Reads a string member strictly: a number or an object where a string is
 * expected is an error, not a conversion.
 *
 * Returns: %FALSE with %TALLY_TOOL_ERROR_INVALID_INPUT naming @member when
 *   the member is missing (and @required) or not a string
 */
gboolean
tally_tool_input_get_string (JsonObject   *input,
                             const char   *member,
                             gboolean      required,
                             const char  **value,
                             GError      **error)
{
  JsonNode *node = input ? json_object_get_member (input, member) : NULL;

  *value = NULL;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      if (!required)
        return TRUE;
    }
  else if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      *value = json_node_get_string (node);
      return TRUE;
    }

  if (required)
    g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                 "`%s` is required and must be a string", member);
  else
    g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                 "`%s` must be a string when given", member);

  return FALSE;
}

/**
 * tally_tool_input_get_uint:
 * @input: the tool input
 * @member: the member name of an optional integer
 * @present: (out): whether the member was given (and not null)
 * @value: (out): the value, 0 when absent
 * @error: return location for a #GError
 *
 * Reads an optional non-negative integer. A JSON number with a fraction, a
 * negative number, a string or a boolean is an error.
 *
 * Returns: %FALSE with %TALLY_TOOL_ERROR_INVALID_INPUT naming @member
 */
gboolean
tally_tool_input_get_uint (JsonObject  *input,
                           const char  *member,
                           gboolean    *present,
                           guint64     *value,
                           GError     **error)
{
  JsonNode *node = input ? json_object_get_member (input, member) : NULL;

  *present = FALSE;
  *value = 0;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;

  if (JSON_NODE_HOLDS_VALUE (node))
    {
      GType type = json_node_get_value_type (node);

      if (type == G_TYPE_INT64 && json_node_get_int (node) >= 0)
        {
          *present = TRUE;
          *value = (guint64) json_node_get_int (node);
          return TRUE;
        }

      /* 10.0 is an integer as far as JSON Schema is concerned. */
      if (type == G_TYPE_DOUBLE)
        {
          double d = json_node_get_double (node);

          if (d >= 0 && d <= 9007199254740992.0 && d == (double) (guint64) d)
            {
              *present = TRUE;
              *value = (guint64) d;
              return TRUE;
            }
        }
    }

  g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
               "`%s` must be a non-negative integer when given", member);
  return FALSE;
}

/**
 * tally_tool_append_clipped:
 * @out: the string to append to
 * @text: text, not necessarily valid UTF-8 nor nul-terminated
 * @len: length of @text in bytes, or -1 when nul-terminated
 * @max_chars: the most characters to append; longer text is cut and ends
 *   with "…"
 *
 * Appends @text as valid UTF-8 (invalid bytes become U+FFFD), cut at
 * @max_chars characters.
 */
void
tally_tool_append_clipped (GString    *out,
                           const char *text,
                           gssize      len,
                           guint       max_chars)
{
  g_autofree char *valid = NULL;
  const char *p;
  guint n = 0;

  if (len < 0)
    len = strlen (text);

  if (g_utf8_validate_len (text, len, NULL))
    {
      /* Fast path: nothing to repair, only maybe to cut. */
      if ((gsize) len <= max_chars)
        {
          g_string_append_len (out, text, len);
          return;
        }
      valid = g_strndup (text, len);
    }
  else
    valid = g_utf8_make_valid (text, len);

  for (p = valid; *p != '\0' && n < max_chars; p = g_utf8_next_char (p))
    n++;

  g_string_append_len (out, valid, p - valid);
  if (*p != '\0')
    g_string_append (out, "…");
}

/**
 * tally_tool_format_seconds:
 * @ms: a duration in milliseconds
 *
 * Formats a time limit for a message the model reads: whole seconds
 * without a fraction ("30 s"), else with the fraction's significant
 * digits ("1.5 s", "0.25 s").
 *
 * Returns: (transfer full): the duration in seconds, followed by " s"
 */
char *
tally_tool_format_seconds (guint64 ms)
{
  char fraction[4];
  int digits = 3;

  if (ms % 1000 == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " s", ms / 1000);

  g_snprintf (fraction, sizeof fraction, "%03u", (guint) (ms % 1000));
  while (fraction[digits - 1] == '0')
    digits--;

  return g_strdup_printf ("%" G_GUINT64_FORMAT ".%.*s s", ms / 1000, digits, fraction);
}
