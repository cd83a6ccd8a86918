/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-agent"

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tally-agent.h"
#include "tally-api-error.h"
#include "tally-enums.h"
#include "tally-event.h"
#include "tally-gate.h"
#include "tally-model-table.h"
#include "tally-questions.h"
#include "tally-pricing.h"

/*
 * The agent loop (docs/architecture.md §5): one turn is a chain of API calls.
 * Each call streams a message; when it stops for `tool_use`, every tool_use
 * block is put through the gate, the allowed tools run one after another in
 * worker threads, every tool_use gets a tool_result (denials and failures
 * too), and the next call carries the results. Everything that happens is
 * emitted as a TallyEvent through the "event" signal, in order, with a
 * sequence number that increases by one per event within the session.
 */

#define DEFAULT_MAX_TOKENS      16000
#define DEFAULT_THINKING_BUDGET 8000

struct _TallyAgent
{
  GObject             parent_instance;

  TallyClient        *client;
  TallyToolRegistry  *tools;
  TallyConversation  *conversation;

  char               *session_id;
  char               *model;
  char               *database;
  char               *workspace;
  gint64              max_tokens;
  gint64              thinking_budget;

  /* the spend cap (docs/protocol.md §12.4): USD, 0 = off */
  double              max_cost_usd;
  double              raised_cost_usd;    /* raised for this session, 0 = not */
  double              spent_usd;          /* finished turns, resumed ones included */
  gint64              next_seq;
  TallyMode           last_mode;
  gboolean            session_announced;

  /* the gate */
  GPtrArray          *rules;              /* TallyGateRule* */
  guint               approval_timeout_s;
  guint               question_timeout_s;

  /* plans: refinements are new versions of the session's plan */
  char               *plan_id;
  gint64              plan_version;

  /* a redirect that arrived too late to go with tool results */
  char               *pending_redirect;

  /* tally_agent_fail_turn(): ends the running turn failed at its next step */
  char               *failure_kind;
  GError             *failure;

  GTask              *turn_task;
};

G_DEFINE_FINAL_TYPE (TallyAgent, tally_agent, G_TYPE_OBJECT)

enum {
  EVENT,
  MESSAGE_CHANGED,
  TURN_ENDING,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

enum {
  PROP_0,
  PROP_SESSION_ID,
  PROP_MODEL,
  PROP_DATABASE,
  PROP_WORKSPACE,
  PROP_MAX_TOKENS,
  PROP_THINKING_BUDGET,
  PROP_MAX_COST,
  PROP_SPENT,
  PROP_LAST_MODE,
  PROP_APPROVAL_TIMEOUT,
  PROP_QUESTION_TIMEOUT,
  PROP_BUSY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Replaces the string in @field with @value (transfer full). Returns
 * whether the value changed, for the setters that notify only then. */
static gboolean
replace_string (char **field,
                char  *value)
{
  if (g_strcmp0 (*field, value) == 0)
    {
      g_free (value);
      return FALSE;
    }

  g_free (*field);
  *field = value;
  return TRUE;
}

typedef enum {
  PENDING_NONE,
  PENDING_APPROVAL,
  PENDING_QUESTION,
} PendingKind;

typedef struct {
  char               *turn_id;
  TallyMode           mode;
  gboolean            thinking;
  gint64              budget_used;
  char               *thinking_json;
  char               *system_prompt;
  char               *tools_json;
  TallyToolContext    context;

  guint               call;
  guint               api_calls;
  TallyUsage          usage;
  gint64              started_us;

  TallyMessageStream *stream;
  GPtrArray          *tool_uses;    /* JsonObject*, the tool_use blocks of the last message */
  guint               tool_index;
  gint64              tool_started_us;
  GHashTable         *answered;     /* tool_use ids with a tool_result event */
  GHashTable         *orphans;      /* tool_use id → TallyOrphanReason */
  GHashTable         *refusals;     /* tool_use id → why it must not run (a repeated id, a bad input) */
  GHashTable         *duplicates;   /* fresh tool_use id → the id the model repeated */
  char               *last_request_id;
  guint               last_status;  /* HTTP status of the last attempt, 0 = none */

  /* a parked card */
  PendingKind         pending_kind;
  char               *pending_id;
  guint               pending_timeout;
  JsonArray          *pending_suggestions;
  gboolean            pending_outside;
  gulong              cancelled_handler;
  GCancellable       *cancellable;

  /* text the analyst typed while the turn ran */
  GString            *redirect;
} Turn;

static void
turn_free (gpointer data)
{
  Turn *turn = data;

  g_free (turn->turn_id);
  g_free (turn->thinking_json);
  g_free (turn->system_prompt);
  g_free (turn->tools_json);
  g_free (turn->context.database_path);
  g_free (turn->context.workspace);
  g_free (turn->last_request_id);
  g_clear_handle_id (&turn->pending_timeout, g_source_remove);
  g_free (turn->pending_id);
  g_clear_pointer (&turn->pending_suggestions, json_array_unref);
  if (turn->redirect != NULL)
    g_string_free (turn->redirect, TRUE);
  g_clear_object (&turn->cancellable);
  g_clear_object (&turn->stream);
  g_clear_pointer (&turn->tool_uses, g_ptr_array_unref);
  g_clear_pointer (&turn->answered, g_hash_table_unref);
  g_clear_pointer (&turn->orphans, g_hash_table_unref);
  g_clear_pointer (&turn->refusals, g_hash_table_unref);
  g_clear_pointer (&turn->duplicates, g_hash_table_unref);
  g_free (turn);
}

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
  g_clear_pointer (&self->rules, g_ptr_array_unref);
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

