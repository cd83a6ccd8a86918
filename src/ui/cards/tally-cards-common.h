/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block.h"
#include "tally-cards-config.h"
/* WebKit's types, and its functions once loaded */
#include "tally-webkit-loader.h"

G_BEGIN_DECLS

gboolean    tally_cards_block_is_followed      (GListModel  *blocks,
                                                TallyBlock  *block);
GPtrArray  *tally_cards_find_plan_versions     (GListModel  *blocks,
                                                TallyBlock  *block);
const char *tally_cards_details_string         (TallyBlock  *block,
                                                const char  *member);
JsonObject *tally_cards_get_resolution         (TallyBlock  *block);
gboolean    tally_cards_is_dark                (void);

#if TALLY_HAVE_WEBKIT
WebKitSettings *tally_cards_new_web_settings   (gboolean             javascript);
gboolean    tally_cards_refuse_context_menu    (WebKitWebView       *view,
                                                WebKitContextMenu   *menu,
                                                WebKitHitTestResult *hit,
                                                gpointer             user_data);
#endif

G_END_DECLS
