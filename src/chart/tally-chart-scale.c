/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-chart"

#include "config.h"

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally-chart-scale.h"
#include "tally-chart-spec.h"

/*
 * Axis ticks and number and date formats for the chart engine
 * (docs/charts.md §5). Number formats follow the d3-format mini-language
 * ("[[fill]align][sign][symbol][0][width][,][.precision][~][type]"), the
 * one Vega-Lite v5 uses for "format"; date formats follow d3-time-format's
 * "%" directives, which GDateTime's formatter shares.
 */

#define MINUS_SIGN "\xe2\x88\x92" /* U+2212, as d3-format writes negatives */

/**
 * tally_chart_number_locale_init_current:
 * @locale: (out caller-allocates): the locale to fill in
 *
 * Fills @locale with the separators of the current `LC_NUMERIC` locale.
 * A locale without a thousands separator (the C locale) gets "," (or "."
 * when its decimal separator is ","), so that d3-format's `,` always
 * groups.
 */
void
tally_chart_number_locale_init_current (TallyChartNumberLocale *locale)
{
  const struct lconv *lc = localeconv ();

  g_return_if_fail (locale != NULL);

  locale->decimal = (lc->decimal_point && *lc->decimal_point) ? lc->decimal_point : ".";
  if (lc->thousands_sep && *lc->thousands_sep)
    locale->group = lc->thousands_sep;
  else
    locale->group = g_str_equal (locale->decimal, ",") ? "." : ",";
}

/**
 * tally_chart_nice_step:
 * @span: the width of the range to cover, > 0
 * @max_ticks: the most intervals wanted, ≥ 1
 *
 * Returns: the smallest step of the form 1, 2 or 5 × 10^k that cuts @span
 *   into at most @max_ticks intervals; 0 when @span is not positive
 */
double
tally_chart_nice_step (double span,
                       guint  max_ticks)
{
  double raw, magnitude, residual;

  if (!(span > 0) || !isfinite (span))
    return 0;
  if (max_ticks == 0)
    max_ticks = 1;

  raw = span / max_ticks;
  magnitude = pow (10, floor (log10 (raw)));
  residual = raw / magnitude;

  /* A tiny tolerance so that 20/10 gives 2, not 5, after rounding. */
  if (residual <= 1 + 1e-9)
    return magnitude;
  if (residual <= 2 + 1e-9)
    return 2 * magnitude;
  if (residual <= 5 + 1e-9)
    return 5 * magnitude;
  return 10 * magnitude;
}

/**
 * tally_chart_nice_ticks:
 * @min: the smallest value to show
 * @max: the largest value to show
 * @max_ticks: the most intervals wanted
 * @step: (out) (optional): the step between ticks
 *
 * Ticks for a linear axis: multiples of tally_chart_nice_step() from the
 * largest one ≤ @min to the smallest one ≥ @max, so that the axis ends on
 * ticks ("nice" domain). For example 0–97 with 5 intervals gives 0, 20,
 * 40, 60, 80, 100. When @min equals @max the range is widened around it.
 *
 * Returns: (transfer full) (element-type double): the tick values, at least
 *   two, in increasing order
 */
GArray *
tally_chart_nice_ticks (double  min,
                        double  max,
                        guint   max_ticks,
                        double *step)
{
  GArray *ticks = g_array_new (FALSE, FALSE, sizeof (double));
  double s, first, last;

  if (!isfinite (min) || !isfinite (max))
    min = max = 0;
  if (min > max)
    {
      double t = min;
      min = max;
      max = t;
    }
  if (min == max)
    {
      if (min == 0)
        max = 1;
      else if (min > 0)
        min = 0;
      else
        max = 0;
    }

  s = tally_chart_nice_step (max - min, max_ticks);
  first = floor (min / s + 1e-9) * s;
  last = ceil (max / s - 1e-9) * s;

  for (double v = first; v <= last + s / 2; v += s)
    {
      /* Snap away the float drift of repeated additions (0.30000000000000004). */
      double snapped = round (v / s) * s;

      if (fabs (snapped) < s * 1e-9)
        snapped = 0;
      g_array_append_val (ticks, snapped);
    }

  if (step)
    *step = s;
  return ticks;
}

