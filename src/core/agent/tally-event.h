/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * A TallyEvent is a JSON object (a #JsonObject) with the members `type`,
 * `seq`, `ts` (µs since the Unix epoch), `session_id`, `turn_id` and the
 * members of its type, as listed in docs/architecture.md §4. It is
 * the one vocabulary between the core and its faces: the store persists it
 * verbatim, the transcript applies it and `tally-cli --json` prints it.
 */

JsonObject *tally_event_new             (const char *type);
JsonObject *tally_event_stamp           (JsonObject *fields,
                                         gint64      seq,
                                         gint64      ts,
                                         const char *session_id,
                                         const char *turn_id);
char       *tally_event_to_json         (JsonObject *event);
JsonObject *tally_event_from_json       (const char *text,
                                         GError    **error);
const char *tally_event_get_event_type  (JsonObject *event);

void        tally_event_set_usage       (JsonObject *event,
                                         const char *member,
                                         gint64      input_tokens,
                                         gint64      output_tokens,
                                         gint64      cache_creation_input_tokens,
                                         gint64      cache_read_input_tokens);

G_END_DECLS
