/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <string.h>

#include "tally-sql-format.h"

/*
 * A small layout pass over SQLite statements for reading them in the
 * window: the clauses of a long one-line statement on lines of their own.
 * It is not a parser. It splits the text into tokens (words, string
 * literals, quoted identifiers, comments, parentheses, other characters)
 * and only ever replaces the white space between two tokens by a line
 * break and indentation, or inserts one where there was none; every token
 * is copied as it is, so string literals, quoted identifiers and the
 * keywords' case are never changed.
 */

typedef enum {
  TOKEN_SPACE,
  TOKEN_WORD,
  TOKEN_LITERAL,   /* 'string', "identifier", `identifier`, [identifier] */
  TOKEN_COMMENT,
  TOKEN_OPEN,
  TOKEN_CLOSE,
  TOKEN_OTHER,
} TokenType;

typedef struct {
  TokenType   type;
  const char *start;
  gsize       len;
} Token;

/* A parenthesis being read: a subquery's (its clauses get lines of their
 * own, indented) or any other (a call, a list: left on its line). */
typedef struct {
  gboolean subquery;
  guint    indent;
  gboolean between;  /* a BETWEEN waits for its AND */
} Frame;

#define INDENT 2

static gboolean
is_word_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '$' || (guchar) c >= 0x80;
}

/* The end of a quoted token starting at @p with the quote @open, closed
 * by @close; a doubled closing quote stands for itself. An unterminated
 * one runs to the end. */
static const char *
skip_quoted (const char *p,
             char        close)
{
  for (p++; *p != '\0'; p++)
    if (*p == close)
      {
        if (close != ']' && p[1] == close)
          p++;
        else
          return p + 1;
      }
  return p;
}

static GArray *
tokenize (const char *sql)
{
  GArray *tokens = g_array_new (FALSE, FALSE, sizeof (Token));
  const char *p = sql;

  while (*p != '\0')
    {
      Token token = { TOKEN_OTHER, p, 0 };
      const char *end = p + 1;

      if (g_ascii_isspace (*p))
        {
          token.type = TOKEN_SPACE;
          while (g_ascii_isspace (*end))
            end++;
        }
      else if (*p == '\'' || *p == '"' || *p == '`' || *p == '[')
        {
          token.type = TOKEN_LITERAL;
          end = skip_quoted (p, *p == '[' ? ']' : *p);
        }
      else if (p[0] == '-' && p[1] == '-')
        {
          token.type = TOKEN_COMMENT;
          end = p + strcspn (p, "\n");
        }
      else if (p[0] == '/' && p[1] == '*')
        {
          const char *close = strstr (p + 2, "*/");

          token.type = TOKEN_COMMENT;
          end = close != NULL ? close + 2 : p + strlen (p);
        }
      else if (is_word_char (*p))
        {
          token.type = TOKEN_WORD;
          while (is_word_char (*end) || *end == '.')
            end++;
        }
      else if (*p == '(')
        token.type = TOKEN_OPEN;
      else if (*p == ')')
        token.type = TOKEN_CLOSE;

      token.len = end - p;
      g_array_append_val (tokens, token);
      p = end;
    }
  return tokens;
}

static gboolean
word_is (const Token *token,
         const char  *word)
{
  return token != NULL && token->type == TOKEN_WORD && token->len == strlen (word) &&
         g_ascii_strncasecmp (token->start, word, token->len) == 0;
}

static gboolean
word_in (const Token        *token,
         const char * const *words)
{
  for (guint i = 0; words[i] != NULL; i++)
    if (word_is (token, words[i]))
      return TRUE;
  return FALSE;
}

/* The next token after @i that is not white space, or NULL. */
static const Token *
next_token (GArray *tokens,
            guint   i)
{
  for (i++; i < tokens->len; i++)
    if (g_array_index (tokens, Token, i).type != TOKEN_SPACE)
      return &g_array_index (tokens, Token, i);
  return NULL;
}

static void
new_line (GString *out,
          guint    indent)
{
  while (out->len > 0 && out->str[out->len - 1] == ' ')
    g_string_truncate (out, out->len - 1);
  if (out->len == 0)
    return;
  g_string_append_c (out, '\n');
  for (guint i = 0; i < indent; i++)
    g_string_append_c (out, ' ');
}

