/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-gate"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "tally-gate.h"
#include "tally-tool-private.h"

/*
 * The permission gate (docs/architecture.md §6): decides, for one tool call,
 * whether it goes to a card, runs, or is refused. It is evaluated in a fixed
 * order and the first step that decides wins:
 *
 *   1. card-backed tools (AskUserQuestion, ExitPlanMode);
 *   2. deny rules;
 *   3. plan mode refuses every tool that changes something;
 *   4. a path outside the workspace always asks;
 *   5. allow rules;
 *   6. the mode: read-only tools run in every mode, tools that only add
 *      new files (create_chart) run in `ask` and `auto`, `auto` also runs
 *      edits inside the workspace;
 *   7. everything else asks.
 *
 * Nothing here ever allows by default: a call that no step allows asks.
 */

/**
 * tally_gate_verdict_clear:
 * @verdict: a verdict filled by tally_gate_evaluate()
 *
 * Frees the verdict's strings.
 */
void
tally_gate_verdict_clear (TallyGateVerdict *verdict)
{
  g_clear_pointer (&verdict->message, g_free);
  g_clear_pointer (&verdict->rule, g_free);
}

/**
 * tally_gate_rule_free:
 * @rule: (transfer full): a rule
 *
 * Frees a #TallyGateRule.
 */
void
tally_gate_rule_free (TallyGateRule *rule)
{
  if (rule == NULL)
    return;
  g_free (rule->pattern);
  g_free (rule);
}

static gboolean
is_edit_tool (const char *tool_name)
{
  return g_strcmp0 (tool_name, "Write") == 0 || g_strcmp0 (tool_name, "Edit") == 0;
}

/* Splits `Tool(spec)` into its parts; a bare `Tool` has a NULL spec. */
static gboolean
parse_pattern (const char  *pattern,
               char       **name,
               char       **spec)
{
  const char *open;
  gsize len;

  *name = NULL;
  *spec = NULL;

  if (pattern == NULL || *pattern == '\0')
    return FALSE;

  open = strchr (pattern, '(');
  if (open == NULL)
    {
      if (strchr (pattern, ')') != NULL)
        return FALSE;
      *name = g_strstrip (g_strdup (pattern));
      return **name != '\0';
    }

  len = strlen (pattern);
  if (pattern[len - 1] != ')' || open == pattern)
    return FALSE;

  *name = g_strstrip (g_strndup (pattern, open - pattern));
  *spec = g_strndup (open + 1, pattern + len - 1 - (open + 1));
  if (**name == '\0' || **spec == '\0')
    {
      g_clear_pointer (name, g_free);
      g_clear_pointer (spec, g_free);
      return FALSE;
    }

  return TRUE;
}

/**
 * tally_gate_pattern_is_valid:
 * @pattern: a rule pattern
 *
 * Returns: %TRUE when @pattern has the shape `Tool` or `Tool(spec)`
 */
gboolean
tally_gate_pattern_is_valid (const char *pattern)
{
  g_autofree char *name = NULL;
  g_autofree char *spec = NULL;

  return parse_pattern (pattern, &name, &spec);
}

/* A string member of a tool input, or %NULL when it is missing or not a
 * string (never a warning: the input is the model's). */
static const char *
input_string (JsonObject *input,
              const char *member)
{
  const char *value = NULL;

  if (input == NULL || !tally_tool_input_get_string (input, member, FALSE, &value, NULL))
    return NULL;
  return value;
}

/* The tools whose every call names one file, in "file_path". */
static gboolean
names_a_file (const char *tool_name)
{
  static const char *const file_tools[] = { "Read", "Write", "Edit", NULL };

  return g_strv_contains (file_tools, tool_name);
}

static char **
call_paths (const char *tool_name,
            JsonObject *input)
{
  static const char *const dir_tools[] = { "Glob", "Grep", NULL };
  const char *member = NULL;
  const char *value;
  char **paths;

  if (names_a_file (tool_name))
    member = "file_path";
  else if (g_strv_contains (dir_tools, tool_name))
    member = "path";
  if (member == NULL || input == NULL)
    return NULL;

  value = input_string (input, member);
  if (value == NULL || *value == '\0')
    return NULL;

  paths = g_new0 (char *, 2);
  paths[0] = g_strdup (value);
  return paths;
}

/* The path as rules see it: relative to the workspace when inside it,
 * absolute otherwise. Sets @outside. */
static char *
rule_path (const TallyToolContext *context,
           const char             *path,
           gboolean               *outside)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *resolved = NULL;

  *outside = FALSE;
  resolved = tally_tool_resolve_path (context, path, outside, &error);
  if (resolved == NULL)
    {
      /* No workspace, or a path that cannot be resolved: treat it as
       * outside, so it asks rather than runs. */
      *outside = TRUE;
      return g_canonicalize_filename (path, NULL);
    }

  if (!*outside && context->workspace != NULL)
    return tally_tool_relative_path (context->workspace, resolved);

  return g_steal_pointer (&resolved);
}

static gboolean
spec_matches_path (const char *spec,
                   const char *path)
{
  g_autoptr(GRegex) regex = NULL;

  if (strpbrk (spec, "*?[{") == NULL)
    return g_str_equal (spec, path);

  regex = tally_tool_glob_to_regex (spec, NULL);
  return regex != NULL && g_regex_match (regex, path, 0, NULL);
}

