/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-session"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "tally-enums.h"
#include "tally-event.h"
#include "tally-gate.h"
#include "tally-json.h"
#include "tally-model-table.h"
#include "tally-pricing.h"
#include "tally-properties.h"
#include "tally-session.h"
#include "tally-session-load.h"
#include "tally-store.h"

/*
 * A session ties the pieces of one conversation together: the agent that
 * runs turns, the transcript that shows them, and the store that keeps them.
 * Every event the agent emits goes to the transcript and to the store, in
 * that order, from the same handler, so what is on screen and what is on
 * disk cannot drift apart; every changed message of the conversation is
 * written as well, so a resumed session sends exactly what the API saw.
 *
 * Opening a stored session replays its events through the same reducer. A
 * turn the log shows as started but never finished (Tally was killed, the
 * machine lost power) is closed at open: its unanswered tool calls get
 * results that say what happened, and an error and a failed turn_finished
 * are appended, so the log, the transcript and the conversation all agree
 * that the reply was cut and is not part of the history.
 */

struct _TallySession
{
  GObject          parent_instance;

  TallyStore      *store;
  TallyAgent      *agent;
  TallyTranscript *transcript;
  TallyMode        mode;
  GPtrArray       *session_rules;   /* patterns allowed for this session only */
  char            *locked_id;       /* the session whose writer lock this holds */
  TallySessionState state;          /* folded over every event */
  TallySnapshotWriter *snapshots;   /* builds the snapshots, off the main loop */
  char            *lost_context;    /* why the model no longer sees all of the transcript */
};

