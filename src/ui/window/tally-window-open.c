/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <stdio.h>

#include <glib/gi18n.h>

#include "tally-application.h"
#include "tally-store.h"
#include "tally-window-private.h"

/*
 * Opening a saved session (docs/architecture.md §11.1, "Opening a long
 * session"). The store is read, the snapshot restored and the events
 * after it replayed in a worker thread (tally_session_open_async(),
 * §3.3); the main loop keeps drawing meanwhile, and the window keeps what
 * it shows until the session is ready. One open runs at a time: a second
 * open, a new session or closing the window cancels the one under way.
 */

typedef struct {
  char     *session_id;
  gboolean  reopen;     /* the session shown, again (a new client) */
} OpenRequest;

static void
open_request_free (gpointer data)
{
  OpenRequest *request = data;

  g_free (request->session_id);
  g_free (request);
}

/* With TALLY_BENCH_OPEN_TRACE set, the open's steps on stderr with their
 * monotonic time, for the benchmark's profile of an open. */
static void
trace (const char *step,
       const char *session_id)
{
  if (g_getenv ("TALLY_BENCH_OPEN_TRACE") != NULL)
    fprintf (stderr, "open-trace %" G_GINT64_FORMAT " us %s %s\n", g_get_monotonic_time (), step, session_id);
}

static void
session_frame_cb (GdkFrameClock *clock,
                  gpointer       user_data)
{
  g_signal_handlers_disconnect_by_func (clock, session_frame_cb, user_data);
  trace ("frame painted", "");
  printf ("session-frame-at-us %" G_GINT64_FORMAT "\n", g_get_monotonic_time ());
  fflush (stdout);
}

static void
watch_session_frame (TallyWindow *self)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (self));

  g_signal_handlers_disconnect_by_func (self, watch_session_frame, NULL);
  if (clock != NULL)
    g_signal_connect (clock, "after-paint", G_CALLBACK (session_frame_cb), NULL);
}

/* The benchmark's mark (tests/bench/bench-app-open.c): with
 * TALLY_BENCH_FIRST_FRAME set, the first frame painted after an opened
 * session is shown prints its monotonic time, as
 * tally_bench_first_frame_watch() does for the window's first frame; a
 * window not mapped yet has no frame clock, so it waits for its map. */
static void
mark_session_frame (TallyWindow *self)
{
  if (g_getenv ("TALLY_BENCH_FIRST_FRAME") == NULL)
    return;
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    watch_session_frame (self);
  else
    g_signal_connect (self, "map", G_CALLBACK (watch_session_frame), NULL);
}

static void
session_opened_cb (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TallyWindow *self = g_task_get_source_object (task);
  OpenRequest *request = g_task_get_task_data (task);
  GCancellable *cancellable = g_task_get_cancellable (task);
  g_autoptr(GError) error = NULL;
  TallySession *session;

  g_assert (TALLY_IS_WINDOW (self));

  session = tally_session_open_finish (result, &error);
  trace ("read", request->session_id);
  /* This open is over; a later one may have taken its place. */
  if (self->open_cancellable == cancellable)
    {
      g_clear_object (&self->open_cancellable);
      g_clear_pointer (&self->opening_id, g_free);
    }

  if (session != NULL && (self->closed || g_cancellable_is_cancelled (cancellable)))
    {
      g_object_unref (session);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The open was cancelled");
      return;
    }
  if (session == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) && !self->closed)
        {
          g_autofree char *message = NULL;

          if (request->reopen)
            g_debug ("Could not reopen session %s for the new base URL: %s", request->session_id, error->message);
          else
            {
              if (g_error_matches (error, TALLY_STORE_ERROR, TALLY_STORE_ERROR_NOT_FOUND))
                message = g_strdup_printf (_("No saved session matches “%s”"), request->session_id);
              else
                message = g_strdup_printf (_("Could not open the session: %s"), error->message);
              tally_window_add_toast (self, message);
              g_debug ("%s", message);
            }
        }
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  _tally_window_show_opened (self, session, request->reopen);
  trace ("shown", request->session_id);
  mark_session_frame (self);
  g_task_return_boolean (task, TRUE);
}

/* The open of @session_id as @self's one open under way, under
 * @cancellable (the open's own): any earlier open is cancelled. The
 * task (on @self) completes when the session is shown, the open failed
 * or it was cancelled. */
static GTask *
new_open_task (TallyWindow         *self,
               const char          *session_id,
               gboolean             reopen,
               GCancellable        *cancellable,
               GAsyncReadyCallback  callback,
               gpointer             user_data)
{
  OpenRequest *request;
  GTask *task;

  _tally_window_cancel_open (self);
  self->open_cancellable = g_object_ref (cancellable);
  self->opening_id = g_strdup (session_id);

  /* Completed by hand: a session read before the cancel is dropped in
   * session_opened_cb(), not by GTask. */
  task = g_task_new (self, self->open_cancellable, callback, user_data);
  g_task_set_source_tag (task, tally_window_open_session_async);
  g_task_set_check_cancellable (task, FALSE);
  request = g_new0 (OpenRequest, 1);
  request->session_id = g_strdup (session_id);
  request->reopen = reopen;
  g_task_set_task_data (task, request, open_request_free);

  return task;
}

