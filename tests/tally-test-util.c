/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-test-util"

#include "config.h"

#include "tally-test-util.h"

#include <string.h>

#include <glib/gstdio.h>

#include "tally-event.h"
#include "tally-store.h"
#include "tally-test-mock.h"

/**
 * tally_test_rm_rf:
 * @path: a file or folder
 *
 * Removes @path and, for a folder, everything below it. Symbolic links are
 * removed, never followed. Missing paths and failures are ignored.
 */
void
tally_test_rm_rf (const char *path)
{
  GStatBuf st;

  if (g_lstat (path, &st) != 0)
    return;

  if (S_ISDIR (st.st_mode))
    {
      GDir *dir = g_dir_open (path, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);

          tally_test_rm_rf (child);
        }
      g_clear_pointer (&dir, g_dir_close);
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

/**
 * tally_test_write_file:
 * @dir: a folder
 * @relpath: the file's path below @dir; missing folders are made
 * @contents: the file's contents
 * @length: the length of @contents, or -1 when it ends with a NUL
 *
 * Writes a file, failing the test when it cannot.
 */
void
tally_test_write_file (const char *dir,
                       const char *relpath,
                       const char *contents,
                       gssize      length)
{
  g_autofree char *path = g_build_filename (dir, relpath, NULL);
  g_autofree char *parent = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_file_set_contents (path, contents, length, &error);
  g_assert_no_error (error);
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

/**
 * tally_test_list_sse_fixtures:
 *
 * Returns: (transfer container) (element-type utf8): the names of the
 *   recorded streams in tests/fixtures/sse (without `.sse`), sorted
 */
GPtrArray *
tally_test_list_sse_fixtures (void)
{
  g_autofree char *dir_path = g_build_filename (tally_test_data_dir (), "fixtures", "sse", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, &error);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_no_error (error);

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      if (g_str_has_suffix (name, ".sse"))
        g_ptr_array_add (names, g_strndup (name, strlen (name) - strlen (".sse")));
    }

  g_ptr_array_sort (names, compare_names);
  return names;
}

/**
 * tally_test_load_sse_fixture:
 * @name: a name from tally_test_list_sse_fixtures()
 *
 * Returns: (transfer full): the bytes of tests/fixtures/sse/@name.sse
 */
GBytes *
tally_test_load_sse_fixture (const char *name)
{
  g_autofree char *file = g_strconcat (name, ".sse", NULL);
  g_autofree char *path = g_build_filename (tally_test_data_dir (), "fixtures", "sse", file, NULL);
  g_autoptr(GError) error = NULL;
  char *contents;
  gsize len;

  g_file_get_contents (path, &contents, &len, &error);
  g_assert_no_error (error);

  return g_bytes_new_take (contents, len);
}

/**
 * tally_test_parse_object:
 * @json: JSON text that must hold an object
 *
 * Parses @json, failing the test when it is not valid JSON or not an
 * object.
 *
 * Returns: (transfer full): the object
 */
JsonObject *
tally_test_parse_object (const char *json)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;

  node = json_from_string (json, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));

  return json_object_ref (json_node_get_object (node));
}

/**
 * tally_test_peak_rss_kib:
 *
 * Reads the peak resident set size of this process so far (`VmHWM` in
 * `/proc/self/status`, proc(5)).
 *
 * Returns: the peak in KiB, or -1 when it cannot be read
 */
gint64
tally_test_peak_rss_kib (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return -1;
  line = strstr (status, "VmHWM:");
  return line != NULL ? g_ascii_strtoll (line + 6, NULL, 10) : -1;
}

/**
 * tally_test_library_mapped:
 * @prefix: the start of a shared object's file name, e.g. `"libpq.so"`
 *
 * Whether a file whose name starts with @prefix is mapped into this
 * process (`/proc/self/maps`, proc(5)).
 *
 * Returns: %TRUE when one is mapped
 */
gboolean
tally_test_library_mapped (const char *prefix)
{
  g_autofree char *maps = NULL;
  g_autofree char *needle = g_strconcat ("/", prefix, NULL);

  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  return strstr (maps, needle) != NULL;
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a;
  double y = *(const double *) b;

  return (x > y) - (x < y);
}

/**
 * tally_test_median:
 * @values: (array length=n): the figures, left unchanged
 * @n: how many (more than 0)
 *
 * Returns: the median of @values (the mean of the two middle ones for an
 *   even @n), for the benchmarks' printed figures
 */
double
tally_test_median (const double *values,
                   guint         n)
{
  g_autofree double *sorted = g_memdup2 (values, n * sizeof *values);

  g_assert (n > 0);

  qsort (sorted, n, sizeof *sorted, compare_doubles);
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* Writes a finished one-turn session (created, started, one text delta
 * saying @answer, finished) whose events are stamped @ts (µs since the
 * epoch) into the store at @store_path; returns its id. */
char *
tally_test_seed_session (const char *store_path,
                         const char *title,
                         const char *answer,
                         gint64      ts)
{
  g_autoptr(TallyStore) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *id = g_uuid_string_random ();
  JsonObject *kinds[4];
  gint64 seq = 1;

  store = tally_store_open (store_path, &error);
  g_assert_no_error (error);

  kinds[0] = tally_event_new (TALLY_EVENT_SESSION_CREATED);
  json_object_set_string_member (kinds[0], "title", title);
  json_object_set_string_member (kinds[0], "model", "claude-sonnet-5");
  kinds[1] = tally_event_new (TALLY_EVENT_TURN_STARTED);
  json_object_set_string_member (kinds[1], "mode", "ask");
  json_object_set_string_member (kinds[1], "text", title);
  kinds[2] = tally_event_new (TALLY_EVENT_TEXT_DELTA);
  json_object_set_int_member (kinds[2], "call", 0);
  json_object_set_int_member (kinds[2], "block", 0);
  json_object_set_string_member (kinds[2], "text", answer);
  kinds[3] = tally_event_new (TALLY_EVENT_TURN_FINISHED);
  json_object_set_string_member (kinds[3], "status", "done");
  json_object_set_double_member (kinds[3], "cost_usd", 0.01);
  tally_event_set_usage (kinds[3], "usage", 1000, 100, 0, 0);

  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_autoptr(JsonObject) event = tally_event_stamp (kinds[i], seq++, ts, id, i == 0 ? NULL : "t1");

      json_object_unref (kinds[i]);
      g_assert_true (tally_store_append_event (store, event, &error));
      g_assert_no_error (error);
    }
  g_assert_true (tally_store_flush (store, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&id);
}

/* The whole file at @path; the test fails when it cannot be read. */
GBytes *
tally_test_read_bytes (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *contents = NULL;
  gsize len = 0;

  g_file_get_contents (path, &contents, &len, &error);
  g_assert_no_error (error);
  return g_bytes_new_take (contents, len);
}

/* Overwrites page @page (1-based, 4096 bytes) of the file at @path with
 * noise drawn from @seed. */
void
tally_test_damage_page (const char *path,
                        gint64      page,
                        guint32     seed)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  guint8 noise[4096];
  FILE *file;

  for (guint i = 0; i < sizeof noise; i++)
    noise[i] = g_rand_int_range (rand, 0, 256);
  file = fopen (path, "r+b");
  g_assert_nonnull (file);
  g_assert_cmpint (fseek (file, (page - 1) * 4096, SEEK_SET), ==, 0);
  g_assert_cmpuint (fwrite (noise, 1, sizeof noise, file), ==, sizeof noise);
  fclose (file);
}
