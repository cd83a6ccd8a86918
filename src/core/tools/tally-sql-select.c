/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-sql-select.h"
#include "tally-sensitive-columns.h"
#include "tally-tool.h"

#include <string.h>

/* The outermost select list of a statement, for the taint rule of
 * docs/ledger.md §3. A small tokenizer that knows SQLite's and
 * PostgreSQL's quotes ('…', "…", `…`, […], E'…', $tag$…$tag$) and
 * comments (--, / * … * /), so that a comma or a keyword inside them never
 * splits an item. It does not parse SQL: it finds the depth-0 SELECT, the
 * depth-0 commas after it and the depth-0 keyword that ends the list. */

typedef enum {
  TOKEN_WORD,       /* a bare word: a keyword or an identifier */
  TOKEN_QUOTED,     /* a quoted identifier */
  TOKEN_STRING,     /* a string literal */
  TOKEN_NUMBER,
  TOKEN_PUNCT,      /* one character */
} TokenKind;

typedef struct
{
  TokenKind kind;
  gsize     start;
  gsize     end;
  int       depth;  /* parentheses open before the token */
} Token;

/* Words that are never a column: reserved words of the clauses an
 * expression can hold. A column that happens to share a name with one is
 * only ever counted as less (never more) than it is when quoted; the
 * callers treat an uncounted name on the safe side (docs/ledger.md §3). */
static const char * const keywords[] = {
  "all", "and", "as", "asc", "between", "by", "case", "cross", "desc",
  "distinct", "else", "end", "escape", "except", "exists", "false", "fetch",
  "for", "from", "full", "glob", "group", "having", "ilike", "in", "inner",
  "intersect", "into", "is", "isnull", "join", "lateral", "left", "like",
  "limit", "materialized", "natural", "not", "notnull", "null", "offset",
  "on", "or", "order", "outer", "over", "partition", "recursive", "regexp",
  "right", "select", "similar", "then", "true", "union", "using", "values",
  "when", "where", "window", "with",
};

/* PostgreSQL functions that run a query given as text, or dump a table,
 * a schema or a database, and the catalog views that hold sampled column
 * values (pg_stats' most_common_vals and histogram_bounds): what they read
 * is not in the statement's text (docs/ledger.md §3). Extensions'
 * crosstab() and dblink() too. */
static const char * const query_functions[] = {
  "query_to_xml", "query_to_xml_and_xmlschema", "table_to_xml",
  "table_to_xml_and_xmlschema", "schema_to_xml", "schema_to_xml_and_xmlschema",
  "database_to_xml", "database_to_xml_and_xmlschema", "cursor_to_xml",
  "ts_stat", "ts_rewrite", "crosstab", "dblink",
  "pg_stats", "pg_stats_ext", "pg_stats_ext_exprs", "pg_statistic", "pg_statistic_ext_data",
};

/* Depth-0 words that end the select list. */
static const char * const list_ends[] = {
  "from", "where", "group", "having", "window", "order", "limit", "offset",
  "union", "intersect", "except", "into", "fetch", "for",
};

static gboolean
word_in (const char         *sql,
         const Token        *token,
         const char * const *words,
         gsize               n_words)
{
  gsize len = token->end - token->start;

  if (token->kind != TOKEN_WORD)
    return FALSE;

  for (gsize i = 0; i < n_words; i++)
    {
      if (strlen (words[i]) == len && g_ascii_strncasecmp (sql + token->start, words[i], len) == 0)
        return TRUE;
    }

  return FALSE;
}

static gboolean
is_keyword (const char  *sql,
            const Token *token)
{
  return word_in (sql, token, keywords, G_N_ELEMENTS (keywords));
}

static gboolean
is_word (const char  *sql,
         const Token *token,
         const char  *word)
{
  const char * const words[] = { word };

  return word_in (sql, token, words, 1);
}

static gboolean
is_punct (const char  *sql,
          const Token *token,
          char         c)
{
  return token->kind == TOKEN_PUNCT && sql[token->start] == c;
}

/* A name: a quoted identifier, or a bare word that is not a keyword. */
static gboolean
is_name (const char  *sql,
         const Token *token)
{
  return token->kind == TOKEN_QUOTED || (token->kind == TOKEN_WORD && !is_keyword (sql, token));
}

