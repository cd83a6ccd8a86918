/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-agent"

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tally-agent-private.h"
#include "tally-enums.h"
#include "tally-gate.h"
#include "tally-model-table.h"
#include "tally-pg-source.h"
#include "tally-pricing.h"
#include "tally-properties.h"

/*
 * The agent loop (docs/architecture.md §5): one turn is a chain of API calls.
 * Each call streams a message; when it stops for `tool_use`, every tool_use
 * block is put through the gate, the allowed tools run one after another in
 * worker threads, every tool_use gets a tool_result (denials and failures
 * too), and the next call carries the results. Everything that happens is
 * emitted as a TallyEvent through the "event" signal, in order, with a
 * sequence number that increases by one per event within the session.
 *
 * This file holds the object, its properties and settings; the loop is in
 * tally-agent-turn.c and tally-agent-tools.c (see tally-agent-private.h).
 */

#define DEFAULT_MAX_TOKENS      16000
#define DEFAULT_THINKING_BUDGET 8000

G_DEFINE_FINAL_TYPE (TallyAgent, tally_agent, G_TYPE_OBJECT)

guint tally_agent_signals[N_SIGNALS];
GParamSpec *tally_agent_properties[N_PROPS];

#define NOTIFY (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY)
#define FIELD(member) G_STRUCT_OFFSET (TallyAgent, member)

/* In the order of the PROP_ ids above. */
static const TallyPropertyEntry property_table[N_PROPS - 1] = {
  /**
   * TallyAgent:session-id:
   *
   * The session id, a UUID string; a new agent makes a random one. Setting
   * it continues a stored session (tally_agent_set_session_id()).
   */
  { "session-id", G_TYPE_STRING, FIELD (session_id), NULL, 0, NOTIFY },
  /**
   * TallyAgent:model:
   *
   * The model id of the next turns. Setting an alias of the bundled model
   * table (docs/protocol.md §3) stores the id it resolves to.
   */
  { "model", G_TYPE_STRING, FIELD (model), NULL, 0, NOTIFY },
  /**
   * TallyAgent:database:
   *
   * The absolute path of the SQLite database the tools query, or %NULL.
   */
  { "database", G_TYPE_STRING, FIELD (database), NULL, 0, NOTIFY },
  /**
   * TallyAgent:workspace:
   *
   * The folder the file tools work in, absolute and with symbolic links
   * resolved when it exists, or %NULL.
   */
  { "workspace", G_TYPE_STRING, FIELD (workspace), NULL, 0, NOTIFY },
  /**
   * TallyAgent:max-tokens:
   *
   * The `max_tokens` of each API call, thinking included, in tokens.
   */
  { "max-tokens", G_TYPE_INT64, FIELD (max_tokens), NULL, DEFAULT_MAX_TOKENS, NOTIFY,
    NULL, (double) G_MAXINT64, 1 },
  /**
   * TallyAgent:thinking-budget:
   *
   * The thinking budget in tokens for models that take a manual budget;
   * clamped to 1024 ≤ N < #TallyAgent:max-tokens when sent.
   */
  { "thinking-budget", G_TYPE_INT64, FIELD (thinking_budget), NULL, DEFAULT_THINKING_BUDGET, NOTIFY },
  /**
   * TallyAgent:max-cost:
   *
   * The session's spend cap in force, in US dollars, 0 when there is none
   * (docs/protocol.md §12.4). Reading gives tally_agent_get_max_cost() (a
   * cap raised with tally_agent_raise_max_cost() counts); writing sets the
   * cap as tally_agent_set_max_cost() does.
   */
  { "max-cost", G_TYPE_DOUBLE, TALLY_PROPERTY_COMPUTED, NULL, 0, NOTIFY },
  /**
   * TallyAgent:spent:
   *
   * What the session has cost so far in US dollars (tally_agent_get_spent()):
   * its finished turns and the priced usage of the running one. Notified
   * when it is set, when a response of the running turn reports usage and
   * when a turn ends.
   */
  { "spent", G_TYPE_DOUBLE, TALLY_PROPERTY_COMPUTED, NULL, 0, NOTIFY },
  /**
   * TallyAgent:last-mode:
   *
   * The mode of the session's last turn; a mode reminder is sent only when
   * the next turn's mode differs.
   */
  { "last-mode", G_TYPE_ENUM, FIELD (last_mode), NULL, TALLY_MODE_ASK, NOTIFY,
    tally_mode_get_type },
  /**
   * TallyAgent:approval-timeout:
   *
   * Seconds an approval card waits before it denies, 0 for no limit.
   */
  { "approval-timeout", G_TYPE_UINT, FIELD (approval_timeout_s), NULL, 120, NOTIFY },
  /**
   * TallyAgent:question-timeout:
   *
   * Seconds a question card waits before it is dismissed, 0 for no limit.
   */
  { "question-timeout", G_TYPE_UINT, FIELD (question_timeout_s), NULL, 300, NOTIFY },
  /**
   * TallyAgent:busy:
   *
   * Whether a turn runs: %TRUE from tally_agent_send_async() until the
   * turn's `turn_finished` event has been emitted.
   */
  { "busy", G_TYPE_BOOLEAN, TALLY_PROPERTY_COMPUTED, NULL, FALSE, G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY },
};