  switch (prop_id)
    {
    case PROP_SESSION_ID:
      g_value_set_string (value, self->session_id);
      break;

    case PROP_MODEL:
      g_value_set_string (value, self->model);
      break;

    case PROP_DATABASE:
      g_value_set_string (value, self->database);
      break;

    case PROP_WORKSPACE:
      g_value_set_string (value, self->workspace);
      break;

    case PROP_MAX_TOKENS:
      g_value_set_int64 (value, self->max_tokens);
      break;

    case PROP_THINKING_BUDGET:
      g_value_set_int64 (value, self->thinking_budget);
      break;

    case PROP_MAX_COST:
      g_value_set_double (value, tally_agent_get_max_cost (self));
      break;

    case PROP_SPENT:
      g_value_set_double (value, tally_agent_get_spent (self));
      break;

    case PROP_LAST_MODE:
      g_value_set_enum (value, self->last_mode);
      break;

    case PROP_APPROVAL_TIMEOUT:
      g_value_set_uint (value, self->approval_timeout_s);
      break;

    case PROP_QUESTION_TIMEOUT:
      g_value_set_uint (value, self->question_timeout_s);
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

  /**
   * TallyAgent:session-id:
   *
   * The session id, a UUID string; a new agent makes a random one. Setting
   * it continues a stored session (tally_agent_set_session_id()).
   */
  properties[PROP_SESSION_ID] =
    g_param_spec_string ("session-id", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:model:
   *
   * The model id of the next turns. Setting an alias of the bundled model
   * table (docs/protocol.md §3) stores the id it resolves to.
   */
  properties[PROP_MODEL] =
    g_param_spec_string ("model", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:database:
   *
   * The absolute path of the SQLite database the tools query, or %NULL.
   */
  properties[PROP_DATABASE] =
    g_param_spec_string ("database", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:workspace:
   *
   * The folder the file tools work in, absolute and with symbolic links
   * resolved when it exists, or %NULL.
   */
  properties[PROP_WORKSPACE] =
    g_param_spec_string ("workspace", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:max-tokens:
   *
   * The `max_tokens` of each API call, thinking included, in tokens.
   */
  properties[PROP_MAX_TOKENS] =
    g_param_spec_int64 ("max-tokens", NULL, NULL,
                        1, G_MAXINT64, DEFAULT_MAX_TOKENS,
                        (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:thinking-budget:
   *
   * The thinking budget in tokens for models that take a manual budget;
   * clamped to 1024 ≤ N < #TallyAgent:max-tokens when sent.
   */
  properties[PROP_THINKING_BUDGET] =
    g_param_spec_int64 ("thinking-budget", NULL, NULL,
                        G_MININT64, G_MAXINT64, DEFAULT_THINKING_BUDGET,
                        (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:max-cost:
   *
   * The session's spend cap in force, in US dollars, 0 when there is none
   * (docs/protocol.md §12.4). Reading gives tally_agent_get_max_cost() (a
   * cap raised with tally_agent_raise_max_cost() counts); writing sets the
   * cap as tally_agent_set_max_cost() does.
   */
  properties[PROP_MAX_COST] =
    g_param_spec_double ("max-cost", NULL, NULL,
                         -G_MAXDOUBLE, G_MAXDOUBLE, 0,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:spent:
   *
   * What the session has cost so far in US dollars (tally_agent_get_spent()):
   * its finished turns and the priced usage of the running one. Notified
   * when it is set, when a response of the running turn reports usage and
   * when a turn ends.
   */
  properties[PROP_SPENT] =
    g_param_spec_double ("spent", NULL, NULL,
                         -G_MAXDOUBLE, G_MAXDOUBLE, 0,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:last-mode:
   *
   * The mode of the session's last turn; a mode reminder is sent only when
   * the next turn's mode differs.
   */
  properties[PROP_LAST_MODE] =
    g_param_spec_enum ("last-mode", NULL, NULL,
                       TALLY_TYPE_MODE, TALLY_MODE_ASK,
                       (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:approval-timeout:
   *
   * Seconds an approval card waits before it denies, 0 for no limit.
   */
  properties[PROP_APPROVAL_TIMEOUT] =
    g_param_spec_uint ("approval-timeout", NULL, NULL,
                       0, G_MAXUINT, 120,
                       (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:question-timeout:
   *
   * Seconds a question card waits before it is dismissed, 0 for no limit.
   */
  properties[PROP_QUESTION_TIMEOUT] =
    g_param_spec_uint ("question-timeout", NULL, NULL,
                       0, G_MAXUINT, 300,
                       (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TallyAgent:busy:
   *
   * Whether a turn runs: %TRUE from tally_agent_send_async() until the
   * turn's `turn_finished` event has been emitted.
   */
  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL,
                          FALSE,
                          (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * TallyAgent::event:
   * @self: the agent
   * @event: (transfer none): the event, a #JsonObject with `type`, `seq`,
   *   `ts`, `session_id`, `turn_id` and its type's fields
   *
   * Emitted for every event of the session, in order (docs/architecture.md
   * §4). Handlers must not keep @event without taking a reference.
   */
  signals[EVENT] =
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
  signals[MESSAGE_CHANGED] =
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
  signals[TURN_ENDING] =
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
  if (replace_string (&self->session_id, g_strdup (session_id)))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION_ID]);
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

  if (replace_string (&self->model, g_strdup (tally_model_table_resolve (model))))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODEL]);
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
 * @path: (nullable): path of the SQLite database the tools query
 *
 * Sets the analyst's database. The path is made absolute.
 */
void
tally_agent_set_database (TallyAgent *self,
                          const char *path)
{
  g_return_if_fail (TALLY_IS_AGENT (self));

  if (replace_string (&self->database, path != NULL ? g_canonicalize_filename (path, NULL) : NULL))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DATABASE]);
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

  if (replace_string (&self->workspace, workspace))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WORKSPACE]);
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

  if (self->max_tokens == max_tokens)
    return;

  self->max_tokens = max_tokens;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_TOKENS]);
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

  if (self->thinking_budget == budget_tokens)
    return;

  self->thinking_budget = budget_tokens;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_THINKING_BUDGET]);
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
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_COST]);
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
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_COST]);
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
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SPENT]);
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
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_MODE]);
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
 * tally_agent_dup_system_prompt:
 * @self: a #TallyAgent
 *
 * Builds Tally's instructions for the model (docs/protocol.md §2.1). The
 * text depends only on the database and the workspace, never on the mode or
 * the turn, so it stays byte-identical across turns and the prompt cache
 * keeps hitting.
 *
 * Returns: (transfer full): the system prompt
 */
char *
tally_agent_dup_system_prompt (TallyAgent *self)
{
  g_autofree char *db_name = NULL;
  GString *prompt;

  g_return_val_if_fail (TALLY_IS_AGENT (self), NULL);

  prompt = g_string_new (NULL);
  g_string_append (prompt,
    "You are Tally, a careful data analyst working with a person (the analyst) on their "
    "own data. You answer questions by querying the data with your tools, and you say "
    "what you found plainly, with the numbers that back it.\n\n");

  if (self->database != NULL)
    {
      db_name = g_path_get_basename (self->database);
      g_string_append_printf (prompt,
        "# Data\nThe analyst's database is the SQLite file \"%s\". Call get_schema to learn its "
        "tables, columns and row counts before writing SQL, and use query_database to run one "
        "read-only SELECT at a time. Prefer aggregates over dumping rows; results are capped.\n\n",
        db_name);
    }
  else
    g_string_append (prompt, "# Data\nNo database is open in this session.\n\n");

  if (self->workspace != NULL)
    g_string_append_printf (prompt,
      "# Workspace\nThe session's workspace folder is %s. Read, Glob and Grep work on files "
      "inside it; paths may be relative to it.\n\n", self->workspace);
  else
    g_string_append (prompt, "# Workspace\nNo workspace folder is set in this session.\n\n");

  g_string_append (prompt,
    "# Presenting results\n"
    "- Put figures in Markdown tables with units in the column headers (e.g. \"Revenue (GBP)\").\n"
    "- Round sensibly and say how (e.g. to the nearest pound), and name the period a figure covers.\n"
    "- Say when the data looks wrong (duplicates, gaps, outliers) instead of hiding it.\n"
    "- Show the SQL that produced a figure when the analyst asks for it.\n\n"
    "# Asking before guessing\n"
    "When a request leaves open a choice that would change the result — the period, the "
    "grouping, the metric, which stores, products or other entities, whether to draw a chart — "
    "do not guess. Ask first with the AskUserQuestion tool when it is available, with two to four "
    "short options; never ask such a question in prose. Ask one round of questions, then do the "
    "work. A request that is already specific needs no question. A cheap read-only query before "
    "asking is welcome, so that the options name real things from the data.\n\n"
    "# Modes\n"
    "The analyst may switch between modes; a short reminder in their message tells you when. "
    "In plan mode, explore read-only and then hand over a plan instead of changing anything.\n");

  return g_string_free (prompt, FALSE);
}

/* Events */

static void
emit_event (TallyAgent *self,
            const char *turn_id,
            JsonObject *fields)
{
  g_autoptr(JsonObject) event = NULL;

  event = tally_event_stamp (fields, self->next_seq++, g_get_real_time (),
                             self->session_id, turn_id);
  json_object_unref (fields);

  g_signal_emit (self, signals[EVENT], 0, event);
}

static TallyAgent *
turn_agent (GTask *task)
{
  return g_task_get_source_object (task);
}

static void
turn_emit (GTask      *task,
           JsonObject *fields)
{
  Turn *turn = g_task_get_task_data (task);

  emit_event (turn_agent (task), turn->turn_id, fields);
}

static void
set_usage_member (JsonObject       *event,
                  const TallyUsage *usage)
{
  tally_event_set_usage (event, "usage",
                         usage->input_tokens, usage->output_tokens,
                         usage->cache_creation_input_tokens,
                         usage->cache_read_input_tokens);
}

static void
emit_last_message_changed (TallyAgent *self)
{
  guint n = tally_conversation_get_n_messages (self->conversation);

  if (n > 0)
    g_signal_emit (self, signals[MESSAGE_CHANGED], 0, n - 1);
}

/* Turn end */

static void
emit_tool_result (GTask      *task,
                  const char *tool_id,
                  const char *content,
                  gboolean    is_error,
                  gint64      duration_ms)
{
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event = tally_event_new (TALLY_EVENT_TOOL_RESULT);

  json_object_set_string_member (event, "tool_id", tool_id);
  json_object_set_string_member (event, "content", content);
  json_object_set_boolean_member (event, "is_error", is_error);
  json_object_set_int_member (event, "duration_ms", duration_ms);
  turn_emit (task, event);

  g_hash_table_add (turn->answered, g_strdup (tool_id));
}

static void
finish_turn (GTask           *task,
             TallyTurnStatus  status,
             GError          *error)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autoptr(GPtrArray) pending = NULL;
  g_autoptr(GError) owned_error = error;
  JsonObject *event;
  double cost = 0;
  gboolean priced;

  /* Leave the conversation valid: every tool_use of the last message gets a
   * result now, in the log as in the history, saying what happened. */
  pending = tally_conversation_dup_pending_tool_uses (self->conversation);
  for (guint i = 0; i < pending->len; i++)
    {
      JsonObject *block = g_ptr_array_index (pending, i);
      const char *id = json_object_get_string_member_with_default (block, "id", "");
      TallyOrphanReason reason = GPOINTER_TO_INT (g_hash_table_lookup (turn->orphans, id));
      g_autofree char *message = tally_conversation_orphan_message (reason);

      tally_conversation_add_tool_result (self->conversation, id, message, TRUE);
      if (!g_hash_table_contains (turn->answered, id))
        emit_tool_result (task, id, message, TRUE, 0);
    }
  if (pending->len > 0)
    emit_last_message_changed (self);

