/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <errno.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "tally-event.h"
#include "tally-json.h"
#include "tally-sample-session.h"

/*
 * The sample session shown on first launch (docs/architecture.md §2.2,
 * data/sample-session/README.md): a recorded Beanline conversation in the
 * event vocabulary of docs/architecture.md §4, and the API conversation
 * that goes with it, both in the GResource. Installing it copies both into
 * the store under TALLY_SAMPLE_SESSION_ID; the window then opens it like
 * any saved session, through tally_session_open(), so it replays offline
 * and the analyst can go on asking in it once a key is saved.
 */

#define CHARTS_RESOURCE "/io/github/tallyapp/Tally/sample-session/charts"
#define EVENTS_RESOURCE "/io/github/tallyapp/Tally/sample-session/beanline-sample.jsonl"
#define MESSAGES_RESOURCE "/io/github/tallyapp/Tally/sample-session/beanline-sample-messages.jsonl"

/* Calls @line_cb for each non-empty line of a resource, parsed as a JSON
 * object. A line that is not an object is an error naming it. */
typedef gboolean (*LineFunc) (JsonObject  *object,
                              guint        line_no,
                              gpointer     user_data,
                              GError     **error);

static gboolean
for_each_line (const char  *resource,
               LineFunc     line_cb,
               gpointer     user_data,
               GError     **error)
{
  g_autoptr(GBytes) bytes = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree char *text = NULL;
  gsize size = 0;
  const char *data;

  bytes = g_resources_lookup_data (resource, G_RESOURCE_LOOKUP_FLAGS_NONE, error);
  if (bytes == NULL)
    return FALSE;

  data = g_bytes_get_data (bytes, &size);
  text = g_strndup (data, size);
  lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonNode *root;

      if (*lines[i] == '\0')
        continue;

      if (!json_parser_load_from_data (parser, lines[i], -1, NULL) ||
          (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s: line %u is not a JSON object", resource, i + 1);
          return FALSE;
        }

      if (!line_cb (json_node_get_object (root), i + 1, user_data, error))
        return FALSE;
    }

  return TRUE;
}

typedef struct {
  TallyStore *store;
  const char *database;
  const char *workspace;
  guint       msg_index;
} Install;

static gboolean
append_event (JsonObject  *event,
              guint        line_no,
              gpointer     user_data,
              GError     **error)
{
  Install *install = user_data;

  if (g_strcmp0 (tally_json_object_get_string (event, "session_id", NULL), TALLY_SAMPLE_SESSION_ID) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: line %u belongs to another session", EVENTS_RESOURCE, line_no);
      return FALSE;
    }

  /* The recording's paths were taken out of the bundled log; the copy
   * gets this machine's sample database and a workspace of its own. */
  if (tally_event_get_event_type (event) == TALLY_EVENT_SESSION_CREATED)
    {
      json_object_set_string_member (event, "title", _("Sample: Two Beanline Stores by Month"));
      json_object_set_string_member (event, "database", install->database);
      json_object_set_string_member (event, "workspace", install->workspace);
    }

  return tally_store_append_event (install->store, event, error);
}

static gboolean
save_message (JsonObject  *message,
              guint        line_no,
              gpointer     user_data,
              GError     **error)
{
  Install *install = user_data;
  g_autoptr(GPtrArray) blocks = g_ptr_array_new ();
  JsonArray *array = tally_json_object_get_array (message, "blocks");

  for (guint i = 0; array != NULL && i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);

      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
        break;
      g_ptr_array_add (blocks, (gpointer) json_node_get_string (node));
    }

  if (array == NULL || blocks->len == 0 || blocks->len != json_array_get_length (array))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: line %u has no list of block texts", MESSAGES_RESOURCE, line_no);
      return FALSE;
    }

  return tally_store_save_message (install->store, TALLY_SAMPLE_SESSION_ID, install->msg_index++,
                                   tally_json_object_get_string (message, "role", ""),
                                   blocks, error);
}

/* The chart's files (SVG and PNG, as create_chart wrote them in the
 * recording) go into the copy's workspace, so its file chips open them. A
 * file already there is kept. */
static gboolean
write_charts (const char  *workspace,
              GError     **error)
{
  g_autofree char *dir = g_build_filename (workspace, "charts", NULL);
  g_auto(GStrv) names = NULL;

  names = g_resources_enumerate_children (CHARTS_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, error);
  if (names == NULL)
    return FALSE;

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "%s: %s", dir, g_strerror (saved_errno));
      return FALSE;
    }

  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autofree char *resource = g_strconcat (CHARTS_RESOURCE "/", names[i], NULL);
      g_autofree char *path = g_build_filename (dir, names[i], NULL);
      g_autoptr(GBytes) bytes = NULL;

      if (g_file_test (path, G_FILE_TEST_EXISTS))
        continue;
      bytes = g_resources_lookup_data (resource, G_RESOURCE_LOOKUP_FLAGS_NONE, error);
      if (bytes == NULL ||
          !g_file_set_contents (path, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), error))
        return FALSE;
    }

  return TRUE;
}

/**
 * tally_sample_session_install:
 * @store: the session store
 * @database: the Beanline sample database the copy names (a path)
 * @workspace: the workspace folder the copy names (a path; not created)
 * @error: return location for a #GError
 *
 * Copies the bundled sample session into @store as the session
 * %TALLY_SAMPLE_SESSION_ID, its events and its API conversation, and
 * waits until they are written; the chart files it made go into
 * @workspace/charts (made if missing; files already there are kept).
 * Nothing is written to the store when it already holds a session with
 * that id (the analyst's copy, perhaps continued, is kept as it is). The
 * bundled files are only read.
 *
 * Returns: %TRUE when the store holds the sample session; %FALSE with
 *   @error set: %TALLY_STORE_ERROR_READ_ONLY (the store cannot be
 *   written), another %TALLY_STORE_ERROR from writing, a %G_IO_ERROR
 *   from writing the chart files, or %G_IO_ERROR_INVALID_DATA when a bundled line is damaged (what was
 *   copied is removed again)
 */
gboolean
tally_sample_session_install (TallyStore  *store,
                              const char  *database,
                              const char  *workspace,
                              GError     **error)
{
  g_autoptr(TallySessionInfo) info = NULL;
  g_autoptr(GError) local_error = NULL;
  Install install = { store, database, workspace, 0 };

  g_return_val_if_fail (TALLY_IS_STORE (store), FALSE);
  g_return_val_if_fail (database != NULL, FALSE);
  g_return_val_if_fail (workspace != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!write_charts (workspace, error))
    return FALSE;

  info = tally_store_find_session (store, TALLY_SAMPLE_SESSION_ID, &local_error);
  if (info != NULL)
    return TRUE;
  if (!g_error_matches (local_error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  if (tally_store_is_read_only (store))
    {
      const char *reason = tally_store_get_read_only_reason (store);

      g_set_error (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_READ_ONLY, "%s",
                   reason != NULL ? reason : _("The session store is read-only"));
      return FALSE;
    }

  if (!for_each_line (EVENTS_RESOURCE, append_event, &install, error) ||
      !for_each_line (MESSAGES_RESOURCE, save_message, &install, error))
    {
      /* No half copy stays behind: a later try starts again. */
      if (tally_store_flush (store, NULL))
        tally_store_delete_session (store, TALLY_SAMPLE_SESSION_ID, NULL);
      return FALSE;
    }

  return tally_store_flush (store, error);
}