#undef FIELD
#undef NOTIFY

static void
tally_agent_dispose (GObject *object)
{
  TallyAgent *self = (TallyAgent *)object;

  g_clear_object (&self->client);
  g_clear_object (&self->tools);
  g_clear_object (&self->conversation);

  G_OBJECT_CLASS (tally_agent_parent_class)->dispose (object);
}

static void
tally_agent_finalize (GObject *object)
{
  TallyAgent *self = (TallyAgent *)object;

  g_free (self->session_id);
  g_free (self->model);
  g_free (self->database);
  g_free (self->workspace);
  g_free (self->store_dir);
  g_free (self->notes_prompt);
  g_free (self->notes_told);
  g_clear_pointer (&self->rules, g_ptr_array_unref);
  g_strfreev (self->sensitive_columns);
  g_clear_pointer (&self->ledger_sent, g_hash_table_unref);
  g_clear_pointer (&self->ledger_origins, g_hash_table_unref);
  g_free (self->plan_id);
  g_free (self->pending_redirect);
  g_free (self->failure_kind);
  g_clear_error (&self->failure);

  G_OBJECT_CLASS (tally_agent_parent_class)->finalize (object);
}

static void
tally_agent_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  TallyAgent *self = TALLY_AGENT (object);

  if (tally_properties_get (object, property_table, G_N_ELEMENTS (property_table), prop_id, value))
    return;

  switch (prop_id)
    {
    case PROP_MAX_COST:
      g_value_set_double (value, tally_agent_get_max_cost (self));
      break;

    case PROP_SPENT:
      g_value_set_double (value, tally_agent_get_spent (self));
      break;

    case PROP_BUSY:
      g_value_set_boolean (value, tally_agent_is_busy (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_agent_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  TallyAgent *self = TALLY_AGENT (object);

  switch (prop_id)
    {
    case PROP_SESSION_ID:
      tally_agent_set_session_id (self, g_value_get_string (value));
      break;

    case PROP_MODEL:
      tally_agent_set_model (self, g_value_get_string (value));
      break;

    case PROP_DATABASE:
      tally_agent_set_database (self, g_value_get_string (value));
      break;

    case PROP_WORKSPACE:
      tally_agent_set_workspace (self, g_value_get_string (value));
      break;

    case PROP_MAX_TOKENS:
      tally_agent_set_max_tokens (self, g_value_get_int64 (value));
      break;

    case PROP_THINKING_BUDGET:
      tally_agent_set_thinking_budget (self, g_value_get_int64 (value));
      break;

    case PROP_MAX_COST:
      tally_agent_set_max_cost (self, g_value_get_double (value));
      break;

    case PROP_SPENT:
      tally_agent_set_spent (self, g_value_get_double (value));
      break;

    case PROP_LAST_MODE:
      tally_agent_set_last_mode (self, g_value_get_enum (value));
      break;

    case PROP_APPROVAL_TIMEOUT:
      tally_agent_set_timeouts (self, g_value_get_uint (value), self->question_timeout_s);
      break;

    case PROP_QUESTION_TIMEOUT:
      tally_agent_set_timeouts (self, self->approval_timeout_s, g_value_get_uint (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_agent_class_init (TallyAgentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tally_agent_dispose;
  object_class->finalize = tally_agent_finalize;
  object_class->get_property = tally_agent_get_property;
  object_class->set_property = tally_agent_set_property;

  tally_properties_install (object_class, property_table, G_N_ELEMENTS (property_table),
                            tally_agent_properties);

  /**
   * TallyAgent::event:
   * @self: the agent
   * @event: (transfer none): the event, a #JsonObject with `type`, `seq`,
   *   `ts`, `session_id`, `turn_id` and its type's fields
   *
   * Emitted for every event of the session, in order (docs/architecture.md
   * §4). Handlers must not keep @event without taking a reference.
   */
  tally_agent_signals[EVENT] =
    g_signal_new ("event",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, JSON_TYPE_OBJECT);

  /**
   * TallyAgent::message-changed:
   * @self: the agent
   * @index: the index of the message in the conversation
   *
   * Emitted when a message of the conversation was added or changed: the
   * user message before each API call (the prompt, tool results), each
   * completed assistant message, and the results added when a turn ends.
   * The store writes the message then, so the history on disk is always one
   * the API accepts.
   */
  tally_agent_signals[MESSAGE_CHANGED] =
    g_signal_new ("message-changed",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_UINT);

  /**
   * TallyAgent::turn-ending:
   * @self: the agent
   *
   * Emitted when a turn is about to end, after the results of its last tool
   * calls and before its `error` (if any) and `turn_finished` events. A
   * handler that must make sure of something first (the session makes the
   * store commit the turn) can still end the turn failed by calling
   * tally_agent_fail_turn().
   */
  tally_agent_signals[TURN_ENDING] =
    g_signal_new ("turn-ending",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);
}

static void
tally_agent_init (TallyAgent *self)
{
  self->conversation = tally_conversation_new ();
  self->session_id = g_uuid_string_random ();
  self->model = g_strdup (tally_model_table_get_default ());
  self->max_tokens = DEFAULT_MAX_TOKENS;
  self->thinking_budget = DEFAULT_THINKING_BUDGET;
  self->next_seq = 1;
  self->last_mode = TALLY_MODE_ASK;
  self->rules = g_ptr_array_new_with_free_func ((GDestroyNotify)tally_gate_rule_free);
  self->approval_timeout_s = 120;
  self->question_timeout_s = 300;
}

/**
 * tally_agent_new:
 * @client: the Messages API client to send with
 * @tools: the tools the model may call
 *
 * Creates an agent for one session, with a new random session id, the
 * default model (`claude-sonnet-5`), `max_tokens` 16000 and a thinking budget
 * of 8000 tokens.
 *
 * Returns: (transfer full): a new #TallyAgent
 */
TallyAgent *
tally_agent_new (TallyClient       *client,
                 TallyToolRegistry *tools)
{
  TallyAgent *self;

  g_return_val_if_fail (TALLY_IS_CLIENT (client), NULL);
  g_return_val_if_fail (TALLY_IS_TOOL_REGISTRY (tools), NULL);

  self = g_object_new (TALLY_TYPE_AGENT, NULL);
  self->client = g_object_ref (client);
  self->tools = g_object_ref (tools);

  return self;
}

/**
 * tally_agent_get_client:
 * @self: a #TallyAgent
 *
 * Returns: (transfer none): the client
 */
TallyClient *
tally_agent_get_client (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);
  return self->client;
}

/**
 * tally_agent_get_conversation:
 * @self: a #TallyAgent
 *
 * Returns: (transfer none): the conversation sent to the API
 */
TallyConversation *
tally_agent_get_conversation (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);
  return self->conversation;
}

/**
 * tally_agent_get_session_id:
 * @self: a #TallyAgent
 *
 * Returns: (transfer none): the session id (a UUID string)
 */
const char *
tally_agent_get_session_id (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);
  return self->session_id;
}

/**
 * tally_agent_set_session_id:
 * @self: a #TallyAgent
 * @session_id: the id of a resumed session
 *
 * Continues an existing session: no `session_created` event is emitted.
 */
void
tally_agent_set_session_id (TallyAgent *self,
                            const char *session_id)
{
  g_return_if_fail (TALLY_IS_AGENT (self));
  g_return_if_fail (session_id != NULL);

  self->session_announced = TRUE;
  tally_properties_set_string (G_OBJECT (self), &self->session_id, session_id,
                               tally_agent_properties[PROP_SESSION_ID]);
}

/**
 * tally_agent_get_model:
 * @self: a #TallyAgent
 *
 * Returns: (transfer none): the model id
 */
const char *
tally_agent_get_model (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);
  return self->model;
}

/**
 * tally_agent_set_model:
 * @self: a #TallyAgent
 * @model: a model id or an alias from the bundled table
 *
 * Sets the model of the next turns (aliases resolve to ids).
 */
void
tally_agent_set_model (TallyAgent *self,
                       const char *model)
{
  g_return_if_fail (TALLY_IS_AGENT (self));
  g_return_if_fail (model != NULL);

  tally_properties_set_string (G_OBJECT (self), &self->model, tally_model_table_resolve (model),
                               tally_agent_properties[PROP_MODEL]);
}

/**
 * tally_agent_get_database:
 * @self: a #TallyAgent
 *
 * Returns: (transfer none) (nullable): the database path
 */
const char *
tally_agent_get_database (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);
  return self->database;
}

/**
 * tally_agent_set_database:
 * @self: a #TallyAgent
 * @path: (nullable): path of the SQLite database the tools query, or a
 *   PostgreSQL connection string or URI (tally_pg_conninfo_is())
 *
 * Sets the analyst's database. A path is made absolute; a connection
 * string is kept as given, and stored in the session without its password.
 */
void
tally_agent_set_database (TallyAgent *self,
                          const char *path)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  /* A PostgreSQL connection string is kept as given (docs/postgresql.md). */
  tally_properties_take_string (G_OBJECT (self), &self->database,
                                path == NULL ? NULL :
                                tally_pg_conninfo_is (path) ? g_strdup (path) :
                                g_canonicalize_filename (path, NULL),
                                tally_agent_properties[PROP_DATABASE]);
}

