/* SPDX-License-Identifier: GPL-3.0-or-later */

/* tally-cli's readable output: the events of a turn or of a replayed
 * session as text on stdout and stderr (docs/architecture.md §11.2), and
 * the session lines of --list and --search. */

#define G_LOG_DOMAIN "tally-cli"

#include "config.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <string.h>
#include <stdio.h>

#include "tally-cli-private.h"
#include "tally-event.h"
#include "tally-format.h"
#include "tally-json.h"
#include "tally-receipt.h"
#include "tally-tool-registry.h"

/* The errno of the first flush of stdout that failed, 0 while none did */
static int out_errno;

void
tally_cli_out_flush (void)
{
  if (fflush (stdout) != 0 && out_errno == 0)
    out_errno = errno;
}

/* Flushes stdout a last time. Returns the errno of the first write to
 * stdout that failed, -1 when stdio says only that one did (a write
 * through g_print() flushes on its own), 0 when all of the output was
 * written. */
int
tally_cli_out_finish (void)
{
  tally_cli_out_flush ();
  if (out_errno == 0 && ferror (stdout))
    out_errno = -1;
  return out_errno;
}

void
tally_cli_close_open_text (Cli *cli)
{
  if (cli->thinking_open)
    {
      g_printerr ("%s\n", cli->color ? "\033[0m" : "");
      cli->thinking_open = FALSE;
    }
  if (cli->text_open)
    {
      g_print ("\n");
      tally_cli_out_flush ();
      cli->text_open = FALSE;
    }
}

/**
 * tally_cli_escape:
 * @text: (nullable): text from the model, the API, a tool or the store
 *
 * Makes @text safe to print on a terminal: each character that could move
 * the cursor, rewrite what is shown or reorder it is written as an escape
 * (`\x1b`, `\u202e`), so that what an approval prompt shows is what runs.
 * Newlines and tabs stay. Invalid UTF-8 is replaced with U+FFFD. The
 * readable output escapes everything it prints from outside; `--json` and
 * `--replay` print the events as stored.
 *
 * Returns: (transfer full): the escaped text; "" for %NULL
 */
char *
tally_cli_escape (const char *text)
{
  /* One rule for the whole application (src/core/util/tally-format.c). */
  return tally_format_terminal_safe (text);
}

/**
 * tally_cli_dup_preview:
 * @tool_name: (nullable): a tool's name, as in a `tool_use` block
 * @input: (nullable): the call's input
 *
 * Asks the tool what the call would do, as the window's cards ask it
 * (tally_tool_dup_preview() without a workspace: nothing is read). The
 * tools are stateless, so one registry serves the whole run.
 *
 * Returns: (transfer full) (nullable): the preview, or %NULL for an
 *   unknown tool or an input that is not an object
 */
TallyToolPreview *
tally_cli_dup_preview (const char *tool_name,
                       JsonNode   *input)
{
  static TallyToolRegistry *tools;
  TallyTool *tool;

  if (tool_name == NULL || input == NULL || !JSON_NODE_HOLDS_OBJECT (input))
    return NULL;
  if (tools == NULL)
    tools = tally_tool_registry_new_default ();
  tool = tally_tool_registry_lookup (tools, tool_name);
  return tool != NULL ? tally_tool_dup_preview (tool, NULL, json_node_get_object (input), NULL) : NULL;
}

