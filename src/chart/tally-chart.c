/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-chart"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally-chart-private.h"
#include "tally-chart-scale.h"

/*
 * A chart resolved from a spec and its data (docs/charts.md §4): the
 * fields looked up, the values read, aggregated, sorted, capped and
 * stacked, ready to draw (tally-chart-render.c) and to describe in words
 * for the model (tally_chart_dup_summary()).
 */

G_DEFINE_FINAL_TYPE (TallyChart, tally_chart, G_TYPE_OBJECT)

static void
series_free (gpointer data)
{
  TallyChartSeries *series = data;

  g_free (series->name);
  g_array_unref (series->points);
  g_free (series);
}

static void
tally_chart_finalize (GObject *object)
{
  TallyChart *self = (TallyChart *) object;

  g_clear_object (&self->spec);
  g_clear_object (&self->data);
  g_clear_pointer (&self->categories, g_ptr_array_unref);
  g_clear_pointer (&self->category_keys, g_array_unref);
  g_clear_pointer (&self->series, g_ptr_array_unref);
  g_free (self->x_title);
  g_free (self->y_title);
  g_free (self->color_title);

  G_OBJECT_CLASS (tally_chart_parent_class)->finalize (object);
}

static void
tally_chart_class_init (TallyChartClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tally_chart_finalize;
}

static void
tally_chart_init (TallyChart *self)
{
  self->categories = g_ptr_array_new_with_free_func (g_free);
  self->category_keys = g_array_new (FALSE, TRUE, sizeof (double));
  self->series = g_ptr_array_new_with_free_func (series_free);
}

/**
 * tally_chart_time_unit_of: (skip)
 * @times: seconds since 1970, UTC; NaN entries are ignored
 * @n: the number of @times
 *
 * The unit that labels these times without losing anything: minutes when
 * one is not at midnight, years when all are on 1 January, months when
 * all are on the first of a month, else days (docs/charts.md §4.3).
 *
 * Returns: the unit
 */
TallyChartTimeUnit
tally_chart_time_unit_of (const double *times,
                          guint         n)
{
  gboolean all_midnight = TRUE, all_first = TRUE, all_january = TRUE;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GDateTime) dt = isnan (times[i]) ? NULL : g_date_time_new_from_unix_utc ((gint64) times[i]);

      if (dt == NULL)
        continue;
      if (g_date_time_get_hour (dt) || g_date_time_get_minute (dt) || g_date_time_get_second (dt))
        all_midnight = FALSE;
      if (g_date_time_get_day_of_month (dt) != 1)
        all_first = FALSE;
      if (g_date_time_get_month (dt) != 1)
        all_january = FALSE;
    }
  if (!all_midnight)
    return TALLY_CHART_TIME_MINUTE;
  if (all_first && all_january)
    return TALLY_CHART_TIME_YEAR;
  if (all_first)
    return TALLY_CHART_TIME_MONTH;
  return TALLY_CHART_TIME_DAY;
}

/**
 * tally_chart_format_time_label: (skip)
 * @t: seconds since 1970, UTC
 * @unit: from tally_chart_time_unit_of()
 * @format: (nullable): the channel's d3-time-format, or %NULL
 *
 * Returns: (transfer full): @t as a temporal category or a tooltip names
 *   it: with @format when given, else ISO 8601 for days and minutes
 *   ("2024-03-01", "2024-03-01 14:30") and the locale's month or year
 */
char *
tally_chart_format_time_label (double              t,
                               TallyChartTimeUnit  unit,
                               const char         *format)
{
  if (unit == TALLY_CHART_TIME_MINUTE && format == NULL)
    return tally_chart_format_time (t, unit, "%Y-%m-%d %H:%M");
  if (unit == TALLY_CHART_TIME_DAY && format == NULL)
    return tally_chart_format_time (t, unit, "%Y-%m-%d");
  return tally_chart_format_time (t, unit, format);
}

/* One (x, series) cell being aggregated. */
typedef struct {
  double sum;
  double min;
  double max;
  guint  count;
} Acc;

static void
acc_add (Acc    *acc,
         double  v)
{
  if (acc->count == 0)
    acc->min = acc->max = v;
  acc->sum += v;
  acc->min = MIN (acc->min, v);
  acc->max = MAX (acc->max, v);
  acc->count++;
}

static double
acc_value (const Acc           *acc,
           TallyChartAggregate  aggregate)
{
  switch (aggregate)
    {
    case TALLY_CHART_AGGREGATE_MEAN:
      return acc->count ? acc->sum / acc->count : 0;
    case TALLY_CHART_AGGREGATE_COUNT:
      return acc->count;
    case TALLY_CHART_AGGREGATE_MIN:
      return acc->min;
    case TALLY_CHART_AGGREGATE_MAX:
      return acc->max;
    case TALLY_CHART_AGGREGATE_SUM:
    case TALLY_CHART_AGGREGATE_NONE:
    default:
      return acc->sum;
    }
}

/* Whether merging the smallest groups into "Other" keeps the meaning:
 * only for sums (and counts), a mean of means would not be one. */
static gboolean
aggregate_merges (TallyChartAggregate aggregate)
{
  return aggregate == TALLY_CHART_AGGREGATE_NONE
         || aggregate == TALLY_CHART_AGGREGATE_SUM
         || aggregate == TALLY_CHART_AGGREGATE_COUNT;
}

/* A distinct category or series. */
typedef struct {
  char   *label;
  double  key;      /* time or number, for ordered types */
  double  total;    /* sum of |values|, for sorting by value and capping */
  guint   order;    /* first appearance */
  int     index;    /* final index, or -1 when dropped, or the Other index */
} Group;

static void
group_free (gpointer data)
{
  Group *g = data;

  g_free (g->label);
  g_free (g);
}

static char *
node_to_text (JsonNode *node)
{
  GType type = json_node_get_value_type (node);
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (type == G_TYPE_STRING)
    return g_strdup (json_node_get_string (node));
  if (type == G_TYPE_INT64)
    return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
  if (type == G_TYPE_DOUBLE)
    return g_strdup (g_ascii_dtostr (buf, sizeof buf, json_node_get_double (node)));
  if (type == G_TYPE_BOOLEAN)
    return g_strdup (json_node_get_boolean (node) ? "true" : "false");
  return g_strdup ("");
}