G_DEFINE_FINAL_TYPE (TallySession, tally_session, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_ID,
  PROP_AGENT,
  PROP_TRANSCRIPT,
  PROP_STORE,
  PROP_MODE,
  PROP_BUSY,
  PROP_SPENT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define READ_NOTIFY (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY)
#define FIELD(member) G_STRUCT_OFFSET (TallySession, member)

/* In the order of the PROP_ ids above. */
static const TallyPropertyEntry property_table[N_PROPS - 1] = {
  /**
   * TallySession:id:
   *
   * The session id, a UUID string (#TallyAgent:session-id).
   */
  { "id", G_TYPE_STRING, TALLY_PROPERTY_COMPUTED, NULL, 0, READ_NOTIFY },
  /**
   * TallySession:agent:
   *
   * The #TallyAgent that runs the session's turns; it stays the same for
   * the session's lifetime.
   */
  { "agent", G_TYPE_OBJECT, FIELD (agent), NULL, 0, READ_NOTIFY,
    tally_agent_get_type },
  /**
   * TallySession:transcript:
   *
   * The session's #TallyTranscript, a #GListModel of #TallyBlock.
   */
  { "transcript", G_TYPE_OBJECT, FIELD (transcript), NULL, 0, READ_NOTIFY,
    tally_transcript_get_type },
  /**
   * TallySession:store:
   *
   * The #TallyStore the session is written to, or %NULL for a session
   * kept in memory only.
   */
  { "store", G_TYPE_OBJECT, FIELD (store), NULL, 0, READ_NOTIFY,
    tally_store_get_type },
  /**
   * TallySession:mode:
   *
   * The mode of the session's last turn (ask for a new session); notified
   * when a turn starts in another mode.
   */
  { "mode", G_TYPE_ENUM, FIELD (mode), NULL, TALLY_MODE_ASK, READ_NOTIFY,
    tally_mode_get_type },
  /**
   * TallySession:busy:
   *
   * Whether a turn runs (#TallyAgent:busy).
   */
  { "busy", G_TYPE_BOOLEAN, TALLY_PROPERTY_COMPUTED, NULL, FALSE, READ_NOTIFY },
  /**
   * TallySession:spent:
   *
   * What the session has cost so far in US dollars (#TallyAgent:spent).
   */
  { "spent", G_TYPE_DOUBLE, TALLY_PROPERTY_COMPUTED, NULL, 0, READ_NOTIFY,
    NULL, G_MAXDOUBLE, 0 },
};

#undef FIELD
#undef READ_NOTIFY

static void
tally_session_dispose (GObject *object)
{
  TallySession *self = (TallySession *)object;

  if (self->agent != NULL)
    g_signal_handlers_disconnect_by_data (self->agent, self);
  g_clear_object (&self->agent);
  g_clear_object (&self->transcript);
  g_clear_pointer (&self->snapshots, tally_snapshot_writer_close);
  if (self->locked_id != NULL)
    tally_store_unlock_session (self->store, self->locked_id);
  g_clear_pointer (&self->locked_id, g_free);
  g_clear_object (&self->store);
  g_clear_pointer (&self->session_rules, g_ptr_array_unref);
  g_clear_pointer (&self->lost_context, g_free);
  tally_session_state_clear (&self->state);

  G_OBJECT_CLASS (tally_session_parent_class)->dispose (object);
}

static void
tally_session_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  TallySession *self = TALLY_SESSION (object);

  if (tally_properties_get (object, property_table, G_N_ELEMENTS (property_table), prop_id, value))
    return;

  switch (prop_id)
    {
    case PROP_ID:
      g_value_set_string (value, tally_session_get_id (self));
      break;

    case PROP_BUSY:
      g_value_set_boolean (value, tally_session_is_busy (self));
      break;

    case PROP_SPENT:
      g_value_set_double (value, tally_agent_get_spent (self->agent));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_session_class_init (TallySessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tally_session_dispose;
  object_class->get_property = tally_session_get_property;

  tally_properties_install (object_class, property_table, G_N_ELEMENTS (property_table), properties);
}

static void
tally_session_init (TallySession *self)
{
  self->transcript = tally_transcript_new ();
  self->mode = TALLY_MODE_ASK;
  self->session_rules = g_ptr_array_new_with_free_func (g_free);
}


static void fail_turn_for_store (TallySession *self,
                                 const GError *error);

static void
record_event (TallySession *self,
              JsonObject   *event)
{
  g_autoptr(GError) error = NULL;

  tally_transcript_apply (self->transcript, event);
  tally_session_state_fold (&self->state, event);

  /* A store that cannot be written keeps none of a turn: the turn fails
   * at its first event, before any request is sent, rather than spend
   * and save nothing (docs/architecture.md §10.7). Events emitted outside
   * a turn (the repair at open) are not failed: there is no turn. */
  if (self->store != NULL && tally_store_is_read_only (self->store) && tally_agent_is_busy (self->agent))
    {
      g_autoptr(GError) read_only = g_error_new_literal (TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY,
                                                         tally_store_get_read_only_reason (self->store));

      fail_turn_for_store (self, read_only);
    }

  if (self->store != NULL && !tally_store_is_read_only (self->store) &&
      !tally_store_append_event (self->store, event, &error))
    g_warning ("Could not queue event %" G_GINT64_FORMAT " for the store: %s",
               json_object_get_int_member (event, "seq"), error->message);

  /* A settled turn: the snapshot of settled blocks follows its last event
   * into the store (docs/architecture.md §10.2), so the next open need not
   * replay the log. It is built in the snapshot writer's thread, so the
   * main loop does nothing in proportion to the session's length. */
  if (error == NULL && self->store != NULL && !tally_store_is_read_only (self->store) &&
      tally_event_get_event_type (event) == TALLY_EVENT_TURN_FINISHED)
    {
      if (self->snapshots == NULL)
        self->snapshots = tally_snapshot_writer_new (self->store, tally_agent_get_session_id (self->agent));
      tally_snapshot_writer_settled (self->snapshots, tally_event_get_seq (event));
    }
}

static void
persist_rule_and_plan (TallySession *self,
                       JsonObject   *event)
{
  TallyEventType type = tally_event_get_event_type (event);
  g_autoptr(GError) error = NULL;
  const char *rule = NULL;
  const char *scope = NULL;

  /* The rule of an "Always allow", and how far it reaches */
  if (type == TALLY_EVENT_APPROVAL_RESOLVED &&
      g_strcmp0 (tally_json_object_get_string (event, "decision", NULL), "allow_always") == 0)
    {
      rule = tally_json_object_get_string (event, "rule", NULL);
      scope = tally_json_object_get_string (event, "scope", NULL);
    }

  if (rule != NULL && g_strcmp0 (scope, "session") == 0)
    g_ptr_array_add (self->session_rules, g_strdup (rule));

  if (self->store == NULL || tally_store_is_read_only (self->store))
    return;

  /* "Always allow" keeps the rule the card showed, exactly; session-scoped
   * rules live only as long as the agent. */
  if (rule != NULL && g_strcmp0 (scope, "session") != 0)
    {
      if (g_strcmp0 (scope, "global") != 0)
        scope = "workspace";
      if (tally_store_add_rule (self->store, rule, "allow", scope,
                                g_str_equal (scope, "workspace") ? tally_agent_get_workspace (self->agent) : NULL,
                                &error) < 0)
        g_warning ("Could not keep the rule %s: %s", rule, error->message);
    }
  else if (type == TALLY_EVENT_PLAN_PROPOSED)
    {
      if (!tally_store_save_plan (self->store, tally_json_object_get_string (event, "plan_id", NULL),
                                  json_object_get_int_member_with_default (event, "version", 1),
                                  tally_agent_get_session_id (self->agent),
                                  tally_json_object_get_string (event, "markdown", NULL), &error))
        g_warning ("Could not keep the plan: %s", error->message);
    }
}

/* The agent's properties the session shows as its own: the same name
 * except session-id, which is the session's id. */
static void
agent_notify_cb (TallyAgent   *agent,
                 GParamSpec   *pspec,
                 TallySession *self)
{
  g_assert (TALLY_IS_SESSION (self));

  if (g_str_equal (pspec->name, "session-id"))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ID]);
  else if (g_str_equal (pspec->name, "busy"))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
  else if (g_str_equal (pspec->name, "spent"))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SPENT]);
}

