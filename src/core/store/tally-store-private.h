/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <sqlite3.h>

#include "tally-event.h"
#include "tally-json.h"
#include "tally-store.h"

G_BEGIN_DECLS

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

#define BIND_TEXT(stmt, n, value) sqlite3_bind_text ((stmt), (n), (value), -1, SQLITE_STATIC)

/*
 * The store's private parts, shared by its files (docs/architecture.md §10.10):
 * tally-store.c (object, open, lifecycle, the write API), -writer.c (the
 * writer thread), -read.c (reads and search), -async.c (the _async
 * variants), -migrations.c and -salvage.c. The Markdown export is not
 * the store's: it walks the transcript (tally-transcript-export.c).
 */

/* {{{ JSON helpers that never warn on unexpected shapes
 *
 * Short names for the shared helpers of tally-json.h used by the store's
 * event projection; new code calls tally-json.h directly. */

#define json_string(object, member)        tally_json_object_get_string ((object), (member), NULL)
#define json_int(object, member, out)      tally_json_object_lookup_int ((object), (member), (out))
#define json_number(object, member, out)   tally_json_object_lookup_double ((object), (member), (out))
#define json_object_member(object, member) tally_json_object_get_object ((object), (member))

static inline gint64
json_int_or (JsonObject *object,
             const char *member,
             gint64      fallback)
{
  gint64 value;

  return tally_json_object_lookup_int (object, member, &value) ? value : fallback;
}

/* }}} */
/* {{{ The queue, the signal target and the instance */

typedef enum {
  /* Data: kept in memory until written */
  ITEM_EVENT,
  ITEM_MESSAGE,
  ITEM_TRUNCATE,
  ITEM_SNAPSHOT,   /* tally-store-snapshot.c */
  /* Operations: the caller waits for the outcome */
  ITEM_PLAN,
  ITEM_RENAME,
  ITEM_PIN,
  ITEM_DELETE,
  ITEM_ADD_RULE,
  ITEM_REMOVE_RULE,
  ITEM_FLUSH,
  ITEM_QUIT,
  /* Run as soon as it is taken, outside any batch */
  ITEM_HOOK_MAX_PAGES,
} ItemKind;

typedef struct {
  GMutex    lock;
  GCond     cond;
  gboolean  done;
  GError   *error;
  gint64    result;
} Completion;

/* Which of the session, turn and search tables an event feeds besides the
 * log (docs/architecture.md §10): decided once, from the event's type, when
 * the event is queued (tally_store_append_event), and applied by the
 * writer thread. */
typedef enum {
  PROJECT_NONE,             /* kept in the log only */
  PROJECT_SESSION_CREATED,  /* text = title, model, workspace, database */
  PROJECT_TURN_STARTED,     /* text = prompt, mode, model */
  PROJECT_TEXT_DELTA,       /* text = the delta */
  PROJECT_TURN_FINISHED,    /* cost, usage */
} Projection;

typedef struct {
  ItemKind    kind;
  char       *session_id;
  gint64      seq;
  gint64      ts;
  char       *type;        /* the event's type as written, for the events table */
  Projection  projection;
  char       *payload;     /* event line; plan markdown; new title; rule pattern */
  char       *turn_id;
  char       *text;        /* title, prompt or delta text */
  char       *model;
  char       *workspace;   /* also a rule's workspace */
  char       *database;
  char       *mode;        /* also a rule's decision */
  char       *scope;
  gboolean    cost_known;
  double      cost;
  gint64      usage[4];    /* input, output, cache read, cache write */
  gint64      number;      /* msg index, n messages, plan version, rule id, pages, pinned */
  char       *role;
  GPtrArray  *blocks;
  Completion *completion;
  GError     *error;       /* this item's outcome in the current attempt */
} Item;

/* The writer thread reports failures through this shared record, so that a
 * report still queued on the main context when the store goes away finds
 * no store instead of a freed one. */
typedef struct {
  gatomicrefcount  ref_count;
  GMutex           lock;
  TallyStore      *store;     /* not a reference; cleared in dispose */
  GMainContext    *context;
  GError          *failure;   /* while queued data waits for a retry */
} SignalTarget;

struct _TallyStore
{
  GObject       parent_instance;

  char         *path;
  gboolean      read_only;
  char         *read_only_reason;
  SignalTarget *target;

  /* Reads */
  GMutex        read_lock;
  sqlite3      *read_db;

  /* Writes */
  sqlite3      *write_db;      /* until the writer thread takes it */
  GThread      *writer;
  GAsyncQueue  *queue;
  int           refused;       /* atomic: an append was refused as read-only since the last flush */

  /* The newest seq handed over per session, to refuse a step back at once */
  GMutex        seq_lock;
  GHashTable   *handed_seq;

  /* Session locks (one writer per session): the `<path>-lock` file and how
   * many holders each locked session has in this store object */
  GMutex        session_lock;
  int           lock_fd;
  GHashTable   *locked;        /* session_id -> GUINT_TO_POINTER (holders) */
};

/* Queue items and operations (tally-store-writer.c) */
Item         *tally_store_item_new            (ItemKind      kind);
void          tally_store_item_free           (Item         *item);
gboolean      tally_store_run_operation       (TallyStore   *self,
                                               Item         *item,
                                               gint64       *result,
                                               GError      **error);
GThread      *tally_store_writer_start        (TallyStore   *self,
                                               sqlite3      *db);

/* Failure reports to the opening thread (tally-store.c) */
SignalTarget *tally_store_target_ref          (SignalTarget *target);
void          tally_store_target_unref        (SignalTarget *target);
void          tally_store_target_set_failure  (SignalTarget *target,
                                               const GError *error);
void          tally_store_target_report       (SignalTarget *target,
                                               const GError *error);

/* }}} */

/* SQLite helpers (tally-store-migrations.c) */
void      tally_store_set_sqlite_error    (GError     **error,
                                           sqlite3     *db,
                                           int          rc,
                                           const char  *path,
                                           const char  *what);
gboolean  tally_store_exec                (sqlite3     *db,
                                           const char  *path,
                                           const char  *sql,
                                           GError     **error);
gboolean  tally_store_backup              (sqlite3     *db,
                                           const char  *path,
                                           int          from_version,
                                           char       **backup_path,
                                           GError     **error);
gboolean  tally_store_migrate             (sqlite3     *db,
                                           const char  *path,
                                           int          from_version,
                                           GError     **error);

gboolean  tally_store_fill_transcript     (sqlite3     *db,
                                           const char  *path,
                                           GError     **error);

/* Test hooks (tests/test-store.c); not for the application */
gboolean  tally_store_set_max_page_count_for_testing (TallyStore  *self,
                                                      gint64       max_pages,
                                                      gint64      *result,
                                                      GError     **error);

G_END_DECLS