/* Fails an open for want of a store, with a toast unless @reopen. */
static void
report_no_store (TallyWindow         *self,
                 gboolean             reopen,
                 GAsyncReadyCallback  callback,
                 gpointer             user_data)
{
  const char *problem = tally_application_get_store_problem (self->app);

  if (!reopen)
    tally_window_add_toast (self, problem);
  g_task_report_new_error (self, callback, user_data, tally_window_open_session_async,
                           TALLY_STORE_ERROR, TALLY_STORE_ERROR_IO, "%s", problem);
}

/* Starts opening @session_id; the task (on @self) completes when it is
 * shown, failed or was cancelled. */
static void
start_open (TallyWindow         *self,
            const char          *session_id,
            gboolean             reopen,
            GAsyncReadyCallback  callback,
            gpointer             user_data)
{
  TallyStore *store = tally_application_get_store (self->app);
  g_autoptr(GCancellable) cancellable = NULL;
  GTask *task;

  if (store == NULL)
    {
      report_no_store (self, reopen, callback, user_data);
      return;
    }

  cancellable = g_cancellable_new ();
  task = new_open_task (self, session_id, reopen, cancellable, callback, user_data);
  trace ("start", session_id);
  tally_session_open_async (store, session_id, tally_application_get_client (self->app),
                            tally_application_get_tools (self->app), cancellable,
                            session_opened_cb, task);
}

/* A read started before its window was built (tally --session): the
 * read's result until a window takes it, or the window's open until the
 * read is done. Freed by whichever comes second. */
struct _TallyWindowPrefetch
{
  char         *session_id;
  GCancellable *cancellable;
  GAsyncResult *result;   /* the read's, when it finished first */
  GTask        *task;     /* the window's open, when it was taken first */
};

static void
prefetch_free (TallyWindowPrefetch *prefetch)
{
  g_free (prefetch->session_id);
  g_clear_object (&prefetch->cancellable);
  g_clear_object (&prefetch->result);
  g_free (prefetch);
}

static void
prefetch_read_cb (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  TallyWindowPrefetch *prefetch = user_data;

  g_assert (G_IS_ASYNC_RESULT (result));

  if (prefetch->task == NULL)
    {
      prefetch->result = g_object_ref (result);
      return;
    }
  session_opened_cb (object, result, g_steal_pointer (&prefetch->task));
  prefetch_free (prefetch);
}

/**
 * _tally_window_prefetch_session:
 * @app: the application
 * @session_id: a saved session's id, or a unique prefix of it
 *
 * Starts reading @session_id from @app's store in a worker thread, as
 * tally_window_open_session_async() does, before there is a window to
 * show it: `tally --session` builds its window meanwhile, and a read
 * done before the window's first frame is shown in that frame
 * (docs/architecture.md §11.1). Hand the result to
 * _tally_window_open_prefetched_async(), at once: until then the
 * session read is held, and with it the session's writer lock.
 *
 * Returns: (transfer full) (nullable): the read under way, or %NULL
 *   without a store (then open with tally_window_open_session_async(),
 *   which says why)
 */
