/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-questions"

#include "config.h"

#include "tally-json.h"
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

/* Limits on AskUserQuestion input (docs/security.md, "Tool input"). The
 * header is a chip on the card; labels are buttons and the words of the
 * answer; the rest is read, so it may be longer, but not without end. */
#define MAX_QUESTIONS           4
#define MIN_OPTIONS             2
#define MAX_OPTIONS             4
#define MAX_QUESTION_CHARS   1000
#define MAX_HEADER_CHARS       12
#define MAX_LABEL_CHARS        60
#define MAX_DESCRIPTION_CHARS 300
#define MAX_PREVIEW_CHARS    2000

static gboolean fail (GError     **error,
                      const char  *format,
                      ...) G_GNUC_PRINTF (2, 3);

/* Sets a refusal for the model: what is wrong, then what to do. */
static gboolean
fail (GError     **error,
      const char  *format,
      ...)
{
  g_autofree char *problem = NULL;
  va_list args;

  va_start (args, format);
  problem = g_strdup_vprintf (format, args);
  va_end (args);

  g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
               "%s Nothing was shown to the analyst; fix this and call AskUserQuestion again.",
               problem);
  return FALSE;
}

typedef enum {
  TEXT_ONE_LINE     = 0,      /* no control character at all */
  TEXT_MULTI_LINE   = 1 << 0, /* line breaks and tabs allowed */
  TEXT_OPTIONAL     = 1 << 1, /* may be missing or null */
  TEXT_MAY_BE_EMPTY = 1 << 2, /* may be "" or blank */
} TextKind;

/* A control character in @text, as a code point, or 0. Line breaks and
 * tabs count only for one-line texts. */
static gunichar
find_control (const char *text,
              TextKind    kind)
{
  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if ((kind & TEXT_MULTI_LINE) != 0 && (c == '\n' || c == '\t'))
        continue;
      if (c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0x2028 || c == 0x2029)
        return c;
    }

  return 0;
}

/* Checks one text member: present (unless optional), a string, not blank
 * (unless it may be empty), at most @max_chars characters, and free of
 * control characters. */
static gboolean
check_text (JsonObject  *object,
            const char  *member,
            const char  *where,
            guint        max_chars,
            TextKind     kind,
            GError     **error)
{
  gboolean optional = (kind & TEXT_OPTIONAL) != 0;
  JsonNode *node = json_object_get_member (object, member);
  g_autofree char *trimmed = NULL;
  const char *text;
  glong n_chars;
  gunichar control;

  if ((node == NULL || JSON_NODE_HOLDS_NULL (node)) && optional)
    return TRUE;

  if (node == NULL)
    return fail (error, "%s has no “%s”; it needs a non-empty string there.", where, member);

  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return fail (error, "%s: “%s” must be a string, not %s.", where, member, tally_json_node_describe (node));

  text = json_node_get_string (node);
  trimmed = g_strstrip (g_strdup (text));
  if (*trimmed == '\0' && (kind & (TEXT_OPTIONAL | TEXT_MAY_BE_EMPTY)) == 0)
    return fail (error, "%s: “%s” is empty; it needs some text.", where, member);

  n_chars = g_utf8_strlen (text, -1);
  if (n_chars > (glong) max_chars)
    return fail (error, "%s: “%s” is %ld characters long; it may have at most %u. Shorten it.",
                 where, member, n_chars, max_chars);

  control = find_control (text, kind);
  if (control != 0)
    return fail (error, "%s: “%s” contains the control character U+%04X%s; remove it.",
                 where, member, control,
                 (kind & TEXT_MULTI_LINE) == 0 ? " (it must be a single line)" : "");

  return TRUE;
}

/* The form under which two labels count as the same: trimmed, case
 * folded and normalised, so "March" and " march" clash. */
static char *
label_key (const char *label)
{
  g_autofree char *trimmed = g_strstrip (g_strdup (label));
  g_autofree char *folded = g_utf8_casefold (trimmed, -1);

  return g_utf8_normalize (folded, -1, G_NORMALIZE_ALL);
}

static gboolean
check_option (JsonNode    *node,
              guint        question,
              guint        option,
              GHashTable  *labels,
              GError     **error)
{
  g_autofree char *where = g_strdup_printf ("Option %u of question %u", option, question);
  JsonObject *object;
  char *key;
  gpointer earlier;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return fail (error, "%s must be an object with “label” and “description”, not %s.",
                 where, tally_json_node_describe (node));
  object = json_node_get_object (node);

  if (!check_text (object, "label", where, MAX_LABEL_CHARS, TEXT_ONE_LINE, error) ||
      !check_text (object, "description", where, MAX_DESCRIPTION_CHARS,
                   TEXT_MULTI_LINE | TEXT_MAY_BE_EMPTY, error) ||
      !check_text (object, "preview", where, MAX_PREVIEW_CHARS, TEXT_MULTI_LINE | TEXT_OPTIONAL, error))
    return FALSE;

  key = label_key (json_object_get_string_member (object, "label"));
  if (key == NULL)
    return fail (error, "%s: “label” is not valid text.", where);
  if (g_hash_table_lookup_extended (labels, key, NULL, &earlier))
    {
      g_free (key);
      return fail (error, "Question %u: options %u and %u have the same label “%s”; every option "
                   "needs its own label.", question, GPOINTER_TO_UINT (earlier), option,
                   json_object_get_string_member (object, "label"));
    }
  g_hash_table_insert (labels, key, GUINT_TO_POINTER (option));

  return TRUE;
}

