/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-block-widget"

#include "config.h"

#include "tally-block-widget.h"
#include "tally-properties.h"

/**
 * TallyBlockWidget:
 *
 * The base of every widget that shows one transcript block: the user
 * bubble, assistant text, thinking drawer, tool chip, receipt, error
 * banner, note row and the approval, question and plan cards.
 *
 * The base holds the block (the #TallyBlockWidget:block property, a strong
 * reference) and a #GSignalGroup whose target is that block. A subclass
 * connects the block's notifications once, in its instance init, with
 * g_signal_group_connect_object() on tally_block_widget_get_block_signals();
 * the group moves them to each new block and drops them on unbind, so no
 * subclass disconnects by hand. It implements #TallyBlockWidgetClass.bind
 * to show the block and, when it starts work of its own (a thread, a web
 * view), #TallyBlockWidgetClass.unbind to stop it.
 *
 * A block is shown in the context of its transcript: the other blocks
 * (#TallyBlockWidget:transcript, e.g. a plan's earlier version) and the
 * session's workspace folder (#TallyBlockWidget:workspace, e.g. to read a
 * file for a diff). The row that binds the widget sets both first; the
 * widget never searches its ancestors for them.
 *
 * What the analyst decides on a card goes up as an action
 * (`session.approve`, `session.answer`, `session.implement-plan`,
 * `session.refine-plan`) activated with gtk_widget_activate_action(); the
 * window installs them (docs/architecture.md §3.2).
 *
 * Which widget shows which #TallyBlockKind is registered once with
 * tally_block_widget_register_kind() (see tally_ui_init()); the block row
 * asks tally_block_widget_type_for_kind().
 *
 * A subclass whose look is a function of the current block (%NULL when
 * nothing is bound) implements only #TallyBlockWidgetClass.bind, reading
 * the block with TALLY_BLOCK_WIDGET_BLOCK(): without an unbind, the base
 * calls bind again when the block is cleared or replaced, with the block
 * already %NULL, so the widget resets itself.
 *
 * A subclass that clears its template in dispose calls
 * tally_block_widget_set_block (self, NULL) first, so that unbind still
 * sees its children; the base's own dispose only drops the references.
 */

typedef struct
{
  TallyBlock   *block;
  GSignalGroup *block_signals;
  GListModel   *transcript;
  char         *workspace;
} TallyBlockWidgetPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (TallyBlockWidget, tally_block_widget, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_BLOCK,
  PROP_TRANSCRIPT,
  PROP_WORKSPACE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];
static GHashTable *kinds;     /* TallyBlockKind → GType */

static void
tally_block_widget_dispose (GObject *object)
{
  TallyBlockWidget *self = (TallyBlockWidget *)object;
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);
  GtkWidget *child;

  if (priv->block_signals != NULL)
    g_signal_group_set_target (priv->block_signals, NULL);
  g_clear_object (&priv->block);
  g_clear_object (&priv->block_signals);
  g_clear_object (&priv->transcript);

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);

  G_OBJECT_CLASS (tally_block_widget_parent_class)->dispose (object);
}

static void
tally_block_widget_finalize (GObject *object)
{
  TallyBlockWidget *self = (TallyBlockWidget *)object;
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);

  g_free (priv->workspace);

  G_OBJECT_CLASS (tally_block_widget_parent_class)->finalize (object);
}

