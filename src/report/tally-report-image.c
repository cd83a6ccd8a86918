/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * The images of a report (docs/reports.md §2): a chart drawn from its
 * event's spec, an SVG re-drawn through librsvg (so nothing of the file but
 * its drawing survives), a PNG, a link for a remote URL, or a placeholder
 * the reader can see. Nothing is fetched and no file outside the report's
 * folder is read.
 */

#define G_LOG_DOMAIN "tally-report"

#include "config.h"

#include <cairo-svg.h>
#include <glib/gi18n-lib.h>
#include <stdlib.h>
#include <string.h>

#include "tally-chart-render.h"
#include "tally-json.h"
#include "tally-report-private.h"

/* Larger image files are refused rather than read into memory. */
#define IMAGE_MAX_BYTES (32 * 1024 * 1024)

static const guint8 png_magic[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

/**
 * tally_report_url_decode:
 * @text: a URL as written in Markdown, possibly with `%XX` escapes
 * @length: its length in bytes, or -1 when nul-terminated
 *
 * Returns: (transfer full): @text with its `%XX` escapes decoded; @text
 *   itself when an escape is malformed or decodes to a nul byte
 */
char *
tally_report_url_decode (const char *text,
                         gsize       length)
{
  g_autofree char *copy = g_strndup (text, length);
  char *decoded = g_uri_unescape_string (copy, NULL);

  return decoded != NULL ? decoded : g_steal_pointer (&copy);
}

/* Whether @src starts with a URL scheme (`http:`, `file:`, `data:` …) */
static gboolean
has_scheme (const char *src)
{
  const char *p = src;

  if (!g_ascii_isalpha (*p))
    return FALSE;
  while (g_ascii_isalnum (*p) || *p == '+' || *p == '-' || *p == '.')
    p++;
  return *p == ':';
}

/* A relative path that stays inside its folder: no `..` part, not
 * absolute, no backslash. */
static gboolean
is_inside_path (const char *path)
{
  g_auto(GStrv) parts = NULL;

  if (*path == '\0' || g_path_is_absolute (path) || strchr (path, '\\') != NULL)
    return FALSE;
  parts = g_strsplit (path, "/", -1);
  for (guint i = 0; parts[i] != NULL; i++)
    if (g_str_equal (parts[i], ".."))
      return FALSE;
  return TRUE;
}

/**
 * tally_report_file_resolves_inside:
 * @folder: a local folder, such as a report's
 * @file: a local file
 *
 * Whether @file, with every symbolic link on its way followed, is inside
 * @folder (also followed) or below it: a link under the report's folder
 * may point anywhere. Containment is decided on whole path components
 * (`/ws-evil` is not inside `/ws`). Both must exist. Used for a report's
 * images and for the links its preview opens.
 *
 * Returns: %TRUE when @file resolves inside @folder
 */
gboolean
tally_report_file_resolves_inside (GFile *folder,
                                   GFile *file)
{
  g_autofree char *base_path = NULL;
  g_autofree char *path = NULL;
  g_autofree char *real_base = NULL;
  g_autofree char *real = NULL;
  gsize base_length;

  g_return_val_if_fail (G_IS_FILE (folder), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);

  base_path = g_file_get_path (folder);
  path = g_file_get_path (file);
  real_base = base_path != NULL ? realpath (base_path, NULL) : NULL;
  real = path != NULL ? realpath (path, NULL) : NULL;
  if (real_base == NULL || real == NULL)
    return FALSE;
  base_length = strlen (real_base);
  /* the root folder's real path already ends in its separator */
  if (base_length > 0 && real_base[base_length - 1] == G_DIR_SEPARATOR)
    base_length--;
  return strncmp (real, real_base, base_length) == 0 && real[base_length] == G_DIR_SEPARATOR;
}

static TallyReportImage *
missing (TallyReportImage *image,
         char             *message)
{
  image->kind = TALLY_REPORT_IMAGE_MISSING;
  image->message = message;
  g_clear_object (&image->svg);
  g_clear_object (&image->chart);
  g_clear_pointer (&image->png, cairo_surface_destroy);
  g_clear_pointer (&image->png_bytes, g_bytes_unref);
  return image;
}

static TallyReportImage *
load_chart (TallyReportImage *image,
            JsonObject       *event)
{
  g_autoptr(GError) error = NULL;
  JsonObject *spec = tally_json_object_get_object (event, "spec");

  image->chart = spec != NULL ? tally_chart_new_from_json (spec, &error) : NULL;
  if (image->chart == NULL)
    /* TRANSLATORS: a placeholder in an exported report; %s is the chart's file, then why */
    return missing (image, g_strdup_printf (_("Chart could not be drawn: %s (%s)"), image->src,
                                            error != NULL ? error->message : _("no spec")));
  image->kind = TALLY_REPORT_IMAGE_CHART;
  image->width = TALLY_REPORT_CHART_WIDTH;
  image->height = TALLY_REPORT_CHART_HEIGHT;
  return image;
}

typedef struct {
  const guint8 *data;
  gsize         length;
  gsize         offset;
} ReadCursor;

static cairo_status_t
read_png_cb (void          *closure,
             unsigned char *data,
             unsigned int   length)
{
  ReadCursor *cursor = closure;

  if (cursor->length - cursor->offset < length)
    return CAIRO_STATUS_READ_ERROR;
  memcpy (data, cursor->data + cursor->offset, length);
  cursor->offset += length;
  return CAIRO_STATUS_SUCCESS;
}

static gboolean
load_png (TallyReportImage *image,
          GBytes           *bytes)
{
  ReadCursor cursor = { 0 };

  cursor.data = g_bytes_get_data (bytes, &cursor.length);
  if (cursor.length < sizeof png_magic || memcmp (cursor.data, png_magic, sizeof png_magic) != 0)
    return FALSE;
  image->png = cairo_image_surface_create_from_png_stream (read_png_cb, &cursor);
  if (cairo_surface_status (image->png) != CAIRO_STATUS_SUCCESS ||
      cairo_image_surface_get_width (image->png) <= 0)
    return FALSE;
  image->png_bytes = g_bytes_ref (bytes);
  image->kind = TALLY_REPORT_IMAGE_PNG;
  /* 96 pixels per inch, as a browser shows it: 0.75 pt a pixel */
  image->width = cairo_image_surface_get_width (image->png) * 0.75;
  image->height = cairo_image_surface_get_height (image->png) * 0.75;
  return TRUE;
}

static gboolean
load_svg (TallyReportImage  *image,
          GBytes            *bytes,
          GError           **error)
{
  g_autoptr(GInputStream) stream = g_memory_input_stream_new_from_bytes (bytes);
  gboolean has_width, has_height, has_viewbox;
  RsvgLength width, height;
  RsvgRectangle viewbox;

  /* No base file: librsvg then resolves no reference outside the data
   * (no other file, no URL). */
  image->svg = rsvg_handle_new_from_stream_sync (stream, NULL, RSVG_HANDLE_FLAGS_NONE, NULL, error);
  if (image->svg == NULL)
    return FALSE;
  rsvg_handle_set_dpi (image->svg, 96.0);
  rsvg_handle_get_intrinsic_dimensions (image->svg, &has_width, &width, &has_height, &height,
                                        &has_viewbox, &viewbox);
  if (!rsvg_handle_get_intrinsic_size_in_pixels (image->svg, &image->width, &image->height))
    {
      image->width = has_viewbox ? viewbox.width : TALLY_REPORT_CHART_WIDTH;
      image->height = has_viewbox ? viewbox.height : TALLY_REPORT_CHART_HEIGHT;
    }
  else
    {
      /* pixels at 96 per inch to points */
      image->width *= 0.75;
      image->height *= 0.75;
    }
  if (!(image->width > 0 && image->height > 0 && image->width < 1e5 && image->height < 1e5))
    {
      g_set_error_literal (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID, _("the drawing has no size"));
      return FALSE;
    }
  image->kind = TALLY_REPORT_IMAGE_SVG;
  return TRUE;
}

/**
 * tally_report_image_load:
 * @source: where images come from
 * @src: the image's URL, decoded (tally_report_url_decode())
 *
 * Resolves one image of a report. Never fails: what cannot be shown
 * becomes %TALLY_REPORT_IMAGE_MISSING with a message for the reader
 * ("Chart not found: charts/x.svg") or %TALLY_REPORT_IMAGE_REMOTE.
 *
 * Returns: (transfer full): the image
 */
TallyReportImage *
tally_report_image_load (const TallyReportSource *source,
                         const char              *src)
{
  g_autoptr(TallyReportImage) image = g_new0 (TallyReportImage, 1);
  g_autoptr(GFile) file = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *lower = NULL;
  JsonObject *event;

  image->src = g_strdup (src);

  event = source->charts != NULL ? g_hash_table_lookup (source->charts, src) : NULL;
  if (event != NULL)
    return load_chart (g_steal_pointer (&image), event);

  if (has_scheme (src))
    {
      if (g_ascii_strncasecmp (src, "http:", 5) == 0 || g_ascii_strncasecmp (src, "https:", 6) == 0)
        {
          image->kind = TALLY_REPORT_IMAGE_REMOTE;
          return g_steal_pointer (&image);
        }
      /* TRANSLATORS: a placeholder in an exported report; %s is the image's address */
      return missing (g_steal_pointer (&image), g_strdup_printf (_("Image not embedded: %s"), src));
    }

  if (!is_inside_path (src))
    /* TRANSLATORS: a placeholder in an exported report; %s is the image's path */
    return missing (g_steal_pointer (&image),
                    g_strdup_printf (_("Image outside the report’s folder: %s"), src));

  if (source->base_dir == NULL)
    return missing (g_steal_pointer (&image), g_strdup_printf (_("Chart not found: %s"), src));

  file = g_file_resolve_relative_path (source->base_dir, src);
  {
    g_autoptr(GFileInfo) info = g_file_query_info (file,
                                                   G_FILE_ATTRIBUTE_STANDARD_SIZE ","
                                                   G_FILE_ATTRIBUTE_STANDARD_TYPE,
                                                   G_FILE_QUERY_INFO_NONE, NULL, &error);

    if (info == NULL)
      {
        if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
          /* TRANSLATORS: a placeholder in an exported report; %s is the image's path */
          return missing (g_steal_pointer (&image), g_strdup_printf (_("Chart not found: %s"), src));
        /* TRANSLATORS: a placeholder in an exported report; the image's path, then why */
        return missing (g_steal_pointer (&image),
                        g_strdup_printf (_("Chart could not be read: %s (%s)"), src, error->message));
      }
    if (!tally_report_file_resolves_inside (source->base_dir, file))
      return missing (g_steal_pointer (&image),
                      g_strdup_printf (_("Image outside the report’s folder: %s"), src));
    /* A FIFO or a device would block the export or never end. */
    if (g_file_info_get_file_type (info) != G_FILE_TYPE_REGULAR)
      return missing (g_steal_pointer (&image),
                      g_strdup_printf (_("Chart could not be read: %s (%s)"), src, _("not a regular file")));
    if (g_file_info_get_size (info) > IMAGE_MAX_BYTES)
      return missing (g_steal_pointer (&image),
                      g_strdup_printf (_("Chart could not be read: %s (%s)"), src, _("the file is too large")));
  }

  {
    char *contents = NULL;
    gsize length = 0;

    if (!g_file_load_contents (file, NULL, &contents, &length, NULL, &error))
      return missing (g_steal_pointer (&image),
                      g_strdup_printf (_("Chart could not be read: %s (%s)"), src, error->message));
    bytes = g_bytes_new_take (contents, length);
  }

  lower = g_ascii_strdown (src, -1);
  if (g_str_has_suffix (lower, ".png"))
    {
      if (!load_png (image, bytes))
        return missing (g_steal_pointer (&image),
                        g_strdup_printf (_("Chart could not be read: %s (%s)"), src, _("not a PNG image")));
      return g_steal_pointer (&image);
    }
  if (g_str_has_suffix (lower, ".svg"))
    {
      if (!load_svg (image, bytes, &error))
        return missing (g_steal_pointer (&image),
                        g_strdup_printf (_("Chart could not be read: %s (%s)"), src, error->message));
      return g_steal_pointer (&image);
    }
  /* TRANSLATORS: a placeholder in an exported report; %s is the image's path */
  return missing (g_steal_pointer (&image),
                  g_strdup_printf (_("Image not embedded (only SVG and PNG are): %s"), src));
}

/**
 * tally_report_image_free:
 * @image: (transfer full) (nullable): an image
 */
void
tally_report_image_free (TallyReportImage *image)
{
  if (image == NULL)
    return;
  g_free (image->src);
  g_free (image->message);
  g_clear_object (&image->svg);
  g_clear_object (&image->chart);
  g_clear_pointer (&image->png, cairo_surface_destroy);
  g_clear_pointer (&image->png_bytes, g_bytes_unref);
  g_free (image);
}

/**
 * tally_report_image_draw:
 * @image: an SVG, PNG or chart image
 * @cr: where to draw, with the image's top-left corner at the origin
 * @width: the width to draw at, in @cr's units
 * @height: the height to draw at
 *
 * Draws the image scaled to @width × @height: charts and SVGs as vectors,
 * a PNG as its pixels. Other kinds draw nothing.
 */
void
tally_report_image_draw (TallyReportImage *image,
                         cairo_t          *cr,
                         double            width,
                         double            height)
{
  cairo_save (cr);
  switch (image->kind)
    {
    case TALLY_REPORT_IMAGE_CHART:
      {
        TallyChartStyle style;

        /* Laid out for the size it is given, so its text keeps the
         * engine's size instead of shrinking with the drawing. */
        tally_chart_style_init (&style, FALSE);
        tally_chart_render (image->chart, cr, width, height, &style);
      }
      break;

    case TALLY_REPORT_IMAGE_SVG:
      {
        RsvgRectangle viewport = { 0, 0, width, height };

        /* A drawing librsvg cannot render leaves the area empty. */
        rsvg_handle_render_document (image->svg, cr, &viewport, NULL);
      }
      break;

    case TALLY_REPORT_IMAGE_PNG:
      cairo_scale (cr, width / cairo_image_surface_get_width (image->png),
                   height / cairo_image_surface_get_height (image->png));
      cairo_set_source_surface (cr, image->png, 0, 0);
      cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_GOOD);
      cairo_paint (cr);
      break;

    case TALLY_REPORT_IMAGE_MISSING:
    case TALLY_REPORT_IMAGE_REMOTE:
      break;
    }
  cairo_restore (cr);
}

