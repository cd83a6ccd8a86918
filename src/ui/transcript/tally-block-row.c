/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <adwaita.h>

#include "tally-block-row.h"
#include "tally-block-widget.h"

/**
 * TallyBlockRow:
 *
 * The one row widget of the transcript's list. GtkListView recycles rows,
 * and one factory serves every block, so a row may be bound to a thinking
 * block now and to a tool call next. The row keeps one child made for the
 * kind it last showed and reuses it when the next block needs the same
 * kind of child; otherwise it swaps the child. Since neighbouring blocks
 * are often of the same kind, most binds reuse.
 *
 * Neighbouring blocks are mostly of different kinds (user, thinking, text,
 * tool call, receipt), so a recycled row nearly always needs another kind
 * of child than it has. Building one from its template is the dearest
 * part of binding a row, so rows of one view share a pool: a row that
 * swaps its child puts the old one in the pool, and takes the new one
 * from it when there is one of the kind it needs.
 *
 * The row clamps its child to a readable width (AdwClampLayout), so lines
 * stay short in a wide window while the scroll bar stays at the edge.
 */

#define POOL_SIZE_PER_KIND 8

struct _TallyBlockRowPool
{
  gatomicrefcount  ref_count;
  GHashTable      *spare;     /* GType → GPtrArray of GtkWidget (strong refs) */
};

/**
 * tally_block_row_pool_new:
 *
 * Creates an empty pool of row children, to share between the rows of
 * one list (see tally_block_row_set_pool()).
 *
 * Returns: (transfer full): a new pool; release it with
 *   tally_block_row_pool_unref()
 */
TallyBlockRowPool *
tally_block_row_pool_new (void)
{
  TallyBlockRowPool *pool = g_new0 (TallyBlockRowPool, 1);

  g_atomic_ref_count_init (&pool->ref_count);
  pool->spare = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_ptr_array_unref);
  return pool;
}

/**
 * tally_block_row_pool_ref:
 * @pool: a pool
 *
 * Returns: (transfer full): @pool, with one more reference
 */
TallyBlockRowPool *
tally_block_row_pool_ref (TallyBlockRowPool *pool)
{
  g_return_val_if_fail (pool != NULL, NULL);

  g_atomic_ref_count_inc (&pool->ref_count);
  return pool;
}

/**
 * tally_block_row_pool_unref:
 * @pool: (transfer full): a pool
 *
 * Drops a reference; the last one frees the spare children.
 */
void
tally_block_row_pool_unref (TallyBlockRowPool *pool)
{
  g_return_if_fail (pool != NULL);

  if (!g_atomic_ref_count_dec (&pool->ref_count))
    return;
  g_hash_table_unref (pool->spare);
  g_free (pool);
}

/* Takes a spare child of @type, or returns NULL (transfer full). */
static GtkWidget *
pool_take (TallyBlockRowPool *pool,
           GType              type)
{
  GPtrArray *spare = pool != NULL ? g_hash_table_lookup (pool->spare, GSIZE_TO_POINTER (type)) : NULL;

  if (spare == NULL || spare->len == 0)
    return NULL;
  return g_ptr_array_steal_index_fast (spare, spare->len - 1);
}

/* Keeps @child (transfer full, unparented, unbound) for another row. */
static void
pool_give (TallyBlockRowPool *pool,
           GtkWidget         *child)
{
  GType type = G_OBJECT_TYPE (child);
  GPtrArray *spare;

  if (pool == NULL)
    {
      g_object_unref (child);
      return;
    }

  spare = g_hash_table_lookup (pool->spare, GSIZE_TO_POINTER (type));
  if (spare == NULL)
    {
      spare = g_ptr_array_new_with_free_func (g_object_unref);
      g_hash_table_insert (pool->spare, GSIZE_TO_POINTER (type), spare);
    }

  if (spare->len < POOL_SIZE_PER_KIND)
    g_ptr_array_add (spare, child);
  else
    g_object_unref (child);
}

struct _TallyBlockRow
{
  GtkWidget   parent_instance;

  GtkWidget         *child;        /* strong reference */
  GType              child_type;
  TallyBlock        *block;
  TallyBlockRowPool *pool;
  GListModel        *transcript;   /* context handed to the child */
  char              *workspace;
};

G_DEFINE_FINAL_TYPE (TallyBlockRow, tally_block_row, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_BLOCK,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
set_kind_class (TallyBlockRow *self,
                TallyBlock    *block)
{
  static GEnumClass *kinds;

  if (kinds == NULL)
    kinds = g_type_class_ref (TALLY_TYPE_BLOCK_KIND);

  /* One class per kind ("user", "text", "tool-call", …) lets the style
   * sheet space rows by kind. */
  for (guint i = 0; i < kinds->n_values; i++)
    gtk_widget_remove_css_class (GTK_WIDGET (self), kinds->values[i].value_nick);
  if (block != NULL)
    gtk_widget_add_css_class (GTK_WIDGET (self), tally_block_kind_to_string (tally_block_get_kind (block)));
}

static void
tally_block_row_dispose (GObject *object)
{
  TallyBlockRow *self = (TallyBlockRow *)object;

  if (self->child != NULL)
    {
      tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self->child), NULL);
      g_signal_handlers_disconnect_by_data (self->child, self);
      gtk_widget_unparent (self->child);
      g_clear_object (&self->child);
    }
  g_clear_object (&self->block);
  g_clear_pointer (&self->pool, tally_block_row_pool_unref);
  g_clear_object (&self->transcript);
  g_clear_pointer (&self->workspace, g_free);

  G_OBJECT_CLASS (tally_block_row_parent_class)->dispose (object);
}