static void
tally_block_widget_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  TallyBlockWidget *self = TALLY_BLOCK_WIDGET (object);
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_BLOCK:
      g_value_set_object (value, priv->block);
      break;
    case PROP_TRANSCRIPT:
      g_value_set_object (value, priv->transcript);
      break;
    case PROP_WORKSPACE:
      g_value_set_string (value, priv->workspace);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_block_widget_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  TallyBlockWidget *self = TALLY_BLOCK_WIDGET (object);

  switch (prop_id)
    {
    case PROP_BLOCK:
      tally_block_widget_set_block (self, g_value_get_object (value));
      break;
    case PROP_TRANSCRIPT:
      tally_block_widget_set_transcript (self, g_value_get_object (value));
      break;
    case PROP_WORKSPACE:
      tally_block_widget_set_workspace (self, g_value_get_string (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_block_widget_class_init (TallyBlockWidgetClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tally_block_widget_dispose;
  object_class->finalize = tally_block_widget_finalize;
  object_class->get_property = tally_block_widget_get_property;
  object_class->set_property = tally_block_widget_set_property;

  /**
   * TallyBlockWidget:block:
   *
   * The block shown, or %NULL.
   */
  properties[PROP_BLOCK] =
    g_param_spec_object ("block", NULL, NULL, TALLY_TYPE_BLOCK,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * TallyBlockWidget:transcript:
   *
   * The blocks of the transcript the block belongs to (a #GListModel of
   * #TallyBlock), or %NULL when it is shown alone.
   */
  properties[PROP_TRANSCRIPT] =
    g_param_spec_object ("transcript", NULL, NULL, G_TYPE_LIST_MODEL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * TallyBlockWidget:workspace:
   *
   * The session's workspace folder (absolute), or %NULL when unknown.
   */
  properties[PROP_WORKSPACE] =
    g_param_spec_string ("workspace", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
tally_block_widget_init (TallyBlockWidget *self)
{
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);

  priv->block_signals = g_signal_group_new (TALLY_TYPE_BLOCK);
}

/**
 * tally_block_widget_get_block:
 * @self: a #TallyBlockWidget
 *
 * Returns: (transfer none) (nullable): the block shown
 */
TallyBlock *
tally_block_widget_get_block (TallyBlockWidget *self)
{
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);

  g_return_val_if_fail (TALLY_IS_BLOCK_WIDGET (self), NULL);
  return priv->block;
}

/**
 * tally_block_widget_set_block:
 * @self: a #TallyBlockWidget
 * @block: (nullable): the block to show, or %NULL to unbind
 *
 * Unbinds the block shown (#TallyBlockWidgetClass.unbind, or bind with
 * no block when the class has no unbind), points the block signal group
 * at @block and binds it (#TallyBlockWidgetClass.bind). A reference to
 * @block is held while it is shown.
 */
void
tally_block_widget_set_block (TallyBlockWidget *self,
                              TallyBlock       *block)
{
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);
  TallyBlockWidgetClass *klass;
  g_autoptr(TallyBlock) old = NULL;

  g_return_if_fail (TALLY_IS_BLOCK_WIDGET (self));
  g_return_if_fail (block == NULL || TALLY_IS_BLOCK (block));

  if (priv->block == block)
    return;

  klass = TALLY_BLOCK_WIDGET_GET_CLASS (self);
  old = g_steal_pointer (&priv->block);
  if (old != NULL && klass->unbind != NULL)
    klass->unbind (self, old);
  else if (old != NULL && klass->bind != NULL)
    klass->bind (self, old);

  g_signal_group_set_target (priv->block_signals, block);
  g_set_object (&priv->block, block);
  if (block != NULL && klass->bind != NULL)
    klass->bind (self, block);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BLOCK]);
}

/**
 * tally_block_widget_get_block_signals:
 * @self: a #TallyBlockWidget
 *
 * The signal group that follows the block shown: connect the block's
 * notifications to it once (in the subclass's instance init) and they
 * move with each bind.
 *
 * Returns: (transfer none): the block signal group
 */
GSignalGroup *
tally_block_widget_get_block_signals (TallyBlockWidget *self)
{
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);

  g_return_val_if_fail (TALLY_IS_BLOCK_WIDGET (self), NULL);
  return priv->block_signals;
}

/**
 * tally_block_widget_get_transcript:
 * @self: a #TallyBlockWidget
 *
 * Returns: (transfer none) (nullable): the #GListModel of #TallyBlock the
 *   block belongs to
 */
GListModel *
tally_block_widget_get_transcript (TallyBlockWidget *self)
{
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);

  g_return_val_if_fail (TALLY_IS_BLOCK_WIDGET (self), NULL);
  return priv->transcript;
}

/**
 * tally_block_widget_set_transcript:
 * @self: a #TallyBlockWidget
 * @transcript: (nullable): the #GListModel of #TallyBlock the block
 *   belongs to
 *
 * Sets the blocks around the one shown. The row sets it before binding.
 */
void
tally_block_widget_set_transcript (TallyBlockWidget *self,
                                   GListModel       *transcript)
{
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);

  g_return_if_fail (TALLY_IS_BLOCK_WIDGET (self));
  g_return_if_fail (transcript == NULL || G_IS_LIST_MODEL (transcript));

  if (g_set_object (&priv->transcript, transcript))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TRANSCRIPT]);
}

