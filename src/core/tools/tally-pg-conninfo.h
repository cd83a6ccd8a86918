/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

gboolean  tally_pg_conninfo_is            (const char *database);
char     *tally_pg_conninfo_redact        (const char *conninfo);
char     *tally_pg_conninfo_add_password  (const char *conninfo,
                                           const char *password);
char     *tally_pg_database_key           (const char *database);

G_END_DECLS
