/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "tally-types.h"

G_BEGIN_DECLS

const char *tally_mode_get_title          (TallyMode    mode);
const char *tally_mode_get_description    (TallyMode    mode);
void        tally_mode_menu_set_up        (GtkDropDown *dropdown);
void        tally_mode_menu_set_up_row    (AdwComboRow *row);

G_END_DECLS
