/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TALLY_TYPE_DATA_IMPORT_BAR (tally_data_import_bar_get_type ())

G_DECLARE_FINAL_TYPE (TallyDataImportBar, tally_data_import_bar, TALLY, DATA_IMPORT_BAR, GtkWidget)

GtkWidget *tally_data_import_bar_new          (void);
void       tally_data_import_bar_set_title    (TallyDataImportBar *self,
                                               const char         *title);
const char *tally_data_import_bar_get_title   (TallyDataImportBar *self);
void       tally_data_import_bar_set_progress (TallyDataImportBar *self,
                                               guint64             done,
                                               guint64             total);
double     tally_data_import_bar_get_fraction (TallyDataImportBar *self);

G_END_DECLS
