/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-block-widget.h"

G_BEGIN_DECLS

#define TALLY_TYPE_ERROR_BANNER (tally_error_banner_get_type ())

G_DECLARE_FINAL_TYPE (TallyErrorBanner, tally_error_banner, TALLY, ERROR_BANNER, TallyBlockWidget)

GtkWidget  *tally_error_banner_new          (void);
const char *tally_error_banner_get_message  (TallyErrorBanner *self);
const char *tally_error_banner_get_meta     (TallyErrorBanner *self);
const char *tally_error_banner_get_details  (TallyErrorBanner *self);
GtkButton  *tally_error_banner_get_retry_button (TallyErrorBanner *self);
GtkButton  *tally_error_banner_get_action_button (TallyErrorBanner *self);

G_END_DECLS
