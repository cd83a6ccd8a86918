/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The gate's rule matcher and the question validator as pure functions
 * (issue 10, items 1 and 4; docs/security.md): how a shell command is cut
 * into simple commands, which commands an allow rule and a deny rule
 * cover, what an approval card offers, and every refusal of
 * AskUserQuestion input with the words that tell the model what to fix. */

#include "config.h"

#include <string.h>

#include "tally-gate.h"
#include "tally-questions.h"
#include "tally-tool-registry.h"
#include "tally-test-util.h"

static const TallyToolContext context = { (char *) "/nonexistent/db.sqlite", (char *) "/nonexistent/ws", FALSE };

static JsonObject *
bash_input (const char *command)
{
  JsonObject *input = json_object_new ();

  json_object_set_string_member (input, "command", command);
  return input;
}

/* What each command is cut into, parts joined by " | " here; NULL when
 * it cannot be read. */
static void
test_split_command (void)
{
  static const struct { const char *command; const char *parts; gboolean simple; } cases[] = {
    { "ls", "ls", TRUE },
    { "  ls   -la  ", "ls -la", TRUE },
    { "ls -la 'a;b' \"c && d\" e\\;f", "ls -la a;b c && d e;f", TRUE },
    { "ls \"$HOME\" ${HOME} *.csv ~/x", "ls $HOME ${HOME} *.csv ~/x", TRUE },
    { "git log --format='%h|%s'", "git log --format=%h|%s", TRUE },
    { "ls && touch x", "ls | touch x", FALSE },
    { "ls; touch x", "ls | touch x", FALSE },
    { "ls || touch x", "ls | touch x", FALSE },
    { "ls | sh", "ls | sh", FALSE },
    { "ls |& sh", "ls | sh", FALSE },
    { "ls & touch x", "ls | touch x", FALSE },
    { "ls\ntouch x", "ls | touch x", FALSE },
    { "ls \\\ntouch x", "ls touch x", FALSE },
    { "ls 'a\nb'", "ls a\nb", FALSE },
    { "ls\rtouch", "ls\rtouch", FALSE },
    { "ls $(touch x)", "touch x | ls $(touch x)", FALSE },
    { "ls \"$(touch x)\"", "touch x | ls $(touch x)", FALSE },
    { "ls `touch x`", "touch x | ls `touch x`", FALSE },
    { "ls `echo \\`touch x\\``", "touch x | echo `touch x` | ls `echo \\`touch x\\``", FALSE },
    { "ls <(touch x)", "touch x | ls <(touch x)", FALSE },
    { "ls $((1 + 2))", "1 + 2 | ls $((1 + 2))", FALSE },
    { "ls > out", "ls", FALSE },
    { "ls >> out 2>&1", "ls", FALSE },
    { "ls 2> err", "ls", FALSE },
    { "ls < in", "ls", FALSE },
    { ">out rm x", "rm x", FALSE },
    { "cat <<EOF", "cat", FALSE },
    { "(ls)", "ls", FALSE },
    { "{ ls; }", "{ ls | }", FALSE },
    { "ls {a,b}", "ls {a,b}", FALSE },
    { "ls ${x:-$(touch y)}", "touch y | ls ${x:-$(touch y)}", FALSE },
    { "ls $'a\\'b'", "ls $'a\\'b'", FALSE },
    { "ls # ; touch x", "ls", FALSE },
    { "ls a#b", "ls a#b", TRUE },
    { "if true; then rm x; fi", "if true | then rm x | fi", FALSE },
    { "", "", FALSE },
    { "ls 'open", NULL, FALSE },
    { "ls \"open", NULL, FALSE },
    { "ls $(open", NULL, FALSE },
    { "ls `open", NULL, FALSE },
    { "ls )", NULL, FALSE },
    { "ls ${open", NULL, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gboolean simple = !cases[i].simple;
      g_auto(GStrv) parts = tally_gate_split_command (cases[i].command, &simple);
      g_autofree char *joined = parts != NULL ? g_strjoinv (" | ", parts) : NULL;

      if (g_strcmp0 (joined, cases[i].parts) != 0 || simple != cases[i].simple)
        g_error ("case %u “%s”: parts “%s”, simple %d; expected “%s”, %d", i, cases[i].command,
                 joined ? joined : "(null)", simple, cases[i].parts ? cases[i].parts : "(null)",
                 cases[i].simple);
    }
}

/* Nesting has a limit, and deep nesting is refused rather than read. */
static void
test_split_deep (void)
{
  g_autoptr(GString) deep = g_string_new ("ls ");
  gboolean simple = TRUE;
  g_auto(GStrv) parts = NULL;

  for (guint i = 0; i < 100; i++)
    g_string_append (deep, "$(");
  for (guint i = 0; i < 100; i++)
    g_string_append_c (deep, ')');

  parts = tally_gate_split_command (deep->str, &simple);
  g_assert_null (parts);
  g_assert_false (simple);
}

typedef struct {
  const char *pattern;
  const char *command;
  gboolean    matches;
} RuleCase;

static void
check_rules (const RuleCase *cases,
             guint           n,
             gboolean        allow)
{
  for (guint i = 0; i < n; i++)
    {
      TallyGateRule rule = { (char *) cases[i].pattern, allow };
      g_autoptr(JsonObject) input = bash_input (cases[i].command);
      gboolean matches = tally_gate_rule_applies (&rule, "Bash", input, &context);

      if (matches != cases[i].matches)
        g_error ("%s rule %s against “%s”: %s, expected %s", allow ? "allow" : "deny", cases[i].pattern,
                 cases[i].command, matches ? "matches" : "no match", cases[i].matches ? "a match" : "no match");

      /* The pattern-only form reads a rule as an allow rule. */
      if (allow)
        g_assert_cmpint (tally_gate_rule_matches (cases[i].pattern, "Bash", input, &context), ==, matches);
    }
}

/* Issue 10, item 1: an allow rule covers a single simple command only. */
static void
test_allow_rules (void)
{
  static const RuleCase cases[] = {
    { "Bash(ls:*)", "ls", TRUE },
    { "Bash(ls:*)", "ls -la", TRUE },
    { "Bash(ls:*)", "  ls -la reports  ", TRUE },
    { "Bash(ls:*)", "ls 'a;b' \"x && y\" c\\|d", TRUE },
    { "Bash(ls:*)", "ls \"$HOME\"", TRUE },
    { "Bash(ls:*)", "lsblk", FALSE },
    { "Bash(ls:*)", "ls && touch x", FALSE },
    { "Bash(ls:*)", "ls; touch x", FALSE },
    { "Bash(ls:*)", "ls;touch x", FALSE },
    { "Bash(ls:*)", "ls || touch x", FALSE },
    { "Bash(ls:*)", "ls | sh", FALSE },
    { "Bash(ls:*)", "ls & touch x", FALSE },
    { "Bash(ls:*)", "ls &", FALSE },
    { "Bash(ls:*)", "ls $(touch x)", FALSE },
    { "Bash(ls:*)", "ls \"$(touch x)\"", FALSE },
    { "Bash(ls:*)", "ls `touch x`", FALSE },
    { "Bash(ls:*)", "ls <(touch x)", FALSE },
    { "Bash(ls:*)", "ls > file", FALSE },
    { "Bash(ls:*)", "ls >> file", FALSE },
    { "Bash(ls:*)", "ls 2> file", FALSE },
    { "Bash(ls:*)", "ls < file", FALSE },
    { "Bash(ls:*)", "ls\ntouch x", FALSE },
    { "Bash(ls:*)", "ls\n", FALSE },
    { "Bash(ls:*)", "ls 'a\nb'", FALSE },
    { "Bash(ls:*)", "ls\rtouch x", FALSE },
    { "Bash(ls:*)", "ls (x)", FALSE },
    { "Bash(ls:*)", "ls { x; }", FALSE },
    { "Bash(ls:*)", "ls ${x:-$(touch y)}", FALSE },
    { "Bash(ls:*)", "ls ${x:=y}", FALSE },
    { "Bash(ls:*)", "ls $'a\\'b'; touch x", FALSE },
    { "Bash(ls:*)", "ls $((1+1))", FALSE },
    { "Bash(ls:*)", "ls # hidden", FALSE },
    { "Bash(ls:*)", "ls 'unterminated; touch x", FALSE },
    { "Bash(git status)", "git status", TRUE },
    { "Bash(git status)", " git status ", TRUE },
    { "Bash(git status)", "git status; rm -rf x", FALSE },
    { "Bash(git status)", "git status\n", FALSE },
    { "Bash(ls && touch x)", "ls && touch x", FALSE },
    { "Bash(ls;:*)", "ls; touch x", FALSE },
    { "Bash", "ls && touch x", TRUE },
    { "Bash()", "ls", FALSE },
    { "Read(ls:*)", "ls", FALSE },
  };

  check_rules (cases, G_N_ELEMENTS (cases), TRUE);
}

/* Deny rules keep matching anywhere in a command. */
static void
test_deny_rules (void)
{
  static const RuleCase cases[] = {
    { "Bash(rm:*)", "rm -rf data", TRUE },
    { "Bash(rm:*)", "ls && rm -rf data", TRUE },
    { "Bash(rm:*)", "ls; rm x", TRUE },
    { "Bash(rm:*)", "ls || rm x", TRUE },
    { "Bash(rm:*)", "ls | rm x", TRUE },
    { "Bash(rm:*)", "ls & rm x", TRUE },
    { "Bash(rm:*)", "ls\nrm x", TRUE },
    { "Bash(rm:*)", "echo $(rm x)", TRUE },
    { "Bash(rm:*)", "echo \"$(rm x)\"", TRUE },
    { "Bash(rm:*)", "echo `rm x`", TRUE },
    { "Bash(rm:*)", "cat <(rm x)", TRUE },
    { "Bash(rm:*)", "(rm x)", TRUE },
    { "Bash(rm:*)", "{ rm x; }", TRUE },
    { "Bash(rm:*)", "if true; then rm x; fi", TRUE },
    { "Bash(rm:*)", "FOO=1 rm x", TRUE },
    { "Bash(rm:*)", "> log rm x", TRUE },
    { "Bash(rm:*)", "'rm' -rf x", TRUE },
    { "Bash(rm:*)", "r\\m -rf x", TRUE },
    { "Bash(rm:*)", "/bin/rm -rf x", TRUE },
    { "Bash(rm:*)", "sudo -u root rm -rf x", TRUE },
    { "Bash(rm:*)", "env A=1 nice -n 5 rm x", TRUE },
    { "Bash(rm:*)", "ls | xargs rm", TRUE },
    { "Bash(rm:*)", "find . -name '*.tmp' -exec rm {} \\;", TRUE },
    { "Bash(rm:*)", "sh -c 'rm x'", TRUE },
    { "Bash(rm:*)", "bash -lc \"ls; rm x\"", TRUE },
    { "Bash(rm:*)", "echo $'\\''; rm x", TRUE },
    { "Bash(rm:*)", "echo 'open; rm x", TRUE },
    { "Bash(rm:*)", "echo ${x:-$(rm y)}", TRUE },
    { "Bash(rm -rf data)", "ls; rm   -rf   data", TRUE },
    { "Bash(rm:*)", "echo 'rm x'", FALSE },
    { "Bash(rm:*)", "echo \"a; rm x\"", FALSE },
    { "Bash(rm:*)", "ls rm", FALSE },
    { "Bash(rm:*)", "rmdir x", FALSE },
    { "Bash(rm:*)", "grep rm notes.txt", FALSE },
    { "Bash(rm:*)", "ls # rm x", FALSE },
    { "Bash(rm -rf data)", "rm -rf data2", FALSE },
  };

  check_rules (cases, G_N_ELEMENTS (cases), FALSE);
}

/* The whole gate: an allow rule never runs a compound command, a deny
 * rule finds its command inside one, and the card offers no rule for it. */
static void
test_evaluate (void)
{
  g_autoptr(GPtrArray) rules = g_ptr_array_new_with_free_func ((GDestroyNotify) tally_gate_rule_free);
  TallyGateRule *allow = g_new0 (TallyGateRule, 1);
  TallyGateRule *deny = g_new0 (TallyGateRule, 1);
  static const struct { const char *command; TallyGateAction action; const char *rule; guint n_suggestions; } cases[] = {
    { "ls -la", TALLY_GATE_ALLOW, "Bash(ls:*)", 2 },
    { "ls", TALLY_GATE_ALLOW, "Bash(ls:*)", 1 },
    { "ls && touch x", TALLY_GATE_ASK, NULL, 0 },
    { "ls > out.txt", TALLY_GATE_ASK, NULL, 0 },
    { "ls\nid", TALLY_GATE_ASK, NULL, 0 },
    { "ls $(id)", TALLY_GATE_ASK, NULL, 0 },
    { "ls; rm -rf data", TALLY_GATE_DENY, "Bash(rm:*)", 0 },
    { "git status --short", TALLY_GATE_ASK, NULL, 2 },
  };

  allow->pattern = g_strdup ("Bash(ls:*)");
  allow->allow = TRUE;
  deny->pattern = g_strdup ("Bash(rm:*)");
  deny->allow = FALSE;
  g_ptr_array_add (rules, allow);
  g_ptr_array_add (rules, deny);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(JsonObject) input = bash_input (cases[i].command);
      g_autoptr(JsonArray) suggestions = tally_gate_dup_suggestions ("Bash", input, &context);
      TallyGateVerdict verdict;

      tally_gate_evaluate (rules, "Bash", NULL, input, TALLY_MODE_AUTO, &context, &verdict);
      if (verdict.action != cases[i].action || g_strcmp0 (verdict.rule, cases[i].rule) != 0)
        g_error ("“%s”: action %d rule %s; expected %d %s", cases[i].command, verdict.action,
                 verdict.rule ? verdict.rule : "(none)", cases[i].action, cases[i].rule ? cases[i].rule : "(none)");
      g_assert_cmpuint (json_array_get_length (suggestions), ==, cases[i].n_suggestions);
      tally_gate_verdict_clear (&verdict);
    }

  {
    g_autoptr(JsonObject) input = bash_input ("git status --short");
    g_autoptr(JsonArray) suggestions = tally_gate_dup_suggestions ("Bash", input, &context);

    g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (suggestions, 0), "rule"), ==,
                     "Bash(git status --short)");
    g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (suggestions, 1), "rule"), ==,
                     "Bash(git status:*)");
  }
}

