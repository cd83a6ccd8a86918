/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-client.h"

G_BEGIN_DECLS

/**
 * TALLY_MODEL_CACHE_MAX_AGE_US:
 *
 * How long a fetched model list counts as fresh, in microseconds (one day).
 * A fresh list for the same base URL is not fetched again.
 */
#define TALLY_MODEL_CACHE_MAX_AGE_US (G_GINT64_CONSTANT (24) * 60 * 60 * G_USEC_PER_SEC)

#define TALLY_TYPE_MODEL_CACHE (tally_model_cache_get_type ())

G_DECLARE_FINAL_TYPE (TallyModelCache, tally_model_cache, TALLY, MODEL_CACHE, GObject)

char            *tally_model_cache_get_default_path (void);
TallyModelCache *tally_model_cache_new              (const char          *path);
const char      *tally_model_cache_get_path         (TallyModelCache     *self);
GListModel      *tally_model_cache_get_models       (TallyModelCache     *self);
const char      *tally_model_cache_get_display_name (TallyModelCache     *self,
                                                     const char          *id);
guint            tally_model_cache_find             (TallyModelCache     *self,
                                                     const char          *id);
guint            tally_model_cache_ensure           (TallyModelCache     *self,
                                                     const char          *id);
const char      *tally_model_cache_get_id           (TallyModelCache     *self,
                                                     guint                position);
gboolean         tally_model_cache_is_fresh         (TallyModelCache     *self,
                                                     const char          *base_url);
gboolean         tally_model_cache_is_from_api      (TallyModelCache     *self);
GtkListItemFactory *tally_model_cache_create_factory (TallyModelCache     *self,
                                                     gboolean             with_ids);
void             tally_model_cache_refresh_async    (TallyModelCache     *self,
                                                     TallyClient         *client,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
gboolean         tally_model_cache_refresh_finish   (TallyModelCache     *self,
                                                     GAsyncResult        *result,
                                                     GError             **error);

G_END_DECLS