typedef enum {
  READ_OK,
  READ_SKIP,  /* NULL, NaN or infinite */
  READ_BAD,
} ReadResult;

/* Reads a cell as a number or, when @temporal, as a time in seconds since
 * 1970: NULL and "NaN" are skipped, anything else unreadable is bad. */
static ReadResult
read_value (JsonNode *node,
            gboolean  temporal,
            double   *out)
{
  GType type;

  if (node == NULL)
    return READ_SKIP;
  type = json_node_get_value_type (node);
  if (type == G_TYPE_INT64 || type == G_TYPE_DOUBLE)
    {
      *out = json_node_get_double (node);
      if (temporal)
        {
          double v = *out;

          /* A bare year (2024) is a year; other numbers are milliseconds
           * since 1970, as in Vega-Lite. */
          if (v == floor (v) && v >= 1000 && v <= 9999)
            {
              char text[8];

              g_snprintf (text, sizeof text, "%04d", (int) v);
              return tally_chart_parse_time (text, out) ? READ_OK : READ_BAD;
            }
          *out = v / 1000.0;
        }
      return isfinite (*out) ? READ_OK : READ_SKIP;
    }
  if (type == G_TYPE_STRING)
    {
      g_autofree char *text = g_strdup (json_node_get_string (node));
      char *end = NULL;

      /* Numbers may have white space around them; times are read as they are */
      if (!temporal)
        g_strstrip (text);
      if (g_ascii_strcasecmp (text, "nan") == 0 || g_ascii_strcasecmp (text, "null") == 0)
        return READ_SKIP;
      if (temporal)
        return tally_chart_parse_time (text, out) ? READ_OK : READ_BAD;
      if (*text == '\0')
        return READ_BAD;
      *out = g_ascii_strtod (text, &end);
      if (end == NULL || *end != '\0')
        return READ_BAD;
      return isfinite (*out) ? READ_OK : READ_SKIP;
    }
  return READ_BAD;
}

static GError *
not_numeric_error (TallyChart        *self,
                   guint              row,
                   int                column,
                   TallyChartChannel  channel,
                   gboolean           temporal)
{
  JsonNode *node = tally_chart_data_get_cell (self->data, row, column);
  g_autofree char *text = node_to_text (node);

  if (temporal)
    return g_error_new (TALLY_CHART_ERROR, TALLY_CHART_ERROR_NOT_NUMERIC,
                        "row %u: \"%s\" in column \"%s\" (encoding.%s, temporal) is not an "
                        "ISO 8601 date such as 2024-03-01 or 2024-03-01T12:00:00Z",
                        row + 1, text, tally_chart_data_get_column_name (self->data, column),
                        tally_chart_channel_to_string (channel));
  return g_error_new (TALLY_CHART_ERROR, TALLY_CHART_ERROR_NOT_NUMERIC,
                      "row %u: \"%s\" in column \"%s\" (encoding.%s, quantitative) is not a "
                      "number; use a nominal or ordinal type for text",
                      row + 1, text, tally_chart_data_get_column_name (self->data, column),
                      tally_chart_channel_to_string (channel));
}

static int
compare_labels (const Group *a,
                const Group *b)
{
  int c = g_utf8_collate (a->label, b->label);

  return c ? c : (int) a->order - (int) b->order;
}

typedef struct {
  TallyChartSort  sort;
  gboolean        ordered;   /* compare keys, not labels */
  char          **list;
} SortContext;

static int
list_position (char       **list,
               const char  *label)
{
  for (int i = 0; list && list[i]; i++)
    if (g_str_equal (list[i], label))
      return i;
  return G_MAXINT;
}

static int
compare_groups (gconstpointer pa,
                gconstpointer pb,
                gpointer      user_data)
{
  const Group *a = *(Group * const *) pa;
  const Group *b = *(Group * const *) pb;
  const SortContext *ctx = user_data;
  int c = 0;

  switch (ctx->sort)
    {
    case TALLY_CHART_SORT_NONE:
      return (int) a->order - (int) b->order;
    case TALLY_CHART_SORT_BY_VALUE:
      c = (a->total > b->total) - (a->total < b->total);
      break;
    case TALLY_CHART_SORT_BY_VALUE_DESCENDING:
      c = (a->total < b->total) - (a->total > b->total);
      break;
    case TALLY_CHART_SORT_LIST:
      {
        int pa_ = list_position (ctx->list, a->label);
        int pb_ = list_position (ctx->list, b->label);

        c = (pa_ > pb_) - (pa_ < pb_);
      }
      break;
    case TALLY_CHART_SORT_DEFAULT:
    case TALLY_CHART_SORT_ASCENDING:
    case TALLY_CHART_SORT_DESCENDING:
    default:
      break;
    }
  if (c != 0)
    return c;

  if (ctx->ordered)
    c = (a->key > b->key) - (a->key < b->key);
  if (c == 0)
    c = compare_labels (a, b);
  return ctx->sort == TALLY_CHART_SORT_DESCENDING ? -c : c;
}

/* Sorts @groups and assigns each its final index; beyond @cap, the
 * smallest by total are merged into one "Other" (when @merge) or dropped.
 * Returns the labels in order, and sets @n_merged and @n_dropped. */