  if (turn->stream != NULL)
    g_signal_handlers_disconnect_matched (turn->stream, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, task);
  if (turn->cancelled_handler != 0)
    g_cancellable_disconnect (turn->cancellable, turn->cancelled_handler);
  turn->cancelled_handler = 0;
  g_clear_handle_id (&turn->pending_timeout, g_source_remove);
  turn->pending_kind = PENDING_NONE;

  /* Text typed during the turn that never went out with tool results is
   * handed back for the next prompt. */
  if (turn->redirect != NULL && turn->redirect->len > 0)
    {
      g_free (self->pending_redirect);
      self->pending_redirect = g_string_free (g_steal_pointer (&turn->redirect), FALSE);
    }

  /* A failure reported from outside the loop (the store could not keep
   * the turn) ends it failed, with its own error event. */
  g_signal_emit (self, signals[TURN_ENDING], 0);
  if (self->failure != NULL)
    {
      event = tally_event_new (TALLY_EVENT_ERROR);
      json_object_set_string_member (event, "kind", self->failure_kind);
      json_object_set_string_member (event, "message", self->failure->message);
      json_object_set_boolean_member (event, "retryable", FALSE);
      json_object_set_null_member (event, "request_id");
      turn_emit (task, event);

      if (status != TALLY_TURN_FAILED || owned_error == NULL)
        {
          g_clear_error (&owned_error);
          owned_error = g_error_copy (self->failure);
        }
      status = TALLY_TURN_FAILED;
      g_clear_error (&self->failure);
      g_clear_pointer (&self->failure_kind, g_free);
    }

  priced = tally_pricing_compute_cost (self->model, &turn->usage, &cost);

  event = tally_event_new (TALLY_EVENT_TURN_FINISHED);
  json_object_set_string_member (event, "status", tally_turn_status_to_string (status));
  if (priced)
    json_object_set_double_member (event, "cost_usd", cost);
  else
    json_object_set_null_member (event, "cost_usd");
  json_object_set_int_member (event, "duration_ms",
                              (g_get_monotonic_time () - turn->started_us) / 1000);
  json_object_set_int_member (event, "api_calls", turn->api_calls);
  set_usage_member (event, &turn->usage);
  turn_emit (task, event);

  if (priced)
    self->spent_usd += cost;
  self->turn_task = NULL;
  /* The running turn's cost moved into spent_usd: "spent" is unchanged. */
  tally_agent_set_last_mode (self, turn->mode);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);

  if (status == TALLY_TURN_FAILED)
    {
      if (owned_error == NULL)
        owned_error = g_error_new_literal (TALLY_API_ERROR, TALLY_API_ERROR_PROTOCOL, "The turn failed");
      g_task_return_error (task, g_steal_pointer (&owned_error));
    }
  else
    g_task_return_int (task, status);
}

static void
fail_turn (GTask        *task,
           const char   *kind,
           const GError *error,
           gboolean      retryable,
           const char   *request_id)
{
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event = tally_event_new (TALLY_EVENT_ERROR);
  g_autofree char *message = NULL;

  /* A refused key says so plainly (docs/protocol.md §12.2); the faces add
   * how to change it. */
  if (g_error_matches (error, TALLY_API_ERROR, TALLY_API_ERROR_AUTHENTICATION) ||
      g_error_matches (error, TALLY_API_ERROR, TALLY_API_ERROR_PERMISSION))
    message = g_strdup_printf ("The Messages API refused the API key (HTTP %u): %s",
                               turn->last_status != 0 ? turn->last_status
                               : error->code == TALLY_API_ERROR_AUTHENTICATION ? 401 : 403,
                               error->message);

  json_object_set_string_member (event, "kind", kind);
  json_object_set_string_member (event, "message", message != NULL ? message : error->message);
  json_object_set_boolean_member (event, "retryable", retryable);
  if (request_id != NULL)
    json_object_set_string_member (event, "request_id", request_id);
  else
    json_object_set_null_member (event, "request_id");
  if (g_str_equal (kind, "http") && turn->last_status != 0)
    json_object_set_int_member (event, "status", turn->last_status);
  turn_emit (task, event);

  finish_turn (task, TALLY_TURN_FAILED, g_error_copy (error));
}

/* Tools */

static void start_call (GTask *task);
static void run_next_tool (GTask *task);
static void deliver_redirect (GTask *task);

static void
emit_approval_resolved (GTask         *task,
                        const char    *approval_id,
                        const char    *tool_id,
                        TallyDecision  decision,
                        const char    *reason,
                        const char    *message,
                        JsonObject    *extra)
{
  JsonObject *event = tally_event_new (TALLY_EVENT_APPROVAL_RESOLVED);

  if (approval_id != NULL)
    json_object_set_string_member (event, "approval_id", approval_id);
  else
    json_object_set_null_member (event, "approval_id");
  json_object_set_string_member (event, "tool_id", tool_id);
  json_object_set_string_member (event, "decision", tally_decision_to_string (decision));
  if (extra != NULL)
    {
      GList *members = json_object_get_members (extra);

      for (const GList *l = members; l != NULL; l = l->next)
        json_object_set_member (event, l->data, json_node_copy (json_object_get_member (extra, l->data)));
      g_list_free (members);
    }
  if (message != NULL)
    json_object_set_string_member (event, "message", message);
  json_object_set_string_member (event, "reason", reason);
  turn_emit (task, event);
}

static void
tool_answered (GTask      *task,
               const char *tool_id,
               const char *content,
               gboolean    is_error)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  gint64 duration_ms = 0;

  if (turn->tool_started_us > 0)
    duration_ms = (g_get_monotonic_time () - turn->tool_started_us) / 1000;
  turn->tool_started_us = 0;

  tally_conversation_add_tool_result (self->conversation, tool_id, content, is_error);
  emit_tool_result (task, tool_id, content, is_error, duration_ms);
}

static JsonObject *
current_tool_use (Turn *turn)
{
  return g_ptr_array_index (turn->tool_uses, turn->tool_index);
}

static const char *
current_tool_id (Turn *turn)
{
  return json_object_get_string_member_with_default (current_tool_use (turn), "id", "");
}

/* Answers the current call without running it, and moves on. */
static void
refuse_current (GTask      *task,
                const char *message)
{
  Turn *turn = g_task_get_task_data (task);

  tool_answered (task, current_tool_id (turn), message, TRUE);
  turn->tool_index++;
  run_next_tool (task);
}

static void
tool_run_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Turn *turn = g_task_get_task_data (task);
  const char *id = current_tool_id (turn);
  g_autoptr(GError) error = NULL;
  g_autofree char *content = NULL;

  content = tally_tool_run_finish (TALLY_TOOL (object), result, &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_hash_table_insert (turn->orphans, g_strdup (id), GINT_TO_POINTER (TALLY_ORPHAN_INTERRUPTED));
      finish_turn (task, TALLY_TURN_CANCELLED, NULL);
      return;
    }

  if (content != NULL)
    tool_answered (task, id, content, FALSE);
  else
    tool_answered (task, id, error->message, TRUE);

  turn->tool_index++;
  run_next_tool (g_steal_pointer (&task));
}

static void
run_current (GTask      *task,
             TallyTool  *tool,
             JsonObject *input,
             gboolean    allow_outside)
{
  Turn *turn = g_task_get_task_data (task);
  TallyToolContext context = turn->context;

  context.allow_outside_workspace = allow_outside;
  turn->tool_started_us = g_get_monotonic_time ();
  g_hash_table_insert (turn->orphans, g_strdup (current_tool_id (turn)),
                       GINT_TO_POINTER (TALLY_ORPHAN_INTERRUPTED));
  tally_tool_run_async (tool, &context, input, g_task_get_cancellable (task), tool_run_cb, task);
}

/* Pending cards: the turn parks until the analyst decides, a timeout
 * denies, or a cancel resolves it. Nothing streams meanwhile. */

static void
pending_clear (Turn *turn)
{
  g_clear_handle_id (&turn->pending_timeout, g_source_remove);
  g_clear_pointer (&turn->pending_id, g_free);
  g_clear_pointer (&turn->pending_suggestions, json_array_unref);
  turn->pending_kind = PENDING_NONE;
  turn->pending_outside = FALSE;
}

