/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-chart"

#include "config.h"

#include <string.h>

#include "tally-chart-spec.h"
#include "tally-chart-scale.h"

/*
 * The chart spec: a subset of Vega-Lite v5 (docs/charts.md §2), parsed and
 * checked once so that the data and drawing code can trust it. Everything
 * outside the subset is refused with a message that says what is
 * supported; the only members accepted without effect are "$schema",
 * "width" and "height" (the caller picks the size) and the "tooltip"
 * channel and mark property (the window shows values under the pointer
 * anyway), none of which changes the drawing.
 */

struct _TallyChartSpec
{
  GObject             parent_instance;

  JsonObject         *json;
  char               *title;
  char               *description;
  TallyChartMark      mark;
  double              inner_radius;
  gboolean            show_points;
  TallyChartEncoding  encodings[TALLY_CHART_N_CHANNELS];
  JsonArray          *values;
};

G_DEFINE_FINAL_TYPE (TallyChartSpec, tally_chart_spec, G_TYPE_OBJECT)

G_DEFINE_QUARK (tally-chart-error-quark, tally_chart_error)

static const char *mark_names[] = { "bar", "line", "area", "point", "arc" };
static const char *channel_names[] = { "x", "y", "color", "theta", "xOffset" };
static const char *type_names[] = { "quantitative", "nominal", "ordinal", "temporal" };
static const char *aggregate_names[] = { NULL, "sum", "mean", "count", "min", "max" };

#define SUPPORTED_TOP \
  "supported top-level members: title, description, mark, encoding, data.values " \
  "($schema, width and height are accepted and have no effect)"
#define SUPPORTED_MARKS "supported marks: bar, line, area, point, arc"
#define SUPPORTED_CHANNELS "supported channels: x, y, color, theta, xOffset (and tooltip, which has no effect)"
#define SUPPORTED_CHANNEL_MEMBERS \
  "supported channel members: field, type, title, sort, format, stack, aggregate"
#define SUPPORTED_TYPES "supported types: quantitative, nominal, ordinal, temporal"
#define SUPPORTED_AGGREGATES "supported aggregates: sum, mean, count, min, max"
#define SUPPORTED_STACKS "supported stack values: \"zero\", \"normalize\", null"
#define SUPPORTED_SORTS \
  "supported sort values: \"ascending\", \"descending\", \"x\", \"-x\", \"y\", \"-y\", " \
  "\"theta\", \"-theta\", null, or an array of values"

static void
tally_chart_spec_finalize (GObject *object)
{
  TallyChartSpec *self = (TallyChartSpec *) object;

  for (guint i = 0; i < TALLY_CHART_N_CHANNELS; i++)
    {
      TallyChartEncoding *enc = &self->encodings[i];

      g_free (enc->field);
      g_free (enc->title);
      g_free (enc->format);
      g_strfreev (enc->sort_values);
    }
  g_clear_pointer (&self->json, json_object_unref);
  g_clear_pointer (&self->values, json_array_unref);
  g_free (self->title);
  g_free (self->description);

  G_OBJECT_CLASS (tally_chart_spec_parent_class)->finalize (object);
}

static void
tally_chart_spec_class_init (TallyChartSpecClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tally_chart_spec_finalize;
}

static void
tally_chart_spec_init (TallyChartSpec *self)
{
  self->show_points = FALSE;
}

static int
lookup (const char  *name,
        const char **names,
        guint        n_names)
{
  for (guint i = 0; i < n_names; i++)
    if (names[i] != NULL && g_str_equal (name, names[i]))
      return (int) i;
  return -1;
}

static const char *
node_string (JsonNode *node)
{
  if (node != NULL && JSON_NODE_HOLDS_VALUE (node)
      && json_node_get_value_type (node) == G_TYPE_STRING)
    return json_node_get_string (node);
  return NULL;
}