char *
tally_cli_one_line (JsonNode *node,
                    gsize     max_chars)
{
  g_autofree char *text = NULL;
  g_autofree char *safe = NULL;
  g_autoptr(GString) out = NULL;

  if (node == NULL)
    return g_strdup ("");

  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *object = json_node_get_object (node);

      /* The most telling member first: the SQL of a query, the path of a
       * file, the pattern of a search. */
      static const char *const keys[] = { "sql", "file_path", "pattern", "command", "table" };
      for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
        if (json_object_has_member (object, keys[i]) &&
            JSON_NODE_HOLDS_VALUE (json_object_get_member (object, keys[i])))
          {
            text = g_strdup (json_object_get_string_member_with_default (object, keys[i], ""));
            break;
          }
    }
  else if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    text = g_strdup (json_node_get_string (node));
  if (text == NULL)
    text = json_to_string (node, FALSE);
  safe = tally_format_terminal_safe (text);

  out = g_string_new (NULL);
  for (const char *p = safe; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (g_utf8_strlen (out->str, -1) >= (glong)max_chars)
        {
          g_string_append (out, "…");
          break;
        }
      if (g_unichar_isspace (c))
        {
          if (out->len > 0 && out->str[out->len - 1] != ' ')
            g_string_append_c (out, ' ');
        }
      else
        g_string_append_unichar (out, c);
    }

  return g_string_free (g_steal_pointer (&out), FALSE);
}

/**
 * tally_cli_print_json_line:
 * @object: what to print
 *
 * Prints @object as one line of compact JSON on standard output: the
 * `--json` form of a command's result.
 */
void
tally_cli_print_json_line (JsonObject *object)
{
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), object);
  g_autofree char *line = json_to_string (node, FALSE);

  g_print ("%s\n", line);
}

static void
print_receipt (Cli        *cli,
               JsonObject *event)
{
  TallyReceipt receipt;
  g_autofree char *line = NULL;

  tally_receipt_init (&receipt, event);
  /* Every HTTP attempt that got an answer, failed ones included, so a
   * failed turn's cost is never next to "0 API calls". */
  receipt.api_calls = MAX (cli->attempts, receipt.api_calls);
  line = tally_receipt_dup_line (&receipt, TALLY_RECEIPT_STYLE_TERMINAL);

  tally_cli_close_open_text (cli);
  g_print ("%s\n", line);
  tally_cli_out_flush ();
}

/* Escapes @text (tally_cli_escape()) into a string @owned keeps. */
static const char *
escaped (GPtrArray  *owned,
         const char *text)
{
  char *safe = tally_cli_escape (text);

  g_ptr_array_add (owned, safe);
  return safe;
}