TallyWindowPrefetch *
_tally_window_prefetch_session (TallyApplication *app,
                                const char       *session_id)
{
  TallyStore *store;
  TallyWindowPrefetch *prefetch;

  g_return_val_if_fail (TALLY_IS_APPLICATION (app), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  store = tally_application_get_store (app);
  if (store == NULL)
    return NULL;

  prefetch = g_new0 (TallyWindowPrefetch, 1);
  prefetch->session_id = g_strdup (session_id);
  prefetch->cancellable = g_cancellable_new ();
  trace ("start", session_id);
  tally_session_open_async (store, session_id, tally_application_get_client (app),
                            tally_application_get_tools (app), prefetch->cancellable,
                            prefetch_read_cb, prefetch);
  return prefetch;
}

/**
 * _tally_window_open_prefetched_async:
 * @self: a #TallyWindow
 * @prefetch: (transfer full): what _tally_window_prefetch_session() returned
 * @callback: (nullable): as for tally_window_open_session_async()
 * @user_data: data for @callback
 *
 * tally_window_open_session_async() for a session whose read
 * _tally_window_prefetch_session() started: @self shows it when it is
 * read (at once when it is read already), and a later open, a new
 * session or closing @self cancels it, as for any open. Finish with
 * tally_window_open_session_finish().
 */
void
_tally_window_open_prefetched_async (TallyWindow         *self,
                                     TallyWindowPrefetch *prefetch,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (TALLY_IS_WINDOW (self));
  g_return_if_fail (prefetch != NULL && prefetch->task == NULL);

  task = new_open_task (self, prefetch->session_id, FALSE, prefetch->cancellable, callback, user_data);
  if (prefetch->result == NULL)
    {
      prefetch->task = task;
      return;
    }
  session_opened_cb (NULL, prefetch->result, task);
  prefetch_free (prefetch);
}

/**
 * tally_window_open_session_async:
 * @self: a #TallyWindow
 * @session_id: a saved session's id, or a unique prefix of it
 * @callback: (nullable): called on the main context when the session is
 *   shown, the open failed or it was cancelled
 * @user_data: data for @callback
 *
 * Opens a saved session from the store, offline (no request is made),
 * without blocking the main loop: its snapshot and the events after it
 * are read and replayed in a worker thread (docs/architecture.md §3.3),
 * then the session is shown. A turn running in the session shown before
 * is cancelled when the new one is shown. On failure a toast says why and
 * the window keeps what it showed. A later open, a new session or closing
 * the window cancels this one. Asking for the session already shown (or
 * already being opened) completes at once.
 *
 * Finish with tally_window_open_session_finish().
 */
void
tally_window_open_session_async (TallyWindow         *self,
                                 const char          *session_id,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_return_if_fail (TALLY_IS_WINDOW (self));
  g_return_if_fail (session_id != NULL);

  if ((self->session != NULL && g_str_equal (tally_session_get_id (self->session), session_id) &&
       self->open_cancellable == NULL) ||
      g_strcmp0 (self->opening_id, session_id) == 0)
    {
      g_autoptr(GTask) task = g_task_new (self, NULL, callback, user_data);

      g_task_set_source_tag (task, tally_window_open_session_async);
      g_task_return_boolean (task, TRUE);
      return;
    }

  start_open (self, session_id, FALSE, callback, user_data);
}

/**
 * tally_window_open_session_finish:
 * @self: a #TallyWindow
 * @result: the result passed to the callback
 * @error: return location for a #GError
 *
 * Returns: %TRUE when the session is shown (or was being opened by an
 *   earlier call); %FALSE with @error: %G_IO_ERROR_CANCELLED when a later
 *   open, a new session or closing the window cancelled it,
 *   %TALLY_STORE_ERROR_IO without a store (its problem as the message),
 *   otherwise as for
 *   tally_session_open() (%TALLY_STORE_ERROR_NOT_FOUND, …)
 */
gboolean
tally_window_open_session_finish (TallyWindow   *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  g_return_val_if_fail (TALLY_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == tally_window_open_session_async, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * tally_window_open_session:
 * @self: a #TallyWindow
 * @session_id: a saved session's id, or a unique prefix of it
 *
 * tally_window_open_session_async() without a callback: the session is
 * shown when it has been read, and a failure is told in a toast.
 *
 * Returns: %FALSE when there is no store to open it from (a toast says
 *   why); %TRUE when the open is under way or the session is shown
 */
gboolean
tally_window_open_session (TallyWindow *self,
                           const char  *session_id)
{
  g_return_val_if_fail (TALLY_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);

  if (tally_application_get_store (self->app) == NULL)
    {
      tally_window_add_toast (self, tally_application_get_store_problem (self->app));
      return FALSE;
    }
  tally_window_open_session_async (self, session_id, NULL, NULL);
  return TRUE;
}

/**
 * _tally_window_reopen_session:
 * @self: a #TallyWindow
 *
 * Opens the session shown again from the store (a new client, a new base
 * URL), in the background; the window shows it again when it is read.
 */
void
_tally_window_reopen_session (TallyWindow *self)
{
  g_autofree char *id = NULL;

  g_assert (TALLY_IS_WINDOW (self));

  if (self->session == NULL || tally_application_get_store (self->app) == NULL)
    return;
  id = g_strdup (tally_session_get_id (self->session));
  start_open (self, id, TRUE, NULL, NULL);
}

/**
 * _tally_window_cancel_open:
 * @self: a #TallyWindow
 *
 * Cancels the open under way, if any: the window keeps what it shows.
 */
void
_tally_window_cancel_open (TallyWindow *self)
{
  g_assert (TALLY_IS_WINDOW (self));

  if (self->open_cancellable != NULL)
    g_cancellable_cancel (self->open_cancellable);
  g_clear_object (&self->open_cancellable);
  g_clear_pointer (&self->opening_id, g_free);
}

/**
 * _tally_window_is_opening:
 * @self: a #TallyWindow
 *
 * Returns: %TRUE while a saved session is being opened (tests)
 */
gboolean
_tally_window_is_opening (TallyWindow *self)
{
  g_return_val_if_fail (TALLY_IS_WINDOW (self), FALSE);
  return self->open_cancellable != NULL;
}