static void
agent_event_cb (TallyAgent   *agent,
                JsonObject   *event,
                TallySession *self)
{
  TallyMode mode = self->mode;

  if (tally_event_get_event_type (event) == TALLY_EVENT_TURN_STARTED &&
      tally_mode_from_string (json_object_get_string_member_with_default (event, "mode", "ask"), &mode) &&
      mode != self->mode)
    {
      self->mode = mode;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODE]);
    }

  record_event (self, event);
  persist_rule_and_plan (self, event);
}

/* Loads the persisted rules that apply to the agent's workspace. */
static void
load_rules (TallySession *self)
{
  g_autoptr(GPtrArray) rules = NULL;
  g_autoptr(GPtrArray) gate_rules = NULL;
  g_autoptr(GError) error = NULL;

  gate_rules = g_ptr_array_new_with_free_func ((GDestroyNotify)tally_gate_rule_free);
  for (guint i = 0; i < self->session_rules->len; i++)
    {
      TallyGateRule *gate_rule = g_new0 (TallyGateRule, 1);

      gate_rule->pattern = g_strdup (g_ptr_array_index (self->session_rules, i));
      gate_rule->allow = TRUE;
      g_ptr_array_add (gate_rules, gate_rule);
    }

  if (self->store == NULL)
    {
      tally_agent_set_rules (self->agent, gate_rules);
      return;
    }

  rules = tally_store_list_rules (self->store, tally_agent_get_workspace (self->agent), &error);
  if (rules == NULL)
    {
      g_warning ("Could not read the permission rules: %s", error->message);
      tally_agent_set_rules (self->agent, gate_rules);
      return;
    }

  for (guint i = 0; i < rules->len; i++)
    {
      TallyRule *rule = g_ptr_array_index (rules, i);
      TallyGateRule *gate_rule = g_new0 (TallyGateRule, 1);

      gate_rule->pattern = g_strdup (rule->pattern);
      gate_rule->allow = g_strcmp0 (rule->decision, "deny") != 0;
      g_ptr_array_add (gate_rules, gate_rule);
    }
  tally_agent_set_rules (self->agent, gate_rules);
}

static void
agent_message_changed_cb (TallyAgent   *agent,
                          guint         index,
                          TallySession *self)
{
  TallyConversation *conversation = tally_agent_get_conversation (agent);
  g_autoptr(GError) error = NULL;

  if (self->store == NULL || tally_store_is_read_only (self->store))
    return;

  if (!tally_store_save_message (self->store, tally_agent_get_session_id (agent), index,
                                 tally_conversation_get_role (conversation, index),
                                 tally_conversation_get_blocks (conversation, index),
                                 &error))
    g_warning ("Could not queue message %u for the store: %s", index, error->message);
}

/* Says what could not be saved and where: the store's messages name the
 * file already; anything else gets its path added. */
static GError *
store_failure (TallySession *self,
               const GError *error)
{
  const char *path = tally_store_get_path (self->store);
  int code = error->domain == TALLY_STORE_ERROR ? error->code : TALLY_STORE_ERROR_IO;

  if (strstr (error->message, path) != NULL)
    return g_error_new (TALLY_STORE_ERROR, code, _("This turn could not be saved. %s"), error->message);
  return g_error_new (TALLY_STORE_ERROR, code, _("This turn could not be saved in the session store “%s”: %s"),
                      path, error->message);
}

/* The store could not keep what the turn wrote: the turn ends failed,
 * saying what was not saved and where (docs/architecture.md §10.7). */
static void
fail_turn_for_store (TallySession *self,
                     const GError *error)
{
  g_autoptr(GError) failure = store_failure (self, error);

  tally_agent_fail_turn (self->agent, "store", failure);
}

static void
store_write_failed_cb (TallyStore   *store,
                       const GError *error,
                       TallySession *self)
{
  if (tally_agent_is_busy (self->agent))
    fail_turn_for_store (self, error);
}

/* Before the turn's last events, everything it wrote so far must be in
 * the file: a turn the store could not keep does not end `done`. */
static void
agent_turn_ending_cb (TallyAgent   *agent,
                      TallySession *self)
{
  g_autoptr(GError) error = NULL;

  if (self->store == NULL || tally_store_is_read_only (self->store))
    return;

  if (!tally_store_flush (self->store, &error))
    fail_turn_for_store (self, error);
}

