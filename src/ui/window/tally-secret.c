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
#define PG_SERVICE_ATTRIBUTE "postgresql"

/* The test double of the UI tests: connection → password, and the API
 * key under a name no connection string has. */
#define TEST_API_KEY_SLOT "\001anthropic-api-key"
static GHashTable *test_keyring;
static guint n_pg_calls;

/**
 * tally_secret_get_schema:
 *
 * The schema of Tally's secrets: name %TALLY_SECRET_SCHEMA_NAME, the string
 * attributes `service` (`anthropic` or `postgresql`), and for a PostgreSQL
 * password `connection` and `name`.
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
      { "connection", SECRET_SCHEMA_ATTRIBUTE_STRING },
      { "name", SECRET_SCHEMA_ATTRIBUTE_STRING },
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

/* The answer to a store or a clear: both only fail with an error.
 * secret_password_clear_finish() returns %FALSE without one when there was
 * nothing to remove; that is success here. */
static void
done_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  gpointer tag = g_task_get_source_tag (task);
  GError *error = NULL;

  g_assert (G_IS_TASK (task));
  g_assert (G_IS_ASYNC_RESULT (result));

  if (tag == tally_secret_store_async || tag == tally_secret_store_pg_password_async)
    secret_password_store_finish (result, &error);
  else
    secret_password_clear_finish (result, &error);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/* One item's attributes: the API key's (@connection %NULL), or a
 * PostgreSQL password's. The strings are borrowed. */
static GHashTable *
new_attributes (const char *connection,
                const char *name)
{
  GHashTable *attributes = g_hash_table_new (g_str_hash, g_str_equal);

  g_hash_table_insert (attributes, (gpointer)"service",
                       (gpointer)(connection != NULL ? PG_SERVICE_ATTRIBUTE : SERVICE_ATTRIBUTE));
  if (connection != NULL)
    g_hash_table_insert (attributes, (gpointer)"connection", (gpointer)connection);
  if (name != NULL)
    g_hash_table_insert (attributes, (gpointer)"name", (gpointer)name);
  return attributes;
}

/* A request to the keyring, for the API key (@connection %NULL) or a
 * PostgreSQL password. The strings are borrowed; @name, @label and @secret
 * are only for %OP_STORE. */
typedef enum
{
  OP_LOOKUP,
  OP_STORE,
  OP_CLEAR,
} Op;

typedef struct
{
  Op          op;
  const char *connection;
  const char *name;
  const char *label;
  const char *secret;
} Request;

/* While the tests' keyring is set, the key and the PostgreSQL passwords
 * live in it instead. Returns @task's result and drops it. */
static void
answer_from_test_keyring (GTask         *task,
                          const Request *request)
{
  const char *slot = request->connection != NULL ? request->connection : TEST_API_KEY_SLOT;

  switch (request->op)
    {
    case OP_LOOKUP:
      g_task_return_pointer (task, g_strdup (g_hash_table_lookup (test_keyring, slot)),
                             (GDestroyNotify)tally_secret_free);
      break;

    case OP_STORE:
      g_hash_table_replace (test_keyring, g_strdup (slot), g_strdup (request->secret));
      g_task_return_boolean (task, TRUE);
      break;

    case OP_CLEAR:
      g_hash_table_remove (test_keyring, slot);
      g_task_return_boolean (task, TRUE);
      break;
    }
  g_object_unref (task);
}

/* The one path of the public calls below; @tag is the public function's. */
static void
send_request (gpointer             tag,
              const Request       *request,
              GCancellable        *cancellable,
              GAsyncReadyCallback  callback,
              gpointer             user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(GHashTable) attributes = NULL;

  g_task_set_source_tag (task, tag);
  if (request->connection != NULL)
    n_pg_calls++;
  if (test_keyring != NULL)
    {
      answer_from_test_keyring (task, request);
      return;
    }

  attributes = new_attributes (request->connection, request->name);
  switch (request->op)
    {
    case OP_LOOKUP:
      secret_password_lookupv (tally_secret_get_schema (), attributes, cancellable, lookup_cb, task);
      break;

    case OP_STORE:
      secret_password_storev (tally_secret_get_schema (), attributes, SECRET_COLLECTION_DEFAULT,
                              request->label, request->secret, cancellable, done_cb, task);
      break;

    case OP_CLEAR:
      secret_password_clearv (tally_secret_get_schema (), attributes, cancellable, done_cb, task);
      break;
    }
}

/* The API key {{{1 */

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
  send_request (tally_secret_lookup_async, &(Request) { .op = OP_LOOKUP },
                cancellable, callback, user_data);
}

/**
 * tally_secret_lookup_finish:
 * @result: the result given to the callback of tally_secret_lookup_async()
 *   or tally_secret_lookup_pg_password_async()
 * @error: return location for a #GError
 *
 * Errors come from libsecret and D-Bus: typically %G_DBUS_ERROR or
 * %G_IO_ERROR when no keyring (Secret Service or portal) is reachable,
 * %G_IO_ERROR_CANCELLED when cancelled.
 *
 * Returns: (transfer full) (nullable): the key or password, to free with
 *   tally_secret_free(); %NULL without @error when none is stored
 */