/* create_chart only adds files: no card in ask and auto, refused in plan
 * like every tool that changes files (docs/security.md). */
static void
test_create_chart_modes (void)
{
  g_autoptr(TallyToolRegistry) registry = tally_tool_registry_new_default ();
  g_autoptr(GPtrArray) rules = g_ptr_array_new_with_free_func ((GDestroyNotify) tally_gate_rule_free);
  g_autoptr(JsonObject) input = tally_test_parse_object ("{\"spec\":{\"title\":\"T\",\"mark\":\"bar\"}}");
  TallyTool *tool = tally_tool_registry_lookup (registry, "create_chart");
  static const struct { TallyMode mode; TallyGateAction action; } cases[] = {
    { TALLY_MODE_ASK, TALLY_GATE_ALLOW },
    { TALLY_MODE_AUTO, TALLY_GATE_ALLOW },
    { TALLY_MODE_PLAN, TALLY_GATE_DENY },
  };

  g_assert_nonnull (tool);
  g_assert_false (tally_tool_is_read_only (tool));
  g_assert_true (tally_tool_adds_files_only (tool));

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      TallyGateVerdict verdict;

      tally_gate_evaluate (rules, "create_chart", tool, input, cases[i].mode, &context, &verdict);
      g_assert_cmpint (verdict.action, ==, cases[i].action);
      g_assert_cmpstr (verdict.reason, ==, "mode");
      tally_gate_verdict_clear (&verdict);
    }
}