static gboolean
spec_matches_command (const char *spec,
                      const char *command)
{
  g_autofree char *cmd = g_strstrip (g_strdup (command));

  if (g_str_has_suffix (spec, ":*"))
    {
      g_autofree char *prefix = g_strstrip (g_strndup (spec, strlen (spec) - 2));
      gsize len = strlen (prefix);

      return strncmp (cmd, prefix, len) == 0 &&
             (cmd[len] == '\0' || g_ascii_isspace (cmd[len]));
    }

  {
    g_autofree char *exact = g_strstrip (g_strdup (spec));
    return g_str_equal (exact, cmd);
  }
}

/*
 * Shell commands (docs/security.md, "Permission rules").
 *
 * A command rule names a command, not a prefix of a string. Before a Bash
 * rule is matched, the command is read the way a POSIX shell reads it —
 * quotes, backslashes, `$(…)`, backticks, `${…}`, subshells, operators and
 * redirections — into its simple commands. The reader errs on the side of
 * "not simple": an allow rule only ever matches a command that is exactly
 * one simple command with nothing a shell would treat specially, while a
 * deny rule is tried against every simple command found anywhere in it.
 */

typedef enum {
  SHELL_SEPARATOR    = 1 << 0,  /* ; & && || | |& */
  SHELL_SUBSTITUTION = 1 << 1,  /* $(…) `…` <(…) >(…) $((…)) $[…] */
  SHELL_REDIRECTION  = 1 << 2,  /* < > >> 2> &> <<… */
  SHELL_GROUP        = 1 << 3,  /* ( ) { } and reserved words */
  SHELL_NEWLINE      = 1 << 4,  /* a newline or carriage return, quoted or not */
  SHELL_CONTROL      = 1 << 5,  /* another control character */
  SHELL_EXPANSION    = 1 << 6,  /* ${…} beyond a plain name, $'…' */
  SHELL_COMMENT      = 1 << 7,  /* # … */
  SHELL_AMBIGUOUS    = 1 << 8,  /* read differently by bash and dash */
} ShellFeatures;

#define MAX_SHELL_DEPTH 32

typedef struct {
  guint      features;
  GPtrArray *parts;     /* GStrv: the words of each simple command */
} ShellScan;

typedef struct {
  ShellScan *scan;
  GPtrArray *words;
  GString   *word;
  gboolean   in_word;
  gboolean   drop_word; /* the word being read is a redirection target */
} ShellList;

static gboolean scan_list   (ShellScan   *scan,
                             const char **pp,
                             char         terminator,
                             guint        depth);
static gboolean scan_dollar (ShellScan   *scan,
                             const char **pp,
                             GString     *word,
                             guint        depth);

static const char *const reserved_words[] = {
  "!", "{", "}", "[[", "]]", "if", "then", "else", "elif", "fi", "do", "done",
  "while", "until", "for", "in", "case", "esac", "select", "function", "time",
  "coproc", NULL
};

static void
list_end_word (ShellList *list)
{
  if (!list->in_word)
    return;

  if (list->drop_word)
    list->drop_word = FALSE;
  else
    g_ptr_array_add (list->words, g_strdup (list->word->str));

  g_string_truncate (list->word, 0);
  list->in_word = FALSE;
}

static void
list_end_part (ShellList *list)
{
  list_end_word (list);
  list->drop_word = FALSE;

  if (list->words->len == 0)
    return;

  if (g_strv_contains (reserved_words, g_ptr_array_index (list->words, 0)))
    list->scan->features |= SHELL_GROUP;

  g_ptr_array_add (list->words, NULL);
  g_ptr_array_add (list->scan->parts, g_ptr_array_steal (list->words, NULL));
}

/* Reads a backtick substitution whose opening backtick *pp points at; its
 * text, with the backslashes that quote ` \ $ removed, is read as a
 * command of its own. */
static gboolean
scan_backtick (ShellScan   *scan,
               const char **pp,
               GString     *word,
               guint        depth)
{
  const char *start = *pp;
  const char *p = start + 1;
  g_autoptr(GString) inner = g_string_new (NULL);
  const char *ip;

  scan->features |= SHELL_SUBSTITUTION;

  for (;;)
    {
      if (*p == '\0')
        return FALSE;
      if (*p == '`')
        break;
      if (*p == '\\' && p[1] != '\0')
        {
          if (p[1] == '`' || p[1] == '\\' || p[1] == '$')
            g_string_append_c (inner, p[1]);
          else
            g_string_append_len (inner, p, 2);
          p += 2;
          continue;
        }
      g_string_append_c (inner, *p++);
    }
  p++;

  ip = inner->str;
  if (!scan_list (scan, &ip, '\0', depth + 1))
    return FALSE;

  g_string_append_len (word, start, p - start);
  *pp = p;
  return TRUE;
}

