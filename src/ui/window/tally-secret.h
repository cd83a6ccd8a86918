/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <libsecret/secret.h>

G_BEGIN_DECLS

/**
 * TALLY_SECRET_SCHEMA_NAME:
 *
 * The libsecret schema name under which Tally keeps the Anthropic API key.
 * The item carries one attribute, `service` = `anthropic`.
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

G_END_DECLS
