/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <glib/gstdio.h>

#include "tally-agent.h"
#include "tally-enums.h"
#include "tally-session.h"
#include "tally-store.h"
#include "tally-test-util.h"

/*
 * The GObject properties of TallyAgent, TallySession and TallyStore
 * (docs/architecture.md §2.1): each notifies once when its value changes and
 * not when it is set to the value it has, and what is set reads back.
 */

typedef struct {
  GHashTable *counts;   /* property name → notifications */
} Notes;

static void
notify_cb (GObject    *object,
           GParamSpec *pspec,
           Notes      *notes)
{
  guint count = GPOINTER_TO_UINT (g_hash_table_lookup (notes->counts, pspec->name));

  g_hash_table_insert (notes->counts, (gpointer)pspec->name, GUINT_TO_POINTER (count + 1));
}

static guint
notes_count (Notes      *notes,
             const char *name)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (notes->counts, name));
}

static void
notes_watch (Notes    *notes,
             gpointer  object)
{
  notes->counts = g_hash_table_new (g_str_hash, g_str_equal);
  g_signal_connect (object, "notify", G_CALLBACK (notify_cb), notes);
}

static void
notes_clear (Notes    *notes,
             gpointer  object)
{
  g_signal_handlers_disconnect_by_data (object, notes);
  g_clear_pointer (&notes->counts, g_hash_table_unref);
}

static TallyAgent *
new_agent (void)
{
  g_autoptr(TallyClient) client = tally_client_new (NULL, "");
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new ();

  return tally_agent_new (client, tools);
}

/* Sets @name to @value twice: the first time notifies once, the second not
 * at all, and the value reads back as @expected. */
static void
check_round_trip (GObject      *object,
                  Notes        *notes,
                  const char   *name,
                  const GValue *value,
                  const GValue *expected)
{
  g_auto(GValue) read = G_VALUE_INIT;
  guint before = notes_count (notes, name);
  g_autofree char *want = g_strdup_value_contents (expected);
  g_autofree char *got = NULL;

  g_object_set_property (object, name, value);
  g_assert_cmpuint (notes_count (notes, name), ==, before + 1);
  g_object_set_property (object, name, value);
  g_assert_cmpuint (notes_count (notes, name), ==, before + 1);

  g_value_init (&read, G_VALUE_TYPE (expected));
  g_object_get_property (object, name, &read);
  got = g_strdup_value_contents (&read);
  g_assert_cmpstr (got, ==, want);
}

static void
check_string (GObject    *object,
              Notes      *notes,
              const char *name,
              const char *value,
              const char *expected)
{
  g_auto(GValue) v = G_VALUE_INIT;
  g_auto(GValue) e = G_VALUE_INIT;

  g_value_init (&v, G_TYPE_STRING);
  g_value_set_string (&v, value);
  g_value_init (&e, G_TYPE_STRING);
  g_value_set_string (&e, expected);
  check_round_trip (object, notes, name, &v, &e);
}

static void
check_int64 (GObject    *object,
             Notes      *notes,
             const char *name,
             gint64      value)
{
  g_auto(GValue) v = G_VALUE_INIT;

  g_value_init (&v, G_TYPE_INT64);
  g_value_set_int64 (&v, value);
  check_round_trip (object, notes, name, &v, &v);
}

static void
check_uint (GObject    *object,
            Notes      *notes,
            const char *name,
            guint       value)
{
  g_auto(GValue) v = G_VALUE_INIT;

  g_value_init (&v, G_TYPE_UINT);
  g_value_set_uint (&v, value);
  check_round_trip (object, notes, name, &v, &v);
}

static void
check_double (GObject    *object,
              Notes      *notes,
              const char *name,
              double      value)
{
  g_auto(GValue) v = G_VALUE_INIT;

  g_value_init (&v, G_TYPE_DOUBLE);
  g_value_set_double (&v, value);
  check_round_trip (object, notes, name, &v, &v);
}

static void
test_agent_setters (void)
{
  g_autoptr(TallyAgent) agent = new_agent ();
  g_autofree char *tmp = g_dir_make_tmp ("tally-properties-XXXXXX", NULL);
  g_autofree char *db = g_build_filename (tmp, "data.db", NULL);
  g_auto(GValue) mode = G_VALUE_INIT;
  Notes notes;

  g_assert_nonnull (tmp);
  notes_watch (&notes, agent);

  check_string (G_OBJECT (agent), &notes, "session-id",
                "0b6f1e8a-6d3c-4c55-9a3e-1f2a3b4c5d6e", "0b6f1e8a-6d3c-4c55-9a3e-1f2a3b4c5d6e");
  g_assert_cmpstr (tally_agent_get_session_id (agent), ==, "0b6f1e8a-6d3c-4c55-9a3e-1f2a3b4c5d6e");
  check_string (G_OBJECT (agent), &notes, "model", "a-model-of-tests", "a-model-of-tests");
  check_string (G_OBJECT (agent), &notes, "database", db, db);
  check_string (G_OBJECT (agent), &notes, "workspace", tmp, tmp);
  check_int64 (G_OBJECT (agent), &notes, "max-tokens", 4096);
  check_int64 (G_OBJECT (agent), &notes, "thinking-budget", 2048);
  check_double (G_OBJECT (agent), &notes, "max-cost", 2.5);
  check_double (G_OBJECT (agent), &notes, "spent", 0.75);
  check_uint (G_OBJECT (agent), &notes, "approval-timeout", 30);
  check_uint (G_OBJECT (agent), &notes, "question-timeout", 0);

  g_value_init (&mode, TALLY_TYPE_MODE);
  g_value_set_enum (&mode, TALLY_MODE_PLAN);
  check_round_trip (G_OBJECT (agent), &notes, "last-mode", &mode, &mode);

  /* The C setters notify the same way. */
  tally_agent_set_model (agent, "a-model-of-tests");
  g_assert_cmpuint (notes_count (&notes, "model"), ==, 1);
  tally_agent_set_timeouts (agent, 30, 45);
  g_assert_cmpuint (notes_count (&notes, "approval-timeout"), ==, 1);
  g_assert_cmpuint (notes_count (&notes, "question-timeout"), ==, 2);
  tally_agent_set_workspace (agent, NULL);
  g_assert_cmpuint (notes_count (&notes, "workspace"), ==, 2);
  g_assert_null (tally_agent_get_workspace (agent));

  /* Nothing notifies "busy" outside a turn. */
  g_assert_cmpuint (notes_count (&notes, "busy"), ==, 0);
  g_assert_false (tally_agent_is_busy (agent));

  notes_clear (&notes, agent);
  g_rmdir (tmp);
}