static gboolean
is_word_char (guchar c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '$' || c >= 0x80;
}

/* The end of a quoted run starting at p (the opening quote), where a doubled
 * closing quote is part of the text; unterminated runs end the text. */
static const char *
skip_quoted (const char *p,
             char        close,
             gboolean    backslash)
{
  for (p++; *p != '\0'; p++)
    {
      if (backslash && *p == '\\' && p[1] != '\0')
        p++;
      else if (*p == close)
        {
          if (p[1] == close && close != ']')
            p++;
          else
            return p + 1;
        }
    }

  return p;
}

/* $tag$ … $tag$ (PostgreSQL); NULL when p does not open one. */
static const char *
skip_dollar_quoted (const char *p)
{
  const char *q = p + 1;
  g_autofree char *tag = NULL;
  const char *end;

  while (*q != '\0' && *q != '$' && (g_ascii_isalnum (*q) || *q == '_'))
    q++;
  if (*q != '$' || (q > p + 1 && g_ascii_isdigit (p[1])))
    return NULL;

  tag = g_strndup (p, q - p + 1);
  end = strstr (q + 1, tag);
  return end != NULL ? end + strlen (tag) : q + strlen (q);
}

/* Sets *@ambiguous when PostgreSQL and SQLite could read @sql differently:
 * a block comment that opens another (PostgreSQL nests them, SQLite ends
 * at the first close), or a U&"…" identifier (its escapes can spell any
 * name). */
static GArray *
tokenize (const char *sql,
          gboolean   *ambiguous)
{
  GArray *tokens = g_array_new (FALSE, FALSE, sizeof (Token));
  const char *p = sql;
  int depth = 0;

  while (*p != '\0')
    {
      Token token = { TOKEN_PUNCT, p - sql, 0, depth };
      const char *end;

      if (g_ascii_isspace (*p))
        {
          p++;
          continue;
        }
      if (p[0] == '-' && p[1] == '-')
        {
          while (*p != '\0' && *p != '\n')
            p++;
          continue;
        }
      if (p[0] == '/' && p[1] == '*')
        {
          end = strstr (p + 2, "*/");
          if (end != NULL ? g_strstr_len (p + 2, end - (p + 2), "/*") != NULL
                          : strstr (p + 2, "/*") != NULL)
            *ambiguous = TRUE;
          p = end != NULL ? end + 2 : p + strlen (p);
          continue;
        }

      if (*p == '\'')
        {
          token.kind = TOKEN_STRING;
          end = skip_quoted (p, '\'', FALSE);
        }
      else if ((*p == 'e' || *p == 'E') && p[1] == '\'')
        {
          token.kind = TOKEN_STRING;
          end = skip_quoted (p + 1, '\'', TRUE);
        }
      else if (*p == '"' || *p == '`')
        {
          if (p - sql >= 2 && p[-1] == '&' && (p[-2] == 'u' || p[-2] == 'U'))
            *ambiguous = TRUE;
          token.kind = TOKEN_QUOTED;
          end = skip_quoted (p, *p, FALSE);
        }
      else if (*p == '[' &&
               (tokens->len == 0 ||
                (g_array_index (tokens, Token, tokens->len - 1).kind == TOKEN_PUNCT &&
                 sql[g_array_index (tokens, Token, tokens->len - 1).start] != ')' &&
                 sql[g_array_index (tokens, Token, tokens->len - 1).start] != ']') ||
                is_keyword (sql, &g_array_index (tokens, Token, tokens->len - 1))))
        {
          /* SQLite's [name]; after a value it is a PostgreSQL subscript. */
          token.kind = TOKEN_QUOTED;
          end = skip_quoted (p, ']', FALSE);
        }
      else if (*p == '$' && (end = skip_dollar_quoted (p)) != NULL)
        token.kind = TOKEN_STRING;
      else if (g_ascii_isdigit (*p) || (*p == '.' && g_ascii_isdigit (p[1])))
        {
          token.kind = TOKEN_NUMBER;
          end = p + 1;
          while (g_ascii_isalnum (*end) || *end == '.' || *end == '_' ||
                 ((*end == '+' || *end == '-') && (end[-1] == 'e' || end[-1] == 'E')))
            end++;
        }
      else if (is_word_char ((guchar) *p) && *p != '$')
        {
          token.kind = TOKEN_WORD;
          end = p + 1;
          while (is_word_char ((guchar) *end))
            end++;
        }
      else
        {
          end = p + 1;
          if (*p == '(')
            depth++;
          else if (*p == ')' && depth > 0)
            {
              depth--;
              token.depth = depth;
            }
        }

      token.end = end - sql;
      g_array_append_val (tokens, token);
      p = end;
    }

  return tokens;
}

