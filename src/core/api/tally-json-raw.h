/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

gboolean  tally_json_raw_find_member    (const char  *json,
                                         const char  *key,
                                         const char **value,
                                         gsize       *value_len);
char     *tally_json_raw_replace_member (const char  *json,
                                         const char  *key,
                                         const char  *value_json);
char     *tally_json_raw_repair_exponents (const char *json);

G_END_DECLS
