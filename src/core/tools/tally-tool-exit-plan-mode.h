/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_EXIT_PLAN_MODE (tally_tool_exit_plan_mode_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolExitPlanMode, tally_tool_exit_plan_mode, TALLY, TOOL_EXIT_PLAN_MODE, TallyTool)

TallyTool *tally_tool_exit_plan_mode_new (void);

G_END_DECLS
