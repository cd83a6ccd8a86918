/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-questions"

#include "config.h"

#include "tally-questions.h"
#include "tally-tool.h"

/*
 * Structured questions (docs/architecture.md §7.1): the model calls
 * AskUserQuestion with 1–4 questions, each with a short header and 2–4
 * options; the analyst answers on a card (or on stdin in tally-cli); the
 * answers go back as that call's tool_result, in Tally's own words. Input
 * that breaks the schema gets an is_error result naming the problem, and no
 * card is shown.
 */

static gboolean
check_string (JsonObject  *object,
              const char  *member,
              const char  *where,
              GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING ||
      *json_node_get_string (node) == '\0')
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "%s needs a non-empty string “%s”.", where, member);
      return FALSE;
    }

  return TRUE;
}

/**
 * tally_questions_validate:
 * @input: the `AskUserQuestion` input
 * @error: return location for a #GError
 *
 * Checks the input against the tool's schema: `questions` is an array of 1–4
 * objects, each with non-empty `question` and `header` strings, `options`
 * an array of 2–4 objects with non-empty `label` and a string `description`
 * (`preview` optional), and `multiSelect` a boolean when present; question
 * texts are unique (answers are keyed by them).
 *
 * Returns: %TRUE when valid; %FALSE with %TALLY_TOOL_ERROR_INVALID_INPUT and
 *   a message for the model naming the problem
 */
gboolean
tally_questions_validate (JsonObject  *input,
                          GError     **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  JsonNode *node;
  JsonArray *questions;
  guint n;

  g_return_val_if_fail (input != NULL, FALSE);

  node = json_object_get_member (input, "questions");
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    {
      g_set_error_literal (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "AskUserQuestion needs “questions”: an array of 1 to 4 questions.");
      return FALSE;
    }

  questions = json_node_get_array (node);
  n = json_array_get_length (questions);
  if (n < 1 || n > 4)
    {
      g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                   "AskUserQuestion takes 1 to 4 questions; this call had %u. Nothing was shown "
                   "to the analyst.", n);
      return FALSE;
    }

  for (guint i = 0; i < n; i++)
    {
      JsonNode *qnode = json_array_get_element (questions, i);
      g_autofree char *where = g_strdup_printf ("Question %u", i + 1);
      JsonObject *question;
      JsonNode *onode;
      JsonNode *multi;
      JsonArray *options;
      guint n_options;

      if (!JSON_NODE_HOLDS_OBJECT (qnode))
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                       "%s must be an object.", where);
          return FALSE;
        }
      question = json_node_get_object (qnode);

      if (!check_string (question, "question", where, error) ||
          !check_string (question, "header", where, error))
        return FALSE;

      if (!g_hash_table_add (seen, (gpointer)json_object_get_string_member (question, "question")))
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                       "%s repeats the text of an earlier question; each question must be different.",
                       where);
          return FALSE;
        }

      multi = json_object_get_member (question, "multiSelect");
      if (multi != NULL && !JSON_NODE_HOLDS_NULL (multi) &&
          (!JSON_NODE_HOLDS_VALUE (multi) || json_node_get_value_type (multi) != G_TYPE_BOOLEAN))
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                       "%s: “multiSelect” must be true or false.", where);
          return FALSE;
        }

      onode = json_object_get_member (question, "options");
      if (onode == NULL || !JSON_NODE_HOLDS_ARRAY (onode))
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                       "%s needs “options”: an array of 2 to 4 options.", where);
          return FALSE;
        }
      options = json_node_get_array (onode);
      n_options = json_array_get_length (options);
      if (n_options < 2 || n_options > 4)
        {
          g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                       "%s has %u options; give 2 to 4 (the analyst can always type their own "
                       "answer, so do not add an “Other” option).", where, n_options);
          return FALSE;
        }

      for (guint j = 0; j < n_options; j++)
        {
          JsonNode *option = json_array_get_element (options, j);
          g_autofree char *owhere = g_strdup_printf ("Option %u of question %u", j + 1, i + 1);
          JsonNode *description;

          if (!JSON_NODE_HOLDS_OBJECT (option))
            {
              g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "%s must be an object.", owhere);
              return FALSE;
            }
          if (!check_string (json_node_get_object (option), "label", owhere, error))
            return FALSE;

          description = json_object_get_member (json_node_get_object (option), "description");
          if (description == NULL || !JSON_NODE_HOLDS_VALUE (description) ||
              json_node_get_value_type (description) != G_TYPE_STRING)
            {
              g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
                           "%s needs a string “description”.", owhere);
              return FALSE;
            }
        }
    }

  return TRUE;
}

