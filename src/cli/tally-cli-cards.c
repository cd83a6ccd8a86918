/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Cards on stdin (docs/architecture.md §11.2): each pending card
 * reads lines from stdin. Approvals: `y`, `a` (always, first suggestion),
 * `n`, `n: MESSAGE`, `e: JSON`. Questions: one line per question, option
 * numbers (`1` or `1,3`), optionally `+ free text`, or any other text as the
 * free-text answer; an empty line dismisses the card. End of input
 * dismisses or denies. */

#define G_LOG_DOMAIN "tally-cli"

#include "config.h"

#include <gio/gunixinputstream.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <unistd.h>

#include "tally-cli-private.h"
#include "tally-event.h"
#include "tally-json.h"
#include "tally-questions.h"

static void read_card_line (Cli *cli);

static void
card_done (Cli *cli)
{
  g_clear_pointer (&cli->card_id, g_free);
  g_clear_pointer (&cli->suggestions, json_array_unref);
  g_clear_pointer (&cli->questions, json_array_unref);
  g_clear_pointer (&cli->answers, json_object_unref);
  cli->question_index = 0;
}

static void
prompt_question (Cli *cli)
{
  JsonObject *question = json_array_get_object_element (cli->questions, cli->question_index);
  JsonArray *options = tally_json_object_get_array (question, "options");
  gboolean multi = json_object_get_boolean_member_with_default (question, "multiSelect", FALSE);
  g_autofree char *header = tally_cli_escape (tally_json_object_get_string (question, "header", ""));
  g_autofree char *text = tally_cli_escape (tally_json_object_get_string (question, "question", ""));

  g_printerr ("\n[%s] %s\n", header, text);
  for (guint i = 0; i < json_array_get_length (options); i++)
    {
      JsonObject *option = json_array_get_object_element (options, i);
      g_autofree char *label = tally_cli_escape (tally_json_object_get_string (option, "label", ""));
      g_autofree char *description =
        tally_cli_escape (json_object_get_string_member_with_default (option, "description", ""));

      g_printerr ("  %u. %s — %s\n", i + 1, label, description);
    }
  g_printerr ("%s", multi
              ? _("Pick one or more (e.g. 1,3), add “+ text” for your own words, type an answer, "
                  "or leave empty to dismiss: ")
              : _("Pick a number, type your own answer, or leave empty to dismiss: "));
}

