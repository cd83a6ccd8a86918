/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <adwaita.h>
#include <string.h>

#include <glib/gi18n.h>

#include "tally-chart-row.h"

#include "tally-chart-render.h"
#include "tally-chart.h"
#include "tally-centring-layout.h"
#include "tally-error-dialog.h"
#include "tally-file-chip.h"
#include "tally-json.h"
#include "tally-result-table.h"

/**
 * TallyChartRow:
 *
 * A `chart` block (docs/architecture.md §9.1): the chart the agent drew
 * with `create_chart`, inline at the transcript's width. Everything comes
 * from the block's details, the `chart_created` event (§4.4): the
 * resolved spec with its rows inline, so the chart is drawn again from the
 * saved session even when the files it wrote are gone.
 *
 * The chart is built once per bind (tally_chart_new_from_json()) and drawn
 * with tally_chart_render() on a Cairo context of the snapshot, at the
 * allocated size, so it is as sharp as the display's scale allows. Its
 * height follows its width (0.55 × the width, between 220 and 480 pixels).
 * A spec the engine refuses shows the engine's message in place of the
 * drawing, never an empty space.
 *
 * The drawing takes keyboard focus and carries the title as its
 * accessible label and tally_chart_dup_description() as its description
 * (the spec's `description`, else one made from the chart). Its tooltip
 * names the mark under the pointer (tally_chart_hit_test(), with the
 * drawing's own layout).
 * The header's buttons use the actions `chart.show-data` (the rows as a
 * #TallyResultTable in place of the drawing), `chart.copy` (a PNG image on
 * the clipboard), `chart.save` (PNG, SVG or PDF, by the chosen name's
 * extension) and `chart.open` (the first of the chart's files that
 * exists, in the application the desktop picks).
 */

#define HEIGHT_RATIO 0.55
#define MIN_HEIGHT 220
#define MAX_HEIGHT 480
#define MIN_WIDTH 160
/* What a saved or copied chart measures when the drawing has no size yet
 * (never shown), in pixels or points. */
#define EXPORT_WIDTH 800

/* TallyChartDrawing: the drawing of the chart, height for width. */

#define TALLY_TYPE_CHART_DRAWING (tally_chart_drawing_get_type ())
G_DECLARE_FINAL_TYPE (TallyChartDrawing, tally_chart_drawing, TALLY, CHART_DRAWING, GtkWidget)

struct _TallyChartDrawing
{
  GtkWidget   parent_instance;

  TallyChart *chart;
};

G_DEFINE_FINAL_TYPE (TallyChartDrawing, tally_chart_drawing, GTK_TYPE_WIDGET)

static int
height_for_width (int width)
{
  return CLAMP ((int) (width * HEIGHT_RATIO + 0.5), MIN_HEIGHT, MAX_HEIGHT);
}

static void
tally_chart_drawing_measure (GtkWidget      *widget,
                             GtkOrientation  orientation,
                             int             for_size,
                             int            *minimum,
                             int            *natural,
                             int            *minimum_baseline,
                             int            *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      /* The transcript's width decides; the chart never widens it. */
      *minimum = *natural = MIN_WIDTH;
    }
  else
    {
      *minimum = *natural = height_for_width (for_size >= 0 ? for_size : MIN_WIDTH);
    }
}

static GtkSizeRequestMode
tally_chart_drawing_get_request_mode (GtkWidget *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

/* The engine's default style with the theme's text colour and font, over
 * the row's own background (not painted). */
static void
style_for_widget (GtkWidget       *widget,
                  TallyChartStyle *style,
                  char           **family)
{
  GdkRGBA color;
  PangoFontDescription *font;

  tally_chart_style_init (style, adw_style_manager_get_dark (adw_style_manager_get_default ()));
  style->fill_background = FALSE;

  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &color);
  style->foreground[0] = style->muted[0] = color.red;
  style->foreground[1] = style->muted[1] = color.green;
  style->foreground[2] = style->muted[2] = color.blue;
  style->foreground[3] = color.alpha;
  style->muted[3] = color.alpha * 0.7;

  font = pango_context_get_font_description (gtk_widget_get_pango_context (widget));
  if (font != NULL && pango_font_description_get_family (font) != NULL)
    {
      *family = g_strdup (pango_font_description_get_family (font));
      style->font_family = *family;
    }
}

