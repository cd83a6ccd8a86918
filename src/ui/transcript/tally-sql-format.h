/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TALLY_SQL_FORMAT_MIN_LENGTH:
 *
 * A one-line statement shorter than this many bytes is left on its line
 * by tally_sql_format().
 */
#define TALLY_SQL_FORMAT_MIN_LENGTH 60

char *tally_sql_format (const char *sql);

G_END_DECLS