/**
 * tally_agent_get_workspace:
 * @self: a #TallyAgent
 *
 * Returns: (transfer none) (nullable): the workspace folder
 */
const char *
tally_agent_get_workspace (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);
  return self->workspace;
}

/**
 * tally_agent_set_workspace:
 * @self: a #TallyAgent
 * @path: (nullable): the session's workspace folder
 *
 * Sets the folder the file tools work in. The path is made absolute and
 * symbolic links in it are resolved when the folder exists.
 */
void
tally_agent_set_workspace (TallyAgent *self,
                           const char *path)
{
  g_autofree char *absolute = NULL;
  char *workspace = NULL;
  char *real;

  g_return_if_fail (TALLY_IS_AGENT (self));

  if (path != NULL)
    {
      absolute = g_canonicalize_filename (path, NULL);
      real = realpath (absolute, NULL);
      if (real != NULL)
        {
          workspace = g_strdup (real);
          free (real);
        }
      else
        workspace = g_steal_pointer (&absolute);
    }

  tally_properties_take_string (G_OBJECT (self), &self->workspace, workspace,
                                tally_agent_properties[PROP_WORKSPACE]);
}

/**
 * tally_agent_set_max_tokens:
 * @self: a #TallyAgent
 * @max_tokens: the requests' `max_tokens`, thinking included
 *
 * Sets the output cap of each API call (default 16000).
 */
