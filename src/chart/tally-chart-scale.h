/* SPDX-License-Identifier: GPL-3.0-or-later */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TallyChartNumberLocale:
 * @decimal: the decimal separator, e.g. "." or ","
 * @group: the thousands separator, e.g. "," or "."
 *
 * How numbers are written. Both strings are borrowed and must outlive the
 * calls they are passed to.
 */
typedef struct {
  const char *decimal;
  const char *group;
} TallyChartNumberLocale;

/**
 * TallyChartTimeUnit:
 * @TALLY_CHART_TIME_SECOND: seconds
 * @TALLY_CHART_TIME_MINUTE: minutes
 * @TALLY_CHART_TIME_HOUR: hours
 * @TALLY_CHART_TIME_DAY: days
 * @TALLY_CHART_TIME_WEEK: weeks, starting on Monday (ISO 8601)
 * @TALLY_CHART_TIME_MONTH: months
 * @TALLY_CHART_TIME_YEAR: years
 *
 * The unit of the ticks of a temporal axis, chosen by the span.
 */
typedef enum {
  TALLY_CHART_TIME_SECOND,
  TALLY_CHART_TIME_MINUTE,
  TALLY_CHART_TIME_HOUR,
  TALLY_CHART_TIME_DAY,
  TALLY_CHART_TIME_WEEK,
  TALLY_CHART_TIME_MONTH,
  TALLY_CHART_TIME_YEAR,
} TallyChartTimeUnit;

void      tally_chart_number_locale_init_current (TallyChartNumberLocale       *locale);

double    tally_chart_nice_step                  (double                        span,
                                                  guint                         max_ticks);
GArray   *tally_chart_nice_ticks                 (double                        min,
                                                  double                        max,
                                                  guint                         max_ticks,
                                                  double                       *step);

char     *tally_chart_group_digits               (const char                   *digits,
                                                  const char                   *separator);
gboolean  tally_chart_format_validate            (const char                   *format,
                                                  GError                      **error);
char     *tally_chart_format_number              (double                        value,
                                                  const char                   *format,
                                                  double                        step);
char     *tally_chart_format_number_with_locale  (double                        value,
                                                  const char                   *format,
                                                  double                        step,
                                                  const TallyChartNumberLocale *locale);

gboolean  tally_chart_parse_time                 (const char                   *text,
                                                  double                       *seconds);
GArray   *tally_chart_time_ticks                 (double                        first,
                                                  double                        last,
                                                  guint                         max_ticks,
                                                  TallyChartTimeUnit           *unit);
gboolean  tally_chart_time_format_validate       (const char                   *format,
                                                  GError                      **error);
char     *tally_chart_format_time                (double                        seconds,
                                                  TallyChartTimeUnit            unit,
                                                  const char                   *format);

G_END_DECLS