/* Reads a double-quoted string whose opening quote *pp points at. */
static gboolean
scan_dquote (ShellScan   *scan,
             const char **pp,
             GString     *word,
             guint        depth)
{
  const char *p = *pp + 1;

  for (;;)
    {
      switch (*p)
        {
        case '\0':
          return FALSE;

        case '"':
          *pp = p + 1;
          return TRUE;

        case '\\':
          if (p[1] == '$' || p[1] == '`' || p[1] == '"' || p[1] == '\\')
            {
              g_string_append_c (word, p[1]);
              p += 2;
            }
          else if (p[1] == '\n')
            p += 2;
          else
            g_string_append_c (word, *p++);
          break;

        case '`':
          if (!scan_backtick (scan, &p, word, depth))
            return FALSE;
          break;

        case '$':
          if (!scan_dollar (scan, &p, word, depth))
            return FALSE;
          break;

        default:
          g_string_append_c (word, *p++);
          break;
        }
    }
}

static gboolean
is_name_start (char c)
{
  return g_ascii_isalpha (c) || c == '_';
}

static gboolean
is_name_char (char c)
{
  return g_ascii_isalnum (c) || c == '_';
}

/* Reads `${…}` beyond a plain name: it may hold quotes, substitutions and
 * nested expansions, all of which count. */
static gboolean
scan_brace_expansion (ShellScan   *scan,
                      const char **pp,
                      guint        depth)
{
  const char *p = *pp;
  g_autoptr(GString) scratch = g_string_new (NULL);

  for (;;)
    {
      switch (*p)
        {
        case '\0':
          return FALSE;

        case '}':
          *pp = p + 1;
          return TRUE;

        case '\\':
          p += p[1] != '\0' ? 2 : 1;
          break;

        case '\'':
          {
            const char *end = strchr (p + 1, '\'');

            if (end == NULL)
              return FALSE;
            p = end + 1;
          }
          break;

        case '"':
          if (!scan_dquote (scan, &p, scratch, depth))
            return FALSE;
          break;

        case '`':
          if (!scan_backtick (scan, &p, scratch, depth))
            return FALSE;
          break;

        case '$':
          if (!scan_dollar (scan, &p, scratch, depth))
            return FALSE;
          break;

        default:
          p++;
          break;
        }
    }
}

/* Reads what follows a `$` that *pp points at, appending its source text
 * to @word. */
static gboolean
scan_dollar (ShellScan   *scan,
             const char **pp,
             GString     *word,
             guint        depth)
{
  const char *start = *pp;
  const char *p = start + 1;

  if (depth >= MAX_SHELL_DEPTH)
    return FALSE;

  switch (*p)
    {
    case '(':
      /* $(…) and $((…)): the inner text is read as commands either way;
       * an arithmetic expression just yields odd words. */
      scan->features |= SHELL_SUBSTITUTION;
      p++;
      if (!scan_list (scan, &p, ')', depth + 1))
        return FALSE;
      break;

    case '[':
      /* $[…], bash's old arithmetic; dash leaves it alone. */
      scan->features |= SHELL_SUBSTITUTION | SHELL_AMBIGUOUS;
      p++;
      break;

    case '{':
      {
        const char *q = p + 1;

        if (is_name_start (*q))
          {
            while (is_name_char (*q))
              q++;
          }
        else if (g_ascii_isdigit (*q) || (*q != '\0' && strchr ("@*#?$!-", *q) != NULL))
          q++;

        if (q > p + 1 && *q == '}')
          {
            p = q + 1;
            break;
          }

        scan->features |= SHELL_EXPANSION;
        p++;
        if (!scan_brace_expansion (scan, &p, depth + 1))
          return FALSE;
      }
      break;

    case '\'':
      /* $'…': bash reads backslash escapes inside, dash reads `$` and a
       * plain single-quoted string. Read it bash's way and mark it. */
      scan->features |= SHELL_EXPANSION | SHELL_AMBIGUOUS;
      p++;
      while (*p != '\'')
        {
          if (*p == '\0')
            return FALSE;
          p += (*p == '\\' && p[1] != '\0') ? 2 : 1;
        }
      p++;
      break;

    case '"':
      /* $"…", a translated string: a double-quoted string to us. */
      if (!scan_dquote (scan, &p, word, depth))
        return FALSE;
      *pp = p;
      return TRUE;

    default:
      break;
    }

  g_string_append_len (word, start, p - start);
  *pp = p;
  return TRUE;
}

static gboolean
word_is_digits (GString *word)
{
  if (word->len == 0)
    return FALSE;
  for (gsize i = 0; i < word->len; i++)
    if (!g_ascii_isdigit (word->str[i]))
      return FALSE;
  return TRUE;
}

