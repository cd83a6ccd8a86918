/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-gate"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "tally-gate.h"
#include "tally-tool-private.h"

/*
 * The permission gate (docs/architecture.md §6): decides, for one tool call,
 * whether it goes to a card, runs, or is refused. It is evaluated in a fixed
 * order and the first step that decides wins:
 *
 *   1. card-backed tools (AskUserQuestion, ExitPlanMode);
 *   2. deny rules;
 *   3. plan mode refuses every tool that changes something;
 *   4. a path outside the workspace always asks;
 *   5. allow rules;
 *   6. the mode: read-only tools run in every mode, `auto` also runs edits
 *      inside the workspace;
 *   7. everything else asks.
 *
 * Nothing here ever allows by default: a call that no step allows asks.
 */

/**
 * tally_gate_verdict_clear:
 * @verdict: a verdict filled by tally_gate_evaluate()
 *
 * Frees the verdict's strings.
 */
void
tally_gate_verdict_clear (TallyGateVerdict *verdict)
{
  g_clear_pointer (&verdict->message, g_free);
  g_clear_pointer (&verdict->rule, g_free);
}

/**
 * tally_gate_rule_free:
 * @rule: (transfer full): a rule
 *
 * Frees a #TallyGateRule.
 */
void
tally_gate_rule_free (TallyGateRule *rule)
{
  if (rule == NULL)
    return;
  g_free (rule->pattern);
  g_free (rule);
}

static gboolean
is_edit_tool (const char *tool_name)
{
  return g_strcmp0 (tool_name, "Write") == 0 || g_strcmp0 (tool_name, "Edit") == 0;
}

/* Splits `Tool(spec)` into its parts; a bare `Tool` has a NULL spec. */
static gboolean
parse_pattern (const char  *pattern,
               char       **name,
               char       **spec)
{
  const char *open;
  gsize len;

  *name = NULL;
  *spec = NULL;

  if (pattern == NULL || *pattern == '\0')
    return FALSE;

  open = strchr (pattern, '(');
  if (open == NULL)
    {
      if (strchr (pattern, ')') != NULL)
        return FALSE;
      *name = g_strstrip (g_strdup (pattern));
      return **name != '\0';
    }

  len = strlen (pattern);
  if (pattern[len - 1] != ')' || open == pattern)
    return FALSE;

  *name = g_strstrip (g_strndup (pattern, open - pattern));
  *spec = g_strndup (open + 1, pattern + len - 1 - (open + 1));
  if (**name == '\0' || **spec == '\0')
    {
      g_clear_pointer (name, g_free);
      g_clear_pointer (spec, g_free);
      return FALSE;
    }

  return TRUE;
}

/**
 * tally_gate_pattern_is_valid:
 * @pattern: a rule pattern
 *
 * Returns: %TRUE when @pattern has the shape `Tool` or `Tool(spec)`
 */
gboolean
tally_gate_pattern_is_valid (const char *pattern)
{
  g_autofree char *name = NULL;
  g_autofree char *spec = NULL;

  return parse_pattern (pattern, &name, &spec);
}

static char **
call_paths (const char *tool_name,
            JsonObject *input)
{
  static const char *const file_tools[] = { "Read", "Write", "Edit", NULL };
  static const char *const dir_tools[] = { "Glob", "Grep", NULL };
  const char *member = NULL;
  const char *value;
  char **paths;

  if (g_strv_contains (file_tools, tool_name))
    member = "file_path";
  else if (g_strv_contains (dir_tools, tool_name))
    member = "path";
  if (member == NULL || input == NULL)
    return NULL;

  value = json_object_get_string_member_with_default (input, member, NULL);
  if (value == NULL || *value == '\0')
    return NULL;

  paths = g_new0 (char *, 2);
  paths[0] = g_strdup (value);
  return paths;
}

/* The path as rules see it: relative to the workspace when inside it,
 * absolute otherwise. Sets @outside. */
