/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include "tally-centring-layout.h"

/*
 * A layout for a bin (one child) around wrapping labels, which GTK 4.8
 * lays out again and again when asked for widths at given heights: a
 * wrapping GtkLabel answers that by bisecting widths, a dozen layouts of
 * its text each time (docs/architecture.md §11.1). Three questions did it
 * in the window:
 * - the GtkViewport of a scrolling page asks its content for a width for
 *   its height, only to set a horizontal adjustment such a page never
 *   uses (the empty page's title, description and suggestions: about 40,
 *   50 and 100 layouts of each before the first frame);
 * - gtk_widget_allocate() asks a widget that is not vertically filled
 *   (valign center, as AdwStatusPage's boxes are) for its width at the
 *   allocated height before it measures its height;
 * - a horizontal GtkBox asks each child for widths at heights as it
 *   measures and allocates (the offline banner's text: about 100 layouts
 *   as it appeared).
 * The bin answers a width for a height with its child's width for any
 * height, and centres the child at its natural height for the width
 * itself, so the child stays vertically filled.
 */

/**
 * TallyCentringLayout:
 *
 * The layout of a bin (a widget with one child, such as an #AdwBin)
 * that holds wrapping labels: it is height-for-width; a width for a
 * height is its child's width for any height (the height is not passed
 * on), a height for a width is its child's; its child gets the whole
 * width and its natural height for it, centred vertically when the bin
 * is taller, the whole height otherwise. It reports no baseline. The
 * child should be vertically filled (`valign` fill), or GTK asks it for
 * its width at a height as it allocates it. Set it in a template with
 * `<property name="layout-manager"><object class="TallyCentringLayout"/></property>`
 * on the bin, after g_type_ensure (%TALLY_TYPE_CENTRING_LAYOUT) in the
 * class init.
 */
struct _TallyCentringLayout
{
  GtkLayoutManager parent_instance;
};

G_DEFINE_FINAL_TYPE (TallyCentringLayout, tally_centring_layout, GTK_TYPE_LAYOUT_MANAGER)

static GtkSizeRequestMode
tally_centring_layout_get_request_mode (GtkLayoutManager *manager G_GNUC_UNUSED,
                                        GtkWidget        *widget G_GNUC_UNUSED)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

static void
tally_centring_layout_measure (GtkLayoutManager *manager G_GNUC_UNUSED,
                               GtkWidget        *widget,
                               GtkOrientation    orientation,
                               int               for_size,
                               int              *minimum,
                               int              *natural,
                               int              *minimum_baseline,
                               int              *natural_baseline)
{
  GtkWidget *child = gtk_widget_get_first_child (widget);

  /* No baseline: the child is moved down to be centred. */
  *minimum = *natural = 0;
  *minimum_baseline = *natural_baseline = -1;
  if (child == NULL || !gtk_widget_should_layout (child))
    return;
  gtk_widget_measure (child, orientation, orientation == GTK_ORIENTATION_HORIZONTAL ? -1 : for_size,
                      minimum, natural, NULL, NULL);
}

static void
tally_centring_layout_allocate (GtkLayoutManager *manager G_GNUC_UNUSED,
                                GtkWidget        *widget,
                                int               width,
                                int               height,
                                int               baseline G_GNUC_UNUSED)
{
  GtkWidget *child = gtk_widget_get_first_child (widget);
  int natural = 0;

  if (child == NULL || !gtk_widget_should_layout (child))
    return;
  gtk_widget_measure (child, GTK_ORIENTATION_VERTICAL, width, NULL, &natural, NULL, NULL);
  if (natural < height)
    gtk_widget_allocate (child, width, natural, -1,
                         gsk_transform_translate (NULL, &GRAPHENE_POINT_INIT (0, (height - natural) / 2)));
  else
    gtk_widget_allocate (child, width, height, -1, NULL);
}

static void
tally_centring_layout_class_init (TallyCentringLayoutClass *klass)
{
  GtkLayoutManagerClass *layout_class = GTK_LAYOUT_MANAGER_CLASS (klass);

  layout_class->get_request_mode = tally_centring_layout_get_request_mode;
  layout_class->measure = tally_centring_layout_measure;
  layout_class->allocate = tally_centring_layout_allocate;
}

static void
tally_centring_layout_init (TallyCentringLayout *self G_GNUC_UNUSED)
{
}