static void
tally_chart_drawing_snapshot (GtkWidget   *widget,
                              GtkSnapshot *snapshot)
{
  TallyChartDrawing *self = TALLY_CHART_DRAWING (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  g_autofree char *family = NULL;
  TallyChartStyle style;
  cairo_t *cr;

  if (self->chart == NULL || width <= 0 || height <= 0)
    return;

  style_for_widget (widget, &style, &family);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  tally_chart_render (self->chart, cr, width, height, &style);
  cairo_destroy (cr);
}

/* The value under the pointer: the mark's series, x and y, laid out as
 * tally_chart_render() lays out the drawing. */
static gboolean
tally_chart_drawing_query_tooltip (GtkWidget  *widget,
                                   int         x,
                                   int         y,
                                   gboolean    keyboard_mode,
                                   GtkTooltip *tooltip)
{
  TallyChartDrawing *self = TALLY_CHART_DRAWING (widget);
  g_autofree char *family = NULL;
  g_autofree char *label = NULL;
  TallyChartStyle style;

  if (self->chart == NULL || keyboard_mode)
    return FALSE;

  style_for_widget (widget, &style, &family);
  label = tally_chart_hit_test (self->chart, gtk_widget_get_width (widget), gtk_widget_get_height (widget),
                                x, y, &style);
  if (label == NULL)
    return FALSE;
  gtk_tooltip_set_text (tooltip, label);
  return TRUE;
}

static void
tally_chart_drawing_set_chart (TallyChartDrawing *self,
                               TallyChart        *chart)
{
  if (g_set_object (&self->chart, chart))
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
tally_chart_drawing_dispose (GObject *object)
{
  TallyChartDrawing *self = (TallyChartDrawing *)object;

  g_clear_object (&self->chart);

  G_OBJECT_CLASS (tally_chart_drawing_parent_class)->dispose (object);
}

static void
tally_chart_drawing_class_init (TallyChartDrawingClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_chart_drawing_dispose;
  widget_class->measure = tally_chart_drawing_measure;
  widget_class->get_request_mode = tally_chart_drawing_get_request_mode;
  widget_class->snapshot = tally_chart_drawing_snapshot;
  widget_class->query_tooltip = tally_chart_drawing_query_tooltip;

  gtk_widget_class_set_css_name (widget_class, "chart");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
tally_chart_drawing_init (TallyChartDrawing *self)
{
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);

  /* The drawing follows the style manager rather than the CSS, which
   * gives no signal when only the palette should change. */
  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (gtk_widget_queue_draw), self, G_CONNECT_SWAPPED);
}

/* TallyChartRow */

struct _TallyChartRow
{
  TallyBlockWidget      parent_instance;

  /* Template */
  GtkLabel             *title_label;
  GtkWidget            *error_box;
  TallyChartDrawing    *drawing;
  TallyResultTable     *table;
  GtkLabel             *error_label;

  /* The bound block's chart; NULL when its spec was refused. */
  TallyChart           *chart;
  gboolean              show_data;
  gboolean              table_filled;

  GtkFileChooserNative *chooser;
};

G_DEFINE_FINAL_TYPE (TallyChartRow, tally_chart_row, TALLY_TYPE_BLOCK_WIDGET)

enum {
  PROP_0,
  PROP_SHOW_DATA,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static JsonObject *
details (TallyChartRow *self)
{
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);

  return block != NULL ? tally_block_get_details (block) : NULL;
}

static const char *
chart_title (TallyChartRow *self)
{
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);

  return block != NULL && tally_block_get_text (block) != NULL ? tally_block_get_text (block) : "";
}

/* The @i-th of the event's file names, %NULL when that member is not a
 * string. */
