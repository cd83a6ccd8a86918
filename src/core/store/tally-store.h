/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "tally-conversation.h"
#include "tally-session-info.h"

G_BEGIN_DECLS

/**
 * TALLY_STORE_ERROR:
 *
 * The error domain of #TallyStore. Errors in this domain are from the
 * #TallyStoreError enumeration.
 */
#define TALLY_STORE_ERROR (tally_store_error_quark ())

/**
 * TALLY_STORE_SCHEMA_VERSION:
 *
 * The newest schema (`PRAGMA user_version`) this build knows: 1 added
 * `sessions` and `events`; 2 `messages`, `rules`, `plans` and the cache
 * token columns of `sessions`; 3 the full-text index `transcript_fts`;
 * 4 the `pinned` flag of `sessions`; 5 `snapshots`; 6 the prefix index of
 * `transcript_fts`.
 */
#define TALLY_STORE_SCHEMA_VERSION 6

/**
 * TallyStoreError:
 * @TALLY_STORE_ERROR_CORRUPT: the file is not a SQLite database, fails
 *   `PRAGMA quick_check`, or holds data the store cannot use
 * @TALLY_STORE_ERROR_NEWER_SCHEMA: the file was written by a newer Tally.
 *   tally_store_open() does not fail with it: such a store opens read-only
 *   (see tally_store_is_read_only()). It is kept for callers that want to
 *   name the condition.
 * @TALLY_STORE_ERROR_MIGRATION_FAILED: upgrading the schema failed; the
 *   file was left as it was and the message names the backup copy
 * @TALLY_STORE_ERROR_READ_ONLY: the store is read-only (newer schema, or a
 *   file that cannot be written), or the disk refused writing
 * @TALLY_STORE_ERROR_NOT_FOUND: no session, rule or plan has that id
 * @TALLY_STORE_ERROR_AMBIGUOUS: an id prefix matches more than one session
 * @TALLY_STORE_ERROR_FULL: the disk (or the database's page limit) is full
 * @TALLY_STORE_ERROR_IO: any other failure to read or write the file
 * @TALLY_STORE_ERROR_INVALID: the caller passed something the store refuses:
 *   an event without `session_id`/`seq`/`ts`/`type`, a `seq` that is not
 *   greater than the session's previous one, an unknown role or rule field
 * @TALLY_STORE_ERROR_LOCKED: the session is open for writing in another
 *   Tally window or process (tally_store_lock_session())
 *
 * Error codes of %TALLY_STORE_ERROR.
 */
typedef enum {
  TALLY_STORE_ERROR_CORRUPT,
  TALLY_STORE_ERROR_NEWER_SCHEMA,
  TALLY_STORE_ERROR_MIGRATION_FAILED,
  TALLY_STORE_ERROR_READ_ONLY,
  TALLY_STORE_ERROR_NOT_FOUND,
  TALLY_STORE_ERROR_AMBIGUOUS,
  TALLY_STORE_ERROR_FULL,
  TALLY_STORE_ERROR_IO,
  TALLY_STORE_ERROR_INVALID,
  TALLY_STORE_ERROR_LOCKED,
} TallyStoreError;

GQuark tally_store_error_quark (void);

#define TALLY_TYPE_RULE (tally_rule_get_type ())

/**
 * TallyRule:
 * @id: the rule's id (a positive integer)
 * @pattern: the rule's pattern, such as `query_database` or `Bash(git status)`
 * @decision: `allow` or `deny`
 * @scope: `global` or `workspace`
 * @workspace: (nullable): the workspace folder of a `workspace` rule
 * @created_us: when the rule was added, µs since the Unix epoch
 *
 * A persisted permission rule (docs/architecture.md §6.2). A boxed record.
 */
typedef struct {
  gint64  id;
  char   *pattern;
  char   *decision;
  char   *scope;
  char   *workspace;
  gint64  created_us;
} TallyRule;

