/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * TallySqlItem:
 * @text: the item as written, e.g. `substr(email, 5) AS domain`
 * @alias: (nullable): the name the item gives its column (`domain`),
 *   unquoted, or %NULL
 * @star: %TRUE for `*` and `t.*`, which stand for several columns
 * @identifiers: (array zero-terminated=1): the names the expression
 *   mentions, lower-cased and unquoted, qualifiers included, function names,
 *   keywords and the alias left out
 * @n_references: how many column references the expression holds (the
 *   identifiers that are not a qualifier before a dot, a function name or
 *   a type after `::`)
 *
 * One item of the outermost select list.
 */
typedef struct
{
  char      *text;
  char      *alias;
  gboolean   star;
  char     **identifiers;
  guint      n_references;
} TallySqlItem;

/**
 * TallySqlSelect:
 * @head: the text before the first item: `WITH … SELECT [DISTINCT]`
 * @items: (element-type TallySqlItem): the items of the outermost select
 *   list, in order
 * @rest: the text after the select list (`FROM …`), possibly empty
 * @compound: %TRUE when the outermost statement is a UNION, INTERSECT or
 *   EXCEPT
 * @derived: %TRUE when the statement has a WITH clause or a subquery
 *   outside the select list (a derived table)
 *
 * A SELECT statement split at its outermost select list
 * (tally_sql_select_parse()), for the taint rule of docs/ledger.md §3.
 */
typedef struct
{
  char      *head;
  GPtrArray *items;
  char      *rest;
  gboolean   compound;
  gboolean   derived;

  /*< private >*/
  char      *sql;
  GArray    *tokens;
  /* The engines may read the text differently (a nested block comment,
   * a Unicode-escaped identifier), or it calls a function that runs query
   * text: the text rule cannot trust the names it sees. */
  gboolean   ambiguous;
} TallySqlSelect;

TallySqlSelect *tally_sql_select_parse      (const char         *sql,
                                             GError            **error);
char           *tally_sql_select_dup_probe  (TallySqlSelect     *self,
                                             int                 keep);
gboolean       *tally_sql_select_text_taint (TallySqlSelect     *self,
                                             const char * const *marked,
                                             gboolean           *touches);
void            tally_sql_select_free       (TallySqlSelect     *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallySqlSelect, tally_sql_select_free)

G_END_DECLS