static void approval_settle (GTask *task, TallyDecision decision, JsonObject *updated_input,
                             const char *rule, const char *scope, const char *message, const char *reason);
static void question_settle (GTask *task, JsonObject *answers, const char *reason);

static gboolean
pending_timeout_cb (gpointer user_data)
{
  GTask *task = user_data;
  Turn *turn = g_task_get_task_data (task);

  turn->pending_timeout = 0;
  if (turn->pending_kind == PENDING_APPROVAL)
    approval_settle (task, TALLY_DECISION_DENY, NULL, NULL, NULL,
                     "The analyst did not decide in time, so this call was denied and did not run. "
                     "Do not guess what they would have wanted; ask or stop.", "timeout");
  else if (turn->pending_kind == PENDING_QUESTION)
    question_settle (task, NULL, "timeout");

  return G_SOURCE_REMOVE;
}

static void
park (GTask       *task,
      PendingKind  kind,
      const char  *id,
      guint        timeout_s)
{
  Turn *turn = g_task_get_task_data (task);

  turn->pending_kind = kind;
  turn->pending_id = g_strdup (id);
  if (timeout_s > 0)
    turn->pending_timeout = g_timeout_add_seconds (timeout_s, pending_timeout_cb, task);
}

/* Called right after the card's request event: the card is pending before
 * its event goes out, so a handler may settle it at once; a cancel that
 * arrived earlier settles it now. */
static void
parked (GTask *task)
{
  TallyAgent *self = turn_agent (task);

  if (self->turn_task == task && g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    tally_agent_cancel_pending (self);
}

static void
approval_settle (GTask         *task,
                 TallyDecision  decision,
                 JsonObject    *updated_input,
                 const char    *rule,
                 const char    *scope,
                 const char    *message,
                 const char    *reason)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autofree char *approval_id = g_strdup (turn->pending_id);
  g_autoptr(JsonObject) extra = json_object_new ();
  JsonObject *tool_use = current_tool_use (turn);
  const char *tool_id = current_tool_id (turn);
  const char *name = json_object_get_string_member_with_default (tool_use, "name", "");
  TallyTool *tool = tally_tool_registry_lookup (self->tools, name);
  gboolean outside = turn->pending_outside;
  gboolean denied = TRUE;

  pending_clear (turn);

  switch (decision)
    {
    case TALLY_DECISION_ALLOW:
      denied = FALSE;
      break;
    case TALLY_DECISION_ALLOW_EDITED:
      denied = FALSE;
      json_object_set_object_member (extra, "updated_input", json_object_ref (updated_input));
      break;
    case TALLY_DECISION_ALLOW_ALWAYS:
      denied = FALSE;
      if (rule != NULL)
        {
          json_object_set_string_member (extra, "rule", rule);
          json_object_set_string_member (extra, "scope", scope != NULL ? scope : "workspace");
          tally_agent_add_rule (self, rule, TRUE);
        }
      break;
    case TALLY_DECISION_DENY_STOP:
      json_object_set_boolean_member (extra, "stop", TRUE);
      G_GNUC_FALLTHROUGH;
    case TALLY_DECISION_DENY:
      break;
    }

  /* A decision out of range denies, like every other doubt (§6.4). */
  if (denied)
    {
      decision = decision == TALLY_DECISION_DENY_STOP ? decision : TALLY_DECISION_DENY;
      if (message == NULL || *message == '\0')
        message = "The analyst declined this tool call, so it did not run. Do not try it again "
                  "another way; ask what they would like instead.";
    }

  emit_approval_resolved (task, approval_id, tool_id, decision, reason,
                          denied ? message : NULL, extra);

  if (!denied)
    {
      JsonObject *input = decision == TALLY_DECISION_ALLOW_EDITED
        ? updated_input : json_object_get_object_member (tool_use, "input");

      run_current (task, tool, input, outside);
      return;
    }

  tool_answered (task, tool_id, message, TRUE);
  turn->tool_index++;

  if (decision == TALLY_DECISION_DENY_STOP)
    {
      /* Answer every call still waiting, then end the turn. */
      for (; turn->tool_index < turn->tool_uses->len; turn->tool_index++)
        {
          const char *next_id = current_tool_id (turn);
          const char *next_name = json_object_get_string_member_with_default (current_tool_use (turn), "name", "");
          const char *stopped = "The analyst stopped the turn before this call; it did not run.";

          if (!g_str_equal (next_name, "AskUserQuestion") && !g_str_equal (next_name, "ExitPlanMode"))
            emit_approval_resolved (task, NULL, next_id, TALLY_DECISION_DENY, "user", stopped, NULL);
          tool_answered (task, next_id, stopped, TRUE);
        }
      finish_turn (task, TALLY_TURN_CANCELLED, NULL);
      return;
    }

  run_next_tool (task);
}

static void
question_settle (GTask      *task,
                 JsonObject *answers,
                 const char *reason)
{
  Turn *turn = g_task_get_task_data (task);
  g_autofree char *question_id = g_strdup (turn->pending_id);
  JsonObject *input = json_object_get_object_member (current_tool_use (turn), "input");
  JsonObject *event = tally_event_new (TALLY_EVENT_QUESTION_RESOLVED);
  g_autofree char *text = NULL;

  pending_clear (turn);

  json_object_set_string_member (event, "question_id", question_id);
  if (answers != NULL)
    json_object_set_object_member (event, "answers", json_object_ref (answers));
  else
    json_object_set_null_member (event, "answers");
  json_object_set_string_member (event, "reason", reason);
  turn_emit (task, event);

  if (answers != NULL)
    {
      text = tally_questions_format_answers (json_object_get_array_member (input, "questions"), answers);
      tool_answered (task, current_tool_id (turn), text, FALSE);
    }
  else
    {
      text = tally_questions_not_answered (reason);
      tool_answered (task, current_tool_id (turn), text, TRUE);
    }

  turn->tool_index++;
  run_next_tool (task);
}

static void
handle_question (GTask      *task,
                 JsonObject *input)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autofree char *question_id = NULL;
  JsonObject *event;

  if (!tally_questions_validate (input, &error))
    {
      refuse_current (task, error->message);
      return;
    }

  question_id = g_uuid_string_random ();
  event = tally_event_new (TALLY_EVENT_QUESTION_REQUEST);
  json_object_set_string_member (event, "question_id", question_id);
  json_object_set_string_member (event, "tool_id", current_tool_id (turn));
  json_object_set_member (event, "questions",
                          json_node_copy (json_object_get_member (input, "questions")));

  park (task, PENDING_QUESTION, question_id, self->question_timeout_s);
  turn_emit (task, event);
  parked (task);
}

static void
handle_plan (GTask      *task,
             JsonObject *input)
{
  TallyAgent *self = turn_agent (task);
  const char *plan = json_object_get_string_member_with_default (input, "plan", NULL);
  g_autofree char *trimmed = plan != NULL ? g_strstrip (g_strdup (plan)) : NULL;
  g_autofree char *receipt = NULL;
  JsonObject *event;

  if (trimmed == NULL || *trimmed == '\0')
    {
      refuse_current (task, "ExitPlanMode needs “plan”: the plan as Markdown. Nothing was shown to "
                            "the analyst.");
      return;
    }

  /* Refinements are new versions of the session's plan. */
  if (self->plan_id == NULL)
    self->plan_id = g_uuid_string_random ();
  self->plan_version++;

  event = tally_event_new (TALLY_EVENT_PLAN_PROPOSED);
  json_object_set_string_member (event, "plan_id", self->plan_id);
  json_object_set_string_member (event, "markdown", plan);
  json_object_set_int_member (event, "version", self->plan_version);
  turn_emit (task, event);

  receipt = tally_questions_plan_receipt (self->plan_version);
  refuse_current (task, receipt);
}