/* Prints @text under the prompt, each line indented, escaped. */
static void
print_indented (const char *text)
{
  g_autofree char *safe = tally_cli_escape (text);
  g_auto(GStrv) lines = g_strsplit (safe, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    g_printerr ("    %s\n", lines[i]);
}

/* An approval shows what the call would do in full, as the card in the
 * window does (docs/architecture.md §11.2): the whole command or query
 * the tool runs, or else the whole input, never a summary that could
 * name another member than the one that runs. */
static void
show_approval (Cli        *cli,
               JsonObject *event)
{
  const char *tool_name = tally_json_object_get_string (event, "tool_name", "");
  JsonNode *input = json_object_get_member (event, "tool_input");
  g_autoptr(TallyToolPreview) preview = tally_cli_dup_preview (tool_name, input);
  g_autofree char *safe_name = tally_cli_escape (tool_name);

  tally_cli_close_open_text (cli);
  if (preview != NULL && preview->kind == TALLY_TOOL_PREVIEW_COMMAND && preview->new_text != NULL)
    {
      /* TRANSLATORS: the tool's name; the command follows on its own lines */
      g_printerr (_("\nApprove %s, which runs this command:\n"), safe_name);
      print_indented (preview->new_text);
    }
  else if (preview != NULL && preview->kind == TALLY_TOOL_PREVIEW_QUERY && preview->new_text != NULL)
    {
      /* TRANSLATORS: the tool's name; the query follows on its own lines */
      g_printerr (_("\nApprove %s, which runs this query:\n"), safe_name);
      print_indented (preview->new_text);
    }
  else
    {
      g_autofree char *json = input != NULL ? json_to_string (input, TRUE) : g_strdup ("{}");

      /* TRANSLATORS: the tool's name; its whole input follows as JSON */
      g_printerr (_("\nApprove %s with this input:\n"), safe_name);
      print_indented (json);
    }
  if (json_object_get_boolean_member_with_default (event, "outside_workspace", FALSE))
    g_printerr ("  %s\n", _("(this touches a path outside the workspace)"));
  if (cli->suggestions != NULL && json_array_get_length (cli->suggestions) > 0)
    {
      JsonObject *first = json_array_get_object_element (cli->suggestions, 0);
      g_autofree char *label = tally_cli_escape (tally_json_object_get_string (first, "label", ""));
      g_autofree char *rule = tally_cli_escape (tally_json_object_get_string (first, "rule", ""));

      g_printerr ("  a = %s [%s]\n", label, rule);
    }
  g_printerr ("%s", _("Allow? [y]es, [a]lways, [n]o, “n: message”, “e: {json}”: "));
}

static gboolean
parse_option_list (const char *text,
                   guint       n_options,
                   GPtrArray  *picked)
{
  g_auto(GStrv) parts = g_strsplit (text, ",", -1);

  for (guint i = 0; parts[i] != NULL; i++)
    {
      char *end = NULL;
      guint64 n;
      g_strstrip (parts[i]);
      if (parts[i][0] == '\0' || !g_ascii_isdigit (parts[i][0]))
        return FALSE;
      n = g_ascii_strtoull (parts[i], &end, 10);
      if (*end != '\0' || n < 1 || n > n_options)
        return FALSE;
      /* "2,2" picks option 2 once, as a click on a chosen chip would */
      if (!g_ptr_array_find (picked, GUINT_TO_POINTER ((guint)n), NULL))
        g_ptr_array_add (picked, GUINT_TO_POINTER ((guint)n));
    }

  return picked->len > 0;
}

/* Returns FALSE when the line should be read again. */
static gboolean
handle_question_line (Cli        *cli,
                      const char *line)
{
  JsonObject *question = json_array_get_object_element (cli->questions, cli->question_index);
  JsonArray *options = tally_json_object_get_array (question, "options");
  gboolean multi = json_object_get_boolean_member_with_default (question, "multiSelect", FALSE);
  g_autoptr(GPtrArray) picked = g_ptr_array_new ();
  g_autoptr(GPtrArray) labels = g_ptr_array_new ();
  g_autofree char *list_part = NULL;
  const char *free_text = NULL;
  const char *plus = strstr (line, " + ");
  g_autofree char *answer = NULL;

  if (plus != NULL)
    {
      list_part = g_strndup (line, plus - line);
      if (parse_option_list (list_part, json_array_get_length (options), picked))
        free_text = plus + 3;
      else if (list_part[strspn (list_part, "0123456789, ")] == '\0')
        {
          /* "1,5 + words" with no option 5: a typo, as below */
          g_printerr (_("Pick option numbers from 1 to %u.\n"), json_array_get_length (options));
          return FALSE;
        }
      else
        g_ptr_array_set_size (picked, 0);
    }
  if (free_text == NULL && !parse_option_list (line, json_array_get_length (options), picked))
    {
      g_ptr_array_set_size (picked, 0);
      /* Digits and commas only, but not valid option numbers: a typo, not
       * an answer. */
      if (line[strspn (line, "0123456789, ")] == '\0')
        {
          g_printerr (_("Pick option numbers from 1 to %u.\n"), json_array_get_length (options));
          return FALSE;
        }
      free_text = line;
    }

  if (!multi && picked->len > 1)
    {
      g_printerr ("%s\n", _("This question takes one option; pick a single number."));
      return FALSE;
    }

  for (guint i = 0; i < picked->len; i++)
    {
      JsonObject *option = json_array_get_object_element (options, GPOINTER_TO_UINT (g_ptr_array_index (picked, i)) - 1);
      g_ptr_array_add (labels, (gpointer)tally_json_object_get_string (option, "label", ""));
    }
  g_ptr_array_add (labels, NULL);

  answer = tally_questions_join_answer ((const char * const *)labels->pdata, free_text);
  json_object_set_string_member (cli->answers, tally_json_object_get_string (question, "question", ""), answer);
  return TRUE;
}

static void
finish_question_card (Cli        *cli,
                      JsonObject *answers)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *id = g_strdup (cli->card_id);

  card_done (cli);
  if (!tally_agent_answer_question (cli->agent, id, answers, &error))
    g_printerr ("tally-cli: %s\n", error->message);
}

static void
finish_approval (Cli                 *cli,
                 TallyApprovalAnswer  answer)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *id = g_strdup (cli->card_id);
  g_autofree char *rule_copy = g_strdup (answer.rule);
  g_autofree char *scope_copy = g_strdup (answer.scope);

  card_done (cli);
  answer.rule = rule_copy;
  answer.scope = scope_copy;
  if (!tally_agent_resolve_approval (cli->agent, id, &answer, &error))
    g_printerr ("tally-cli: %s\n", error->message);
}