/**
 * tally_sql_format:
 * @sql: an SQL statement (SQLite's dialect)
 *
 * Lays out a long one-line statement for reading: the clauses (`SELECT`,
 * `FROM`, each `JOIN`, `WHERE`, `GROUP BY`, `HAVING`, `ORDER BY`,
 * `LIMIT`, `UNION` …) each start a line, `AND` and `OR` between
 * conditions start an indented one (not the `AND` of a `BETWEEN`), and a
 * subquery in parentheses is indented by two spaces with its closing
 * parenthesis on a line of its own. Other parentheses (calls, lists,
 * `OVER (…)`) are left on their line.
 *
 * Only white space between tokens changes: string literals, quoted
 * identifiers ("…", `…`, […]), comments and the words themselves are
 * copied as they are. A statement that already spans lines, or is
 * shorter than %TALLY_SQL_FORMAT_MIN_LENGTH bytes, is returned unchanged.
 *
 * Returns: (transfer full): the statement laid out
 */
char *
tally_sql_format (const char *sql)
{
  static const char * const clauses[] = {
    "SELECT", "FROM", "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "WINDOW", "VALUES", "SET",
    "RETURNING", "UNION", "INTERSECT", "EXCEPT", NULL,
  };
  static const char * const join_words[] = {
    "LEFT", "RIGHT", "INNER", "CROSS", "FULL", "NATURAL", "OUTER", NULL,
  };
  static const char * const join_next[] = {
    "JOIN", "OUTER", "LEFT", "RIGHT", "INNER", "FULL", "CROSS", NULL,
  };
  static const char * const subquery_starts[] = { "SELECT", "WITH", "VALUES", NULL };
  g_autoptr(GArray) tokens = NULL;
  g_autoptr(GArray) frames = NULL;
  g_autoptr(GString) out = NULL;
  const Token *previous = NULL;
  const char *space = NULL;
  gsize space_len = 0;
  gboolean force_break = FALSE;
  Frame root = { TRUE, 0, FALSE };

  g_return_val_if_fail (sql != NULL, NULL);

  if (strchr (sql, '\n') != NULL || strlen (sql) < TALLY_SQL_FORMAT_MIN_LENGTH)
    return g_strdup (sql);

  tokens = tokenize (sql);
  frames = g_array_new (FALSE, FALSE, sizeof (Frame));
  g_array_append_val (frames, root);
  out = g_string_sized_new (strlen (sql) + 64);

  for (guint i = 0; i < tokens->len; i++)
    {
      const Token *token = &g_array_index (tokens, Token, i);
      Frame *frame = &g_array_index (frames, Frame, frames->len - 1);
      gboolean brk = force_break;
      guint indent = frame->indent;

      if (token->type == TOKEN_SPACE)
        {
          space = token->start;
          space_len = token->len;
          continue;
        }

      force_break = FALSE;
      if (token->type == TOKEN_WORD && frame->subquery)
        {
          if (word_in (token, clauses))
            brk = TRUE;
          else if (word_is (token, "JOIN"))
            brk = !word_in (previous, join_words);
          else if (word_in (token, join_words) && !word_is (token, "OUTER"))
            brk = word_in (next_token (tokens, i), join_next) && !word_in (previous, join_words);
          else if (word_is (token, "BETWEEN"))
            frame->between = TRUE;
          else if (word_is (token, "AND") && frame->between)
            frame->between = FALSE;
          else if (word_is (token, "AND") || word_is (token, "OR"))
            {
              brk = TRUE;
              indent += INDENT;
            }
        }
      else if (token->type == TOKEN_CLOSE && frames->len > 1)
        {
          Frame closed = *frame;

          g_array_set_size (frames, frames->len - 1);
          frame = &g_array_index (frames, Frame, frames->len - 1);
          indent = frame->indent;
          brk = closed.subquery;
        }

      if (brk)
        new_line (out, indent);
      else if (space != NULL && out->len > 0)
        g_string_append_len (out, space, space_len);
      g_string_append_len (out, token->start, token->len);
      space = NULL;

      if (token->type == TOKEN_OPEN)
        {
          Frame inner = { FALSE, frame->indent, FALSE };

          if (word_in (next_token (tokens, i), subquery_starts))
            {
              inner.subquery = TRUE;
              inner.indent += INDENT;
              force_break = TRUE;
            }
          g_array_append_val (frames, inner);
        }
      previous = token;
    }

  return g_string_free (g_steal_pointer (&out), FALSE);
}