/* A path outside the workspace asks whatever the rules say (§6.1 step 4),
 * so no "always allow" rule is offered for it (one was, scope global, and
 * the next identical call asked again: found by a reviewer); a path inside
 * still gets its folder's rule. */
static void
test_outside_suggestions (void)
{
  static const char * const tools[] = { "Read", "Write", "Edit", "Glob", "Grep" };

  for (guint i = 0; i < G_N_ELEMENTS (tools); i++)
    {
      const char *member = g_str_equal (tools[i], "Glob") || g_str_equal (tools[i], "Grep") ? "path" : "file_path";
      g_autofree char *outside_json = g_strdup_printf ("{\"%s\":\"/tmp/elsewhere/x.txt\",\"pattern\":\"x\"}", member);
      g_autofree char *inside_json = g_strdup_printf ("{\"%s\":\"reports/x.txt\",\"pattern\":\"x\"}", member);
      g_autoptr(JsonObject) outside = tally_test_parse_object (outside_json);
      g_autoptr(JsonObject) inside = tally_test_parse_object (inside_json);
      g_autoptr(JsonArray) none = tally_gate_dup_suggestions (tools[i], outside, &context);
      g_autoptr(JsonArray) some = tally_gate_dup_suggestions (tools[i], inside, &context);
      TallyGateRule rule = { .pattern = (char *) "Read(/tmp/elsewhere/**)", .allow = TRUE };
      TallyGateVerdict verdict;

      g_assert_cmpuint (json_array_get_length (none), ==, 0);
      g_assert_cmpuint (json_array_get_length (some), >=, 1);
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (some, 0), "scope"), ==,
                       "workspace");

      /* Such a rule, stored before, still asks. */
      if (g_str_equal (tools[i], "Read"))
        {
          g_autoptr(TallyToolRegistry) registry = tally_tool_registry_new_default ();
          g_autoptr(GPtrArray) rules = g_ptr_array_new ();
          TallyTool *tool = tally_tool_registry_lookup (registry, "Read");

          g_ptr_array_add (rules, &rule);
          tally_gate_evaluate (rules, "Read", tool, outside, TALLY_MODE_AUTO, &context, &verdict);
          g_assert_cmpint (verdict.action, ==, TALLY_GATE_ASK);
          tally_gate_verdict_clear (&verdict);
        }
    }
}

