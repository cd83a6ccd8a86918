/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-store"

#include "config.h"

#include "tally-store-private.h"

/*
 * The _async variants of the reads: each runs its synchronous read in a
 * GTask thread through one thread function, read_thread(), which returns
 * the read's pointer result or its error.
 */

typedef enum {
  READ_LIST_SESSIONS,
  READ_LOAD_EVENTS,
  READ_SEARCH,
} ReadKind;

typedef struct {
  ReadKind   kind;
  char      *session_id;
  char      *text;
  GPtrArray *warnings;
} ReadData;

static void
read_data_free (gpointer data)
{
  ReadData *read = data;

  g_free (read->session_id);
  g_free (read->text);
  g_clear_pointer (&read->warnings, g_ptr_array_unref);
  g_free (read);
}

static void
read_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  TallyStore *self = source_object;
  ReadData *read = task_data;
  GDestroyNotify result_free = (GDestroyNotify)g_ptr_array_unref;
  GError *error = NULL;
  gpointer result = NULL;

  g_assert (TALLY_IS_STORE (self));
  g_assert (read != NULL);

  if (g_task_return_error_if_cancelled (task))
    return;

  switch (read->kind)
    {
    case READ_LIST_SESSIONS:
      result = tally_store_list_sessions (self, &error);
      break;
    case READ_LOAD_EVENTS:
      result = tally_store_load_events (self, read->session_id, &read->warnings, &error);
      break;
    case READ_SEARCH:
      result = tally_store_search_cancellable (self, read->text, cancellable, &error);
      break;
    default:
      g_assert_not_reached ();
    }

  if (result == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, result, result_free);
}

/* Runs the read @kind of @session_id or @text in a worker thread */
static void
read_in_thread (TallyStore          *self,
                ReadKind             kind,
                gpointer             source_tag,
                const char          *session_id,
                const char          *text,
                GCancellable        *cancellable,
                GAsyncReadyCallback  callback,
                gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  ReadData *read = g_new0 (ReadData, 1);

  read->kind = kind;
  read->session_id = g_strdup (session_id);
  read->text = g_strdup (text);
  g_task_set_source_tag (task, source_tag);
  g_task_set_task_data (task, read, read_data_free);
  g_task_run_in_thread (task, read_thread);
}

/* The pointer a read of @source_tag returned, or its error */
static gpointer
read_finish (TallyStore    *self,
             GAsyncResult  *result,
             gpointer       source_tag,
             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == source_tag, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * tally_store_list_sessions_async:
 * @self: a #TallyStore
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the calling thread's main context when done
 * @user_data: data for @callback
 *
 * Runs tally_store_list_sessions() in a worker thread.
 */
void
tally_store_list_sessions_async (TallyStore          *self,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_return_if_fail (TALLY_IS_STORE (self));

  read_in_thread (self, READ_LIST_SESSIONS, tally_store_list_sessions_async, NULL, NULL,
                  cancellable, callback, user_data);
}

/**
 * tally_store_list_sessions_finish:
 * @self: a #TallyStore
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type TallySessionInfo) (nullable):
 *   as tally_store_list_sessions(); %NULL with an error (also
 *   %G_IO_ERROR_CANCELLED)
 */
GPtrArray *
tally_store_list_sessions_finish (TallyStore    *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  return read_finish (self, result, tally_store_list_sessions_async, error);
}

/**
 * tally_store_load_events_async:
 * @self: a #TallyStore
 * @session_id: the session's full id
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the calling thread's main context when done
 * @user_data: data for @callback
 *
 * Runs tally_store_load_events() in a worker thread.
 */
void
tally_store_load_events_async (TallyStore          *self,
                               const char          *session_id,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (TALLY_IS_STORE (self));
  g_return_if_fail (session_id != NULL);

  read_in_thread (self, READ_LOAD_EVENTS, tally_store_load_events_async, session_id, NULL,
                  cancellable, callback, user_data);
}

/**
 * tally_store_load_events_finish:
 * @self: a #TallyStore
 * @result: the #GAsyncResult given to the callback
 * @warnings: (out) (optional) (transfer container) (element-type utf8):
 *   the damaged-row warnings, as for tally_store_load_events()
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type JsonObject) (nullable): as
 *   tally_store_load_events(); %NULL with an error
 */
GPtrArray *
tally_store_load_events_finish (TallyStore    *self,
                                GAsyncResult  *result,
                                GPtrArray    **warnings,
                                GError       **error)
{
  GPtrArray *events = read_finish (self, result, tally_store_load_events_async, error);
  ReadData *read;

  if (events != NULL && warnings != NULL)
    {
      read = g_task_get_task_data (G_TASK (result));
      *warnings = read->warnings != NULL ? g_steal_pointer (&read->warnings)
                                         : g_ptr_array_new_with_free_func (g_free);
    }
  return events;
}

/**
 * tally_store_search_async:
 * @self: a #TallyStore
 * @text: what the user typed
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the calling thread's main context when done
 * @user_data: data for @callback
 *
 * Runs tally_store_search_cancellable() in a worker thread: cancelling
 * @cancellable interrupts the search even while it runs.
 */
void
tally_store_search_async (TallyStore          *self,
                          const char          *text,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_return_if_fail (TALLY_IS_STORE (self));
  g_return_if_fail (text != NULL);

  read_in_thread (self, READ_SEARCH, tally_store_search_async, NULL, text,
                  cancellable, callback, user_data);
}

/**
 * tally_store_search_finish:
 * @self: a #TallyStore
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type TallySessionInfo) (nullable):
 *   as tally_store_search(); %NULL with an error (also
 *   %G_IO_ERROR_CANCELLED)
 */
GPtrArray *
tally_store_search_finish (TallyStore    *self,
                           GAsyncResult  *result,
                           GError       **error)
{
  return read_finish (self, result, tally_store_search_async, error);
}
