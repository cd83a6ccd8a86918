/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tally-tool.h"
#include "tally-types.h"

G_BEGIN_DECLS

const char *_tally_approval_scope_text    (const char             *scope);
const char *_tally_approval_edit_hint     (const TallyToolPreview *preview);
char       *_tally_approval_title_markup  (const TallyToolPreview *preview,
                                           const char             *tool_name);
const char *_tally_approval_decision_text (TallyDecision           decision,
                                           gboolean                stop);

G_END_DECLS
