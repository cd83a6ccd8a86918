/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "tally-agent.h"
#include "tally-tool.h"

G_BEGIN_DECLS

/**
 * TallyGateAction:
 * @TALLY_GATE_QUESTION: `AskUserQuestion`: goes to the question broker
 * @TALLY_GATE_PLAN: `ExitPlanMode`: goes to plan capture
 * @TALLY_GATE_DENY: refused without asking (a deny rule, plan mode)
 * @TALLY_GATE_ALLOW: runs without asking (an allow rule, the mode)
 * @TALLY_GATE_ASK: parks on an approval card
 *
 * What the permission gate decided for one tool call.
 */
typedef enum {
  TALLY_GATE_QUESTION,
  TALLY_GATE_PLAN,
  TALLY_GATE_DENY,
  TALLY_GATE_ALLOW,
  TALLY_GATE_ASK,
} TallyGateAction;

/**
 * TallyGateRule:
 * @pattern: `Tool` or `Tool(spec)`, e.g. `Bash(git status)`,
 *   `Bash(npm test:*)`, `Write(reports/…)`, `query_database`
 * @allow: %TRUE for an allow rule, %FALSE for a deny rule
 *
 * A permission rule as the gate reads it (scope filtering happens before).
 * A `Bash` command rule allows only a single simple command but denies a
 * command anywhere inside a compound one (tally_gate_rule_applies()).
 */
typedef struct {
  char     *pattern;
  gboolean  allow;
} TallyGateRule;

/**
 * TallyGateVerdict:
 * @action: what to do
 * @reason: (nullable): for allow and deny, the `approval_resolved` reason
 *   (`rule` or `mode`)
 * @message: (nullable): for a denial, the `tool_result` text the model reads
 * @rule: (nullable): the pattern of the rule that decided
 * @outside: %TRUE when the call touches a path outside the workspace
 *
 * The gate's answer. Free the strings with tally_gate_verdict_clear().
 */
typedef struct {
  TallyGateAction  action;
  const char      *reason;
  char            *message;
  char            *rule;
  gboolean         outside;
} TallyGateVerdict;

void       tally_gate_verdict_clear    (TallyGateVerdict       *verdict);
void       tally_gate_evaluate         (GPtrArray              *rules,
                                        const char             *tool_name,
                                        TallyTool              *tool,
                                        JsonObject             *input,
                                        TallyMode               mode,
                                        const TallyToolContext *context,
                                        TallyGateVerdict       *verdict);
gboolean   tally_gate_rule_applies     (const TallyGateRule    *rule,
                                        const char             *tool_name,
                                        JsonObject             *input,
                                        const TallyToolContext *context);
gboolean   tally_gate_rule_matches     (const char             *pattern,
                                        const char             *tool_name,
                                        JsonObject             *input,
                                        const TallyToolContext *context);
char     **tally_gate_split_command    (const char             *command,
                                        gboolean               *simple);
gboolean   tally_gate_pattern_is_valid (const char             *pattern);
JsonArray *tally_gate_dup_suggestions  (const char             *tool_name,
                                        JsonObject             *input,
                                        const TallyToolContext *context);
void       tally_gate_rule_free        (TallyGateRule          *rule);

G_END_DECLS