/* Inputs that are not what the rules expect match nothing, loudly or not:
 * no critical, no crash. */
static void
test_odd_inputs (void)
{
  g_autoptr(JsonObject) number = tally_test_parse_object ("{\"command\":5}");
  g_autoptr(JsonObject) object = tally_test_parse_object ("{\"command\":{\"a\":1}}");
  g_autoptr(JsonObject) empty = json_object_new ();
  g_autoptr(JsonArray) suggestions = tally_gate_dup_suggestions ("Bash", number, &context);
  TallyGateRule rule = { (char *) "Bash(ls:*)", FALSE };

  g_assert_false (tally_gate_rule_applies (&rule, "Bash", number, &context));
  g_assert_false (tally_gate_rule_applies (&rule, "Bash", object, &context));
  g_assert_false (tally_gate_rule_applies (&rule, "Bash", empty, &context));
  g_assert_false (tally_gate_rule_applies (&rule, "Bash", NULL, &context));
  g_assert_false (tally_gate_rule_applies (&rule, NULL, empty, &context));
  g_assert_cmpuint (json_array_get_length (suggestions), ==, 0);

  /* A file tool's call that names no usable file is offered no rule: the
   * only one left would name the tool alone and allow it on every file
   * (found by a tester: one "always" on an Edit with an empty path let
   * the next Write replace a file unasked). */
  {
    static const char * const inputs[] = {
      "{\"file_path\":\"\",\"old_string\":\"a\",\"new_string\":\"b\"}",
      "{\"file_path\":[\"a\"],\"content\":null}",
      "{\"content\":\"x\"}",
    };
    static const char * const tools[] = { "Edit", "Write", "Read" };

    for (guint i = 0; i < G_N_ELEMENTS (tools); i++)
      for (guint j = 0; j < G_N_ELEMENTS (inputs); j++)
        {
          g_autoptr(JsonObject) input = tally_test_parse_object (inputs[j]);
          g_autoptr(JsonArray) offered = tally_gate_dup_suggestions (tools[i], input, &context);

          g_assert_cmpuint (json_array_get_length (offered), ==, 0);
        }
  }

  /* A rule's spec is a glob: a path with glob characters in a folder's or
   * the file's name cannot be named by one, so nothing is offered (a
   * folder named with two stars made a rule that matched every file:
   * found by a reviewer). */
  {
    static const char * const paths[] = { "**/notes.txt", "*/x.txt", "a[1]/b.txt", "re*port.md", "x\\y.md" };

    for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
      {
        g_autoptr(JsonObject) input = json_object_new ();
        g_autoptr(JsonArray) offered = NULL;

        json_object_set_string_member (input, "file_path", paths[i]);
        json_object_set_string_member (input, "content", "x");
        offered = tally_gate_dup_suggestions ("Write", input, &context);
        g_assert_cmpuint (json_array_get_length (offered), ==, 0);
      }
  }

  /* Glob and Grep may leave their folder out (the workspace): their bare
   * rule is still offered, and a call outside still asks (above). */
  {
    g_autoptr(JsonObject) input = tally_test_parse_object ("{\"pattern\":\"*.md\"}");
    g_autoptr(JsonArray) offered = tally_gate_dup_suggestions ("Glob", input, &context);

    g_assert_cmpuint (json_array_get_length (offered), ==, 1);
    g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (offered, 0), "rule"), ==, "Glob");
  }
}

