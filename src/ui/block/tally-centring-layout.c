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

static GtkSizeRequestMode
centring_request_mode (GtkWidget *widget G_GNUC_UNUSED)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

static void
centring_measure (GtkWidget      *widget,
                  GtkOrientation  orientation,
                  int             for_size,
                  int            *minimum,
                  int            *natural,
                  int            *minimum_baseline,
                  int            *natural_baseline)
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
centring_allocate (GtkWidget *widget,
                   int        width,
                   int        height,
                   int        baseline G_GNUC_UNUSED)
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

/**
 * tally_centring_layout_new:
 *
 * Creates the layout of a bin (a widget with one child, such as an
 * #AdwBin) that holds wrapping labels: it is height-for-width; a width
 * for a height is its child's width for any height (the height is not
 * passed on), a height for a width is its child's; its child gets the
 * whole width and its natural height for it, centred vertically when the
 * bin is taller, the whole height otherwise. It reports no baseline. The
 * child should be vertically filled (`valign` fill), or GTK asks it for
 * its width at a height as it allocates it.
 *
 * Returns: (transfer full): a new #GtkCustomLayout, for
 *   gtk_widget_set_layout_manager()
 */
GtkLayoutManager *
tally_centring_layout_new (void)
{
  return gtk_custom_layout_new (centring_request_mode, centring_measure, centring_allocate);
}