static TallySession *
session_new_with_agent (TallyStore        *store,
                        TallyClient       *client,
                        TallyToolRegistry *tools)
{
  TallySession *self = g_object_new (TALLY_TYPE_SESSION, NULL);
  g_autoptr(TallyClient) offline_client = NULL;

  if (client == NULL)
    client = offline_client = tally_client_new (NULL, "");

  self->store = store != NULL ? g_object_ref (store) : NULL;
  self->agent = tally_agent_new (client, tools);
  if (store != NULL)
    {
      /* The databases' profile folders, with the analyst's notes, live
       * next to the store file (docs/notes.md). */
      g_autofree char *store_dir = g_path_get_dirname (tally_store_get_path (store));

      tally_agent_set_store_dir (self->agent, store_dir);
    }
  g_signal_connect (self->agent, "event", G_CALLBACK (agent_event_cb), self);
  g_signal_connect (self->agent, "message-changed", G_CALLBACK (agent_message_changed_cb), self);
  g_signal_connect (self->agent, "turn-ending", G_CALLBACK (agent_turn_ending_cb), self);
  g_signal_connect (self->agent, "notify::session-id", G_CALLBACK (agent_notify_cb), self);
  g_signal_connect (self->agent, "notify::busy", G_CALLBACK (agent_notify_cb), self);
  g_signal_connect (self->agent, "notify::spent", G_CALLBACK (agent_notify_cb), self);
  if (store != NULL)
    g_signal_connect_object (store, "write-failed", G_CALLBACK (store_write_failed_cb), self, 0);

  return self;
}

/**
 * tally_session_new:
 * @store: (nullable): where to keep the session, or %NULL for none
 * @client: the Messages API client
 * @tools: the tools the model may call
 *
 * Starts a new session. Nothing is written until the first turn; the
 * session's writer lock (tally_store_lock_session()) is held from now on.
 *
 * Returns: (transfer full): a new #TallySession
 */
TallySession *
tally_session_new (TallyStore        *store,
                   TallyClient       *client,
                   TallyToolRegistry *tools)
{
  g_autoptr(GError) error = NULL;
  TallySession *self;

  g_return_val_if_fail (store == NULL || TALLY_IS_STORE (store), NULL);
  g_return_val_if_fail (TALLY_IS_CLIENT (client), NULL);
  g_return_val_if_fail (TALLY_IS_TOOL_REGISTRY (tools), NULL);

  self = session_new_with_agent (store, client, tools);

  /* A new id: nobody else can hold it, but whoever resumes it while this
   * session lives must find it taken (docs/architecture.md §10.8). */
  if (store != NULL && !tally_store_is_read_only (store))
    {
      const char *id = tally_agent_get_session_id (self->agent);

      if (tally_store_lock_session (store, id, &error))
        self->locked_id = g_strdup (id);
      else
        g_warning ("Could not lock the new session: %s", error->message);
    }

  return self;
}

/* What the log says about the last turn: whether it finished, and how far
 * each of its tool calls got. */
typedef struct {
  const char *turn_id;        /* of the last turn_started, borrowed */
  gboolean    finished;
  GHashTable *tool_state;     /* tool id → "started" / "running" / "answered" */
  GPtrArray  *tool_order;     /* tool ids in order, borrowed */
  TallyUsage  usage;
  guint       api_calls;
  gint64      started_ts;
  gint64      last_ts;
} LastTurn;

