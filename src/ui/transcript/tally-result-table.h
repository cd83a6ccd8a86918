/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/**
 * TALLY_RESULT_TABLE_MAX_SHOWN_ROWS:
 *
 * The most rows a #TallyResultTable lays out; the rest are counted in its
 * footer. `query_database` returns at most 1000.
 */
#define TALLY_RESULT_TABLE_MAX_SHOWN_ROWS 500

#define TALLY_TYPE_RESULT_TABLE (tally_result_table_get_type ())

G_DECLARE_FINAL_TYPE (TallyResultTable, tally_result_table, TALLY, RESULT_TABLE, GtkWidget)

GtkWidget  *tally_result_table_new             (void);
gboolean    tally_result_table_set_result      (TallyResultTable *self,
                                                const char       *text);
guint       tally_result_table_get_n_columns   (TallyResultTable *self);
guint       tally_result_table_get_n_rows      (TallyResultTable *self);
const char *tally_result_table_get_column_title (TallyResultTable *self,
                                                guint             column);
const char *tally_result_table_get_cell        (TallyResultTable *self,
                                                guint             row,
                                                guint             column);
const char *tally_result_table_get_footer      (TallyResultTable *self);
GtkGrid    *tally_result_table_get_grid        (TallyResultTable *self);

G_END_DECLS