/**
 * tally_chart_group_digits:
 * @digits: a run of ASCII digits
 * @separator: the thousands separator
 *
 * The module's own grouping helper (the core's tally_tool_format_count()
 * always writes a comma, for the model; the charts follow the locale).
 *
 * Returns: (transfer full): @digits with @separator between groups of
 *   three, e.g. "1234567" → "1,234,567"
 */
char *
tally_chart_group_digits (const char *digits,
                          const char *separator)
{
  GString *out;
  gsize len;

  g_return_val_if_fail (digits != NULL, NULL);
  g_return_val_if_fail (separator != NULL, NULL);

  out = g_string_new (NULL);
  len = strlen (digits);
  for (gsize i = 0; i < len; i++)
    {
      if (i > 0 && (len - i) % 3 == 0)
        g_string_append (out, separator);
      g_string_append_c (out, digits[i]);
    }
  return g_string_free (out, FALSE);
}

typedef struct {
  char     fill;
  char     align;      /* '<', '>', '^', '=' or 0 */
  char     sign;       /* '-', '+', '(', ' ' */
  char     symbol;     /* '$' or 0 */
  gboolean zero;
  int      width;
  gboolean comma;
  int      precision;  /* -1 when not given */
  gboolean trim;
  char     type;       /* 'e', 'f', 'g', 's', 'd', '%', or 0 */
} FormatSpec;

#define SUPPORTED_FORMATS \
  "the d3-format subset [[fill]align][sign][$][0][width][,][.precision][~][type] " \
  "with type e, f, g, s, d or % (for example \",\", \".1f\", \".0%\", \"$,.2f\", \"~s\")"

static gboolean
parse_format (const char *format,
              FormatSpec *spec,
              GError    **error)
{
  const char *p = format;

  memset (spec, 0, sizeof *spec);
  spec->fill = ' ';
  spec->sign = '-';
  spec->precision = -1;

  if (format == NULL)
    return TRUE;

  /* [[fill]align] */
  if (p[0] && p[1] && strchr ("<>^=", p[1]) && (guchar) p[0] < 0x80)
    {
      spec->fill = p[0];
      spec->align = p[1];
      p += 2;
    }
  else if (p[0] && strchr ("<>^=", p[0]))
    {
      spec->align = p[0];
      p++;
    }

  if (*p && strchr ("-+( ", *p))
    spec->sign = *p++;
  if (*p == '$')
    spec->symbol = *p++;
  if (*p == '0')
    {
      spec->zero = TRUE;
      p++;
    }
  while (g_ascii_isdigit (*p))
    {
      spec->width = spec->width * 10 + (*p++ - '0');
      if (spec->width > 64)
        goto bad;
    }
  if (*p == ',')
    {
      spec->comma = TRUE;
      p++;
    }
  if (*p == '.')
    {
      p++;
      if (!g_ascii_isdigit (*p))
        goto bad;
      spec->precision = 0;
      while (g_ascii_isdigit (*p))
        {
          spec->precision = spec->precision * 10 + (*p++ - '0');
          if (spec->precision > 20)
            goto bad;
        }
    }
  if (*p == '~')
    {
      spec->trim = TRUE;
      p++;
    }
  if (*p && strchr ("efgsd%", *p))
    spec->type = *p++;
  if (*p != '\0')
    goto bad;

  if (spec->zero)
    {
      spec->fill = '0';
      if (spec->align == 0)
        spec->align = '=';
    }
  return TRUE;

bad:
  g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
               "format \"%s\" is not supported: use %s", format, SUPPORTED_FORMATS);
  return FALSE;
}

/**
 * tally_chart_format_validate:
 * @format: a d3-format string
 * @error: return location for a %TALLY_CHART_ERROR_UNSUPPORTED error
 *
 * Checks that @format is in the supported d3-format subset:
 * `[[fill]align][sign][$][0][width][,][.precision][~][type]` with type
 * `e`, `f`, `g`, `s`, `d`, `%` or none.
 *
 * Returns: %TRUE when it is
 */
gboolean
tally_chart_format_validate (const char  *format,
                             GError     **error)
{
  FormatSpec spec;

  g_return_val_if_fail (format != NULL, FALSE);
  return parse_format (format, &spec, error);
}

/* Removes trailing zeros of the fraction in @s (and the point when none
 * is left), from the position of @point on. */