static gboolean
check_question (JsonNode    *node,
                guint        number,
                GHashTable  *seen,
                GError     **error)
{
  g_autoptr(GHashTable) labels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *where = g_strdup_printf ("Question %u", number);
  JsonObject *question;
  JsonNode *multi;
  JsonNode *onode;
  JsonArray *options;
  guint n_options;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return fail (error, "%s must be an object with “question”, “header” and “options”, not %s.",
                 where, tally_json_node_describe (node));
  question = json_node_get_object (node);

  if (!check_text (question, "question", where, MAX_QUESTION_CHARS, TEXT_MULTI_LINE, error) ||
      !check_text (question, "header", where, MAX_HEADER_CHARS, TEXT_ONE_LINE, error))
    return FALSE;

  if (!g_hash_table_add (seen, (gpointer) json_object_get_string_member (question, "question")))
    return fail (error, "%s repeats the text of an earlier question; each question must be different.",
                 where);

  multi = json_object_get_member (question, "multiSelect");
  if (multi != NULL && !JSON_NODE_HOLDS_NULL (multi) &&
      (!JSON_NODE_HOLDS_VALUE (multi) || json_node_get_value_type (multi) != G_TYPE_BOOLEAN))
    return fail (error, "%s: “multiSelect” must be true or false, not %s.", where, tally_json_node_describe (multi));

  onode = json_object_get_member (question, "options");
  if (onode == NULL || !JSON_NODE_HOLDS_ARRAY (onode))
    return fail (error, "%s needs “options”: an array of %d to %d options (it is %s).",
                 where, MIN_OPTIONS, MAX_OPTIONS, tally_json_node_describe (onode));
  options = json_node_get_array (onode);
  n_options = json_array_get_length (options);
  if (n_options < MIN_OPTIONS || n_options > MAX_OPTIONS)
    return fail (error, "%s has %u options; give %d to %d (the analyst can always type their own "
                 "answer, so do not add an “Other” option).", where, n_options, MIN_OPTIONS, MAX_OPTIONS);

  for (guint j = 0; j < n_options; j++)
    if (!check_option (json_array_get_element (options, j), number, j + 1, labels, error))
      return FALSE;

  return TRUE;
}

/**
 * tally_questions_validate:
 * @input: (nullable): the `AskUserQuestion` input, as the model sent it
 * @error: return location for a #GError
 *
 * Checks the input against the tool's schema and Tally's limits
 * (docs/architecture.md §7.1, docs/security.md "Tool input"):
 *
 * * `questions` is an array of 1–4 objects;
 * * each has a `question` (at most 1000 characters), a `header` (at most 12
 *   characters, one line), `options` (an array of 2–4 objects) and, when
 *   present and not null, a boolean `multiSelect`; question texts differ
 *   (answers are keyed by them);
 * * each option has a `label` (at most 60 characters, one line) and a
 *   `description` (a string of at most 300 characters, which may be empty),
 *   and may have a `preview` (at most 2000 characters; null counts as
 *   absent); labels within a question differ, ignoring case and
 *   surrounding blanks;
 * * `question`, `header` and `label` are strings that are not blank, and no
 *   text holds a control character (line breaks and tabs are allowed in
 *   questions, descriptions and previews).
 *
 * Characters are Unicode code points. Members the schema does not name are
 * ignored. The first problem found is reported.
 *
 * Pure: it reads only @input and changes nothing, so a fuzz target may
 * call it with any object.
 *
 * Returns: %TRUE when valid; %FALSE with %TALLY_TOOL_ERROR_INVALID_INPUT and
 *   a message for the model (not translated) that names the question,
 *   option and member at fault, says what is wrong and what to do, and
 *   says that nothing was shown to the analyst
 */
gboolean
tally_questions_validate (JsonObject  *input,
                          GError     **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  JsonNode *node;
  JsonArray *questions;
  guint n;

  if (input == NULL)
    return fail (error, "AskUserQuestion needs an object with “questions”: an array of 1 to %d "
                 "questions.", MAX_QUESTIONS);

  node = json_object_get_member (input, "questions");
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return fail (error, "AskUserQuestion needs “questions”: an array of 1 to %d questions (it is %s).",
                 MAX_QUESTIONS, tally_json_node_describe (node));

  questions = json_node_get_array (node);
  n = json_array_get_length (questions);
  if (n < 1 || n > MAX_QUESTIONS)
    return fail (error, "AskUserQuestion takes 1 to %d questions; this call had %u.", MAX_QUESTIONS, n);

  for (guint i = 0; i < n; i++)
    if (!check_question (json_array_get_element (questions, i), i + 1, seen, error))
      return FALSE;

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
