/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool.h"
#include "tally-tool-private.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

/* The tools' workspace paths and file walks (docs/architecture.md §8.2):
 * resolving a path against the workspace without leaving it, the search
 * roots of Glob and Grep, glob patterns and the walk over a folder's
 * files. */

/* How many symbolic links one path may go through before we give up, the
 * same bound the kernel uses (MAXSYMLINKS). */
#define MAX_SYMLINKS 40

/* How deep a file walk descends; deeper folders are not searched. */
#define MAX_WALK_DEPTH 64

/* Pushes the components of @path onto @stack so that the first component
 * ends up on top (the stack is popped from its end). */
static void
push_components (GPtrArray  *stack,
                 const char *path)
{
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);

  for (guint i = g_strv_length (parts); i > 0; i--)
    {
      if (parts[i - 1][0] != '\0')
        g_ptr_array_add (stack, g_strdup (parts[i - 1]));
    }
}

/* Resolves an absolute path the way the kernel would: `.` and `..` and
 * every symbolic link of every component that exists. Components that do
 * not exist are taken as written, and a later `..` removes them again, so
 * "missing/../link" still resolves `link`. */
static char *
canonicalize (const char  *abs_path,
              GError     **error)
{
  g_autoptr(GPtrArray) stack = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) result = g_string_new (NULL);
  guint links = 0;

  g_assert (abs_path[0] == '/');

  push_components (stack, abs_path);

  while (stack->len > 0)
    {
      g_autofree char *component = g_ptr_array_steal_index (stack, stack->len - 1);
      GStatBuf st;
      gsize old_len;

      if (strcmp (component, ".") == 0)
        continue;

      if (strcmp (component, "..") == 0)
        {
          const char *slash = strrchr (result->str, '/');

          if (slash != NULL)
            g_string_truncate (result, slash - result->str);
          continue;
        }

      old_len = result->len;
      g_string_append_c (result, '/');
      g_string_append (result, component);

      if (g_lstat (result->str, &st) != 0 || !S_ISLNK (st.st_mode))
        continue;

      if (++links > MAX_SYMLINKS)
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                       "Too many symbolic links in %s", abs_path);
          return NULL;
        }

      {
        g_autoptr(GError) local_error = NULL;
        g_autofree char *target = g_file_read_link (result->str, &local_error);

        if (target == NULL)
          {
            g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_FAILED,
                         "Cannot resolve %s: %s", result->str, local_error->message);
            return NULL;
          }

        g_string_truncate (result, old_len);
        if (target[0] == '/')
          g_string_truncate (result, 0);
        push_components (stack, target);
      }
    }

  if (result->len == 0)
    g_string_append_c (result, '/');

  return g_string_free (g_steal_pointer (&result), FALSE);
}

static gboolean
path_is_inside (const char *root,
                const char *path)
{
  gsize n = strlen (root);

  if (strcmp (root, "/") == 0)
    return TRUE;

  return strncmp (path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static char *
canonical_workspace (const TallyToolContext  *context,
                     GError                 **error)
{
  if (context == NULL || context->workspace == NULL || context->workspace[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "No workspace folder is configured for this session");
      return NULL;
    }

  if (!g_path_is_absolute (context->workspace))
    {
      g_autofree char *cwd = g_get_current_dir ();
      g_autofree char *abs = g_build_filename (cwd, context->workspace, NULL);

      return canonicalize (abs, error);
    }

  return canonicalize (context->workspace, error);
}

/**
 * tally_tool_resolve_path:
 * @context: the tool context; its workspace must be set
 * @path: an absolute path, or one relative to the workspace
 * @outside: (out) (optional): set to %TRUE when the resolved path is not
 *   the workspace folder or below it
 * @error: return location for a #GError
 *
 * Resolves @path like realpath(3): `.`, `..` and the symbolic links of
 * every existing component are resolved, so a link inside the workspace
 * that points elsewhere resolves to where it points. A final component that
 * does not exist yet (a file about to be written) is kept as written under
 * its resolved parent. Containment is decided on whole path components:
 * `/ws-evil` is not inside `/ws`. A @path in the quoted form that Glob and
 * Grep print for unusual names is unquoted first (tally_tool_unescape_path()).
 *
 * Errors: %TALLY_TOOL_ERROR_INVALID_INPUT when @path is empty, is quoted
 * but not validly, or no workspace is configured; %TALLY_TOOL_ERROR_FAILED on a symbolic-link loop
 * or an unreadable link.
 *
 * Returns: (transfer full): the canonical absolute path, or %NULL with
 *   @error set
 */
char *
tally_tool_resolve_path (const TallyToolContext  *context,
                         const char              *path,
                         gboolean                *outside,
                         GError                 **error)
{
  g_autofree char *workspace = NULL;
  g_autofree char *unquoted = NULL;
  g_autofree char *joined = NULL;
  char *resolved;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (outside != NULL)
    *outside = FALSE;

  if (path == NULL || path[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "The path is empty");
      return NULL;
    }

  workspace = canonical_workspace (context, error);
  if (workspace == NULL)
    return NULL;

  /* A name Glob or Grep printed quoted (tally_tool_escape_path()). */
  unquoted = tally_tool_unescape_path (path, error);
  if (unquoted == NULL)
    return NULL;
  path = unquoted;

  if (path[0] == '\0')
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "The path is empty");
      return NULL;
    }

  if (g_path_is_absolute (path))
    joined = g_strdup (path);
  else
    joined = g_build_filename (workspace, path, NULL);

  resolved = canonicalize (joined, error);
  if (resolved == NULL)
    return NULL;

  if (outside != NULL)
    *outside = !path_is_inside (workspace, resolved);

  return resolved;
}

