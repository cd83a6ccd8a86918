/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * The Markdown export of a session, written from the blocks of the
 * transcript reducer (docs/architecture.md §5), so the export shows what the
 * window shows and there is no second reading of the event log.
 */

#define G_LOG_DOMAIN "tally-transcript"

#include "config.h"

#include <string.h>

#include "tally-format.h"
#include "tally-json.h"
#include "tally-receipt.h"
#include "tally-transcript-export.h"

#define RESULT_MAX_LINES 20
#define RESULT_MAX_BYTES 2000
#define INPUT_MAX_BYTES  300

/* A fence longer than any run of backticks in @text */
static char *
fence_for (const char *text)
{
  guint longest = 0, run = 0;

  for (const char *p = text; *p != '\0'; p++)
    {
      run = *p == '`' ? run + 1 : 0;
      longest = MAX (longest, run);
    }
  return g_strnfill (MAX (3, longest + 1), '`');
}

static void
append_fenced (GString    *out,
               const char *lang,
               const char *text)
{
  g_autofree char *fence = fence_for (text);
  gsize len = strlen (text);

  g_string_append_printf (out, "%s%s\n%s", fence, lang, text);
  if (len == 0 || text[len - 1] != '\n')
    g_string_append_c (out, '\n');
  g_string_append_printf (out, "%s\n\n", fence);
}

static void
append_inline_code (GString    *out,
                    const char *text)
{
  guint longest = 0, run = 0;
  g_autofree char *ticks = NULL;

  for (const char *p = text; *p != '\0'; p++)
    {
      run = *p == '`' ? run + 1 : 0;
      longest = MAX (longest, run);
    }
  ticks = g_strnfill (longest + 1, '`');
  g_string_append_printf (out, "%s%s%s%s%s", ticks, longest > 0 ? " " : "", text,
                          longest > 0 ? " " : "", ticks);
}

/* Cuts @text to RESULT_MAX_LINES lines and about RESULT_MAX_BYTES bytes
 * (at a character boundary) and says how much was left out. */
static char *
truncate_result (const char *text)
{
  GString *out = g_string_new (NULL);
  const char *p = text;
  guint lines = 0, total_lines = 0;

  for (const char *q = text; *q != '\0'; q++)
    if (*q == '\n')
      total_lines++;
  if (*text != '\0' && text[strlen (text) - 1] != '\n')
    total_lines++;

  while (*p != '\0' && lines < RESULT_MAX_LINES && out->len < RESULT_MAX_BYTES)
    {
      const char *end = strchr (p, '\n');
      gsize len = end != NULL ? (gsize)(end - p) : strlen (p);

      if (out->len + len > RESULT_MAX_BYTES)
        {
          const char *cut = g_utf8_find_prev_char (p, p + (RESULT_MAX_BYTES - out->len));

          len = cut != NULL ? (gsize)(cut - p) : 0;
          g_string_append_len (out, p, len);
          g_string_append (out, "…\n");
          lines++;
          p += len;
          break;
        }
      g_string_append_len (out, p, len);
      g_string_append_c (out, '\n');
      lines++;
      p += len;
      if (*p == '\n')
        p++;
    }

  if (*p != '\0' && total_lines > lines)
    g_string_append_printf (out, "… (%u more lines)\n", total_lines - lines);
  else if (*p != '\0')
    g_string_append (out, "… (cut)\n");

  return g_string_free (out, FALSE);
}

static void
append_quoted (GString    *out,
               const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    g_string_append_printf (out, ">%s%s\n", *lines[i] ? " " : "", lines[i]);
  g_string_append_c (out, '\n');
}

/* The export's provenance notes (issue 12 §3): one per distinct query,
 * numbered in order of first use, listed under "Sources" at the end. */
typedef struct {
  GPtrArray *sqls;   /* of char*; NULL for a chart's inline data */
  GPtrArray *texts;  /* of char*: what each note says */
} Notes;

/* The number of the note for @sql, added when new */
static guint
notes_add_sql (Notes      *notes,
               const char *sql)
{
  for (guint i = 0; i < notes->sqls->len; i++)
    if (g_strcmp0 (g_ptr_array_index (notes->sqls, i), sql) == 0)
      return i + 1;
  g_ptr_array_add (notes->sqls, g_strdup (sql));
  g_ptr_array_add (notes->texts, NULL);
  return notes->sqls->len;
}

