/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

/**
 * TALLY_TOOL_CREATE_CHART_WIDTH:
 * The width of the image files `create_chart` writes: pixels for the PNG,
 * points for the SVG. Their height is 0.55 of it.
 */
#define TALLY_TOOL_CREATE_CHART_WIDTH 960

#define TALLY_TYPE_TOOL_CREATE_CHART (tally_tool_create_chart_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolCreateChart, tally_tool_create_chart, TALLY, TOOL_CREATE_CHART, TallyTool)

TallyTool *tally_tool_create_chart_new (TallyTool *query_database);

G_END_DECLS