/**
 * tally_tool_resolve_checked:
 * @context: the tool context
 * @member: the input member @path came from, for messages (e.g. "file_path")
 * @path: (nullable): the path; %NULL means the workspace itself
 * @refuse_outside: whether a path outside the workspace is refused (unless
 *   #TallyToolContext.allow_outside_workspace is set); %FALSE for previews
 * @advice: the end of the refusal's message, telling the model what to do
 *   instead
 * @error: return location for a #GError
 *
 * Like tally_tool_resolve_path(), with the checks of the tools that take a
 * path from their input: an empty @path is an error naming @member, and a
 * path outside the workspace is refused when @refuse_outside.
 *
 * Errors: %TALLY_TOOL_ERROR_INVALID_INPUT (empty path, no workspace),
 * %TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE, %TALLY_TOOL_ERROR_FAILED (link loop).
 *
 * Returns: (transfer full): the canonical absolute path, or %NULL
 */
char *
tally_tool_resolve_checked (const TallyToolContext  *context,
                            const char              *member,
                            const char              *path,
                            gboolean                 refuse_outside,
                            const char              *advice,
                            GError                 **error)
{
  g_autofree char *resolved = NULL;
  g_autofree char *workspace = NULL;
  gboolean outside = FALSE;

  workspace = canonical_workspace (context, error);
  if (workspace == NULL)
    return NULL;

  if (path == NULL)
    return g_steal_pointer (&workspace);

  if (path[0] == '\0')
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "`%s` must not be empty", member);
      return NULL;
    }

  resolved = tally_tool_resolve_path (context, path, &outside, error);
  if (resolved == NULL)
    return NULL;

  if (outside && refuse_outside && !context->allow_outside_workspace)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE,
                   "`%s` %s resolves to %s, which is outside the workspace %s; %s",
                   member, path, resolved, workspace, advice);
      return NULL;
    }

  return g_steal_pointer (&resolved);
}

/**
 * tally_tool_resolve_inside:
 * @context: the tool context
 * @member: the input member @path came from, for messages (e.g. "file_path")
 * @path: (nullable): the path; %NULL means the workspace itself
 * @error: return location for a #GError
 *
 * Like tally_tool_resolve_path(), but a path outside the workspace is an
 * error (%TALLY_TOOL_ERROR_OUTSIDE_WORKSPACE) with a message for the model,
 * unless #TallyToolContext.allow_outside_workspace is set: then the analyst
 * approved this very call on its card, and the outside path is returned
 * (see tally_tool_resolve_checked()).
 *
 * Returns: (transfer full): the canonical absolute path, or %NULL
 */
char *
tally_tool_resolve_inside (const TallyToolContext  *context,
                           const char              *member,
                           const char              *path,
                           GError                 **error)
{
  return tally_tool_resolve_checked (context, member, path, TRUE,
                                     "only files inside the workspace are available", error);
}

/**
 * tally_tool_search_root_init:
 * @self: (out caller-allocates): the record to fill
 * @context: the tool context
 * @path: (nullable): the `path` input of Glob or Grep; %NULL searches the
 *   workspace
 * @folder_only: whether @path must name a folder (Glob) rather than a
 *   folder or a file (Grep)
 * @error: return location for a #GError
 *
 * Resolves where Glob and Grep search: the workspace and @path inside it
 * (tally_tool_resolve_inside()), checked to exist. Free the fields with
 * tally_tool_search_root_clear() (also after a failure).
 *
 * Errors: those of tally_tool_resolve_inside(); %TALLY_TOOL_ERROR_NOT_FOUND
 * when @path does not exist; %TALLY_TOOL_ERROR_INVALID_INPUT when
 * @folder_only and @path is a file.
 *
 * Returns: %TRUE when @self is filled
 */
