/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-exit-plan-mode.h"

/*
 * `ExitPlanMode`: a card-backed tool. The agent captures the plan, shows it
 * on a plan card and answers the call itself; this class only describes the
 * tool to the model (docs/architecture.md §7.2).
 */

struct _TallyToolExitPlanMode
{
  TallyTool parent_instance;
};

G_DEFINE_FINAL_TYPE (TallyToolExitPlanMode, tally_tool_exit_plan_mode, TALLY_TYPE_TOOL)

static void
tally_tool_exit_plan_mode_class_init (TallyToolExitPlanModeClass *klass)
{
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);

  tool_class->name = "ExitPlanMode";
  tool_class->description =
    "Hand your plan to the analyst when plan mode is on and you have explored enough to know "
    "what you would do. Write the plan in Markdown: the question as you understood it, the "
    "steps (which tables and queries, which files you would write, which charts), and what the "
    "analyst will get at the end. The plan is shown on a card; nothing runs until the analyst "
    "chooses to implement it. After calling this tool, stop and wait for their reply.";
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"plan\":{\"type\":\"string\",\"description\":\"The plan, in Markdown.\"}"
    "},\"required\":[\"plan\"]}";
  tool_class->read_only = TRUE;
}

static void
tally_tool_exit_plan_mode_init (TallyToolExitPlanMode *self)
{
}

/**
 * tally_tool_exit_plan_mode_new:
 *
 * Returns: (transfer full): the `ExitPlanMode` tool (its schema; the agent
 *   captures calls as plans)
 */
TallyTool *
tally_tool_exit_plan_mode_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_EXIT_PLAN_MODE, NULL);
}