void
tally_cli_print_event (Cli        *cli,
                       JsonObject *event)
{
  const char *dim = cli->color ? "\033[2m" : "";
  const char *reset = cli->color ? "\033[0m" : "";
  /* What the model, the API or a tool wrote, escaped (tally_cli_escape()) */
  g_autoptr(GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);

  switch (tally_event_get_event_type (event))
    {
    case TALLY_EVENT_TEXT_DELTA:
      {
        if (cli->thinking_open)
          {
            g_printerr ("%s\n", reset);
            cli->thinking_open = FALSE;
          }
        g_print ("%s", escaped (owned, tally_json_object_get_string (event, "text", "")));
        tally_cli_out_flush ();
        cli->text_open = TRUE;
      }
      break;

    case TALLY_EVENT_THINKING_DELTA:
      {
        if (!cli->thinking_open)
          {
            tally_cli_close_open_text (cli);
            g_printerr ("%s%s ", dim, _("Thinking:"));
            cli->thinking_open = TRUE;
          }
        g_printerr ("%s", escaped (owned, tally_json_object_get_string (event, "text", "")));
      }
      break;

    case TALLY_EVENT_TOOL_USE_START:
      {
        const char *tool_name = tally_json_object_get_string (event, "tool_name", "");
        JsonNode *tool_input = json_object_get_member (event, "tool_input");
        /* What the tool will use (the command of a Bash call, the path of
         * a file), as the window's chip shows it, not whichever member
         * comes first; else the most telling member. */
        g_autoptr(TallyToolPreview) preview = tally_cli_dup_preview (tool_name, tool_input);
        g_autofree char *input = NULL;

        if (preview != NULL && preview->kind != TALLY_TOOL_PREVIEW_INPUT &&
            (preview->subject != NULL || preview->new_text != NULL))
          {
            const char *what = preview->subject != NULL ? preview->subject : preview->new_text;
            g_autoptr(JsonNode) node = json_node_init_string (json_node_alloc (), what);

            input = tally_cli_one_line (node, 100);
          }
        else
          input = tally_cli_one_line (tool_input, 100);

        tally_cli_close_open_text (cli);
        g_printerr ("▸ %s %s%s%s\n", escaped (owned, tool_name),
                    dim, input, reset);
      }
      break;

    case TALLY_EVENT_TOOL_RESULT:
      {
        const char *content = tally_json_object_get_string (event, "content", "");

        if (tally_json_object_get_bool (event, "is_error", FALSE))
          {
            g_autoptr(JsonNode) node = json_node_init_string (json_node_alloc (), content);
            g_autofree char *line = tally_cli_one_line (node, 160);

            g_printerr ("  ✗ %s\n", line);
          }
        else
          {
            guint lines = 0;

            for (const char *p = content; *p != '\0'; p++)
              if (*p == '\n')
                lines++;
            g_printerr ("  %s✓ ", dim);
            g_printerr (ngettext ("%u line in %.1f s", "%u lines in %.1f s", lines + 1),
                        lines + 1, tally_json_object_get_int (event, "duration_ms", 0) / 1000.0);
            g_printerr ("%s\n", reset);
          }
      }
      break;

    case TALLY_EVENT_RETRY:
      {
        tally_cli_close_open_text (cli);
        g_printerr (_("Retrying in %.1f s (HTTP %d, %s)…\n"),
                    tally_json_object_get_int (event, "delay_ms", 0) / 1000.0,
                    (int)tally_json_object_get_int (event, "status", 0),
                    escaped (owned, json_object_get_string_member_with_default (event, "error_type", "?")));
      }
      break;

    case TALLY_EVENT_ERROR:
      {
        const char *request_id = json_object_get_string_member_with_default (event, "request_id", NULL);

        tally_cli_close_open_text (cli);
        if (request_id != NULL)
          g_printerr (_("Error (%s): %s (request %s)\n"),
                      tally_json_object_get_string (event, "kind", ""),
                      escaped (owned, tally_json_object_get_string (event, "message", "")),
                      escaped (owned, request_id));
        else
          g_printerr (_("Error (%s): %s\n"),
                      tally_json_object_get_string (event, "kind", ""),
                      escaped (owned, tally_json_object_get_string (event, "message", "")));

        /* How to go on (docs/protocol.md §12.2). */
        if (g_strcmp0 (tally_json_object_get_string (event, "kind", ""), "budget") == 0)
          g_printerr ("%s\n", _("Raise the cap with --max-cost USD (0 turns it off) to continue this session."));
        else if (json_object_get_int_member_with_default (event, "status", 0) == 401 ||
                 json_object_get_int_member_with_default (event, "status", 0) == 403)
          g_printerr ("%s\n", _("The API key was refused. Set ANTHROPIC_API_KEY to a valid key from the "
                                 "Anthropic Console and run tally-cli again."));
      }
      break;

    case TALLY_EVENT_PLAN_PROPOSED:
      {
        tally_cli_close_open_text (cli);
        g_print (_("\n── Plan, version %d ──\n%s\n────\n"),
                 (int)tally_json_object_get_int (event, "version", 0),
                 escaped (owned, tally_json_object_get_string (event, "markdown", "")));
        tally_cli_out_flush ();
      }
      break;

    case TALLY_EVENT_REDIRECT:
      {
        tally_cli_close_open_text (cli);
        g_print ("\n> %s\n\n", escaped (owned, tally_json_object_get_string (event, "text", "")));
      }
      break;

    case TALLY_EVENT_CHART_CREATED:
      {
        JsonArray *files = tally_json_object_get_array (event, "files");
        g_autoptr(GString) names = g_string_new (NULL);

        for (guint i = 0; files != NULL && i < json_array_get_length (files); i++)
          {
            if (i > 0)
              g_string_append (names, ", ");
            g_string_append (names, json_array_get_string_element (files, i));
          }
        /* TRANSLATORS: a chart the agent drew, then its files */
        g_printerr (_("  Chart “%s”: %s\n"),
                    escaped (owned, tally_json_object_get_string (event, "title", "")),
                    escaped (owned, names->str));
      }
      break;

    case TALLY_EVENT_TURN_FINISHED:
      print_receipt (cli, event);
      break;

    /* Shown elsewhere (the cards, the replayed prompt) or not at all. */
    case TALLY_EVENT_SESSION_CREATED:
    case TALLY_EVENT_TURN_STARTED:
    case TALLY_EVENT_BLOCK_DONE:
    case TALLY_EVENT_APPROVAL_REQUEST:
    case TALLY_EVENT_APPROVAL_RESOLVED:
    case TALLY_EVENT_QUESTION_REQUEST:
    case TALLY_EVENT_QUESTION_RESOLVED:
    case TALLY_EVENT_API_CALL:
    case TALLY_EVENT_REQUEST_SENT:
    case TALLY_EVENT_UNKNOWN:
      break;
    }
}

