/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Test helpers shared by several tests (files, folders, SSE fixtures, JSON,
 * stores). */

void        tally_test_rm_rf             (const char *path);
void        tally_test_write_file        (const char *dir,
                                          const char *relpath,
                                          const char *contents,
                                          gssize      length);
GPtrArray  *tally_test_list_sse_fixtures (void);
GBytes     *tally_test_load_sse_fixture  (const char *name);
JsonObject *tally_test_parse_object      (const char *json);
gint64      tally_test_peak_rss_kib      (void);
gboolean    tally_test_library_mapped    (const char *prefix);
double      tally_test_median            (const double *values,
                                          guint         n);
char       *tally_test_seed_session      (const char   *store_path,
                                          const char   *title,
                                          const char   *answer,
                                          gint64        ts);
GBytes     *tally_test_read_bytes        (const char   *path);
void        tally_test_damage_page       (const char   *path,
                                          gint64        page,
                                          guint32       seed);

G_END_DECLS