static void
handle_card_line (Cli        *cli,
                  const char *raw)
{
  g_autofree char *line = g_strstrip (g_strdup (raw));

  /* A terminal shows what was typed; from a pipe, echo it so the prompt
   * ends its line and a log shows the answer. */
  if (!cli->interactive)
    g_printerr ("%s\n", raw);

  if (cli->card_is_question)
    {
      if (*line == '\0')
        {
          finish_question_card (cli, NULL);
          return;
        }
      if (!handle_question_line (cli, line))
        {
          read_card_line (cli);
          return;
        }
      if (++cli->question_index < json_array_get_length (cli->questions))
        {
          prompt_question (cli);
          read_card_line (cli);
          return;
        }
      {
        g_autoptr(JsonObject) answers = json_object_ref (cli->answers);
        finish_question_card (cli, answers);
      }
      return;
    }

  if (g_ascii_strcasecmp (line, "y") == 0 || g_ascii_strcasecmp (line, "yes") == 0)
    finish_approval (cli, (TallyApprovalAnswer) { .decision = TALLY_DECISION_ALLOW });
  else if (g_ascii_strcasecmp (line, "a") == 0 || g_ascii_strcasecmp (line, "always") == 0)
    {
      if (cli->suggestions != NULL && json_array_get_length (cli->suggestions) > 0)
        {
          JsonObject *first = json_array_get_object_element (cli->suggestions, 0);

          finish_approval (cli, (TallyApprovalAnswer) {
                             .decision = TALLY_DECISION_ALLOW_ALWAYS,
                             .rule = tally_json_object_get_string (first, "rule", ""),
                             .scope = tally_json_object_get_string (first, "scope", ""),
                           });
        }
      else
        finish_approval (cli, (TallyApprovalAnswer) { .decision = TALLY_DECISION_ALLOW });
    }
  else if (g_ascii_strcasecmp (line, "n") == 0 || g_ascii_strcasecmp (line, "no") == 0)
    finish_approval (cli, (TallyApprovalAnswer) { .decision = TALLY_DECISION_DENY });
  else if (g_str_has_prefix (line, "n:"))
    {
      /* The analyst's message goes to the model verbatim (one leading
       * space after the colon is part of the syntax). */
      const char *message = raw + (strstr (raw, "n:") - raw) + 2;

      if (*message == ' ')
        message++;
      finish_approval (cli, (TallyApprovalAnswer) { .decision = TALLY_DECISION_DENY, .message = message });
    }
  else if (g_str_has_prefix (line, "e:"))
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonNode *root;

      if (!json_parser_load_from_data (parser, line + 2, -1, NULL) ||
          (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
        {
          g_printerr ("%s\n", _("“e:” needs the edited input as a JSON object, e.g. e: {\"command\":\"ls\"}"));
          read_card_line (cli);
          return;
        }
      finish_approval (cli, (TallyApprovalAnswer) { .decision = TALLY_DECISION_ALLOW_EDITED,
                                                    .updated_input = json_node_get_object (root) });
    }
  else
    {
      g_printerr ("%s\n", _("Answer y, a, n, “n: message” or “e: {json}”."));
      read_card_line (cli);
    }
}

static void
dismiss_card (Cli *cli)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *id = g_strdup (cli->card_id);
  gboolean question = cli->card_is_question;

  card_done (cli);
  if (question)
    tally_agent_answer_question (cli->agent, id, NULL, &error);
  else
    tally_agent_dismiss_approval (cli->agent, id, &error);
  if (error != NULL)
    g_printerr ("tally-cli: %s\n", error->message);
}

static void
card_line_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Cli *cli = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;

  cli->stdin_reading = FALSE;
  line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (object), result, NULL, &error);
  if (cli->card_id == NULL || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  if (line == NULL)
    {
      if (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_printerr ("tally-cli: %s\n", error->message);
      cli->stdin_eof = TRUE;
      dismiss_card (cli);
      return;
    }

  handle_card_line (cli, line);
}

static void
read_card_line (Cli *cli)
{
  if (cli->stdin_eof)
    {
      dismiss_card (cli);
      return;
    }

  if (cli->stdin_lines == NULL)
    {
      g_autoptr(GInputStream) in = g_unix_input_stream_new (STDIN_FILENO, FALSE);
      cli->stdin_lines = g_data_input_stream_new (in);
      cli->stdin_cancellable = g_cancellable_new ();
    }

  cli->stdin_reading = TRUE;
  g_data_input_stream_read_line_async (cli->stdin_lines, G_PRIORITY_DEFAULT, cli->stdin_cancellable,
                                       card_line_cb, cli);
}

/* Ends a pending read of stdin and frees the stream: the read holds a
 * reference to it until its callback has run. */
void
tally_cli_stop_reading_stdin (Cli *cli)
{
  if (cli->stdin_reading)
    g_cancellable_cancel (cli->stdin_cancellable);
  while (cli->stdin_reading)
    g_main_context_iteration (NULL, TRUE);

  card_done (cli);
  g_clear_object (&cli->stdin_lines);
  g_clear_object (&cli->stdin_cancellable);
}

void
tally_cli_start_card (Cli        *cli,
                      JsonObject *event)
{
  card_done (cli);
  if (tally_event_get_event_type (event) == TALLY_EVENT_APPROVAL_REQUEST)
    {
      cli->card_is_question = FALSE;
      cli->card_id = g_strdup (tally_json_object_get_string (event, "approval_id", ""));
      cli->suggestions = json_array_ref (json_object_get_array_member (event, "suggestions"));
      show_approval (cli, event);
    }
  else
    {
      cli->card_is_question = TRUE;
      cli->card_id = g_strdup (tally_json_object_get_string (event, "question_id", ""));
      cli->questions = json_array_ref (json_object_get_array_member (event, "questions"));
      cli->answers = json_object_new ();
      tally_cli_close_open_text (cli);
      prompt_question (cli);
    }

  /* Read after the event has been handled, from the main loop. */
  read_card_line (cli);
}