/* Where the expanded state is kept on the block (g_object_set_data()). */
#define EXPANDED_KEY "tally-ui-expanded"

/**
 * tally_block_widget_get_expanded:
 * @self: a #TallyBlockWidget
 *
 * Whether the analyst left the bound block's details open (an expander's
 * state). It is kept with the block, not with the widget, so that a row
 * recycled for another block and back shows the block as it was left.
 *
 * Returns: the state set with tally_block_widget_set_expanded() for the
 *   bound block; %FALSE when none was set or no block is bound
 */
gboolean
tally_block_widget_get_expanded (TallyBlockWidget *self)
{
  TallyBlock *block;

  g_return_val_if_fail (TALLY_IS_BLOCK_WIDGET (self), FALSE);

  block = tally_block_widget_get_block (self);
  return block != NULL && GPOINTER_TO_INT (g_object_get_data (G_OBJECT (block), EXPANDED_KEY));
}

/**
 * tally_block_widget_set_expanded:
 * @self: a #TallyBlockWidget
 * @expanded: whether the block's details are open
 *
 * Keeps @expanded with the bound block (see
 * tally_block_widget_get_expanded()); does nothing when no block is
 * bound.
 */
void
tally_block_widget_set_expanded (TallyBlockWidget *self,
                                 gboolean          expanded)
{
  TallyBlock *block;

  g_return_if_fail (TALLY_IS_BLOCK_WIDGET (self));

  block = tally_block_widget_get_block (self);
  if (block != NULL)
    g_object_set_data (G_OBJECT (block), EXPANDED_KEY, GINT_TO_POINTER (expanded != FALSE));
}

/**
 * tally_block_widget_get_workspace:
 * @self: a #TallyBlockWidget
 *
 * Returns: (transfer none) (nullable): the session's workspace folder
 */
const char *
tally_block_widget_get_workspace (TallyBlockWidget *self)
{
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);

  g_return_val_if_fail (TALLY_IS_BLOCK_WIDGET (self), NULL);
  return priv->workspace;
}

/**
 * tally_block_widget_set_workspace:
 * @self: a #TallyBlockWidget
 * @workspace: (nullable): the session's workspace folder (absolute)
 *
 * Sets the folder the block's paths are relative to. The row sets it
 * before binding.
 */
void
tally_block_widget_set_workspace (TallyBlockWidget *self,
                                  const char       *workspace)
{
  TallyBlockWidgetPrivate *priv = tally_block_widget_get_instance_private (self);

  g_return_if_fail (TALLY_IS_BLOCK_WIDGET (self));

  tally_properties_set_string (G_OBJECT (self), &priv->workspace, workspace, properties[PROP_WORKSPACE]);
}

/**
 * tally_block_widget_register_kind:
 * @kind: a block kind
 * @type: a subtype of #TallyBlockWidget that shows blocks of @kind
 *
 * Says which widget shows blocks of @kind. Called once per kind at start
 * (tally_ui_init()); a later call for the same kind replaces the type.
 */
void
tally_block_widget_register_kind (TallyBlockKind kind,
                                  GType          type)
{
  g_return_if_fail (g_type_is_a (type, TALLY_TYPE_BLOCK_WIDGET));

  if (kinds == NULL)
    kinds = g_hash_table_new (NULL, NULL);
  g_hash_table_insert (kinds, GINT_TO_POINTER (kind), GSIZE_TO_POINTER (type));
}

/**
 * tally_block_widget_type_for_kind:
 * @kind: a block kind
 *
 * Returns: the #TallyBlockWidget subtype registered for @kind with
 *   tally_block_widget_register_kind(), or %G_TYPE_INVALID
 */
GType
tally_block_widget_type_for_kind (TallyBlockKind kind)
{
  if (kinds == NULL)
    return G_TYPE_INVALID;
  return GPOINTER_TO_SIZE (g_hash_table_lookup (kinds, GINT_TO_POINTER (kind)));
}