static guint
notes_add_text (Notes      *notes,
                const char *text)
{
  g_ptr_array_add (notes->sqls, NULL);
  g_ptr_array_add (notes->texts, g_strdup (text));
  return notes->sqls->len;
}

static void
append_notes (GString                           *out,
              Notes                             *notes,
              const TallyTranscriptExportHeader *header)
{
  g_autofree char *database = header->database != NULL ? g_path_get_basename (header->database) : NULL;

  if (notes->sqls->len == 0)
    return;
  g_string_append (out, "---\n\n## Sources\n\n");
  for (guint i = 0; i < notes->sqls->len; i++)
    {
      const char *sql = g_ptr_array_index (notes->sqls, i);

      if (sql == NULL)
        {
          g_string_append_printf (out, "[%u] %s\n\n", i + 1, (const char *) g_ptr_array_index (notes->texts, i));
          continue;
        }
      g_string_append_printf (out, "[%u] SQL on database ", i + 1);
      if (database != NULL)
        append_inline_code (out, database);
      else
        g_string_append (out, "(not recorded)");
      g_string_append (out, ":\n\n");
      append_fenced (out, "sql", sql);
    }
}

/* Plain text (a title the analyst typed, a file name) inside a line of
 * Markdown: the characters that would start markup or raw HTML are
 * written with CommonMark's backslash escapes, so "<b>" and "*Q2*" read
 * as typed. */
static void
append_plain_inline (GString    *out,
                     const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    {
      if (strchr ("\\`*_[]<>&!|~#", *p) != NULL)
        g_string_append_c (out, '\\');
      g_string_append_c (out, *p);
    }
}

static void
append_header (GString                           *out,
               const TallyTranscriptExportHeader *header)
{
  g_autofree char *date = tally_format_time_utc (header->created_us, "%Y-%m-%d %H:%M UTC", "unknown date");
  const char *title = header->title != NULL && *header->title != '\0' ? header->title : "Untitled session";

  g_string_append (out, "# ");
  append_plain_inline (out, title);
  g_string_append (out, "\n\n");
  g_string_append_printf (out, "- **Date:** %s\n", date);
  if (header->model != NULL)
    g_string_append_printf (out, "- **Model:** %s\n", header->model);
  if (header->database != NULL)
    {
      g_autofree char *base = g_path_get_basename (header->database);

      g_string_append (out, "- **Database:** ");
      append_plain_inline (out, base);
      g_string_append_c (out, '\n');
    }
  if (header->turns > 0)
    {
      char dollars[G_ASCII_DTOSTR_BUF_SIZE];

      g_string_append_printf (out, "- **Turns:** %" G_GINT64_FORMAT " · **Cost:** %s%s\n", header->turns,
                              header->has_cost ? "$" : "",
                              header->has_cost ? g_ascii_formatd (dollars, sizeof dollars, "%.4f", header->cost_usd)
                                               : "price unknown");
    }
  g_string_append_c (out, '\n');
}

static void
append_user (GString    *out,
             TallyBlock *block)
{
  const char *text = tally_block_get_text (block);

  g_string_append (out, "---\n\n**You:**");
  if (g_strcmp0 (tally_block_get_state (block), "plan") == 0)
    g_string_append (out, " *(plan mode)*");
  g_string_append (out, "\n\n");
  append_quoted (out, text != NULL ? text : "");
}

static void
append_text (GString    *out,
             TallyBlock *block)
{
  const char *text = tally_block_get_text (block);
  gsize len = text != NULL ? strlen (text) : 0;

  if (len == 0)
    return;
  g_string_append (out, text);
  if (text[len - 1] != '\n')
    g_string_append_c (out, '\n');
  g_string_append_c (out, '\n');
}