static char *
rule_path (const TallyToolContext *context,
           const char             *path,
           gboolean               *outside)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *resolved = NULL;

  *outside = FALSE;
  resolved = tally_tool_resolve_path (context, path, outside, &error);
  if (resolved == NULL)
    {
      /* No workspace, or a path that cannot be resolved: treat it as
       * outside, so it asks rather than runs. */
      *outside = TRUE;
      return g_canonicalize_filename (path, NULL);
    }

  if (!*outside && context->workspace != NULL)
    return tally_tool_relative_path (context->workspace, resolved);

  return g_steal_pointer (&resolved);
}

static gboolean
spec_matches_path (const char *spec,
                   const char *path)
{
  g_autoptr(GRegex) regex = NULL;

  if (strpbrk (spec, "*?[{") == NULL)
    return g_str_equal (spec, path);

  regex = tally_tool_glob_to_regex (spec, NULL);
  return regex != NULL && g_regex_match (regex, path, 0, NULL);
}

static gboolean
spec_matches_command (const char *spec,
                      const char *command)
{
  g_autofree char *cmd = g_strstrip (g_strdup (command));

  if (g_str_has_suffix (spec, ":*"))
    {
      g_autofree char *prefix = g_strstrip (g_strndup (spec, strlen (spec) - 2));
      gsize len = strlen (prefix);

      return strncmp (cmd, prefix, len) == 0 &&
             (cmd[len] == '\0' || g_ascii_isspace (cmd[len]));
    }

  {
    g_autofree char *exact = g_strstrip (g_strdup (spec));
    return g_str_equal (exact, cmd);
  }
}

/**
 * tally_gate_rule_matches:
 * @pattern: a rule pattern (see #TallyGateRule)
 * @tool_name: the tool called
 * @input: the call's input
 * @context: the workspace the call runs in
 *
 * Matches one rule against one call. A bare `Tool` matches every call of
 * the tool. `Bash(cmd)` matches that exact command, `Bash(prefix:*)` every
 * command that is `prefix` or starts with `prefix` and a space. For file
 * tools the spec is a glob over the path relative to the workspace (or the
 * absolute path outside it): `*` within a folder, `**` across folders. Rules
 * for `Edit` also cover `Write`: both are edits.
 *
 * Returns: %TRUE when the rule covers the call
 */
gboolean
tally_gate_rule_matches (const char             *pattern,
                         const char             *tool_name,
                         JsonObject             *input,
                         const TallyToolContext *context)
{
  g_autofree char *name = NULL;
  g_autofree char *spec = NULL;
  g_auto(GStrv) paths = NULL;

  if (!parse_pattern (pattern, &name, &spec))
    return FALSE;

  if (!g_str_equal (name, tool_name) &&
      !(g_str_equal (name, "Edit") && is_edit_tool (tool_name)))
    return FALSE;

  if (spec == NULL)
    return TRUE;

  if (g_str_equal (tool_name, "Bash"))
    {
      const char *command = input != NULL ? json_object_get_string_member_with_default (input, "command", NULL) : NULL;

      return command != NULL && spec_matches_command (spec, command);
    }

  paths = call_paths (tool_name, input);
  if (paths == NULL)
    return FALSE;

  for (guint i = 0; paths[i] != NULL; i++)
    {
      gboolean outside;
      g_autofree char *path = rule_path (context, paths[i], &outside);

      if (!spec_matches_path (spec, path))
        return FALSE;
    }

  return TRUE;
}

static gboolean
touches_outside (const char             *tool_name,
                 JsonObject             *input,
                 const TallyToolContext *context)
{
  g_auto(GStrv) paths = call_paths (tool_name, input);

  for (guint i = 0; paths != NULL && paths[i] != NULL; i++)
    {
      gboolean outside;
      g_autofree char *path = rule_path (context, paths[i], &outside);

      if (outside)
        return TRUE;
    }

  return FALSE;
}