static cairo_status_t
write_string_cb (void                *closure,
                 const unsigned char *data,
                 unsigned int         length)
{
  g_string_append_len (closure, (const char *) data, length);
  return CAIRO_STATUS_SUCCESS;
}

static void
replace_all (GString    *text,
             const char *from,
             const char *to)
{
  g_string_replace (text, from, to, 0);
}

/**
 * tally_report_image_dup_svg:
 * @image: an SVG or chart image
 * @serial: a number unique in the document, prefixed to the drawing's ids
 *   so two drawings in one page do not share them
 * @label: (nullable): the accessible label, already escaped for an
 *   attribute
 *
 * Draws @image onto a Cairo SVG surface and returns that drawing as an
 * element to inline in HTML: no XML declaration, no namespace attributes
 * (HTML puts `<svg>` in its namespace), `href` instead of `xlink:href`.
 * Only what Cairo writes is in it (paths, glyphs, embedded PNG data), so
 * no script, style sheet, link or foreign content of an SVG file survives.
 *
 * Returns: (transfer full): the `<svg>` element
 */
char *
tally_report_image_dup_svg (TallyReportImage *image,
                            guint             serial,
                            const char       *label)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *id_attr = g_strdup_printf (" id=\"r%u-", serial);
  g_autofree char *id_ref = g_strdup_printf ("href=\"#r%u-", serial);
  g_autofree char *id_url = g_strdup_printf ("url(#r%u-", serial);
  g_autofree char *open = NULL;
  cairo_surface_t *surface;
  cairo_t *cr;
  const char *start;

  surface = cairo_svg_surface_create_for_stream (write_string_cb, out, image->width, image->height);
  cairo_svg_surface_restrict_to_version (surface, CAIRO_SVG_VERSION_1_1);
  cr = cairo_create (surface);
  tally_report_image_draw (image, cr, image->width, image->height);
  cairo_destroy (cr);
  cairo_surface_finish (surface);
  cairo_surface_destroy (surface);

  start = strstr (out->str, "<svg");
  if (start == NULL)
    return g_strdup ("");
  g_string_erase (out, 0, start - out->str);

  replace_all (out, " xmlns=\"http://www.w3.org/2000/svg\"", "");
  replace_all (out, " xmlns:xlink=\"http://www.w3.org/1999/xlink\"", "");
  replace_all (out, "xlink:href=", "href=");
  replace_all (out, " id=\"", id_attr);
  replace_all (out, "href=\"#", id_ref);
  replace_all (out, "url(#", id_url);

  open = g_strdup_printf ("<svg class=\"chart\" role=\"img\" aria-label=\"%s\"", label != NULL ? label : "");
  g_string_replace (out, "<svg", open, 1);
  while (out->len > 0 && g_ascii_isspace (out->str[out->len - 1]))
    g_string_truncate (out, out->len - 1);

  return g_string_free (g_steal_pointer (&out), FALSE);
}