static void
run_next_tool (GTask *task)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  TallyGateVerdict verdict;
  JsonObject *tool_use;
  const char *id;
  const char *name;
  JsonNode *input_node;
  JsonObject *input;
  TallyTool *tool;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)) || self->failure != NULL)
    {
      finish_turn (task, self->failure != NULL ? TALLY_TURN_FAILED : TALLY_TURN_CANCELLED, NULL);
      return;
    }

  if (turn->tool_index >= turn->tool_uses->len)
    {
      deliver_redirect (task);
      turn->call++;
      start_call (task);
      return;
    }

  tool_use = current_tool_use (turn);
  id = json_object_get_string_member_with_default (tool_use, "id", "");
  name = json_object_get_string_member_with_default (tool_use, "name", "");
  input_node = json_object_get_member (tool_use, "input");
  tool = tally_tool_registry_lookup (self->tools, name);

  if (g_hash_table_contains (turn->refusals, id))
    {
      /* A repeated id or an input that was not an object: answered, never
       * run (docs/protocol.md §5.4). */
      g_autofree char *message = g_strdup (g_hash_table_lookup (turn->refusals, id));

      if (!g_str_equal (name, "AskUserQuestion") && !g_str_equal (name, "ExitPlanMode"))
        emit_approval_resolved (task, NULL, id, TALLY_DECISION_DENY, "rule", message, NULL);
      refuse_current (task, message);
      return;
    }

  if (tool == NULL)
    {
      g_autofree char *message =
        g_strdup_printf ("There is no tool named “%s” in Tally. Use one of the tools listed in this "
                         "conversation.", name);

      emit_approval_resolved (task, NULL, id, TALLY_DECISION_DENY, "rule", message, NULL);
      refuse_current (task, message);
      return;
    }

  if (input_node == NULL || !JSON_NODE_HOLDS_OBJECT (input_node))
    {
      g_autofree char *message =
        g_strdup_printf ("The input of %s must be a JSON object; the call did not run.", name);

      if (!g_str_equal (name, "AskUserQuestion") && !g_str_equal (name, "ExitPlanMode"))
        emit_approval_resolved (task, NULL, id, TALLY_DECISION_DENY, "rule", message, NULL);
      refuse_current (task, message);
      return;
    }
  input = json_node_get_object (input_node);

  tally_gate_evaluate (self->rules, name, tool, input, turn->mode, &turn->context, &verdict);

  switch (verdict.action)
    {
    case TALLY_GATE_QUESTION:
      handle_question (task, input);
      break;

    case TALLY_GATE_PLAN:
      handle_plan (task, input);
      break;

    case TALLY_GATE_DENY:
      {
        JsonObject *extra = json_object_new ();

        if (verdict.rule != NULL)
          json_object_set_string_member (extra, "rule", verdict.rule);
        emit_approval_resolved (task, NULL, id, TALLY_DECISION_DENY, verdict.reason, verdict.message, extra);
        json_object_unref (extra);
        refuse_current (task, verdict.message);
      }
      break;

    case TALLY_GATE_ALLOW:
      {
        JsonObject *extra = json_object_new ();

        if (verdict.rule != NULL)
          json_object_set_string_member (extra, "rule", verdict.rule);
        emit_approval_resolved (task, NULL, id, TALLY_DECISION_ALLOW, verdict.reason, NULL, extra);
        json_object_unref (extra);
        run_current (task, tool, input, FALSE);
      }
      break;

    case TALLY_GATE_ASK:
    default:
      {
        g_autofree char *approval_id = g_uuid_string_random ();
        JsonArray *suggestions = tally_gate_dup_suggestions (name, input, &turn->context);
        JsonObject *event = tally_event_new (TALLY_EVENT_APPROVAL_REQUEST);

        json_object_set_string_member (event, "approval_id", approval_id);
        json_object_set_string_member (event, "tool_id", id);
        json_object_set_string_member (event, "tool_name", name);
        json_object_set_object_member (event, "tool_input", json_object_ref (input));
        json_object_set_array_member (event, "suggestions", json_array_ref (suggestions));
        if (verdict.outside)
          json_object_set_boolean_member (event, "outside_workspace", TRUE);

        park (task, PENDING_APPROVAL, approval_id, self->approval_timeout_s);
        turn->pending_suggestions = suggestions;
        turn->pending_outside = verdict.outside;
        tally_gate_verdict_clear (&verdict);
        turn_emit (task, event);
        parked (task);
        return;
      }
      break;
    }

  tally_gate_verdict_clear (&verdict);
}

static void
start_tools (GTask     *task,
             GPtrArray *content)
{
  Turn *turn = g_task_get_task_data (task);

  g_clear_pointer (&turn->tool_uses, g_ptr_array_unref);
  turn->tool_uses = g_ptr_array_new_with_free_func ((GDestroyNotify)json_object_unref);
  turn->tool_index = 0;

  for (guint i = 0; i < content->len; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonObject *block;
      JsonObject *event;

      if (!json_parser_load_from_data (parser, g_ptr_array_index (content, i), -1, NULL))
        continue;
      block = json_node_get_object (json_parser_get_root (parser));
      if (g_strcmp0 (json_object_get_string_member_with_default (block, "type", NULL), "tool_use") != 0)
        continue;

      g_ptr_array_add (turn->tool_uses, json_object_ref (block));

      event = tally_event_new (TALLY_EVENT_TOOL_USE_START);
      json_object_set_string_member (event, "tool_id",
                                     json_object_get_string_member_with_default (block, "id", ""));
      json_object_set_string_member (event, "tool_name",
                                     json_object_get_string_member_with_default (block, "name", ""));
      if (turn->duplicates != NULL &&
          g_hash_table_contains (turn->duplicates, json_object_get_string_member_with_default (block, "id", "")))
        json_object_set_string_member (event, "duplicate_of",
                                       g_hash_table_lookup (turn->duplicates,
                                                            json_object_get_string_member_with_default (block, "id", "")));
      if (json_object_has_member (block, "input"))
        json_object_set_member (event, "tool_input",
                                json_node_copy (json_object_get_member (block, "input")));
      else
        json_object_set_object_member (event, "tool_input", json_object_new ());
      turn_emit (task, event);
    }

  run_next_tool (task);
}


static void
deliver_redirect (GTask *task)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event;

  if (turn->redirect == NULL || turn->redirect->len == 0)
    return;

  /* After the tool results, in the same user message (docs/protocol.md
   * §5.1). */
  tally_conversation_add_user_text (self->conversation, turn->redirect->str);

  event = tally_event_new (TALLY_EVENT_REDIRECT);
  json_object_set_string_member (event, "text", turn->redirect->str);
  turn_emit (task, event);

  g_string_truncate (turn->redirect, 0);
}

static Turn *
pending_turn (TallyAgent  *self,
              PendingKind  kind,
              const char  *id,
              GError     **error)
{
  Turn *turn;

  if (self->turn_task == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "No turn is running");
      return NULL;
    }

  turn = g_task_get_task_data (self->turn_task);
  if (turn->pending_kind != kind || g_strcmp0 (turn->pending_id, id) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "No pending %s with id %s", kind == PENDING_APPROVAL ? "approval" : "question",
                   id != NULL ? id : "(null)");
      return NULL;
    }

  return turn;
}

/**
 * tally_agent_resolve_approval:
 * @self: a #TallyAgent
 * @approval_id: the `approval_id` of the pending `approval_request`
 * @decision: the analyst's decision
 * @updated_input: (nullable): for %TALLY_DECISION_ALLOW_EDITED, the input
 *   to run instead (must be an object)
 * @rule: (nullable): for %TALLY_DECISION_ALLOW_ALWAYS, the rule the card
 *   showed, kept exactly (one of the request's `suggestions`)
 * @scope: (nullable): the rule's scope: `session`, `workspace` or `global`
 * @message: (nullable): for a denial, the analyst's words for the model,
 *   sent verbatim; a default text is used when empty
 * @error: return location for a #GError
 *
 * Settles a pending approval card and lets the turn go on.
 *
 * Returns: %TRUE on success; %FALSE with %G_IO_ERROR_NOT_FOUND when no such
 *   approval is pending, %G_IO_ERROR_INVALID_ARGUMENT for an edited input
 *   that is missing or not an object, or an "always" without a valid rule
 */
gboolean
tally_agent_resolve_approval (TallyAgent     *self,
                              const char     *approval_id,
                              TallyDecision   decision,
                              JsonObject     *updated_input,
                              const char     *rule,
                              const char     *scope,
                              const char     *message,
                              GError        **error)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);

  if (pending_turn (self, PENDING_APPROVAL, approval_id, error) == NULL)
    return FALSE;

  if (decision == TALLY_DECISION_ALLOW_EDITED && updated_input == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "Allow with changes needs the edited input as a JSON object");
      return FALSE;
    }
  if (decision == TALLY_DECISION_ALLOW_ALWAYS && rule != NULL && !tally_gate_pattern_is_valid (rule))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "“%s” is not a rule pattern", rule);
      return FALSE;
    }

  approval_settle (self->turn_task, decision, updated_input, rule, scope, message, "user");
  return TRUE;
}