static void
trim_zeros (GString *s)
{
  const char *point = strchr (s->str, '.');
  gsize end;

  if (point == NULL || strchr (s->str, 'e'))
    return;
  end = s->len;
  while (end > (gsize) (point - s->str) + 1 && s->str[end - 1] == '0')
    end--;
  if (end == (gsize) (point - s->str) + 1)
    end--;
  g_string_truncate (s, end);
}

/* Writes @value (not negative) with @fmt, a "%.Nf" format, into @body. As
 * JavaScript's toFixed(), which d3-format's fixed types use, a value of
 * 1e21 or more is written in exponent form ("1e+300"): its digits would
 * not be the value's, and 300 of them do not fit a tick label. */
static void
format_fixed (GString    *body,
              const char *fmt,
              double      value)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE + 64];

  g_ascii_formatd (buf, sizeof buf, value >= 1e21 ? "%.12g" : fmt, value);
  g_string_assign (body, buf);
}

static int
decimals_for_step (double step)
{
  if (!(step > 0) || step >= 1)
    return 0;
  return MIN (12, (int) ceil (-log10 (step) - 1e-9));
}

/**
 * tally_chart_format_number_with_locale:
 * @value: the number
 * @format: (nullable): a d3-format string (see tally_chart_format_validate()),
 *   or %NULL for the axis default
 * @step: the tick step when formatting an axis tick (it sets the decimals of
 *   the default format), or 0 for a value on its own (up to two decimals)
 * @locale: the separators to use
 *
 * Formats @value. With no format, values are grouped ("12,345") with as
 * many decimals as @step needs. Negative values use the minus sign U+2212
 * as d3-format does; `$` writes a dollar sign as d3-format's default
 * locale does. An invalid @format is treated as %NULL.
 *
 * Returns: (transfer full): the text
 */
