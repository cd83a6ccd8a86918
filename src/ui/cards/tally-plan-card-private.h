/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-plan-card.h"

G_BEGIN_DECLS

/*
 * For the tests (tests/test-cards.c): the page the web view loads, the
 * navigation rule, and a look at which renderer a card uses. Not for the
 * application's own code.
 */

typedef enum {
  TALLY_PLAN_NAVIGATION_ALLOW,    /* the card's own page load */
  TALLY_PLAN_NAVIGATION_IGNORE,   /* anything else */
  TALLY_PLAN_NAVIGATION_OPEN,     /* a link clicked: opened outside, never in the card */
} TallyPlanNavigation;

typedef struct {
  gboolean    dark;
  const char *font_family;     /* NULL: the system's sans-serif */
  double      font_size_pt;    /* 0: 11 pt */
} TallyPlanPageStyle;

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
GtkWidget           *_tally_plan_card_get_changes         (TallyPlanCard            *self);

G_END_DECLS