static gboolean
parse_mark (TallyChartSpec  *self,
            JsonNode        *node,
            GError         **error)
{
  const char *name = node_string (node);
  JsonObject *object = NULL;
  int mark;

  if (name == NULL && node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    {
      object = json_node_get_object (node);
      name = node_string (json_object_get_member (object, "type"));
    }
  if (name == NULL)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                   "`mark` must be a mark name or an object with a `type`; %s", SUPPORTED_MARKS);
      return FALSE;
    }

  mark = lookup (name, mark_names, G_N_ELEMENTS (mark_names));
  if (mark < 0)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                   "mark \"%s\" is not supported; %s", name, SUPPORTED_MARKS);
      return FALSE;
    }
  self->mark = mark;

  if (object != NULL)
    {
      g_autoptr(GList) members = json_object_get_members (object);

      for (GList *l = members; l; l = l->next)
        {
          const char *key = l->data;
          JsonNode *value = json_object_get_member (object, key);

          if (g_str_equal (key, "type") || g_str_equal (key, "tooltip"))
            continue;
          if (g_str_equal (key, "innerRadius") && self->mark == TALLY_CHART_MARK_ARC
              && JSON_NODE_HOLDS_VALUE (value)
              && (json_node_get_value_type (value) == G_TYPE_INT64
                  || json_node_get_value_type (value) == G_TYPE_DOUBLE)
              && json_node_get_double (value) >= 0)
            {
              self->inner_radius = json_node_get_double (value);
              continue;
            }
          if (g_str_equal (key, "point")
              && (self->mark == TALLY_CHART_MARK_LINE || self->mark == TALLY_CHART_MARK_AREA)
              && JSON_NODE_HOLDS_VALUE (value)
              && json_node_get_value_type (value) == G_TYPE_BOOLEAN)
            {
              self->show_points = json_node_get_boolean (value);
              continue;
            }
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                       "mark property `%s` is not supported; supported mark properties: "
                       "type, innerRadius (arc, a number of points), point (line and area, "
                       "a boolean), tooltip", key);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
parse_sort (TallyChartEncoding  *enc,
            const char          *channel,
            JsonNode            *node,
            GError             **error)
{
  if (JSON_NODE_HOLDS_NULL (node))
    {
      enc->sort = TALLY_CHART_SORT_NONE;
      return TRUE;
    }
  if (node_string (node) != NULL)
    {
      const char *s = node_string (node);

      if (g_str_equal (s, "ascending") || g_str_equal (s, "x"))
        enc->sort = TALLY_CHART_SORT_ASCENDING;
      else if (g_str_equal (s, "descending") || g_str_equal (s, "-x"))
        enc->sort = TALLY_CHART_SORT_DESCENDING;
      else if (g_str_equal (s, "y") || g_str_equal (s, "theta"))
        enc->sort = TALLY_CHART_SORT_BY_VALUE;
      else if (g_str_equal (s, "-y") || g_str_equal (s, "-theta"))
        enc->sort = TALLY_CHART_SORT_BY_VALUE_DESCENDING;
      else
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                       "`encoding.%s.sort` \"%s\" is not supported; %s", channel, s, SUPPORTED_SORTS);
          return FALSE;
        }
      return TRUE;
    }
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);
      guint n = json_array_get_length (array);
      GPtrArray *values = g_ptr_array_new ();

      for (guint i = 0; i < n; i++)
        {
          JsonNode *item = json_array_get_element (array, i);

          if (!JSON_NODE_HOLDS_VALUE (item))
            {
              g_ptr_array_free (values, TRUE);
              g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                           "`encoding.%s.sort` array must hold strings or numbers", channel);
              return FALSE;
            }
          if (json_node_get_value_type (item) == G_TYPE_STRING)
            g_ptr_array_add (values, g_strdup (json_node_get_string (item)));
          else
            {
              char buf[G_ASCII_DTOSTR_BUF_SIZE];

              if (json_node_get_value_type (item) == G_TYPE_INT64)
                g_ptr_array_add (values, g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (item)));
              else
                g_ptr_array_add (values, g_strdup (g_ascii_dtostr (buf, sizeof buf, json_node_get_double (item))));
            }
        }
      g_ptr_array_add (values, NULL);
      enc->sort = TALLY_CHART_SORT_LIST;
      enc->sort_values = (char **) g_ptr_array_free (values, FALSE);
      return TRUE;
    }

  g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
               "`encoding.%s.sort` of this shape is not supported; %s", channel, SUPPORTED_SORTS);
  return FALSE;
}