GType      tally_rule_get_type (void) G_GNUC_CONST;
TallyRule *tally_rule_copy     (const TallyRule *rule);
void       tally_rule_free     (TallyRule       *rule);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyRule, tally_rule_free)

#define TALLY_TYPE_PLAN_VERSION (tally_plan_version_get_type ())

/**
 * TallyPlanVersion:
 * @plan_id: the plan's id, kept across refinements
 * @version: the version, counting up from 1
 * @session_id: (nullable): the session the plan was proposed in
 * @markdown: the plan text as the model wrote it (markdown)
 * @created_us: when this version was saved, µs since the Unix epoch
 *
 * One stored version of a plan (docs/architecture.md §7.2). A boxed record.
 */
typedef struct {
  char   *plan_id;
  gint64  version;
  char   *session_id;
  char   *markdown;
  gint64  created_us;
} TallyPlanVersion;

GType             tally_plan_version_get_type (void) G_GNUC_CONST;
TallyPlanVersion *tally_plan_version_copy     (const TallyPlanVersion *plan);
void              tally_plan_version_free     (TallyPlanVersion       *plan);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyPlanVersion, tally_plan_version_free)

/**
 * TallySalvageReport:
 * @sessions_salvaged: sessions copied with at least one event
 * @sessions_rebuilt: of those, sessions whose `sessions` row was lost and
 *   was rebuilt from their events
 * @sessions_lost: sessions named by a readable row (their `sessions` row,
 *   messages or plans) none of whose events could be read; not copied
 * @events_salvaged: events copied
 * @events_lost: events known to be missing: gaps in a session's `seq`
 *   (events are numbered 1, 2, 3, … without gaps) and unreadable rows
 * @messages_dropped: stored conversation blocks left out because an
 *   earlier part of their conversation was lost
 * @rules_salvaged: permission rules copied
 * @plans_salvaged: plan versions copied
 * @damaged_regions: places where reading stopped at damage and went on
 *   past it
 * @messages_lost: stored conversation blocks that could not be read (the
 *   primary key's index of `messages` names them); those after them in
 *   their conversation are counted in @messages_dropped
 * @conversations_cut: salvaged sessions whose conversation with the model
 *   lost a part (also when how many blocks is unknown: the events show
 *   answers the model gave and no block is left). Each gets an `error`
 *   event of kind `store` with `context_lost` at the end of its log; the
 *   model no longer sees all of its transcript.
 *
 * What tally_store_salvage() copied and what it could not.
 */
typedef struct {
  guint   sessions_salvaged;
  guint   sessions_rebuilt;
  guint   sessions_lost;
  guint64 events_salvaged;
  guint64 events_lost;
  guint64 messages_dropped;
  guint   rules_salvaged;
  guint   plans_salvaged;
  guint   damaged_regions;
  guint64 messages_lost;
  guint   conversations_cut;
} TallySalvageReport;

gboolean tally_store_salvage        (const char          *damaged_path,
                                     const char          *out_path,
                                     TallySalvageReport  *report,
                                     GError             **error);
void     tally_store_salvage_async  (const char          *damaged_path,
                                     const char          *out_path,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data);
gboolean tally_store_salvage_finish (GAsyncResult        *result,
                                     TallySalvageReport  *report,
                                     GError             **error);

#define TALLY_TYPE_STORE (tally_store_get_type ())

G_DECLARE_FINAL_TYPE (TallyStore, tally_store, TALLY, STORE, GObject)

char         *tally_store_get_default_path    (void);

TallyStore   *tally_store_open                (const char          *path,
                                               GError             **error);
const char   *tally_store_get_path            (TallyStore          *self);
gboolean      tally_store_is_read_only        (TallyStore          *self);
const char   *tally_store_get_read_only_reason (TallyStore         *self);
GError       *tally_store_dup_write_error     (TallyStore          *self);

/* One writer per session */
gboolean      tally_store_lock_session        (TallyStore          *self,
                                               const char          *session_id,
                                               GError             **error);