/* Reads a list of commands up to @terminator (`)` or the end). */
static gboolean
scan_list (ShellScan   *scan,
           const char **pp,
           char         terminator,
           guint        depth)
{
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) word = g_string_new (NULL);
  ShellList list = { scan, words, word, FALSE, FALSE };
  const char *p = *pp;

  if (depth >= MAX_SHELL_DEPTH)
    return FALSE;

  for (;;)
    {
      char c = *p;

      if (c == '\0')
        {
          if (terminator != '\0')
            return FALSE;
          list_end_part (&list);
          *pp = p;
          return TRUE;
        }

      switch (c)
        {
        case ' ':
        case '\t':
          list_end_word (&list);
          p++;
          break;

        case '\n':
          scan->features |= SHELL_NEWLINE;
          list_end_part (&list);
          p++;
          break;

        case ';':
        case '&':
        case '|':
          scan->features |= SHELL_SEPARATOR;
          list_end_part (&list);
          p++;
          break;

        case '(':
          scan->features |= SHELL_GROUP;
          list_end_part (&list);
          p++;
          if (!scan_list (scan, &p, ')', depth + 1))
            return FALSE;
          break;

        case ')':
          if (terminator != ')')
            return FALSE;
          list_end_part (&list);
          *pp = p + 1;
          return TRUE;

        case '<':
        case '>':
          if (p[1] == '(')
            {
              const char *start = p;

              scan->features |= SHELL_SUBSTITUTION;
              p += 2;
              if (!scan_list (scan, &p, ')', depth + 1))
                return FALSE;
              g_string_append_len (word, start, p - start);
              list.in_word = TRUE;
              break;
            }

          scan->features |= SHELL_REDIRECTION;
          /* A file descriptor number right before the operator is part of
           * it (`2>`), not a word of the command. */
          if (list.in_word && !list.drop_word && word_is_digits (word))
            {
              g_string_truncate (word, 0);
              list.in_word = FALSE;
            }
          else
            list_end_word (&list);
          while (*p != '\0' && strchr ("<>&|-", *p) != NULL)
            p++;
          list.drop_word = TRUE;
          break;

        case '#':
          if (list.in_word)
            {
              g_string_append_c (word, *p++);
              break;
            }
          scan->features |= SHELL_COMMENT;
          while (*p != '\0' && *p != '\n')
            p++;
          break;

        case '{':
        case '}':
          scan->features |= SHELL_GROUP;
          g_string_append_c (word, *p++);
          list.in_word = TRUE;
          break;

        case '\\':
          if (p[1] == '\n')
            {
              scan->features |= SHELL_NEWLINE;
              p += 2;
              break;
            }
          if (p[1] != '\0')
            p++;
          g_string_append_c (word, *p++);
          list.in_word = TRUE;
          break;

        case '\'':
          {
            const char *end = strchr (p + 1, '\'');

            if (end == NULL)
              return FALSE;
            g_string_append_len (word, p + 1, end - (p + 1));
            p = end + 1;
            list.in_word = TRUE;
          }
          break;

        case '"':
          if (!scan_dquote (scan, &p, word, depth))
            return FALSE;
          list.in_word = TRUE;
          break;

        case '`':
          if (!scan_backtick (scan, &p, word, depth))
            return FALSE;
          list.in_word = TRUE;
          break;

        case '$':
          if (!scan_dollar (scan, &p, word, depth))
            return FALSE;
          list.in_word = TRUE;
          break;

        default:
          g_string_append_c (word, *p++);
          list.in_word = TRUE;
          break;
        }
    }
}

/* Reads @command; %FALSE when it cannot be read (unbalanced quotes or
 * parentheses, nesting too deep). @scan is filled either way with what
 * was found. */
static gboolean
shell_scan (const char *command,
            ShellScan  *scan)
{
  const char *p = command;

  scan->features = 0;
  scan->parts = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);

  for (const guchar *c = (const guchar *) command; *c != '\0'; c++)
    {
      if (*c == '\n' || *c == '\r')
        scan->features |= SHELL_NEWLINE;
      else if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
        scan->features |= SHELL_CONTROL;
    }

  return scan_list (scan, &p, '\0', 0);
}

/**
 * tally_gate_split_command:
 * @command: a shell command, as the `Bash` tool would pass it to `/bin/sh -c`
 * @simple: (out) (optional): set to %TRUE when @command is exactly one
 *   simple command with nothing a shell treats specially: no command
 *   separator (`;`, `&`, `&&`, `||`, `|`), no substitution (`$(…)`,
 *   backticks, `<(…)`, `$((…))`), no redirection, no subshell, brace or
 *   reserved word, no `${…}` beyond a plain name, no `$'…'`, no comment,
 *   no newline or other control character (quoted or not); %FALSE otherwise,
 *   and whenever @command cannot be read
 *
 * Splits @command into the simple commands a POSIX shell would run,
 * wherever they stand: between separators and inside substitutions,
 * subshells and groups. Quoting is respected: a `;` inside quotes or after
 * a backslash separates nothing. The words of a redirection are left out.
 * The text given to `sh -c` is not entered here; deny rules do that (see
 * tally_gate_rule_applies()). Pure: no file is read, nothing is run.
 *
 * Returns: (transfer full) (nullable) (array zero-terminated=1): one string
 *   per simple command, its words with the quotes removed and joined by one
 *   space (substitutions inside a word are kept as written); %NULL when
 *   @command cannot be read: unbalanced quotes, parentheses or backticks, or
 *   nesting deeper than 32 levels. Free with g_strfreev().
 */
