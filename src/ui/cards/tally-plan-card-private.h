/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-plan-card.h"

G_BEGIN_DECLS

/*
 * For the tests (tests/test-cards.c): the page the web view loads, the
 * navigation rule, and a look at which renderer a card uses. Not for the
 * application's own code.
 */

/**
 * TallyPlanNavigation:
 * @TALLY_PLAN_NAVIGATION_ALLOW: the card's own page load
 * @TALLY_PLAN_NAVIGATION_IGNORE: anything else: refused
 * @TALLY_PLAN_NAVIGATION_OPEN: a clicked link: refused in the card and
 *   opened in the desktop's browser
 *
 * What a plan card's web view does with a navigation.
 */
typedef enum {
  TALLY_PLAN_NAVIGATION_ALLOW,
  TALLY_PLAN_NAVIGATION_IGNORE,
  TALLY_PLAN_NAVIGATION_OPEN,
} TallyPlanNavigation;

/**
 * TallyPlanPageStyle:
 * @dark: libadwaita's dark style (the page's colours follow it)
 * @font_family: (nullable): the font family; %NULL for the system's
 *   sans-serif
 * @font_size_pt: the font size in points; 0 for 11
 *
 * How a plan's page looks.
 */
typedef struct {
  gboolean    dark;
  const char *font_family;
  double      font_size_pt;
} TallyPlanPageStyle;

/**
 * TallyPlanUriLauncher:
 * @card: the plan card
 * @uri: the link clicked (http, https or mailto)
 *
 * Opens a link of a plan outside the card.
 */
typedef void (*TallyPlanUriLauncher) (GtkWidget  *card,
                                      const char *uri);

char                *_tally_plan_card_build_page          (const char               *markdown,
                                                           const TallyPlanPageStyle *style);
TallyPlanNavigation  _tally_plan_card_classify_navigation (const char               *uri,
                                                           gboolean                  link_clicked,
                                                           gboolean                  expecting_load);
void                 _tally_plan_card_set_uri_launcher    (TallyPlanUriLauncher      launcher);
GtkWidget           *_tally_plan_card_get_web_view        (TallyPlanCard            *self);
GtkWidget           *_tally_plan_card_get_native_view     (TallyPlanCard            *self);
const char          *_tally_plan_card_get_page            (TallyPlanCard            *self);
int                  _tally_plan_card_get_content_height  (TallyPlanCard            *self);
gboolean             _tally_plan_card_webkit_started      (void);
gboolean             _tally_plan_card_webkit_allowed      (void);
GtkWidget           *_tally_plan_card_get_changes         (TallyPlanCard            *self);

G_END_DECLS
