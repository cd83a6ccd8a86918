/* SPDX-License-Identifier: GPL-3.0-or-later */

/* SSE decode + accumulate, side by side with the TypeScript SDK (issue 15):
 * the same generated stream (tests/bench/sdk/gen_sse.py, 52.5 MB for seed
 * 1) goes through TallyMessageStream with its fast path, through it with
 * the json-glib path only, and through the SDK's `memfetch` path
 * (tests/bench/sdk/sdk_bench.mjs: client.messages.stream(…).finalMessage()
 * over an in-memory body), run alternately in 5 rounds. Each path is fed
 * 64 KiB pieces, as the SDK driver's body is. Prints MB/s (10^6 bytes per
 * second) of each run, the ratios per round and their medians.
 *
 * The SDK is installed into a temporary folder with `npm install
 * @anthropic-ai/sdk` (or taken from TALLY_BENCH_SDK_INSTALL, a folder whose
 * node_modules holds it); without node or npm, or when the install fails,
 * its runs are skipped with a message and Tally's figures are still
 * printed. TALLY_BENCH_SSE_FILE names an existing stream to use instead of
 * generating one.
 *
 * Prints figures only; it checks that both Tally paths give the same
 * result, never speed. */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "tally-message-stream-private.h"
#include "tally-test-stream.h"
#include "tally-test-util.h"

#define CHUNK_SIZE 65536
#define N_ROUNDS   5

typedef struct {
  double   seconds;
  guint    n_blocks;
  guint64  text_bytes;
  guint64  delta_bytes;
  char    *content;
} TallyRun;

static void
tally_run_clear (TallyRun *run)
{
  g_clear_pointer (&run->content, g_free);
}

/* Feeds the whole body to a new stream, as the client does, with a
 * listener on the delta signals as the agent has. */
static void
run_tally (GBytes   *body,
           gboolean  fast_path,
           TallyRun *run)
{
  g_autoptr(TallyMessageStream) stream = tally_message_stream_new ();
  g_autoptr(GPtrArray) content = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) all = g_string_new (NULL);
  gsize size;
  const guint8 *data = g_bytes_get_data (body, &size);
  gint64 start;

  _tally_message_stream_set_fast_path (stream, fast_path);
  run->delta_bytes = 0;
  tally_test_stream_count_delta_bytes (stream, &run->delta_bytes);

  start = g_get_monotonic_time ();
  tally_message_stream_begin_attempt (stream, 1);
  for (gsize offset = 0; offset < size; offset += CHUNK_SIZE)
    tally_message_stream_feed (stream, data + offset, MIN (CHUNK_SIZE, size - offset));
  if (!tally_message_stream_end_of_input (stream, &error))
    g_error ("the %s path failed: %s", fast_path ? "fast" : "json-glib", error->message);
  run->seconds = (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;

  /* The result, outside the timed part. */
  run->n_blocks = tally_message_stream_get_n_blocks (stream);
  content = tally_message_stream_dup_content (stream);
  run->text_bytes = 0;
  for (guint i = 0; i < content->len; i++)
    {
      const char *json = g_ptr_array_index (content, i);

      run->text_bytes += strlen (json);
      g_string_append (all, json);
      g_string_append_c (all, '\n');
    }
  g_free (run->content);
  run->content = g_string_free (g_steal_pointer (&all), FALSE);
}

/* Runs @argv in @cwd; returns its stdout, or NULL with a reason in @why. */
static char *
run_program (const char * const  *argv,
             const char          *cwd,
             char               **why)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status;

  if (!g_spawn_sync (cwd, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                     &out, &err, &status, &error))
    {
      *why = g_strdup (error->message);
      return NULL;
    }
  if (!g_spawn_check_wait_status (status, &error))
    {
      g_strstrip (err);
      *why = g_strdup_printf ("%s: %s%s%.300s", argv[0], error->message, err[0] ? ": " : "", err);
      return NULL;
    }

  return g_steal_pointer (&out);
}

/* Installs the SDK into @work/sdk; returns the folder to run the driver
 * in, or NULL with the reason in @why. */