static GPtrArray *
order_groups (GPtrArray  *groups,
              const SortContext *ctx,
              guint       cap,
              gboolean    merge,
              guint      *n_merged,
              guint      *n_dropped,
              GArray     *keys_out)
{
  GPtrArray *labels = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) by_total = NULL;
  guint keep = groups->len;
  gboolean other = FALSE;

  *n_merged = *n_dropped = 0;

  if (cap > 0 && groups->len > cap)
    {
      /* The copy shares the groups: it must not free them. */
      by_total = g_ptr_array_copy (groups, NULL, NULL);
      g_ptr_array_set_free_func (by_total, NULL);
      keep = merge ? cap - 1 : cap;
      other = merge;
      /* Largest first; ties by first appearance. */
      for (guint i = 1; i < by_total->len; i++)
        for (guint j = i; j > 0; j--)
          {
            Group *a = g_ptr_array_index (by_total, j - 1);
            Group *b = g_ptr_array_index (by_total, j);

            if (a->total < b->total || (a->total == b->total && a->order > b->order))
              {
                by_total->pdata[j - 1] = b;
                by_total->pdata[j] = a;
              }
            else
              break;
          }
      for (guint i = 0; i < by_total->len; i++)
        ((Group *) g_ptr_array_index (by_total, i))->index = i < keep ? 0 : -1;
      if (merge)
        *n_merged = groups->len - keep;
      else
        *n_dropped = groups->len - keep;
    }

  g_ptr_array_sort_with_data (groups, compare_groups, (gpointer) ctx);

  for (guint i = 0; i < groups->len; i++)
    {
      Group *g = g_ptr_array_index (groups, i);

      if (by_total != NULL && g->index < 0)
        continue;
      g->index = labels->len;
      g_ptr_array_add (labels, g_strdup (g->label));
      if (keys_out)
        g_array_append_val (keys_out, g->key);
    }
  if (other)
    {
      int other_index = labels->len;
      double nan = NAN;

      g_ptr_array_add (labels, g_strdup (_("Other")));
      if (keys_out)
        g_array_append_val (keys_out, nan);
      for (guint i = 0; i < groups->len; i++)
        {
          Group *g = g_ptr_array_index (groups, i);

          /* Groups not given an index above are the merged ones. */
          if (g->index < 0)
            g->index = other_index;
        }
    }
  else if (by_total != NULL)
    {
      /* Dropped groups keep -1. */
    }
  return labels;
}

/* Looks up or adds the group for @label. */
static Group *
get_group (GHashTable *table,
           GPtrArray  *groups,
           const char *label,
           double      key)
{
  Group *g = g_hash_table_lookup (table, label);

  if (g == NULL)
    {
      g = g_new0 (Group, 1);
      g->label = g_strdup (label);
      g->key = key;
      g->order = groups->len;
      g_ptr_array_add (groups, g);
      g_hash_table_insert (table, g->label, g);
    }
  return g;
}

/* Adds @value to the aggregate of the cell (@xg, @sg) in @cells, made on
 * first use; cells are keyed by the two groups' first-appearance order. */
static void
cells_add (GHashTable *cells,
           Group      *xg,
           Group      *sg,
           double      value)
{
  g_autofree char *cell_key = g_strdup_printf ("%u\x1f%u", xg->order, sg->order);
  Acc *acc = g_hash_table_lookup (cells, cell_key);

  if (acc == NULL)
    {
      acc = g_new0 (Acc, 1);
      g_hash_table_insert (cells, g_steal_pointer (&cell_key), acc);
    }
  acc_add (acc, value);
}

static char *
default_title (const TallyChartEncoding *enc)
{
  const char *agg = tally_chart_aggregate_to_string (enc->aggregate);

  if (enc->title != NULL)
    return g_strdup (enc->title);
  if (enc->aggregate == TALLY_CHART_AGGREGATE_COUNT)
    return g_strdup ("Count of Records");
  if (agg != NULL)
    {
      /* Vega-Lite's default: "Sum of revenue". */
      g_autofree char *cap = g_strdup (agg);

      cap[0] = g_ascii_toupper (cap[0]);
      return g_strdup_printf ("%s of %s", cap, enc->field);
    }
  return g_strdup (enc->field ? enc->field : "");
}

static int
compare_points (gconstpointer a,
                gconstpointer b)
{
  const TallyChartPoint *pa = a;
  const TallyChartPoint *pb = b;

  return (pa->x > pb->x) - (pa->x < pb->x);
}

static void
stack_series (TallyChart *self)
{
  g_autoptr(GHashTable) pos = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr(GHashTable) neg = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr(GHashTable) totals = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);

  /* Points share an x when their x is equal; the key is x's bits. */
  if (self->normalized)
    for (guint s = 0; s < self->series->len; s++)
      {
        TallyChartSeries *series = g_ptr_array_index (self->series, s);

        for (guint i = 0; i < series->points->len; i++)
          {
            TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);
            gint64 key;
            double *total;

            memcpy (&key, &p->x, sizeof key);
            total = g_hash_table_lookup (totals, &key);
            if (total == NULL)
              {
                total = g_new0 (double, 1);
                g_hash_table_insert (totals, g_memdup2 (&key, sizeof key), total);
              }
            *total += fabs (p->y);
          }
      }

  for (guint s = 0; s < self->series->len; s++)
    {
      TallyChartSeries *series = g_ptr_array_index (self->series, s);

      for (guint i = 0; i < series->points->len; i++)
        {
          TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);
          GHashTable *table = p->y < 0 ? neg : pos;
          gint64 key;
          double *base;

          memcpy (&key, &p->x, sizeof key);
          if (self->normalized)
            {
              double *total = g_hash_table_lookup (totals, &key);

              p->y = (total && *total > 0) ? p->y / *total : 0;
            }
          base = g_hash_table_lookup (table, &key);
          if (base == NULL)
            {
              base = g_new0 (double, 1);
              g_hash_table_insert (table, g_memdup2 (&key, sizeof key), base);
            }
          p->y0 = *base;
          p->y1 = *base + p->y;
          *base = p->y1;
        }
    }
}

