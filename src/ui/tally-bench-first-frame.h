/* SPDX-License-Identifier: GPL-3.0-or-later */

#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

gboolean tally_bench_first_frame_watch (GtkApplication *app,
                                        gint64          process_start_us);
void     tally_bench_first_frame_mark  (const char     *step);

G_END_DECLS
