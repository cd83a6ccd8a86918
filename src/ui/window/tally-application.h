/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "tally-client.h"
#include "tally-model-cache.h"
#include "tally-store.h"
#include "tally-tool-registry.h"

G_BEGIN_DECLS

/**
 * TallyApiKeySource:
 * @TALLY_API_KEY_SOURCE_NONE: no key yet (first launch, or removed)
 * @TALLY_API_KEY_SOURCE_LOOKING_UP: the keyring is being asked (from the
 *   first frame of the first window on; nothing is sent meanwhile)
 * @TALLY_API_KEY_SOURCE_ENVIRONMENT: `ANTHROPIC_API_KEY` is set; it
 *   overrides everything and cannot be changed from the window
 * @TALLY_API_KEY_SOURCE_KEYRING: the key is stored in the keyring (the
 *   Secret Service, or the Secret portal under Flatpak)
 * @TALLY_API_KEY_SOURCE_MEMORY: no keyring could be reached; the key is
 *   kept in memory for this run only and never written anywhere
 *
 * Where the application's API key comes from (docs/architecture.md §10.6).
 */
typedef enum {
  TALLY_API_KEY_SOURCE_NONE,
  TALLY_API_KEY_SOURCE_LOOKING_UP,
  TALLY_API_KEY_SOURCE_ENVIRONMENT,
  TALLY_API_KEY_SOURCE_KEYRING,
  TALLY_API_KEY_SOURCE_MEMORY,
} TallyApiKeySource;

#define TALLY_TYPE_API_KEY_SOURCE (tally_api_key_source_get_type ())
GType tally_api_key_source_get_type (void);

/**
 * TALLY_SETTINGS_SCHEMA_ID:
 *
 * The GSettings schema of the application (`data/io.github.tallyapp.Tally.gschema.xml`);
 * the same for the `.Devel` build.
 */
#define TALLY_SETTINGS_SCHEMA_ID "io.github.tallyapp.Tally"

#define TALLY_TYPE_APPLICATION (tally_application_get_type ())

G_DECLARE_FINAL_TYPE (TallyApplication, tally_application, TALLY, APPLICATION, AdwApplication)

TallyApplication  *tally_application_new                  (void);
GSettingsSchema   *tally_application_lookup_settings_schema (GError            **error);
GSettings         *tally_application_get_settings         (TallyApplication    *self);
TallyStore        *tally_application_get_store            (TallyApplication    *self);
const char        *tally_application_get_store_problem    (TallyApplication    *self);
const char        *tally_application_get_damaged_store    (TallyApplication    *self);
TallyToolRegistry *tally_application_get_tools            (TallyApplication    *self);
TallyModelCache   *tally_application_get_model_cache      (TallyApplication    *self);
TallyClient       *tally_application_get_client           (TallyApplication    *self);
const char        *tally_application_get_base_url         (TallyApplication    *self);
gboolean           tally_application_get_base_url_locked  (TallyApplication    *self);
TallyApiKeySource  tally_application_get_api_key_source   (TallyApplication    *self);
gboolean           tally_application_has_api_key          (TallyApplication    *self);
char              *tally_application_dup_api_key_hint     (TallyApplication    *self);
void               tally_application_set_environment_api_key (TallyApplication *self,
                                                            const char       *api_key);
gboolean           tally_application_get_online           (TallyApplication    *self);
const char        *tally_application_get_default_database (void);
char              *tally_application_dup_workspace_for    (const char          *session_id);
void               tally_application_set_api_key_async    (TallyApplication    *self,
                                                           const char          *api_key,
                                                           GCancellable        *cancellable,
                                                           GAsyncReadyCallback  callback,
                                                           gpointer             user_data);
TallyApiKeySource  tally_application_set_api_key_finish   (TallyApplication    *self,
                                                           GAsyncResult        *result,
                                                           GError             **error);
void               tally_application_forget_api_key       (TallyApplication    *self);

G_END_DECLS
