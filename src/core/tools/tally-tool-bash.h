/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_BASH (tally_tool_bash_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolBash, tally_tool_bash, TALLY, TOOL_BASH, TallyTool)

TallyTool *tally_tool_bash_new           (void);
void       tally_tool_bash_set_extra_env (TallyToolBash      *self,
                                          const char * const *names);

G_END_DECLS
