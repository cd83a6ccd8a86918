/* SPDX-License-Identifier: GPL-3.0-or-later */

#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

#include "tally-chart-data.h"
#include "tally-chart-spec.h"

G_BEGIN_DECLS

#define TALLY_TYPE_CHART (tally_chart_get_type ())

G_DECLARE_FINAL_TYPE (TallyChart, tally_chart, TALLY, CHART, GObject)

TallyChart     *tally_chart_new                  (TallyChartSpec  *spec,
                                                  TallyChartData  *data,
                                                  GError         **error);
TallyChart     *tally_chart_new_from_json        (JsonObject      *spec,
                                                  GError         **error);
TallyChartSpec *tally_chart_get_spec             (TallyChart      *self);
TallyChartData *tally_chart_get_data             (TallyChart      *self);
guint           tally_chart_get_n_rows_plotted   (TallyChart      *self);
guint           tally_chart_get_n_rows_skipped   (TallyChart      *self);
guint           tally_chart_get_n_series         (TallyChart      *self);
gboolean        tally_chart_is_empty             (TallyChart      *self);
char           *tally_chart_dup_summary          (TallyChart      *self);
char           *tally_chart_dup_description      (TallyChart      *self);

G_END_DECLS
