/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_ASK_USER_QUESTION (tally_tool_ask_user_question_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolAskUserQuestion, tally_tool_ask_user_question, TALLY, TOOL_ASK_USER_QUESTION, TallyTool)

TallyTool *tally_tool_ask_user_question_new (void);

G_END_DECLS