void
tally_agent_set_max_tokens (TallyAgent *self,
                            gint64      max_tokens)
{
  g_return_if_fail (TALLY_IS_AGENT (self));
  g_return_if_fail (max_tokens > 0);

  tally_properties_set_int64 (G_OBJECT (self), &self->max_tokens, max_tokens,
                              tally_agent_properties[PROP_MAX_TOKENS]);
}

/**
 * tally_agent_set_thinking_budget:
 * @self: a #TallyAgent
 * @budget_tokens: the thinking budget in tokens for models that take a
 *   manual budget (clamped to 1024 ≤ N < max_tokens when sent)
 *
 * Sets the thinking budget (default 8000).
 */
void
tally_agent_set_thinking_budget (TallyAgent *self,
                                 gint64      budget_tokens)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  tally_properties_set_int64 (G_OBJECT (self), &self->thinking_budget, budget_tokens,
                              tally_agent_properties[PROP_THINKING_BUDGET]);
}

/**
 * tally_agent_set_max_cost:
 * @self: a #TallyAgent
 * @max_cost_usd: the session's spend cap in US dollars; 0 (or less) turns
 *   it off
 *
 * Sets the spend cap. Before each API call the agent compares
 * tally_agent_get_spent() with the cap; once it is reached the turn ends
 * `failed` with an `error` event of kind `budget` and nothing is sent
 * (docs/protocol.md §12.4). A cap raised with tally_agent_raise_max_cost()
 * stays in force while it is higher.
 */