/**
 * tally_agent_dismiss_approval:
 * @self: a #TallyAgent
 * @approval_id: the pending approval
 * @error: return location for a #GError
 *
 * Dismisses a card without a decision (end of input in tally-cli, a closed
 * card): the call is denied with reason `dismissed`, never allowed.
 *
 * Returns: %TRUE on success; %FALSE with %G_IO_ERROR_NOT_FOUND
 */
gboolean
tally_agent_dismiss_approval (TallyAgent  *self,
                              const char  *approval_id,
                              GError     **error)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);

  if (pending_turn (self, PENDING_APPROVAL, approval_id, error) == NULL)
    return FALSE;

  approval_settle (self->turn_task, TALLY_DECISION_DENY, NULL, NULL, NULL,
                   "The approval card was dismissed without a decision, so this call did not run. "
                   "Do not assume it would have been allowed.", "dismissed");
  return TRUE;
}

/**
 * tally_agent_answer_question:
 * @self: a #TallyAgent
 * @question_id: the `question_id` of the pending `question_request`
 * @answers: (nullable): question text → answer string (chosen labels
 *   joined by ", ", then free text), covering every question; %NULL
 *   dismisses the card
 * @error: return location for a #GError
 *
 * Answers or dismisses a pending question card.
 *
 * Returns: %TRUE on success; %FALSE with %G_IO_ERROR_NOT_FOUND when no such
 *   question is pending, or %G_IO_ERROR_INVALID_ARGUMENT when a question has
 *   no answer
 */
gboolean
tally_agent_answer_question (TallyAgent  *self,
                             const char  *question_id,
                             JsonObject  *answers,
                             GError     **error)
{
  Turn *turn;

  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);

  turn = pending_turn (self, PENDING_QUESTION, question_id, error);
  if (turn == NULL)
    return FALSE;

  if (answers != NULL)
    {
      JsonObject *input = json_object_get_object_member (current_tool_use (turn), "input");
      JsonArray *questions = json_object_get_array_member (input, "questions");

      for (guint i = 0; i < json_array_get_length (questions); i++)
        {
          const char *q = json_object_get_string_member (json_array_get_object_element (questions, i),
                                                         "question");
          const char *a = json_object_get_string_member_with_default (answers, q, NULL);

          if (a == NULL || *a == '\0')
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "The question “%s” has no answer", q);
              return FALSE;
            }
        }
    }

  question_settle (self->turn_task, answers, answers != NULL ? "user" : "dismissed");
  return TRUE;
}

/**
 * tally_agent_cancel_pending:
 * @self: a #TallyAgent
 *
 * Resolves a pending card as `cancel` (a cancel resolves every pending
 * decision at once; at most one card is pending at a time). Called when the
 * turn's cancellable fires.
 */
void
tally_agent_cancel_pending (TallyAgent *self)
{
  Turn *turn;

  g_return_if_fail (TALLY_IS_AGENT (self));

  if (self->turn_task == NULL)
    return;

  turn = g_task_get_task_data (self->turn_task);
  if (turn->pending_kind == PENDING_APPROVAL)
    approval_settle (self->turn_task, TALLY_DECISION_DENY, NULL, NULL, NULL,
                     "The analyst stopped the turn before deciding, so this call did not run.",
                     "cancel");
  else if (turn->pending_kind == PENDING_QUESTION)
    question_settle (self->turn_task, NULL, "cancel");
}

/**
 * tally_agent_fail_turn:
 * @self: a #TallyAgent
 * @kind: the `kind` of the `error` event, such as `store`
 * @error: what went wrong; its message becomes the event's `message`
 *
 * Ends the running turn as failed, at its next step: before the next tool
 * call or API request, or in place of ending it `done` or `cancelled`. A
 * stream is never cut and every `tool_use` still gets its result; the turn
 * then emits an `error` event of @kind and `turn_finished` with the status
 * `failed`, and tally_agent_send_finish() returns a copy of @error. Used by
 * the session when the store cannot keep the turn (docs/architecture.md
 * §10.7). The first failure reported for a turn is the one kept.
 *
 * Returns: %TRUE when a turn was running; %FALSE (and nothing recorded)
 *   otherwise
 */
gboolean
tally_agent_fail_turn (TallyAgent   *self,
                       const char   *kind,
                       const GError *error)
{
  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);
  g_return_val_if_fail (kind != NULL, FALSE);
  g_return_val_if_fail (error != NULL, FALSE);

  if (self->turn_task == NULL)
    return FALSE;

  if (self->failure == NULL)
    {
      self->failure = g_error_copy (error);
      self->failure_kind = g_strdup (kind);
    }
  return TRUE;
}

static gboolean
cancel_pending_idle_cb (gpointer user_data)
{
  g_autoptr(TallyAgent) self = user_data;

  tally_agent_cancel_pending (self);
  return G_SOURCE_REMOVE;
}

static void
turn_cancelled_cb (GCancellable *cancellable,
                   TallyAgent   *self)
{
  /* Cancellation may be signalled from inside another callback; settle
   * the card from the main loop instead. */
  g_idle_add (cancel_pending_idle_cb, g_object_ref (self));
}

/**
 * tally_agent_redirect:
 * @self: a #TallyAgent
 * @text: what the analyst typed while the turn runs
 *
 * Delivers a message in the middle of a turn: it goes to the model with
 * the next tool results instead of waiting for the turn to end, and a
 * pending approval is denied with it as the message (a pending question is
 * left unanswered). When the turn ends before any tool result, the text is
 * kept for tally_agent_take_redirect().
 *
 * Returns: %TRUE when a turn was running and took the text; %FALSE when no
 *   turn runs (send it as a normal message)
 */
gboolean
tally_agent_redirect (TallyAgent *self,
                      const char *text)
{
  Turn *turn;

  g_return_val_if_fail (TALLY_IS_AGENT (self), FALSE);
  g_return_val_if_fail (text != NULL, FALSE);

  if (self->turn_task == NULL || *text == '\0')
    return FALSE;

  turn = g_task_get_task_data (self->turn_task);
  if (turn->redirect == NULL)
    turn->redirect = g_string_new (NULL);
  if (turn->redirect->len > 0)
    g_string_append (turn->redirect, "\n\n");
  g_string_append (turn->redirect, text);

  if (turn->pending_kind == PENDING_APPROVAL)
    approval_settle (self->turn_task, TALLY_DECISION_DENY, NULL, NULL, NULL, text, "user");
  else if (turn->pending_kind == PENDING_QUESTION)
    question_settle (self->turn_task, NULL, "dismissed");

  return TRUE;
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

  if (self->approval_timeout_s != approval_timeout_s)
    {
      self->approval_timeout_s = approval_timeout_s;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_APPROVAL_TIMEOUT]);
    }

  if (self->question_timeout_s != question_timeout_s)
    {
      self->question_timeout_s = question_timeout_s;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_QUESTION_TIMEOUT]);
    }
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

/* Streaming */

static void
stream_text_delta_cb (TallyMessageStream *stream,
                      guint               index,
                      const char         *text,
                      GTask              *task)
{
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event = tally_event_new (TALLY_EVENT_TEXT_DELTA);

  json_object_set_int_member (event, "call", turn->call);
  json_object_set_int_member (event, "block", index);
  json_object_set_string_member (event, "text", text);
  turn_emit (task, event);
}

static void
stream_thinking_delta_cb (TallyMessageStream *stream,
                          guint               index,
                          const char         *text,
                          GTask              *task)
{
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event = tally_event_new (TALLY_EVENT_THINKING_DELTA);

  json_object_set_int_member (event, "call", turn->call);
  json_object_set_int_member (event, "block", index);
  json_object_set_string_member (event, "text", text);
  turn_emit (task, event);
}

static void
emit_block_done (GTask      *task,
                 guint       index,
                 const char *kind)
{
  Turn *turn = g_task_get_task_data (task);
  JsonObject *event = tally_event_new (TALLY_EVENT_BLOCK_DONE);

  json_object_set_int_member (event, "call", turn->call);
  json_object_set_int_member (event, "block", index);
  json_object_set_string_member (event, "kind", kind);
  turn_emit (task, event);
}

static void
stream_block_stopped_cb (TallyMessageStream *stream,
                         guint               index,
                         const char         *type,
                         GTask              *task)
{
  /* A tool_use block is announced only once its message completed: a reply
   * cut later must leave no trace of a tool call beyond its deltas. */
  if (g_str_equal (type, "tool_use") || g_str_equal (type, "server_tool_use"))
    return;

  emit_block_done (task, index, type);
}