static void
scan_last_turn (GPtrArray *events,
                LastTurn  *last)
{
  memset (last, 0, sizeof *last);
  last->tool_state = g_hash_table_new (g_str_hash, g_str_equal);
  last->tool_order = g_ptr_array_new ();
  last->finished = TRUE;

  for (guint i = 0; i < events->len; i++)
    {
      JsonObject *event = g_ptr_array_index (events, i);
      const char *tool_id = tally_event_get_tool_id (event);

      if (json_object_has_member (event, "ts"))
        last->last_ts = json_object_get_int_member (event, "ts");

      switch (tally_event_get_event_type (event))
        {
        case TALLY_EVENT_TURN_STARTED:
          last->turn_id = tally_event_get_turn_id (event);
          last->finished = FALSE;
          g_hash_table_remove_all (last->tool_state);
          g_ptr_array_set_size (last->tool_order, 0);
          memset (&last->usage, 0, sizeof last->usage);
          last->usage.cache_creation_5m = last->usage.cache_creation_1h = -1;
          last->api_calls = 0;
          last->started_ts = last->last_ts;
          break;

        case TALLY_EVENT_TURN_FINISHED:
          last->finished = TRUE;
          break;

        case TALLY_EVENT_API_CALL:
          {
            JsonObject *usage = json_object_get_object_member (event, "usage");
            TallyUsage u = { 0 };

            if (usage != NULL)
              {
                u.input_tokens = json_object_get_int_member_with_default (usage, "input_tokens", 0);
                u.output_tokens = json_object_get_int_member_with_default (usage, "output_tokens", 0);
                u.cache_creation_input_tokens = json_object_get_int_member_with_default (usage, "cache_creation_input_tokens", 0);
                u.cache_read_input_tokens = json_object_get_int_member_with_default (usage, "cache_read_input_tokens", 0);
                u.cache_creation_5m = u.cache_creation_1h = -1;
                u.reported = TRUE;
                tally_usage_add (&last->usage, &u);
              }
            if (tally_json_object_get_string (event, "stop_reason", NULL) != NULL)
              last->api_calls++;
          }
          break;

        case TALLY_EVENT_TOOL_USE_START:
          if (tool_id != NULL)
            {
              g_hash_table_insert (last->tool_state, (gpointer)tool_id, (gpointer)"started");
              g_ptr_array_add (last->tool_order, (gpointer)tool_id);
            }
          break;

        case TALLY_EVENT_APPROVAL_RESOLVED:
          if (tool_id != NULL &&
              g_str_has_prefix (json_object_get_string_member_with_default (event, "decision", ""), "allow"))
            g_hash_table_insert (last->tool_state, (gpointer)tool_id, (gpointer)"running");
          break;

        case TALLY_EVENT_TOOL_RESULT:
          if (tool_id != NULL)
            g_hash_table_insert (last->tool_state, (gpointer)tool_id, (gpointer)"answered");
          break;

        /* Nothing else tells how far the turn got. */
        case TALLY_EVENT_SESSION_CREATED:
        case TALLY_EVENT_REDIRECT:
        case TALLY_EVENT_TEXT_DELTA:
        case TALLY_EVENT_THINKING_DELTA:
        case TALLY_EVENT_BLOCK_DONE:
        case TALLY_EVENT_APPROVAL_REQUEST:
        case TALLY_EVENT_QUESTION_REQUEST:
        case TALLY_EVENT_QUESTION_RESOLVED:
        case TALLY_EVENT_PLAN_PROPOSED:
        case TALLY_EVENT_CHART_CREATED:
        case TALLY_EVENT_REQUEST_SENT:
        case TALLY_EVENT_RETRY:
        case TALLY_EVENT_ERROR:
        case TALLY_EVENT_UNKNOWN:
          break;
        }
    }
}

static void
last_turn_clear (LastTurn *last)
{
  g_clear_pointer (&last->tool_state, g_hash_table_unref);
  g_clear_pointer (&last->tool_order, g_ptr_array_unref);
}

/* A repair event goes through the agent like any event of a turn: it is
 * numbered and stamped there (tally_agent_emit_event()) and comes back
 * through agent_event_cb(), which records it. */
static void
emit_repair_event (TallySession *self,
                   const char   *turn_id,
                   JsonObject   *fields)
{
  tally_agent_emit_event (self->agent, turn_id, fields);
}

/* Closes a turn that the log shows as started but never finished. */
static void
close_interrupted_turn (TallySession *self,
                        LastTurn     *last)
{
  TallyConversation *conversation = tally_agent_get_conversation (self->agent);
  g_autoptr(GHashTable) reasons = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  JsonObject *fields;
  double cost = 0;
  gboolean priced;
  guint repaired;

  for (guint i = 0; i < last->tool_order->len; i++)
    {
      const char *tool_id = g_ptr_array_index (last->tool_order, i);
      const char *state = g_hash_table_lookup (last->tool_state, tool_id);
      TallyOrphanReason reason;
      g_autofree char *message = NULL;

      if (g_strcmp0 (state, "answered") == 0)
        continue;

      reason = g_strcmp0 (state, "running") == 0 ? TALLY_ORPHAN_INTERRUPTED : TALLY_ORPHAN_NEVER_STARTED;
      g_hash_table_insert (reasons, g_strdup (tool_id), GINT_TO_POINTER (reason));
      message = tally_conversation_orphan_message (reason);

      fields = tally_event_new (TALLY_EVENT_TOOL_RESULT);
      json_object_set_string_member (fields, "tool_id", tool_id);
      json_object_set_string_member (fields, "content", message);
      json_object_set_boolean_member (fields, "is_error", TRUE);
      json_object_set_int_member (fields, "duration_ms", 0);
      emit_repair_event (self, last->turn_id, fields);
    }

  /* The conversation on disk already holds every completed message; only
   * the pairing of unanswered tool calls is missing. */
  repaired = tally_conversation_repair (conversation, reasons);
  if (repaired > 0)
    agent_message_changed_cb (self->agent, tally_conversation_get_n_messages (conversation) - 1, self);

  fields = tally_event_new_error ("store",
                                  "Tally stopped before this turn finished. The unfinished reply "
                                  "is kept here; the model will not see it.",
                                  FALSE, NULL);
  emit_repair_event (self, last->turn_id, fields);

  priced = tally_pricing_compute_cost (tally_agent_get_model (self->agent), &last->usage, &cost);
  if (priced)
    tally_agent_set_spent (self->agent, tally_agent_get_spent (self->agent) + cost);
  fields = tally_event_new_turn_finished (TALLY_TURN_FAILED, priced, cost,
                                          MAX (0, (last->last_ts - last->started_ts) / 1000),
                                          last->api_calls);
  tally_event_set_usage (fields, "usage", last->usage.input_tokens, last->usage.output_tokens,
                         last->usage.cache_creation_input_tokens, last->usage.cache_read_input_tokens);
  emit_repair_event (self, last->turn_id, fields);
}