/* A name token's text: unquoted, doubled quotes undone, lower-cased when it
 * was not quoted (both engines fold bare names; SQLite ignores case). */
static char *
token_name (const char  *sql,
            const Token *token)
{
  const char *text = sql + token->start;
  gsize len = token->end - token->start;

  if (token->kind == TOKEN_QUOTED && len >= 2)
    {
      char close = text[0] == '[' ? ']' : text[0];
      GString *name = g_string_new (NULL);

      for (gsize i = 1; i < len - 1; i++)
        {
          g_string_append_c (name, text[i]);
          if (text[i] == close && close != ']' && i + 1 < len - 1 && text[i + 1] == close)
            i++;
        }
      return g_string_free (name, FALSE);
    }

  return g_ascii_strdown (text, (gssize) len);
}

static void
item_free (gpointer data)
{
  TallySqlItem *item = data;

  g_free (item->text);
  g_free (item->alias);
  g_strfreev (item->identifiers);
  g_free (item);
}

/**
 * tally_sql_select_free:
 * @self: (transfer full) (nullable): a split statement
 *
 * Frees @self.
 */
void
tally_sql_select_free (TallySqlSelect *self)
{
  if (self == NULL)
    return;

  g_free (self->head);
  g_free (self->rest);
  g_free (self->sql);
  g_clear_pointer (&self->items, g_ptr_array_unref);
  g_clear_pointer (&self->tokens, g_array_unref);
  g_free (self);
}

#define TOK(i) (&g_array_index (self->tokens, Token, (i)))

static TallySqlItem *
make_item (TallySqlSelect *self,
           guint           first,
           guint           last)
{
  const char *sql = self->sql;
  TallySqlItem *item = g_new0 (TallySqlItem, 1);
  g_autoptr(GStrvBuilder) identifiers = g_strv_builder_new ();
  guint expr_last = last;

  item->text = g_strndup (sql + TOK (first)->start, TOK (last)->end - TOK (first)->start);

  /* `expr AS name`, or `expr name` after something that ends a value. */
  if (last > first && TOK (last)->depth == TOK (first)->depth && is_name (sql, TOK (last)))
    {
      const Token *before = TOK (last - 1);

      if (is_word (sql, before, "as") && last - 1 > first)
        expr_last = last - 2;
      else if ((is_name (sql, before) || is_word (sql, before, "end") ||
                before->kind == TOKEN_STRING || before->kind == TOKEN_NUMBER ||
                is_punct (sql, before, ')')) &&
               !is_punct (sql, before, '.'))
        expr_last = last - 1;

      if (expr_last != last)
        item->alias = token_name (sql, TOK (last));
    }

  item->star = (expr_last == first && is_punct (sql, TOK (first), '*')) ||
               (expr_last == first + 2 && is_punct (sql, TOK (expr_last), '*') &&
                is_punct (sql, TOK (first + 1), '.'));

  for (guint i = first; i <= expr_last; i++)
    {
      const Token *token = TOK (i);
      gboolean call = i < expr_last && is_punct (sql, TOK (i + 1), '(');
      gboolean qualifier = i < expr_last && is_punct (sql, TOK (i + 1), '.');
      gboolean type = i >= first + 2 && is_punct (sql, TOK (i - 1), ':') && is_punct (sql, TOK (i - 2), ':');
      g_autofree char *name = NULL;

      if (!is_name (sql, token) || call)
        continue;

      name = token_name (sql, token);
      g_strv_builder_add (identifiers, name);
      if (!qualifier && !type)
        item->n_references++;
    }
  item->identifiers = g_strv_builder_end (identifiers);

  return item;
}