void
tally_cli_print_session_line (TallySessionInfo *info,
                              gboolean          with_snippet)
{
  g_autofree char *created = tally_format_time_utc (info->created_us, "%Y-%m-%dT%H:%M:%SZ", "-");
  g_autofree char *cost = tally_session_info_has_cost (info)
    ? g_strdup_printf ("%.4f", info->cost_usd) : g_strdup ("-");
  g_autofree char *title = tally_cli_escape (info->title);

  /* Titles come from prompts: keep each session on one line. */
  g_strdelimit (title, "\t\n\r", ' ');
  g_print ("%s\t%s\t%s\t%s", info->id, created, title, cost);
  if (with_snippet && info->snippet != NULL)
    {
      g_autofree char *snippet = tally_cli_escape (info->snippet);

      g_strdelimit (snippet, "\t\n\r", ' ');
      g_print ("\t%s", snippet);
    }
  g_print ("\n");
}

/* Prints a stored session's event lines: verbatim with --json, else as a
 * turn prints them, each prompt before its events; a damaged line is
 * skipped with a note. Returns whether the text ends inside a turn (never
 * with --json). */
gboolean
tally_cli_print_event_lines (Cli       *cli,
                             GPtrArray *lines)
{
  gboolean turn_open = FALSE;

  for (guint i = 0; i < lines->len; i++)
    {
      const char *line = g_ptr_array_index (lines, i);

      if (cli->json)
        {
          /* Verbatim, as stored. */
          fputs (line, stdout);
          fputc ('\n', stdout);
        }
      else
        {
          g_autoptr(GError) parse_error = NULL;
          g_autoptr(JsonObject) event = tally_event_from_json (line, &parse_error);

          if (event == NULL)
            {
              tally_cli_close_open_text (cli);
              g_printerr (_("(event %u of the log is damaged and was skipped: %s)\n"), i + 1,
                          parse_error->message);
              continue;
            }
          /* A retry runs the failed turn's prompt again in place: the
           * prompt was printed with that turn (docs/architecture.md §4.2). */
          if (tally_event_get_event_type (event) == TALLY_EVENT_TURN_STARTED &&
              !json_object_has_member (event, "retry_of"))
            {
              g_autofree char *prompt = tally_cli_escape (json_object_get_string_member_with_default (event, "text", ""));

              tally_cli_close_open_text (cli);
              g_print ("\n> %s\n\n", prompt);
            }
          if (tally_event_get_event_type (event) == TALLY_EVENT_TURN_STARTED)
            turn_open = TRUE;
          else if (tally_event_get_event_type (event) == TALLY_EVENT_TURN_FINISHED)
            turn_open = FALSE;
          tally_cli_print_event (cli, event);
        }
    }
  tally_cli_close_open_text (cli);
  tally_cli_out_flush ();
  return turn_open;
}