static char *
prepare_sdk (const char  *work,
             char       **why)
{
  g_autofree char *node = g_find_program_in_path ("node");
  g_autofree char *npm = g_find_program_in_path ("npm");
  g_autofree char *driver = g_build_filename (TALLY_BENCH_SDK_DIR, "sdk_bench.mjs", NULL);
  g_autofree char *driver_copy = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  const char *given = g_getenv ("TALLY_BENCH_SDK_INSTALL");
  g_autofree char *dir = NULL;
  gsize len;

  if (node == NULL)
    {
      *why = g_strdup ("node is not installed");
      return NULL;
    }

  if (given != NULL && given[0] != '\0')
    {
      dir = g_strdup (given);
    }
  else
    {
      const char *install[] = { "npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                                "@anthropic-ai/sdk", NULL };

      if (npm == NULL)
        {
          *why = g_strdup ("npm is not installed");
          return NULL;
        }
      dir = g_build_filename (work, "sdk", NULL);
      g_mkdir_with_parents (dir, 0700);
      g_print ("installing the SDK: npm install @anthropic-ai/sdk (into %s)\n", dir);
      out = run_program (install, dir, why);
      if (out == NULL)
        return NULL;
    }

  /* The driver imports the SDK from the folder it lies in. */
  if (!g_file_get_contents (driver, &contents, &len, &error))
    {
      *why = g_strdup (error->message);
      return NULL;
    }
  driver_copy = g_build_filename (dir, "sdk_bench.mjs", NULL);
  if (!g_file_set_contents (driver_copy, contents, len, &error))
    {
      *why = g_strdup (error->message);
      return NULL;
    }

  return g_steal_pointer (&dir);
}

/* One run of the SDK driver (2 reps in one node process); the second rep,
 * with the JIT warm, is the figure, as Tally's runs are also warm. Returns
 * MB/s, or a negative number with @why set. */
static double
run_sdk (const char  *sdk_dir,
         const char  *file,
         guint       *n_blocks,
         char       **why)
{
  const char *argv[] = { "node", "sdk_bench.mjs", "--file", file, "--modes", "memfetch", "--reps", "2", NULL };
  g_autofree char *out = run_program (argv, sdk_dir, why);
  g_auto(GStrv) lines = NULL;
  double mbps = -1;

  if (out == NULL)
    return -1;

  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonObject *object;

      if (lines[i][0] != '{' || !json_parser_load_from_data (parser, lines[i], -1, NULL))
        continue;
      object = json_node_get_object (json_parser_get_root (parser));
      if (g_strcmp0 (json_object_get_string_member_with_default (object, "mode", ""), "memfetch") != 0)
        continue;
      mbps = json_object_get_double_member_with_default (object, "MBps", -1);
      *n_blocks = json_object_get_int_member_with_default (object, "blocks", 0);
    }

  if (mbps < 0)
    *why = g_strdup_printf ("no memfetch figure in the driver's output: %.300s", out);
  return mbps;
}

