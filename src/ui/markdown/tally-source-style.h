/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtksourceview/gtksource.h>

G_BEGIN_DECLS

void tally_source_style_follow          (GtkSourceBuffer   *buffer);
void tally_source_language_keep_compiled (GtkSourceLanguage *language);

G_END_DECLS