static void
test_agent_max_cost (void)
{
  g_autoptr(TallyAgent) agent = new_agent ();
  double cap;
  Notes notes;

  notes_watch (&notes, agent);

  /* Raising a cap that is off changes nothing. */
  tally_agent_raise_max_cost (agent, 10);
  g_assert_cmpuint (notes_count (&notes, "max-cost"), ==, 0);

  tally_agent_set_max_cost (agent, 2);
  g_assert_cmpuint (notes_count (&notes, "max-cost"), ==, 1);

  /* The raised cap (10) is in force now and is what the property reads. */
  g_object_get (agent, "max-cost", &cap, NULL);
  g_assert_cmpfloat (cap, ==, 10);

  /* A lower set cap leaves the raised one in force: no notification. */
  tally_agent_set_max_cost (agent, 3);
  g_assert_cmpuint (notes_count (&notes, "max-cost"), ==, 1);

  tally_agent_raise_max_cost (agent, 12);
  g_assert_cmpuint (notes_count (&notes, "max-cost"), ==, 2);
  tally_agent_raise_max_cost (agent, 11);
  g_assert_cmpuint (notes_count (&notes, "max-cost"), ==, 2);
  g_assert_cmpfloat (tally_agent_get_max_cost (agent), ==, 12);

  /* A negative spend is clamped to 0, the value it has: no notification. */
  tally_agent_set_spent (agent, -1);
  g_assert_cmpuint (notes_count (&notes, "spent"), ==, 0);

  notes_clear (&notes, agent);
}

static void
test_session_forwards (void)
{
  g_autoptr(TallyClient) client = tally_client_new (NULL, "");
  g_autoptr(TallyToolRegistry) tools = tally_tool_registry_new ();
  g_autoptr(TallySession) session = tally_session_new (NULL, client, tools);
  TallyAgent *agent = tally_session_get_agent (session);
  g_autoptr(TallyAgent) agent_prop = NULL;
  g_autoptr(TallyTranscript) transcript = NULL;
  g_autoptr(TallyStore) store = NULL;
  g_autofree char *id = NULL;
  TallyMode mode;
  gboolean busy;
  double spent;
  Notes notes;

  g_object_get (session,
                "id", &id,
                "agent", &agent_prop,
                "transcript", &transcript,
                "store", &store,
                "mode", &mode,
                "busy", &busy,
                "spent", &spent,
                NULL);
  g_assert_cmpstr (id, ==, tally_session_get_id (session));
  g_assert_true (agent_prop == agent);
  g_assert_true (transcript == tally_session_get_transcript (session));
  g_assert_null (store);
  g_assert_cmpint (mode, ==, TALLY_MODE_ASK);
  g_assert_false (busy);
  g_assert_cmpfloat (spent, ==, 0);

  notes_watch (&notes, session);

  tally_agent_set_spent (agent, 1.25);
  tally_agent_set_spent (agent, 1.25);
  g_assert_cmpuint (notes_count (&notes, "spent"), ==, 1);
  g_object_get (session, "spent", &spent, NULL);
  g_assert_cmpfloat (spent, ==, 1.25);

  tally_agent_set_session_id (agent, "5f0c9f53-2f7e-4d47-8f0e-7c1d2e3f4a5b");
  tally_agent_set_session_id (agent, "5f0c9f53-2f7e-4d47-8f0e-7c1d2e3f4a5b");
  g_assert_cmpuint (notes_count (&notes, "id"), ==, 1);
  g_assert_cmpstr (tally_session_get_id (session), ==, "5f0c9f53-2f7e-4d47-8f0e-7c1d2e3f4a5b");

  /* Agent settings that are not the session's own are not echoed. */
  tally_agent_set_model (agent, "another-model-of-tests");
  g_assert_cmpuint (g_hash_table_size (notes.counts), ==, 2);

  notes_clear (&notes, session);
}

static void
test_store_reads (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("tally-properties-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (tmp, "tally.db", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *read_path = NULL;
  g_autofree char *reason = NULL;
  gboolean read_only = TRUE;

  {
    g_autoptr(TallyStore) store = tally_store_open (path, &error);

    g_assert_no_error (error);
    g_object_get (store,
                  "path", &read_path,
                  "read-only", &read_only,
                  "read-only-reason", &reason,
                  NULL);
    g_assert_cmpstr (read_path, ==, tally_store_get_path (store));
    g_assert_cmpstr (read_path, ==, path);
    g_assert_false (read_only);
    g_assert_null (reason);
  }

  tally_test_rm_rf (tmp);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/properties/agent/setters", test_agent_setters);
  g_test_add_func ("/tally/properties/agent/max-cost", test_agent_max_cost);
  g_test_add_func ("/tally/properties/session/forwards", test_session_forwards);
  g_test_add_func ("/tally/properties/store/reads", test_store_reads);

  return g_test_run ();
}
