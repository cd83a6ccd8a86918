/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

void tally_html_entity_append (GString    *out,
                               const char *entity,
                               gsize       size);

G_END_DECLS
