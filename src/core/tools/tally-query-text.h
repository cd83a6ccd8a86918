/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TallyQueryText:
 * @out: the table text so far (owned)
 * @max_rows: the most rows to show
 * @shown: the rows written
 * @hidden: the rows counted but not written (past @max_rows or the byte cap)
 * @redactions: the values written as `[redacted]` in the rows written
 * @byte_cap_hit: whether a row did not fit in
 *   %TALLY_TOOL_QUERY_DATABASE_MAX_BYTES of text
 * @count_capped: whether counting stopped after 100,000 hidden rows
 *
 * The text table `query_database` answers with, the same on SQLite and
 * PostgreSQL (docs/architecture.md §8): a header line of column names, one
 * line per row with " | " between the values, then the row count. Fill it
 * with tally_query_text_add_column(), tally_query_text_end_header(), then
 * for every row tally_query_text_begin_row(), its cells and
 * tally_query_text_end_row(); tally_query_text_finish() adds the count.
 */
typedef struct
{
  GString  *out;
  guint64   max_rows;
  guint64   shown;
  guint64   hidden;
  gint64    redactions;
  gboolean  byte_cap_hit;
  gboolean  count_capped;

  /*< private >*/
  guint     n_cells;
  gsize     row_start;
  gint64    row_redactions;
} TallyQueryText;

void      tally_query_text_init          (TallyQueryText *text,
                                          guint64         max_rows);
void      tally_query_text_clear         (TallyQueryText *text);
void      tally_query_text_add_column    (TallyQueryText *text,
                                          const char     *name);
void      tally_query_text_end_header    (TallyQueryText *text);
gboolean  tally_query_text_begin_row     (TallyQueryText *text);
GString  *tally_query_text_next_cell     (TallyQueryText *text);
void      tally_query_text_add_redacted  (TallyQueryText *text);
void      tally_query_text_end_row       (TallyQueryText *text);
char     *tally_query_text_finish        (TallyQueryText *text);

void      tally_query_text_append_value  (GString        *out,
                                          const char     *value,
                                          gsize           length);
void      tally_query_text_redact_error  (GError         *error,
                                          char            quote);

G_END_DECLS
