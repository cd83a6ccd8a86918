/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * TALLY_TOOL_ERROR:
 *
 * Error domain of tool runs. A tool that fails reports a #TallyToolError;
 * the agent turns the message into a `tool_result` with `is_error: true`, so
 * the message is written for the model to read and act on.
 */
#define TALLY_TOOL_ERROR (tally_tool_error_quark ())

/**
 * TallyToolError:
 * @TALLY_TOOL_ERROR_INVALID_INPUT: the input does not match the tool's schema
 * @TALLY_TOOL_ERROR_REFUSED: the tool refused the request (a write statement,
 *   several statements, a forbidden pragma)
 * @TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE: a path resolves outside the workspace
 * @TALLY_TOOL_ERROR_NOT_FOUND: a file, table or column does not exist
 * @TALLY_TOOL_ERROR_FAILED: the tool ran and failed (SQL error, I/O error)
 *
 * Error codes of %TALLY_TOOL_ERROR.
 */
typedef enum {
  TALLY_TOOL_ERROR_INVALID_INPUT,
  TALLY_TOOL_ERROR_REFUSED,
  TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE,
  TALLY_TOOL_ERROR_NOT_FOUND,
  TALLY_TOOL_ERROR_FAILED,
} TallyToolError;

GQuark tally_tool_error_quark (void);

/**
 * TallyToolContext:
 * @database_path: (nullable): absolute path of the analyst's SQLite database
 * @workspace: (nullable): absolute, canonical path of the session's
 *   workspace folder
 * @allow_outside_workspace: %TRUE when the analyst explicitly approved this
 *   very call although a path it names (see tally_tool_dup_paths()) resolves
 *   outside the workspace; the permission gate sets it for that one run.
 *   When %FALSE (the default), every tool that takes a path (`Read`,
 *   `Glob`, `Grep`, `Write`, `Edit`) refuses such a path with
 *   %TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE; when %TRUE, the approved path is
 *   used (symbolic links met while walking an approved folder are followed
 *   only to files inside that folder).
 * @sensitive_columns: (array zero-terminated=1) (nullable): the analyst's
 *   sensitive columns (`table.column` entries, see
 *   tally_sensitive_columns_parse()): `query_database` and `create_chart`
 *   replace their values, and the values derived from them, by
 *   `[redacted]` (docs/ledger.md)
 *
 * What a tool may touch. Owned by the caller and left unchanged while a tool
 * runs, so tools read it from worker threads without locking.
 */
typedef struct {
  char     *database_path;
  char     *workspace;
  gboolean  allow_outside_workspace;
  char    **sensitive_columns;
} TallyToolContext;

/**
 * TallyToolPreviewKind:
 * @TALLY_TOOL_PREVIEW_INPUT: nothing better to show than the input itself
 * @TALLY_TOOL_PREVIEW_WRITE_FILE: writes the file #TallyToolPreview.subject
 *   with #TallyToolPreview.new_text; whether the file exists was not looked
 *   at (a preview without a workspace)
 * @TALLY_TOOL_PREVIEW_CREATE_FILE: creates the new file
 *   #TallyToolPreview.subject holding #TallyToolPreview.new_text
 * @TALLY_TOOL_PREVIEW_CHANGE_FILE: changes the existing file
 *   #TallyToolPreview.subject from #TallyToolPreview.old_text to
 *   #TallyToolPreview.new_text (both %NULL when the file was not read)
 * @TALLY_TOOL_PREVIEW_READ: reads the file or folder
 *   #TallyToolPreview.subject
 * @TALLY_TOOL_PREVIEW_COMMAND: runs the shell command
 *   #TallyToolPreview.new_text
 * @TALLY_TOOL_PREVIEW_QUERY: runs the query #TallyToolPreview.new_text on
 *   the analyst's database
 *
 * What a call would do, in the words an approval card speaks
 * (tally_tool_dup_preview()).
 */
typedef enum {
  TALLY_TOOL_PREVIEW_INPUT,
  TALLY_TOOL_PREVIEW_WRITE_FILE,
  TALLY_TOOL_PREVIEW_CREATE_FILE,
  TALLY_TOOL_PREVIEW_CHANGE_FILE,
  TALLY_TOOL_PREVIEW_READ,
  TALLY_TOOL_PREVIEW_COMMAND,
  TALLY_TOOL_PREVIEW_QUERY,
} TallyToolPreviewKind;

