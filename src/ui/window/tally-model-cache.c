/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-model-cache"

#include "config.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <json-glib/json-glib.h>

#include "tally-json.h"
#include "tally-model-cache.h"
#include "tally-model-table.h"

/*
 * The model picker's list. It comes, best first, from the API's answer to
 * `GET /v1/models` (fetched by the window at most once a day per base URL),
 * from that answer cached as JSON under the user cache folder (so the
 * picker is the same offline), or from the bundled model table. The cache
 * file is
 *
 *   { "base_url": "https://…", "fetched_us": 1700000000000000,
 *     "models": [ <ModelInfo objects exactly as the API sent them> ] }
 *
 * The list itself is a GtkStringList of model ids, ready for a GtkDropDown;
 * display names are looked up with tally_model_cache_get_display_name().
 */

/**
 * TallyModelCache:
 *
 * The model picker's list of model ids (a #GtkStringList) with their
 * display names, from `GET /v1/models` (cached on disk) or the bundled
 * model table.
 */
struct _TallyModelCache
{
  GObject        parent_instance;

  char          *path;
  GtkStringList *ids;
  GHashTable    *names;        /* id → display name */
  char          *base_url;     /* of the cached answer, or NULL */
  gint64         fetched_us;
  gboolean       from_api;
};

G_DEFINE_FINAL_TYPE (TallyModelCache, tally_model_cache, G_TYPE_OBJECT)

static void
tally_model_cache_finalize (GObject *object)
{
  TallyModelCache *self = (TallyModelCache *)object;

  g_clear_pointer (&self->path, g_free);
  g_clear_object (&self->ids);
  g_clear_pointer (&self->names, g_hash_table_unref);
  g_clear_pointer (&self->base_url, g_free);

  G_OBJECT_CLASS (tally_model_cache_parent_class)->finalize (object);
}

static void
tally_model_cache_class_init (TallyModelCacheClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tally_model_cache_finalize;
}

static void
tally_model_cache_init (TallyModelCache *self)
{
  self->ids = gtk_string_list_new (NULL);
  self->names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

/* Replaces the whole list; @entries holds id, name, id, name, … */
static void
replace_list (TallyModelCache *self,
              GPtrArray       *entries)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) ids = NULL;

  g_hash_table_remove_all (self->names);
  for (guint i = 0; i + 1 < entries->len; i += 2)
    {
      const char *id = g_ptr_array_index (entries, i);
      const char *name = g_ptr_array_index (entries, i + 1);

      if (g_hash_table_contains (self->names, id))
        continue;
      g_hash_table_insert (self->names, g_strdup (id), g_strdup (name));
      g_strv_builder_add (builder, id);
    }

  ids = g_strv_builder_end (builder);
  gtk_string_list_splice (self->ids, 0,
                          g_list_model_get_n_items (G_LIST_MODEL (self->ids)),
                          (const char * const *)ids);
}

static void
fill_from_table (TallyModelCache *self)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new ();

  for (guint i = 0; i < tally_model_table_get_n_models (); i++)
    {
      const TallyModelInfo *info = tally_model_table_get_model (i);

      g_ptr_array_add (entries, info->id);
      g_ptr_array_add (entries, info->display_name != NULL ? info->display_name : info->id);
    }

  replace_list (self, entries);
  self->from_api = FALSE;
}

/* Fills the list from an array of ModelInfo objects; returns FALSE (and
 * leaves the list alone) when the array holds no usable model. */
static gboolean
fill_from_models (TallyModelCache *self,
                  JsonArray       *models)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new ();

  for (guint i = 0; i < json_array_get_length (models); i++)
    {
      JsonNode *node = json_array_get_element (models, i);
      JsonObject *model;
      const char *id;
      const char *name;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      model = json_node_get_object (node);
      id = tally_json_object_get_string (model, "id", NULL);
      if (id == NULL || *id == '\0' || !g_utf8_validate (id, -1, NULL))
        continue;
      name = tally_json_object_get_string (model, "display_name", NULL);
      if (name == NULL || *name == '\0' || !g_utf8_validate (name, -1, NULL))
        {
          const TallyModelInfo *info = tally_model_table_lookup (id);
          name = info != NULL && info->display_name != NULL ? info->display_name : id;
        }
      g_ptr_array_add (entries, (gpointer)id);
      g_ptr_array_add (entries, (gpointer)name);
    }

  if (entries->len == 0)
    return FALSE;

  replace_list (self, entries);
  self->from_api = TRUE;
  return TRUE;
}