char *
tally_chart_format_number_with_locale (double                        value,
                                       const char                   *format,
                                       double                        step,
                                       const TallyChartNumberLocale *locale)
{
  FormatSpec spec;
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(GString) out = g_string_new (NULL);
  const char *suffix = "";
  gboolean negative;
  char buf[G_ASCII_DTOSTR_BUF_SIZE + 64];
  char fmt[16];
  int precision;
  const char *point;
  g_autofree char *int_part = NULL;
  g_autofree char *grouped = NULL;
  const char *prefix_sign = "";
  const char *suffix_sign = "";
  glong len;

  g_return_val_if_fail (locale != NULL, NULL);

  if (!isfinite (value))
    return g_strdup (isnan (value) ? "NaN" : (value > 0 ? "∞" : MINUS_SIGN "∞"));

  if (format == NULL || !parse_format (format, &spec, NULL))
    {
      parse_format (NULL, &spec, NULL);
      spec.comma = TRUE;
      spec.type = 'f';
      spec.precision = step > 0 ? decimals_for_step (step) : 2;
      spec.trim = !(step > 0);
    }

  negative = value < 0;
  value = fabs (value);

  switch (spec.type)
    {
    case 'f':
      precision = spec.precision < 0 ? 6 : spec.precision;
      g_snprintf (fmt, sizeof fmt, "%%.%df", precision);
      format_fixed (body, fmt, value);
      break;

    case 'd':
      format_fixed (body, "%.0f", round (value));
      break;

    case '%':
      precision = spec.precision < 0 ? 6 : spec.precision;
      g_snprintf (fmt, sizeof fmt, "%%.%df", precision);
      format_fixed (body, fmt, value * 100);
      suffix = "%";
      break;

    case 'e':
      precision = spec.precision < 0 ? 6 : spec.precision;
      g_snprintf (fmt, sizeof fmt, "%%.%de", precision);
      g_ascii_formatd (buf, sizeof buf, fmt, value);
      g_string_assign (body, buf);
      break;

    case 'g':
      precision = spec.precision < 0 ? 6 : MAX (1, spec.precision);
      g_snprintf (fmt, sizeof fmt, "%%.%dg", precision);
      g_ascii_formatd (buf, sizeof buf, fmt, value);
      g_string_assign (body, buf);
      break;

    case 's':
      {
        static const char *prefixes[] = {
          "y", "z", "a", "f", "p", "n", "\xc2\xb5", "m", "",
          "k", "M", "G", "T", "P", "E", "Z", "Y",
        };
        int exp3 = value > 0 ? (int) floor (log10 (value) / 3) : 0;
        double scaled;
        int digits_before;

        exp3 = CLAMP (exp3, -8, 8);
        precision = spec.precision < 0 ? 6 : MAX (1, spec.precision);
        scaled = value / pow (1000, exp3);
        /* Rounding may carry into the next prefix (999.9995k → 1.00000M). */
        digits_before = scaled > 0 ? (int) floor (log10 (scaled)) + 1 : 1;
        g_snprintf (fmt, sizeof fmt, "%%.%df", MAX (0, precision - digits_before));
        format_fixed (body, fmt, scaled);
        if (g_ascii_strtod (body->str, NULL) >= 1000 && exp3 < 8)
          {
            exp3++;
            scaled = value / pow (1000, exp3);
            g_snprintf (fmt, sizeof fmt, "%%.%df", MAX (0, precision - 1));
            format_fixed (body, fmt, scaled);
          }
        suffix = prefixes[exp3 + 8];
      }
      break;

    default:
      /* No type: like "g" with 12 significant digits, trailing zeros
       * removed, but never in exponent form for ordinary magnitudes. */
      if (value != 0 && (value >= 1e21 || value < 1e-6))
        g_ascii_formatd (buf, sizeof buf, "%.12g", value);
      else
        {
          int sig = value > 0 ? (int) floor (log10 (value)) + 1 : 1;

          g_snprintf (fmt, sizeof fmt, "%%.%df", CLAMP (12 - sig, 0, 15));
          g_ascii_formatd (buf, sizeof buf, fmt, value);
        }
      g_string_assign (body, buf);
      spec.trim = TRUE;
      break;
    }

  if (spec.trim)
    trim_zeros (body);

  /* A value that rounds to zero is not negative ("-0.0" reads as a bug). */
  if (negative)
    {
      gboolean all_zero = TRUE;

      for (const char *c = body->str; *c && *c != 'e'; c++)
        if (*c >= '1' && *c <= '9')
          all_zero = FALSE;
      if (all_zero)
        negative = FALSE;
    }

  /* Group the integer part and swap in the locale's decimal separator. */
  point = strchr (body->str, '.');
  if (point == NULL)
    point = strchr (body->str, 'e');
  int_part = g_strndup (body->str, point ? (gsize) (point - body->str) : body->len);
  grouped = spec.comma ? tally_chart_group_digits (int_part, locale->group) : g_strdup (int_part);

  if (negative)
    {
      if (spec.sign == '(')
        {
          prefix_sign = "(";
          suffix_sign = ")";
        }
      else
        prefix_sign = MINUS_SIGN;
    }
  else if (spec.sign == '+')
    prefix_sign = "+";
  else if (spec.sign == ' ')
    prefix_sign = " ";

  g_string_append (out, grouped);
  if (point && *point == '.')
    {
      g_string_append (out, locale->decimal);
      g_string_append (out, point + 1);
    }
  else if (point)
    g_string_append (out, point);
  g_string_append (out, suffix);

  /* Padding, counted in characters. */
  len = g_utf8_strlen (out->str, -1) + g_utf8_strlen (prefix_sign, -1)
        + g_utf8_strlen (suffix_sign, -1) + (spec.symbol ? 1 : 0);
  if (spec.width > len)
    {
      int pad = spec.width - (int) len;
      g_autofree char *padding = g_strnfill (pad, spec.fill);
      g_autoptr(GString) full = g_string_new (NULL);
      char align = spec.align ? spec.align : '>';

      if (align == '=')
        {
          g_string_append_printf (full, "%s%s%s%s%s", prefix_sign, spec.symbol ? "$" : "",
                                  padding, out->str, suffix_sign);
        }
      else
        {
          g_autofree char *core = g_strdup_printf ("%s%s%s%s", prefix_sign, spec.symbol ? "$" : "",
                                                   out->str, suffix_sign);
          if (align == '<')
            g_string_append_printf (full, "%s%s", core, padding);
          else if (align == '^')
            {
              g_autofree char *left = g_strnfill (pad / 2, spec.fill);
              g_autofree char *right = g_strnfill (pad - pad / 2, spec.fill);
              g_string_append_printf (full, "%s%s%s", left, core, right);
            }
          else
            g_string_append_printf (full, "%s%s", padding, core);
        }
      return g_string_free (g_steal_pointer (&full), FALSE);
    }

  return g_strdup_printf ("%s%s%s%s", prefix_sign, spec.symbol ? "$" : "", out->str, suffix_sign);
}