static void
stream_retry_cb (TallyMessageStream *stream,
                 guint               attempt,
                 guint               delay_ms,
                 guint               status,
                 const char         *error_type,
                 GTask              *task)
{
  JsonObject *event = tally_event_new (TALLY_EVENT_RETRY);

  json_object_set_int_member (event, "attempt", attempt);
  json_object_set_int_member (event, "delay_ms", delay_ms);
  json_object_set_int_member (event, "status", status);
  if (error_type != NULL)
    json_object_set_string_member (event, "error_type", error_type);
  else
    json_object_set_null_member (event, "error_type");
  turn_emit (task, event);
}

static void
stream_attempt_finished_cb (TallyMessageStream *stream,
                            guint               attempt,
                            guint               status,
                            const char         *request_id,
                            gint64              duration_ms,
                            GError             *error,
                            GTask              *task)
{
  Turn *turn = g_task_get_task_data (task);
  const TallyUsage *usage = tally_message_stream_get_usage (stream);
  const char *stop_reason = tally_message_stream_get_stop_reason (stream);
  const char *model = tally_message_stream_get_model (stream);
  JsonObject *event = tally_event_new (TALLY_EVENT_API_CALL);

  if (usage->reported)
    {
      TallyAgent *self = g_task_get_source_object (task);
      double spent = tally_agent_get_spent (self);

      tally_usage_add (&turn->usage, usage);
      if (tally_agent_get_spent (self) != spent)
        g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SPENT]);
    }
  g_free (turn->last_request_id);
  turn->last_request_id = g_strdup (request_id);
  turn->last_status = status;

  json_object_set_int_member (event, "call", turn->call);
  json_object_set_int_member (event, "attempt", attempt);
  if (request_id != NULL)
    json_object_set_string_member (event, "request_id", request_id);
  else
    json_object_set_null_member (event, "request_id");
  json_object_set_string_member (event, "model",
                                 model != NULL ? model : turn_agent (task)->model);
  json_object_set_int_member (event, "status", status);
  set_usage_member (event, usage);
  if (stop_reason != NULL)
    json_object_set_string_member (event, "stop_reason", stop_reason);
  else
    json_object_set_null_member (event, "stop_reason");
  json_object_set_int_member (event, "duration_ms", duration_ms);
  turn_emit (task, event);
}

/* Words for the model about a tool input that was JSON but not an object. */
static char *
invalid_input_message (const char *name,
                       const char *raw)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *excerpt = NULL;
  g_autofree char *head = NULL;
  const char *what = "not an object";

  if (json_parser_load_from_data (parser, raw, -1, NULL) && json_parser_get_root (parser) != NULL)
    {
      JsonNode *root = json_parser_get_root (parser);

      if (JSON_NODE_HOLDS_ARRAY (root))
        what = "an array";
      else if (JSON_NODE_HOLDS_NULL (root))
        what = "null";
      else if (json_node_get_value_type (root) == G_TYPE_STRING)
        what = "a string";
      else if (json_node_get_value_type (root) == G_TYPE_BOOLEAN)
        what = "a boolean";
      else
        what = "a number";
    }

  if (g_utf8_strlen (raw, -1) > 200)
    {
      head = g_utf8_substring (raw, 0, 200);
      excerpt = g_strconcat (head, "…", NULL);
    }
  else
    excerpt = g_strdup (raw);
  g_strstrip (excerpt);

  return g_strdup_printf ("The input of %s must be a JSON object with named arguments, but it was %s: %s. "
                          "The call did not run; call the tool again with an object as its input.",
                          name, what, excerpt);
}

/* Looks at the tool_use blocks of a completed message before it enters the
 * conversation (docs/protocol.md §5.4): a call whose id the conversation
 * already has gets a fresh id, and such calls and calls whose input was not
 * a JSON object are noted in turn->refusals, to be answered with an error
 * instead of run. @content is changed in place. */
static void
check_tool_uses (GTask     *task,
                 GPtrArray *content)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autoptr(GArray) stream_blocks = g_array_new (FALSE, FALSE, sizeof (guint));
  guint nth = 0;

  g_hash_table_remove_all (turn->refusals);
  g_clear_pointer (&turn->duplicates, g_hash_table_unref);

  /* dup_content keeps stopped blocks in order, so the Nth tool_use in
   * @content is the Nth stopped tool_use block of the stream. */
  for (guint i = 0; i < tally_message_stream_get_n_blocks (turn->stream); i++)
    if (g_strcmp0 (tally_message_stream_get_block_type (turn->stream, i), "tool_use") == 0 &&
        tally_message_stream_block_is_stopped (turn->stream, i))
      g_array_append_val (stream_blocks, i);

  turn->duplicates = tally_conversation_dedup_new_tool_uses (self->conversation, content);

  for (guint i = 0; i < content->len; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      const char *invalid = NULL;
      const char *original;
      const char *id;
      const char *name;
      JsonObject *block;

      if (!json_parser_load_from_data (parser, g_ptr_array_index (content, i), -1, NULL) ||
          !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        continue;
      block = json_node_get_object (json_parser_get_root (parser));
      if (g_strcmp0 (json_object_get_string_member_with_default (block, "type", NULL), "tool_use") != 0)
        continue;

      if (nth < stream_blocks->len)
        invalid = tally_message_stream_get_block_invalid_input (turn->stream,
                                                                g_array_index (stream_blocks, guint, nth));
      nth++;

      id = json_object_get_string_member_with_default (block, "id", "");
      name = json_object_get_string_member_with_default (block, "name", "");
      original = g_hash_table_lookup (turn->duplicates, id);
      if (original != NULL)
        g_hash_table_insert (turn->refusals, g_strdup (id),
                             g_strdup_printf ("This call reused the id “%s” of an earlier tool call. Tool "
                                              "call ids must be unique, so Tally renamed this one “%s” and "
                                              "did not run it. Make the call again if you still need its "
                                              "result.", original, id));
      else if (invalid != NULL)
        g_hash_table_insert (turn->refusals, g_strdup (id), invalid_input_message (name, invalid));
    }
}

static void
stream_done_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) content = NULL;
  const char *stop_reason;

  if (!tally_client_stream_finish (TALLY_CLIENT (object), result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          finish_turn (task, TALLY_TURN_CANCELLED, NULL);
          return;
        }

      /* The partial reply is never echoed: only a message that reached
       * message_stop enters the conversation. */
      fail_turn (task, tally_api_error_get_kind (error), error,
                 tally_api_error_is_retryable (error), turn->last_request_id);
      return;
    }

  turn->api_calls++;
  content = tally_message_stream_dup_content (turn->stream);
  check_tool_uses (task, content);
  tally_conversation_append_assistant (self->conversation, content);
  if (content->len > 0)
    emit_last_message_changed (self);

  for (guint i = 0; i < tally_message_stream_get_n_blocks (turn->stream); i++)
    {
      const char *type = tally_message_stream_get_block_type (turn->stream, i);

      if ((g_strcmp0 (type, "tool_use") == 0 || g_strcmp0 (type, "server_tool_use") == 0) &&
          tally_message_stream_block_is_stopped (turn->stream, i))
        emit_block_done (task, i, type);
    }

  stop_reason = tally_message_stream_get_stop_reason (turn->stream);
  if (g_strcmp0 (stop_reason, "tool_use") == 0)
    {
      start_tools (g_steal_pointer (&task), content);
      return;
    }

  finish_turn (task, TALLY_TURN_DONE, NULL);
}

/* Ends the turn before a call because the session reached its spend cap. */
static void
stop_for_budget (GTask *task)
{
  TallyAgent *self = turn_agent (task);
  double spent = tally_agent_get_spent (self);
  double cap = tally_agent_get_max_cost (self);
  g_autoptr(GError) error = NULL;
  JsonObject *event;

  error = g_error_new (TALLY_API_ERROR, TALLY_API_ERROR_BUDGET,
                       "This session has cost $%.4f, which reached its spend cap of $%.4f, so Tally "
                       "stopped before the next API call. Nothing more was sent.", spent, cap);

  event = tally_event_new (TALLY_EVENT_ERROR);
  json_object_set_string_member (event, "kind", "budget");
  json_object_set_string_member (event, "message", error->message);
  json_object_set_boolean_member (event, "retryable", FALSE);
  json_object_set_null_member (event, "request_id");
  json_object_set_double_member (event, "spent_usd", spent);
  json_object_set_double_member (event, "max_cost_usd", cap);
  turn_emit (task, event);

  finish_turn (task, TALLY_TURN_FAILED, g_steal_pointer (&error));
}

