/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-edit.h"
#include "tally-tool-private.h"

#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

/**
 * TallyToolEdit:
 *
 * The `Edit` tool: replaces exact text in an existing file inside the
 * workspace.
 *
 * Input (docs/architecture.md §8.1): `{file_path, old_string, new_string,
 * replace_all?}`. `old_string` is matched byte for byte (no patterns, no
 * line-ending or whitespace folding); it must not be empty and must differ
 * from `new_string`. Without `replace_all` it must occur exactly once;
 * with it every occurrence (left to right, not overlapping) is replaced.
 * The file is written atomically and keeps its permission bits (see
 * tally_tool_replace_file()). Folders, binary files, missing files and
 * paths outside the workspace are refused, the latter unless
 * #TallyToolContext.allow_outside_workspace is set. The result reads
 * "Replaced N occurrence(s) in PATH", PATH relative to the workspace.
 */
struct _TallyToolEdit
{
  TallyTool parent_instance;
};

G_DEFINE_FINAL_TYPE (TallyToolEdit, tally_tool_edit, TALLY_TYPE_TOOL)

/* Reads an optional boolean strictly: a string "true" or a number is an
 * error, not a conversion. */
static gboolean
input_get_boolean (JsonObject  *input,
                   const char  *member,
                   gboolean    *value,
                   GError     **error)
{
  JsonNode *node = json_object_get_member (input, member);

  *value = FALSE;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;

  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN)
    {
      *value = json_node_get_boolean (node);
      return TRUE;
    }

  g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
               "`%s` must be true or false when given", member);
  return FALSE;
}

/* An Edit worked out short of writing: the file, its text as it is and
 * as the edit leaves it. */
typedef struct {
  char    *path;
  char    *display;     /* the path as shown to the model */
  char    *old_text;
  gsize    old_length;
  GString *new_text;
  guint    count;       /* occurrences replaced */
} PreparedEdit;

static void
prepared_edit_clear (PreparedEdit *edit)
{
  g_free (edit->path);
  g_free (edit->display);
  g_free (edit->old_text);
  if (edit->new_text != NULL)
    g_string_free (edit->new_text, TRUE);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PreparedEdit, prepared_edit_clear)

/* Everything an Edit does short of writing: checks the input, reads the
 * file and computes its new text into @edit (cleared by the caller, also
 * on failure). */
static gboolean
prepare_edit (const TallyToolContext  *context,
              JsonObject              *input,
              gboolean                 check_outside,
              PreparedEdit            *edit,
              GError                 **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GString) result = NULL;
  const char *file_path, *old_string, *new_string;
  gboolean replace_all;
  gsize old_string_len;
  const char *p, *match;
  guint n = 0;
  gboolean exists;

  if (!tally_tool_input_check (input, error) ||
      !tally_tool_input_get_string (input, "file_path", TRUE, &file_path, error) ||
      !tally_tool_input_get_string (input, "old_string", TRUE, &old_string, error) ||
      !tally_tool_input_get_string (input, "new_string", TRUE, &new_string, error) ||
      !input_get_boolean (input, "replace_all", &replace_all, error))
    return FALSE;

  if (old_string[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "`old_string` must not be empty; to create a file or "
                           "replace all of it, use Write");
      return FALSE;
    }

  if (strcmp (old_string, new_string) == 0)
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "`old_string` and `new_string` are the same; the edit "
                           "would change nothing");
      return FALSE;
    }

  edit->path = tally_tool_resolve_for_change (context, "file_path", file_path, check_outside,
                                              &edit->display, &exists, error);
  if (edit->path == NULL)
    return FALSE;

  if (!exists)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_NOT_FOUND,
                   "The file %s does not exist; use Write to create a file", file_path);
      return FALSE;
    }

  if (!g_file_get_contents (edit->path, &edit->old_text, &edit->old_length, &local_error))
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                   "Cannot read %s: %s", edit->display, local_error->message);
      return FALSE;
    }

  if (memchr (edit->old_text, '\0', edit->old_length) != NULL)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_REFUSED,
                   "%s is a binary file (it contains NUL bytes); Edit changes text "
                   "files only", edit->display);
      return FALSE;
    }

  /* Without NUL bytes the text ends at its terminator, so strstr() sees
   * all of it. Matches do not overlap: the search goes on after each. */
  old_string_len = strlen (old_string);
  for (p = edit->old_text; (match = strstr (p, old_string)) != NULL; p = match + old_string_len)
    n++;

  if (n == 0)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "old_string was not found in %s", edit->display);
      return FALSE;
    }

  if (n > 1 && !replace_all)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "old_string occurs %u times in %s; give more context or set "
                   "replace_all", n, edit->display);
      return FALSE;
    }

  result = g_string_sized_new (edit->old_length + n * strlen (new_string));
  for (p = edit->old_text; (match = strstr (p, old_string)) != NULL; p = match + old_string_len)
    {
      g_string_append_len (result, p, match - p);
      g_string_append (result, new_string);
    }
  g_string_append (result, p);

  edit->new_text = g_steal_pointer (&result);
  edit->count = n;

  return TRUE;
}

static char *
edit_run (TallyTool               *tool,
          const TallyToolContext  *context,
          JsonObject              *input,
          GCancellable            *cancellable,
          GError                 **error)
{
  g_auto(PreparedEdit) edit = { 0 };

  if (!prepare_edit (context, input, TRUE, &edit, error))
    return NULL;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  if (!tally_tool_replace_file (edit.path, edit.display, edit.new_text->str, edit.new_text->len, error))
    return NULL;

  return g_strdup_printf ("Replaced %u %s in %s", edit.count,
                          edit.count == 1 ? "occurrence" : "occurrences", edit.display);
}

