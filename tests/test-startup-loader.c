/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * Libraries loaded on first use (issue 15, "Start like a hello world";
 * docs/architecture.md §11.1): tally_module_table_load() and the libpq
 * loader built on it. libpq is not linked into the core, so this program
 * starts without it and maps it when the first PostgreSQL source is made.
 */

#include "config.h"

#include <string.h>

#include <gio/gio.h>

#include "tally-module-table.h"
#include "tally-pg-source.h"
/* The test reads the table itself and calls no libpq function. */
#define TALLY_PQ_LOADER_NO_REDIRECT
#include "tally-pq-loader.h"
#include "tally-test-util.h"
#include "tally-tool.h"

typedef gsize (*StrlenFunc) (const char *);

/* A library that is not there: NOT_FOUND naming it, the same answer on
 * the second call, and the slots left empty. */
static void
test_missing_library (void)
{
  static TallyModuleTable table = { .soname = "libtally-no-such-library.so.0" };
  const char *names[] = { "strlen" };
  gpointer slot = NULL;
  gpointer *slots[] = { &slot };

  for (guint attempt = 0; attempt < 2; attempt++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (tally_module_table_load (&table, names, slots, 1, &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
      g_assert_nonnull (strstr (error->message, "libtally-no-such-library.so.0"));
      g_assert_null (slot);
      g_assert_false (tally_module_table_is_loaded (&table));
    }
}

/* A library without one of the functions: NOT_FOUND naming the function,
 * and no slot filled, not even the ones found before it. */
static void
test_missing_function (void)
{
  static TallyModuleTable table = { .soname = "libc.so.6" };
  const char *names[] = { "strlen", "tally_no_such_function" };
  gpointer first = NULL, second = NULL;
  gpointer *slots[] = { &first, &second };
  g_autoptr(GError) error = NULL;

  g_assert_false (tally_module_table_load (&table, names, slots, 2, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "tally_no_such_function"));
  g_assert_nonnull (strstr (error->message, "libc.so.6"));
  g_assert_null (first);
  g_assert_null (second);
  g_assert_false (tally_module_table_is_loaded (&table));
}

/* A library with every function: the slots hold callable functions. */
static void
test_loaded (void)
{
  static TallyModuleTable table = { .soname = "libc.so.6" };
  const char *names[] = { "strlen" };
  StrlenFunc my_strlen = NULL;
  gpointer *slots[] = { (gpointer *) &my_strlen };
  g_autoptr(GError) error = NULL;

  g_assert_false (tally_module_table_is_loaded (&table));
  g_assert_true (tally_module_table_load (&table, names, slots, 1, &error));
  g_assert_no_error (error);
  g_assert_true (tally_module_table_is_loaded (&table));
  g_assert_nonnull (my_strlen);
  g_assert_cmpuint (my_strlen ("twelve chars"), ==, 12);
  /* Again: at once, still loaded. */
  g_assert_true (tally_module_table_load (&table, names, slots, 1, NULL));
}

/* libpq: not mapped until the first source is made; then every function
 * of the table is there. A connection string libpq cannot read is still
 * libpq's error. */
static void
test_libpq_on_first_source (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyPgSource) source = NULL;
  g_autoptr(TallyPgSource) bad = NULL;

  g_assert_false (tally_test_library_mapped ("libpq.so"));
  g_assert_false (tally_pq_loader_is_loaded ());

  source = tally_pg_source_new ("host=/nonexistent dbname=sales", &error);
  g_assert_no_error (error);
  g_assert_nonnull (source);
  g_assert_true (tally_pq_loader_is_loaded ());
  g_assert_true (tally_test_library_mapped ("libpq.so"));
#define ASSERT_LOADED(ret, name, args) g_assert_nonnull ((gpointer) tally_pq_api.name);
  TALLY_PQ_FUNCTIONS (ASSERT_LOADED)
#undef ASSERT_LOADED

  {
    g_autofree char *name = tally_pg_source_dup_database_name (source);
    g_assert_cmpstr (name, ==, "sales");
  }

  bad = tally_pg_source_new ("host=db port", &error);
  g_assert_null (bad);
  g_assert_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/startup/module-table/missing-library", test_missing_library);
  g_test_add_func ("/startup/module-table/missing-function", test_missing_function);
  g_test_add_func ("/startup/module-table/loaded", test_loaded);
  g_test_add_func ("/startup/libpq/on-first-source", test_libpq_on_first_source);

  return g_test_run ();
}
