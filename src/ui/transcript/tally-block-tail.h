/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define TALLY_TYPE_BLOCK_TAIL (tally_block_tail_get_type ())

G_DECLARE_FINAL_TYPE (TallyBlockTail, tally_block_tail, TALLY, BLOCK_TAIL, GObject)

TallyBlockTail *tally_block_tail_new        (GListModel     *source,
                                             guint           shown);
GListModel     *tally_block_tail_get_source (TallyBlockTail *self);
guint           tally_block_tail_get_hidden (TallyBlockTail *self);
guint           tally_block_tail_grow       (TallyBlockTail *self,
                                             guint           count);

G_END_DECLS