/* The file before and after the edit; without a context, only its path. */
static TallyToolPreview *
edit_dup_preview (TallyTool               *tool,
                  const TallyToolContext  *context,
                  JsonObject              *input,
                  GError                 **error)
{
  g_auto(PreparedEdit) edit = { 0 };
  TallyToolPreview *preview;

  if (context == NULL)
    {
      const char *file_path;

      if (!tally_tool_input_get_string (input, "file_path", TRUE, &file_path, error))
        return NULL;
      return tally_tool_preview_new (TALLY_TOOL_PREVIEW_CHANGE_FILE, file_path);
    }

  if (!prepare_edit (context, input, FALSE, &edit, error))
    return NULL;

  preview = tally_tool_preview_new (TALLY_TOOL_PREVIEW_CHANGE_FILE, edit.display);
  preview->old_text = g_steal_pointer (&edit.old_text);
  preview->new_text = g_string_free (g_steal_pointer (&edit.new_text), FALSE);
  preview->edits_content = TRUE;
  return preview;
}

/* The analyst edited the whole file as it should end up: the edit
 * replaces the file's previewed text by it (the file's whole text occurs
 * in it once, so the edit stays exact). */
static JsonObject *
edit_dup_edited_input (TallyTool               *tool,
                       JsonObject              *input,
                       const TallyToolPreview  *preview,
                       const char              *text,
                       GError                 **error)
{
  const char *file_path;
  JsonObject *edited;

  if (!tally_tool_input_get_string (input, "file_path", TRUE, &file_path, error))
    return NULL;
  if (preview->old_text == NULL || preview->old_text[0] == '\0')
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "The file %s was not read, so the edit cannot be changed", file_path);
      return NULL;
    }

  edited = json_object_new ();
  json_object_set_string_member (edited, "file_path", file_path);
  json_object_set_string_member (edited, "old_string", preview->old_text);
  json_object_set_string_member (edited, "new_string", text);
  return edited;
}

static void
tally_tool_edit_class_init (TallyToolEditClass *klass)
{
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);

  tool_class->name = "Edit";
  tool_class->description =
    "Change part of an existing text file in the workspace by exact text "
    "replacement: `old_string` is replaced with `new_string`. The match is "
    "exact, character for character, including spaces, indentation and line "
    "breaks; it is not a pattern. `old_string` must occur exactly once, so "
    "include enough surrounding text to make it unique, or set `replace_all` "
    "to true to replace every occurrence. Read the file first so the text "
    "matches what is there now. To create a file, use Write. `file_path` may "
    "be absolute or relative to the workspace. Files outside the workspace "
    "are refused unless the analyst approves that call.";
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"file_path\":{\"type\":\"string\","
    "\"description\":\"The file to change, absolute or relative to the workspace.\"},"
    "\"old_string\":{\"type\":\"string\","
    "\"description\":\"The exact text to replace (not empty).\"},"
    "\"new_string\":{\"type\":\"string\","
    "\"description\":\"The text to put in its place (must differ from old_string).\"},"
    "\"replace_all\":{\"type\":\"boolean\",\"default\":false,"
    "\"description\":\"Replace every occurrence instead of exactly one.\"}"
    "},"
    "\"required\":[\"file_path\",\"old_string\",\"new_string\"]}";
  tool_class->read_only = FALSE;
  tool_class->path_member = "file_path";
  tool_class->summary_member = "file_path";
  tool_class->run = edit_run;
  tool_class->preview_kind = TALLY_TOOL_PREVIEW_CHANGE_FILE;
  tool_class->dup_preview = edit_dup_preview;
  tool_class->dup_edited_input = edit_dup_edited_input;
}

static void
tally_tool_edit_init (TallyToolEdit *self)
{
}

/**
 * tally_tool_edit_new:
 *
 * Creates the `Edit` tool.
 *
 * Returns: (transfer full): a new #TallyTool
 */
TallyTool *
tally_tool_edit_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_EDIT, NULL);
}

/**
 * tally_tool_edit_dup_diff:
 * @context: the tool context (its workspace must be set)
 * @input: the `Edit` input, `{file_path, old_string, new_string,
 *   replace_all?}`
 * @error: return location for a #GError
 *
 * Previews an `Edit` call for its approval card: the unified diff (see
 * tally_tool_unified_diff()) from the file as it is to the file as the
 * edit would leave it, with headers `--- a/PATH` and `+++ b/PATH`, PATH
 * relative to the workspace (a path outside it is shown absolute, without
 * the prefixes, and previewed rather than refused). Nothing is written.
 *
 * Errors: the ones the edit itself would meet, with the same messages:
 * %TALLY_TOOL_ERROR_INVALID_INPUT (bad input, `old_string` not found or
 * not unique), %TALLY_TOOL_ERROR_NOT_FOUND (no such file),
 * %TALLY_TOOL_ERROR_REFUSED (folder, binary file),
 * %TALLY_TOOL_ERROR_FAILED (unreadable).
 *
 * Returns: (transfer full): the diff, or %NULL with @error set
 */
char *
tally_tool_edit_dup_diff (const TallyToolContext  *context,
                          JsonObject              *input,
                          GError                 **error)
{
  g_auto(PreparedEdit) edit = { 0 };

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!prepare_edit (context, input, FALSE, &edit, error))
    return NULL;

  return tally_tool_dup_file_diff (edit.display, edit.old_text, edit.old_length,
                                   edit.new_text->str, edit.new_text->len);
}