/* The rest of opening, on the main thread, once the session is locked
 * and loaded (tally_session_load()): the agent takes the session's state,
 * the conversation is loaded, an interrupted last turn is closed. The
 * lock is the returned session's; on failure it is released. */
static TallySession *
open_loaded (TallyStore         *store,
             TallySessionInfo   *info,
             TallySessionLoad   *load,
             TallyClient        *client,
             TallyToolRegistry  *tools,
             GError            **error)
{
  g_autoptr(TallySession) self = NULL;
  LastTurn last;

  self = session_new_with_agent (store, client, tools);
  if (!tally_store_is_read_only (store))
    self->locked_id = g_strdup (info->id);

  if (load->snapshot_problem != NULL)
    g_debug ("Session %s replayed from its log: %s", info->id, load->snapshot_problem->message);

  g_set_object (&self->transcript, load->transcript);
  tally_session_state_clear (&self->state);
  self->state = load->state;
  memset (&load->state, 0, sizeof load->state);
  if (self->state.has_mode)
    self->mode = self->state.mode;

  tally_agent_set_session_id (self->agent, info->id);
  if (self->state.model != NULL)
    tally_agent_set_model (self->agent, self->state.model);
  else if (info->model != NULL)
    tally_agent_set_model (self->agent, info->model);
  tally_agent_set_database (self->agent, info->database);
  tally_agent_set_workspace (self->agent, info->workspace);
  if (self->state.plan_id != NULL)
    tally_agent_set_plan (self->agent, self->state.plan_id, self->state.plan_version);

  for (guint i = 0; i < load->warnings->len; i++)
    tally_transcript_add_notice (self->transcript, g_ptr_array_index (load->warnings, i));

  tally_agent_set_next_seq (self->agent, self->state.max_seq + 1);
  tally_agent_set_last_mode (self->agent, self->mode);
  /* The system prompt is rebuilt with the notes it had, not the file's. */
  tally_agent_restore_notes (self->agent, self->state.notes_in_prompt, self->state.notes_told);
  /* What the session has cost so far counts against a spend cap. */
  tally_agent_set_spent (self->agent, self->state.spent);

  if (!tally_store_load_conversation (store, info->id, tally_agent_get_conversation (self->agent), error))
    return NULL;

  /* A history with repeated tool_use ids (docs/protocol.md §5.4) is refused
   * by the API; repair it once and keep the repaired messages. */
  {
    g_autoptr(GArray) changed = g_array_new (FALSE, FALSE, sizeof (guint));

    tally_conversation_repair_duplicate_ids (tally_agent_get_conversation (self->agent), changed);
    for (guint i = 0; i < changed->len; i++)
      agent_message_changed_cb (self->agent, g_array_index (changed, guint, i), self);
  }

  /* Salvage marks a session whose conversation lost a part with an
   * `error` event carrying `context_lost` (docs/architecture.md §10.9):
   * the history sent from now on is shorter than the transcript. */
  for (guint i = load->tail->len; i > 0; i--)
    {
      JsonObject *event = g_ptr_array_index (load->tail, i - 1);

      if (tally_event_get_event_type (event) == TALLY_EVENT_ERROR &&
          tally_json_object_get_bool (event, "context_lost", FALSE))
        {
          g_free (self->lost_context);
          self->lost_context = g_strdup (tally_json_object_get_string (event, "message", NULL));
          break;
        }
    }

  scan_last_turn (load->tail, &last);
  if (!last.finished && last.turn_id != NULL)
    close_interrupted_turn (self, &last);
  last_turn_clear (&last);

  return g_steal_pointer (&self);
}

/**
 * tally_session_open:
 * @store: the store that holds the session
 * @session_id: the session's id, or a unique prefix of it (4+ characters)
 * @client: (nullable): the client for further turns; %NULL opens the session
 *   offline (replay only: sending fails with an authentication error)
 * @tools: the tools the model may call
 * @error: return location for a #GError
 *
 * Opens a saved session: replays its events into the transcript (damaged
 * rows become notices, never a blank session), loads its conversation
 * byte-exact, and continues its numbering, model, mode, database and
 * workspace. An interrupted last turn is closed as described above. Needs no
 * network.
 *
 * The session's writer lock is taken first and held while the session
 * lives (one writer per session, docs/architecture.md §10.8): a session
 * open in another Tally window or process is refused, before anything is
 * read or repaired.
 *
 * Returns: (transfer full) (nullable): the session, or %NULL with @error set
 *   (%TALLY_STORE_ERROR_NOT_FOUND, %TALLY_STORE_ERROR_AMBIGUOUS,
 *   %TALLY_STORE_ERROR_LOCKED, or the store's read errors)
 */
