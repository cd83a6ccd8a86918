/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_GET_SCHEMA (tally_tool_get_schema_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolGetSchema, tally_tool_get_schema, TALLY, TOOL_GET_SCHEMA, TallyTool)

TallyTool *tally_tool_get_schema_new (void);

G_END_DECLS
