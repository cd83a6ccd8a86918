/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-session"

#include "config.h"

#include "tally-session-load.h"

#include <string.h>

#include "tally-event.h"
#include "tally-json.h"
#include "tally-store-snapshot.h"

/*
 * Opening a stored session (docs/architecture.md §3.3): the transcript and
 * the session's state come from the snapshot of settled blocks the session
 * wrote when its last turn settled, plus the events after it; or, when
 * there is no usable snapshot, from the whole log. Both paths give the same
 * result (tests/test-snapshot.c). Nothing here touches a main context, so
 * tally_session_open_async() runs it in a worker thread.
 */

/**
 * tally_session_state_clear:
 * @state: a #TallySessionState
 *
 * Frees what @state holds and zeroes it.
 */
void
tally_session_state_clear (TallySessionState *state)
{
  g_free (state->model);
  g_free (state->notes_in_prompt);
  g_free (state->notes_told);
  g_free (state->plan_id);
  memset (state, 0, sizeof *state);
}

static void
set_string (char       **field,
            const char  *value)
{
  char *copy = g_strdup (value);

  g_free (*field);
  *field = copy;
}

/**
 * tally_session_state_fold:
 * @state: a #TallySessionState
 * @event: (transfer none): the next event of the session, in `seq` order
 *
 * Learns what @event tells about the session: its mode, model, notes,
 * cost and plan.
 */
void
tally_session_state_fold (TallySessionState *state,
                          JsonObject        *event)
{
  state->max_seq = MAX (state->max_seq, json_object_get_int_member_with_default (event, "seq", 0));

  switch (tally_event_get_event_type (event))
    {
    case TALLY_EVENT_TURN_STARTED:
      if (tally_mode_from_string (json_object_get_string_member_with_default (event, "mode", "ask"), &state->mode))
        state->has_mode = TRUE;
      if (tally_json_object_get_string (event, "model", NULL) != NULL)
        set_string (&state->model, tally_json_object_get_string (event, "model", NULL));
      /* A message that carried changed notes (docs/notes.md). */
      if (tally_json_object_get_string (event, "notes", NULL) != NULL)
        set_string (&state->notes_told, tally_json_object_get_string (event, "notes", NULL));
      break;

    case TALLY_EVENT_SESSION_CREATED:
      set_string (&state->notes_in_prompt, tally_json_object_get_string (event, "notes", NULL));
      set_string (&state->notes_told, state->notes_in_prompt);
      break;

    case TALLY_EVENT_TURN_FINISHED:
      if (json_object_has_member (event, "cost_usd") &&
          JSON_NODE_HOLDS_VALUE (json_object_get_member (event, "cost_usd")))
        state->spent += json_object_get_double_member (event, "cost_usd");
      break;

    case TALLY_EVENT_PLAN_PROPOSED:
      if (tally_json_object_get_string (event, "plan_id", NULL) != NULL)
        {
          set_string (&state->plan_id, tally_json_object_get_string (event, "plan_id", NULL));
          state->plan_version = json_object_get_int_member_with_default (event, "version", 1);
        }
      break;

    case TALLY_EVENT_REDIRECT:
    case TALLY_EVENT_TEXT_DELTA:
    case TALLY_EVENT_THINKING_DELTA:
    case TALLY_EVENT_BLOCK_DONE:
    case TALLY_EVENT_TOOL_USE_START:
    case TALLY_EVENT_APPROVAL_REQUEST:
    case TALLY_EVENT_APPROVAL_RESOLVED:
    case TALLY_EVENT_TOOL_RESULT:
    case TALLY_EVENT_QUESTION_REQUEST:
    case TALLY_EVENT_QUESTION_RESOLVED:
    case TALLY_EVENT_CHART_CREATED:
    case TALLY_EVENT_ERROR:
    case TALLY_EVENT_API_CALL:
    case TALLY_EVENT_RETRY:
    case TALLY_EVENT_REQUEST_SENT:
    case TALLY_EVENT_UNKNOWN:
      break;
    }
}

/**
 * tally_session_state_to_json:
 * @state: a #TallySessionState
 * @title: (nullable): the transcript's title
 *
 * The state's JSON form, as a snapshot keeps it.
 *
 * Returns: (transfer full): a new object
 */