/**
 * tally_chart_format_number:
 * @value: the number
 * @format: (nullable): a d3-format string, or %NULL for the axis default
 * @step: the tick step, or 0 for a value on its own
 *
 * tally_chart_format_number_with_locale() with the current locale's
 * separators (tally_chart_number_locale_init_current()).
 *
 * Returns: (transfer full): the text
 */
char *
tally_chart_format_number (double      value,
                           const char *format,
                           double      step)
{
  TallyChartNumberLocale locale;

  tally_chart_number_locale_init_current (&locale);
  return tally_chart_format_number_with_locale (value, format, step, &locale);
}

/**
 * tally_chart_parse_time:
 * @text: an ISO 8601 date ("2024", "2024-03", "2024-03-01") or date-time
 *   ("2024-03-01T12:00:00Z", "2024-03-01 12:00:00", with or without an
 *   offset; without one it is UTC)
 * @seconds: (out): seconds since 1970-01-01 UTC
 *
 * Returns: %TRUE when @text is such a date
 */
gboolean
tally_chart_parse_time (const char *text,
                        double     *seconds)
{
  g_autoptr(GDateTime) dt = NULL;
  g_autoptr(GTimeZone) utc = g_time_zone_new_utc ();
  g_autofree char *copy = NULL;
  int y = 0, m = 1, d = 1;
  gsize len;

  g_return_val_if_fail (text != NULL, FALSE);
  g_return_val_if_fail (seconds != NULL, FALSE);

  copy = g_strstrip (g_strdup (text));
  len = strlen (copy);

  if (len == 4 || len == 7 || len == 10)
    {
      gboolean shape_ok = TRUE;

      for (gsize i = 0; i < len; i++)
        {
          gboolean dash = (i == 4 || i == 7);

          if (dash ? copy[i] != '-' : !g_ascii_isdigit (copy[i]))
            shape_ok = FALSE;
        }
      if (shape_ok)
        {
          y = atoi (copy);
          if (len >= 7)
            m = atoi (copy + 5);
          if (len == 10)
            d = atoi (copy + 8);
          if (y < 1 || m < 1 || m > 12 || d < 1 || d > 31)
            return FALSE;
          dt = g_date_time_new (utc, y, m, d, 0, 0, 0);
          if (dt == NULL)
            return FALSE;
          *seconds = (double) g_date_time_to_unix (dt);
          return TRUE;
        }
    }

  /* SQLite writes "2024-03-01 12:00:00"; ISO 8601 wants a "T". */
  if (len > 10 && copy[10] == ' ')
    copy[10] = 'T';
  /* ISO 8601 lets a time stop at the minute ("2024-03-01T09:30", as
   * strftime('%Y-%m-%d %H:%M') writes it); GLib wants the seconds. */
  if (len >= 16 && copy[10] == 'T' && copy[13] == ':' &&
      (copy[16] == '\0' || copy[16] == 'Z' || copy[16] == '+' || copy[16] == '-'))
    {
      char *whole = g_strdup_printf ("%.16s:00%s", copy, copy + 16);

      g_free (copy);
      copy = whole;
    }
  dt = g_date_time_new_from_iso8601 (copy, utc);
  if (dt == NULL)
    return FALSE;
  *seconds = (double) g_date_time_to_unix (dt) + g_date_time_get_microsecond (dt) / 1e6;
  return TRUE;
}

typedef struct {
  TallyChartTimeUnit unit;
  int                step;
  double             seconds; /* approximate length of one step */
} TimeInterval;

static const TimeInterval time_intervals[] = {
  { TALLY_CHART_TIME_SECOND, 1, 1 },
  { TALLY_CHART_TIME_SECOND, 5, 5 },
  { TALLY_CHART_TIME_SECOND, 15, 15 },
  { TALLY_CHART_TIME_SECOND, 30, 30 },
  { TALLY_CHART_TIME_MINUTE, 1, 60 },
  { TALLY_CHART_TIME_MINUTE, 5, 300 },
  { TALLY_CHART_TIME_MINUTE, 15, 900 },
  { TALLY_CHART_TIME_MINUTE, 30, 1800 },
  { TALLY_CHART_TIME_HOUR, 1, 3600 },
  { TALLY_CHART_TIME_HOUR, 3, 3 * 3600 },
  { TALLY_CHART_TIME_HOUR, 6, 6 * 3600 },
  { TALLY_CHART_TIME_HOUR, 12, 12 * 3600 },
  { TALLY_CHART_TIME_DAY, 1, 86400 },
  { TALLY_CHART_TIME_DAY, 2, 2 * 86400 },
  { TALLY_CHART_TIME_WEEK, 1, 7 * 86400 },
  { TALLY_CHART_TIME_MONTH, 1, 30.44 * 86400 },
  { TALLY_CHART_TIME_MONTH, 3, 91.3 * 86400 },
  { TALLY_CHART_TIME_MONTH, 6, 182.6 * 86400 },
  { TALLY_CHART_TIME_YEAR, 1, 365.25 * 86400 },
};

