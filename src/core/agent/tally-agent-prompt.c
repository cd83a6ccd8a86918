/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-agent"

#include "config.h"

#include "tally-agent-private.h"
#include "tally-pg-query.h"

/* What Tally tells the model besides the conversation: the system prompt
 * and the mode reminders (docs/protocol.md §2.1, §6). */

/**
 * tally_agent_dup_system_prompt:
 * @self: a #TallyAgent
 *
 * Builds Tally's instructions for the model (docs/protocol.md §2.1). The
 * text depends only on the database, the analyst's notes as they were when
 * the session started (docs/notes.md) and the workspace, never on the mode
 * or the turn, so it stays byte-identical across turns and the prompt cache
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

  if (self->database != NULL && tally_pg_conninfo_is (self->database))
    {
      /* Names the engine and its version (docs/postgresql.md). */
      g_autofree char *section = tally_pg_dup_prompt_section (self->database);

      g_string_append (prompt, section);
    }
  else if (self->database != NULL)
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

  /* Fixed when the session started (tally-agent-notes.c, docs/notes.md). */
  if (self->notes_prompt != NULL)
    g_string_append_printf (prompt,
      "# The analyst's notes about this database\n"
      "The analyst wrote these definitions and rules for this database. Follow them, and do not "
      "ask about what they already settle.\n<notes>\n%s\n</notes>\n\n", self->notes_prompt);

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
    "- Show the SQL that produced a figure when the analyst asks for it.\n"
    "- Chart a trend over time, or a comparison across more than a few items, with the "
    "create_chart tool (give it the aggregating SQL); then describe in words what the chart "
    "shows. A handful of numbers needs no chart, and \"chart or no chart\" is one of the "
    "choices to ask about when it is open.\n\n"
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
/* The mode reminder for a turn (docs/protocol.md §6): plan mode is
 * restated every plan turn; ask and auto are said when the mode changes,
 * and leaving plan mode says plainly that it ended and that the analyst
 * approved going ahead. Returns (transfer full) (nullable). */
char *
tally_agent_mode_reminder (TallyMode mode,
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
