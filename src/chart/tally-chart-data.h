/* SPDX-License-Identifier: GPL-3.0-or-later */

#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define TALLY_TYPE_CHART_DATA (tally_chart_data_get_type ())

G_DECLARE_FINAL_TYPE (TallyChartData, tally_chart_data, TALLY, CHART_DATA, GObject)

TallyChartData     *tally_chart_data_new                (const char * const  *names);
TallyChartData     *tally_chart_data_new_from_columns   (const char * const  *names,
                                                         JsonArray           *rows,
                                                         GError             **error);
TallyChartData     *tally_chart_data_new_from_values    (JsonArray           *values,
                                                         GError             **error);
gboolean            tally_chart_data_append_strings     (TallyChartData      *self,
                                                         const char * const  *cells,
                                                         guint                n_cells,
                                                         GError             **error);

guint               tally_chart_data_get_n_columns      (TallyChartData      *self);
guint               tally_chart_data_get_n_rows         (TallyChartData      *self);
const char         *tally_chart_data_get_column_name    (TallyChartData      *self,
                                                         guint                column);
int                 tally_chart_data_find_column        (TallyChartData      *self,
                                                         const char          *name);
char               *tally_chart_data_dup_column_list    (TallyChartData      *self);
JsonNode           *tally_chart_data_get_cell           (TallyChartData      *self,
                                                         guint                row,
                                                         guint                column);

G_END_DECLS