char *
tally_secret_lookup_finish (GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_async_result_is_tagged (result, tally_secret_lookup_async) ||
                        g_async_result_is_tagged (result, tally_secret_lookup_pg_password_async), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
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
  g_return_if_fail (api_key != NULL && *api_key != '\0');

  send_request (tally_secret_store_async,
                &(Request) { .op = OP_STORE, .label = _("Anthropic API key for Tally"), .secret = api_key },
                cancellable, callback, user_data);
}

/**
 * tally_secret_store_finish:
 * @result: the result given to the callback of tally_secret_store_async()
 *   or tally_secret_store_pg_password_async()
 * @error: return location for a #GError
 *
 * Errors: as tally_secret_lookup_finish(); the caller should then keep the
 * key or password in memory only and say so.
 *
 * Returns: %TRUE when the keyring holds the key or password
 */
gboolean
tally_secret_store_finish (GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (g_async_result_is_tagged (result, tally_secret_store_async) ||
                        g_async_result_is_tagged (result, tally_secret_store_pg_password_async), FALSE);

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
  send_request (tally_secret_clear_async, &(Request) { .op = OP_CLEAR },
                cancellable, callback, user_data);
}

/**
 * tally_secret_clear_finish:
 * @result: the result given to the callback of tally_secret_clear_async()
 *   or tally_secret_clear_pg_password_async()
 * @error: return location for a #GError
 *
 * Errors: as tally_secret_lookup_finish().
 *
 * Returns: %TRUE when nothing is stored any more (also when nothing was)
 */
gboolean
tally_secret_clear_finish (GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (g_async_result_is_tagged (result, tally_secret_clear_async) ||
                        g_async_result_is_tagged (result, tally_secret_clear_pg_password_async), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/* PostgreSQL passwords (docs/postgresql.md, "Flatpak") {{{1 */

/**
 * tally_secret_store_pg_password_async:
 * @name: the name the analyst gave the connection (in the item's label)
 * @connection: the connection string without its password
 *   (tally_pg_conninfo_redact()), the key the password is found by
 * @password: the password (not empty)
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the keyring has answered; finish with
 *   tally_secret_store_finish()
 * @user_data: data for @callback
 *
 * Stores the password of a saved PostgreSQL connection in the default
 * keyring collection (the Secret portal under Flatpak), replacing the one
 * stored before for @connection.
 */
void
tally_secret_store_pg_password_async (const char          *name,
                                      const char          *connection,
                                      const char          *password,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data)
{
  g_autofree char *label = NULL;

  g_return_if_fail (name != NULL);
  g_return_if_fail (connection != NULL);
  g_return_if_fail (password != NULL && *password != '\0');

  /* TRANSLATORS: the keyring's label of a password; %s is the name of a
   * saved PostgreSQL connection */
  label = g_strdup_printf (_("PostgreSQL password of “%s” for Tally"), name);
  send_request (tally_secret_store_pg_password_async,
                &(Request) { .op = OP_STORE, .connection = connection, .name = name,
                             .label = label, .secret = password },
                cancellable, callback, user_data);
}

/**
 * tally_secret_lookup_pg_password_async:
 * @connection: the connection string without its password, as stored
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the keyring has answered; finish with
 *   tally_secret_lookup_finish()
 * @user_data: data for @callback
 *
 * Looks up the password of a saved PostgreSQL connection.
 */
void
tally_secret_lookup_pg_password_async (const char          *connection,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  g_return_if_fail (connection != NULL);

  send_request (tally_secret_lookup_pg_password_async,
                &(Request) { .op = OP_LOOKUP, .connection = connection },
                cancellable, callback, user_data);
}

/**
 * tally_secret_clear_pg_password_async:
 * @connection: the connection string without its password, as stored
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the keyring has answered; finish with
 *   tally_secret_clear_finish()
 * @user_data: data for @callback
 *
 * Removes the password of a saved PostgreSQL connection.
 */
void
tally_secret_clear_pg_password_async (const char          *connection,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data)
{
  g_return_if_fail (connection != NULL);

  send_request (tally_secret_clear_pg_password_async,
                &(Request) { .op = OP_CLEAR, .connection = connection },
                cancellable, callback, user_data);
}

/* For tests {{{1 */

/**
 * _tally_secret_set_test_keyring:
 * @keyring: (nullable) (transfer none): a table of strings (connection →
 *   password) that stands in for the keyring, or %NULL for libsecret again
 *
 * For the UI tests only: the PostgreSQL password calls use @keyring, which
 * the caller keeps alive while it is set. Resets the call count.
 */
void
_tally_secret_set_test_keyring (GHashTable *keyring)
{
  test_keyring = keyring;
  n_pg_calls = 0;
}

/**
 * _tally_secret_get_n_pg_calls:
 *
 * Returns: how many PostgreSQL password calls (store, lookup, clear) were
 *   made since _tally_secret_set_test_keyring()
 */
guint
_tally_secret_get_n_pg_calls (void)
{
  return n_pg_calls;
}

/**
 * _tally_secret_get_test_key_slot:
 *
 * Returns: (transfer none): the name under which the tests' keyring keeps
 *   the API key
 */
const char *
_tally_secret_get_test_key_slot (void)
{
  return TEST_API_KEY_SLOT;
}