JsonObject *
tally_session_state_to_json (const TallySessionState *state,
                             const char              *title)
{
  JsonObject *object = json_object_new ();

  json_object_set_int_member (object, "max_seq", state->max_seq);
  tally_json_object_set_string_or_null (object, "mode",
                                        state->has_mode ? tally_mode_to_string (state->mode) : NULL);
  tally_json_object_set_string_or_null (object, "model", state->model);
  tally_json_object_set_string_or_null (object, "notes_in_prompt", state->notes_in_prompt);
  tally_json_object_set_string_or_null (object, "notes_told", state->notes_told);
  json_object_set_double_member (object, "spent", state->spent);
  tally_json_object_set_string_or_null (object, "plan_id", state->plan_id);
  json_object_set_int_member (object, "plan_version", state->plan_version);
  tally_json_object_set_string_or_null (object, "title", title);

  return object;
}

/* Reads a nullable string member; FALSE when it is missing or not a
 * string or null. */
static gboolean
read_nullable (JsonObject  *object,
               const char  *member,
               char       **out)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL)
    return FALSE;
  if (JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return FALSE;
  *out = g_strdup (json_node_get_string (node));
  return TRUE;
}

static gboolean
state_from_json (const char         *text,
                 TallySessionState  *state,
                 char              **title,
                 GError            **error)
{
  g_autoptr(JsonNode) node = json_from_string (text, NULL);
  g_autofree char *mode = NULL;
  JsonObject *object;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    goto invalid;
  object = json_node_get_object (node);
  if (!tally_json_object_lookup_int (object, "max_seq", &state->max_seq) ||
      !tally_json_object_lookup_double (object, "spent", &state->spent) ||
      !tally_json_object_lookup_int (object, "plan_version", &state->plan_version) ||
      !read_nullable (object, "mode", &mode) ||
      !read_nullable (object, "model", &state->model) ||
      !read_nullable (object, "notes_in_prompt", &state->notes_in_prompt) ||
      !read_nullable (object, "notes_told", &state->notes_told) ||
      !read_nullable (object, "plan_id", &state->plan_id) ||
      !read_nullable (object, "title", title))
    goto invalid;
  if (mode != NULL)
    {
      if (!tally_mode_from_string (mode, &state->mode))
        goto invalid;
      state->has_mode = TRUE;
    }
  return TRUE;

invalid:
  g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
               "The snapshot's session state is damaged");
  return FALSE;
}

/* The stored snapshot as a transcript and state, or FALSE with why not. */
static gboolean
restore_snapshot (TallyStoreSnapshot *snapshot,
                  TallySessionLoad   *load,
                  GError            **error)
{
  g_autoptr(JsonNode) blocks = NULL;
  g_autoptr(GError) parse_error = NULL;
  g_autofree char *title = NULL;

  if (snapshot->format != TALLY_SNAPSHOT_FORMAT)
    {
      g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_FORMAT,
                   "The snapshot has format %" G_GINT64_FORMAT ", not %d",
                   snapshot->format, TALLY_SNAPSHOT_FORMAT);
      return FALSE;
    }
  if (!state_from_json (snapshot->state, &load->state, &title, error))
    return FALSE;
  if (load->state.max_seq != snapshot->seq)
    {
      g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
                   "The snapshot's state is for event %" G_GINT64_FORMAT ", its row for %" G_GINT64_FORMAT,
                   load->state.max_seq, snapshot->seq);
      return FALSE;
    }
  blocks = json_from_string (snapshot->blocks, &parse_error);
  if (blocks == NULL)
    {
      g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_INVALID,
                   "The snapshot's blocks are not JSON: %s", parse_error->message);
      return FALSE;
    }
  load->transcript = tally_transcript_new_from_snapshot (blocks, title, snapshot->seq, error);
  return load->transcript != NULL;
}

static void
drop_restored (TallySessionLoad *load)
{
  g_clear_object (&load->transcript);
  tally_session_state_clear (&load->state);
  g_clear_pointer (&load->tail, g_ptr_array_unref);
  g_clear_pointer (&load->warnings, g_ptr_array_unref);
}

/* The tail after the snapshot; FALSE (the snapshot is stale) when a turn
 * settled after it. */