static const char *
file_name_at (JsonArray *files,
              guint      i)
{
  JsonNode *node = json_array_get_element (files, i);

  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

/* The chart's first file that exists, absolute: the event's paths are
 * relative to the session's workspace. */
static GFile *
find_file (TallyChartRow *self)
{
  JsonObject *event = details (self);
  const char *workspace = tally_block_widget_get_workspace (TALLY_BLOCK_WIDGET (self));
  JsonArray *files;

  files = tally_json_object_get_array (event, "files");
  if (files == NULL)
    return NULL;

  for (guint i = 0; i < json_array_get_length (files); i++)
    {
      const char *name = file_name_at (files, i);
      g_autofree char *path = NULL;

      if (name == NULL)
        continue;
      if (g_path_is_absolute (name))
        path = g_strdup (name);
      else if (workspace != NULL)
        path = g_build_filename (workspace, name, NULL);
      else
        continue;

      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return g_file_new_for_path (path);
    }
  return NULL;
}

/* The chart's rows as the text a query result has ("a | b", one line a
 * row, then "(N rows)"), so the result table shows them with its sorting,
 * number alignment, Copy and Save as CSV. A value holding the separator
 * or a line break would make the text ambiguous, so those are replaced by
 * a look-alike and a space. */
static char *
dup_rows_text (TallyChartRow *self)
{
  TallyChartData *data = tally_chart_get_data (self->chart);
  guint n_columns = tally_chart_data_get_n_columns (data);
  guint n_rows = tally_chart_data_get_n_rows (data);
  JsonObject *event = details (self);
  gint64 total = n_rows;
  GString *text = g_string_new (NULL);

  if (tally_json_object_get_bool (event, "capped", FALSE))
    total = tally_json_object_get_int (event, "rows", n_rows);

  for (guint c = 0; c < n_columns; c++)
    {
      if (c > 0)
        g_string_append (text, " | ");
      g_string_append (text, tally_chart_data_get_column_name (data, c));
    }
  g_string_append_c (text, '\n');

  for (guint r = 0; r < n_rows; r++)
    {
      for (guint c = 0; c < n_columns; c++)
        {
          JsonNode *cell = tally_chart_data_get_cell (data, r, c);
          g_autofree char *value = NULL;
          g_auto(GStrv) parts = NULL;

          if (cell == NULL || JSON_NODE_HOLDS_NULL (cell))
            value = g_strdup ("NULL");
          else if (JSON_NODE_HOLDS_VALUE (cell) && json_node_get_value_type (cell) == G_TYPE_STRING)
            value = g_strdup (json_node_get_string (cell));
          else if (JSON_NODE_HOLDS_VALUE (cell) && json_node_get_value_type (cell) == G_TYPE_INT64)
            value = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (cell));
          else if (JSON_NODE_HOLDS_VALUE (cell) && json_node_get_value_type (cell) == G_TYPE_DOUBLE)
            {
              char buffer[G_ASCII_DTOSTR_BUF_SIZE];

              value = g_strdup (g_ascii_dtostr (buffer, sizeof buffer, json_node_get_double (cell)));
            }
          else if (JSON_NODE_HOLDS_VALUE (cell) && json_node_get_value_type (cell) == G_TYPE_BOOLEAN)
            value = g_strdup (json_node_get_boolean (cell) ? "true" : "false");
          else
            value = json_to_string (cell, FALSE);

          g_strdelimit (value, "\r\n", ' ');
          parts = g_strsplit (value, " | ", -1);
          g_clear_pointer (&value, g_free);
          value = g_strjoinv (" \u00A6 ", parts);

          if (c > 0)
            g_string_append (text, " | ");
          g_string_append (text, value);
        }
      g_string_append_c (text, '\n');
    }

  if (total > n_rows)
    g_string_append_printf (text, "(%u of %" G_GINT64_FORMAT " rows shown)", n_rows, total);
  else if (n_rows == 1)
    g_string_append (text, "(1 row)");
  else
    g_string_append_printf (text, "(%u rows)", n_rows);

  return g_string_free (text, FALSE);
}