/* The first tick at or before @dt for @interval, aligned to the unit
 * (weeks to Monday, 3-month steps to quarters, year steps to multiples). */
static GDateTime *
floor_time (GDateTime          *dt,
            TallyChartTimeUnit  unit,
            int                 step)
{
  GTimeZone *tz = g_date_time_get_timezone (dt);
  int y = g_date_time_get_year (dt);
  int mo = g_date_time_get_month (dt);
  int d = g_date_time_get_day_of_month (dt);
  int h = g_date_time_get_hour (dt);
  int mi = g_date_time_get_minute (dt);
  int s = g_date_time_get_second (dt);

  switch (unit)
    {
    case TALLY_CHART_TIME_SECOND:
      return g_date_time_new (tz, y, mo, d, h, mi, s - s % step);
    case TALLY_CHART_TIME_MINUTE:
      return g_date_time_new (tz, y, mo, d, h, mi - mi % step, 0);
    case TALLY_CHART_TIME_HOUR:
      return g_date_time_new (tz, y, mo, d, h - h % step, 0, 0);
    case TALLY_CHART_TIME_DAY:
      return g_date_time_new (tz, y, mo, d, 0, 0, 0);
    case TALLY_CHART_TIME_WEEK:
      {
        g_autoptr(GDateTime) day = g_date_time_new (tz, y, mo, d, 0, 0, 0);
        return g_date_time_add_days (day, -(g_date_time_get_day_of_week (day) - 1));
      }
    case TALLY_CHART_TIME_MONTH:
      return g_date_time_new (tz, y, mo - (mo - 1) % step, 1, 0, 0, 0);
    case TALLY_CHART_TIME_YEAR:
    default:
      return g_date_time_new (tz, y - ((y % step) + step) % step, 1, 1, 0, 0, 0);
    }
}

static GDateTime *
add_time (GDateTime          *dt,
          TallyChartTimeUnit  unit,
          int                 step)
{
  switch (unit)
    {
    case TALLY_CHART_TIME_SECOND:
      return g_date_time_add_seconds (dt, step);
    case TALLY_CHART_TIME_MINUTE:
      return g_date_time_add_minutes (dt, step);
    case TALLY_CHART_TIME_HOUR:
      return g_date_time_add_hours (dt, step);
    case TALLY_CHART_TIME_DAY:
      return g_date_time_add_days (dt, step);
    case TALLY_CHART_TIME_WEEK:
      return g_date_time_add_weeks (dt, step);
    case TALLY_CHART_TIME_MONTH:
      return g_date_time_add_months (dt, step);
    case TALLY_CHART_TIME_YEAR:
    default:
      return g_date_time_add_years (dt, step);
    }
}

/**
 * tally_chart_time_ticks:
 * @first: the earliest time, in seconds since 1970-01-01 UTC
 * @last: the latest time, in the same unit
 * @max_ticks: the most ticks wanted, ≥ 2
 * @unit: (out) (optional): the unit the ticks fall on, for their labels
 *
 * Ticks for a temporal axis, on calendar boundaries in UTC: the finest of
 * 1/5/15/30 seconds or minutes, 1/3/6/12 hours, 1/2 days, weeks (Mondays),
 * 1/3/6 months (quarters) and 1, 2, 5, 10, 20, 50 … years that gives at
 * most @max_ticks ticks between @first and @last.
 *
 * Returns: (transfer full) (element-type double): the tick times in
 *   seconds, increasing, within [@first, @last]; at least one
 */
