/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Test helper: runs tests/mock-api/tally-mock-api as a child process on
 * 127.0.0.1 with a scenario and reads back what it recorded. */

typedef struct _TallyTestMock TallyTestMock;

TallyTestMock *tally_test_mock_start          (const char     *scenario_json,
                                               GError        **error);
TallyTestMock *tally_test_mock_start_file     (const char     *scenario_path,
                                               GError        **error);
const char    *tally_test_mock_get_base_url   (TallyTestMock  *self);
guint16        tally_test_mock_get_port       (TallyTestMock  *self);
JsonArray     *tally_test_mock_dup_requests   (TallyTestMock  *self);
JsonObject    *tally_test_mock_dup_request_body (TallyTestMock *self,
                                                 guint          n);
guint          tally_test_mock_get_n_requests (TallyTestMock  *self);
guint          tally_test_mock_count_path     (TallyTestMock  *self,
                                               const char     *path);
void           tally_test_mock_free           (TallyTestMock  *self);

const char    *tally_test_data_dir            (void);
char          *tally_test_fixture_path        (const char     *name);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyTestMock, tally_test_mock_free)

G_END_DECLS