/**
 * tally_questions_join_answer:
 * @labels: (nullable) (array zero-terminated=1): the chosen option labels
 * @free_text: (nullable): what the analyst typed
 *
 * Builds one question's answer as docs/architecture.md §7.1 says: the chosen
 * labels joined by ", ", then the free text as typed (also after ", ").
 *
 * Returns: (transfer full): the answer; empty when nothing was given
 */
char *
tally_questions_join_answer (const char * const *labels,
                             const char         *free_text)
{
  GString *answer = g_string_new (NULL);

  for (guint i = 0; labels != NULL && labels[i] != NULL; i++)
    {
      if (answer->len > 0)
        g_string_append (answer, ", ");
      g_string_append (answer, labels[i]);
    }

  if (free_text != NULL && *free_text != '\0')
    {
      if (answer->len > 0)
        g_string_append (answer, ", ");
      g_string_append (answer, free_text);
    }

  return g_string_free (answer, FALSE);
}

/**
 * tally_questions_format_answers:
 * @questions: the `questions` array of the call
 * @answers: question text → answer string
 *
 * Returns: (transfer full): the `tool_result` text telling the model each
 *   question and its answer, in Tally's own words
 */
char *
tally_questions_format_answers (JsonArray  *questions,
                                JsonObject *answers)
{
  GString *text = g_string_new ("The analyst answered your questions:\n");

  for (guint i = 0; i < json_array_get_length (questions); i++)
    {
      JsonObject *question = json_array_get_object_element (questions, i);
      const char *q = json_object_get_string_member (question, "question");
      const char *answer = json_object_get_string_member_with_default (answers, q, "");

      g_string_append_printf (text, "- “%s” → %s\n", q, *answer != '\0' ? answer : "(no answer)");
    }
  g_string_append (text, "Go on with the work using these answers; do not ask the same questions again.");

  return g_string_free (text, FALSE);
}

/**
 * tally_questions_not_answered:
 * @reason: `dismissed`, `timeout` or `cancel`
 *
 * Returns: (transfer full): the `is_error` text for questions the analyst
 *   did not answer
 */
char *
tally_questions_not_answered (const char *reason)
{
  const char *why = "dismissed the questions";

  if (g_strcmp0 (reason, "timeout") == 0)
    why = "did not answer in time";
  else if (g_strcmp0 (reason, "cancel") == 0)
    why = "stopped the turn before answering";

  return g_strdup_printf ("The analyst %s and gave no answer. Do not assume an answer or pick one "
                          "yourself; say what you would need to know, or continue only with what "
                          "does not depend on it.", why);
}

/**
 * tally_questions_plan_receipt:
 * @version: the plan's version number
 *
 * Returns: (transfer full): the `ExitPlanMode` result: the plan was shown
 *   and the model must stop and wait
 */
char *
tally_questions_plan_receipt (gint64 version)
{
  return g_strdup_printf ("Your plan (version %" G_GINT64_FORMAT ") is now with the analyst on a "
                          "plan card. Stop here: do not start the work and do not call more tools. "
                          "End your turn with at most one short sentence; the analyst will reply with "
                          "Implement or with changes to the plan.", version);
}