gboolean
tally_tool_search_root_init (TallyToolSearchRoot     *self,
                             const TallyToolContext  *context,
                             const char              *path,
                             gboolean                 folder_only,
                             GError                 **error)
{
  g_autofree char *relative = NULL;
  GStatBuf st;

  memset (self, 0, sizeof *self);

  self->workspace = tally_tool_resolve_inside (context, "path", NULL, error);
  if (self->workspace == NULL)
    return FALSE;

  self->root = tally_tool_resolve_inside (context, "path", path, error);
  if (self->root == NULL)
    return FALSE;

  if (g_stat (self->root, &st) != 0)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_NOT_FOUND,
                   "%s%s does not exist", folder_only ? "The folder " : "",
                   path ? path : self->root);
      return FALSE;
    }

  self->is_folder = S_ISDIR (st.st_mode);
  if (folder_only && !self->is_folder)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "`path` must be a folder; %s is a file", path ? path : self->root);
      return FALSE;
    }

  relative = tally_tool_relative_path (self->workspace, self->root);
  if (strcmp (relative, ".") != 0)
    self->prefix = g_steal_pointer (&relative);

  return TRUE;
}

/**
 * tally_tool_search_root_clear:
 * @self: a record filled by tally_tool_search_root_init()
 *
 * Frees the fields of @self and sets them to %NULL.
 */
void
tally_tool_search_root_clear (TallyToolSearchRoot *self)
{
  g_clear_pointer (&self->workspace, g_free);
  g_clear_pointer (&self->root, g_free);
  g_clear_pointer (&self->prefix, g_free);
}

/**
 * tally_tool_relative_path:
 * @workspace: a canonical folder
 * @path: a canonical path inside @workspace
 *
 * Returns: (transfer full): @path relative to @workspace ("." for the
 *   workspace itself); @path unchanged when it is not inside
 */
char *
tally_tool_relative_path (const char *workspace,
                          const char *path)
{
  gsize n = strlen (workspace);

  if (!path_is_inside (workspace, path))
    return g_strdup (path);

  if (strcmp (workspace, "/") == 0)
    return g_strdup (path[1] ? path + 1 : ".");

  if (path[n] == '\0')
    return g_strdup (".");

  return g_strdup (path + n + 1);
}

/**
 * tally_tool_glob_to_regex:
 * @glob: a glob pattern: `*` (any run of characters except `/`), `?` (one
 *   character except `/`), `**` (any number of folders, also none, when it
 *   stands for a whole component: `** /` written without the space), `[abc]`
 *   and `[!abc]` classes, `{a,b}` alternatives; `\` quotes the next character
 * @error: return location for a #GError
 *
 * Translates @glob into an anchored #GRegex that matches whole
 * '/'-separated relative paths. GPatternSpec is not used because it lets
 * `*` cross `/`.
 *
 * Returns: (transfer full): the regex, or %NULL with
 *   %TALLY_TOOL_ERROR_INVALID_INPUT when @glob is malformed
 */
GRegex *
tally_tool_glob_to_regex (const char  *glob,
                          GError     **error)
{
  g_autoptr(GString) re = g_string_new ("^(?:");
  g_autoptr(GError) local_error = NULL;
  const char *p = glob;
  guint braces = 0;
  GRegex *regex;

  while (p[0] == '.' && p[1] == '/')
    p += 2;

  while (*p != '\0')
    {
      if (p[0] == '*' && p[1] == '*')
        {
          gboolean whole_component = (p == glob || p[-1] == '/');

          while (*p == '*')
            p++;

          if (whole_component && *p == '/')
            {
              /* "**" + "/": zero or more whole folders. */
              g_string_append (re, "(?:[^/]*/)*");
              p++;
            }
          else if (whole_component && *p == '\0')
            g_string_append (re, ".*");
          else
            g_string_append (re, "[^/]*");
          continue;
        }

      switch (*p)
        {
        case '*':
          g_string_append (re, "[^/]*");
          p++;
          break;

        case '?':
          g_string_append (re, "[^/]");
          p++;
          break;

        case '[':
          {
            const char *end = p + 1;

            if (*end == '!' || *end == '^')
              end++;
            if (*end == ']')
              end++;
            while (*end != '\0' && *end != ']')
              end++;

            if (*end != ']')
              {
                g_string_append (re, "\\[");
                p++;
                break;
              }

            g_string_append_c (re, '[');
            p++;
            if (*p == '!' || *p == '^')
              {
                g_string_append_c (re, '^');
                p++;
              }
            for (; p < end; p++)
              {
                if (*p == '\\' || *p == '[')
                  g_string_append_c (re, '\\');
                g_string_append_c (re, *p);
              }
            g_string_append_c (re, ']');
            p = end + 1;
          }
          break;

        case '{':
          braces++;
          g_string_append (re, "(?:");
          p++;
          break;

        case ',':
          g_string_append (re, braces > 0 ? "|" : ",");
          p++;
          break;

        case '}':
          if (braces == 0)
            {
              g_string_append (re, "\\}");
            }
          else
            {
              braces--;
              g_string_append_c (re, ')');
            }
          p++;
          break;

        case '\\':
          p++;
          if (*p == '\0')
            break;
          G_GNUC_FALLTHROUGH;

        default:
          {
            const char *next = g_utf8_next_char (p);
            g_autofree char *escaped = g_regex_escape_string (p, next - p);

            g_string_append (re, escaped);
            p = next;
          }
          break;
        }
    }

  if (braces > 0)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "The glob pattern %s has an unclosed `{`", glob);
      return NULL;
    }

  g_string_append (re, ")$");

  regex = g_regex_new (re->str, G_REGEX_DOTALL, 0, &local_error);
  if (regex == NULL)
    g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                 "The glob pattern %s is not valid: %s", glob, local_error->message);

  return regex;
}

