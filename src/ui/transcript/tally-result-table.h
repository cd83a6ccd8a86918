/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-csv.h"

G_BEGIN_DECLS

#define TALLY_TYPE_RESULT_TABLE (tally_result_table_get_type ())

G_DECLARE_FINAL_TYPE (TallyResultTable, tally_result_table, TALLY, RESULT_TABLE, GtkWidget)

GtkWidget     *tally_result_table_new              (void);
gboolean       tally_result_table_set_result       (TallyResultTable     *self,
                                                    const char           *text);
guint          tally_result_table_get_n_columns    (TallyResultTable     *self);
guint          tally_result_table_get_n_rows       (TallyResultTable     *self);
const char    *tally_result_table_get_column_title (TallyResultTable     *self,
                                                    guint                 column);
gboolean       tally_result_table_get_column_is_numeric (TallyResultTable *self,
                                                    guint                 column);
const char    *tally_result_table_get_cell         (TallyResultTable     *self,
                                                    guint                 row,
                                                    guint                 column);
const char    *tally_result_table_get_shown_text   (TallyResultTable     *self,
                                                    guint                 position,
                                                    guint                 column);
const char    *tally_result_table_get_footer       (TallyResultTable     *self);
GtkColumnView *tally_result_table_get_column_view  (TallyResultTable     *self);
void           tally_result_table_set_min_rows_height (TallyResultTable  *self,
                                                    int                   height);
char          *tally_result_table_dup_text         (TallyResultTable     *self,
                                                    TallyCsvFormat        format);

G_END_DECLS