static gboolean
tail_is_unsettled (GPtrArray  *tail,
                   GError    **error)
{
  for (guint i = 0; i < tail->len; i++)
    if (tally_event_get_event_type (g_ptr_array_index (tail, i)) == TALLY_EVENT_TURN_FINISHED)
      {
        g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_STALE,
                     "The snapshot is older than the turn that finished at event %" G_GINT64_FORMAT,
                     tally_event_get_seq (g_ptr_array_index (tail, i)));
        return FALSE;
      }
  return TRUE;
}

/**
 * tally_session_load:
 * @store: the store
 * @session_id: the session's full id
 * @load: (out caller-allocates): what was loaded; clear it with
 *   tally_session_load_clear()
 * @error: return location for a #GError
 *
 * Loads a session's transcript and state: from its snapshot and the
 * events after it when the snapshot is usable (this build's format, not
 * damaged, no turn settled after it), otherwise by replaying the whole
 * log. After a whole replay that has a settled turn, a new snapshot is
 * written (when the store is writable), taken at the log's last settled
 * turn. Safe to call from a worker thread.
 *
 * Returns: %TRUE with @load filled in; %FALSE with the store's read error
 *   (%TALLY_STORE_ERROR_NOT_FOUND, …)
 */
gboolean
tally_session_load (TallyStore        *store,
                    const char        *session_id,
                    TallySessionLoad  *load,
                    GError           **error)
{
  g_autoptr(TallyStoreSnapshot) snapshot = NULL;
  g_autoptr(GError) snapshot_error = NULL;
  g_autoptr(GPtrArray) events = NULL;
  gint64 settled_seq = 0;
  guint settled = 0;

  memset (load, 0, sizeof *load);

  if (!tally_store_load_snapshot (store, session_id, &snapshot, &snapshot_error))
    {
      g_prefix_error (&snapshot_error, "The snapshot could not be read: ");
      snapshot_error->domain = TALLY_SNAPSHOT_ERROR;
      snapshot_error->code = TALLY_SNAPSHOT_ERROR_INVALID;
    }
  else if (snapshot != NULL && restore_snapshot (snapshot, load, &snapshot_error))
    {
      load->tail = tally_store_load_events_after (store, session_id, snapshot->seq, &load->warnings, error);
      if (load->tail == NULL)
        {
          drop_restored (load);
          return FALSE;
        }
      if (tail_is_unsettled (load->tail, &snapshot_error))
        {
          for (guint i = 0; i < load->tail->len; i++)
            {
              tally_session_state_fold (&load->state, g_ptr_array_index (load->tail, i));
              tally_transcript_apply (load->transcript, g_ptr_array_index (load->tail, i));
            }
          load->from_snapshot = TRUE;
          return TRUE;
        }
    }
  drop_restored (load);
  load->snapshot_problem = g_steal_pointer (&snapshot_error);

  /* The whole log. */
  events = tally_store_load_events (store, session_id, &load->warnings, error);
  if (events == NULL)
    return FALSE;

  for (guint i = 0; i < events->len; i++)
    if (tally_event_get_event_type (g_ptr_array_index (events, i)) == TALLY_EVENT_TURN_FINISHED)
      settled = i + 1;

  load->transcript = tally_transcript_new ();
  for (guint i = 0; i < events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (events, i);

      tally_session_state_fold (&load->state, event);
      tally_transcript_apply (load->transcript, event);
      if (i + 1 == settled)
        settled_seq = tally_event_get_seq (event);
      if (i + 1 == settled && !tally_store_is_read_only (store))
        {
          g_autoptr(GError) save_error = NULL;

          if (!tally_session_save_snapshot (store, session_id, settled_seq, &load->state,
                                            load->transcript, &save_error))
            g_debug ("No snapshot for session %s: %s", session_id, save_error->message);
        }
    }
  load->tail = g_steal_pointer (&events);

  return TRUE;
}

/**
 * tally_session_load_clear:
 * @load: what tally_session_load() filled in
 *
 * Frees what @load holds.
 */
void
tally_session_load_clear (TallySessionLoad *load)
{
  drop_restored (load);
  g_clear_error (&load->snapshot_problem);
}

/**
 * tally_session_save_snapshot:
 * @store: the store
 * @session_id: the session's full id
 * @seq: the `seq` of the `turn_finished` just applied
 * @state: the session's state folded up to @seq
 * @transcript: the transcript with every event up to @seq applied and no
 *   reply open
 * @error: return location for a #GError
 *
 * Serialises @transcript's blocks and @state with json-glib and queues
 * them as the session's snapshot (tally_store_save_snapshot()).
 *
 * Returns: %TRUE when queued; %FALSE with the store's error
 */
