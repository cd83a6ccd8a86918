/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_GREP (tally_tool_grep_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolGrep, tally_tool_grep, TALLY, TOOL_GREP, TallyTool)

TallyTool *tally_tool_grep_new (void);

G_END_DECLS