#define OPTIONS_OK "[{\"label\":\"March\",\"description\":\"Only March\"},{\"label\":\"Q1\",\"description\":\"\"}]"

static char *
one_question (const char *question,
              const char *header,
              const char *options)
{
  return g_strdup_printf ("{\"questions\":[{\"question\":%s,\"header\":%s,\"options\":%s}]}",
                          question, header, options);
}

/* Issue 10, item 4: every rule of the schema and Tally's limits, each
 * refused with a message that says what to fix; inputs at the limits pass. */
static void
test_questions (void)
{
  g_autofree char *q1000 = NULL;
  g_autofree char *q1001 = NULL;
  g_autofree char *label60 = NULL;
  g_autofree char *label61 = NULL;
  g_autofree char *desc300 = NULL;
  g_autofree char *desc301 = NULL;
  g_autofree char *preview2001 = NULL;
  g_autoptr(GPtrArray) valid = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) invalid = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) words = g_ptr_array_new ();

  {
    g_autofree char *a = g_strnfill (999, 'a');
    g_autofree char *b = g_strnfill (1000, 'b');
    g_autofree char *l = g_strnfill (59, 'l');
    g_autofree char *m = g_strnfill (60, 'm');
    g_autofree char *d = g_strnfill (300, 'd');
    g_autofree char *e = g_strnfill (301, 'e');
    g_autofree char *p = g_strnfill (2001, 'p');

    q1000 = g_strdup_printf ("\"%s?\"", a);
    q1001 = g_strdup_printf ("\"%s?\"", b);
    label60 = g_strdup_printf ("[{\"label\":\"%s\\u00e9\",\"description\":\"\"},{\"label\":\"b\",\"description\":\"\"}]", l);
    label61 = g_strdup_printf ("[{\"label\":\"%s\\u00e9\",\"description\":\"\"},{\"label\":\"b\",\"description\":\"\"}]", m);
    desc300 = g_strdup_printf ("[{\"label\":\"a\",\"description\":\"%s\"},{\"label\":\"b\",\"description\":\"\"}]", d);
    desc301 = g_strdup_printf ("[{\"label\":\"a\",\"description\":\"%s\"},{\"label\":\"b\",\"description\":\"\"}]", e);
    preview2001 = g_strdup_printf ("[{\"label\":\"a\",\"description\":\"\",\"preview\":\"%s\"},{\"label\":\"b\",\"description\":\"\"}]", p);
  }

  /* Accepted, at the edges. */
  g_ptr_array_add (valid, one_question ("\"Which period?\"", "\"Period\"", OPTIONS_OK));
  g_ptr_array_add (valid, one_question ("\"Which period?\"", "\"Zeitraum 24ä\"", OPTIONS_OK));
  g_ptr_array_add (valid, one_question ("\"Which period?\"", "\"123456789012\"", OPTIONS_OK));
  g_ptr_array_add (valid, one_question (q1000, "\"P\"", OPTIONS_OK));
  g_ptr_array_add (valid, one_question ("\"Which?\"", "\"P\"", label60));
  g_ptr_array_add (valid, one_question ("\"Which?\"", "\"P\"", desc300));
  g_ptr_array_add (valid, one_question ("\"Line one\\nline two?\"", "\"P\"",
                                        "[{\"label\":\"a\",\"description\":\"x\\ty\\nz\",\"preview\":null},"
                                        "{\"label\":\"b\",\"description\":\"\",\"preview\":\"| a |\\n| 1 |\"},"
                                        "{\"label\":\"c\",\"description\":\"\"},{\"label\":\"d\",\"description\":\"\"}]"));
  g_ptr_array_add (valid, g_strdup ("{\"questions\":["
    "{\"question\":\"A?\",\"header\":\"A\",\"multiSelect\":true,\"options\":" OPTIONS_OK "},"
    "{\"question\":\"B?\",\"header\":\"B\",\"multiSelect\":null,\"options\":" OPTIONS_OK "},"
    "{\"question\":\"C?\",\"header\":\"C\",\"multiSelect\":false,\"options\":" OPTIONS_OK "},"
    "{\"question\":\"D?\",\"header\":\"D\",\"extra\":[1],\"options\":" OPTIONS_OK "}],\"metadata\":{}}"));

  for (guint i = 0; i < valid->len; i++)
    {
      g_autoptr(JsonObject) input = tally_test_parse_object (g_ptr_array_index (valid, i));
      g_autoptr(GError) error = NULL;

      if (!tally_questions_validate (input, &error))
        g_error ("valid case %u refused: %s", i, error->message);
    }

