/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block.h"

G_BEGIN_DECLS

typedef struct _TallyBlockRowPool TallyBlockRowPool;

TallyBlockRowPool *tally_block_row_pool_new   (void);
TallyBlockRowPool *tally_block_row_pool_ref   (TallyBlockRowPool *pool);
void               tally_block_row_pool_unref (TallyBlockRowPool *pool);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyBlockRowPool, tally_block_row_pool_unref)

#define TALLY_TYPE_BLOCK_ROW (tally_block_row_get_type ())

G_DECLARE_FINAL_TYPE (TallyBlockRow, tally_block_row, TALLY, BLOCK_ROW, GtkWidget)

GtkWidget  *tally_block_row_new        (void);
TallyBlock *tally_block_row_get_block  (TallyBlockRow *self);
void        tally_block_row_set_block  (TallyBlockRow *self,
                                        TallyBlock    *block);
GtkWidget  *tally_block_row_get_child  (TallyBlockRow *self);
void        tally_block_row_set_pool   (TallyBlockRow     *self,
                                        TallyBlockRowPool *pool);
void        tally_block_row_set_context (TallyBlockRow *self,
                                         GListModel    *transcript,
                                         const char    *workspace);

G_END_DECLS