/**
 * tally_sql_select_parse:
 * @sql: one statement
 * @error: return location for a #GError
 *
 * Splits @sql at its outermost select list: `[WITH …] SELECT [DISTINCT]
 * item, item … [FROM …]`. Commas and keywords inside quotes, comments and
 * parentheses do not count.
 *
 * Errors: %TALLY_TOOL_ERROR_INVALID_INPUT when @sql does not start with
 * SELECT or WITH … SELECT (a PRAGMA, VALUES, a parenthesised compound),
 * or an item is empty.
 *
 * Returns: (transfer full): the split statement, or %NULL with @error set
 */
TallySqlSelect *
tally_sql_select_parse (const char  *sql,
                        GError     **error)
{
  g_autoptr(TallySqlSelect) self = g_new0 (TallySqlSelect, 1);
  guint n, select = 0, first, i;

  g_return_val_if_fail (sql != NULL, NULL);

  self->sql = g_strdup (sql);
  self->tokens = tokenize (sql, &self->ambiguous);
  for (guint t = 0; t < self->tokens->len && !self->ambiguous; t++)
    {
      g_autofree char *name = NULL;

      if (!is_name (sql, TOK (t)))
        continue;
      name = token_name (sql, TOK (t));
      for (guint f = 0; f < G_N_ELEMENTS (query_functions); f++)
        if (g_ascii_strcasecmp (name, query_functions[f]) == 0)
          self->ambiguous = TRUE;
    }
  self->items = g_ptr_array_new_with_free_func (item_free);
  n = self->tokens->len;

  if (n > 0 && is_word (sql, TOK (0), "with"))
    {
      self->derived = TRUE;
      for (select = 1; select < n; select++)
        if (TOK (select)->depth == 0 && is_word (sql, TOK (select), "select"))
          break;
    }

  if (select >= n || !is_word (sql, TOK (select), "select"))
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "The statement is not a SELECT whose select list can be read");
      return NULL;
    }

  first = select + 1;
  if (first < n && (is_word (sql, TOK (first), "distinct") || is_word (sql, TOK (first), "all")))
    {
      first++;
      /* DISTINCT ON (…) (PostgreSQL) */
      if (first + 1 < n && is_word (sql, TOK (first), "on") && is_punct (sql, TOK (first + 1), '('))
        {
          first += 2;
          while (first < n && TOK (first)->depth > 0)
            first++;
          first++;
        }
    }

  self->head = g_strndup (sql, first < n ? TOK (first)->start : strlen (sql));

  i = first;
  while (i < n)
    {
      guint start = i;

      while (i < n &&
             !(TOK (i)->depth == 0 &&
               (is_punct (sql, TOK (i), ',') || is_punct (sql, TOK (i), ';') ||
                word_in (sql, TOK (i), list_ends, G_N_ELEMENTS (list_ends)))))
        i++;

      if (i == start)
        {
          g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                               "The select list has an empty item");
          return NULL;
        }

      g_ptr_array_add (self->items, make_item (self, start, i - 1));

      if (i < n && is_punct (sql, TOK (i), ','))
        i++;
      else
        break;
    }

  self->rest = g_strdup (i < n ? sql + TOK (i)->start : "");

  for (guint j = i; j < n; j++)
    {
      if (TOK (j)->depth == 0 &&
          (is_word (sql, TOK (j), "union") || is_word (sql, TOK (j), "intersect") ||
           is_word (sql, TOK (j), "except")))
        self->compound = TRUE;

      if (j + 1 < n && is_punct (sql, TOK (j), '(') &&
          (is_word (sql, TOK (j + 1), "select") || is_word (sql, TOK (j + 1), "with") ||
           is_word (sql, TOK (j + 1), "values")))
        self->derived = TRUE;
    }

  return g_steal_pointer (&self);
}

/**
 * tally_sql_select_dup_probe:
 * @self: a split statement
 * @keep: the index of the item to keep, or -1 to keep none
 *
 * The statement with every item but @keep replaced by `NULL` (keeping its
 * alias, so GROUP BY and ORDER BY still find it): what the item at @keep
 * reads beyond the rest of the statement is what the probe reads beyond the
 * probe with @keep = -1 (docs/ledger.md §3).
 *
 * Returns: (transfer full): the probe's SQL text
 */