static gboolean
parse_channel (TallyChartSpec     *self,
               TallyChartChannel   channel,
               JsonNode           *node,
               GError            **error)
{
  const char *name = channel_names[channel];
  TallyChartEncoding *enc = &self->encodings[channel];
  g_autoptr(GList) members = NULL;
  JsonObject *object;
  const char *type = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                   "`encoding.%s` must be an object with `field` and `type`", name);
      return FALSE;
    }
  object = json_node_get_object (node);
  enc->present = TRUE;

  members = json_object_get_members (object);
  for (GList *l = members; l; l = l->next)
    {
      const char *key = l->data;
      JsonNode *value = json_object_get_member (object, key);

      if (g_str_equal (key, "field"))
        {
          if (node_string (value) == NULL || *node_string (value) == '\0')
            {
              g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                           "`encoding.%s.field` must be a column name", name);
              return FALSE;
            }
          enc->field = g_strdup (node_string (value));
        }
      else if (g_str_equal (key, "type"))
        {
          int t;

          type = node_string (value);
          t = type ? lookup (type, type_names, G_N_ELEMENTS (type_names)) : -1;
          if (t < 0)
            {
              g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                           "`encoding.%s.type` \"%s\" is not supported; %s", name,
                           type ? type : "(not a string)", SUPPORTED_TYPES);
              return FALSE;
            }
          enc->type = t;
        }
      else if (g_str_equal (key, "title"))
        {
          if (JSON_NODE_HOLDS_NULL (value))
            enc->title = g_strdup ("");
          else if (node_string (value) != NULL)
            enc->title = g_strdup (node_string (value));
          else
            {
              g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                           "`encoding.%s.title` must be a string or null", name);
              return FALSE;
            }
        }
      else if (g_str_equal (key, "format"))
        {
          if (node_string (value) == NULL)
            {
              g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                           "`encoding.%s.format` must be a string", name);
              return FALSE;
            }
          enc->format = g_strdup (node_string (value));
        }
      else if (g_str_equal (key, "stack"))
        {
          const char *s = node_string (value);

          if (channel != TALLY_CHART_CHANNEL_Y && channel != TALLY_CHART_CHANNEL_THETA)
            {
              g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                           "`encoding.%s.stack` is not supported: only y and theta stack", name);
              return FALSE;
            }
          if (JSON_NODE_HOLDS_NULL (value))
            enc->stack = TALLY_CHART_STACK_NONE;
          else if (s && g_str_equal (s, "zero"))
            enc->stack = TALLY_CHART_STACK_ZERO;
          else if (s && g_str_equal (s, "normalize"))
            enc->stack = TALLY_CHART_STACK_NORMALIZE;
          else if (JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_BOOLEAN)
            enc->stack = json_node_get_boolean (value) ? TALLY_CHART_STACK_ZERO : TALLY_CHART_STACK_NONE;
          else
            {
              g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                           "`encoding.%s.stack` value is not supported; %s", name, SUPPORTED_STACKS);
              return FALSE;
            }
        }
      else if (g_str_equal (key, "aggregate"))
        {
          const char *s = node_string (value);
          int a = s ? lookup (s, aggregate_names, G_N_ELEMENTS (aggregate_names)) : -1;

          if (a < 0)
            {
              g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                           "`encoding.%s.aggregate` \"%s\" is not supported; %s", name,
                           s ? s : "(not a string)", SUPPORTED_AGGREGATES);
              return FALSE;
            }
          if (channel != TALLY_CHART_CHANNEL_Y && channel != TALLY_CHART_CHANNEL_THETA)
            {
              g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                           "`encoding.%s.aggregate` is not supported: only y and theta "
                           "aggregate", name);
              return FALSE;
            }
          enc->aggregate = a;
        }
      else if (g_str_equal (key, "sort"))
        {
          if (!parse_sort (enc, name, value, error))
            return FALSE;
        }
      else
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                       "`encoding.%s.%s` is not supported; %s", name, key,
                       SUPPORTED_CHANNEL_MEMBERS);
          return FALSE;
        }
    }

  if (enc->aggregate == TALLY_CHART_AGGREGATE_COUNT && type == NULL)
    enc->type = TALLY_CHART_FIELD_QUANTITATIVE, type = "quantitative";
  if (type == NULL)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                   "`encoding.%s` needs a `type`; %s", name, SUPPORTED_TYPES);
      return FALSE;
    }
  if (enc->field == NULL && enc->aggregate != TALLY_CHART_AGGREGATE_COUNT)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                   "`encoding.%s` needs a `field` (only a \"count\" aggregate goes without)", name);
      return FALSE;
    }
  if (enc->aggregate != TALLY_CHART_AGGREGATE_NONE && enc->type != TALLY_CHART_FIELD_QUANTITATIVE)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                   "`encoding.%s.aggregate` needs a quantitative type", name);
      return FALSE;
    }
  if (enc->format != NULL)
    {
      if (enc->type == TALLY_CHART_FIELD_TEMPORAL)
        return tally_chart_time_format_validate (enc->format, error);
      if (enc->type == TALLY_CHART_FIELD_QUANTITATIVE)
        return tally_chart_format_validate (enc->format, error);
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                   "`encoding.%s.format` is only supported for quantitative and temporal types",
                   name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_marks_and_channels (TallyChartSpec  *self,
                          GError         **error)
{
  TallyChartEncoding *x = &self->encodings[TALLY_CHART_CHANNEL_X];
  TallyChartEncoding *y = &self->encodings[TALLY_CHART_CHANNEL_Y];
  TallyChartEncoding *color = &self->encodings[TALLY_CHART_CHANNEL_COLOR];
  TallyChartEncoding *theta = &self->encodings[TALLY_CHART_CHANNEL_THETA];
  TallyChartEncoding *offset = &self->encodings[TALLY_CHART_CHANNEL_X_OFFSET];
  const char *mark = mark_names[self->mark];

  if (self->mark == TALLY_CHART_MARK_ARC)
    {
      if (!theta->present)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                       "an arc needs `encoding.theta` (the quantity) and usually "
                       "`encoding.color` (the slices)");
          return FALSE;
        }
      if (x->present || y->present || offset->present)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                       "an arc takes only the theta and color channels, not x, y or xOffset");
          return FALSE;
        }
      if (theta->type != TALLY_CHART_FIELD_QUANTITATIVE)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                       "`encoding.theta` must be quantitative");
          return FALSE;
        }
    }
  else
    {
      if (theta->present)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                       "the theta channel belongs to the arc mark, not to %s", mark);
          return FALSE;
        }
      if (!x->present || !y->present)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                       "a %s chart needs both `encoding.x` and `encoding.y`", mark);
          return FALSE;
        }
      if (y->type != TALLY_CHART_FIELD_QUANTITATIVE)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                       "`encoding.y` must be quantitative (horizontal charts with categories "
                       "on y are not supported: put the categories on x)");
          return FALSE;
        }
      if (x->aggregate != TALLY_CHART_AGGREGATE_NONE)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                       "`encoding.x` cannot aggregate; aggregate y instead");
          return FALSE;
        }
      if (offset->present && self->mark != TALLY_CHART_MARK_BAR)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                       "`encoding.xOffset` is only supported for bars");
          return FALSE;
        }
    }

  if (color->present && color->type == TALLY_CHART_FIELD_QUANTITATIVE)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                   "`encoding.color` must be nominal, ordinal or temporal (colour gradients "
                   "for quantities are not supported)");
      return FALSE;
    }
  if (offset->present && offset->type == TALLY_CHART_FIELD_QUANTITATIVE)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                   "`encoding.xOffset` must be nominal or ordinal");
      return FALSE;
    }
  if (offset->present && color->present && g_strcmp0 (offset->field, color->field) != 0)
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                   "`encoding.xOffset` and `encoding.color` must use the same field "
                   "(\"%s\" and \"%s\" differ)", offset->field, color->field);
      return FALSE;
    }
  return TRUE;
}