gboolean
tally_session_save_snapshot (TallyStore              *store,
                             const char              *session_id,
                             gint64                   seq,
                             const TallySessionState *state,
                             TallyTranscript         *transcript,
                             GError                 **error)
{
  g_autoptr(JsonNode) blocks = tally_transcript_to_snapshot (transcript);
  g_autoptr(JsonNode) state_node = json_node_init_object (json_node_alloc (),
                                                          tally_session_state_to_json (state, tally_transcript_get_title (transcript)));
  g_autofree char *blocks_text = json_to_string (blocks, FALSE);
  g_autofree char *state_text = json_to_string (state_node, FALSE);

  json_object_unref (json_node_get_object (state_node));
  return tally_store_save_snapshot (store, session_id, seq, TALLY_SNAPSHOT_FORMAT,
                                    state_text, blocks_text, error);
}

/*
 * The live session's snapshots, built in a worker thread (§3.3). The main
 * loop only says which turn settled (tally_snapshot_writer_settled()); the
 * worker waits for the store to commit the events up to it, brings its own
 * copy of the transcript up to that event (from the copy it built last
 * time, else from the stored snapshot or the whole log), serialises it and
 * queues it. Nothing in a settled turn costs the main loop in proportion
 * to the session's length.
 */

struct _TallySnapshotWriter {
  gatomicrefcount    ref_count;
  TallyStore        *store;
  char              *session_id;
  GThreadPool       *pool;          /* one thread: builds run in order */
  GMutex             lock;
  gint64             wanted_seq;    /* under lock: the latest settled turn */

  /* The worker's own copy; only the pool's thread touches it. */
  TallyTranscript   *transcript;
  TallySessionState  state;
  gint64             seq;           /* the last event applied to it */
};

/* Snapshots queued and not yet built, across every writer, for
 * tally_session_wait_snapshots(). */
static GMutex pending_lock;
static GCond  pending_cond;
static guint  pending;

static TallySnapshotWriter *
snapshot_writer_ref (TallySnapshotWriter *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

static void
snapshot_writer_unref (TallySnapshotWriter *self)
{
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_clear_object (&self->transcript);
  tally_session_state_clear (&self->state);
  g_clear_object (&self->store);
  g_mutex_clear (&self->lock);
  g_free (self->session_id);
  g_free (self);
}

/* Brings the worker's copy to event @seq, a settled turn's last. */
static gboolean
snapshot_writer_advance (TallySnapshotWriter  *self,
                         gint64                seq,
                         GError              **error)
{
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) warnings = NULL;

  if (self->transcript == NULL || self->seq > seq)
    {
      g_autoptr(TallyStoreSnapshot) snapshot = NULL;
      TallySessionLoad load = { 0 };

      g_clear_object (&self->transcript);
      tally_session_state_clear (&self->state);
      self->seq = 0;
      /* The stored snapshot when it is usable and not past @seq; a
       * problem with it only means starting from the log. */
      if (tally_store_load_snapshot (self->store, self->session_id, &snapshot, NULL) &&
          snapshot != NULL && snapshot->seq <= seq && restore_snapshot (snapshot, &load, NULL))
        {
          self->transcript = g_steal_pointer (&load.transcript);
          self->state = load.state;
          memset (&load.state, 0, sizeof load.state);
          self->seq = snapshot->seq;
        }
      tally_session_load_clear (&load);
      if (self->transcript == NULL)
        self->transcript = tally_transcript_new ();
    }

  events = tally_store_load_events_after (self->store, self->session_id, self->seq, &warnings, error);
  if (events == NULL)
    return FALSE;
  for (guint i = 0; i < events->len && tally_event_get_seq (g_ptr_array_index (events, i)) <= seq; i++)
    {
      JsonObject *event = g_ptr_array_index (events, i);

      tally_session_state_fold (&self->state, event);
      tally_transcript_apply (self->transcript, event);
      self->seq = tally_event_get_seq (event);
    }
  if (self->seq != seq)
    {
      g_set_error (error, TALLY_SNAPSHOT_ERROR, TALLY_SNAPSHOT_ERROR_STALE,
                   "The log ends at event %" G_GINT64_FORMAT ", not at the settled turn's %" G_GINT64_FORMAT,
                   self->seq, seq);
      /* Start again from the store next time. */
      g_clear_object (&self->transcript);
      return FALSE;
    }
  return TRUE;
}

