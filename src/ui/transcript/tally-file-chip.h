/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <gtk/gtk.h>

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_FILE_CHIP (tally_file_chip_get_type ())

G_DECLARE_FINAL_TYPE (TallyFileChip, tally_file_chip, TALLY, FILE_CHIP, TallyBlockWidget)

GtkWidget  *tally_file_chip_new                (void);
GFile      *tally_file_chip_dup_file           (TallyFileChip *self);
const char *tally_file_chip_get_name           (TallyFileChip *self);
const char *tally_file_chip_get_detail         (TallyFileChip *self);
gboolean    tally_file_chip_get_deleted        (TallyFileChip *self);
gboolean    tally_file_chip_refresh            (TallyFileChip *self);

void        tally_file_chip_open_with_system   (GtkWidget     *owner,
                                                GFile         *file);
void        tally_file_chip_show_in_folder     (GtkWidget     *owner,
                                                GFile         *file);

G_END_DECLS