/**
 * TallyToolPreview:
 * @kind: what the call would do
 * @subject: (nullable): the file or folder it touches, as shown to people:
 *   relative to the workspace, or absolute outside it; %NULL for commands,
 *   queries and %TALLY_TOOL_PREVIEW_INPUT
 * @old_text: (nullable): with %TALLY_TOOL_PREVIEW_CHANGE_FILE, the whole
 *   file as it is now
 * @new_text: (nullable): the whole file as the call would leave it, the
 *   command or the query
 * @edits_content: %TRUE when @new_text can be edited as text and handed
 *   back to tally_tool_dup_edited_input(); %FALSE when only the input as
 *   JSON can be edited
 *
 * A call's preview for its approval card: plain data, owned by whoever
 * holds it (tally_tool_preview_free()), safe to pass between threads.
 */
typedef struct {
  TallyToolPreviewKind  kind;
  char                 *subject;
  char                 *old_text;
  char                 *new_text;
  gboolean              edits_content;
} TallyToolPreview;

TallyToolPreview *tally_tool_preview_new  (TallyToolPreviewKind  kind,
                                           const char           *subject);
void              tally_tool_preview_free (TallyToolPreview     *preview);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyToolPreview, tally_tool_preview_free)

#define TALLY_TYPE_TOOL (tally_tool_get_type ())

G_DECLARE_DERIVABLE_TYPE (TallyTool, tally_tool, TALLY, TOOL, GObject)

/**
 * TallyToolClass:
 * @name: the tool name the model sees (e.g. `query_database`)
 * @description: the description the model reads (Tally's own words)
 * @input_schema: the JSON Schema of the input, as a JSON text
 * @read_only: %TRUE when the tool never changes anything
 * @adds_files_only: %TRUE when the only change the tool makes is to add
 *   new files inside the workspace, never overwriting one (`create_chart`
 *   under `charts/`): the gate runs it without a card in `ask` and `auto`
 *   and refuses it in `plan` (docs/security.md, "Modes")
 * @path_member: (nullable): the input member that names the one path a
 *   call touches (e.g. "file_path"); when @dup_paths is %NULL, that
 *   member's string is the call's path (see tally_tool_dup_member_path())
 * @summary_member: (nullable): the input member whose string summarises a
 *   call (e.g. "command"); used when @dup_summary is %NULL (see
 *   tally_tool_dup_member_string())
 * @run: (nullable): runs the tool; called in a worker thread; returns the
 *   text for the `tool_result` (transfer full) or %NULL with @error set.
 *   A card-backed tool, which Tally answers itself (`AskUserQuestion`,
 *   `ExitPlanMode`), leaves it and @run_with_artifact %NULL:
 *   tally_tool_run() then fails with %TALLY_TOOL_ERROR_FAILED
 * @dup_paths: (nullable): returns the file paths named by an input, as
 *   given (a %NULL-terminated array, transfer full), or %NULL when it names
 *   none; must not touch the file system. %NULL (the default) means the
 *   tool names only the path in @path_member, or none when that is %NULL
 *   too. See tally_tool_dup_paths().
 * @dup_summary: (nullable): returns a one-line human summary of an input
 *   (transfer full), or %NULL to fall back to the default (@summary_member,
 *   else the compact JSON input). See tally_tool_dup_summary().
 * @run_with_artifact: (nullable): like @run, and may also return an
 *   artifact: a JSON object the agent turns into an event of its own
 *   after the `tool_result` (for `create_chart`, the fields of
 *   `chart_created`). A tool that sets it leaves @run %NULL. See
 *   tally_tool_run_full().
 * @preview_kind: what a call does, for the default @dup_preview
 *   (%TALLY_TOOL_PREVIEW_COMMAND for `Bash`, %TALLY_TOOL_PREVIEW_QUERY for
 *   `query_database`); %TALLY_TOOL_PREVIEW_INPUT (the default) lets the
 *   default preview say %TALLY_TOOL_PREVIEW_READ for a read-only tool that
 *   names a path
 * @content_member: (nullable): the input member holding the text a call
 *   runs or writes (e.g. "command", "sql", "content"): the default
 *   @dup_preview shows it and the default @dup_edited_input replaces it
 *   with the analyst's edit
 * @dup_preview: (nullable): returns what a call would do, shown on its
 *   approval card before it runs (a #TallyToolPreview, transfer full), or
 *   %NULL with @error set. With a context that has a workspace it may read
 *   the file system and is called in a worker thread; with a %NULL context
 *   it must not touch the file system and says what the input alone tells.
 *   %NULL (the default) builds the preview from @preview_kind,
 *   @content_member and the call's paths. See tally_tool_dup_preview().
 * @dup_edited_input: (nullable): turns the analyst's edit of
 *   #TallyToolPreview.new_text back into an input for the same tool
 *   (transfer full), or %NULL with @error set. %NULL (the default) copies
 *   the input and puts the text in @content_member. See
 *   tally_tool_dup_edited_input().
 * @input_help: (nullable): sentences the agent adds to its answer to a
 *   call whose input breaks the schema (tally_tool_check_input_schema()),
 *   saying what the tool accepts beyond what the schema says; %NULL (the
 *   default) adds nothing
 *
 * The class of every tool. Subclasses fill in the fields in class_init.
 */