char *
tally_sql_select_dup_probe (TallySqlSelect *self,
                            int             keep)
{
  GString *out;

  g_return_val_if_fail (self != NULL, NULL);

  out = g_string_new (self->head);
  if (out->len > 0 && !g_ascii_isspace (out->str[out->len - 1]))
    g_string_append_c (out, ' ');

  for (guint i = 0; i < self->items->len; i++)
    {
      TallySqlItem *item = g_ptr_array_index (self->items, i);

      if (i > 0)
        g_string_append (out, ", ");
      if ((int) i == keep)
        g_string_append (out, item->text);
      else if (item->alias != NULL)
        {
          g_autofree char *quoted = NULL;
          GString *name = g_string_new ("\"");

          for (const char *p = item->alias; *p != '\0'; p++)
            {
              if (*p == '"')
                g_string_append_c (name, '"');
              g_string_append_c (name, *p);
            }
          g_string_append_c (name, '"');
          quoted = g_string_free (name, FALSE);
          g_string_append_printf (out, "NULL AS %s", quoted);
        }
      else
        g_string_append (out, "NULL");
    }

  if (self->rest[0] != '\0')
    g_string_append_printf (out, " %s", self->rest);

  return g_string_free (out, FALSE);
}

static gboolean
strv_has (GPtrArray  *names,
          const char *name)
{
  for (guint i = 0; i < names->len; i++)
    if (g_ascii_strcasecmp (g_ptr_array_index (names, i), name) == 0)
      return TRUE;
  return FALSE;
}

/* Whether a name token among tokens [from, to) is in @names. */
static gboolean
range_mentions (TallySqlSelect *self,
                guint           from,
                guint           to,
                GPtrArray      *names)
{
  for (guint i = from; i < to; i++)
    {
      g_autofree char *name = NULL;

      if (!is_name (self->sql, TOK (i)))
        continue;
      name = token_name (self->sql, TOK (i));
      if (strv_has (names, name))
        return TRUE;
    }
  return FALSE;
}

/* Adds to @tainted the name a tainted table or derived table is given at
 * token @a (`[AS] name`) and the names of its column alias list (`name(a,
 * b, c)`, which renames its columns by position). Returns whether it
 * added a name. */
static gboolean
taint_alias (TallySqlSelect *self,
             guint           a,
             GPtrArray      *tainted)
{
  const char *sql = self->sql;
  guint n = self->tokens->len;
  gboolean added = FALSE;

  if (a < n && is_word (sql, TOK (a), "as"))
    a++;
  if (a >= n || !is_name (sql, TOK (a)))
    return FALSE;

  for (guint i = a; i < n; i++)
    {
      g_autofree char *name = NULL;

      if (i > a && (i == a + 1 ? !is_punct (sql, TOK (i), '(') : TOK (i)->depth <= TOK (a)->depth))
        break;
      if (!is_name (sql, TOK (i)))
        continue;
      name = token_name (sql, TOK (i));
      if (!strv_has (tainted, name))
        {
          g_ptr_array_add (tainted, g_steal_pointer (&name));
          added = TRUE;
        }
    }

  return added;
}

/**
 * tally_sql_select_text_taint:
 * @self: a split statement
 * @marked: (array zero-terminated=1) (nullable): the sensitive columns
 * @touches: (out) (optional): set to whether the statement mentions a
 *   marked column or table anywhere
 *
 * The text rule of the taint check (docs/ledger.md §3), for engines
 * without an authorizer (PostgreSQL). The tainted names are the tables
 * and columns of @marked, the names a marked table is given (`customers
 * c`), and the names of derived tables (a WITH query or a subquery) whose
 * text mentions a tainted name, with the names of their column alias
 * lists, and the name a FROM item such as `unnest(…) AS u(e)` gets when
 * its text mentions a tainted name. An item is tainted when it mentions a
 * tainted name, when it is a `*`, or when it mentions any name at all and
 * some derived table mentions a tainted name. When the engines could read
 * the text differently (a nested block comment, a `U&"…"` identifier), or
 * it calls a function that runs query text or dumps tables
 * (`query_to_xml()`, `ts_stat()`, …), and @marked is not empty, every item
 * is tainted.
 *
 * Returns: (transfer full) (array): one flag per item of @self->items
 */