/* "Chart · 6 rows", "Chart · 5,000 of 120,000 rows". */
static char *
dup_caption (TallyChartRow *self)
{
  JsonObject *event = details (self);
  guint shown = tally_chart_data_get_n_rows (tally_chart_get_data (self->chart));
  gint64 total = shown;

  if (tally_json_object_get_bool (event, "capped", FALSE))
    total = MAX (tally_json_object_get_int (event, "rows", shown), (gint64) shown);

  if (total > shown)
    /* Translators: above a chart drawn from part of a query's rows */
    return g_strdup_printf (ngettext ("Chart · %'u of %'u row", "Chart · %'u of %'u rows", (gulong) total),
                            shown, (guint) MIN (total, G_MAXUINT));
  /* Translators: above a chart, how many rows it is drawn from */
  return g_strdup_printf (ngettext ("Chart · %'u row", "Chart · %'u rows", shown), shown);
}

/* Shows one of the drawing, the table and the message. */
static void
show_page (TallyChartRow *self,
           GtkWidget     *page)
{
  /* The table takes the drawing's place at about the drawing's height
   * (less its titles and caption), so the row keeps its size. */
  if (page == GTK_WIDGET (self->table) && gtk_widget_get_visible (GTK_WIDGET (self->drawing)))
    tally_result_table_set_min_rows_height (self->table,
                                            MAX (120, gtk_widget_get_height (GTK_WIDGET (self->drawing)) - 80));
  gtk_widget_set_visible (GTK_WIDGET (self->drawing), page == GTK_WIDGET (self->drawing));
  gtk_widget_set_visible (GTK_WIDGET (self->table), page == GTK_WIDGET (self->table));
  gtk_widget_set_visible (self->error_box, page == self->error_box);
}

static void
update_page (TallyChartRow *self)
{
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);

  /* No message for a block that is not finished yet: it has no spec. */
  if (self->chart == NULL)
    show_page (self, block != NULL && tally_block_get_finished (block) ? self->error_box : GTK_WIDGET (self->drawing));
  else if (self->show_data)
    {
      if (!self->table_filled)
        {
          g_autofree char *text = dup_rows_text (self);

          self->table_filled = tally_result_table_set_result (self->table, text);
        }
      show_page (self, self->table_filled ? GTK_WIDGET (self->table) : GTK_WIDGET (self->drawing));
    }
  else
    show_page (self, GTK_WIDGET (self->drawing));
}

static void
set_show_data (TallyChartRow *self,
               gboolean       show_data)
{
  show_data = !!show_data;
  if (self->show_data == show_data)
    return;

  self->show_data = show_data;
  update_page (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHOW_DATA]);
}

/* Binding and unbinding both show the current block, and so does the
 * block's finishing: a live transcript adds the chart's block, and the view
 * makes and binds its row, before the reducer gives the block its title
 * and spec and marks it finished; after that it never changes. */
