/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-cards"

#include "config.h"

#include "tally-chip-layout.h"

/**
 * TallyChipLayout:
 *
 * Lays chips out like words in a paragraph: each at its natural width,
 * left to right, wrapping onto the next line when the next chip does not
 * fit. Lines are as tall as their tallest chip and @spacing pixels apart,
 * as are the chips of a line. (GTK 4.8 has no wrapping box whose children
 * keep their natural width: a GtkFlowBox stretches them to fill each
 * line.)
 */

struct _TallyChipLayout
{
  GtkLayoutManager parent_instance;

  int              spacing;
};

G_DEFINE_FINAL_TYPE (TallyChipLayout, tally_chip_layout, GTK_TYPE_LAYOUT_MANAGER)

typedef void (*PlaceFunc) (GtkWidget *child,
                           int        x,
                           int        y,
                           int        width,
                           int        height);

static int
child_width (GtkWidget *child,
             int        available)
{
  int minimum, natural;

  gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &minimum, &natural, NULL, NULL);
  return CLAMP (natural, minimum, MAX (minimum, available));
}

static int
child_height (GtkWidget *child,
              int        width)
{
  int minimum, natural;

  gtk_widget_measure (child, GTK_ORIENTATION_VERTICAL, width, &minimum, &natural, NULL, NULL);
  return natural;
}

/* Flows the children into lines @width wide; calls @place for each (when
 * given) and returns the height used. */
static int
flow (TallyChipLayout *self,
      GtkWidget       *widget,
      int              width,
      PlaceFunc        place)
{
  GtkWidget *line_start = NULL;
  int x = 0, y = 0, line_height = 0;
  gboolean any = FALSE;

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      int w, h;

      if (!gtk_widget_should_layout (child))
        continue;

      w = child_width (child, width);
      if (line_start != NULL && x + self->spacing + w > width)
        {
          y += line_height + self->spacing;
          x = 0;
          line_height = 0;
          line_start = NULL;
        }
      if (line_start != NULL)
        x += self->spacing;

      h = child_height (child, w);
      if (place != NULL)
        place (child, x, y, w, h);
      x += w;
      line_height = MAX (line_height, h);
      line_start = child;
      any = TRUE;
    }

  return any ? y + line_height : 0;
}

static void
place_child (GtkWidget *child,
             int        x,
             int        y,
             int        width,
             int        height)
{
  gtk_widget_size_allocate (child, &(GtkAllocation) { x, y, width, height }, -1);
}

static GtkSizeRequestMode
tally_chip_layout_get_request_mode (GtkLayoutManager *manager,
                                    GtkWidget        *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

static void
tally_chip_layout_measure (GtkLayoutManager *manager,
                           GtkWidget        *widget,
                           GtkOrientation    orientation,
                           int               for_size,
                           int              *minimum,
                           int              *natural,
                           int              *minimum_baseline,
                           int              *natural_baseline)
{
  TallyChipLayout *self = TALLY_CHIP_LAYOUT (manager);
  int min = 0, nat = 0;
  guint n = 0;

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      /* At least the widest chip; at best all of them on one line. */
      for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
           child = gtk_widget_get_next_sibling (child))
        {
          int child_min, child_nat;

          if (!gtk_widget_should_layout (child))
            continue;
          gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &child_min, &child_nat, NULL, NULL);
          min = MAX (min, child_min);
          nat += child_nat;
          n++;
        }
      if (n > 1)
        nat += (int) (n - 1) * self->spacing;
    }
  else
    {
      int width = for_size;

      if (width < 0)
        tally_chip_layout_measure (manager, widget, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &width, NULL, NULL);
      min = nat = flow (self, widget, width, NULL);
    }

  if (minimum != NULL)
    *minimum = min;
  if (natural != NULL)
    *natural = MAX (min, nat);
  if (minimum_baseline != NULL)
    *minimum_baseline = -1;
  if (natural_baseline != NULL)
    *natural_baseline = -1;
}

static void
tally_chip_layout_allocate (GtkLayoutManager *manager,
                            GtkWidget        *widget,
                            int               width,
                            int               height,
                            int               baseline)
{
  flow (TALLY_CHIP_LAYOUT (manager), widget, width, place_child);
}

static void
tally_chip_layout_class_init (TallyChipLayoutClass *klass)
{
  GtkLayoutManagerClass *layout_class = GTK_LAYOUT_MANAGER_CLASS (klass);

  layout_class->get_request_mode = tally_chip_layout_get_request_mode;
  layout_class->measure = tally_chip_layout_measure;
  layout_class->allocate = tally_chip_layout_allocate;
}

static void
tally_chip_layout_init (TallyChipLayout *self)
{
  self->spacing = 6;
}

/**
 * tally_chip_layout_new:
 * @spacing: pixels between chips and between lines
 *
 * Returns: (transfer full): a new #TallyChipLayout
 */
GtkLayoutManager *
tally_chip_layout_new (int spacing)
{
  TallyChipLayout *self = g_object_new (TALLY_TYPE_CHIP_LAYOUT, NULL);

  self->spacing = MAX (0, spacing);
  return GTK_LAYOUT_MANAGER (self);
}
