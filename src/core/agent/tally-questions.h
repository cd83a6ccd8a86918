/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

gboolean  tally_questions_validate        (JsonObject  *input,
                                           GError     **error);
char     *tally_questions_join_answer     (const char * const *labels,
                                           const char  *free_text);
char     *tally_questions_format_answers  (JsonArray   *questions,
                                           JsonObject  *answers);
char     *tally_questions_not_answered    (const char  *reason);
char     *tally_questions_plan_receipt    (gint64       version);

G_END_DECLS
