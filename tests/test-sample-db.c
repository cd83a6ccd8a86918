/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Checks the Beanline sample database built from data/beanline.sql: its
 * shape, the patterns it promises the analyst, the planted duplicate, and
 * that building it again gives the same bytes. */

#include "config.h"

#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

static sqlite3 *db;

static const char *
sample_db_path (void)
{
  const char *path = g_getenv ("TALLY_SAMPLE_DB");

  g_assert_nonnull (path);
  return path;
}

static sqlite3_stmt *
prepare (const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL);

  if (rc != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));

  return stmt;
}

static gint64
query_int (const char *sql)
{
  sqlite3_stmt *stmt = prepare (sql);
  gint64 value;

  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);

  return value;
}

static double
query_double (const char *sql)
{
  sqlite3_stmt *stmt = prepare (sql);
  double value;

  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  value = sqlite3_column_double (stmt, 0);
  sqlite3_finalize (stmt);

  return value;
}

static char *
query_text (const char *sql)
{
  sqlite3_stmt *stmt = prepare (sql);
  char *value;

  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  value = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);

  return value;
}

static void
test_stores (void)
{
  g_autofree char *cities = query_text ("SELECT group_concat (city, ',') FROM "
                                        "(SELECT DISTINCT city FROM stores ORDER BY city)");

  g_assert_cmpint (query_int ("SELECT count(*) FROM stores"), >=, 4);
  g_assert_cmpint (query_int ("SELECT count(*) FROM stores"), ==, 6);
  g_assert_cmpint (query_int ("SELECT count(DISTINCT city) FROM stores"), >=, 2);
  g_assert_cmpstr (cities, ==, "Leeds,York");
  /* Each city has more than one café. */
  g_assert_cmpint (query_int ("SELECT min (n) FROM (SELECT count(*) AS n FROM stores GROUP BY city)"),
                   >=, 2);
}

static void
test_products (void)
{
  g_assert_cmpint (query_int ("SELECT count(*) FROM products"), >=, 15);
  g_assert_cmpint (query_int ("SELECT count(*) FROM products"), ==, 24);
  g_assert_cmpint (query_int ("SELECT count(*) FROM categories"), >=, 5);
  g_assert_cmpint (query_int ("SELECT count(DISTINCT category_id) FROM products"), ==,
                   query_int ("SELECT count(*) FROM categories"));
  g_assert_cmpint (query_int ("SELECT count(*) FROM products WHERE unit_price_gbp <= 0"), ==, 0);
  g_assert_cmpint (query_int ("SELECT count(*) FROM products AS p JOIN categories AS c "
                              "USING (category_id) WHERE c.name = 'Beans to take home'"), ==, 3);
}

static void
test_sales_volume (void)
{
  g_assert_cmpint (query_int ("SELECT count(*) FROM sales"), >=, 20000);
  /* Golden figures: any change to the generator, or a SQLite whose
   * arithmetic differs, shows up here. */
  g_assert_cmpint (query_int ("SELECT count(*) FROM sales"), ==, 22489);
  g_assert_cmpint (query_int ("SELECT sum (quantity) FROM sales"), ==, 399696);
  g_assert_cmpfloat_with_epsilon (query_double ("SELECT sum (quantity * unit_price_gbp) FROM sales"),
                                  1333521.30, 0.005);
  g_assert_cmpint (query_int ("SELECT count(*) FROM sales WHERE quantity <= 0"), ==, 0);
}

static void
test_dates (void)
{
  g_autofree char *first = query_text ("SELECT min (sold_on) FROM sales");
  g_autofree char *last = query_text ("SELECT max (sold_on) FROM sales");

  g_assert_cmpstr (first, ==, "2025-01-01");
  g_assert_cmpstr (last, ==, "2025-06-30");
  /* Every date is a real ISO date, and every day of the period traded. */
  g_assert_cmpint (query_int ("SELECT count(*) FROM sales WHERE sold_on IS NOT date (sold_on)"), ==, 0);
  g_assert_cmpint (query_int ("SELECT count(DISTINCT sold_on) FROM sales"), ==, 181);
  g_assert_cmpint (query_int ("SELECT count(*) FROM calendar"), ==, 181);
  g_assert_cmpint (query_int ("SELECT count(*) FROM sales WHERE sold_on NOT IN (SELECT day FROM calendar)"),
                   ==, 0);
}

static void
test_opening_dates (void)
{
  g_autofree char *briggate_first = NULL;
  g_autofree char *briggate_opened = NULL;

  g_assert_cmpint (query_int ("SELECT count(*) FROM sales AS s JOIN stores AS st USING (store_id) "
                              "WHERE s.sold_on < st.opened_on"), ==, 0);

  /* Exactly one café opened during the period, and it trades from its
   * first day. */
  g_assert_cmpint (query_int ("SELECT count(*) FROM stores "
                              "WHERE opened_on BETWEEN '2025-01-02' AND '2025-06-30'"), ==, 1);
  briggate_opened = query_text ("SELECT opened_on FROM stores "
                                "WHERE opened_on BETWEEN '2025-01-02' AND '2025-06-30'");
  briggate_first = query_text ("SELECT min (s.sold_on) FROM sales AS s JOIN stores AS st "
                               "USING (store_id) WHERE st.opened_on > '2025-01-01'");
  g_assert_cmpstr (briggate_opened, ==, "2025-03-15");
  g_assert_cmpstr (briggate_first, ==, "2025-03-15");
}

