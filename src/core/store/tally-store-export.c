/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-store"

#include "config.h"

#include <string.h>

#include "tally-event.h"
#include "tally-store-private.h"

/* {{{ Markdown export */

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

static char *
format_count (gint64 value)
{
  g_autofree char *digits = g_strdup_printf ("%" G_GINT64_FORMAT, value < 0 ? -value : value);
  GString *out = g_string_new (value < 0 ? "-" : "");
  gsize len = strlen (digits);

  for (gsize i = 0; i < len; i++)
    {
      if (i > 0 && (len - i) % 3 == 0)
        g_string_append_c (out, ',');
      g_string_append_c (out, digits[i]);
    }
  return g_string_free (out, FALSE);
}

static char *
format_time_utc (gint64 us)
{
  g_autoptr(GDateTime) time = g_date_time_new_from_unix_utc (us / G_USEC_PER_SEC);

  if (time == NULL)
    return g_strdup ("unknown date");
  return g_date_time_format (time, "%Y-%m-%d %H:%M UTC");
}

typedef struct {
  GString    *out;
  GString    *text;          /* assistant text being gathered */
  gint64      text_call;
  gint64      text_block;
  guint       thinking_words;
  GHashTable *card_tools;    /* tool ids of AskUserQuestion and ExitPlanMode */
} Export;

static void
export_flush_text (Export *export)
{
  if (export->text->len > 0)
    {
      g_string_append (export->out, export->text->str);
      if (export->text->str[export->text->len - 1] != '\n')
        g_string_append_c (export->out, '\n');
      g_string_append_c (export->out, '\n');
      g_string_truncate (export->text, 0);
    }
  export->text_call = -1;
  export->text_block = -1;
}

static guint
count_words (const char *text)
{
  guint words = 0;
  gboolean in_word = FALSE;

  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      gboolean space = g_unichar_isspace (g_utf8_get_char (p));

      if (!space && !in_word)
        words++;
      in_word = !space;
    }
  return words;
}

static void
export_receipt (Export     *export,
                JsonObject *event)
{
  JsonObject *usage = json_object_member (event, "usage");
  const char *status = json_string (event, "status");
  g_autofree char *input = NULL;
  g_autofree char *output = NULL;
  double cost;
  gint64 duration_ms = json_int_or (event, "duration_ms", 0);
  char seconds[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (export->out, "*Receipt: ");
  if (json_number (event, "cost_usd", &cost))
    {
      char dollars[G_ASCII_DTOSTR_BUF_SIZE];

      g_string_append_printf (export->out, "$%s",
                              g_ascii_formatd (dollars, sizeof dollars, "%.4f", cost));
    }
  else
    g_string_append (export->out, "price unknown");

  input = format_count (usage ? json_int_or (usage, "input_tokens", 0) : 0);
  output = format_count (usage ? json_int_or (usage, "output_tokens", 0) : 0);
  g_string_append_printf (export->out, " · %s input + %s output tokens", input, output);
  if (usage != NULL)
    {
      gint64 read = json_int_or (usage, "cache_read_input_tokens", 0);
      gint64 written = json_int_or (usage, "cache_creation_input_tokens", 0);

      if (read > 0 || written > 0)
        {
          g_autofree char *r = format_count (read);
          g_autofree char *wr = format_count (written);

          g_string_append_printf (export->out, " (cache: %s read, %s written)", r, wr);
        }
    }
  g_string_append_printf (export->out, " · %s s",
                          g_ascii_formatd (seconds, sizeof seconds, "%.1f", duration_ms / 1000.0));
  if (status != NULL && !g_str_equal (status, "done"))
    g_string_append_printf (export->out, " · %s", status);
  g_string_append (export->out, "*\n\n");
}

static void
export_tool_use (Export     *export,
                 JsonObject *event)
{
  const char *name = json_string (event, "tool_name");
  const char *tool_id = json_string (event, "tool_id");
  JsonObject *input = json_object_member (event, "tool_input");
  const char *sql = input ? json_string (input, "sql") : NULL;
  const char *command = input ? json_string (input, "command") : NULL;

  if (name == NULL)
    name = "tool";

  if (g_str_equal (name, "AskUserQuestion") || g_str_equal (name, "ExitPlanMode"))
    {
      if (tool_id != NULL)
        g_hash_table_add (export->card_tools, g_strdup (tool_id));
      return;
    }

  g_string_append (export->out, "**Tool:** ");
  append_inline_code (export->out, name);
  if (sql != NULL)
    {
      g_string_append (export->out, "\n\n");
      append_fenced (export->out, "sql", sql);
    }
  else if (command != NULL)
    {
      g_string_append (export->out, "\n\n");
      append_fenced (export->out, "sh", command);
    }
  else if (input != NULL && json_object_get_size (input) > 0)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
      g_autofree char *json = NULL;

      json_node_set_object (node, input);
      json = json_to_string (node, FALSE);
      if (strlen (json) > INPUT_MAX_BYTES)
        {
          const char *cut = g_utf8_find_prev_char (json, json + INPUT_MAX_BYTES);
          gsize keep = cut != NULL ? (gsize)(cut - json) : 0;

          json[keep] = '\0';
          json = g_realloc (json, keep + sizeof "…");
          strcat (json, "…");
        }
      g_string_append_c (export->out, ' ');
      append_inline_code (export->out, json);
      g_string_append (export->out, "\n\n");
    }
  else
    g_string_append (export->out, "\n\n");
}

