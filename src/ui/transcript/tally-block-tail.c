/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-block-tail"

#include "config.h"

#include "tally-block-tail.h"

/**
 * TallyBlockTail:
 *
 * The newest items of a #GListModel: a list model that shows the source's
 * items from a start position to its end, and grows at the top on request
 * (tally_block_tail_grow(), one items-changed at position 0). The
 * transcript view binds it so that a long session shows its last screenful
 * at once and fills older rows in as the analyst scrolls up
 * (docs/architecture.md §11, "Opening a long session"). Items the source
 * appends or changes in the shown part pass through at their shifted
 * positions; a change in the hidden part shows everything from there on.
 */

struct _TallyBlockTail
{
  GObject     parent_instance;

  GListModel *source;
  guint       start;      /* the source position of item 0 */
};

static void tally_block_tail_list_model_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TallyBlockTail, tally_block_tail, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL,
                                                      tally_block_tail_list_model_init))

static GType
tally_block_tail_get_item_type (GListModel *model)
{
  return g_list_model_get_item_type (TALLY_BLOCK_TAIL (model)->source);
}

static guint
tally_block_tail_get_n_items (GListModel *model)
{
  TallyBlockTail *self = TALLY_BLOCK_TAIL (model);

  return g_list_model_get_n_items (self->source) - self->start;
}

static gpointer
tally_block_tail_get_item (GListModel *model,
                           guint       position)
{
  TallyBlockTail *self = TALLY_BLOCK_TAIL (model);

  if (position >= G_MAXUINT - self->start)
    return NULL;
  return g_list_model_get_item (self->source, self->start + position);
}

static void
tally_block_tail_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = tally_block_tail_get_item_type;
  iface->get_n_items = tally_block_tail_get_n_items;
  iface->get_item = tally_block_tail_get_item;
}

static void
source_items_changed_cb (TallyBlockTail *self,
                         guint           position,
                         guint           removed,
                         guint           added,
                         GListModel     *source)
{
  guint old_shown;

  g_assert (TALLY_IS_BLOCK_TAIL (self));

  if (position >= self->start)
    {
      g_list_model_items_changed (G_LIST_MODEL (self), position - self->start, removed, added);
      return;
    }

  /* Wholly in the hidden part: the shown items only move. */
  if (position + removed <= self->start)
    {
      self->start = self->start + added - removed;
      return;
    }

  /* Across the start: show from the change on. */
  old_shown = g_list_model_get_n_items (source) - added + removed - self->start;
  self->start = position;
  g_list_model_items_changed (G_LIST_MODEL (self), 0, old_shown,
                              g_list_model_get_n_items (source) - position);
}

static void
tally_block_tail_dispose (GObject *object)
{
  TallyBlockTail *self = (TallyBlockTail *)object;

  if (self->source != NULL)
    g_signal_handlers_disconnect_by_data (self->source, self);
  g_clear_object (&self->source);

  G_OBJECT_CLASS (tally_block_tail_parent_class)->dispose (object);
}

static void
tally_block_tail_class_init (TallyBlockTailClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tally_block_tail_dispose;
}

static void
tally_block_tail_init (TallyBlockTail *self)
{
}

/**
 * tally_block_tail_new:
 * @source: (transfer none): the full list
 * @shown: how many of its last items to show at first
 *
 * Returns: (transfer full): a new #TallyBlockTail showing the last
 *   @shown items of @source (all of them when it has fewer)
 */
TallyBlockTail *
tally_block_tail_new (GListModel *source,
                      guint       shown)
{
  TallyBlockTail *self;
  guint n;

  g_return_val_if_fail (G_IS_LIST_MODEL (source), NULL);

  self = g_object_new (TALLY_TYPE_BLOCK_TAIL, NULL);
  self->source = g_object_ref (source);
  n = g_list_model_get_n_items (source);
  self->start = n > shown ? n - shown : 0;
  g_signal_connect_object (source, "items-changed", G_CALLBACK (source_items_changed_cb),
                           self, G_CONNECT_SWAPPED);

  return self;
}

/**
 * tally_block_tail_get_source:
 * @self: a #TallyBlockTail
 *
 * Returns: (transfer none): the full list
 */
GListModel *
tally_block_tail_get_source (TallyBlockTail *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK_TAIL (self), NULL);
  return self->source;
}

/**
 * tally_block_tail_get_hidden:
 * @self: a #TallyBlockTail
 *
 * Returns: how many of the source's first items are not shown yet
 */
guint
tally_block_tail_get_hidden (TallyBlockTail *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK_TAIL (self), 0);
  return self->start;
}

/**
 * tally_block_tail_grow:
 * @self: a #TallyBlockTail
 * @count: how many older items to show, at most
 *
 * Shows up to @count more of the source's items, older than the ones
 * shown, with one items-changed at position 0.
 *
 * Returns: how many items were added (0 once everything shows)
 */
guint
tally_block_tail_grow (TallyBlockTail *self,
                       guint           count)
{
  guint added;

  g_return_val_if_fail (TALLY_IS_BLOCK_TAIL (self), 0);

  added = MIN (count, self->start);
  if (added == 0)
    return 0;
  self->start -= added;
  g_list_model_items_changed (G_LIST_MODEL (self), 0, 0, added);
  return added;
}
