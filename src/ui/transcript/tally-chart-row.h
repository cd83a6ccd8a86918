/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_CHART_ROW (tally_chart_row_get_type ())

G_DECLARE_FINAL_TYPE (TallyChartRow, tally_chart_row, TALLY, CHART_ROW, TallyBlockWidget)

GtkWidget *tally_chart_row_get_drawing (TallyChartRow *self);
GtkWidget *tally_chart_row_get_table   (TallyChartRow *self);
gboolean   tally_chart_row_has_chart   (TallyChartRow *self);

G_END_DECLS