static void
export_event (Export     *export,
              JsonObject *event)
{
  const char *type = tally_event_get_type_name (event);
  GString *out = export->out;

  if (g_str_equal (type, "text_delta"))
    {
      gint64 call = json_int_or (event, "call", 0);
      gint64 block = json_int_or (event, "block", 0);
      const char *text = json_string (event, "text");

      if (export->text->len > 0 && (call != export->text_call || block != export->text_block))
        g_string_append (export->text, "\n\n");
      export->text_call = call;
      export->text_block = block;
      if (text != NULL)
        g_string_append (export->text, text);
      return;
    }

  if (g_str_equal (type, "thinking_delta"))
    {
      const char *text = json_string (event, "text");

      export->thinking_words += text ? count_words (text) : 0;
      return;
    }

  if (g_str_equal (type, "block_done"))
    {
      if (g_strcmp0 (json_string (event, "kind"), "thinking") == 0)
        {
          export_flush_text (export);
          g_string_append_printf (out, "*Thought for %u words.*\n\n", export->thinking_words);
          export->thinking_words = 0;
        }
      return;
    }

  /* Every other event ends the text gathered so far */
  export_flush_text (export);

  if (g_str_equal (type, "turn_started"))
    {
      const char *text = json_string (event, "text");
      const char *mode = json_string (event, "mode");

      g_string_append (out, "---\n\n**You:**");
      if (g_strcmp0 (mode, "plan") == 0)
        g_string_append (out, " *(plan mode)*");
      g_string_append (out, "\n\n");
      append_quoted (out, text != NULL ? text : "");
    }
  else if (g_str_equal (type, "tool_use_start"))
    export_tool_use (export, event);
  else if (g_str_equal (type, "tool_result"))
    {
      const char *tool_id = json_string (event, "tool_id");
      const char *content = json_string (event, "content");
      gboolean is_error = FALSE;
      JsonNode *node = json_object_get_member (event, "is_error");
      g_autofree char *cut = NULL;

      if (tool_id != NULL && g_hash_table_contains (export->card_tools, tool_id))
        return;
      if (node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN)
        is_error = json_node_get_boolean (node);

      cut = truncate_result (content != NULL ? content : "");
      g_string_append (out, is_error ? "**Tool error:**\n\n" : "Result:\n\n");
      append_fenced (out, "", cut);
    }
  else if (g_str_equal (type, "approval_resolved"))
    {
      const char *decision = json_string (event, "decision");
      const char *message = json_string (event, "message");
      const char *reason = json_string (event, "reason");

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
  else if (g_str_equal (type, "question_request"))
    {
      JsonNode *node = json_object_get_member (event, "questions");
      JsonArray *questions = node && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;

      for (guint i = 0; questions != NULL && i < json_array_get_length (questions); i++)
        {
          JsonNode *qnode = json_array_get_element (questions, i);
          JsonObject *q = JSON_NODE_HOLDS_OBJECT (qnode) ? json_node_get_object (qnode) : NULL;
          JsonNode *onode = q ? json_object_get_member (q, "options") : NULL;
          JsonArray *options = onode && JSON_NODE_HOLDS_ARRAY (onode) ? json_node_get_array (onode) : NULL;
          const char *question = q ? json_string (q, "question") : NULL;

          g_string_append_printf (out, "**Question:** %s\n\n", question ? question : "");
          for (guint j = 0; options != NULL && j < json_array_get_length (options); j++)
            {
              JsonNode *option_node = json_array_get_element (options, j);
              JsonObject *option = JSON_NODE_HOLDS_OBJECT (option_node) ? json_node_get_object (option_node) : NULL;
              const char *label = option ? json_string (option, "label") : NULL;
              const char *description = option ? json_string (option, "description") : NULL;

              g_string_append_printf (out, "- %s%s%s\n", label ? label : "",
                                      description ? " — " : "", description ? description : "");
            }
          if (options != NULL)
            g_string_append_c (out, '\n');
        }
    }
  else if (g_str_equal (type, "question_resolved"))
    {
      JsonObject *answers = json_object_member (event, "answers");

      if (answers == NULL)
        g_string_append_printf (out, "*The question was not answered (%s).*\n\n",
                                json_string (event, "reason") ? json_string (event, "reason") : "dismissed");
      else
        {
          g_autoptr(GList) members = json_object_get_members (answers);

          for (GList *l = members; l != NULL; l = l->next)
            {
              const char *answer = json_string (answers, l->data);

              g_string_append_printf (out, "**Answer:** %s\n\n", answer ? answer : "");
            }
        }
    }
  else if (g_str_equal (type, "plan_proposed"))
    {
      const char *markdown = json_string (event, "markdown");

      g_string_append_printf (out, "**Plan** (version %" G_GINT64_FORMAT "):\n\n",
                              json_int_or (event, "version", 1));
      append_quoted (out, markdown != NULL ? markdown : "");
    }
  else if (g_str_equal (type, "error"))
    {
      const char *kind = json_string (event, "kind");
      const char *message = json_string (event, "message");

      g_string_append_printf (out, "> **Error** (%s): %s\n\n",
                              kind ? kind : "unknown", message ? message : "");
    }
  else if (g_str_equal (type, "turn_finished"))
    export_receipt (export, event);
}

/**
 * tally_store_export_markdown:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @error: return location for a #GError
 *
 * Renders the session as Markdown for sharing, from its event log (so any
 * stored session can be exported): a `#` title, the date, model and
 * database, then each turn: the prompt as a quoted block under "**You:**",
 * the assistant text as written, tool calls as short lines (SQL and shell
 * commands in fenced blocks), tool results cut to 20 lines in fenced
 * blocks, denials, questions and answers, plans, errors, and the turn's
 * receipt (cost, tokens, duration). Thinking is summarised as a word
 * count. Damaged events are skipped and counted at the end.
 *
 * Returns: (transfer full) (nullable): the Markdown text; %NULL with
 *   %TALLY_STORE_ERROR_NOT_FOUND or a read error
 */
char *
tally_store_export_markdown (TallyStore  *self,
                             const char  *session_id,
                             GError     **error)
{
  g_autoptr(TallySessionInfo) info = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GPtrArray) warnings = NULL;
  g_autoptr(GHashTable) card_tools = NULL;
  g_autofree char *date = NULL;
  Export export = { 0 };
  GString *out;
  const char *title;

  g_return_val_if_fail (TALLY_IS_STORE (self), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  events = tally_store_load_events (self, session_id, &warnings, error);
  if (events == NULL)
    return NULL;
  info = tally_store_find_session (self, session_id, error);
  if (info == NULL)
    return NULL;

  out = g_string_new (NULL);
  title = info->title != NULL && *info->title != '\0' ? info->title : "Untitled session";
  g_string_append_printf (out, "# %s\n\n", title);

  date = format_time_utc (info->created_us);
  g_string_append_printf (out, "- **Date:** %s\n", date);
  if (info->model != NULL)
    g_string_append_printf (out, "- **Model:** %s\n", info->model);
  if (info->database != NULL)
    {
      g_autofree char *base = g_path_get_basename (info->database);

      g_string_append_printf (out, "- **Database:** %s\n", base);
    }
  if (info->turns > 0)
    {
      char dollars[G_ASCII_DTOSTR_BUF_SIZE];

      g_string_append_printf (out, "- **Turns:** %" G_GINT64_FORMAT " · **Cost:** %s%s\n", info->turns,
                              tally_session_info_has_cost (info) ? "$" : "",
                              tally_session_info_has_cost (info)
                                ? g_ascii_formatd (dollars, sizeof dollars, "%.4f", info->cost_usd)
                                : "price unknown");
    }
  g_string_append_c (out, '\n');

  card_tools = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  export.out = out;
  export.text = g_string_new (NULL);
  export.text_call = -1;
  export.text_block = -1;
  export.card_tools = card_tools;

  for (guint i = 0; i < events->len; i++)
    export_event (&export, g_ptr_array_index (events, i));
  export_flush_text (&export);
  g_string_free (export.text, TRUE);

  if (warnings->len > 0)
    g_string_append_printf (out, "*%u damaged events were left out of this export.*\n", warnings->len);

  return g_string_free (out, FALSE);
}

/* }}} */
