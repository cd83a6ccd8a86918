/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * libFuzzer target: the permission gate's rule matcher
 * (src/core/agent/tally-gate.h: tally_gate_rule_matches(),
 * tally_gate_evaluate(), tally_gate_dup_suggestions()).
 *
 * Input: a rule pattern, a newline, then the call. When the call parses as a
 * JSON object it is the tool input; otherwise its bytes (made valid UTF-8)
 * are the Bash `command` and the file tools' `file_path` / `path`. The
 * pattern is tried against every tool of the default registry, as an allow
 * rule and as a deny rule, in every mode.
 *
 * Checked always: nothing crashes or logs a critical; an invalid pattern
 * matches nothing; a matching deny rule denies (a deny rule is never beaten
 * by an allow rule or the mode); every card suggestion is a valid pattern.
 *
 * Checked with TALLY_FUZZ_STRICT=1 (docs/testing.md; issue 10, item 1): an
 * allow rule never allows a Bash command that holds shell control syntax
 * (separators, pipes, substitutions, redirections, background, newlines)
 * unless the rule is the bare `Bash`.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "tally-fuzz.h"
#include "tally-gate.h"
#include "tally-tool-registry.h"

static TallyToolRegistry *registry;
static TallyToolContext context;
static gboolean strict;

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *workspace = NULL;
  g_autofree char *reports = NULL;
  g_autofree char *file = NULL;
  g_autofree char *link = NULL;

  tally_fuzz_quiet_logs ();
  registry = tally_tool_registry_new_default ();

  workspace = g_dir_make_tmp ("tally-fuzz-gate-XXXXXX", &error);
  g_assert_no_error (error);
  /* A few real entries, so that resolving paths meets files, folders and
   * a symbolic link out of the workspace. The folder is left behind in
   * $TMPDIR (a few bytes). */
  reports = g_build_filename (workspace, "reports", NULL);
  file = g_build_filename (reports, "q1.md", NULL);
  link = g_build_filename (workspace, "etc-link", NULL);
  g_mkdir (reports, 0700);
  g_file_set_contents (file, "", 0, NULL);
  if (symlink ("/etc", link) != 0)
    g_printerr ("fuzz-gate: no symbolic link in the workspace\n");

  context.workspace = g_canonicalize_filename (workspace, NULL);
  context.database_path = g_build_filename (workspace, "data.db", NULL);
  strict = g_strcmp0 (g_getenv ("TALLY_FUZZ_STRICT"), "1") == 0;

  return 0;
}

/* Shell syntax after which the rest of the line is another command, or
 * output goes somewhere else (issue 10, item 1). */
static gboolean
has_shell_control (const char *command)
{
  return strpbrk (command, ";&|`\n\r<>()") != NULL || strstr (command, "$(") != NULL;
}

static gboolean
is_bare_tool_pattern (const char *pattern)
{
  return strchr (pattern, '(') == NULL;
}

static void
fail (const char *what,
      const char *pattern,
      const char *tool_name,
      JsonObject *input)
{
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), input);
  g_autofree char *json = json_to_string (node, FALSE);

  g_printerr ("%s\n  pattern: %s\n  tool: %s\n  input: %s\n", what, pattern, tool_name, json);
  abort ();
}

static void
check_suggestions (const char *tool_name,
                   JsonObject *input)
{
  g_autoptr(JsonArray) suggestions = tally_gate_dup_suggestions (tool_name, input, &context);

  for (guint i = 0; i < json_array_get_length (suggestions); i++)
    {
      JsonObject *suggestion = json_array_get_object_element (suggestions, i);
      const char *rule = json_object_get_string_member_with_default (suggestion, "rule", NULL);

      if (rule == NULL || !tally_gate_pattern_is_valid (rule))
        fail ("a card suggests a rule that is not a valid pattern", rule != NULL ? rule : "(null)",
              tool_name, input);
    }
}

static void
check_tool (const char *pattern,
            gboolean    valid,
            const char *tool_name,
            TallyTool  *tool,
            JsonObject *input)
{
  gboolean matches = tally_gate_rule_matches (pattern, tool_name, input, &context);

  if (matches && !valid)
    fail ("an invalid pattern matched a call", pattern, tool_name, input);

  for (int allow = 0; allow < 2; allow++)
    {
      g_autoptr(GPtrArray) rules = g_ptr_array_new_with_free_func ((GDestroyNotify) tally_gate_rule_free);
      TallyGateRule *rule = g_new0 (TallyGateRule, 1);

      rule->pattern = g_strdup (pattern);
      rule->allow = allow;
      g_ptr_array_add (rules, rule);
      if (!allow)
        {
          /* An allow rule for the whole tool must not beat the deny rule. */
          TallyGateRule *everything = g_new0 (TallyGateRule, 1);

          everything->pattern = g_strdup (tool_name);
          everything->allow = TRUE;
          g_ptr_array_insert (rules, 0, everything);
        }

      for (TallyMode mode = TALLY_MODE_ASK; mode <= TALLY_MODE_AUTO; mode++)
        {
          TallyGateVerdict verdict;

          tally_gate_evaluate (rules, tool_name, tool, input, mode, &context, &verdict);

          if (!allow && matches && verdict.action != TALLY_GATE_DENY &&
              verdict.action != TALLY_GATE_QUESTION && verdict.action != TALLY_GATE_PLAN)
            fail ("a matching deny rule did not deny", pattern, tool_name, input);

          if (strict && allow && verdict.action == TALLY_GATE_ALLOW &&
              g_strcmp0 (verdict.reason, "rule") == 0 && g_str_equal (tool_name, "Bash") &&
              !is_bare_tool_pattern (pattern))
            {
              const char *command = json_object_get_string_member_with_default (input, "command", "");

              if (has_shell_control (command))
                fail ("a command rule allowed a command with shell control syntax", pattern, tool_name, input);
            }

          tally_gate_verdict_clear (&verdict);
        }
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = NULL;
  g_autofree char *pattern = NULL;
  g_autoptr(JsonObject) input = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  const char *newline;
  const char *call;
  gboolean valid;

  /* Patterns and inputs reach the gate as JSON strings. */
  text = tally_fuzz_dup_text (data, size);
  newline = strchr (text, '\n');
  pattern = newline != NULL ? g_strndup (text, newline - text) : g_strdup (text);
  call = newline != NULL ? newline + 1 : "";

  if (json_parser_load_from_data (parser, call, -1, NULL) &&
      json_parser_get_root (parser) != NULL &&
      JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      input = json_object_ref (json_node_get_object (json_parser_get_root (parser)));
    }
  else
    {
      input = json_object_new ();
      json_object_set_string_member (input, "command", call);
      json_object_set_string_member (input, "file_path", call);
      json_object_set_string_member (input, "path", call);
      json_object_set_string_member (input, "pattern", call);
    }

  valid = tally_gate_pattern_is_valid (pattern);

  for (guint i = 0; i < tally_tool_registry_get_n_tools (registry); i++)
    {
      TallyTool *tool = tally_tool_registry_get_tool (registry, i);
      const char *tool_name = tally_tool_get_name (tool);

      check_tool (pattern, valid, tool_name, tool, input);
      check_suggestions (tool_name, input);
    }

  /* A tool Tally does not have (an MCP tool, a typo of the model's). */
  check_tool (pattern, valid, "mcp__db__query", NULL, input);

  return 0;
}