void
tally_agent_set_max_cost (TallyAgent *self,
                          double      max_cost_usd)
{
  double in_force;

  g_return_if_fail (TALLY_IS_AGENT (self));

  in_force = tally_agent_get_max_cost (self);
  self->max_cost_usd = MAX (max_cost_usd, 0);
  if (tally_agent_get_max_cost (self) != in_force)
    g_object_notify_by_pspec (G_OBJECT (self), tally_agent_properties[PROP_MAX_COST]);
}

/**
 * tally_agent_raise_max_cost:
 * @self: a #TallyAgent
 * @max_cost_usd: the new cap for this session, in US dollars
 *
 * Raises the spend cap for the rest of this agent's session only (the
 * window's "raise the cap" button); the setting set with
 * tally_agent_set_max_cost() is unchanged, and a cap that is off stays off.
 */
void
tally_agent_raise_max_cost (TallyAgent *self,
                            double      max_cost_usd)
{
  double in_force;

  g_return_if_fail (TALLY_IS_AGENT (self));

  in_force = tally_agent_get_max_cost (self);
  self->raised_cost_usd = MAX (self->raised_cost_usd, max_cost_usd);
  if (tally_agent_get_max_cost (self) != in_force)
    g_object_notify_by_pspec (G_OBJECT (self), tally_agent_properties[PROP_MAX_COST]);
}

/**
 * tally_agent_get_max_cost:
 * @self: a #TallyAgent
 *
 * Returns: the spend cap in force in US dollars (the higher of the set and
 *   the raised cap), or 0 when there is none
 */
double
tally_agent_get_max_cost (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), 0);

  if (self->max_cost_usd <= 0)
    return 0;
  return MAX (self->max_cost_usd, self->raised_cost_usd);
}

/**
 * tally_agent_set_spent:
 * @self: a #TallyAgent
 * @spent_usd: what the session's finished turns cost, in US dollars
 *
 * Tells a resumed agent what its session has cost so far (the sum of the
 * stored `turn_finished.cost_usd`); each turn that finishes adds its own.
 */
void
tally_agent_set_spent (TallyAgent *self,
                       double      spent_usd)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  spent_usd = MAX (spent_usd, 0);
  if (self->spent_usd == spent_usd)
    return;

  self->spent_usd = spent_usd;
  g_object_notify_by_pspec (G_OBJECT (self), tally_agent_properties[PROP_SPENT]);
}

/**
 * tally_agent_get_spent:
 * @self: a #TallyAgent
 *
 * What the session has cost so far: every finished turn plus, during a
 * turn, the responses of this turn that reported usage. Usage of a model
 * without a price counts as nothing (Tally never invents a figure).
 *
 * Returns: the cost in US dollars
 */
double
tally_agent_get_spent (TallyAgent *self)
{
  double turn_cost = 0;

  g_return_val_if_fail (TALLY_IS_AGENT (self), 0);

  if (self->turn_task != NULL)
    {
      Turn *turn = g_task_get_task_data (self->turn_task);

      if (!tally_pricing_compute_cost (self->model, &turn->usage, &turn_cost))
        turn_cost = 0;
    }

  return self->spent_usd + turn_cost;
}

/**
 * tally_agent_set_next_seq:
 * @self: a #TallyAgent
 * @seq: the sequence number of the next event
 *
 * Continues the numbering of a resumed session's events.
 */
void
tally_agent_set_next_seq (TallyAgent *self,
                          gint64      seq)
{
  g_return_if_fail (TALLY_IS_AGENT (self));
  g_return_if_fail (seq >= 1);

  self->next_seq = seq;
}