TallySession *
tally_session_open (TallyStore         *store,
                    const char         *session_id,
                    TallyClient        *client,
                    TallyToolRegistry  *tools,
                    GError            **error)
{
  g_autoptr(TallySessionInfo) info = NULL;
  TallySessionLoad load;
  TallySession *self;

  g_return_val_if_fail (TALLY_IS_STORE (store), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);
  g_return_val_if_fail (TALLY_IS_TOOL_REGISTRY (tools), NULL);

  info = tally_store_find_session (store, session_id, error);
  if (info == NULL)
    return NULL;

  if (!tally_store_lock_session (store, info->id, error))
    return NULL;
  /* The snapshot and the events after it, or the whole log. */
  if (!tally_session_load (store, info->id, &load, error))
    {
      if (!tally_store_is_read_only (store))
        tally_store_unlock_session (store, info->id);
      return NULL;
    }
  self = open_loaded (store, info, &load, client, tools, error);
  tally_session_load_clear (&load);

  return self;
}

typedef struct {
  TallyStore        *store;
  char              *session_id;
  TallyClient       *client;
  TallyToolRegistry *tools;
  TallySessionInfo  *info;
  TallySessionLoad   load;
  gboolean           loaded;
  gboolean           locked;
} OpenData;

static void
open_data_free (gpointer data)
{
  OpenData *d = data;

  if (d->loaded)
    tally_session_load_clear (&d->load);
  if (d->locked && !tally_store_is_read_only (d->store))
    tally_store_unlock_session (d->store, d->info->id);
  g_clear_pointer (&d->info, tally_session_info_unref);
  g_clear_object (&d->store);
  g_clear_object (&d->client);
  g_clear_object (&d->tools);
  g_free (d->session_id);
  g_free (d);
}

/* In a worker thread: find, lock and load (reads only, and the snapshot
 * a whole replay writes; nothing that needs the main context). */
static void
open_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  OpenData *d = task_data;
  GError *error = NULL;

  d->info = tally_store_find_session (d->store, d->session_id, &error);
  if (d->info == NULL || !tally_store_lock_session (d->store, d->info->id, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  d->locked = TRUE;
  if (!tally_session_load (d->store, d->info->id, &d->load, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  d->loaded = TRUE;
  g_task_return_boolean (task, TRUE);
}

/* Back on the caller's thread: the session is made there. */
static void
open_loaded_cb (GObject      *source_object,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  OpenData *d = g_task_get_task_data (G_TASK (result));
  GError *error = NULL;
  TallySession *session;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      g_task_return_error (task, error);
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    return;

  /* The session holds the lock from here on, or open_loaded() let it go. */
  d->locked = FALSE;
  session = open_loaded (d->store, d->info, &d->load, d->client, d->tools, &error);
  if (session == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, session, g_object_unref);
}

/**
 * tally_session_open_async:
 * @store: the store that holds the session
 * @session_id: the session's id, or a unique prefix of it (4+ characters)
 * @client: (nullable): as for tally_session_open()
 * @tools: the tools the model may call
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the calling thread's main context when the session
 *   is open or the open failed
 * @user_data: data for @callback
 *
 * tally_session_open() without blocking the main loop: the store is read,
 * the snapshot restored and the events after it replayed (or the whole
 * log, docs/architecture.md §3.3) in a worker thread; the session is then
 * made on the calling thread and handed to @callback. Finish with
 * tally_session_open_finish().
 */
void
tally_session_open_async (TallyStore          *store,
                          const char          *session_id,
                          TallyClient         *client,
                          TallyToolRegistry   *tools,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  GTask *task;
  g_autoptr(GTask) load_task = NULL;
  OpenData *d;

  g_return_if_fail (TALLY_IS_STORE (store));
  g_return_if_fail (session_id != NULL);
  g_return_if_fail (TALLY_IS_TOOL_REGISTRY (tools));

  task = g_task_new (store, cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_session_open_async);

  d = g_new0 (OpenData, 1);
  d->store = g_object_ref (store);
  d->session_id = g_strdup (session_id);
  d->client = client != NULL ? g_object_ref (client) : NULL;
  d->tools = g_object_ref (tools);

  load_task = g_task_new (store, cancellable, open_loaded_cb, task);
  g_task_set_task_data (load_task, d, open_data_free);
  g_task_run_in_thread (load_task, open_thread);
}

/**
 * tally_session_open_finish:
 * @result: the result passed to the callback
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the session, or %NULL with @error
 *   set as for tally_session_open(), or %G_IO_ERROR_CANCELLED
 */
TallySession *
tally_session_open_finish (GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_session_open_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}


/**
 * tally_session_get_id:
 * @self: a #TallySession
 *
 * Returns: (transfer none): the session id
 */
const char *
tally_session_get_id (TallySession *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION (self), NULL);
  return tally_agent_get_session_id (self->agent);
}

/**
 * tally_session_get_agent:
 * @self: a #TallySession
 *
 * Returns: (transfer none): the agent; connect to its #TallyAgent::event
 *   signal to follow the session live
 */
TallyAgent *
tally_session_get_agent (TallySession *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION (self), NULL);
  return self->agent;
}

/**
 * tally_session_get_transcript:
 * @self: a #TallySession
 *
 * Returns: (transfer none): the transcript, a #GListModel of #TallyBlock
 */
TallyTranscript *
tally_session_get_transcript (TallySession *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION (self), NULL);
  return self->transcript;
}