char **
tally_gate_split_command (const char *command,
                          gboolean   *simple)
{
  ShellScan scan;
  gboolean ok;
  GPtrArray *joined;

  if (simple != NULL)
    *simple = FALSE;
  g_return_val_if_fail (command != NULL, NULL);

  ok = shell_scan (command, &scan);
  if (!ok)
    {
      g_ptr_array_unref (scan.parts);
      return NULL;
    }

  if (simple != NULL)
    *simple = scan.features == 0 && scan.parts->len == 1;

  joined = g_ptr_array_new ();
  for (guint i = 0; i < scan.parts->len; i++)
    g_ptr_array_add (joined, g_strjoinv (" ", g_ptr_array_index (scan.parts, i)));
  g_ptr_array_add (joined, NULL);
  g_ptr_array_unref (scan.parts);

  return (char **) g_ptr_array_free (joined, FALSE);
}

/* Programs that run the rest of their arguments as a command. */
static const char *const wrapper_programs[] = {
  "builtin", "command", "doas", "env", "eval", "exec", "ionice", "nice", "nohup",
  "setsid", "stdbuf", "sudo", "time", "timeout", "xargs", NULL
};

/* Options after which `find` runs a command. */
static const char *const exec_options[] = {
  "-exec", "-execdir", "-ok", "-okdir", NULL
};

static const char *const shell_programs[] = {
  "sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox", NULL
};

#define MAX_DENY_DEPTH 8

static gboolean deny_matches_command (const char *spec,
                                      const char *command,
                                      guint       depth);

static const char *
base_name (const char *word)
{
  const char *slash = strrchr (word, '/');

  return slash != NULL && slash[1] != '\0' ? slash + 1 : word;
}

static gboolean
is_assignment (const char *word)
{
  const char *p = word;

  if (!is_name_start (*p))
    return FALSE;
  while (is_name_char (*p))
    p++;
  return *p == '=' || (p[0] == '+' && p[1] == '=');
}

/* The words from @from on joined by single spaces, with @first in place of
 * words[@from], stopping once the text is longer than @cap bytes: enough
 * to compare with a spec of @cap - 1 bytes, at a cost that does not grow
 * with the length of the command. */
static char *
join_words_capped (const char         *first,
                   const char * const *words,
                   guint               from,
                   gsize               cap)
{
  GString *joined = g_string_new (first);

  for (guint i = from + 1; words[i] != NULL && joined->len <= cap; i++)
    {
      g_string_append_c (joined, ' ');
      g_string_append (joined, words[i]);
    }

  return g_string_free (joined, FALSE);
}

/* Tries @spec against the words from @from on, as written and with the
 * program named by its base name (`/bin/rm` as `rm`). */
static gboolean
spec_matches_words_from (const char         *spec,
                         const char * const *words,
                         guint               from)
{
  gsize cap = strlen (spec) + 1;
  g_autofree char *joined = join_words_capped (words[from], words, from, cap);
  const char *base = base_name (words[from]);

  if (spec_matches_command (spec, joined))
    return TRUE;

  if (base != words[from])
    {
      g_autofree char *rebased = join_words_capped (base, words, from, cap);

      return spec_matches_command (spec, rebased);
    }

  return FALSE;
}

/* Whether a deny @spec covers one simple command: as written, after its
 * variable assignments and reserved words, after a wrapper program
 * (`sudo`, `env`, `xargs`, … at any later word, so their options do not
 * hide the command), after `find -exec`, and inside `sh -c TEXT`. */
static gboolean
deny_matches_words (const char         *spec,
                    const char * const *words,
                    guint               depth)
{
  guint n = g_strv_length ((char **) words);
  guint start = 0;
  gboolean open = FALSE;

  if (n == 0)
    return FALSE;

  if (spec_matches_words_from (spec, words, 0))
    return TRUE;

  while (start < n && (is_assignment (words[start]) || g_strv_contains (reserved_words, words[start])))
    start++;

  for (guint i = start; i < n; i++)
    {
      if ((i == start || open) && spec_matches_words_from (spec, words, i))
        return TRUE;
      if ((i == start && g_strv_contains (wrapper_programs, base_name (words[i]))) ||
          g_strv_contains (exec_options, words[i]))
        open = TRUE;
    }

  if (start < n && g_strv_contains (shell_programs, base_name (words[start])))
    {
      for (guint i = start + 1; i + 1 < n; i++)
        {
          const char *w = words[i];

          if (w[0] == '-' && w[1] != '-' && strchr (w, 'c') != NULL &&
              deny_matches_command (spec, words[i + 1], depth + 1))
            return TRUE;
        }
    }

  return FALSE;
}

/* A last resort for commands that could not be read, or that bash and
 * dash read differently: cut at every character that could end a
 * command, quoted or not, drop the quote characters and try each piece. */
static gboolean
deny_matches_pieces (const char *spec,
                     const char *command,
                     guint       depth)
{
  g_auto(GStrv) pieces = g_strsplit_set (command, ";&|()<>`\n\r{}$", -1);

  for (guint i = 0; pieces[i] != NULL; i++)
    {
      g_autoptr(GString) bare = g_string_new (NULL);
      g_auto(GStrv) words = NULL;
      g_autoptr(GPtrArray) kept = g_ptr_array_new ();

      for (const char *p = pieces[i]; *p != '\0'; p++)
        if (*p != '\'' && *p != '"' && *p != '\\')
          g_string_append_c (bare, *p);

      words = g_strsplit_set (bare->str, " \t", -1);
      for (guint j = 0; words[j] != NULL; j++)
        if (words[j][0] != '\0')
          g_ptr_array_add (kept, words[j]);
      g_ptr_array_add (kept, NULL);

      if (deny_matches_words (spec, (const char * const *) kept->pdata, depth))
        return TRUE;
    }

  return FALSE;
}

