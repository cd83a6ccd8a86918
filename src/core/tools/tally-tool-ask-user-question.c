/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool-ask-user-question.h"

/*
 * `AskUserQuestion`: a card-backed tool. The agent's gate sends its calls to
 * the question broker (a card in the window, stdin in tally-cli), so this
 * class only tells the model what the tool is for and what its input looks
 * like (docs/architecture.md §7.1, §8.1); it never runs.
 */

struct _TallyToolAskUserQuestion
{
  TallyTool parent_instance;
};

G_DEFINE_FINAL_TYPE (TallyToolAskUserQuestion, tally_tool_ask_user_question, TALLY_TYPE_TOOL)

static void
tally_tool_ask_user_question_class_init (TallyToolAskUserQuestionClass *klass)
{
  TallyToolClass *tool_class = TALLY_TOOL_CLASS (klass);

  tool_class->name = "AskUserQuestion";
  tool_class->description =
    "Ask the analyst one to four multiple-choice questions and wait for the answers. Use it "
    "when a request leaves open a choice that would change the result (the period, the "
    "grouping, the metric, which stores or products, chart or no chart) instead of guessing, "
    "and instead of asking in prose. Each question has a short header shown as a chip (at most "
    "12 characters), the question itself, and 2 to 4 options with a label and a one-line "
    "description; set multiSelect when several options may apply. The analyst can always type "
    "their own answer, so do not add an \"Other\" option. Ask one round of questions, then do "
    "the work. The result lists each question with the analyst's answer. Limits: a question "
    "at most 1000 characters, a header 12, an option label 60 (one line, each label different "
    "within its question), a description 300, a preview 2000; input that breaks a limit is "
    "returned as an error naming what to fix, and nothing is shown to the analyst.";
  tool_class->input_schema =
    "{\"type\":\"object\","
    "\"properties\":{"
    "\"questions\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":4,"
    "\"description\":\"The questions, asked together on one card.\","
    "\"items\":{\"type\":\"object\","
    "\"properties\":{"
    "\"question\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":1000,\"description\":\"The full question, ending with a question mark.\"},"
    "\"header\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":12,\"description\":\"A very short label for the question (12 characters at most).\"},"
    "\"options\":{\"type\":\"array\",\"minItems\":2,\"maxItems\":4,"
    "\"items\":{\"type\":\"object\","
    "\"properties\":{"
    "\"label\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":60,\"description\":\"The option as the analyst will pick it (1 to 5 words).\"},"
    "\"description\":{\"type\":\"string\",\"maxLength\":300,\"description\":\"What choosing this option means.\"},"
    "\"preview\":{\"type\":\"string\",\"maxLength\":2000,\"description\":\"Optional: a short sample of the result for this option.\"}"
    "},\"required\":[\"label\",\"description\"]}},"
    "\"multiSelect\":{\"type\":\"boolean\",\"default\":false,"
    "\"description\":\"True when the analyst may pick several options.\"}"
    "},\"required\":[\"question\",\"header\",\"options\"]}}"
    "},\"required\":[\"questions\"]}";
  tool_class->read_only = TRUE;
}

static void
tally_tool_ask_user_question_init (TallyToolAskUserQuestion *self)
{
}

/**
 * tally_tool_ask_user_question_new:
 *
 * Returns: (transfer full): the `AskUserQuestion` tool (its schema; the
 *   agent answers calls through a card)
 */
TallyTool *
tally_tool_ask_user_question_new (void)
{
  return g_object_new (TALLY_TYPE_TOOL_ASK_USER_QUESTION, NULL);
}
