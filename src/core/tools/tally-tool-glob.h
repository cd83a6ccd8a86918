/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_GLOB (tally_tool_glob_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolGlob, tally_tool_glob, TALLY, TOOL_GLOB, TallyTool)

TallyTool *tally_tool_glob_new (void);

G_END_DECLS