/* Whether a deny @spec covers @command anywhere: the whole command as
 * written, or any simple command found in it. */
static gboolean
deny_matches_command (const char *spec,
                      const char *command,
                      guint       depth)
{
  ShellScan scan;
  gboolean ok;
  gboolean matched = FALSE;

  if (spec_matches_command (spec, command))
    return TRUE;
  if (depth >= MAX_DENY_DEPTH)
    return FALSE;

  ok = shell_scan (command, &scan);
  for (guint i = 0; !matched && i < scan.parts->len; i++)
    matched = deny_matches_words (spec, g_ptr_array_index (scan.parts, i), depth);
  g_ptr_array_unref (scan.parts);

  if (!matched && (!ok || (scan.features & SHELL_AMBIGUOUS) != 0))
    matched = deny_matches_pieces (spec, command, depth);

  return matched;
}

/* Whether an allow @spec covers @command: only ever a single simple
 * command (tally_gate_split_command()), matched as written. */
static gboolean
allow_matches_command (const char *spec,
                       const char *command)
{
  g_auto(GStrv) parts = NULL;
  gboolean simple = FALSE;

  parts = tally_gate_split_command (command, &simple);
  return parts != NULL && simple && spec_matches_command (spec, command);
}

/**
 * tally_gate_rule_applies:
 * @rule: a rule: its pattern (see #TallyGateRule) and whether it allows or
 *   denies
 * @tool_name: the tool called
 * @input: (nullable): the call's input object
 * @context: (nullable): the workspace the call runs in; used only by rules
 *   over paths
 *
 * Matches one rule against one call (docs/architecture.md §6.2,
 * docs/security.md "Permission rules"). A pattern that is not `Tool` or
 * `Tool(spec)` matches nothing.
 *
 * * A bare `Tool` matches every call of the tool.
 * * `Bash(cmd)` names the command `cmd` (surrounding blanks ignored) and
 *   `Bash(prefix:*)` the command `prefix` and every command that starts with
 *   `prefix` and a blank. As an **allow** rule it matches only when the
 *   whole command is one simple command (tally_gate_split_command() says
 *   it is simple): a command with separators, pipes, substitutions,
 *   redirections, subshells, braces, a newline, or anything the reader
 *   cannot read is never allowed by a rule. As a **deny** rule it matches
 *   when it covers the whole command as written or any simple command
 *   inside it — also after variable assignments, after wrapper programs
 *   such as `sudo`, `env`, `xargs` and `find -exec`, with a program path
 *   taken by its base name, and inside the text of `sh -c`; a command that
 *   cannot be read is also cut at every shell operator character and each
 *   piece tried.
 * * For file tools the spec is a glob over the path relative to the
 *   workspace (or the absolute path outside it): `*` within a folder, `**`
 *   across folders; the path is resolved first (symbolic links, and the
 *   quoted form of tally_tool_escape_path()), which reads the file system.
 *   Rules for `Edit` also cover `Write`: both are edits.
 *
 * For `Bash` rules the function is pure (it reads no file and keeps no
 * state), so it can be called from a fuzz target with any strings.
 *
 * Returns: %TRUE when the rule covers the call
 */
gboolean
tally_gate_rule_applies (const TallyGateRule    *rule,
                         const char             *tool_name,
                         JsonObject             *input,
                         const TallyToolContext *context)
{
  g_autofree char *name = NULL;
  g_autofree char *spec = NULL;
  g_auto(GStrv) paths = NULL;

  g_return_val_if_fail (rule != NULL, FALSE);

  if (tool_name == NULL || !parse_pattern (rule->pattern, &name, &spec))
    return FALSE;

  if (!g_str_equal (name, tool_name) &&
      !(g_str_equal (name, "Edit") && is_edit_tool (tool_name)))
    return FALSE;

  if (spec == NULL)
    return TRUE;

  if (g_str_equal (tool_name, "Bash"))
    {
      const char *command = input_string (input, "command");

      if (command == NULL)
        return FALSE;
      return rule->allow ? allow_matches_command (spec, command)
                         : deny_matches_command (spec, command, 0);
    }

  paths = call_paths (tool_name, input);
  if (paths == NULL)
    return FALSE;

  for (guint i = 0; paths[i] != NULL; i++)
    {
      gboolean outside;
      g_autofree char *path = rule_path (context, paths[i], &outside);

      if (!spec_matches_path (spec, path))
        return FALSE;
    }

  return TRUE;
}

/**
 * tally_gate_rule_matches:
 * @pattern: a rule pattern (see #TallyGateRule)
 * @tool_name: the tool called
 * @input: (nullable): the call's input object
 * @context: (nullable): the workspace the call runs in
 *
 * Matches @pattern as an allow rule: the strict reading of
 * tally_gate_rule_applies(), under which a `Bash` command rule covers only
 * one simple command. Whatever this matches, the same pattern as a deny
 * rule matches too.
 *
 * Returns: %TRUE when an allow rule with @pattern covers the call
 */
