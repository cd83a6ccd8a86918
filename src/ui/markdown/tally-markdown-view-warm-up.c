/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <gtksourceview/gtksource.h>

#include "tally-markdown-code-block.h"
#include "tally-markdown-view-private.h"

/* The first code block of a process costs far more than the next ones
 * (about ten times the frame budget here): GtkSourceView's classes, the
 * style scheme and language managers, and compiling the SQL language's
 * highlighting. One throw-away block made when the first view is shown,
 * at low priority, pays that before an answer streams in. The first
 * frame that shows a block pays for the icon theme too (its Copy icon:
 * the theme's index read and searched, tens of milliseconds under a
 * profiler), and the first that shows markdown for the fonts its tags
 * use besides the text's own (bold, italic, monospace, the headings'
 * sizes: fontconfig matching, loading the faces, hinting their glyphs,
 * which FreeType and cairo keep for the process); the warm-up loads those
 * too, drawing a line in each into a small image. */
static void
warm_up_icons (GtkWidget *widget)
{
  static const char *names[] = { "edit-copy-symbolic", "object-select-symbolic" };
  GtkIconTheme *theme = gtk_icon_theme_get_for_display (gtk_widget_get_display (widget));

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(GtkIconPaintable) icon = gtk_icon_theme_lookup_icon (theme, names[i], NULL, 16,
                                                                     gtk_widget_get_scale_factor (widget),
                                                                     GTK_TEXT_DIR_NONE, 0);
      g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();
      g_autoptr(GskRenderNode) node = NULL;

      /* Drawing it loads the image, which the lookup does not. */
      gdk_paintable_snapshot (GDK_PAINTABLE (icon), GDK_SNAPSHOT (snapshot), 16, 16);
      node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
    }
}

static void
warm_up_fonts (TallyMarkdownView *self)
{
  static const char *fonts[] = {
    NULL, "Bold", "Italic", "Bold Italic", "Monospace", "Monospace Bold",
  };
  /* The headings' scales (tally_markdown_buffer_ensure_tags ()). */
  static const double scales[] = { 1.6, 1.35, 1.17, 1.05 };
  g_autoptr(PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self->text_view), NULL);
  const PangoFontDescription *base = pango_context_get_font_description (pango_layout_get_context (layout));
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 64, 64);
  cairo_t *cr = cairo_create (surface);
  int size = base != NULL ? pango_font_description_get_size (base) : 10 * PANGO_SCALE;

  pango_layout_set_text (layout,
                         "The Quick Brown Fox JUMPS over lazy dogs, 0123456789. "
                         "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ (%)*[]`'\"_-+=:;",
                         -1);
  for (guint i = 0; i < G_N_ELEMENTS (fonts) + G_N_ELEMENTS (scales); i++)
    {
      g_autoptr(PangoFontDescription) desc = base != NULL ? pango_font_description_copy (base)
                                                          : pango_font_description_new ();

      if (i < G_N_ELEMENTS (fonts))
        {
          g_autoptr(PangoFontDescription) style = pango_font_description_from_string (fonts[i] != NULL ? fonts[i] : "");

          pango_font_description_merge (desc, style, TRUE);
        }
      else
        {
          /* h1 is heavier than the others. */
          pango_font_description_set_weight (desc, i == G_N_ELEMENTS (fonts) ? PANGO_WEIGHT_ULTRABOLD : PANGO_WEIGHT_BOLD);
          pango_font_description_set_size (desc, (int)(size * scales[i - G_N_ELEMENTS (fonts)]));
        }
      pango_layout_set_font_description (layout, desc);
      pango_cairo_show_layout (cr, layout);
    }

  cairo_destroy (cr);
  cairo_surface_destroy (surface);
}

static gboolean
warm_up_cb (gpointer user_data)
{
  TallyMarkdownView *self = user_data;
  GtkWidget *block;

  g_assert (TALLY_IS_MARKDOWN_VIEW (self));

  block = g_object_ref_sink (tally_markdown_code_block_new ("SELECT 1;\n", "sql"));
  g_object_unref (block);

  if (gtk_widget_get_realized (GTK_WIDGET (self)))
    {
      warm_up_icons (GTK_WIDGET (self));
      warm_up_fonts (self);
    }
  return G_SOURCE_REMOVE;
}

/**
 * _tally_markdown_view_warm_up:
 * @self: the first markdown view shown in the process
 *
 * Pays at low priority, once the main loop is idle, what the first code
 * block, icon and fonts of a process cost (see above), keeping @self
 * alive until then.
 */
void
_tally_markdown_view_warm_up (TallyMarkdownView *self)
{
  g_idle_add_full (G_PRIORITY_LOW, warm_up_cb, g_object_ref (self), g_object_unref);
}
