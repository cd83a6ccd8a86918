/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The window's model picker (docs/architecture.md §11.1): the drop-down
 * over the application's TallyModelCache, which keeps the analyst's choice
 * while a fetched list replaces the cached one, and the fetch itself,
 * started when a key, a connection and a stale list come together. */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include "tally-application-private.h"
#include "tally-model-cache.h"
#include "tally-model-table.h"
#include "tally-window-private.h"

/* Selects @model in the picker (the default model for %NULL or ""),
 * adding it to the list when the list does not have it. */
void
_tally_window_select_model (TallyWindow *self,
                            const char  *model)
{
  TallyModelCache *cache = tally_application_get_model_cache (self->app);
  guint position;

  if (model == NULL || *model == '\0')
    model = tally_model_table_get_default ();

  if (model != self->model)
    {
      g_free (self->model);
      self->model = g_strdup (model);
    }

  self->updating_model = TRUE;
  position = tally_model_cache_ensure (cache, model);
  gtk_drop_down_set_selected (self->model_dropdown, position);
  self->updating_model = FALSE;
}

static void
model_selected_cb (TallyWindow *self)
{
  TallyModelCache *cache = tally_application_get_model_cache (self->app);
  guint position = gtk_drop_down_get_selected (self->model_dropdown);
  const char *id;

  g_assert (TALLY_IS_WINDOW (self));

  if (self->updating_model || position == GTK_INVALID_LIST_POSITION)
    return;

  id = tally_model_cache_get_id (cache, position);
  if (id == NULL)
    return;

  g_free (self->model);
  self->model = g_strdup (id);
  if (self->session != NULL && self->busy_session == NULL)
    tally_agent_set_model (tally_session_get_agent (self->session), id);
}

/* The list is replaced in place when a fetch lands; keep the choice. */
static void
models_changing_cb (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  self->updating_model = TRUE;
}

static void
models_changed_cb (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  self->updating_model = FALSE;
  _tally_window_select_model (self, self->model);
}

static void
refresh_models_cb (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(TallyWindow) self = user_data;
  g_autoptr(GError) error = NULL;

  g_assert (TALLY_IS_WINDOW (self));
  g_assert (TALLY_IS_MODEL_CACHE (object));

  self->fetching_models = FALSE;

  /* The picker keeps the cached or bundled list; no need to interrupt the
   * analyst about it. */
  if (!tally_model_cache_refresh_finish (TALLY_MODEL_CACHE (object), result, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_debug ("Could not fetch the model list: %s", error->message);
}

void
_tally_window_maybe_fetch_models (TallyWindow *self)
{
  TallyModelCache *cache = tally_application_get_model_cache (self->app);

  if (self->fetching_models ||
      !tally_application_has_api_key (self->app) ||
      !tally_application_get_online (self->app) ||
      tally_model_cache_is_fresh (cache, tally_application_get_base_url (self->app)))
    return;

  self->fetching_models = TRUE;
  tally_model_cache_refresh_async (cache, tally_application_get_client (self->app),
                                   self->cancellable, refresh_models_cb, g_object_ref (self));
}

/* Connects the picker to the model list and the list to the picker; the
 * caller has set the drop-down's factories. Connected before the
 * drop-down sees the list, so a fetched list replacing the old one keeps
 * the choice. */
void
_tally_window_connect_model_picker (TallyWindow *self)
{
  TallyModelCache *cache = tally_application_get_model_cache (self->app);

  g_signal_connect_object (tally_model_cache_get_models (cache), "items-changed",
                           G_CALLBACK (models_changing_cb), self, G_CONNECT_SWAPPED);
  gtk_drop_down_set_model (self->model_dropdown, tally_model_cache_get_models (cache));
  g_signal_connect_object (tally_model_cache_get_models (cache), "items-changed",
                           G_CALLBACK (models_changed_cb), self, G_CONNECT_SWAPPED | G_CONNECT_AFTER);
  g_signal_connect_object (self->model_dropdown, "notify::selected",
                           G_CALLBACK (model_selected_cb), self, G_CONNECT_SWAPPED);
}
