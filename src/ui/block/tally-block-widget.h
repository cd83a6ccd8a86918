/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block.h"

G_BEGIN_DECLS

#define TALLY_TYPE_BLOCK_WIDGET (tally_block_widget_get_type ())

G_DECLARE_DERIVABLE_TYPE (TallyBlockWidget, tally_block_widget, TALLY, BLOCK_WIDGET, GtkWidget)

/**
 * TallyBlockWidgetClass:
 * @parent_class: the parent class
 * @bind: called when a block is set, after the block signal group's target
 *   is the block; show it here
 * @unbind: called before the block is replaced or cleared; undo what @bind
 *   did that the signal group does not undo (cancel work, drop caches).
 *   When %NULL, @bind is called instead, with no block bound
 *
 * The class of the widgets that show one transcript block.
 */
struct _TallyBlockWidgetClass
{
  GtkWidgetClass parent_class;

  void (*bind)   (TallyBlockWidget *self,
                  TallyBlock       *block);
  void (*unbind) (TallyBlockWidget *self,
                  TallyBlock       *block);

  /*< private >*/
  gpointer padding[6];
};

TallyBlock   *tally_block_widget_get_block         (TallyBlockWidget *self);
void          tally_block_widget_set_block         (TallyBlockWidget *self,
                                                    TallyBlock       *block);
GSignalGroup *tally_block_widget_get_block_signals (TallyBlockWidget *self);
gboolean      tally_block_widget_get_expanded      (TallyBlockWidget *self);
void          tally_block_widget_set_expanded      (TallyBlockWidget *self,
                                                    gboolean          expanded);
GListModel   *tally_block_widget_get_transcript    (TallyBlockWidget *self);
void          tally_block_widget_set_transcript    (TallyBlockWidget *self,
                                                    GListModel       *transcript);
const char   *tally_block_widget_get_workspace     (TallyBlockWidget *self);
void          tally_block_widget_set_workspace     (TallyBlockWidget *self,
                                                    const char       *workspace);

void          tally_block_widget_register_kind     (TallyBlockKind    kind,
                                                    GType             type);
GType         tally_block_widget_type_for_kind     (TallyBlockKind    kind);

/**
 * TALLY_BLOCK_WIDGET_BLOCK:
 * @widget: a #TallyBlockWidget
 *
 * Shorthand for tally_block_widget_get_block() in a subclass.
 */
#define TALLY_BLOCK_WIDGET_BLOCK(widget) (tally_block_widget_get_block (TALLY_BLOCK_WIDGET (widget)))

G_END_DECLS
