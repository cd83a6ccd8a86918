/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TallyGrouping:
 * @TALLY_GROUPING_LOCALE: the separator and group sizes of the current
 *   `LC_NUMERIC` locale; a comma every three digits when the locale has no
 *   separator (the C and POSIX locales)
 * @TALLY_GROUPING_COMMA: a comma every three digits whatever the locale,
 *   for text the model reads
 *
 * How tally_format_count() groups the digits of a number.
 */
typedef enum {
  TALLY_GROUPING_LOCALE,
  TALLY_GROUPING_COMMA,
} TallyGrouping;

char  *tally_format_count    (gint64         value,
                              TallyGrouping  grouping);
char  *tally_format_duration (gint64         duration_ms);
char  *tally_format_cost     (gboolean       known,
                              double         cost_usd);
guint  tally_count_words     (const char    *text);
char  *tally_format_time_utc (gint64         time_us,
                              const char    *format,
                              const char    *fallback);
char  *tally_format_shown_as_is (const char *text);
char  *tally_format_json_shown_as_is (const char *json);
char  *tally_format_terminal_safe (const char *text);

G_END_DECLS