/**
 * tally_agent_get_next_seq:
 * @self: a #TallyAgent
 *
 * Returns: the sequence number the next event will get
 */
gint64
tally_agent_get_next_seq (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), 0);
  return self->next_seq;
}

/**
 * tally_agent_set_last_mode:
 * @self: a #TallyAgent
 * @mode: the mode of the session's last turn
 *
 * Tells a resumed agent which mode the session was in, so that a mode
 * reminder is sent only when the mode changes.
 */
void
tally_agent_set_last_mode (TallyAgent *self,
                           TallyMode   mode)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  if (self->last_mode == mode)
    return;

  self->last_mode = mode;
  g_object_notify_by_pspec (G_OBJECT (self), tally_agent_properties[PROP_LAST_MODE]);
}

/**
 * tally_agent_is_busy:
 * @self: a #TallyAgent
 *
 * Returns: %TRUE while a turn runs
 */
gboolean
tally_agent_is_busy (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);
  return self->turn_task != NULL;
}
/**
 * tally_agent_take_redirect:
 * @self: a #TallyAgent
 *
 * Returns: (transfer full) (nullable): text typed during the last turn that
 *   could not go out with tool results, to be sent as the next message
 */
char *
tally_agent_take_redirect (TallyAgent *self)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);
  return g_steal_pointer (&self->pending_redirect);
}

/**
 * tally_agent_set_timeouts:
 * @self: a #TallyAgent
 * @approval_timeout_s: seconds an approval card waits, 0 = forever
 * @question_timeout_s: seconds a question card waits, 0 = forever
 *
 * Sets the card timeouts (defaults 120 and 300 s). A timeout denies, never
 * allows.
 */
void
tally_agent_set_timeouts (TallyAgent *self,
                          guint       approval_timeout_s,
                          guint       question_timeout_s)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  tally_properties_set_uint (G_OBJECT (self), &self->approval_timeout_s, approval_timeout_s,
                             tally_agent_properties[PROP_APPROVAL_TIMEOUT]);
  tally_properties_set_uint (G_OBJECT (self), &self->question_timeout_s, question_timeout_s,
                             tally_agent_properties[PROP_QUESTION_TIMEOUT]);
}

/**
 * tally_agent_set_rules:
 * @self: a #TallyAgent
 * @rules: (element-type TallyGateRule) (transfer none): the persisted rules
 *   in force for the workspace (copied)
 *
 * Replaces the rules the gate reads.
 */
void
tally_agent_set_rules (TallyAgent *self,
                       GPtrArray  *rules)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  g_ptr_array_set_size (self->rules, 0);
  for (guint i = 0; rules != NULL && i < rules->len; i++)
    {
      TallyGateRule *rule = g_ptr_array_index (rules, i);
      tally_agent_add_rule (self, rule->pattern, rule->allow);
    }
}

/**
 * tally_agent_add_rule:
 * @self: a #TallyAgent
 * @pattern: a rule pattern (see #TallyGateRule)
 * @allow: %TRUE for allow, %FALSE for deny
 *
 * Adds a rule for the rest of the session (the session also persists rules
 * whose scope is not `session`).
 */
void
tally_agent_add_rule (TallyAgent *self,
                      const char *pattern,
                      gboolean    allow)
{
  TallyGateRule *rule;

  g_return_if_fail (TALLY_IS_AGENT (self));
  g_return_if_fail (pattern != NULL);

  rule = g_new0 (TallyGateRule, 1);
  rule->pattern = g_strdup (pattern);
  rule->allow = allow;
  g_ptr_array_add (self->rules, rule);
}

/**
 * tally_agent_set_plan:
 * @self: a #TallyAgent
 * @plan_id: (nullable): the session's plan id
 * @version: its latest version
 *
 * Continues a resumed session's plan: the next `ExitPlanMode` is version
 * @version + 1 of the same plan.
 */
void
tally_agent_set_plan (TallyAgent *self,
                      const char *plan_id,
                      gint64      version)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  g_free (self->plan_id);
  self->plan_id = g_strdup (plan_id);
  self->plan_version = version;
}