static void
append_tool_input (GString    *out,
                   const char *name,
                   const char *input_json)
{
  g_autoptr(JsonNode) node = input_json != NULL ? json_from_string (input_json, NULL) : NULL;
  JsonObject *input = node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  const char *sql = tally_json_object_get_string (input, "sql", NULL);
  const char *command = tally_json_object_get_string (input, "command", NULL);

  g_string_append (out, "**Tool:** ");
  append_inline_code (out, name != NULL ? name : "tool");
  if (sql != NULL)
    {
      g_string_append (out, "\n\n");
      append_fenced (out, "sql", sql);
    }
  else if (command != NULL)
    {
      g_string_append (out, "\n\n");
      append_fenced (out, "sh", command);
    }
  else if (input != NULL && json_object_get_size (input) > 0)
    {
      g_autofree char *json = json_to_string (node, FALSE);

      if (strlen (json) > INPUT_MAX_BYTES)
        {
          const char *cut = g_utf8_find_prev_char (json, json + INPUT_MAX_BYTES);
          gsize keep = cut != NULL ? (gsize)(cut - json) : 0;

          json[keep] = '\0';
          json = g_realloc (json, keep + sizeof "…");
          strcat (json, "…");
        }
      g_string_append_c (out, ' ');
      append_inline_code (out, json);
      g_string_append (out, "\n\n");
    }
  else
    g_string_append (out, "\n\n");
}

/* A denial or an edited approval, as the resolution of an approval card */
static void
append_approval (GString    *out,
                 TallyBlock *card)
{
  JsonObject *resolution = tally_json_object_get_object (tally_block_get_details (card), "resolution");
  const char *decision = tally_json_object_get_string (resolution, "decision", NULL);
  const char *message = tally_json_object_get_string (resolution, "message", NULL);
  const char *reason = tally_json_object_get_string (resolution, "reason", NULL);

  if (g_strcmp0 (decision, "deny") == 0)
    {
      g_string_append_printf (out, "*Denied (%s)", reason ? reason : "user");
      if (message != NULL && *message != '\0')
        g_string_append_printf (out, ": %s", message);
      g_string_append (out, "*\n\n");
    }
  else if (g_strcmp0 (decision, "allow_edited") == 0)
    g_string_append (out, "*Allowed with changes.*\n\n");
}

/* The `sql` member of a tool's input JSON, or NULL */
static char *
tool_input_sql (const char *input_json)
{
  g_autoptr(JsonNode) node = input_json != NULL ? json_from_string (input_json, NULL) : NULL;
  JsonObject *input = node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;

  return g_strdup (tally_json_object_get_string (input, "sql", NULL));
}

/* The tool call, the decision on its approval card if one was asked, and
 * its result: the order in which they happened. */
static void
append_tool_call (GString         *out,
                  TallyTranscript *transcript,
                  guint            position,
                  TallyBlock      *block,
                  Notes           *notes)
{
  const char *tool_id = tally_block_get_tool_id (block);
  const char *result = tally_block_get_result (block);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (transcript));

  append_tool_input (out, tally_block_get_tool_name (block), tally_block_get_tool_input (block));

  for (guint i = position + 1; tool_id != NULL && i < n; i++)
    {
      g_autoptr(TallyBlock) card = g_list_model_get_item (G_LIST_MODEL (transcript), i);

      if (tally_block_get_kind (card) == TALLY_BLOCK_APPROVAL &&
          g_strcmp0 (tally_block_get_tool_id (card), tool_id) == 0)
        {
          append_approval (out, card);
          break;
        }
    }

  if (result != NULL)
    {
      g_autofree char *cut = truncate_result (result);

      g_string_append (out, tally_block_get_is_error (block) ? "**Tool error:**\n\n" : "Result:\n\n");
      append_fenced (out, "", cut);
      if (!tally_block_get_is_error (block) &&
          g_strcmp0 (tally_block_get_tool_name (block), "query_database") == 0)
        {
          g_autofree char *sql = tool_input_sql (tally_block_get_tool_input (block));

          if (sql != NULL)
            g_string_append_printf (out, "*Source: [%u]*\n\n", notes_add_sql (notes, sql));
        }
    }
}

/* Whether the approval card belongs to a tool call block before it, which
 * wrote its decision already. */
static gboolean
approval_has_tool_call (TallyTranscript *transcript,
                        guint            position,
                        TallyBlock      *card)
{
  const char *tool_id = tally_block_get_tool_id (card);

  for (guint i = 0; tool_id != NULL && i < position; i++)
    {
      g_autoptr(TallyBlock) block = g_list_model_get_item (G_LIST_MODEL (transcript), i);

      if (tally_block_get_kind (block) == TALLY_BLOCK_TOOL_CALL &&
          g_strcmp0 (tally_block_get_tool_id (block), tool_id) == 0)
        return TRUE;
    }
  return FALSE;
}