/* Writes the anchor stream with the kit's generator; returns its path. */
static char *
generate_stream (const char *work)
{
  g_autofree char *python = g_find_program_in_path ("python3");
  g_autofree char *script = g_build_filename (TALLY_BENCH_SDK_DIR, "gen_sse.py", NULL);
  g_autofree char *path = g_build_filename (work, "anchor.sse", NULL);
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "python3", script, path, "--mb", "50", "--seed", "1", NULL };
  int status;

  if (python == NULL)
    g_error ("python3 is needed to generate the stream (or set TALLY_BENCH_SSE_FILE)");

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, &err, &status, &error);
  g_assert_no_error (error);
  g_spawn_check_wait_status (status, &error);
  g_assert_no_error (error);
  g_print ("generator: %s", err);

  return g_steal_pointer (&path);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *work = NULL;
  g_autofree char *file = NULL;
  g_autofree char *sdk_dir = NULL;
  g_autofree char *skip = NULL;
  g_autoptr(GBytes) body = NULL;
  g_autoptr(GError) error = NULL;
  TallyRun fast = { 0 };
  TallyRun json_glib = { 0 };
  double fast_mbps[N_ROUNDS], json_glib_mbps[N_ROUNDS], sdk_mbps[N_ROUNDS];
  double fast_ratio[N_ROUNDS], json_glib_ratio[N_ROUNDS], fast_over_json_glib[N_ROUNDS];
  gboolean identical;
  char *contents;
  gsize size;
  guint n_sdk = 0;

  work = g_dir_make_tmp ("tally-bench-sse-XXXXXX", &error);
  g_assert_no_error (error);

  if (g_getenv ("TALLY_BENCH_SSE_FILE") != NULL)
    file = g_strdup (g_getenv ("TALLY_BENCH_SSE_FILE"));
  else
    file = generate_stream (work);

  g_file_get_contents (file, &contents, &size, &error);
  g_assert_no_error (error);
  body = g_bytes_new_take (contents, size);
  g_print ("stream: %s, %" G_GSIZE_FORMAT " bytes (%.1f MB)\n", file, size, size / 1e6);

  /* The check: both paths give the same blocks and the same content. */
  run_tally (body, TRUE, &fast);
  run_tally (body, FALSE, &json_glib);
  identical = fast.n_blocks == json_glib.n_blocks && fast.text_bytes == json_glib.text_bytes &&
              fast.delta_bytes == json_glib.delta_bytes && g_str_equal (fast.content, json_glib.content);
  g_print ("check: fast path %u blocks, %" G_GUINT64_FORMAT " content bytes, %" G_GUINT64_FORMAT
           " delta bytes; json-glib path %u blocks, %" G_GUINT64_FORMAT " content bytes, %" G_GUINT64_FORMAT
           " delta bytes; content %s\n",
           fast.n_blocks, fast.text_bytes, fast.delta_bytes,
           json_glib.n_blocks, json_glib.text_bytes, json_glib.delta_bytes,
           identical ? "identical" : "DIFFERENT");
  if (!identical)
    g_error ("the fast path's result differs from the json-glib path's");

  sdk_dir = prepare_sdk (work, &skip);
  if (sdk_dir == NULL)
    g_print ("skipped: the TypeScript SDK runs (%s)\n", skip);

  g_print ("%-6s %12s %12s %12s %10s %10s %10s\n", "round", "fast MB/s", "json-glib", "SDK MB/s",
           "fast/SDK", "glib/SDK", "fast/glib");
  for (guint round = 0; round < N_ROUNDS; round++)
    {
      double sdk = -1;

      run_tally (body, TRUE, &fast);
      run_tally (body, FALSE, &json_glib);
      fast_mbps[round] = size / 1e6 / fast.seconds;
      json_glib_mbps[round] = size / 1e6 / json_glib.seconds;
      fast_over_json_glib[round] = fast_mbps[round] / json_glib_mbps[round];

      if (sdk_dir != NULL)
        {
          g_autofree char *why = NULL;
          guint sdk_blocks = 0;

          sdk = run_sdk (sdk_dir, file, &sdk_blocks, &why);
          if (sdk < 0)
            {
              g_print ("skipped: the TypeScript SDK run failed (%s)\n", why);
              g_clear_pointer (&sdk_dir, g_free);
            }
          else if (sdk_blocks != fast.n_blocks)
            {
              g_print ("note: the SDK reported %u blocks, Tally %u\n", sdk_blocks, fast.n_blocks);
            }
        }

      if (sdk > 0)
        {
          sdk_mbps[n_sdk] = sdk;
          fast_ratio[n_sdk] = fast_mbps[round] / sdk;
          json_glib_ratio[n_sdk] = json_glib_mbps[round] / sdk;
          n_sdk++;
          g_print ("%-6u %12.1f %12.1f %12.1f %9.2fx %9.2fx %9.2fx\n", round + 1, fast_mbps[round],
                   json_glib_mbps[round], sdk, fast_mbps[round] / sdk, json_glib_mbps[round] / sdk,
                   fast_over_json_glib[round]);
        }
      else
        {
          g_print ("%-6u %12.1f %12.1f %12s %10s %10s %9.2fx\n", round + 1, fast_mbps[round],
                   json_glib_mbps[round], "-", "-", "-", fast_over_json_glib[round]);
        }
    }

  g_print ("median: fast path %.1f MB/s, json-glib path %.1f MB/s, fast/json-glib %.2fx\n",
           tally_test_median (fast_mbps, N_ROUNDS), tally_test_median (json_glib_mbps, N_ROUNDS),
           tally_test_median (fast_over_json_glib, N_ROUNDS));
  if (n_sdk > 0)
    g_print ("median: SDK memfetch %.1f MB/s, fast/SDK %.2fx (goal >= 5x), json-glib/SDK %.2fx (%u rounds)\n",
             tally_test_median (sdk_mbps, n_sdk), tally_test_median (fast_ratio, n_sdk), tally_test_median (json_glib_ratio, n_sdk), n_sdk);

  tally_run_clear (&fast);
  tally_run_clear (&json_glib);
  tally_test_rm_rf (work);

  return 0;
}
