/* SPDX-License-Identifier: GPL-3.0-or-later */

#pragma once

#include "tally-agent.h"
#include "tally-event.h"

/*
 * TallyAgent's insides, shared by the files it is split into by job:
 * tally-agent.c (the object, its properties and settings),
 * tally-agent-turn.c (the turn loop, streaming and the turn's end),
 * tally-agent-tools.c (tool dispatch, the gate and the cards) and
 * tally-agent-prompt.c (the system prompt and the mode reminders).
 */

G_BEGIN_DECLS

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

  /* the analyst's notes about the database (docs/notes.md): read when the
   * session starts (or restored from its log) and kept in the system prompt
   * unchanged; a later change goes to the model as a reminder */
  char               *store_dir;          /* where the profile folders are, NULL = none */
  gboolean            notes_fixed;
  char               *notes_prompt;       /* the notes in the system prompt, NULL = none */
  char               *notes_told;         /* the notes the model heard of last, NULL = none */

  /* what leaves the machine (tally-agent-ledger.c, docs/ledger.md) */
  char              **sensitive_columns;  /* table.column entries, NULL = none */
  GHashTable         *ledger_sent;        /* tool_use ids a request carried */
  GHashTable         *ledger_origins;     /* tool_use id → origin (JsonObject) not sent yet */

  /* a redirect that arrived too late to go with tool results */
  char               *pending_redirect;

  /* tally_agent_fail_turn(): ends the running turn failed at its next step */
  char               *failure_kind;
  GError             *failure;

  GTask              *turn_task;
};

enum {
  EVENT,
  MESSAGE_CHANGED,
  TURN_ENDING,
  N_SIGNALS
};

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

extern guint       tally_agent_signals[N_SIGNALS];
extern GParamSpec *tally_agent_properties[N_PROPS];

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
  gboolean            call_answered; /* the current call got a response */
  guint               call_attempts; /* the highest attempt of the current call so far, 0 = none */
  gint64              failed_calls; /* 1 when the turn failed in a call that got a response */

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

void     tally_agent_emit_tool_result (GTask           *task,
                                       const char      *tool_id,
                                       const char      *content,
                                       gboolean         is_error,
                                       gint64           duration_ms,
                                       JsonObject      *origin);
void     tally_agent_ledger_note_origin (TallyAgent    *self,
                                         const char    *tool_id,
                                         JsonObject    *origin);
void     tally_agent_ledger_emit      (GTask           *task,
                                       GBytes          *body);
gboolean tally_agent_dup_turn_sensitive (TallyAgent    *self,
                                         char        ***columns,
                                         GError       **error);
void     tally_agent_finish_turn      (GTask           *task,
                                       TallyTurnStatus  status,
                                       GError          *error);
void     tally_agent_start_call       (GTask           *task);
void     tally_agent_start_tools      (GTask           *task,
                                       GPtrArray       *content);
char    *tally_agent_mode_reminder    (TallyMode        mode,
                                       TallyMode        last_mode);
gboolean tally_agent_check_notes      (TallyAgent      *self,
                                       char           **reminder,
                                       GError         **error);

/* The agent that runs the turn of @task. */
static inline TallyAgent *
turn_agent (GTask *task)
{
  return g_task_get_source_object (task);
}

/* Emits @fields (transfer full) as an event of the turn of @task. */
static inline void
turn_emit (GTask      *task,
           JsonObject *fields)
{
  Turn *turn = g_task_get_task_data (task);

  tally_agent_emit_event (turn_agent (task), turn->turn_id, fields);
}

G_END_DECLS