static const char *
first_matching_rule (GPtrArray              *rules,
                     gboolean                allow,
                     const char             *tool_name,
                     JsonObject             *input,
                     const TallyToolContext *context)
{
  for (guint i = 0; rules != NULL && i < rules->len; i++)
    {
      TallyGateRule *rule = g_ptr_array_index (rules, i);

      if (rule->allow == allow &&
          tally_gate_rule_matches (rule->pattern, tool_name, input, context))
        return rule->pattern;
    }

  return NULL;
}

/**
 * tally_gate_evaluate:
 * @rules: (nullable) (element-type TallyGateRule): the rules in force for
 *   this workspace and session
 * @tool_name: the tool called
 * @tool: (nullable): the tool, when Tally has one by that name
 * @input: the call's input
 * @mode: the turn's mode
 * @context: the workspace the call runs in
 * @verdict: (out caller-allocates): the decision; clear it with
 *   tally_gate_verdict_clear()
 *
 * Decides one tool call in the order of docs/architecture.md §6.1 (see the
 * top of this file).
 * Messages for refusals are written for the model to read.
 */
void
tally_gate_evaluate (GPtrArray              *rules,
                     const char             *tool_name,
                     TallyTool              *tool,
                     JsonObject             *input,
                     TallyMode               mode,
                     const TallyToolContext *context,
                     TallyGateVerdict       *verdict)
{
  const char *rule;
  gboolean read_only;

  memset (verdict, 0, sizeof *verdict);

  if (g_strcmp0 (tool_name, "AskUserQuestion") == 0)
    {
      verdict->action = TALLY_GATE_QUESTION;
      return;
    }
  if (g_strcmp0 (tool_name, "ExitPlanMode") == 0)
    {
      verdict->action = TALLY_GATE_PLAN;
      return;
    }

  read_only = tool != NULL && tally_tool_is_read_only (tool);
  verdict->outside = touches_outside (tool_name, input, context);

  rule = first_matching_rule (rules, FALSE, tool_name, input, context);
  if (rule != NULL)
    {
      verdict->action = TALLY_GATE_DENY;
      verdict->reason = "rule";
      verdict->rule = g_strdup (rule);
      verdict->message = g_strdup_printf ("The analyst's rule “%s” forbids this call, so it did not "
                                          "run. Do not try it again another way; if it is needed, "
                                          "explain why and let the analyst decide.", rule);
      return;
    }

  if (mode == TALLY_MODE_PLAN && !read_only)
    {
      verdict->action = TALLY_GATE_DENY;
      verdict->reason = "mode";
      verdict->message = g_strdup_printf ("Plan mode is on, so %s did not run: nothing may change "
                                          "while planning. Keep exploring with read-only tools and "
                                          "put this step in the plan you hand over with ExitPlanMode.",
                                          tool_name);
      return;
    }

  if (verdict->outside)
    {
      verdict->action = TALLY_GATE_ASK;
      return;
    }

  rule = first_matching_rule (rules, TRUE, tool_name, input, context);
  if (rule != NULL)
    {
      verdict->action = TALLY_GATE_ALLOW;
      verdict->reason = "rule";
      verdict->rule = g_strdup (rule);
      return;
    }

  if (read_only || (mode == TALLY_MODE_AUTO && is_edit_tool (tool_name)))
    {
      verdict->action = TALLY_GATE_ALLOW;
      verdict->reason = "mode";
      return;
    }

  verdict->action = TALLY_GATE_ASK;
}

static void
add_suggestion (JsonArray  *suggestions,
                const char *rule,
                const char *scope,
                const char *label)
{
  JsonObject *object = json_object_new ();

  json_object_set_string_member (object, "rule", rule);
  json_object_set_string_member (object, "scope", scope);
  json_object_set_string_member (object, "label", label);
  json_array_add_object_element (suggestions, object);
}