gboolean *
tally_sql_select_text_taint (TallySqlSelect     *self,
                             const char * const *marked,
                             gboolean           *touches)
{
  const char *sql = self->sql;
  g_autoptr(GPtrArray) tainted = g_ptr_array_new_with_free_func (g_free);
  gboolean *flags = g_new0 (gboolean, MAX (self->items->len, 1));
  gboolean derived_tainted = FALSE;
  guint n = self->tokens->len;
  guint items_start = 0, items_end = 0;
  gsize head_len = strlen (self->head);
  gsize rest_start = strlen (sql) - strlen (self->rest);

  if (self->ambiguous && marked != NULL && marked[0] != NULL)
    {
      for (guint i = 0; i < self->items->len; i++)
        flags[i] = TRUE;
      if (touches != NULL)
        *touches = TRUE;
      return flags;
    }

  /* The marked names met, and what a marked table is called after it. */
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = NULL;

      if (!is_name (sql, TOK (i)))
        continue;
      name = token_name (sql, TOK (i));
      if (!tally_sensitive_columns_names (marked, name))
        continue;

      if (!strv_has (tainted, name))
        g_ptr_array_add (tainted, g_strdup (name));

      if (i + 1 < n && !is_punct (sql, TOK (i + 1), '.'))
        taint_alias (self, i + 1, tainted);
    }

  if (touches != NULL)
    *touches = tainted->len > 0;

  for (guint i = 0; i < n; i++)
    {
      if (TOK (i)->start < head_len)
        items_start = i + 1;
      if (TOK (i)->start < rest_start)
        items_end = i + 1;
    }

  /* Derived tables outside the select list: a parenthesised query whose
   * text mentions a tainted name taints its own name too. Repeated until
   * nothing changes, so a CTE over a CTE is caught. */
  for (gboolean changed = TRUE; changed && tainted->len > 0;)
    {
      changed = FALSE;
      for (guint i = 0; i + 1 < n; i++)
        {
          guint close;
          gboolean query;

          if ((i >= items_start && i < items_end) || !is_punct (sql, TOK (i), '('))
            continue;
          query = is_word (sql, TOK (i + 1), "select") || is_word (sql, TOK (i + 1), "with") ||
                  is_word (sql, TOK (i + 1), "values") || is_word (sql, TOK (i + 1), "table");

          for (close = i + 1; close < n; close++)
            if (TOK (close)->depth == TOK (i)->depth && is_punct (sql, TOK (close), ')'))
              break;

          if (!range_mentions (self, i + 1, close, tainted))
            continue;

          /* Any other parenthesised text (a function in FROM) counts when
           * it is given a name: `unnest(…) AS u(e)`. */
          if (!query)
            {
              if (close + 1 < n && taint_alias (self, close + 1, tainted))
                {
                  derived_tainted = TRUE;
                  changed = TRUE;
                }
              continue;
            }

          derived_tainted = TRUE;

          /* `name AS (…)` before, or `(…) [AS] name` after. */
          if (i >= 2 && is_word (sql, TOK (i - 1), "as") && is_name (sql, TOK (i - 2)))
            {
              g_autofree char *name = token_name (sql, TOK (i - 2));

              if (!strv_has (tainted, name))
                {
                  g_ptr_array_add (tainted, g_steal_pointer (&name));
                  changed = TRUE;
                }
            }
          if (close + 1 < n && taint_alias (self, close + 1, tainted))
            changed = TRUE;
        }
    }

  /* Nothing marked is mentioned: nothing is tainted by the text. */
  for (guint i = 0; tainted->len > 0 && i < self->items->len; i++)
    {
      TallySqlItem *item = g_ptr_array_index (self->items, i);

      flags[i] = item->star || (derived_tainted && item->identifiers[0] != NULL);
      for (guint j = 0; !flags[i] && item->identifiers[j] != NULL; j++)
        flags[i] = strv_has (tainted, item->identifiers[j]);
    }

  return flags;
}
