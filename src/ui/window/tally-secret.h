/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <libsecret/secret.h>

G_BEGIN_DECLS

/**
 * TALLY_SECRET_SCHEMA_NAME:
 *
 * The libsecret schema name under which Tally keeps its secrets: the
 * Anthropic API key (attribute `service` = `anthropic`) and the passwords
 * of saved PostgreSQL connections (`service` = `postgresql`, `connection` =
 * the connection string without its password, `name` = the name the
 * analyst gave it).
 */
#define TALLY_SECRET_SCHEMA_NAME "io.github.tallyapp.Tally.ApiKey"

const SecretSchema *tally_secret_get_schema    (void);

void                tally_secret_lookup_async  (GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
char               *tally_secret_lookup_finish (GAsyncResult        *result,
                                                GError             **error);
void                tally_secret_store_async   (const char          *api_key,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
gboolean            tally_secret_store_finish  (GAsyncResult        *result,
                                                GError             **error);
void                tally_secret_clear_async   (GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
gboolean            tally_secret_clear_finish  (GAsyncResult        *result,
                                                GError             **error);
void                tally_secret_free          (char                *api_key);

void                tally_secret_store_pg_password_async  (const char          *name,
                                                           const char          *connection,
                                                           const char          *password,
                                                           GCancellable        *cancellable,
                                                           GAsyncReadyCallback  callback,
                                                           gpointer             user_data);
void                tally_secret_lookup_pg_password_async (const char          *connection,
                                                           GCancellable        *cancellable,
                                                           GAsyncReadyCallback  callback,
                                                           gpointer             user_data);
void                tally_secret_clear_pg_password_async  (const char          *connection,
                                                           GCancellable        *cancellable,
                                                           GAsyncReadyCallback  callback,
                                                           gpointer             user_data);

/*
 * For the UI tests only: while @keyring is set, the calls above keep
 * PostgreSQL passwords in it (connection → password, both strings) and the
 * API key under the name _tally_secret_get_test_key_slot() returns,
 * instead of libsecret, and count the PostgreSQL calls.
 */
void                _tally_secret_set_test_keyring        (GHashTable          *keyring);
guint               _tally_secret_get_n_pg_calls          (void);
const char         *_tally_secret_get_test_key_slot       (void);

G_END_DECLS