void          tally_store_unlock_session      (TallyStore          *self,
                                               const char          *session_id);
gboolean      tally_store_session_is_open_elsewhere (TallyStore     *self,
                                                     const char     *session_id);

/* Writes: queued to the writer thread, in order */
gboolean      tally_store_append_event        (TallyStore          *self,
                                               JsonObject          *event,
                                               GError             **error);
gboolean      tally_store_save_message        (TallyStore          *self,
                                               const char          *session_id,
                                               guint                msg_index,
                                               const char          *role,
                                               GPtrArray           *blocks,
                                               GError             **error);
gboolean      tally_store_truncate_messages   (TallyStore          *self,
                                               const char          *session_id,
                                               guint                n_messages,
                                               GError             **error);
gboolean      tally_store_flush               (TallyStore          *self,
                                               GError             **error);
gboolean      tally_store_rename_session      (TallyStore          *self,
                                               const char          *session_id,
                                               const char          *title,
                                               GError             **error);
gboolean      tally_store_set_session_pinned  (TallyStore          *self,
                                               const char          *session_id,
                                               gboolean             pinned,
                                               GError             **error);
gboolean      tally_store_delete_session      (TallyStore          *self,
                                               const char          *session_id,
                                               GError             **error);
gint64        tally_store_add_rule            (TallyStore          *self,
                                               const char          *pattern,
                                               const char          *decision,
                                               const char          *scope,
                                               const char          *workspace,
                                               GError             **error);
gboolean      tally_store_remove_rule         (TallyStore          *self,
                                               gint64               rule_id,
                                               GError             **error);
gboolean      tally_store_save_plan           (TallyStore          *self,
                                               const char          *plan_id,
                                               gint64               version,
                                               const char          *session_id,
                                               const char          *markdown,
                                               GError             **error);

/* Reads: in the caller's thread, on the read connection */
GPtrArray        *tally_store_list_sessions   (TallyStore          *self,
                                               GError             **error);
TallySessionInfo *tally_store_find_session    (TallyStore          *self,
                                               const char          *id_or_prefix,
                                               GError             **error);
GPtrArray        *tally_store_load_events     (TallyStore          *self,
                                               const char          *session_id,
                                               GPtrArray          **warnings,
                                               GError             **error);
GPtrArray        *tally_store_load_event_lines (TallyStore         *self,
                                               const char          *session_id,
                                               GError             **error);
gboolean          tally_store_load_conversation (TallyStore        *self,
                                               const char          *session_id,
                                               TallyConversation   *into,
                                               GError             **error);
GPtrArray        *tally_store_search          (TallyStore          *self,
                                               const char          *text,
                                               GError             **error);
GPtrArray        *tally_store_search_cancellable (TallyStore        *self,
                                               const char          *text,
                                               GCancellable        *cancellable,
                                               GError             **error);
char             *tally_store_export_jsonl    (TallyStore          *self,
                                               const char          *session_id,
                                               GError             **error);
GPtrArray        *tally_store_list_rules      (TallyStore          *self,
                                               const char          *workspace,
                                               GError             **error);
GPtrArray        *tally_store_load_plan_versions (TallyStore       *self,
                                               const char          *plan_id,
                                               GError             **error);

/* Reads for the UI: the same, in a worker thread */
void              tally_store_list_sessions_async  (TallyStore          *self,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
GPtrArray        *tally_store_list_sessions_finish (TallyStore          *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);
void              tally_store_load_events_async    (TallyStore          *self,
                                                    const char          *session_id,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
GPtrArray        *tally_store_load_events_finish   (TallyStore          *self,
                                                    GAsyncResult        *result,
                                                    GPtrArray          **warnings,
                                                    GError             **error);
void              tally_store_search_async         (TallyStore          *self,
                                                    const char          *text,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
GPtrArray        *tally_store_search_finish        (TallyStore          *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);

G_END_DECLS
