/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

/* Helpers shared by the tool implementations under src/core/tools. Not part
 * of the API the agent uses: include tally-tool.h and tally-tool-registry.h
 * for that. */

#include <glib/gstdio.h>
#include <sqlite3.h>

#include "tally-format.h"
#include "tally-query-rows.h"
#include "tally-tool.h"

G_BEGIN_DECLS

/* Input validation (tally-tool.c). */
gboolean  tally_tool_input_check        (JsonObject   *input,
                                         GError      **error);
gboolean  tally_tool_input_get_string   (JsonObject   *input,
                                         const char   *member,
                                         gboolean      required,
                                         const char  **value,
                                         GError      **error);
gboolean  tally_tool_input_get_uint     (JsonObject   *input,
                                         const char   *member,
                                         gboolean     *present,
                                         guint64      *value,
                                         GError      **error);

/* Bodies for TallyToolClass.dup_paths and .dup_summary (tally-tool.c). */
char    **tally_tool_dup_member_path    (JsonObject   *input,
                                         const char   *member);
char     *tally_tool_dup_member_string  (JsonObject   *input,
                                         const char   *member);

/* Text helpers (tally-tool.c). */
void      tally_tool_append_clipped     (GString      *out,
                                         const char   *text,
                                         gssize        len,
                                         guint         max_chars);
char     *tally_tool_format_seconds     (guint64       ms);

/* Workspace paths and file walks (tally-tool-paths.c). */
char     *tally_tool_resolve_checked    (const TallyToolContext *context,
                                         const char             *member,
                                         const char             *path,
                                         gboolean                refuse_outside,
                                         const char             *advice,
                                         GError                **error);
char     *tally_tool_resolve_inside     (const TallyToolContext *context,
                                         const char             *member,
                                         const char             *path,
                                         GError                **error);
char     *tally_tool_relative_path      (const char   *workspace,
                                         const char   *path);
GRegex   *tally_tool_glob_to_regex      (const char   *glob,
                                         GError      **error);

/**
 * TallyToolSearchRoot:
 * @workspace: the canonical workspace
 * @root: the canonical folder or file searched
 * @prefix: (nullable): @root relative to @workspace, %NULL when @root is
 *   the workspace itself
 * @is_folder: whether @root is a folder
 *
 * Where Glob and Grep search (tally_tool_search_root_init(), tally-tool-paths.c).
 */
typedef struct
{
  char     *workspace;
  char     *root;
  char     *prefix;
  gboolean  is_folder;
} TallyToolSearchRoot;

gboolean  tally_tool_search_root_init   (TallyToolSearchRoot    *self,
                                         const TallyToolContext *context,
                                         const char             *path,
                                         gboolean                folder_only,
                                         GError                **error);
void      tally_tool_search_root_clear  (TallyToolSearchRoot    *self);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TallyToolSearchRoot, tally_tool_search_root_clear)

/**
 * TallyToolWalkFunc:
 * @path: absolute path of a regular file (symlinks already resolved and
 *   known to stay inside the workspace)
 * @relpath: @path relative to the walk's root folder, '/'-separated
 * @st: the file's stat (of the target for a symlink)
 * @user_data: closure
 *
 * Called once per regular file by tally_tool_walk_files().
 *
 * Returns: %FALSE to stop the walk early
 */
typedef gboolean (*TallyToolWalkFunc) (const char    *path,
                                       const char    *relpath,
                                       const GStatBuf *st,
                                       gpointer       user_data);

gboolean  tally_tool_walk_files         (const char        *workspace,
                                         const char        *root,
                                         GCancellable      *cancellable,
                                         TallyToolWalkFunc  func,
                                         gpointer           user_data,
                                         GError           **error);

/* Files the mutating tools change, and their diffs (tally-tool-write.c). */
char     *tally_tool_resolve_for_change (const TallyToolContext *context,
                                         const char             *member,
                                         const char             *path,
                                         gboolean                check_outside,
                                         char                  **display,
                                         gboolean               *exists,
                                         GError                **error);
gboolean  tally_tool_replace_file       (const char   *path,
                                         const char   *display,
                                         const char   *contents,
                                         gsize         length,
                                         GError      **error);
char     *tally_tool_unified_diff       (const char   *old_text,
                                         gsize         old_length,
                                         const char   *new_text,
                                         gsize         new_length,
                                         const char   *old_label,
                                         const char   *new_label);
char     *tally_tool_dup_file_diff      (const char   *display,
                                         const char   *old_text,
                                         gsize         old_length,
                                         const char   *new_text,
                                         gsize         new_length);

/* Read-only SQLite access (tally-tool-query-database.c). */
typedef struct _TallyToolDatabase TallyToolDatabase;

TallyToolDatabase *tally_tool_database_open     (const TallyToolContext *context,
                                                 GCancellable           *cancellable,
                                                 GError                **error);
sqlite3           *tally_tool_database_get_db   (TallyToolDatabase      *database);
sqlite3_stmt      *tally_tool_database_prepare  (TallyToolDatabase      *database,
                                                 const char             *sql,
                                                 GError                **error);
void               tally_tool_database_set_limits (TallyToolDatabase   *database,
                                                   guint                timeout_ms,
                                                   gint64               max_memory);
gboolean           tally_tool_database_set_step_error (TallyToolDatabase *database,
                                                       int                rc,
                                                       GError           **error);
void               tally_tool_database_free     (TallyToolDatabase      *database);

/* A query's rows as data, for create_chart (tally-tool-query-database.c). */
TallyQueryRows    *tally_tool_query_database_fetch_rows (TallyTool               *tool,
                                                         const TallyToolContext  *context,
                                                         const char              *sql,
                                                         guint                    max_rows,
                                                         GCancellable            *cancellable,
                                                         GError                 **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyToolDatabase, tally_tool_database_free)

G_END_DECLS