static void
tally_block_row_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  TallyBlockRow *self = TALLY_BLOCK_ROW (object);

  switch (prop_id)
    {
    case PROP_BLOCK:
      g_value_set_object (value, self->block);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_block_row_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  TallyBlockRow *self = TALLY_BLOCK_ROW (object);

  switch (prop_id)
    {
    case PROP_BLOCK:
      tally_block_row_set_block (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_block_row_class_init (TallyBlockRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_block_row_dispose;
  object_class->get_property = tally_block_row_get_property;
  object_class->set_property = tally_block_row_set_property;


  /**
   * TallyBlockRow:block:
   *
   * The block shown, or %NULL.
   */
  properties[PROP_BLOCK] =
    g_param_spec_object ("block", NULL, NULL, TALLY_TYPE_BLOCK,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_layout_manager_type (widget_class, ADW_TYPE_CLAMP_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "tallyblockrow");
}

static void
tally_block_row_init (TallyBlockRow *self)
{
  AdwClampLayout *layout = ADW_CLAMP_LAYOUT (gtk_widget_get_layout_manager (GTK_WIDGET (self)));

  adw_clamp_layout_set_maximum_size (layout, 760);
  adw_clamp_layout_set_tightening_threshold (layout, 560);
}

/**
 * tally_block_row_new:
 *
 * Creates an empty row. The transcript view makes one per visible block.
 *
 * Returns: (transfer floating): a new #TallyBlockRow
 */
GtkWidget *
tally_block_row_new (void)
{
  return g_object_new (TALLY_TYPE_BLOCK_ROW, NULL);
}

/**
 * tally_block_row_get_block:
 * @self: a #TallyBlockRow
 *
 * Returns: (transfer none) (nullable): the block shown
 */
TallyBlock *
tally_block_row_get_block (TallyBlockRow *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK_ROW (self), NULL);
  return self->block;
}

/**
 * tally_block_row_set_block:
 * @self: a #TallyBlockRow
 * @block: (nullable): the block to show, or %NULL to unbind
 *
 * Shows @block with the #TallyBlockWidget registered for its kind
 * (tally_block_widget_type_for_kind()), after giving it the context set
 * with tally_block_row_set_context(). The child follows the block's
 * notifications until the next call; unbinding disconnects them but keeps
 * the child for the next block. A reference to
 * @block is held while it is shown.
 */
void
tally_block_row_set_block (TallyBlockRow *self,
                           TallyBlock    *block)
{
  GType type;

  g_return_if_fail (TALLY_IS_BLOCK_ROW (self));
  g_return_if_fail (block == NULL || TALLY_IS_BLOCK (block));

  if (self->block == block)
    return;

  if (self->child != NULL)
    tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self->child), NULL);
  g_set_object (&self->block, block);
  set_kind_class (self, block);

  if (block != NULL)
    {
      type = tally_block_widget_type_for_kind (tally_block_get_kind (block));
      g_return_if_fail (type != G_TYPE_INVALID);
      if (self->child == NULL || type != self->child_type)
        {
          if (self->child != NULL)
            {
              gtk_widget_unparent (self->child);
              pool_give (self->pool, g_steal_pointer (&self->child));
            }

          self->child = pool_take (self->pool, type);
          if (self->child == NULL)
            self->child = g_object_ref_sink (g_object_new (type, NULL));
          self->child_type = type;
          gtk_widget_set_parent (self->child, GTK_WIDGET (self));
        }
      tally_block_widget_set_transcript (TALLY_BLOCK_WIDGET (self->child), self->transcript);
      tally_block_widget_set_workspace (TALLY_BLOCK_WIDGET (self->child), self->workspace);
      tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self->child), block);
    }

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BLOCK]);
}

/**
 * tally_block_row_set_pool:
 * @self: a #TallyBlockRow
 * @pool: (nullable): the pool shared by the rows of one list
 *
 * Lets the row take children from @pool and leave the ones it no longer
 * needs there (a reference to @pool is kept).
 */
void
tally_block_row_set_pool (TallyBlockRow     *self,
                          TallyBlockRowPool *pool)
{
  g_return_if_fail (TALLY_IS_BLOCK_ROW (self));

  if (pool != NULL)
    tally_block_row_pool_ref (pool);
  g_clear_pointer (&self->pool, tally_block_row_pool_unref);
  g_clear_object (&self->transcript);
  g_clear_pointer (&self->workspace, g_free);
  self->pool = pool;
}

/**
 * tally_block_row_get_child:
 * @self: a #TallyBlockRow
 *
 * Returns: (transfer none) (nullable): the widget showing the block
 */
GtkWidget *
tally_block_row_get_child (TallyBlockRow *self)
{
  g_return_val_if_fail (TALLY_IS_BLOCK_ROW (self), NULL);
  return self->child;
}

/**
 * tally_block_row_set_context:
 * @self: a #TallyBlockRow
 * @transcript: (nullable): the #GListModel of #TallyBlock the row shows
 *   blocks of
 * @workspace: (nullable): the session's workspace folder (absolute)
 *
 * Sets what the child is given before each bind
 * (#TallyBlockWidget:transcript and #TallyBlockWidget:workspace). Takes
 * effect at the next tally_block_row_set_block().
 */
void
tally_block_row_set_context (TallyBlockRow *self,
                             GListModel    *transcript,
                             const char    *workspace)
{
  g_return_if_fail (TALLY_IS_BLOCK_ROW (self));
  g_return_if_fail (transcript == NULL || G_IS_LIST_MODEL (transcript));

  g_set_object (&self->transcript, transcript);
  if (g_strcmp0 (self->workspace, workspace) != 0)
    {
      g_free (self->workspace);
      self->workspace = g_strdup (workspace);
    }
}