static void
sync_chart (TallyChartRow *self)
{
  JsonObject *event = details (self);
  const char *title = chart_title (self);
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = NULL;
  JsonNode *spec;

  if (self->chooser != NULL)
    gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
  g_clear_object (&self->chooser);
  g_clear_object (&self->chart);
  self->table_filled = FALSE;
  set_show_data (self, FALSE);

  spec = event != NULL ? json_object_get_member (event, "spec") : NULL;
  if (spec != NULL && JSON_NODE_HOLDS_OBJECT (spec))
    self->chart = tally_chart_new_from_json (json_node_get_object (spec), &error);
  else if (event != NULL)
    g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                         _("The chart's description is missing from the session."));

  /* The engine draws the title over the chart, so above a chart the
   * header says what it is drawn from; above the message of a chart that
   * cannot be drawn it names the chart. */
  if (self->chart != NULL)
    {
      g_autofree char *caption = dup_caption (self);

      gtk_label_set_text (self->title_label, caption);
      gtk_widget_remove_css_class (GTK_WIDGET (self->title_label), "heading");
      gtk_widget_add_css_class (GTK_WIDGET (self->title_label), "caption");
      gtk_widget_add_css_class (GTK_WIDGET (self->title_label), "dim-label");
    }
  else
    {
      gtk_label_set_text (self->title_label, title);
      gtk_widget_add_css_class (GTK_WIDGET (self->title_label), "heading");
      gtk_widget_remove_css_class (GTK_WIDGET (self->title_label), "caption");
      gtk_widget_remove_css_class (GTK_WIDGET (self->title_label), "dim-label");
    }
  tally_chart_drawing_set_chart (self->drawing, self->chart);
  if (error != NULL)
    {
      /* Translators: shown in place of a chart whose spec Tally cannot
       * draw; the placeholder is the reason */
      g_autofree char *message = g_strdup_printf (_("This chart cannot be drawn: %s"), error->message);

      gtk_label_set_text (self->error_label, message);
    }

  if (self->chart != NULL)
    {
      g_autofree char *description = tally_chart_dup_description (self->chart);

      gtk_accessible_update_property (GTK_ACCESSIBLE (self->drawing),
                                      GTK_ACCESSIBLE_PROPERTY_LABEL, title,
                                      GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description,
                                      -1);
    }
  else
    {
      gtk_accessible_reset_property (GTK_ACCESSIBLE (self->drawing), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
      gtk_accessible_update_property (GTK_ACCESSIBLE (self->drawing),
                                      GTK_ACCESSIBLE_PROPERTY_LABEL, title,
                                      -1);
    }
  /* Translators: the accessible name of a chart in the transcript */
  {
    g_autofree char *label = g_strdup_printf (_("Chart: %s"), title);

    gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                    GTK_ACCESSIBLE_PROPERTY_LABEL, label,
                                    -1);
  }

  file = find_file (self);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "chart.copy", self->chart != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "chart.save", self->chart != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "chart.show-data", self->chart != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "chart.open", file != NULL);
  update_page (self);
}

static void
tally_chart_row_bind (TallyBlockWidget *widget,
                      TallyBlock       *block)
{
  sync_chart (TALLY_CHART_ROW (widget));
}

/* Actions */

/* The size a copied or saved chart has: what the analyst sees, or the
 * default width when the drawing was never allocated. */
static void
export_size (TallyChartRow *self,
             int           *width,
             int           *height)
{
  *width = gtk_widget_get_width (GTK_WIDGET (self->drawing));
  if (*width <= 0)
    *width = EXPORT_WIDTH;
  *height = height_for_width (*width);
}

static void
copy_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TallyChartRow *self = TALLY_CHART_ROW (widget);
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(GBytes) bytes = NULL;
  cairo_surface_t *surface;
  TallyChartStyle style;
  cairo_t *cr;
  int scale = gtk_widget_get_scale_factor (widget);
  int width, height;

  g_assert (TALLY_IS_CHART_ROW (self));

  if (self->chart == NULL)
    return;

  /* A pasted chart lands in documents and mail, so it is drawn light and
   * on its own background, at the display's scale so it stays sharp. */
  export_size (self, &width, &height);
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width * scale, height * scale);
  cr = cairo_create (surface);
  cairo_scale (cr, scale, scale);
  tally_chart_style_init (&style, FALSE);
  tally_chart_render (self->chart, cr, width, height, &style);
  cairo_destroy (cr);
  cairo_surface_flush (surface);

  bytes = g_bytes_new (cairo_image_surface_get_data (surface),
                       (gsize) cairo_image_surface_get_stride (surface) * height * scale);
  texture = gdk_memory_texture_new (width * scale, height * scale, GDK_MEMORY_DEFAULT,
                                    bytes, cairo_image_surface_get_stride (surface));
  cairo_surface_destroy (surface);

  gdk_clipboard_set_texture (gtk_widget_get_clipboard (widget), texture);
}