static gboolean
load_file (TallyModelCache  *self,
           GError          **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;
  JsonObject *object;
  JsonArray *models;

  if (!json_parser_load_from_mapped_file (parser, self->path, error))
    return FALSE;

  root = json_parser_get_root (parser);
  object = root != NULL && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  models = tally_json_object_get_array (object, "models");
  if (models == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("The model cache %s has no “models” array"), self->path);
      return FALSE;
    }

  if (!fill_from_models (self, models))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("The model cache %s lists no usable model"), self->path);
      return FALSE;
    }

  g_free (self->base_url);
  self->base_url = g_strdup (tally_json_object_get_string (object, "base_url", NULL));
  self->fetched_us = tally_json_object_get_int (object, "fetched_us", 0);
  return TRUE;
}

static gboolean
save_file (TallyModelCache  *self,
           const char       *base_url,
           gint64            fetched_us,
           JsonArray        *models,
           GError          **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *dir = g_path_get_dirname (self->path);
  g_autofree char *text = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "base_url");
  json_builder_add_string_value (builder, base_url);
  json_builder_set_member_name (builder, "fetched_us");
  json_builder_add_int_value (builder, fetched_us);
  json_builder_set_member_name (builder, "models");
  json_builder_add_value (builder, json_node_init_array (json_node_alloc (), models));
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, TRUE);
  text = json_generator_to_data (generator, NULL);

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved_errno = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   _("Cannot create the folder %s: %s"), dir, g_strerror (saved_errno));
      return FALSE;
    }

  return g_file_set_contents (self->path, text, -1, error);
}

/**
 * tally_model_cache_get_default_path:
 *
 * Returns: (transfer full): `$XDG_CACHE_HOME/tally/models.json`
 */
char *
tally_model_cache_get_default_path (void)
{
  return g_build_filename (g_get_user_cache_dir (), "tally", "models.json", NULL);
}

/**
 * tally_model_cache_new:
 * @path: (nullable): the cache file, or %NULL for
 *   tally_model_cache_get_default_path()
 *
 * Creates the list from the cache file when it holds a usable answer, else
 * from the bundled model table. A missing or damaged cache file is not an
 * error (it is replaced by the next successful fetch).
 *
 * Returns: (transfer full): a new #TallyModelCache
 */
TallyModelCache *
tally_model_cache_new (const char *path)
{
  TallyModelCache *self = g_object_new (TALLY_TYPE_MODEL_CACHE, NULL);
  g_autoptr(GError) error = NULL;

  self->path = path != NULL ? g_strdup (path) : tally_model_cache_get_default_path ();

  if (!load_file (self, &error))
    {
      if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_debug ("Not using the model cache: %s", error->message);
      fill_from_table (self);
    }

  return self;
}

/**
 * tally_model_cache_get_path:
 * @self: a #TallyModelCache
 *
 * Returns: (transfer none): the cache file's path
 */
const char *
tally_model_cache_get_path (TallyModelCache *self)
{
  g_return_val_if_fail (TALLY_IS_MODEL_CACHE (self), NULL);
  return self->path;
}

/**
 * tally_model_cache_get_models:
 * @self: a #TallyModelCache
 *
 * The list changes in place when a fetch replaces it (items-changed).
 *
 * Returns: (transfer none): a #GListModel of #GtkStringObject, one per model
 *   id, in the API's order (newest first) or the bundled table's
 */
GListModel *
tally_model_cache_get_models (TallyModelCache *self)
{
  g_return_val_if_fail (TALLY_IS_MODEL_CACHE (self), NULL);
  return G_LIST_MODEL (self->ids);
}

/**
 * tally_model_cache_get_display_name:
 * @self: a #TallyModelCache
 * @id: a model id
 *
 * Returns: (transfer none): the model's name for people ("Claude Sonnet 5"),
 *   or @id itself when neither the API nor the bundled table names it
 */
const char *
tally_model_cache_get_display_name (TallyModelCache *self,
                                    const char      *id)
{
  const char *name;
  const TallyModelInfo *info;

  g_return_val_if_fail (TALLY_IS_MODEL_CACHE (self), NULL);
  g_return_val_if_fail (id != NULL, NULL);

  name = g_hash_table_lookup (self->names, id);
  if (name != NULL)
    return name;

  info = tally_model_table_lookup (id);
  if (info != NULL && info->display_name != NULL)
    return info->display_name;

  return id;
}