static void
snapshot_writer_build (gpointer data,
                       gpointer user_data)
{
  TallySnapshotWriter *self = user_data;
  gint64 seq = *(gint64 *)data;
  g_autoptr(GError) error = NULL;
  gboolean latest;

  g_free (data);
  g_mutex_lock (&self->lock);
  latest = seq == self->wanted_seq;
  g_mutex_unlock (&self->lock);

  /* A later settled turn is queued behind: it writes the newer one. */
  if (latest)
    {
      if (!tally_store_flush (self->store, &error) ||
          !snapshot_writer_advance (self, seq, &error) ||
          !tally_session_save_snapshot (self->store, self->session_id, seq, &self->state,
                                        self->transcript, &error))
        g_debug ("No snapshot for session %s at event %" G_GINT64_FORMAT ": %s",
                 self->session_id, seq, error->message);
    }

  snapshot_writer_unref (self);
  g_mutex_lock (&pending_lock);
  pending--;
  g_cond_broadcast (&pending_cond);
  g_mutex_unlock (&pending_lock);
}

/**
 * tally_snapshot_writer_new:
 * @store: the store the session is written to (not read-only)
 * @session_id: the session's full id
 *
 * Returns: (transfer full): a writer for the session's snapshots; close
 *   it with tally_snapshot_writer_close()
 */
TallySnapshotWriter *
tally_snapshot_writer_new (TallyStore *store,
                           const char *session_id)
{
  TallySnapshotWriter *self = g_new0 (TallySnapshotWriter, 1);

  g_return_val_if_fail (TALLY_IS_STORE (store), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  g_atomic_ref_count_init (&self->ref_count);
  g_mutex_init (&self->lock);
  self->store = g_object_ref (store);
  self->session_id = g_strdup (session_id);
  self->pool = g_thread_pool_new (snapshot_writer_build, self, 1, FALSE, NULL);
  return self;
}

/**
 * tally_snapshot_writer_settled:
 * @self: a #TallySnapshotWriter
 * @seq: the `seq` of the `turn_finished` just recorded (queued to the
 *   store before this call)
 *
 * Asks for a snapshot taken after event @seq. Returns at once; the
 * snapshot is built in the writer's thread and queued in the store in
 * order with the events. A failure (the store cannot be read, the log
 * does not reach @seq) loses nothing: the snapshot is left out, and the
 * next open replays the log and writes it (§3.3).
 */
void
tally_snapshot_writer_settled (TallySnapshotWriter *self,
                               gint64               seq)
{
  gint64 *data = g_new (gint64, 1);

  g_return_if_fail (self != NULL && self->pool != NULL);

  *data = seq;
  g_mutex_lock (&self->lock);
  self->wanted_seq = MAX (self->wanted_seq, seq);
  g_mutex_unlock (&self->lock);

  g_mutex_lock (&pending_lock);
  pending++;
  g_mutex_unlock (&pending_lock);
  snapshot_writer_ref (self);
  g_thread_pool_push (self->pool, data, NULL);
}

/**
 * tally_snapshot_writer_close:
 * @self: (transfer full): a #TallySnapshotWriter
 *
 * Lets the writer go without waiting: snapshots already asked for are
 * still built and queued, then the writer frees itself.
 */
void
tally_snapshot_writer_close (TallySnapshotWriter *self)
{
  if (self == NULL)
    return;
  g_thread_pool_free (g_steal_pointer (&self->pool), FALSE, FALSE);
  snapshot_writer_unref (self);
}

/**
 * tally_session_wait_snapshots:
 *
 * Waits until every snapshot asked for of any #TallySnapshotWriter has
 * been built and queued in its store (tally-cli before it exits, tests).
 * Flush or close the store afterwards to have them committed.
 */
void
tally_session_wait_snapshots (void)
{
  g_mutex_lock (&pending_lock);
  while (pending > 0)
    g_cond_wait (&pending_cond, &pending_lock);
  g_mutex_unlock (&pending_lock);
}
