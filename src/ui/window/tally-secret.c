/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-secret"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-secret.h"

/*
 * The API key lives in the user's keyring through libsecret: the Secret
 * Service on a desktop session, the Secret portal inside Flatpak (libsecret
 * ≥ 0.20 picks it up by itself). The key never touches SQLite, GSettings or
 * the log. These helpers wrap libsecret's password calls in GTasks of their
 * own so callers get the usual source-tag checks, and hand the key out in
 * memory that tally_secret_free() wipes.
 */

#define SERVICE_ATTRIBUTE "anthropic"

/**
 * tally_secret_get_schema:
 *
 * The schema of the stored key: name %TALLY_SECRET_SCHEMA_NAME, one string
 * attribute `service`.
 *
 * Returns: (transfer none): the schema, valid for the life of the process
 */
const SecretSchema *
tally_secret_get_schema (void)
{
  static const SecretSchema schema = {
    TALLY_SECRET_SCHEMA_NAME, SECRET_SCHEMA_NONE,
    {
      { "service", SECRET_SCHEMA_ATTRIBUTE_STRING },
      { NULL, 0 },
    },
    0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  };

  return &schema;
}

/**
 * tally_secret_free:
 * @api_key: (nullable) (transfer full): a key from tally_secret_lookup_finish()
 *   or any other string holding a key
 *
 * Overwrites the key's bytes and frees it.
 */
void
tally_secret_free (char *api_key)
{
  if (api_key != NULL)
    secret_password_free (api_key);
}

static void
lookup_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  char *key;

  g_assert (G_IS_TASK (task));
  g_assert (G_IS_ASYNC_RESULT (result));

  key = secret_password_lookup_finish (result, &error);
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, key, (GDestroyNotify)tally_secret_free);
}

/**
 * tally_secret_lookup_async:
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the keyring has answered
 * @user_data: data for @callback
 *
 * Looks the API key up in the keyring (the Secret portal under Flatpak).
 */
void
tally_secret_lookup_async (GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, tally_secret_lookup_async);
  secret_password_lookup (tally_secret_get_schema (), cancellable, lookup_cb, task,
                          "service", SERVICE_ATTRIBUTE,
                          NULL);
}

/**
 * tally_secret_lookup_finish:
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Errors come from libsecret and D-Bus: typically %G_DBUS_ERROR or
 * %G_IO_ERROR when no keyring (Secret Service or portal) is reachable,
 * %G_IO_ERROR_CANCELLED when cancelled.
 *
 * Returns: (transfer full) (nullable): the key, to free with
 *   tally_secret_free(); %NULL without @error when no key is stored
 */
char *
tally_secret_lookup_finish (GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_async_result_is_tagged (result, tally_secret_lookup_async), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* The answer to a store or a clear: both only fail with an error.
 * secret_password_clear_finish() returns %FALSE without one when there was
 * nothing to remove; that is success here. */
static void
done_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;

  g_assert (G_IS_TASK (task));
  g_assert (G_IS_ASYNC_RESULT (result));

  if (g_task_get_source_tag (task) == tally_secret_store_async)
    secret_password_store_finish (result, &error);
  else
    secret_password_clear_finish (result, &error);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/**
 * tally_secret_store_async:
 * @api_key: the key to keep (not empty)
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the keyring has answered
 * @user_data: data for @callback
 *
 * Stores @api_key in the default keyring collection, replacing any key
 * stored before.
 */
void
tally_secret_store_async (const char          *api_key,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (api_key != NULL && *api_key != '\0');

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_secret_store_async);
  secret_password_store (tally_secret_get_schema (), SECRET_COLLECTION_DEFAULT,
                         _("Anthropic API key for Tally"), api_key,
                         cancellable, done_cb, task,
                         "service", SERVICE_ATTRIBUTE,
                         NULL);
}

/**
 * tally_secret_store_finish:
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Errors: as tally_secret_lookup_finish(); the caller should then keep the
 * key in memory only and say so.
 *
 * Returns: %TRUE when the keyring holds the key
 */
gboolean
tally_secret_store_finish (GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (g_async_result_is_tagged (result, tally_secret_store_async), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * tally_secret_clear_async:
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the keyring has answered
 * @user_data: data for @callback
 *
 * Removes the stored key from the keyring.
 */
void
tally_secret_clear_async (GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, tally_secret_clear_async);
  secret_password_clear (tally_secret_get_schema (), cancellable, done_cb, task,
                         "service", SERVICE_ATTRIBUTE,
                         NULL);
}

/**
 * tally_secret_clear_finish:
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Errors: as tally_secret_lookup_finish().
 *
 * Returns: %TRUE when no key is stored any more (also when none was)
 */
gboolean
tally_secret_clear_finish (GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (g_async_result_is_tagged (result, tally_secret_clear_async), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