gboolean
tally_gate_rule_matches (const char             *pattern,
                         const char             *tool_name,
                         JsonObject             *input,
                         const TallyToolContext *context)
{
  TallyGateRule rule = { (char *) pattern, TRUE };

  return tally_gate_rule_applies (&rule, tool_name, input, context);
}

static gboolean
touches_outside (const char             *tool_name,
                 JsonObject             *input,
                 const TallyToolContext *context)
{
  g_auto(GStrv) paths = call_paths (tool_name, input);

  for (guint i = 0; paths != NULL && paths[i] != NULL; i++)
    {
      gboolean outside;
      g_autofree char *path = rule_path (context, paths[i], &outside);

      if (outside)
        return TRUE;
    }

  return FALSE;
}

static const char *
first_matching_rule (GPtrArray              *rules,
                     gboolean                allow,
                     const char             *tool_name,
                     JsonObject             *input,
                     const TallyToolContext *context)
{
  for (guint i = 0; rules != NULL && i < rules->len; i++)
    {
      TallyGateRule *rule = g_ptr_array_index (rules, i);

      if (rule->allow == allow &&
          tally_gate_rule_applies (rule, tool_name, input, context))
        return rule->pattern;
    }

  return NULL;
}

/**
 * tally_gate_evaluate:
 * @rules: (nullable) (element-type TallyGateRule): the rules in force for
 *   this workspace and session
 * @tool_name: the tool called
 * @tool: (nullable): the tool, when Tally has one by that name
 * @input: the call's input
 * @mode: the turn's mode
 * @context: the workspace the call runs in
 * @verdict: (out caller-allocates): the decision; clear it with
 *   tally_gate_verdict_clear()
 *
 * Decides one tool call in the order of docs/architecture.md §6.1 (see the
 * top of this file).
 * Messages for refusals are written for the model to read.
 */
void
tally_gate_evaluate (GPtrArray              *rules,
                     const char             *tool_name,
                     TallyTool              *tool,
                     JsonObject             *input,
                     TallyMode               mode,
                     const TallyToolContext *context,
                     TallyGateVerdict       *verdict)
{
  const char *rule;
  gboolean read_only;

  memset (verdict, 0, sizeof *verdict);

  if (g_strcmp0 (tool_name, "AskUserQuestion") == 0)
    {
      verdict->action = TALLY_GATE_QUESTION;
      return;
    }
  if (g_strcmp0 (tool_name, "ExitPlanMode") == 0)
    {
      verdict->action = TALLY_GATE_PLAN;
      return;
    }

  read_only = tool != NULL && tally_tool_is_read_only (tool);
  verdict->outside = touches_outside (tool_name, input, context);

  rule = first_matching_rule (rules, FALSE, tool_name, input, context);
  if (rule != NULL)
    {
      verdict->action = TALLY_GATE_DENY;
      verdict->reason = "rule";
      verdict->rule = g_strdup (rule);
      verdict->message = g_strdup_printf ("The analyst's rule “%s” forbids this call, so it did not "
                                          "run. Do not try it again another way; if it is needed, "
                                          "explain why and let the analyst decide.", rule);
      return;
    }

  if (mode == TALLY_MODE_PLAN && !read_only)
    {
      verdict->action = TALLY_GATE_DENY;
      verdict->reason = "mode";
      verdict->message = g_strdup_printf ("Plan mode is on, so %s did not run: nothing may change "
                                          "while planning. Keep exploring with read-only tools and "
                                          "put this step in the plan you hand over with ExitPlanMode.",
                                          tool_name);
      return;
    }

  if (verdict->outside)
    {
      verdict->action = TALLY_GATE_ASK;
      return;
    }

  rule = first_matching_rule (rules, TRUE, tool_name, input, context);
  if (rule != NULL)
    {
      verdict->action = TALLY_GATE_ALLOW;
      verdict->reason = "rule";
      verdict->rule = g_strdup (rule);
      return;
    }

  if (read_only ||
      (tool != NULL && tally_tool_adds_files_only (tool)) ||
      (mode == TALLY_MODE_AUTO && is_edit_tool (tool_name)))
    {
      verdict->action = TALLY_GATE_ALLOW;
      verdict->reason = "mode";
      return;
    }

  verdict->action = TALLY_GATE_ASK;
}

static void
add_suggestion (JsonArray  *suggestions,
                const char *rule,
                const char *scope,
                const char *label)
{
  JsonObject *object = json_object_new ();

  json_object_set_string_member (object, "rule", rule);
  json_object_set_string_member (object, "scope", scope);
  json_object_set_string_member (object, "label", label);
  json_array_add_object_element (suggestions, object);
}

static char *
command_prefix (const char *command)
{
  g_auto(GStrv) words = NULL;

  words = g_strsplit_set (command, " \t", -1);
  {
    GPtrArray *kept = g_ptr_array_new ();
    char *prefix;

    for (guint i = 0; words[i] != NULL && kept->len < 2; i++)
      {
        if (words[i][0] == '\0')
          continue;
        /* Stop at options and shell syntax: the prefix names the program
         * and at most its subcommand. */
        if (kept->len == 1 && (words[i][0] == '-' || strpbrk (words[i], "|&;<>$`'\"") != NULL))
          break;
        g_ptr_array_add (kept, words[i]);
      }
    g_ptr_array_add (kept, NULL);
    prefix = g_strjoinv (" ", (char **)kept->pdata);
    g_ptr_array_free (kept, TRUE);
    return prefix;
  }
}