static void
append_question (GString    *out,
                 TallyBlock *block)
{
  JsonObject *details = tally_block_get_details (block);
  JsonArray *questions = tally_json_object_get_array (details, "questions");
  JsonObject *resolution = tally_json_object_get_object (details, "resolution");

  for (guint i = 0; questions != NULL && i < json_array_get_length (questions); i++)
    {
      JsonNode *qnode = json_array_get_element (questions, i);
      JsonObject *q = JSON_NODE_HOLDS_OBJECT (qnode) ? json_node_get_object (qnode) : NULL;
      JsonArray *options = tally_json_object_get_array (q, "options");
      const char *question = tally_json_object_get_string (q, "question", "");

      g_string_append_printf (out, "**Question:** %s\n\n", question);
      for (guint j = 0; options != NULL && j < json_array_get_length (options); j++)
        {
          JsonNode *option_node = json_array_get_element (options, j);
          JsonObject *option = JSON_NODE_HOLDS_OBJECT (option_node) ? json_node_get_object (option_node) : NULL;
          const char *label = tally_json_object_get_string (option, "label", "");
          const char *description = tally_json_object_get_string (option, "description", NULL);

          g_string_append_printf (out, "- %s%s%s\n", label, description ? " — " : "",
                                  description ? description : "");
        }
      if (options != NULL)
        g_string_append_c (out, '\n');
    }

  if (resolution != NULL)
    {
      JsonObject *answers = tally_json_object_get_object (resolution, "answers");

      if (answers == NULL)
        g_string_append_printf (out, "*The question was not answered (%s).*\n\n",
                                tally_json_object_get_string (resolution, "reason", "dismissed"));
      else
        {
          g_autoptr(GList) members = json_object_get_members (answers);

          for (GList *l = members; l != NULL; l = l->next)
            g_string_append_printf (out, "**Answer:** %s\n\n",
                                    tally_json_object_get_string (answers, l->data, ""));
        }
    }
}

static void
append_receipt (GString    *out,
                TallyBlock *block)
{
  TallyReceipt receipt;
  g_autofree char *line = NULL;

  tally_receipt_init (&receipt, tally_block_get_details (block));
  line = tally_receipt_dup_line (&receipt, TALLY_RECEIPT_STYLE_MARKDOWN);
  g_string_append_printf (out, "%s\n\n", line);
}

/* A chart as an image of its SVG, and a note naming the query its rows
 * came from, so a reader can reproduce it (issue 12 §3, provenance). */
static void
append_chart (GString    *out,
              TallyBlock *block,
              Notes      *notes)
{
  JsonObject *details = tally_block_get_details (block);
  JsonArray *files = details ? tally_json_object_get_array (details, "files") : NULL;
  const char *title = tally_block_get_text (block) != NULL ? tally_block_get_text (block) : "";
  const char *sql = details ? tally_json_object_get_string (details, "sql", NULL) : NULL;
  const char *svg = NULL;
  guint note;

  for (guint i = 0; files != NULL && i < json_array_get_length (files); i++)
    {
      const char *file = json_array_get_string_element (files, i);

      if (file != NULL && g_str_has_suffix (file, ".svg"))
        svg = file;
    }

  if (svg != NULL)
    g_string_append_printf (out, "![%s](%s)\n\n", title, svg);
  else
    g_string_append_printf (out, "**Chart:** %s\n\n", title);

  if (sql != NULL)
    note = notes_add_sql (notes, sql);
  else
    {
      g_autofree char *text = g_strdup_printf ("Data written into the spec of the chart “%s” by the model "
                                               "(%" G_GINT64_FORMAT " rows); no query.", title,
                                               tally_json_object_get_int (details, "rows", 0));

      note = notes_add_text (notes, text);
    }
  g_string_append_printf (out, "*Source: [%u]*\n\n", note);
}

