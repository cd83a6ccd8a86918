/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block-widget.h"
#include "tally-result-table.h"

G_BEGIN_DECLS

#define TALLY_TYPE_TOOL_CHIP (tally_tool_chip_get_type ())

G_DECLARE_FINAL_TYPE (TallyToolChip, tally_tool_chip, TALLY, TOOL_CHIP, TallyBlockWidget)

GtkWidget        *tally_tool_chip_new           (void);
const char       *tally_tool_chip_get_name      (TallyToolChip *self);
const char       *tally_tool_chip_get_summary   (TallyToolChip *self);
const char       *tally_tool_chip_get_state     (TallyToolChip *self);
GtkExpander      *tally_tool_chip_get_expander  (TallyToolChip *self);
TallyResultTable *tally_tool_chip_get_table     (TallyToolChip *self);
const char       *tally_tool_chip_get_input_text (TallyToolChip *self);
const char       *tally_tool_chip_get_sql_text  (TallyToolChip *self);
GtkWidget        *tally_tool_chip_get_sql_view  (TallyToolChip *self);
const char       *tally_tool_chip_get_result_text (TallyToolChip *self);

char             *tally_tool_summarize_input    (const char    *tool_name,
                                                 const char    *input_json);

G_END_DECLS
