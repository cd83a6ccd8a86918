/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block.h"

G_BEGIN_DECLS

gboolean    tally_cards_block_is_followed      (GListModel  *blocks,
                                                TallyBlock  *block);
TallyBlock *tally_cards_find_previous_plan     (GListModel  *blocks,
                                                TallyBlock  *block);
const char *tally_cards_details_string         (TallyBlock  *block,
                                                const char  *member);
JsonObject *tally_cards_get_resolution         (TallyBlock  *block);
gboolean    tally_cards_is_dark                (void);

G_END_DECLS
