/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_READ (tally_tool_read_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolRead, tally_tool_read, TALLY, TOOL_READ, TallyTool)

TallyTool *tally_tool_read_new (void);

G_END_DECLS