static void
test_duplicate (void)
{
  /* An analyst's query for exact duplicates: same day, store, product,
   * quantity and price. */
  sqlite3_stmt *stmt = prepare (
    "SELECT sold_on, store_id, product_id, count(*) AS n, min (sale_id), max (sale_id) "
    "FROM sales "
    "GROUP BY sold_on, store_id, product_id, quantity, unit_price_gbp "
    "HAVING count(*) > 1");

  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_cmpstr ((const char *) sqlite3_column_text (stmt, 0), ==, "2025-03-08");
  g_assert_cmpint (sqlite3_column_int (stmt, 1), ==, 4);
  g_assert_cmpint (sqlite3_column_int (stmt, 2), ==, 2);
  g_assert_cmpint (sqlite3_column_int (stmt, 3), ==, 2);
  g_assert_cmpint (sqlite3_column_int64 (stmt, 5), ==, query_int ("SELECT max (sale_id) FROM sales"));
  g_assert_cmpint (sqlite3_column_int64 (stmt, 4), <, sqlite3_column_int64 (stmt, 5));
  /* ...and it is the only one. */
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_DONE);
  sqlite3_finalize (stmt);

  /* Store, day and product alone are unique everywhere else too. */
  g_assert_cmpint (query_int ("SELECT count(*) FROM (SELECT 1 FROM sales "
                              "GROUP BY sold_on, store_id, product_id HAVING count(*) > 1)"), ==, 1);
  g_assert_cmpint (query_int ("SELECT count(*) FROM (SELECT 1 FROM sales "
                              "WHERE sold_on NOT LIKE '2025-03-%' "
                              "GROUP BY sold_on, store_id, product_id HAVING count(*) > 1)"), ==, 0);
}

static double
weekend_ratio (const char *city)
{
  g_autofree char *sql = g_strdup_printf (
    "WITH per_day AS ("
    "  SELECT s.store_id, s.sold_on, c.is_weekend, sum (s.quantity * s.unit_price_gbp) AS revenue"
    "  FROM sales AS s JOIN stores AS st USING (store_id) JOIN calendar AS c ON c.day = s.sold_on"
    "  WHERE st.city = '%s'"
    "  GROUP BY s.store_id, s.sold_on)"
    "SELECT avg (CASE WHEN is_weekend THEN revenue END) / avg (CASE WHEN NOT is_weekend THEN revenue END)"
    " FROM per_day", city);

  return query_double (sql);
}

static void
test_weekday_pattern (void)
{
  double leeds = weekend_ratio ("Leeds");
  double york = weekend_ratio ("York");

  /* Revenue per trading day, weekend over weekday: the Leeds offices and
   * station sell less at weekends, the York tourist cafés more. */
  g_assert_cmpfloat (leeds, <, 0.85);
  g_assert_cmpfloat (york, >, 1.15);

  /* The office café never opens on Sundays. */
  g_assert_cmpint (query_int ("SELECT count(*) FROM sales AS s JOIN calendar AS c ON c.day = s.sold_on "
                              "WHERE s.store_id = 1 AND c.day_of_week = 'Sun'"), ==, 0);
}

static void
test_seasonality (void)
{
  gint64 iced_jan = query_int ("SELECT sum (quantity) FROM sales AS s JOIN products AS p USING (product_id) "
                               "WHERE p.category_id = 3 AND sold_on LIKE '2025-01-%'");
  gint64 iced_jun = query_int ("SELECT sum (quantity) FROM sales AS s JOIN products AS p USING (product_id) "
                               "WHERE p.category_id = 3 AND sold_on LIKE '2025-06-%'");
  gint64 choc_jan = query_int ("SELECT sum (quantity) FROM sales JOIN products USING (product_id) "
                               "WHERE name = 'Hot Chocolate' AND sold_on LIKE '2025-01-%'");
  gint64 choc_jun = query_int ("SELECT sum (quantity) FROM sales JOIN products USING (product_id) "
                               "WHERE name = 'Hot Chocolate' AND sold_on LIKE '2025-06-%'");
  g_autofree char *worst_month = query_text (
    "SELECT substr (sold_on, 1, 7) AS month FROM sales "
    "GROUP BY month ORDER BY sum (quantity * unit_price_gbp) LIMIT 1");

  g_assert_cmpint (iced_jun, >, 5 * iced_jan);
  g_assert_cmpint (choc_jun, <, choc_jan);
  g_assert_cmpstr (worst_month, ==, "2025-01");
}