static void
chooser_response_cb (TallyChartRow   *self,
                     int              response,
                     GtkNativeDialog *chooser)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *lower = NULL;
  int width, height;
  gboolean ok;

  g_assert (TALLY_IS_CHART_ROW (self));

  if (response == GTK_RESPONSE_ACCEPT)
    file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
  g_clear_object (&self->chooser);
  if (file == NULL || self->chart == NULL)
    return;

  path = g_file_get_path (file);
  if (path == NULL)
    {
      tally_error_dialog_show (GTK_WIDGET (self), _("Could Not Save the Chart"),
                               _("Charts can only be saved to local files."));
      return;
    }

  /* The extension picks the format; a name without a known one gets
   * ".png". The files are written light, for documents. A chart is small
   * (at most 5,000 rows), so it is written here rather than in a thread,
   * which would need a second copy of the chart. */
  lower = g_ascii_strdown (path, -1);
  export_size (self, &width, &height);
  if (g_str_has_suffix (lower, ".svg"))
    ok = tally_chart_write_svg (self->chart, path, width, height, FALSE, &error);
  else if (g_str_has_suffix (lower, ".pdf"))
    ok = tally_chart_write_pdf (self->chart, path, width, height, FALSE, &error);
  else
    {
      if (!g_str_has_suffix (lower, ".png"))
        {
          char *with_suffix = g_strconcat (path, ".png", NULL);

          g_free (path);
          path = with_suffix;
        }
      ok = tally_chart_write_png (self->chart, path, width * 2, height * 2, FALSE, &error);
    }

  if (!ok)
    tally_error_dialog_show (GTK_WIDGET (self), _("Could Not Save the Chart"), error->message);
}

static void
add_filter (GtkFileChooser *chooser,
            const char     *name,
            const char     *mime_type,
            const char     *suffix)
{
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, name);
  gtk_file_filter_add_mime_type (filter, mime_type);
  gtk_file_filter_add_suffix (filter, suffix);
  gtk_file_chooser_add_filter (chooser, filter);
}

/* The name offered: the one create_chart gave the chart's files in the
 * workspace (made from its title there), as a PNG. */
static char *
dup_file_name (TallyChartRow *self)
{
  JsonArray *files = tally_json_object_get_array (details (self), "files");
  g_autofree char *base = NULL;
  char *dot;

  for (guint i = 0; files != NULL && i < json_array_get_length (files) && base == NULL; i++)
    if (file_name_at (files, i) != NULL)
      base = g_path_get_basename (file_name_at (files, i));
  if (base == NULL)
    /* Translators: the file name offered for a chart without files */
    return g_strconcat (_("chart"), ".png", NULL);

  dot = strrchr (base, '.');
  if (dot != NULL && dot != base)
    *dot = '\0';
  return g_strconcat (base, ".png", NULL);
}

static void
save_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TallyChartRow *self = TALLY_CHART_ROW (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  g_autofree char *name = NULL;

  g_assert (TALLY_IS_CHART_ROW (self));

  if (self->chooser != NULL || self->chart == NULL)
    return;

  self->chooser = gtk_file_chooser_native_new (_("Save Chart"),
                                               GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                               GTK_FILE_CHOOSER_ACTION_SAVE,
                                               _("_Save"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (self->chooser), TRUE);
  name = dup_file_name (self);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (self->chooser), name);
  add_filter (GTK_FILE_CHOOSER (self->chooser), _("PNG Images"), "image/png", "png");
  add_filter (GTK_FILE_CHOOSER (self->chooser), _("SVG Images"), "image/svg+xml", "svg");
  add_filter (GTK_FILE_CHOOSER (self->chooser), _("PDF Documents"), "application/pdf", "pdf");
  g_signal_connect_object (self->chooser, "response", G_CALLBACK (chooser_response_cb), self, G_CONNECT_SWAPPED);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TallyChartRow *self = TALLY_CHART_ROW (widget);
  g_autoptr(GFile) file = find_file (self);

  g_assert (TALLY_IS_CHART_ROW (self));

  if (file == NULL)
    {
      gtk_widget_action_set_enabled (widget, "chart.open", FALSE);
      tally_error_dialog_show (GTK_WIDGET (self), _("Could Not Open the Chart"),
                               _("The chart's files are no longer in the session's folder."));
      return;
    }

  tally_file_chip_open_with_system (widget, file);
}

/* Object */

