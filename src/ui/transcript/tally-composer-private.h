/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-composer.h"

G_BEGIN_DECLS

gboolean     tally_composer_handle_key       (TallyComposer   *self,
                                              guint            keyval,
                                              GdkModifierType  state);
GtkTextView *tally_composer_get_text_view    (TallyComposer   *self);
GtkButton   *tally_composer_get_button       (TallyComposer   *self);
GtkWidget   *tally_composer_get_placeholder  (TallyComposer   *self);
gboolean     tally_composer_get_preedit_active (TallyComposer *self);

G_END_DECLS