GArray *
tally_chart_time_ticks (double              first,
                        double              last,
                        guint               max_ticks,
                        TallyChartTimeUnit *unit)
{
  GArray *ticks = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GTimeZone) utc = g_time_zone_new_utc ();
  g_autoptr(GDateTime) t = NULL;
  TimeInterval chosen = time_intervals[G_N_ELEMENTS (time_intervals) - 1];
  double span;

  if (last < first)
    {
      double x = first;
      first = last;
      last = x;
    }
  span = last - first;
  if (max_ticks < 2)
    max_ticks = 2;

  chosen.step = 0;
  for (guint i = 0; i < G_N_ELEMENTS (time_intervals); i++)
    if (floor (span / time_intervals[i].seconds) + 1 <= max_ticks)
      {
        chosen = time_intervals[i];
        break;
      }
  if (chosen.step == 0)
    {
      /* Years: a nice 1-2-5 number of them. */
      double years = tally_chart_nice_step (span / (365.25 * 86400), max_ticks - 1);

      chosen.unit = TALLY_CHART_TIME_YEAR;
      chosen.step = (int) MAX (1, years);
    }

  {
    g_autoptr(GDateTime) start = g_date_time_new_from_unix_utc ((gint64) floor (first));

    if (start == NULL)
      {
        g_array_append_val (ticks, first);
        if (unit)
          *unit = TALLY_CHART_TIME_YEAR;
        return ticks;
      }
    t = floor_time (start, chosen.unit, chosen.step);
  }

  while (t != NULL && ticks->len < 1000)
    {
      double v = (double) g_date_time_to_unix (t);
      GDateTime *next;

      if (v > last + 1e-6)
        break;
      if (v >= first - 1e-6)
        g_array_append_val (ticks, v);
      next = add_time (t, chosen.unit, chosen.step);
      g_date_time_unref (t);
      t = next;
    }

  if (ticks->len == 0)
    g_array_append_val (ticks, first);
  if (unit)
    *unit = chosen.unit;
  return ticks;
}

/**
 * tally_chart_time_format_validate:
 * @format: a d3-time-format string
 * @error: return location for a %TALLY_CHART_ERROR_UNSUPPORTED error
 *
 * Checks that @format uses only the directives `%a %A %b %B %d %e %H %I
 * %j %m %M %p %S %y %Y %Z %%`, which d3-time-format and GDateTime share.
 *
 * Returns: %TRUE when it does
 */
gboolean
tally_chart_time_format_validate (const char  *format,
                                  GError     **error)
{
  g_return_val_if_fail (format != NULL, FALSE);

  for (const char *p = format; *p; p++)
    {
      if (*p != '%')
        continue;
      p++;
      if (*p == '\0' || strchr ("aAbBdeHIjmMpSyYZ%", *p) == NULL)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                       "temporal format \"%s\" is not supported: use the d3-time-format "
                       "directives %%a %%A %%b %%B %%d %%e %%H %%I %%j %%m %%M %%p %%S "
                       "%%y %%Y %%Z (for example \"%%b %%Y\")", format);
          return FALSE;
        }
    }
  return TRUE;
}

/**
 * tally_chart_format_time:
 * @seconds: seconds since 1970-01-01 UTC
 * @unit: the tick unit, which picks the default format
 * @format: (nullable): a d3-time-format string, or %NULL for the default of
 *   @unit: "%Y" for years, "%b %Y" for months, "%-d %b" for weeks and days,
 *   "%H:%M" for hours and minutes, "%H:%M:%S" for seconds, with the
 *   locale's month names
 *
 * Returns: (transfer full): the date as text, in UTC
 */
char *
tally_chart_format_time (double              seconds,
                         TallyChartTimeUnit  unit,
                         const char         *format)
{
  g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc ((gint64) floor (seconds));
  const char *fmt = format;
  char *text;

  if (dt == NULL)
    return g_strdup ("?");

  if (fmt == NULL)
    {
      switch (unit)
        {
        case TALLY_CHART_TIME_SECOND:
          fmt = "%H:%M:%S";
          break;
        case TALLY_CHART_TIME_MINUTE:
        case TALLY_CHART_TIME_HOUR:
          fmt = "%H:%M";
          break;
        case TALLY_CHART_TIME_DAY:
        case TALLY_CHART_TIME_WEEK:
          fmt = "%-d %b";
          break;
        case TALLY_CHART_TIME_MONTH:
          fmt = "%b %Y";
          break;
        case TALLY_CHART_TIME_YEAR:
        default:
          fmt = "%Y";
          break;
        }
    }

  text = g_date_time_format (dt, fmt);
  return text ? text : g_strdup ("?");
}