/**
 * tally_chart_spec_new_from_json:
 * @object: a chart spec: the Vega-Lite v5 subset of docs/charts.md §2
 * @error: return location for a %TALLY_CHART_ERROR error
 *
 * Parses and checks @object. A member outside the subset fails with
 * %TALLY_CHART_ERROR_UNSUPPORTED, a wrongly shaped one with
 * %TALLY_CHART_ERROR_INVALID_SPEC, more than %TALLY_CHART_MAX_ROWS rows in
 * `data.values` with %TALLY_CHART_ERROR_TOO_MANY_ROWS; each message lists
 * what is supported. Fields are checked against the data later, by
 * tally_chart_new().
 *
 * Returns: (transfer full) (nullable): the spec, or %NULL on error
 */
TallyChartSpec *
tally_chart_spec_new_from_json (JsonObject  *object,
                                GError     **error)
{
  g_autoptr(TallyChartSpec) self = NULL;
  g_autoptr(GList) members = NULL;
  JsonNode *node;

  g_return_val_if_fail (object != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = g_object_new (TALLY_TYPE_CHART_SPEC, NULL);
  self->json = json_object_ref (object);

  members = json_object_get_members (object);
  for (GList *l = members; l; l = l->next)
    {
      const char *key = l->data;

      if (g_str_equal (key, "title") || g_str_equal (key, "description")
          || g_str_equal (key, "mark") || g_str_equal (key, "encoding")
          || g_str_equal (key, "data") || g_str_equal (key, "$schema")
          || g_str_equal (key, "width") || g_str_equal (key, "height"))
        continue;
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                   "`%s` is not supported; %s", key, SUPPORTED_TOP);
      return NULL;
    }

  node = json_object_get_member (object, "title");
  if (node_string (node) == NULL || *node_string (node) == '\0')
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                   "`title` is required and must be a non-empty string");
      return NULL;
    }
  self->title = g_strdup (node_string (node));

  node = json_object_get_member (object, "description");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      if (node_string (node) == NULL)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                       "`description` must be a string");
          return NULL;
        }
      self->description = g_strdup (node_string (node));
    }

  if (!parse_mark (self, json_object_get_member (object, "mark"), error))
    return NULL;

  node = json_object_get_member (object, "encoding");
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                   "`encoding` is required and must be an object; %s", SUPPORTED_CHANNELS);
      return NULL;
    }
  {
    JsonObject *encoding = json_node_get_object (node);
    g_autoptr(GList) channels = json_object_get_members (encoding);

    for (GList *l = channels; l; l = l->next)
      {
        const char *key = l->data;
        int channel = lookup (key, channel_names, G_N_ELEMENTS (channel_names));

        if (g_str_equal (key, "tooltip"))
          continue;
        if (channel < 0)
          {
            g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                         "channel `%s` is not supported; %s", key, SUPPORTED_CHANNELS);
            return NULL;
          }
        if (!parse_channel (self, channel, json_object_get_member (encoding, key), error))
          return NULL;
      }
  }

  if (!check_marks_and_channels (self, error))
    return NULL;

  node = json_object_get_member (object, "data");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      JsonObject *data;
      g_autoptr(GList) keys = NULL;
      JsonNode *values;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                       "`data` must be an object with `values`");
          return NULL;
        }
      data = json_node_get_object (node);
      keys = json_object_get_members (data);
      for (GList *l = keys; l; l = l->next)
        if (!g_str_equal (l->data, "values"))
          {
            g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_UNSUPPORTED,
                         "`data.%s` is not supported: give the rows inline in `data.values` "
                         "or as a query", (const char *) l->data);
            return NULL;
          }
      values = json_object_get_member (data, "values");
      if (values == NULL || !JSON_NODE_HOLDS_ARRAY (values))
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_INVALID_SPEC,
                       "`data.values` must be an array of row objects");
          return NULL;
        }
      if (json_array_get_length (json_node_get_array (values)) > TALLY_CHART_MAX_ROWS)
        {
          g_set_error (error, TALLY_CHART_ERROR, TALLY_CHART_ERROR_TOO_MANY_ROWS,
                       "`data.values` has %u rows; at most %d are supported: aggregate the "
                       "data first (GROUP BY in SQL)",
                       json_array_get_length (json_node_get_array (values)), TALLY_CHART_MAX_ROWS);
          return NULL;
        }
      self->values = json_array_ref (json_node_get_array (values));
    }

  return g_steal_pointer (&self);
}

