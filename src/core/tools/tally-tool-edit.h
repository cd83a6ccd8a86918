/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_EDIT (tally_tool_edit_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolEdit, tally_tool_edit, TALLY, TOOL_EDIT, TallyTool)

TallyTool *tally_tool_edit_new      (void);
char      *tally_tool_edit_dup_diff (const TallyToolContext  *context,
                                     JsonObject              *input,
                                     GError                 **error);

G_END_DECLS