/**
 * tally_model_cache_find:
 * @self: a #TallyModelCache
 * @id: a model id
 *
 * Returns: the position of @id in the list, or %GTK_INVALID_LIST_POSITION
 */
guint
tally_model_cache_find (TallyModelCache *self,
                        const char      *id)
{
  guint n;

  g_return_val_if_fail (TALLY_IS_MODEL_CACHE (self), GTK_INVALID_LIST_POSITION);

  if (id == NULL)
    return GTK_INVALID_LIST_POSITION;

  n = g_list_model_get_n_items (G_LIST_MODEL (self->ids));
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (gtk_string_list_get_string (self->ids, i), id) == 0)
      return i;

  return GTK_INVALID_LIST_POSITION;
}

/**
 * tally_model_cache_ensure:
 * @self: a #TallyModelCache
 * @id: a model id, such as the one a saved session used
 *
 * Makes sure @id is in the list (appending it when it is not), so a picker
 * can show a session's model even when the API no longer lists it.
 *
 * Returns: the position of @id in the list
 */
guint
tally_model_cache_ensure (TallyModelCache *self,
                          const char      *id)
{
  guint position;

  g_return_val_if_fail (TALLY_IS_MODEL_CACHE (self), GTK_INVALID_LIST_POSITION);
  g_return_val_if_fail (id != NULL && *id != '\0', GTK_INVALID_LIST_POSITION);

  position = tally_model_cache_find (self, id);
  if (position != GTK_INVALID_LIST_POSITION)
    return position;

  g_hash_table_insert (self->names, g_strdup (id),
                       g_strdup (tally_model_cache_get_display_name (self, id)));
  gtk_string_list_append (self->ids, id);
  return g_list_model_get_n_items (G_LIST_MODEL (self->ids)) - 1;
}

/**
 * tally_model_cache_get_id:
 * @self: a #TallyModelCache
 * @position: a position in the list
 *
 * Returns: (transfer none) (nullable): the model id at @position, or %NULL
 *   past the end
 */
const char *
tally_model_cache_get_id (TallyModelCache *self,
                          guint            position)
{
  g_return_val_if_fail (TALLY_IS_MODEL_CACHE (self), NULL);
  return gtk_string_list_get_string (self->ids, position);
}

/**
 * tally_model_cache_is_fresh:
 * @self: a #TallyModelCache
 * @base_url: the API origin the window talks to
 *
 * Returns: %TRUE when the list came from @base_url's `GET /v1/models` less
 *   than %TALLY_MODEL_CACHE_MAX_AGE_US ago, so there is no need to ask again
 */
gboolean
tally_model_cache_is_fresh (TallyModelCache *self,
                            const char      *base_url)
{
  gint64 age;

  g_return_val_if_fail (TALLY_IS_MODEL_CACHE (self), FALSE);

  if (!self->from_api || g_strcmp0 (self->base_url, base_url) != 0)
    return FALSE;

  age = g_get_real_time () - self->fetched_us;
  return age >= 0 && age < TALLY_MODEL_CACHE_MAX_AGE_US;
}

/**
 * tally_model_cache_is_from_api:
 * @self: a #TallyModelCache
 *
 * Returns: %TRUE when the list is an API answer (fetched now or cached),
 *   %FALSE when it is the bundled table
 */
gboolean
tally_model_cache_is_from_api (TallyModelCache *self)
{
  g_return_val_if_fail (TALLY_IS_MODEL_CACHE (self), FALSE);
  return self->from_api;
}

static void
list_models_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TallyModelCache *self = g_task_get_source_object (task);
  TallyClient *client = TALLY_CLIENT (object);
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) save_error = NULL;
  GError *error = NULL;
  JsonArray *models = NULL;
  gint64 now = g_get_real_time ();

  g_assert (TALLY_IS_MODEL_CACHE (self));
  g_assert (TALLY_IS_CLIENT (client));

  root = tally_client_list_models_finish (client, result, &error);
  if (root == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  if (JSON_NODE_HOLDS_OBJECT (root))
    models = tally_json_object_get_array (json_node_get_object (root), "data");

  if (models == NULL || !fill_from_models (self, models))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                               _("The API's model list names no model"));
      return;
    }

  g_free (self->base_url);
  self->base_url = g_strdup (tally_client_get_base_url (client));
  self->fetched_us = now;

  /* A cache that cannot be written costs only the next fetch. */
  if (!save_file (self, self->base_url, now, models, &save_error))
    g_warning ("Could not cache the model list: %s", save_error->message);

  g_task_return_boolean (task, TRUE);
}