typedef struct {
  const char        *workspace;
  GCancellable      *cancellable;
  TallyToolWalkFunc  func;
  gpointer           user_data;
  gboolean           stopped;
} Walk;

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static gboolean
walk_dir (Walk        *walk,
          const char  *dir,
          const char  *reldir,
          guint        depth,
          GError     **error)
{
  g_autoptr(GDir) handle = NULL;
  g_autoptr(GPtrArray) names = NULL;
  const char *name;

  if (g_cancellable_set_error_if_cancelled (walk->cancellable, error))
    return FALSE;

  /* An unreadable folder is skipped, not fatal: the rest of the tree is
   * still worth searching. */
  handle = g_dir_open (dir, 0, NULL);
  if (handle == NULL)
    return TRUE;

  names = g_ptr_array_new_with_free_func (g_free);
  while ((name = g_dir_read_name (handle)) != NULL)
    {
      if (strcmp (name, ".git") == 0)
        continue;
      g_ptr_array_add (names, g_strdup (name));
    }
  g_ptr_array_sort (names, compare_names);

  for (guint i = 0; i < names->len && !walk->stopped; i++)
    {
      const char *child_name = g_ptr_array_index (names, i);
      g_autofree char *child = g_build_filename (dir, child_name, NULL);
      g_autofree char *relchild = reldir[0] ? g_strconcat (reldir, "/", child_name, NULL)
                                            : g_strdup (child_name);
      GStatBuf st;

      if (g_lstat (child, &st) != 0)
        continue;

      if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = canonicalize (child, NULL);

          /* Links are followed to files only, and only while they stay
           * inside the workspace; linked folders are not entered, which
           * also keeps the walk free of cycles. */
          if (target == NULL || !path_is_inside (walk->workspace, target))
            continue;
          if (g_stat (target, &st) != 0 || !S_ISREG (st.st_mode))
            continue;
          if (!walk->func (target, relchild, &st, walk->user_data))
            walk->stopped = TRUE;
        }
      else if (S_ISDIR (st.st_mode))
        {
          if (depth < MAX_WALK_DEPTH &&
              !walk_dir (walk, child, relchild, depth + 1, error))
            return FALSE;
        }
      else if (S_ISREG (st.st_mode))
        {
          if (!walk->func (child, relchild, &st, walk->user_data))
            walk->stopped = TRUE;
        }
    }

  return TRUE;
}

/**
 * tally_tool_walk_files:
 * @workspace: the canonical workspace folder
 * @root: a canonical folder (or regular file) inside @workspace, or one
 *   outside it that the analyst approved; such a root bounds its own walk
 * @cancellable: (nullable): checked once per folder
 * @func: called for every regular file, in name order, folder by folder
 * @user_data: closure for @func
 * @error: return location for a #GError
 *
 * Walks the files below @root. Folders named `.git` are skipped; symbolic
 * links are followed only to regular files that resolve inside @workspace
 * (inside @root when @root lies outside @workspace), never into folders.
 * Unreadable folders are skipped.
 *
 * Returns: %FALSE only when cancelled (%G_IO_ERROR_CANCELLED)
 */
gboolean
tally_tool_walk_files (const char         *workspace,
                       const char         *root,
                       GCancellable       *cancellable,
                       TallyToolWalkFunc   func,
                       gpointer            user_data,
                       GError            **error)
{
  Walk walk = { path_is_inside (workspace, root) ? workspace : root,
                cancellable, func, user_data, FALSE };
  GStatBuf st;

  if (g_stat (root, &st) != 0)
    return TRUE;

  if (S_ISREG (st.st_mode))
    {
      g_autofree char *base = g_path_get_basename (root);

      func (root, base, &st, user_data);
      return TRUE;
    }

  return walk_dir (&walk, root, "", 0, error);
}