/**
 * tally_chart_spec_get_title:
 * @self: a #TallyChartSpec
 *
 * Returns: (transfer none): the title
 */
const char *
tally_chart_spec_get_title (TallyChartSpec *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_SPEC (self), NULL);
  return self->title;
}

/**
 * tally_chart_spec_get_description:
 * @self: a #TallyChartSpec
 *
 * Returns: (transfer none) (nullable): the description (alt text), if given
 */
const char *
tally_chart_spec_get_description (TallyChartSpec *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_SPEC (self), NULL);
  return self->description;
}

/**
 * tally_chart_spec_get_mark:
 * @self: a #TallyChartSpec
 *
 * Returns: the mark
 */
TallyChartMark
tally_chart_spec_get_mark (TallyChartSpec *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_SPEC (self), TALLY_CHART_MARK_BAR);
  return self->mark;
}

/**
 * tally_chart_spec_get_inner_radius:
 * @self: a #TallyChartSpec
 *
 * Returns: the inner radius of an arc (a donut) in points, 0 for a pie
 */
double
tally_chart_spec_get_inner_radius (TallyChartSpec *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_SPEC (self), 0);
  return self->inner_radius;
}

/**
 * tally_chart_spec_get_show_points:
 * @self: a #TallyChartSpec
 *
 * Returns: whether a line or area marks its points (`"point": true`)
 */
