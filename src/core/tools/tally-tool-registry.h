/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-tool.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_REGISTRY (tally_tool_registry_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolRegistry, tally_tool_registry, TALLY, TOOL_REGISTRY, GObject)

TallyToolRegistry *tally_tool_registry_new          (void);
TallyToolRegistry *tally_tool_registry_new_default  (void);
void               tally_tool_registry_add          (TallyToolRegistry *self,
                                                     TallyTool         *tool);
TallyTool         *tally_tool_registry_lookup       (TallyToolRegistry *self,
                                                     const char        *name);
guint              tally_tool_registry_get_n_tools  (TallyToolRegistry *self);
TallyTool         *tally_tool_registry_get_tool     (TallyToolRegistry *self,
                                                     guint              position);
char              *tally_tool_registry_dup_tools_json (TallyToolRegistry *self);

G_END_DECLS