static gboolean
resolve (TallyChart  *self,
         GError     **error)
{
  TallyChartSpec *spec = self->spec;
  gboolean arc = self->mark == TALLY_CHART_MARK_ARC;
  const TallyChartEncoding *value_enc = tally_chart_spec_get_encoding (spec, arc ? TALLY_CHART_CHANNEL_THETA : TALLY_CHART_CHANNEL_Y);
  const TallyChartEncoding *x_enc = arc ? tally_chart_spec_get_encoding (spec, TALLY_CHART_CHANNEL_COLOR)
                                        : tally_chart_spec_get_encoding (spec, TALLY_CHART_CHANNEL_X);
  const TallyChartEncoding *series_enc = NULL;
  TallyChartChannel value_channel = arc ? TALLY_CHART_CHANNEL_THETA : TALLY_CHART_CHANNEL_Y;
  TallyChartChannel x_channel = arc ? TALLY_CHART_CHANNEL_COLOR : TALLY_CHART_CHANNEL_X;
  TallyChartChannel series_channel = TALLY_CHART_CHANNEL_COLOR;
  int value_col = -1, x_col = -1, series_col = -1;
  gboolean raw_points;
  TallyChartAggregate aggregate = value_enc->aggregate;
  g_autoptr(GHashTable) x_table = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) s_table = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) x_groups = g_ptr_array_new_with_free_func (group_free);
  g_autoptr(GPtrArray) s_groups = g_ptr_array_new_with_free_func (group_free);
  g_autoptr(GHashTable) cells = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GArray) raw = g_array_new (FALSE, FALSE, sizeof (double) * 3);
  g_autoptr(GPtrArray) series_labels = NULL;
  TallyChartStack stack = value_enc->stack;
  guint n_rows;

  if (!arc)
    {
      const TallyChartEncoding *color = tally_chart_spec_get_encoding (spec, TALLY_CHART_CHANNEL_COLOR);
      const TallyChartEncoding *offset = tally_chart_spec_get_encoding (spec, TALLY_CHART_CHANNEL_X_OFFSET);

      if (color->present)
        series_enc = color;
      else if (offset->present)
        {
          series_enc = offset;
          series_channel = TALLY_CHART_CHANNEL_X_OFFSET;
        }
    }

  /* Fields. */
  {
    struct { const TallyChartEncoding *enc; TallyChartChannel channel; int *col; } fields[] = {
      { value_enc, value_channel, &value_col },
      { x_enc, x_channel, &x_col },
      { series_enc, series_channel, &series_col },
    };

    for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
      {
        if (fields[i].enc == NULL || !fields[i].enc->present || fields[i].enc->field == NULL)
          continue;
        /* An empty `data.values` has no columns to check against. */
        if (tally_chart_data_get_n_columns (self->data) == 0
            && tally_chart_data_get_n_rows (self->data) == 0)
          continue;
        *fields[i].col = tally_chart_data_find_column (self->data, fields[i].enc->field);
        if (*fields[i].col < 0)
          {
            g_autofree char *list = tally_chart_data_dup_column_list (self->data);

            g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_MISSING_FIELD,
                         "field \"%s\" (encoding.%s) is not in the data; available columns: %s",
                         fields[i].enc->field, tally_chart_channel_to_string (fields[i].channel),
                         list);
            return FALSE;
          }
      }
  }

  self->x_type = x_enc->present ? x_enc->type : TALLY_CHART_FIELD_NOMINAL;
  self->x_categorical = arc || self->mark == TALLY_CHART_MARK_BAR
                        || self->x_type == TALLY_CHART_FIELD_NOMINAL
                        || self->x_type == TALLY_CHART_FIELD_ORDINAL;
  self->has_series = series_enc != NULL;
  raw_points = self->mark == TALLY_CHART_MARK_POINT && aggregate == TALLY_CHART_AGGREGATE_NONE;

  self->x_title = arc ? g_strdup ("") : default_title (x_enc);
  self->y_title = default_title (value_enc);
  self->color_title = arc ? (x_enc->present ? default_title (x_enc) : g_strdup (""))
                          : (series_enc ? default_title (series_enc) : NULL);
  self->x_format = x_enc->present ? x_enc->format : NULL;
  self->y_format = value_enc->format;

  /* Read the rows. */
  n_rows = tally_chart_data_get_n_rows (self->data);
  self->rows_total = n_rows;
  for (guint r = 0; r < n_rows; r++)
    {
      double value = 1, x = 0;
      g_autofree char *x_label = NULL;
      g_autofree char *s_label = NULL;
      Group *xg = NULL, *sg = NULL;
      ReadResult rr;

      if (value_col >= 0)
        {
          rr = read_value (tally_chart_data_get_cell (self->data, r, value_col), FALSE, &value);
          if (rr == READ_BAD)
            {
              g_propagate_error (error, not_numeric_error (self, r, value_col, value_channel, FALSE));
              return FALSE;
            }
          if (rr == READ_SKIP)
            {
              self->rows_skipped++;
              continue;
            }
          if (aggregate == TALLY_CHART_AGGREGATE_COUNT)
            value = 1;
        }

      if (x_col >= 0)
        {
          JsonNode *cell = tally_chart_data_get_cell (self->data, r, x_col);

          if (x_enc->type == TALLY_CHART_FIELD_TEMPORAL || x_enc->type == TALLY_CHART_FIELD_QUANTITATIVE)
            rr = read_value (cell, x_enc->type == TALLY_CHART_FIELD_TEMPORAL, &x);
          else
            rr = cell ? READ_OK : READ_SKIP;
          if (rr == READ_BAD)
            {
              g_propagate_error (error, not_numeric_error (self, r, x_col, x_channel,
                                                           x_enc->type == TALLY_CHART_FIELD_TEMPORAL));
              return FALSE;
            }
          if (rr == READ_SKIP)
            {
              self->rows_skipped++;
              continue;
            }
          if (self->x_categorical)
            {
              if (x_enc->type == TALLY_CHART_FIELD_TEMPORAL)
                x_label = tally_chart_format_time (x, TALLY_CHART_TIME_SECOND, "%Y-%m-%dT%H:%M:%S");
              else
                x_label = node_to_text (cell);
            }
        }
      else if (self->x_categorical)
        x_label = g_strdup (self->y_title);

      if (series_col >= 0)
        {
          JsonNode *cell = tally_chart_data_get_cell (self->data, r, series_col);

          if (cell == NULL)
            {
              self->rows_skipped++;
              continue;
            }
          s_label = node_to_text (cell);
        }
      else
        s_label = g_strdup ("");

      if (arc && value < 0)
        {
          self->rows_negative++;
          continue;
        }

      self->rows_plotted++;
      sg = get_group (s_table, s_groups, s_label, 0);
      sg->total += fabs (value);

      if (self->x_categorical)
        {
          xg = get_group (x_table, x_groups, x_label, x);
          xg->total += value;
          cells_add (cells, xg, sg, value);
        }
      else if (raw_points)
        {
          double triple[3] = { x, value, sg->order };

          g_array_append_val (raw, triple);
        }
      else
        {
          char xbuf[G_ASCII_DTOSTR_BUF_SIZE];

          /* Continuous x: group by the exact x, keep it as the group key. */
          xg = get_group (x_table, x_groups, g_ascii_dtostr (xbuf, sizeof xbuf, x), x);
          cells_add (cells, xg, sg, value);
        }
    }

  /* Series: sorted, capped. */
  {
    SortContext ctx = { series_enc ? series_enc->sort : TALLY_CHART_SORT_DEFAULT, FALSE,
                        series_enc ? series_enc->sort_values : NULL };
    guint dropped = 0;

    series_labels = order_groups (s_groups, &ctx, TALLY_CHART_MAX_SERIES,
                                  aggregate_merges (aggregate) && !raw_points,
                                  &self->series_merged, &dropped, NULL);
    self->series_merged += dropped;
    for (guint i = 0; i < series_labels->len; i++)
      {
        TallyChartSeries *series = g_new0 (TallyChartSeries, 1);

        series->name = g_strdup (g_ptr_array_index (series_labels, i));
        series->points = g_array_new (FALSE, TRUE, sizeof (TallyChartPoint));
        g_ptr_array_add (self->series, series);
      }
  }

  /* Categories: sorted, capped. */
  if (self->x_categorical)
    {
      gboolean ordered = x_enc->present && (x_enc->type == TALLY_CHART_FIELD_TEMPORAL
                                            || x_enc->type == TALLY_CHART_FIELD_QUANTITATIVE);
      SortContext ctx = { x_enc->present ? x_enc->sort : TALLY_CHART_SORT_DEFAULT, ordered,
                          x_enc->present ? x_enc->sort_values : NULL };
      guint cap = 0;
      GPtrArray *labels;

      /* Ordered categories (dates, numbers) are never merged: the axis
       * thins its labels instead. */
      if (arc)
        cap = TALLY_CHART_MAX_SLICES;
      else if (!ordered)
        cap = TALLY_CHART_MAX_NOMINAL;
      labels = order_groups (x_groups, &ctx, cap, aggregate_merges (aggregate),
                             &self->categories_merged, &self->categories_dropped,
                             self->category_keys);
      g_ptr_array_unref (self->categories);
      self->categories = labels;

      /* Temporal categories are labelled by the unit their span needs. */
      if (x_enc->present && x_enc->type == TALLY_CHART_FIELD_TEMPORAL && self->categories->len > 0)
        {
          TallyChartTimeUnit unit = tally_chart_time_unit_of ((const double *) (gpointer) self->category_keys->data,
                                                              self->category_keys->len);

          for (guint i = 0; i < self->categories->len; i++)
            {
              double t = g_array_index (self->category_keys, double, i);

              if (isnan (t))
                continue;
              g_free (self->categories->pdata[i]);
              self->categories->pdata[i] = tally_chart_format_time_label (t, unit, x_enc->format);
            }
        }
    }

  /* The points, from the aggregated cells. */
  if (raw_points)
    {
      for (guint i = 0; i < raw->len; i++)
        {
          double *triple = &g_array_index (raw, double, i * 3);
          Group *sg = g_ptr_array_index (s_groups, 0);
          TallyChartPoint p = { triple[0], triple[1], 0, triple[1] };

          /* Find the series group by first appearance. */
          for (guint j = 0; j < s_groups->len; j++)
            if (((Group *) g_ptr_array_index (s_groups, j))->order == (guint) triple[2])
              sg = g_ptr_array_index (s_groups, j);
          if (sg->index < 0)
            continue;
          g_array_append_val (((TallyChartSeries *) g_ptr_array_index (self->series, sg->index))->points, p);
        }
    }
  else
    {
      /* Merge cells that fall into the same (category, series) after
       * capping, then emit one point each. */
      g_autoptr(GHashTable) merged = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      GHashTableIter iter;
      gpointer key, value;

      g_hash_table_iter_init (&iter, cells);
      while (g_hash_table_iter_next (&iter, &key, &value))
        {
          guint xo, so;
          Group *xg = NULL, *sg = NULL;
          double xv;
          g_autofree char *mkey = NULL;
          Acc *acc = value, *target;

          if (sscanf (key, "%u\x1f%u", &xo, &so) != 2)
            continue;
          for (guint j = 0; j < x_groups->len; j++)
            if (((Group *) g_ptr_array_index (x_groups, j))->order == xo)
              xg = g_ptr_array_index (x_groups, j);
          for (guint j = 0; j < s_groups->len; j++)
            if (((Group *) g_ptr_array_index (s_groups, j))->order == so)
              sg = g_ptr_array_index (s_groups, j);
          if (xg == NULL || sg == NULL || sg->index < 0 || (self->x_categorical && xg->index < 0))
            continue;
          xv = self->x_categorical ? xg->index : xg->key;
          mkey = g_strdup_printf ("%.17g\x1f%d", xv, sg->index);
          target = g_hash_table_lookup (merged, mkey);
          if (target == NULL)
            {
              target = g_new0 (Acc, 1);
              *target = *acc;
              g_hash_table_insert (merged, g_steal_pointer (&mkey), target);
            }
          else
            {
              target->sum += acc->sum;
              target->count += acc->count;
              target->min = MIN (target->min, acc->min);
              target->max = MAX (target->max, acc->max);
            }
        }

      g_hash_table_iter_init (&iter, merged);
      while (g_hash_table_iter_next (&iter, &key, &value))
        {
          double xv;
          int si;
          TallyChartPoint p;

          xv = g_ascii_strtod (key, NULL);
          si = atoi (strchr (key, '\x1f') + 1);
          p.x = xv;
          p.y = acc_value (value, aggregate);
          p.y0 = 0;
          p.y1 = p.y;
          g_array_append_val (((TallyChartSeries *) g_ptr_array_index (self->series, si))->points, p);
        }
    }

  for (guint s = 0; s < self->series->len; s++)
    g_array_sort (((TallyChartSeries *) g_ptr_array_index (self->series, s))->points, compare_points);

  /* Stacking (docs/charts.md §4.4). */
  if (!arc)
    {
      gboolean stacks_by_default = (self->mark == TALLY_CHART_MARK_BAR || self->mark == TALLY_CHART_MARK_AREA)
                                   && self->has_series
                                   && !tally_chart_spec_get_encoding (spec, TALLY_CHART_CHANNEL_X_OFFSET)->present;

      self->stacked = stack == TALLY_CHART_STACK_ZERO || stack == TALLY_CHART_STACK_NORMALIZE
                      || (stack == TALLY_CHART_STACK_DEFAULT && stacks_by_default);
      self->normalized = stack == TALLY_CHART_STACK_NORMALIZE;
      if (self->stacked)
        stack_series (self);
      self->grouped = self->mark == TALLY_CHART_MARK_BAR && !self->stacked && self->series->len > 1;
    }

  /* Domains: y always includes zero, as Vega-Lite's scales do. */
  self->y_min = 0;
  self->y_max = 0;
  self->x_min = G_MAXDOUBLE;
  self->x_max = -G_MAXDOUBLE;
  for (guint s = 0; s < self->series->len; s++)
    {
      TallyChartSeries *series = g_ptr_array_index (self->series, s);

      for (guint i = 0; i < series->points->len; i++)
        {
          TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);

          self->y_min = MIN (self->y_min, MIN (p->y0, p->y1));
          self->y_max = MAX (self->y_max, MAX (p->y0, p->y1));
          self->x_min = MIN (self->x_min, p->x);
          self->x_max = MAX (self->x_max, p->x);
        }
    }
  if (self->x_min > self->x_max)
    self->x_min = self->x_max = 0;
  if (!self->x_categorical && self->x_type == TALLY_CHART_FIELD_QUANTITATIVE)
    {
      self->x_min = MIN (self->x_min, 0);
      self->x_max = MAX (self->x_max, 0);
    }
  return TRUE;
}

