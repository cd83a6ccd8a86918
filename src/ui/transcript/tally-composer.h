/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TALLY_TYPE_COMPOSER (tally_composer_get_type ())

G_DECLARE_FINAL_TYPE (TallyComposer, tally_composer, TALLY, COMPOSER, GtkWidget)

GtkWidget  *tally_composer_new       (void);
char       *tally_composer_dup_text  (TallyComposer *self);
void        tally_composer_set_text  (TallyComposer *self,
                                      const char    *text);
gboolean    tally_composer_get_busy  (TallyComposer *self);
void        tally_composer_set_busy  (TallyComposer *self,
                                      gboolean       busy);
void        tally_composer_set_status (TallyComposer *self,
                                       const char    *status);
const char *tally_composer_get_status (TallyComposer *self);
gboolean    tally_composer_send      (TallyComposer *self);

G_END_DECLS