struct _TallyToolClass
{
  GObjectClass parent_class;

  const char *name;
  const char *description;
  const char *input_schema;
  gboolean    read_only;
  gboolean    adds_files_only;
  const char *path_member;
  const char *summary_member;

  char *(*run) (TallyTool              *self,
                const TallyToolContext *context,
                JsonObject             *input,
                GCancellable           *cancellable,
                GError                **error);
  char  *(*run_with_artifact) (TallyTool              *self,
                               const TallyToolContext *context,
                               JsonObject             *input,
                               GCancellable           *cancellable,
                               JsonObject            **artifact,
                               GError                **error);
  char **(*dup_paths)   (TallyTool              *self,
                         JsonObject             *input);
  char  *(*dup_summary) (TallyTool              *self,
                         JsonObject             *input);
  TallyToolPreviewKind preview_kind;
  const char *content_member;
  TallyToolPreview *(*dup_preview) (TallyTool              *self,
                                    const TallyToolContext *context,
                                    JsonObject             *input,
                                    GError                **error);
  JsonObject *(*dup_edited_input) (TallyTool              *self,
                                   JsonObject             *input,
                                   const TallyToolPreview *preview,
                                   const char             *text,
                                   GError                **error);
  const char *input_help;

  /*< private >*/
  gpointer padding[3];
};

const char *tally_tool_get_name         (TallyTool              *self);
const char *tally_tool_get_description  (TallyTool              *self);
const char *tally_tool_get_input_schema (TallyTool              *self);
gboolean    tally_tool_is_read_only     (TallyTool              *self);
gboolean    tally_tool_adds_files_only  (TallyTool              *self);
gboolean    tally_tool_check_input_schema (TallyTool            *self,
                                           JsonObject           *input,
                                           GError              **error);
char       *tally_tool_run              (TallyTool              *self,
                                         const TallyToolContext *context,
                                         JsonObject             *input,
                                         GCancellable           *cancellable,
                                         GError                **error);
char       *tally_tool_run_full         (TallyTool              *self,
                                         const TallyToolContext *context,
                                         JsonObject             *input,
                                         GCancellable           *cancellable,
                                         JsonObject            **artifact,
                                         GError                **error);
void        tally_tool_run_async        (TallyTool              *self,
                                         const TallyToolContext *context,
                                         JsonObject             *input,
                                         GCancellable           *cancellable,
                                         GAsyncReadyCallback     callback,
                                         gpointer                user_data);
char       *tally_tool_run_finish       (TallyTool              *self,
                                         GAsyncResult           *result,
                                         GError                **error);
char       *tally_tool_run_finish_full  (TallyTool              *self,
                                         GAsyncResult           *result,
                                         JsonObject            **artifact,
                                         GError                **error);
char      **tally_tool_dup_paths        (TallyTool              *self,
                                         JsonObject             *input);
char       *tally_tool_dup_summary      (TallyTool              *self,
                                         JsonObject             *input);
TallyToolPreview *tally_tool_dup_preview (TallyTool             *self,
                                         const TallyToolContext *context,
                                         JsonObject             *input,
                                         GError                **error);
JsonObject *tally_tool_dup_edited_input (TallyTool              *self,
                                         JsonObject             *input,
                                         const TallyToolPreview *preview,
                                         const char             *text,
                                         GError                **error);

char       *tally_tool_resolve_path     (const TallyToolContext *context,
                                         const char             *path,
                                         gboolean               *outside,
                                         GError                **error);
char       *tally_tool_escape_path      (const char             *path,
                                         gboolean                quote_colons);
char       *tally_tool_unescape_path    (const char             *text,
                                         GError                **error);

G_END_DECLS