/**
 * tally_chart_new:
 * @spec: a parsed spec
 * @data: (nullable): the rows (a query's result), or %NULL to use the
 *   spec's `data.values` (no rows when it has none)
 * @error: return location for a %TALLY_CHART_ERROR error
 *
 * Resolves @spec against @data (docs/charts.md §4): looks up each field,
 * reads values (NULL and NaN are skipped and counted), aggregates rows
 * that share an x and a series, sorts and caps categories and series, and
 * stacks. Fails with %TALLY_CHART_ERROR_MISSING_FIELD naming the field and
 * the available columns, %TALLY_CHART_ERROR_NOT_NUMERIC naming the row and
 * value, or the errors of tally_chart_data_new_from_values(). No rows is
 * not an error: the chart then draws "No data".
 *
 * Returns: (transfer full) (nullable): the chart, or %NULL on error
 */
TallyChart *
tally_chart_new (TallyChartSpec  *spec,
                 TallyChartData  *data,
                 GError         **error)
{
  g_autoptr(TallyChart) self = NULL;

  g_return_val_if_fail (TALLY_IS_CHART_SPEC (spec), NULL);
  g_return_val_if_fail (data == NULL || TALLY_IS_CHART_DATA (data), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = g_object_new (TALLY_TYPE_CHART, NULL);
  self->spec = g_object_ref (spec);
  self->mark = tally_chart_spec_get_mark (spec);

  if (data != NULL)
    self->data = g_object_ref (data);
  else if (tally_chart_spec_get_values (spec) != NULL)
    {
      self->data = tally_chart_data_new_from_values (tally_chart_spec_get_values (spec), error);
      if (self->data == NULL)
        return NULL;
    }
  else
    {
      const char *none[] = { NULL };

      self->data = tally_chart_data_new (none);
    }

  if (!resolve (self, error))
    return NULL;
  return g_steal_pointer (&self);
}

/**
 * tally_chart_new_from_json:
 * @spec: a chart spec with its rows in `data.values`
 * @error: return location for a %TALLY_CHART_ERROR error
 *
 * tally_chart_spec_new_from_json() then tally_chart_new() with no other
 * data.
 *
 * Returns: (transfer full) (nullable): the chart, or %NULL on error
 */
TallyChart *
tally_chart_new_from_json (JsonObject  *spec,
                           GError     **error)
{
  g_autoptr(TallyChartSpec) parsed = tally_chart_spec_new_from_json (spec, error);

  if (parsed == NULL)
    return NULL;
  return tally_chart_new (parsed, NULL, error);
}

/**
 * tally_chart_get_spec:
 * @self: a #TallyChart
 *
 * Returns: (transfer none): the spec
 */
TallyChartSpec *
tally_chart_get_spec (TallyChart *self)
{
  g_return_val_if_fail (TALLY_IS_CHART (self), NULL);
  return self->spec;
}

/**
 * tally_chart_get_data:
 * @self: a #TallyChart
 *
 * Returns: (transfer none): the rows the chart was drawn from (for *Show
 *   data* and CSV)
 */
TallyChartData *
tally_chart_get_data (TallyChart *self)
{
  g_return_val_if_fail (TALLY_IS_CHART (self), NULL);
  return self->data;
}

/**
 * tally_chart_get_n_rows_plotted:
 * @self: a #TallyChart
 *
 * Returns: the number of rows that went into the drawing
 */
guint
tally_chart_get_n_rows_plotted (TallyChart *self)
{
  g_return_val_if_fail (TALLY_IS_CHART (self), 0);
  return self->rows_plotted;
}

/**
 * tally_chart_get_n_rows_skipped:
 * @self: a #TallyChart
 *
 * Returns: the number of rows skipped for a NULL, NaN or infinite value in
 *   an encoded field
 */
guint
tally_chart_get_n_rows_skipped (TallyChart *self)
{
  g_return_val_if_fail (TALLY_IS_CHART (self), 0);
  return self->rows_skipped;
}

/**
 * tally_chart_get_n_series:
 * @self: a #TallyChart
 *
 * Returns: the number of series (1 when there is no color or xOffset)
 */
guint
tally_chart_get_n_series (TallyChart *self)
{
  g_return_val_if_fail (TALLY_IS_CHART (self), 0);
  return self->series->len;
}

/**
 * tally_chart_is_empty:
 * @self: a #TallyChart
 *
 * Returns: whether nothing is plotted (the drawing says "No data")
 */
gboolean
tally_chart_is_empty (TallyChart *self)
{
  g_return_val_if_fail (TALLY_IS_CHART (self), TRUE);
  return self->rows_plotted == 0;
}

/* The summary for the model is in English whatever the locale; its
 * counts agree with their nouns ("1 category", "2 categories"). */
static const char *
english_plural (guint       n,
                const char *one,
                const char *other)
{
  return n == 1 ? one : other;
}

static void
append_list (GString   *out,
             GPtrArray *labels,
             guint      max)
{
  for (guint i = 0; i < labels->len && i < max; i++)
    g_string_append_printf (out, "%s%s", i ? ", " : "", (const char *) g_ptr_array_index (labels, i));
  if (labels->len > max)
    g_string_append_printf (out, ", … (%u more)", labels->len - max);
}

/* How the summary writes the ends of a time axis: dates, with the time of
 * day (and the seconds) when either end has one. */
static const char *
summary_time_format (double from,
                     double to)
{
  if (fmod (from, 60) != 0 || fmod (to, 60) != 0)
    return "%Y-%m-%d %H:%M:%S";
  if (fmod (from, 86400) != 0 || fmod (to, 86400) != 0)
    return "%Y-%m-%d %H:%M";
  return "%Y-%m-%d";
}

static void
append_value_range (TallyChart *self,
                    GString    *out)
{
  double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE;
  g_autofree char *lo_text = NULL;
  g_autofree char *hi_text = NULL;

  for (guint s = 0; s < self->series->len; s++)
    {
      TallyChartSeries *series = g_ptr_array_index (self->series, s);

      for (guint i = 0; i < series->points->len; i++)
        {
          TallyChartPoint *p = &g_array_index (series->points, TallyChartPoint, i);
          double v = self->stacked ? p->y1 : p->y;

          lo = MIN (lo, self->stacked ? MIN (p->y0, p->y1) : v);
          hi = MAX (hi, v);
        }
    }
  if (lo > hi)
    {
      g_string_append (out, "no values");
      return;
    }
  {
    /* Without a format of its own, a value in the summary keeps its
     * digits (12 significant, grouped): the axis default rounds to two
     * decimals, which makes 0.004 read as 0. */
    const char *fmt = self->normalized ? ".0%" : self->y_format != NULL ? self->y_format : ",";

    lo_text = tally_chart_format_number (lo, fmt, 0);
    hi_text = tally_chart_format_number (hi, fmt, 0);
  }
  g_string_append_printf (out, "from %s to %s", lo_text, hi_text);
}

/**
 * tally_chart_dup_summary:
 * @self: a #TallyChart
 *
 * Describes the chart for the model, which does not see it (issue 12 §1):
 * the mark and title, the rows plotted and skipped, the series, the range
 * of each axis (min and max, or the number of categories and the first
 * few), and what was merged into "Other". The text is English prose in
 * sentences, with numbers in the current locale's format.
 *
 * Returns: (transfer full): the summary
 */
char *
tally_chart_dup_summary (TallyChart *self)
{
  GString *out;
  const char *mark;

  g_return_val_if_fail (TALLY_IS_CHART (self), NULL);

  out = g_string_new (NULL);
  switch (self->mark)
    {
    case TALLY_CHART_MARK_BAR:
      mark = self->stacked ? (self->normalized ? "100% stacked bar chart" : "stacked bar chart")
             : self->grouped ? "grouped bar chart" : "bar chart";
      break;
    case TALLY_CHART_MARK_LINE:
      mark = "line chart";
      break;
    case TALLY_CHART_MARK_AREA:
      mark = self->stacked ? (self->normalized ? "100% stacked area chart" : "stacked area chart")
             : "area chart";
      break;
    case TALLY_CHART_MARK_POINT:
      mark = "scatter plot";
      break;
    case TALLY_CHART_MARK_ARC:
    default:
      mark = tally_chart_spec_get_inner_radius (self->spec) > 0 ? "donut chart" : "pie chart";
      break;
    }

  g_string_append_printf (out, "Drew a %s titled \"%s\". ", mark, tally_chart_spec_get_title (self->spec));
  g_string_append_printf (out, "%u of %u %s plotted", self->rows_plotted, self->rows_total,
                          english_plural (self->rows_total, "row", "rows"));
  if (self->rows_skipped > 0)
    g_string_append_printf (out, "; %u %s skipped for a NULL, NaN or infinite value", self->rows_skipped,
                            english_plural (self->rows_skipped, "row", "rows"));
  if (self->rows_negative > 0)
    g_string_append_printf (out, "; %u %s with a negative value left out of the %s", self->rows_negative,
                            english_plural (self->rows_negative, "row", "rows"), mark);
  g_string_append (out, ". ");

  if (self->rows_plotted == 0)
    {
      g_string_append (out, "The chart is empty and says \"No data\".");
      return g_string_free (out, FALSE);
    }

  if (self->mark == TALLY_CHART_MARK_ARC)
    {
      g_string_append_printf (out, "Value: %s, ", self->y_title);
      append_value_range (self, out);
      g_string_append_printf (out, " per slice. %u %s", self->categories->len,
                              english_plural (self->categories->len, "slice", "slices"));
      if (self->color_title && *self->color_title)
        g_string_append_printf (out, " by %s", self->color_title);
      g_string_append (out, ": ");
      append_list (out, self->categories, 8);
      g_string_append (out, ".");
    }
  else
    {
      g_string_append_printf (out, "x axis: %s (%s), ", self->x_title, tally_chart_field_type_to_string (self->x_type));
      if (self->x_categorical)
        {
          g_string_append_printf (out, "%u %s: ", self->categories->len,
                                  english_plural (self->categories->len, "category", "categories"));
          append_list (out, self->categories, 5);
        }
      else if (self->x_type == TALLY_CHART_FIELD_TEMPORAL)
        {
          const char *format = summary_time_format (self->x_min, self->x_max);
          g_autofree char *a = tally_chart_format_time (self->x_min, TALLY_CHART_TIME_DAY, format);
          g_autofree char *b = tally_chart_format_time (self->x_max, TALLY_CHART_TIME_DAY, format);

          g_string_append_printf (out, "from %s to %s", a, b);
        }
      else
        {
          const char *format = self->x_format != NULL ? self->x_format : ",";
          g_autofree char *a = tally_chart_format_number (self->x_min, format, 0);
          g_autofree char *b = tally_chart_format_number (self->x_max, format, 0);

          g_string_append_printf (out, "from %s to %s", a, b);
        }
      g_string_append_printf (out, ". y axis: %s, ", self->y_title);
      if (self->normalized)
        g_string_append (out, "normalized to 100% per x; values ");
      append_value_range (self, out);
      g_string_append (out, self->stacked ? " (stacked totals)." : ".");
    }

  if (self->has_series)
    {
      g_autoptr(GPtrArray) names = g_ptr_array_new ();

      for (guint i = 0; i < self->series->len; i++)
        g_ptr_array_add (names, ((TallyChartSeries *) g_ptr_array_index (self->series, i))->name);
      g_string_append_printf (out, " %u series by %s: ", self->series->len, self->color_title);
      append_list (out, names, 8);
      g_string_append (out, ".");
    }
  if (self->categories_merged == 1)
    g_string_append_printf (out, " The smallest category is merged into \"%s\".", _("Other"));
  else if (self->categories_merged > 1)
    g_string_append_printf (out, " The %u smallest categories are merged into \"%s\".",
                            self->categories_merged, _("Other"));
  if (self->categories_dropped > 0)
    g_string_append_printf (out, " Only the %u largest %s shown; %u more %s left out.",
                            self->categories->len,
                            english_plural (self->categories->len, "category is", "categories are"),
                            self->categories_dropped,
                            english_plural (self->categories_dropped, "is", "are"));
  if (self->series_merged > 0)
    g_string_append_printf (out, " %u smaller series %s merged into \"%s\" or left out.",
                            self->series_merged, english_plural (self->series_merged, "is", "are"), _("Other"));
  return g_string_free (out, FALSE);
}

static const char *
mark_name (TallyChart *self)
{
  switch (self->mark)
    {
    case TALLY_CHART_MARK_BAR:
      return _("Bar chart");
    case TALLY_CHART_MARK_LINE:
      return _("Line chart");
    case TALLY_CHART_MARK_AREA:
      return _("Area chart");
    case TALLY_CHART_MARK_POINT:
      return _("Scatter plot");
    case TALLY_CHART_MARK_ARC:
    default:
      return tally_chart_spec_get_inner_radius (self->spec) > 0 ? _("Donut chart") : _("Pie chart");
    }
}

/* "Revenue, 0 to 1,200": an axis title and its range. */
static void
append_axis (GString    *out,
             const char *title,
             const char *first,
             const char *last)
{
  if (title != NULL && *title != '\0')
    g_string_append_printf (out, "%s, ", title);
  /* Translators: the range of an axis in a chart's description */
  g_string_append_printf (out, _("%s to %s"), first, last);
}

/**
 * tally_chart_dup_description:
 * @self: a #TallyChart
 *
 * The chart in a few words for assistive technology: the spec's
 * `description` when it has one, else one made from the chart, in the
 * current language: the kind of chart and its title, the number of
 * series, and each axis's title and range (categories: their number, the
 * first and the last; numbers and dates: the lowest and highest, formatted
 * as on the axis), e.g. "Bar chart “Revenue by store”, 2 series. x: store,
 * 5 categories, North to West. y: revenue, 0 to 1,250."
 *
 * Returns: (transfer full): the description
 */
char *
tally_chart_dup_description (TallyChart *self)
{
  const char *description;
  GString *out;

  g_return_val_if_fail (TALLY_IS_CHART (self), NULL);

  description = tally_chart_spec_get_description (self->spec);
  if (description != NULL && *description != '\0')
    return g_strdup (description);

  out = g_string_new (NULL);
  /* Translators: the kind of chart, then its title */
  g_string_append_printf (out, _("%s “%s”"), mark_name (self), tally_chart_spec_get_title (self->spec));
  if (tally_chart_is_empty (self))
    {
      /* Translators: after the kind and title of a chart with no rows */
      g_string_append (out, _(", no data."));
      return g_string_free (out, FALSE);
    }

  if (self->mark == TALLY_CHART_MARK_ARC)
    {
      g_string_append (out, ", ");
      g_string_append_printf (out, g_dngettext (GETTEXT_PACKAGE, "%u slice", "%u slices", self->categories->len),
                              self->categories->len);
      g_string_append (out, ": ");
      for (guint i = 0; i < self->categories->len; i++)
        g_string_append_printf (out, "%s%s", i > 0 ? ", " : "", (const char *) g_ptr_array_index (self->categories, i));
      g_string_append (out, ".");
      return g_string_free (out, FALSE);
    }

  if (self->has_series)
    {
      g_string_append (out, ", ");
      g_string_append_printf (out, g_dngettext (GETTEXT_PACKAGE, "%u series", "%u series", self->series->len), self->series->len);
    }

  /* Translators: starts the x axis's part of a chart's description */
  g_string_append (out, _(". x: "));
  if (self->x_categorical)
    {
      guint n = self->categories->len;

      if (self->x_title != NULL && *self->x_title != '\0')
        g_string_append_printf (out, "%s, ", self->x_title);
      g_string_append_printf (out, g_dngettext (GETTEXT_PACKAGE, "%u category", "%u categories", n), n);
      g_string_append (out, ", ");
      /* Translators: the range of an axis in a chart's description */
      g_string_append_printf (out, _("%s to %s"), (const char *) g_ptr_array_index (self->categories, 0),
                              (const char *) g_ptr_array_index (self->categories, n - 1));
    }
  else
    {
      gboolean temporal = self->x_type == TALLY_CHART_FIELD_TEMPORAL;
      g_autofree char *a = temporal ? tally_chart_format_time (self->x_min, TALLY_CHART_TIME_DAY, self->x_format)
                                    : tally_chart_format_number (self->x_min, self->x_format, 0);
      g_autofree char *b = temporal ? tally_chart_format_time (self->x_max, TALLY_CHART_TIME_DAY, self->x_format)
                                    : tally_chart_format_number (self->x_max, self->x_format, 0);

      append_axis (out, self->x_title, a, b);
    }

  /* Translators: starts the y axis's part of a chart's description */
  g_string_append (out, _(". y: "));
  {
    const char *format = self->normalized ? ".0%" : self->y_format;
    g_autofree char *a = tally_chart_format_number (self->y_min, format, 0);
    g_autofree char *b = tally_chart_format_number (self->y_max, format, 0);

    append_axis (out, self->y_title, a, b);
  }
  g_string_append (out, ".");
  return g_string_free (out, FALSE);
}