#define INVALID(json, expected) G_STMT_START { g_ptr_array_add (invalid, (json)); g_ptr_array_add (words, (gpointer) (expected)); } G_STMT_END

  INVALID (g_strdup ("{}"), "needs “questions”: an array of 1 to 4 questions (it is missing)");
  INVALID (g_strdup ("{\"questions\":\"Which?\"}"), "(it is a string)");
  INVALID (g_strdup ("{\"questions\":[]}"), "takes 1 to 4 questions; this call had 0");
  INVALID (g_strdup ("{\"questions\":[1,2,3,4,5]}"), "this call had 5");
  INVALID (g_strdup ("{\"questions\":[\"Which?\"]}"), "Question 1 must be an object with “question”, “header” and “options”, not a string");
  INVALID (one_question ("\"Which?\"", "\"Revenue period\"", OPTIONS_OK),
           "Question 1: “header” is 14 characters long; it may have at most 12. Shorten it.");
  INVALID (one_question ("\"Which?\"", "\"Zeitraum 24äö\"", OPTIONS_OK), "“header” is 13 characters long");
  INVALID (one_question ("\"Which?\"", "\"Per\\niod\"", OPTIONS_OK),
           "“header” contains the control character U+000A (it must be a single line)");
  INVALID (one_question ("\"Which?\"", "\"   \"", OPTIONS_OK), "Question 1: “header” is empty");
  INVALID (one_question ("\"Which?\"", "12", OPTIONS_OK), "Question 1: “header” must be a string, not a number");
  INVALID (one_question ("\"Which?\"", "null", OPTIONS_OK), "“header” must be a string, not null");
  INVALID (one_question ("[\"Which?\"]", "\"P\"", OPTIONS_OK), "“question” must be a string, not an array");
  INVALID (one_question ("\"\"", "\"P\"", OPTIONS_OK), "“question” is empty");
  INVALID (one_question (q1001, "\"P\"", OPTIONS_OK), "“question” is 1001 characters long; it may have at most 1000");
  INVALID (one_question ("\"Which\\u0007?\"", "\"P\"", OPTIONS_OK), "control character U+0007; remove it");
  INVALID (one_question ("\"Which?\"", "\"P\"", "{}"), "Question 1 needs “options”: an array of 2 to 4 options (it is an object)");
  INVALID (one_question ("\"Which?\"", "\"P\"", "[{\"label\":\"a\",\"description\":\"\"}]"), "Question 1 has 1 options; give 2 to 4");
  INVALID (one_question ("\"Which?\"", "\"P\"",
                         "[{\"label\":\"a\",\"description\":\"\"},{\"label\":\"b\",\"description\":\"\"},"
                         "{\"label\":\"c\",\"description\":\"\"},{\"label\":\"d\",\"description\":\"\"},"
                         "{\"label\":\"e\",\"description\":\"\"}]"), "has 5 options; give 2 to 4");
  INVALID (one_question ("\"Which?\"", "\"P\"", "[\"a\",\"b\"]"), "Option 1 of question 1 must be an object with “label” and “description”, not a string");
  INVALID (one_question ("\"Which?\"", "\"P\"", "[{\"label\":\"March\",\"description\":\"\"},{\"label\":\"March\",\"description\":\"\"}]"),
           "Question 1: options 1 and 2 have the same label “March”");
  INVALID (one_question ("\"Which?\"", "\"P\"", "[{\"label\":\"a\",\"description\":\"\"},{\"label\":\"b\",\"description\":\"\"},{\"label\":\" A \",\"description\":\"\"}]"),
           "options 1 and 3 have the same label “ A ”");
  INVALID (one_question ("\"Which?\"", "\"P\"", label61), "Option 1 of question 1: “label” is 61 characters long; it may have at most 60");
  INVALID (one_question ("\"Which?\"", "\"P\"", "[{\"label\":\"a\\tb\",\"description\":\"\"},{\"label\":\"b\",\"description\":\"\"}]"),
           "“label” contains the control character U+0009");
  INVALID (one_question ("\"Which?\"", "\"P\"", "[{\"label\":\"a\"},{\"label\":\"b\",\"description\":\"\"}]"),
           "Option 1 of question 1 has no “description”");
  INVALID (one_question ("\"Which?\"", "\"P\"", "[{\"label\":\"a\",\"description\":false},{\"label\":\"b\",\"description\":\"\"}]"),
           "“description” must be a string, not true or false");
  INVALID (one_question ("\"Which?\"", "\"P\"", desc301), "“description” is 301 characters long; it may have at most 300");
  INVALID (one_question ("\"Which?\"", "\"P\"", preview2001), "“preview” is 2001 characters long; it may have at most 2000");
  INVALID (one_question ("\"Which?\"", "\"P\"", "[{\"label\":\"a\",\"description\":\"\",\"preview\":7},{\"label\":\"b\",\"description\":\"\"}]"),
           "“preview” must be a string, not a number");
  INVALID (g_strdup ("{\"questions\":[{\"question\":\"A?\",\"header\":\"A\",\"multiSelect\":\"yes\",\"options\":" OPTIONS_OK "}]}"),
           "Question 1: “multiSelect” must be true or false, not a string");
  INVALID (g_strdup ("{\"questions\":[{\"question\":\"A?\",\"header\":\"A\",\"options\":" OPTIONS_OK "},"
                     "{\"question\":\"A?\",\"header\":\"B\",\"options\":" OPTIONS_OK "}]}"),
           "Question 2 repeats the text of an earlier question");
  INVALID (g_strdup ("{\"questions\":[{\"question\":\"A?\",\"header\":\"A\",\"options\":" OPTIONS_OK "},"
                     "{\"question\":\"B?\",\"header\":\"Far too long a header\",\"options\":" OPTIONS_OK "}]}"),
           "Question 2: “header” is 21 characters long");