static char *
command_prefix (const char *command)
{
  g_auto(GStrv) words = NULL;

  words = g_strsplit_set (command, " \t", -1);
  {
    GPtrArray *kept = g_ptr_array_new ();
    char *prefix;

    for (guint i = 0; words[i] != NULL && kept->len < 2; i++)
      {
        if (words[i][0] == '\0')
          continue;
        /* Stop at options and shell syntax: the prefix names the program
         * and at most its subcommand. */
        if (kept->len == 1 && (words[i][0] == '-' || strpbrk (words[i], "|&;<>$`'\"") != NULL))
          break;
        g_ptr_array_add (kept, words[i]);
      }
    g_ptr_array_add (kept, NULL);
    prefix = g_strjoinv (" ", (char **)kept->pdata);
    g_ptr_array_free (kept, TRUE);
    return prefix;
  }
}

/**
 * tally_gate_dup_suggestions:
 * @tool_name: the tool called
 * @input: the call's input
 * @context: the workspace
 *
 * The "always allow" rules an approval card offers, most specific first:
 * for `Bash` the exact command and its program prefix; for edits the folder
 * of the file and "edits in this workspace for this session"; for a path
 * outside the workspace its folder; otherwise the whole tool. Each item is
 * `{rule, scope, label}` with scope `session`, `workspace` or `global`
 * (docs/architecture.md §6.3).
 *
 * Returns: (transfer full): the suggestions, possibly empty
 */
JsonArray *
tally_gate_dup_suggestions (const char             *tool_name,
                            JsonObject             *input,
                            const TallyToolContext *context)
{
  JsonArray *suggestions = json_array_new ();

  if (g_strcmp0 (tool_name, "Bash") == 0)
    {
      const char *command = json_object_get_string_member_with_default (input, "command", "");
      g_autofree char *trimmed = g_strstrip (g_strdup (command));
      g_autofree char *prefix = command_prefix (trimmed);

      if (*trimmed != '\0' && strchr (trimmed, '\n') == NULL)
        {
          g_autofree char *rule = g_strdup_printf ("Bash(%s)", trimmed);
          g_autofree char *label = g_strdup_printf (_("Always allow “%s” in this workspace"), trimmed);
          add_suggestion (suggestions, rule, "workspace", label);
        }
      if (*prefix != '\0' && !g_str_equal (prefix, trimmed))
        {
          g_autofree char *rule = g_strdup_printf ("Bash(%s:*)", prefix);
          g_autofree char *label = g_strdup_printf (_("Always allow commands starting with “%s” in this workspace"),
                                                    prefix);
          add_suggestion (suggestions, rule, "workspace", label);
        }
      return suggestions;
    }

  {
    g_auto(GStrv) paths = call_paths (tool_name, input);

    if (paths != NULL && paths[0] != NULL)
      {
        gboolean outside;
        g_autofree char *path = rule_path (context, paths[0], &outside);
        g_autofree char *dir = g_path_get_dirname (path);
        const char *rule_tool = is_edit_tool (tool_name) ? "Edit" : tool_name;

        if (outside)
          {
            g_autofree char *rule = g_strdup_printf ("%s(%s/**)", rule_tool, dir);
            g_autofree char *label = g_strdup_printf (_("Always allow %s in %s"), tool_name, dir);
            add_suggestion (suggestions, rule, "global", label);
            return suggestions;
          }

        if (!g_str_equal (dir, "."))
          {
            g_autofree char *rule = g_strdup_printf ("%s(%s/**)", rule_tool, dir);
            g_autofree char *label = is_edit_tool (tool_name)
              ? g_strdup_printf (_("Always allow edits in %s/"), dir)
              : g_strdup_printf (_("Always allow %s in %s/"), tool_name, dir);
            add_suggestion (suggestions, rule, "workspace", label);
          }

        if (is_edit_tool (tool_name))
          add_suggestion (suggestions, "Edit(**)", "session",
                          _("Allow edits in this workspace for this session"));
        return suggestions;
      }
  }

  {
    g_autofree char *label = g_strdup_printf (_("Always allow %s in this workspace"), tool_name);
    add_suggestion (suggestions, tool_name, "workspace", label);
  }

  return suggestions;
}