gboolean
tally_chart_spec_get_show_points (TallyChartSpec *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_SPEC (self), FALSE);
  return self->show_points;
}

/**
 * tally_chart_spec_get_encoding:
 * @self: a #TallyChartSpec
 * @channel: a channel
 *
 * Returns: (transfer none): the channel's encoding; its `present` member
 *   says whether the spec has it
 */
const TallyChartEncoding *
tally_chart_spec_get_encoding (TallyChartSpec    *self,
                               TallyChartChannel  channel)
{
  g_return_val_if_fail (TALLY_IS_CHART_SPEC (self), NULL);
  g_return_val_if_fail (channel < TALLY_CHART_N_CHANNELS, NULL);
  return &self->encodings[channel];
}

/**
 * tally_chart_spec_get_values:
 * @self: a #TallyChartSpec
 *
 * Returns: (transfer none) (nullable): the inline rows of `data.values`
 *   (at most %TALLY_CHART_MAX_ROWS), or %NULL
 */
JsonArray *
tally_chart_spec_get_values (TallyChartSpec *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_SPEC (self), NULL);
  return self->values;
}

/**
 * tally_chart_spec_get_json:
 * @self: a #TallyChartSpec
 *
 * Returns: (transfer none): the object the spec was parsed from
 */
JsonObject *
tally_chart_spec_get_json (TallyChartSpec *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_SPEC (self), NULL);
  return self->json;
}

/* The Vega-Lite name of an enum value; @fallback (and a critical) when
 * @value is out of range. */
static const char *
name_of (const char * const *names,
         guint               n,
         guint               value,
         const char         *fallback)
{
  g_return_val_if_fail (value < n, fallback);
  return names[value];
}

/**
 * tally_chart_mark_to_string:
 * @mark: a mark
 *
 * Returns: (transfer none): its Vega-Lite name, e.g. "bar"
 */
const char *
tally_chart_mark_to_string (TallyChartMark mark)
{
  return name_of (mark_names, G_N_ELEMENTS (mark_names), mark, "?");
}

/**
 * tally_chart_channel_to_string:
 * @channel: a channel
 *
 * Returns: (transfer none): its Vega-Lite name, e.g. "xOffset"
 */
const char *
tally_chart_channel_to_string (TallyChartChannel channel)
{
  return name_of (channel_names, G_N_ELEMENTS (channel_names), channel, "?");
}

/**
 * tally_chart_field_type_to_string:
 * @type: a field type
 *
 * Returns: (transfer none): its Vega-Lite name, e.g. "nominal"
 */
const char *
tally_chart_field_type_to_string (TallyChartFieldType type)
{
  return name_of (type_names, G_N_ELEMENTS (type_names), type, "?");
}

/**
 * tally_chart_aggregate_to_string:
 * @aggregate: an aggregate
 *
 * Returns: (transfer none) (nullable): its Vega-Lite name, e.g. "sum", or
 *   %NULL for %TALLY_CHART_AGGREGATE_NONE
 */
const char *
tally_chart_aggregate_to_string (TallyChartAggregate aggregate)
{
  return name_of (aggregate_names, G_N_ELEMENTS (aggregate_names), aggregate, NULL);
}