/**
 * tally_gate_dup_suggestions:
 * @tool_name: the tool called
 * @input: the call's input
 * @context: the workspace
 *
 * The "always allow" rules an approval card offers, most specific first:
 * for `Bash` the exact command and its program prefix, and nothing for a
 * command that is not one simple command (no rule could allow it); for edits the folder
 * of the file and "edits in this workspace for this session"; nothing for a
 * path outside the workspace, which asks whatever the rules say; otherwise
 * the whole tool. Each item is
 * `{rule, scope, label}` with scope `session`, `workspace` or `global`
 * (docs/architecture.md §6.3).
 *
 * Returns: (transfer full): the suggestions, possibly empty
 */
JsonArray *
tally_gate_dup_suggestions (const char             *tool_name,
                            JsonObject             *input,
                            const TallyToolContext *context)
{
  JsonArray *suggestions = json_array_new ();

  if (g_strcmp0 (tool_name, "Bash") == 0)
    {
      const char *command = input_string (input, "command");
      g_autofree char *trimmed = NULL;
      g_autofree char *prefix = NULL;
      g_auto(GStrv) parts = NULL;
      gboolean simple = FALSE;

      /* A rule never allows a command that is not one simple command
       * (tally_gate_rule_applies()), so none is offered for it: the card
       * allows it once or not at all. */
      if (command != NULL)
        parts = tally_gate_split_command (command, &simple);
      if (!simple)
        return suggestions;

      trimmed = g_strstrip (g_strdup (command));
      prefix = command_prefix (trimmed);

      if (*trimmed != '\0')
        {
          g_autofree char *rule = g_strdup_printf ("Bash(%s)", trimmed);
          g_autofree char *label = g_strdup_printf (_("Always allow “%s” in this workspace"), trimmed);
          add_suggestion (suggestions, rule, "workspace", label);
        }
      if (*prefix != '\0' && !g_str_equal (prefix, trimmed))
        {
          g_autofree char *rule = g_strdup_printf ("Bash(%s:*)", prefix);
          g_autofree char *label = g_strdup_printf (_("Always allow commands starting with “%s” in this workspace"),
                                                    prefix);
          add_suggestion (suggestions, rule, "workspace", label);
        }
      return suggestions;
    }

  {
    g_auto(GStrv) paths = call_paths (tool_name, input);

    if (paths != NULL && paths[0] != NULL)
      {
        gboolean outside;
        g_autofree char *path = rule_path (context, paths[0], &outside);
        g_autofree char *dir = g_path_get_dirname (path);
        const char *rule_tool = is_edit_tool (tool_name) ? "Edit" : tool_name;

        /* A path outside the workspace asks whatever the rules say (step
         * 4 of docs/architecture.md §6.1), so no rule is offered for it:
         * it could never apply. The card allows it once or not at all. */
        if (outside)
          return suggestions;

        /* A rule's spec is a glob, so a folder or file whose name holds
         * glob characters cannot be named by one: a folder named with two
         * stars made a rule that matched every file. No rule is offered
         * then, and the card allows the call once or not at all (found by
         * a reviewer). */
        if (strpbrk (path, "*?[{\\") != NULL)
          return suggestions;

        if (!g_str_equal (dir, "."))
          {
            g_autofree char *rule = g_strdup_printf ("%s(%s/**)", rule_tool, dir);
            g_autofree char *label = is_edit_tool (tool_name)
              ? g_strdup_printf (_("Always allow changes to files under %s/"), dir)
              : g_strdup_printf (_("Always allow %s in %s/"), tool_name, dir);
            add_suggestion (suggestions, rule, "workspace", label);
          }
        else if (is_edit_tool (tool_name))
          {
            /* A file at the top of the workspace: the rule names the file
             * (a spec without wildcards matches exactly), so the first
             * offer is never every file (docs/architecture.md §6.3). */
            g_autofree char *rule = g_strdup_printf ("Edit(%s)", path);
            g_autofree char *label = g_strdup_printf (_("Always allow changes to %s"), path);
            add_suggestion (suggestions, rule, "workspace", label);
          }

        if (is_edit_tool (tool_name))
          add_suggestion (suggestions, "Edit(**)", "session",
                          _("Allow changes to any file in this workspace for this session"));
        return suggestions;
      }

    /* A file tool whose call names no usable file: a rule would have to
     * name the tool alone, which allows it on every file, so none is
     * offered (the agent refuses such a call before its card anyway,
     * tally_tool_check_input_schema()). */
    if (names_a_file (tool_name))
      return suggestions;
  }

  {
    g_autofree char *label = g_strcmp0 (tool_name, "query_database") == 0
      ? g_strdup (_("Always allow queries on this database in this workspace"))
      : g_strdup_printf (_("Always allow %s in this workspace"), tool_name);
    add_suggestion (suggestions, tool_name, "workspace", label);
  }

  return suggestions;
}