static void
tally_chart_row_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  TallyChartRow *self = TALLY_CHART_ROW (object);

  switch (prop_id)
    {
    case PROP_SHOW_DATA:
      g_value_set_boolean (value, self->show_data);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_chart_row_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  TallyChartRow *self = TALLY_CHART_ROW (object);

  switch (prop_id)
    {
    case PROP_SHOW_DATA:
      set_show_data (self, g_value_get_boolean (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_chart_row_dispose (GObject *object)
{
  TallyChartRow *self = (TallyChartRow *)object;

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);

  if (self->chooser != NULL)
    gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
  g_clear_object (&self->chooser);
  g_clear_object (&self->chart);

  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_CHART_ROW);

  G_OBJECT_CLASS (tally_chart_row_parent_class)->dispose (object);
}

static void
tally_chart_row_class_init (TallyChartRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_chart_row_dispose;
  object_class->get_property = tally_chart_row_get_property;
  object_class->set_property = tally_chart_row_set_property;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_chart_row_bind;
  TALLY_BLOCK_WIDGET_CLASS (klass)->unbind = tally_chart_row_bind;

  /**
   * TallyChartRow:show-data:
   *
   * Whether the chart's rows are shown as a table in place of the
   * drawing. Reset to %FALSE on each bind.
   */
  properties[PROP_SHOW_DATA] =
    g_param_spec_boolean ("show-data", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * TallyChartRow|chart.show-data:
   *
   * Toggles between the drawing and a table of the chart's rows.
   */
  gtk_widget_class_install_property_action (widget_class, "chart.show-data", "show-data");

  /**
   * TallyChartRow|chart.copy:
   *
   * Puts the chart on the clipboard as an image, drawn light.
   */
  gtk_widget_class_install_action (widget_class, "chart.copy", NULL, copy_action);

  /**
   * TallyChartRow|chart.save:
   *
   * Asks for a file and saves the chart there as PNG, SVG or PDF, by
   * the name's extension.
   */
  gtk_widget_class_install_action (widget_class, "chart.save", NULL, save_action);

  /**
   * TallyChartRow|chart.open:
   *
   * Opens the first of the chart's files that still exists, as a file
   * chip opens a file (tally_file_chip_open_with_system()): a failure is
   * said in an error dialog.
   */
  gtk_widget_class_install_action (widget_class, "chart.open", NULL, open_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_c, GDK_CONTROL_MASK, "chart.copy", NULL);

  g_type_ensure (TALLY_TYPE_CHART_DRAWING);
  g_type_ensure (TALLY_TYPE_RESULT_TABLE);
  g_type_ensure (TALLY_TYPE_CENTRING_LAYOUT);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/transcript/tally-chart-row.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyChartRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, TallyChartRow, error_box);
  gtk_widget_class_bind_template_child (widget_class, TallyChartRow, drawing);
  gtk_widget_class_bind_template_child (widget_class, TallyChartRow, table);
  gtk_widget_class_bind_template_child (widget_class, TallyChartRow, error_label);
  gtk_widget_class_set_css_name (widget_class, "tallychartrow");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
tally_chart_row_init (TallyChartRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::finished", G_CALLBACK (sync_chart), self);
  sync_chart (self);
}

/**
 * tally_chart_row_get_drawing:
 * @self: a #TallyChartRow
 *
 * Returns: (transfer none): the widget that draws the chart (focusable,
 *   with the chart's accessible label and description); for tests
 */
GtkWidget *
tally_chart_row_get_drawing (TallyChartRow *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_ROW (self), NULL);

  return GTK_WIDGET (self->drawing);
}

/**
 * tally_chart_row_get_table:
 * @self: a #TallyChartRow
 *
 * Returns: (transfer none): the #TallyResultTable that `chart.show-data`
 *   shows; filled the first time it is shown after a bind
 */
GtkWidget *
tally_chart_row_get_table (TallyChartRow *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_ROW (self), NULL);

  return GTK_WIDGET (self->table);
}

/**
 * tally_chart_row_has_chart:
 * @self: a #TallyChartRow
 *
 * Returns: whether the bound block's spec could be drawn (%FALSE shows
 *   the engine's message in its place)
 */
gboolean
tally_chart_row_has_chart (TallyChartRow *self)
{
  g_return_val_if_fail (TALLY_IS_CHART_ROW (self), FALSE);

  return self->chart != NULL;
}