static void
append_block (GString                           *out,
              TallyTranscript                   *transcript,
              guint                              position,
              TallyBlock                        *block,
              const TallyTranscriptExportHeader *header,
              Notes                             *notes)
{
  switch (tally_block_get_kind (block))
    {
    case TALLY_BLOCK_USER:
      /* A redirect reached the model with tool results; the export has
       * always shown only the prompts that started turns. */
      if (g_strcmp0 (tally_block_get_state (block), "redirect") != 0)
        append_user (out, block);
      break;

    case TALLY_BLOCK_TEXT:
      append_text (out, block);
      break;

    case TALLY_BLOCK_THINKING:
      if (header->include_thinking && tally_block_get_text (block) != NULL && *tally_block_get_text (block) != '\0')
        {
          g_string_append (out, "*Thinking:*\n\n");
          append_quoted (out, tally_block_get_text (block));
        }
      /* The same count as the thinking drawer's "Thought for N words" */
      else if (tally_block_get_word_count (block) > 0)
        g_string_append_printf (out, "*Thought for %u words.*\n\n", tally_block_get_word_count (block));
      break;

    case TALLY_BLOCK_TOOL_CALL:
      append_tool_call (out, transcript, position, block, notes);
      break;

    case TALLY_BLOCK_APPROVAL:
      if (!approval_has_tool_call (transcript, position, block))
        append_approval (out, block);
      break;

    case TALLY_BLOCK_QUESTION:
      append_question (out, block);
      break;

    case TALLY_BLOCK_PLAN:
      g_string_append_printf (out, "**Plan** (version %" G_GINT64_FORMAT "):\n\n",
                              tally_json_object_get_int (tally_block_get_details (block), "version", 1));
      append_quoted (out, tally_block_get_text (block) != NULL ? tally_block_get_text (block) : "");
      break;

    case TALLY_BLOCK_ERROR:
      g_string_append_printf (out, "> **Error** (%s): %s\n\n",
                              tally_block_get_state (block) != NULL ? tally_block_get_state (block) : "unknown",
                              tally_block_get_text (block) != NULL ? tally_block_get_text (block) : "");
      break;

    case TALLY_BLOCK_RECEIPT:
      append_receipt (out, block);
      break;

    case TALLY_BLOCK_CHART:
      append_chart (out, block, notes);
      break;

    case TALLY_BLOCK_INCOMPLETE:
    case TALLY_BLOCK_NOTICE:
    case TALLY_BLOCK_FILE:
      /* Marks for the window; the receipt's status says a turn failed, and
       * the tool line or chart already names a written file. */
      break;
    }
}

/**
 * tally_transcript_export_markdown:
 * @transcript: a #TallyTranscript with a session's events applied
 * @header: what to say about the session above its turns
 *
 * Writes the session as Markdown for sharing, by walking the reducer's
 * blocks: a `#` title, the date, model and database, then each turn: the
 * prompt as a quoted block under "**You:**", the assistant text as
 * written, tool calls as short lines (SQL and shell commands in fenced
 * blocks), denials, tool results cut to 20 lines in fenced blocks,
 * questions and answers, plans, errors, and the turn's receipt in
 * %TALLY_RECEIPT_STYLE_MARKDOWN. Thinking is summarised by its word count,
 * the count the thinking drawer shows, unless @header asks for it in full.
 * Every chart and every query_database result is followed by
 * "*Source: [N]*", and numbered notes under "## Sources" at the end give
 * each query's SQL and database (or say a chart's data was written inline),
 * so a reader can reproduce every number. Fences are longer than any run of
 * backticks inside them, so no content can end its fence.
 *
 * Returns: (transfer full): the Markdown text, UTF-8
 */
char *
tally_transcript_export_markdown (TallyTranscript                   *transcript,
                                  const TallyTranscriptExportHeader *header)
{
  GString *out;
  Notes notes = { g_ptr_array_new_with_free_func (g_free), g_ptr_array_new_with_free_func (g_free) };
  guint n;

  g_return_val_if_fail (TALLY_IS_TRANSCRIPT (transcript), NULL);
  g_return_val_if_fail (header != NULL, NULL);

  out = g_string_new (NULL);
  append_header (out, header);

  n = g_list_model_get_n_items (G_LIST_MODEL (transcript));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(TallyBlock) block = g_list_model_get_item (G_LIST_MODEL (transcript), i);

      append_block (out, transcript, i, block, header, &notes);
    }

  append_notes (out, &notes, header);
  g_ptr_array_unref (notes.sqls);
  g_ptr_array_unref (notes.texts);

  if (header->damaged_events > 0)
    g_string_append_printf (out, "*%u damaged events were left out of this export.*\n", header->damaged_events);

  return g_string_free (out, FALSE);
}