#undef INVALID

  for (guint i = 0; i < invalid->len; i++)
    {
      g_autoptr(JsonObject) input = tally_test_parse_object (g_ptr_array_index (invalid, i));
      g_autoptr(GError) error = NULL;

      if (tally_questions_validate (input, &error))
        g_error ("invalid case %u accepted: %s", i, (const char *) g_ptr_array_index (invalid, i));
      g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
      if (strstr (error->message, g_ptr_array_index (words, i)) == NULL)
        g_error ("invalid case %u: “%s” lacks “%s”", i, error->message, (const char *) g_ptr_array_index (words, i));
      g_assert_true (g_str_has_suffix (error->message,
                                       "Nothing was shown to the analyst; fix this and call AskUserQuestion again."));
    }

  {
    g_autoptr(GError) error = NULL;

    g_assert_false (tally_questions_validate (NULL, &error));
    g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
  }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/gate/split-command", test_split_command);
  g_test_add_func ("/tally/gate/split-deep", test_split_deep);
  g_test_add_func ("/tally/gate/allow-rules", test_allow_rules);
  g_test_add_func ("/tally/gate/deny-rules", test_deny_rules);
  g_test_add_func ("/tally/gate/evaluate", test_evaluate);
  g_test_add_func ("/tally/gate/odd-inputs", test_odd_inputs);
  g_test_add_func ("/tally/gate/outside-suggestions", test_outside_suggestions);
  g_test_add_func ("/tally/gate/create-chart-modes", test_create_chart_modes);
  g_test_add_func ("/tally/questions/validate", test_questions);

  return g_test_run ();
}
