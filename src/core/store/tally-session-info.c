/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-store"

#include "config.h"

#include <math.h>

#include "tally-session-info.h"

/**
 * tally_session_info_get_type:
 *
 * Returns: the boxed #GType of #TallySessionInfo
 */
G_DEFINE_BOXED_TYPE (TallySessionInfo, tally_session_info,
                     tally_session_info_ref, tally_session_info_unref)

/**
 * tally_session_info_new:
 * @id: the session's id
 *
 * Creates a record for the session @id with an empty title, zero totals
 * and an unknown cost (NAN). The store fills the fields it reads.
 *
 * Returns: (transfer full): a new #TallySessionInfo
 */
TallySessionInfo *
tally_session_info_new (const char *id)
{
  TallySessionInfo *self;

  g_return_val_if_fail (id != NULL, NULL);

  self = g_new0 (TallySessionInfo, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->id = g_strdup (id);
  self->title = g_strdup ("");
  self->cost_usd = NAN;

  return self;
}

/**
 * tally_session_info_ref:
 * @self: a #TallySessionInfo
 *
 * Returns: (transfer full): @self, with one more reference
 */
TallySessionInfo *
tally_session_info_ref (TallySessionInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * tally_session_info_unref:
 * @self: (transfer full): a #TallySessionInfo
 *
 * Drops one reference; the record is freed with the last one.
 */
void
tally_session_info_unref (TallySessionInfo *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  g_free (self->id);
  g_free (self->title);
  g_free (self->model);
  g_free (self->workspace);
  g_free (self->database);
  g_free (self->last_mode);
  g_free (self->snippet);
  g_free (self);
}

/**
 * tally_session_info_has_cost:
 * @self: a #TallySessionInfo
 *
 * Returns: %TRUE when @self->cost_usd is a known figure, %FALSE when the
 *   price of some turn was unknown (the cost is then NAN)
 */
gboolean
tally_session_info_has_cost (const TallySessionInfo *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return !isnan (self->cost_usd);
}