static void
test_price_rise (void)
{
  g_assert_cmpfloat_with_epsilon (query_double ("SELECT unit_price_gbp FROM products WHERE name = 'Flat White'"),
                                  3.60, 1e-9);
  g_assert_cmpint (query_int ("SELECT count(DISTINCT s.unit_price_gbp) FROM sales AS s JOIN products AS p USING (product_id) "
                              "WHERE p.name = 'Flat White' AND sold_on < '2025-04-01'"), ==, 1);
  g_assert_cmpfloat_with_epsilon (query_double ("SELECT max (s.unit_price_gbp) FROM sales AS s JOIN products "
                                                "AS p USING (product_id) WHERE p.name = 'Flat White' "
                                                "AND sold_on < '2025-04-01'"), 3.40, 1e-9);
  g_assert_cmpfloat_with_epsilon (query_double ("SELECT min (s.unit_price_gbp) FROM sales AS s JOIN products "
                                                "AS p USING (product_id) WHERE p.name = 'Flat White' "
                                                "AND sold_on >= '2025-04-01'"), 3.60, 1e-9);
  /* No other product changed price. */
  g_assert_cmpint (query_int ("SELECT count(*) FROM (SELECT product_id FROM sales GROUP BY product_id "
                              "HAVING count(DISTINCT unit_price_gbp) > 1)"), ==, 1);
  g_assert_cmpint (query_int ("SELECT count(*) FROM price_history"), ==, 25);
}

static void
test_integrity (void)
{
  g_autofree char *check = query_text ("PRAGMA integrity_check");
  g_autofree char *version = query_text ("SELECT value FROM meta WHERE key = 'version'");
  sqlite3_stmt *stmt = prepare ("PRAGMA foreign_key_check");
  GStatBuf st;

  g_assert_cmpstr (check, ==, "ok");
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_DONE);
  sqlite3_finalize (stmt);

  g_assert_cmpint (query_int ("PRAGMA user_version"), ==, 1);
  g_assert_cmpstr (version, ==, "1");

  /* The views work. */
  g_assert_cmpint (query_int ("SELECT count(*) FROM sales_detail"), ==,
                   query_int ("SELECT count(*) FROM sales"));
  g_assert_cmpint (query_int ("SELECT count(*) FROM daily_store_revenue"), ==,
                   query_int ("SELECT count(*) FROM store_days"));

  /* No generator tables were left behind. */
  g_assert_cmpint (query_int ("SELECT count(*) FROM sqlite_master WHERE name LIKE 'gen\\_%' ESCAPE '\\'"),
                   ==, 0);

  g_assert_cmpint (g_stat (sample_db_path (), &st), ==, 0);
  g_assert_cmpint (st.st_size, <, 5 * 1024 * 1024);
}

static void
test_deterministic (void)
{
  const char *mksample = g_getenv ("TALLY_MKSAMPLE");
  const char *script = g_getenv ("TALLY_SAMPLE_SQL");
  g_autoptr(GError) error = NULL;
  g_autofree char *tmpdir = g_dir_make_tmp ("tally-sample-XXXXXX", &error);
  g_autofree char *output = NULL;
  g_autofree char *built = NULL;
  g_autofree char *again = NULL;
  gsize built_len = 0, again_len = 0;
  int status = -1;

  g_assert_no_error (error);
  g_assert_nonnull (mksample);
  g_assert_nonnull (script);

  output = g_build_filename (tmpdir, "beanline.db", NULL);

  {
    const char *argv[] = { mksample, script, output, NULL };

    g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                  &status, &error);
    g_assert_no_error (error);
    g_spawn_check_wait_status (status, &error);
    g_assert_no_error (error);
  }

  g_file_get_contents (sample_db_path (), &built, &built_len, &error);
  g_assert_no_error (error);
  g_file_get_contents (output, &again, &again_len, &error);
  g_assert_no_error (error);

  g_assert_cmpuint (built_len, ==, again_len);
  g_assert_true (memcmp (built, again, built_len) == 0);

  g_unlink (output);
  g_rmdir (tmpdir);
}

int
main (int    argc,
      char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);

  rc = sqlite3_open_v2 (sample_db_path (), &db, SQLITE_OPEN_READONLY, NULL);
  if (rc != SQLITE_OK)
    g_error ("cannot open %s: %s", sample_db_path (), sqlite3_errstr (rc));

  g_test_add_func ("/tally/sample-db/stores", test_stores);
  g_test_add_func ("/tally/sample-db/products", test_products);
  g_test_add_func ("/tally/sample-db/sales-volume", test_sales_volume);
  g_test_add_func ("/tally/sample-db/dates", test_dates);
  g_test_add_func ("/tally/sample-db/opening-dates", test_opening_dates);
  g_test_add_func ("/tally/sample-db/duplicate", test_duplicate);
  g_test_add_func ("/tally/sample-db/weekday-pattern", test_weekday_pattern);
  g_test_add_func ("/tally/sample-db/seasonality", test_seasonality);
  g_test_add_func ("/tally/sample-db/price-rise", test_price_rise);
  g_test_add_func ("/tally/sample-db/integrity", test_integrity);
  g_test_add_func ("/tally/sample-db/deterministic", test_deterministic);

  rc = g_test_run ();
  sqlite3_close (db);

  return rc;
}