/**
 * tally_model_cache_refresh_async:
 * @self: a #TallyModelCache
 * @client: the client to ask (`GET /v1/models`)
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the list has been replaced or the request failed
 * @user_data: data for @callback
 *
 * Fetches the model list, replaces the list with it and writes the cache
 * file. On failure the list is left as it was.
 */
void
tally_model_cache_refresh_async (TallyModelCache     *self,
                                 TallyClient         *client,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (TALLY_IS_MODEL_CACHE (self));
  g_return_if_fail (TALLY_IS_CLIENT (client));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_model_cache_refresh_async);
  tally_client_list_models_async (client, cancellable, list_models_cb, task);
}

static void
factory_setup_cb (GtkSignalListItemFactory *factory,
                  GtkListItem              *item,
                  gpointer                  user_data)
{
  gboolean with_ids = GPOINTER_TO_INT (user_data);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *name = gtk_label_new (NULL);

  g_assert (GTK_IS_LIST_ITEM (item));

  gtk_label_set_xalign (GTK_LABEL (name), 0);
  gtk_box_append (GTK_BOX (box), name);
  /* On the button, level with the other pickers' labels. */
  gtk_widget_set_valign (box, GTK_ALIGN_CENTER);
  if (with_ids)
    {
      GtkWidget *id = gtk_label_new (NULL);

      gtk_label_set_xalign (GTK_LABEL (id), 0);
      gtk_widget_add_css_class (id, "caption");
      gtk_widget_add_css_class (id, "dim-label");
      gtk_box_append (GTK_BOX (box), id);
    }
  /* The button's name is not ellipsized: in a crowded header bar an
   * ellipsizing label is given its minimum, a lone "…". */
  gtk_list_item_set_child (item, box);
}

static void
factory_bind_cb (GtkSignalListItemFactory *factory,
                 GtkListItem              *item,
                 TallyModelCache          *self)
{
  const char *id = gtk_string_object_get_string (gtk_list_item_get_item (item));
  const char *display = tally_model_cache_get_display_name (self, id);
  GtkWidget *name = gtk_widget_get_first_child (gtk_list_item_get_child (item));
  GtkWidget *id_label = gtk_widget_get_next_sibling (name);

  g_assert (TALLY_IS_MODEL_CACHE (self));

  gtk_label_set_label (GTK_LABEL (name), display);
  if (id_label != NULL)
    {
      gtk_label_set_label (GTK_LABEL (id_label), id);
      gtk_widget_set_visible (id_label, g_strcmp0 (display, id) != 0);
    }
}

/**
 * tally_model_cache_create_factory:
 * @self: a #TallyModelCache
 * @with_ids: whether each row shows the model id under its name (in
 *   small type, only when the two differ): for a picker's list; without,
 *   the name alone, for the picker's button
 *
 * Makes the rows of a model picker (a #GtkDropDown or #AdwComboRow over
 * tally_model_cache_get_models()) showing display names from @self.
 *
 * Returns: (transfer full): a new list item factory, which holds no
 *   reference on @self (keep @self alive while the factory is in use)
 */
GtkListItemFactory *
tally_model_cache_create_factory (TallyModelCache *self,
                                  gboolean         with_ids)
{
  GtkListItemFactory *factory;

  g_return_val_if_fail (TALLY_IS_MODEL_CACHE (self), NULL);

  factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (factory_setup_cb), GINT_TO_POINTER (with_ids));
  g_signal_connect_object (factory, "bind", G_CALLBACK (factory_bind_cb), self, 0);
  return factory;
}

/**
 * tally_model_cache_refresh_finish:
 * @self: a #TallyModelCache
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Errors: those of tally_client_list_models_finish() (%TALLY_API_ERROR,
 * %G_IO_ERROR_CANCELLED), or %G_IO_ERROR_INVALID_DATA when the answer
 * names no model.
 *
 * Returns: %TRUE when the list was replaced by the API's answer
 */
gboolean
tally_model_cache_refresh_finish (TallyModelCache  *self,
                                  GAsyncResult     *result,
                                  GError          **error)
{
  g_return_val_if_fail (TALLY_IS_MODEL_CACHE (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_model_cache_refresh_async, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
