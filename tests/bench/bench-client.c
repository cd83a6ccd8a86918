/* SPDX-License-Identifier: GPL-3.0-or-later */

/* bench-client: latency of TallyClient against the mock Messages API
 * answering at once, on one client (so connections are reused).
 *
 * For each of N requests carrying a one-block message it measures, from
 * the tally_client_stream_async() call:
 *   - headers:   until the response headers arrived (taken from the
 *                client's debug line logged at that moment);
 *   - first:     until the first event was decoded (message-started);
 *   - complete:  until the callback ran with the whole message.
 * Then the total time of a sequence of three calls, as one agent turn with
 * two tool rounds makes. It prints figures and asserts nothing about them.
 *
 * Usage: bench-client [N_REQUESTS] (default 200)
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gio/gio.h>

#include "tally-client.h"
#include "tally-message-stream.h"
#include "tally-test-mock.h"

#define BODY "{\"model\":\"claude-sonnet-5\",\"max_tokens\":256,\"stream\":true," \
             "\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}]}"

typedef struct {
  GMainLoop *loop;
  gint64     start_us;
  gint64     headers_us;
  gint64     first_us;
  gint64     done_us;
  gboolean   ok;
} Sample;

static Sample *current;

/* The client logs "Attempt N: HTTP S, request-id R" when the response
 * headers arrive; that moment is the header time. Everything else is
 * dropped, so the figures are not disturbed by terminal output. */
static GLogWriterOutput
writer_cb (GLogLevelFlags   level,
           const GLogField *fields,
           gsize            n_fields,
           gpointer         user_data)
{
  if (current == NULL || current->headers_us != 0)
    return G_LOG_WRITER_HANDLED;

  for (gsize i = 0; i < n_fields; i++)
    {
      if (g_str_equal (fields[i].key, "MESSAGE") && fields[i].length < 0 &&
          g_str_has_prefix (fields[i].value, "Attempt ") &&
          strstr (fields[i].value, ": HTTP ") != NULL)
        {
          current->headers_us = g_get_monotonic_time ();
          break;
        }
    }

  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    return g_log_writer_standard_streams (level, fields, n_fields, user_data);

  return G_LOG_WRITER_HANDLED;
}

static void
message_started_cb (TallyMessageStream *stream,
                    Sample             *sample)
{
  if (sample->first_us == 0)
    sample->first_us = g_get_monotonic_time ();
}

static void
done_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Sample *sample = user_data;
  g_autoptr (GError) error = NULL;

  sample->done_us = g_get_monotonic_time ();
  sample->ok = tally_client_stream_finish (TALLY_CLIENT (object), result, &error);
  if (error != NULL)
    g_printerr ("request failed: %s\n", error->message);
  g_main_loop_quit (sample->loop);
}

static void
run_one (TallyClient *client,
         GBytes      *body,
         Sample      *sample)
{
  g_autoptr (TallyMessageStream) stream = tally_message_stream_new ();

  memset (sample, 0, sizeof *sample);
  sample->loop = g_main_loop_new (NULL, FALSE);
  g_signal_connect (stream, "message-started", G_CALLBACK (message_started_cb), sample);

  current = sample;
  sample->start_us = g_get_monotonic_time ();
  tally_client_stream_async (client, body, stream, NULL, done_cb, sample);
  g_main_loop_run (sample->loop);
  current = NULL;

  g_clear_pointer (&sample->loop, g_main_loop_unref);
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static void
print_stats (const char *label,
             GArray     *values_ms)
{
  double *v;
  guint n = values_ms->len;
  double sum = 0;

  if (n == 0)
    {
      printf ("%-26s no samples\n", label);
      return;
    }

  g_array_sort (values_ms, compare_doubles);
  v = (double *) (gpointer) values_ms->data;
  for (guint i = 0; i < n; i++)
    sum += v[i];

  printf ("%-26s median %7.3f ms   p95 %7.3f ms   min %7.3f ms   max %7.3f ms   mean %7.3f ms   (n=%u)\n",
          label, v[n / 2], v[MIN (n - 1, (guint) (n * 0.95))], v[0], v[n - 1], sum / n, n);
}

static char *
scenario_for (guint n_responses)
{
  GString *s = g_string_new ("{\"responses\":[");

  for (guint i = 0; i < n_responses; i++)
    g_string_append_printf (s, "%s{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"pong %u\"}],"
                               "\"stop_reason\":\"end_turn\",\"chunk\":100}}",
                            i > 0 ? "," : "", i);
  g_string_append (s, "]}");

  return g_string_free (s, FALSE);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr (TallyTestMock) mock = NULL;
  g_autoptr (TallyClient) client = NULL;
  g_autoptr (GBytes) body = g_bytes_new_static (BODY, strlen (BODY));
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) headers_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) first_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) done_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) seq_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *scenario = NULL;
  guint n_requests = 200;
  guint n_sequences = 30;
  guint warmup = 5;
  guint failures = 0;

  if (argc > 1)
    n_requests = (guint) CLAMP (atoi (argv[1]), 1, 100000);

  g_log_set_writer_func (writer_cb, NULL, NULL);

  scenario = scenario_for (warmup + n_requests + 3 * n_sequences);
  mock = tally_test_mock_start (scenario, &error);
  if (mock == NULL)
    {
      g_printerr ("cannot start the mock: %s\n", error->message);
      return 1;
    }

  client = tally_client_new (tally_test_mock_get_base_url (mock), "sk-bench");

  /* The first request pays for the connection; keep it out of the
   * figures, but print it. */
  for (guint i = 0; i < warmup; i++)
    {
      Sample sample;

      run_one (client, body, &sample);
      if (i == 0)
        printf ("first request (new connection): complete in %.3f ms\n",
                (sample.done_us - sample.start_us) / 1000.0);
    }

  for (guint i = 0; i < n_requests; i++)
    {
      Sample sample;
      double value;

      run_one (client, body, &sample);
      if (!sample.ok)
        {
          failures++;
          continue;
        }

      if (sample.headers_us != 0)
        {
          value = (sample.headers_us - sample.start_us) / 1000.0;
          g_array_append_val (headers_ms, value);
        }
      value = (sample.first_us - sample.start_us) / 1000.0;
      g_array_append_val (first_ms, value);
      value = (sample.done_us - sample.start_us) / 1000.0;
      g_array_append_val (done_ms, value);
    }

  for (guint i = 0; i < n_sequences; i++)
    {
      gint64 start = g_get_monotonic_time ();
      double value;

      for (guint j = 0; j < 3; j++)
        {
          Sample sample;

          run_one (client, body, &sample);
          failures += !sample.ok;
        }

      value = (g_get_monotonic_time () - start) / 1000.0;
      g_array_append_val (seq_ms, value);
    }

  printf ("bench-client: %u requests on one client against the mock (1-block message)\n", n_requests);
  print_stats ("send -> response headers", headers_ms);
  print_stats ("send -> first event", first_ms);
  print_stats ("send -> message complete", done_ms);
  print_stats ("3-call sequence, total", seq_ms);
  printf ("failed requests: %u\n", failures);

  return failures == 0 ? 0 : 1;
}
