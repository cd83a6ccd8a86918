/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * libFuzzer target: the AskUserQuestion input validator
 * (src/core/agent/tally-questions.h: tally_questions_validate()) and what
 * consumes an input it accepts: the answer text for the model and the
 * transcript's question card.
 *
 * Input: the tool input as JSON text. An input that is not a JSON object
 * goes to the validator as {"questions": <input>} (the model may send any
 * JSON value there).
 *
 * Checked always: nothing crashes or logs a critical, a refusal comes with
 * a message, and an accepted input has 1–4 questions, each an object with
 * a question, a header and 2–4 options that have a label and a description.
 *
 * Checked with TALLY_FUZZ_STRICT=1 (docs/testing.md; issue 10, item 4): a
 * header has at most 12 characters, option labels within a question are
 * distinct, and no text is longer than 10,000 characters.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "tally-event.h"
#include "tally-fuzz.h"
#include "tally-questions.h"
#include "tally-transcript.h"

#define STRICT_MAX_TEXT 10000

static gboolean strict;

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  tally_fuzz_quiet_logs ();
  strict = g_strcmp0 (g_getenv ("TALLY_FUZZ_STRICT"), "1") == 0;
  return 0;
}

static G_NORETURN void
fail (const char *what,
      JsonObject *input)
{
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), input);
  g_autofree char *json = json_to_string (node, FALSE);

  g_printerr ("%s\n  input: %s\n", what, json);
  abort ();
}

static const char *
string_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static void
check_text (const char *text,
            JsonObject *input)
{
  if (strict && g_utf8_strlen (text, -1) > STRICT_MAX_TEXT)
    fail ("an accepted input has a text longer than the limit", input);
}

/* What an accepted input must look like. */
static void
check_accepted (JsonObject *input)
{
  JsonArray *questions = json_object_get_array_member (input, "questions");
  guint n = json_array_get_length (questions);

  if (n < 1 || n > 4)
    fail ("accepted a number of questions outside 1–4", input);

  for (guint i = 0; i < n; i++)
    {
      JsonNode *qnode = json_array_get_element (questions, i);
      g_autoptr(GHashTable) labels = g_hash_table_new (g_str_hash, g_str_equal);
      JsonObject *question;
      JsonNode *onode;
      JsonArray *options;
      const char *header;

      if (!JSON_NODE_HOLDS_OBJECT (qnode))
        fail ("accepted a question that is not an object", input);
      question = json_node_get_object (qnode);

      header = string_member (question, "header");
      if (string_member (question, "question") == NULL || header == NULL)
        fail ("accepted a question without question or header text", input);
      check_text (string_member (question, "question"), input);
      check_text (header, input);
      if (strict && g_utf8_strlen (header, -1) > 12)
        fail ("accepted a header longer than 12 characters", input);

      onode = json_object_get_member (question, "options");
      if (onode == NULL || !JSON_NODE_HOLDS_ARRAY (onode))
        fail ("accepted a question without an options array", input);
      options = json_node_get_array (onode);
      if (json_array_get_length (options) < 2 || json_array_get_length (options) > 4)
        fail ("accepted a number of options outside 2–4", input);

      for (guint j = 0; j < json_array_get_length (options); j++)
        {
          JsonNode *option = json_array_get_element (options, j);
          const char *label;

          if (!JSON_NODE_HOLDS_OBJECT (option))
            fail ("accepted an option that is not an object", input);
          label = string_member (json_node_get_object (option), "label");
          if (label == NULL || string_member (json_node_get_object (option), "description") == NULL)
            fail ("accepted an option without label or description", input);
          check_text (label, input);
          check_text (string_member (json_node_get_object (option), "description"), input);
          if (strict && !g_hash_table_add (labels, (gpointer) label))
            fail ("accepted two options with the same label", input);
        }
    }
}

/* The analyst picks the first option of every question (and every option
 * of the last one, with a typed answer), as the question card would. */
static JsonObject *
make_answers (JsonArray *questions)
{
  JsonObject *answers = json_object_new ();
  guint n = json_array_get_length (questions);

  for (guint i = 0; i < n; i++)
    {
      JsonObject *question = json_array_get_object_element (questions, i);
      JsonArray *options = json_object_get_array_member (question, "options");
      g_autoptr(GPtrArray) labels = g_ptr_array_new ();
      g_autofree char *answer = NULL;

      for (guint j = 0; j < json_array_get_length (options); j++)
        {
          g_ptr_array_add (labels, (gpointer) json_object_get_string_member (json_array_get_object_element (options, j), "label"));
          if (i + 1 < n)
            break;
        }
      g_ptr_array_add (labels, NULL);
      answer = tally_questions_join_answer ((const char * const *) labels->pdata, i + 1 == n ? "typed" : NULL);
      json_object_set_string_member (answers, json_object_get_string_member (question, "question"), answer);
    }

  return answers;
}

/* Stamps @fields (transfer full) as event @seq of one turn and applies it. */
static void
apply (TallyTranscript *transcript,
       JsonObject      *fields,
       gint64           seq)
{
  JsonObject *event = tally_event_stamp (fields, seq, seq, "fuzz-session", "fuzz-turn");

  tally_transcript_apply (transcript, event);
  json_object_unref (event);
  json_object_unref (fields);
}

static void
show_and_answer (JsonObject *input)
{
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  JsonArray *questions = json_object_get_array_member (input, "questions");
  g_autoptr(JsonObject) answers = make_answers (questions);
  g_autofree char *result = tally_questions_format_answers (questions, answers);
  g_autofree char *trace = NULL;
  JsonObject *fields;

  if (result == NULL || !g_utf8_validate (result, -1, NULL))
    fail ("the answer text is missing or not UTF-8", input);

  fields = tally_event_new (TALLY_EVENT_TURN_STARTED);
  json_object_set_string_member (fields, "prompt", "fuzz");
  json_object_set_string_member (fields, "mode", "ask");
  apply (transcript, fields, 1);

  fields = tally_event_new (TALLY_EVENT_QUESTION_REQUEST);
  json_object_set_string_member (fields, "question_id", "q1");
  json_object_set_string_member (fields, "tool_id", "toolu_1");
  json_object_set_member (fields, "questions", json_node_copy (json_object_get_member (input, "questions")));
  apply (transcript, fields, 2);

  fields = tally_event_new (TALLY_EVENT_QUESTION_RESOLVED);
  json_object_set_string_member (fields, "question_id", "q1");
  json_object_set_object_member (fields, "answers", json_object_ref (answers));
  json_object_set_string_member (fields, "reason", "answered");
  apply (transcript, fields, 3);

  trace = tally_transcript_dup_trace (transcript);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonObject) input = NULL;
  g_autoptr(GError) error = NULL;
  JsonNode *root;

  if (!json_parser_load_from_data (parser, (const char *) data, (gssize) size, NULL))
    return 0;
  root = json_parser_get_root (parser);
  if (root == NULL)
    return 0;

  if (JSON_NODE_HOLDS_OBJECT (root))
    {
      input = json_object_ref (json_node_get_object (root));
    }
  else
    {
      input = json_object_new ();
      json_object_set_member (input, "questions", json_node_copy (root));
    }

  if (!tally_questions_validate (input, &error))
    {
      if (error == NULL || error->message == NULL || *error->message == '\0')
        fail ("refused without a message", input);
      if (!g_utf8_validate (error->message, -1, NULL))
        fail ("the refusal is not UTF-8", input);
      return 0;
    }
  if (error != NULL)
    fail ("accepted with an error set", input);

  check_accepted (input);
  show_and_answer (input);

  return 0;
}