static void
start_call (GTask *task)
{
  TallyAgent *self = turn_agent (task);
  Turn *turn = g_task_get_task_data (task);
  g_autoptr(GBytes) body = NULL;

  if (turn->stream != NULL)
    g_signal_handlers_disconnect_matched (turn->stream, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, task);
  g_clear_object (&turn->stream);

  turn->stream = tally_message_stream_new ();
  g_signal_connect (turn->stream, "text-delta", G_CALLBACK (stream_text_delta_cb), task);
  g_signal_connect (turn->stream, "thinking-delta", G_CALLBACK (stream_thinking_delta_cb), task);
  g_signal_connect (turn->stream, "block-stopped", G_CALLBACK (stream_block_stopped_cb), task);
  g_signal_connect (turn->stream, "retry", G_CALLBACK (stream_retry_cb), task);
  g_signal_connect (turn->stream, "attempt-finished", G_CALLBACK (stream_attempt_finished_cb), task);

  emit_last_message_changed (self);

  /* The spend cap is checked before each call, never during one: a stream
   * is never cut for it, and every tool_use is answered by now. */
  if (tally_agent_get_max_cost (self) > 0 && tally_agent_get_spent (self) >= tally_agent_get_max_cost (self))
    {
      stop_for_budget (task);
      return;
    }

  body = tally_conversation_build_request (self->conversation, self->model, self->max_tokens,
                                           turn->system_prompt, turn->tools_json,
                                           turn->thinking_json);

  tally_client_stream_async (self->client, body, turn->stream,
                             g_task_get_cancellable (task),
                             stream_done_cb, task);
}

/* Sending */

static char *
make_title (const char *text)
{
  g_autofree char *first_line = NULL;
  const char *newline = strchr (text, '\n');
  glong len;

  first_line = newline != NULL ? g_strndup (text, newline - text) : g_strdup (text);
  g_strstrip (first_line);
  len = g_utf8_strlen (first_line, -1);
  if (len <= 60)
    return g_steal_pointer (&first_line);

  {
    const char *cut = g_utf8_offset_to_pointer (first_line, 59);
    g_autofree char *head = g_strndup (first_line, cut - first_line);
    char *space = strrchr (head, ' ');

    if (space != NULL && space - head > 30)
      *space = '\0';
    return g_strconcat (head, "…", NULL);
  }
}

/* The mode reminder for a turn (docs/protocol.md §6): plan mode is
 * restated every plan turn; ask and auto are said when the mode changes,
 * and leaving plan mode says plainly that it ended and that the analyst
 * approved going ahead. Returns (transfer full) (nullable). */
static char *
mode_reminder (TallyMode mode,
               TallyMode last_mode)
{
  const char *now;

  if (mode == TALLY_MODE_PLAN)
    return g_strdup ("<system-reminder>Plan mode is on. Explore with read-only tools only and change "
                     "nothing. When you know what you would do, hand the plan to the analyst and stop; "
                     "tools that change files are refused while plan mode is on.</system-reminder>");

  if (mode == last_mode)
    return NULL;

  if (mode == TALLY_MODE_AUTO)
    now = "Auto-accept mode is on: read-only tools and edits inside the workspace run without "
          "asking; anything else still needs the analyst's approval.";
  else
    now = "Ask mode is on: read-only tools run without asking; anything that changes files or "
          "runs commands needs the analyst's approval first.";

  if (last_mode == TALLY_MODE_PLAN)
    return g_strconcat ("<system-reminder>Plan mode has ended. The analyst approved going ahead: "
                        "carry out the plan now; tools that change files are no longer refused. ",
                        now, "</system-reminder>", NULL);

  return g_strconcat ("<system-reminder>", now, "</system-reminder>", NULL);
}

/**
 * tally_agent_send_async:
 * @self: a #TallyAgent
 * @text: the analyst's message
 * @mode: the turn's permission mode
 * @thinking: whether the model should think (sent in the form the model
 *   takes, see tally_model_table_dup_thinking_json())
 * @cancellable: (nullable): cancels the turn at any phase
 * @callback: called when the turn has ended
 * @user_data: data for @callback
 *
 * Runs one turn: emits `turn_started` (and `session_created` on the first
 * turn of a new session), then the API calls and tool runs of the agent loop,
 * and ends with `turn_finished`. Only one turn runs at a time.
 */
void
tally_agent_send_async (TallyAgent          *self,
                        const char          *text,
                        TallyMode            mode,
                        gboolean             thinking,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *reminder = NULL;
  JsonObject *event;
  Turn *turn;

  g_return_if_fail (TALLY_IS_AGENT (self));
  g_return_if_fail (text != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_agent_send_async);
  /* A cancelled turn still ends normally, with its receipt and status
   * "cancelled", so the task must not turn its result into an error. */
  g_task_set_check_cancellable (task, FALSE);

  if (self->turn_task != NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_BUSY,
                               "A turn is already running in this session");
      return;
    }

  if (g_utf8_strlen (text, -1) == 0 || !g_utf8_validate (text, -1, NULL))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                               "The message is empty or not valid UTF-8");
      return;
    }

  turn = g_new0 (Turn, 1);
  turn->turn_id = g_uuid_string_random ();
  turn->mode = mode;
  turn->thinking = thinking;
  turn->thinking_json = tally_model_table_dup_thinking_json (self->model, thinking,
                                                             self->thinking_budget,
                                                             self->max_tokens,
                                                             &turn->budget_used);
  turn->system_prompt = tally_agent_dup_system_prompt (self);
  turn->tools_json = tally_tool_registry_dup_tools_json (self->tools);
  turn->context.database_path = g_strdup (self->database);
  turn->context.workspace = g_strdup (self->workspace);
  turn->started_us = g_get_monotonic_time ();
  turn->usage.cache_creation_5m = -1;
  turn->usage.cache_creation_1h = -1;
  turn->answered = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  turn->orphans = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  turn->refusals = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_task_set_task_data (task, turn, turn_free);

  self->turn_task = task;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
  g_clear_pointer (&self->pending_redirect, g_free);
  if (cancellable != NULL)
    {
      turn->cancellable = g_object_ref (cancellable);
      turn->cancelled_handler = g_cancellable_connect (cancellable, G_CALLBACK (turn_cancelled_cb),
                                                       self, NULL);
    }

  if (!self->session_announced)
    {
      g_autofree char *title = make_title (text);

      self->session_announced = TRUE;
      event = tally_event_new (TALLY_EVENT_SESSION_CREATED);
      json_object_set_string_member (event, "title", title);
      json_object_set_string_member (event, "model", self->model);
      if (self->workspace != NULL)
        json_object_set_string_member (event, "workspace", self->workspace);
      else
        json_object_set_null_member (event, "workspace");
      if (self->database != NULL)
        json_object_set_string_member (event, "database", self->database);
      else
        json_object_set_null_member (event, "database");
      emit_event (self, NULL, event);
    }

  event = tally_event_new (TALLY_EVENT_TURN_STARTED);
  json_object_set_string_member (event, "mode", tally_mode_to_string (mode));
  json_object_set_boolean_member (event, "thinking", thinking);
  json_object_set_int_member (event, "budget_tokens", turn->budget_used);
  json_object_set_string_member (event, "model", self->model);
  json_object_set_string_member (event, "text", text);
  turn_emit (task, event);

  /* A previous turn that was cancelled or crashed may have left tool calls
   * unanswered; answer them before anything else is sent. */
  tally_conversation_repair (self->conversation, NULL);

  tally_conversation_add_user_text (self->conversation, text);
  reminder = mode_reminder (mode, self->last_mode);
  if (reminder != NULL)
    tally_conversation_add_user_text (self->conversation, reminder);

  start_call (g_steal_pointer (&task));
}

/**
 * tally_agent_send_finish:
 * @self: a #TallyAgent
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes a turn started with tally_agent_send_async().
 *
 * Returns: %TALLY_TURN_DONE or %TALLY_TURN_CANCELLED; %TALLY_TURN_FAILED
 *   with @error set (a %TALLY_API_ERROR for API failures, %G_IO_ERROR_BUSY
 *   when a turn was already running, %G_IO_ERROR_INVALID_ARGUMENT for an
 *   empty message)
 */
TallyTurnStatus
tally_agent_send_finish (TallyAgent    *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  GError *local_error = NULL;
  gssize status;

  g_return_val_if_fail (TALLY_IS_AGENT (self), TALLY_TURN_FAILED);
  g_return_val_if_fail (g_task_is_valid (result, self), TALLY_TURN_FAILED);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_agent_send_async,
                        TALLY_TURN_FAILED);

  status = g_task_propagate_int (G_TASK (result), &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return TALLY_TURN_FAILED;
    }

  return (TallyTurnStatus)status;
}