/**
 * tally_session_get_mode:
 * @self: a #TallySession
 *
 * A session stays in the mode of its last turn until told otherwise.
 *
 * Returns: the mode of the last turn (ask for a new session)
 */
TallyMode
tally_session_get_mode (TallySession *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION (self), TALLY_MODE_ASK);
  return self->mode;
}

/**
 * tally_session_get_lost_context:
 * @self: a #TallySession
 *
 * Whether the model no longer sees all of the session's transcript: a
 * salvage (tally_store_salvage()) could not recover all of its
 * conversation and said so with an `error` event carrying `context_lost`
 * at the end of the log. Told by tally_session_open() while that event is
 * in the log the open replays (until the session's next snapshot); the
 * transcript keeps the event as an error block either way.
 *
 * Returns: (transfer none) (nullable): the event's message, or %NULL
 */
const char *
tally_session_get_lost_context (TallySession *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION (self), NULL);
  return self->lost_context;
}

/**
 * tally_session_is_busy:
 * @self: a #TallySession
 *
 * Returns: %TRUE while a turn runs
 */
gboolean
tally_session_is_busy (TallySession *self)
{
  g_return_val_if_fail (TALLY_IS_SESSION (self), FALSE);
  return tally_agent_is_busy (self->agent);
}

static void
send_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TallySession *self = g_task_get_source_object (task);
  GError *error = NULL;
  TallyTurnStatus status;

  status = tally_agent_send_finish (TALLY_AGENT (object), result, &error);

  /* The turn's last events are queued; make them durable before telling
   * the caller the turn is over (a CLI exits right after). If they cannot
   * be written the turn did not end as it says: it failed. */
  if (self->store != NULL && !tally_store_is_read_only (self->store))
    {
      g_autoptr(GError) flush_error = NULL;

      if (!tally_store_flush (self->store, &flush_error))
        {
          g_message ("The session store could not write the end of the turn: %s", flush_error->message);
          if (error == NULL)
            error = store_failure (self, flush_error);
        }
    }

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_int (task, status);
}

/* The task a turn reports to; both kinds of turn (a prompt, a retry)
 * finish with tally_session_send_finish(). */
static GTask *
new_turn_task (TallySession        *self,
               GCancellable        *cancellable,
               GAsyncReadyCallback  callback,
               gpointer             user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, tally_session_send_async);
  g_task_set_check_cancellable (task, FALSE);

  /* Rules may have changed (another window, the workspace): read them
   * before each turn. */
  if (!tally_agent_is_busy (self->agent))
    load_rules (self);
  return task;
}

/**
 * tally_session_send_async:
 * @self: a #TallySession
 * @request: the turn's message, mode and thinking, and the failed turn it
 *   runs again, if any (see #TallyTurnRequest)
 * @cancellable: (nullable): cancels the turn
 * @callback: called when the turn has ended and its events are stored
 * @user_data: data for @callback
 *
 * Runs one turn (see tally_agent_send_async()); events go to the transcript
 * and the store as they happen. A retry adds no new user message: the new
 * turn's `turn_started` names the failed one in `retry_of`. Finish with
 * tally_session_send_finish().
 */
void
tally_session_send_async (TallySession           *self,
                          const TallyTurnRequest *request,
                          GCancellable           *cancellable,
                          GAsyncReadyCallback     callback,
                          gpointer                user_data)
{
  g_return_if_fail (TALLY_IS_SESSION (self));
  g_return_if_fail (request != NULL && request->text != NULL);

  tally_agent_send_async (self->agent, request, cancellable, send_cb,
                          new_turn_task (self, cancellable, callback, user_data));
}

/**
 * tally_session_send_finish:
 * @self: a #TallySession
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Returns: how the turn ended; %TALLY_TURN_FAILED with @error set when it
 *   failed (see tally_agent_send_finish())
 */
TallyTurnStatus
tally_session_send_finish (TallySession  *self,
                           GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (TALLY_IS_SESSION (self), TALLY_TURN_FAILED);
  g_return_val_if_fail (g_task_is_valid (result, self), TALLY_TURN_FAILED);

  return tally_turn_status_propagate (G_TASK (result), error);
}
