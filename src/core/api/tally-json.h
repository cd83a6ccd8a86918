/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * Typed reads of one member of a JSON object, for the events, messages and
 * tool inputs the core reads everywhere. Each returns the member only when
 * it has the asked-for shape and the default otherwise (a missing member,
 * null, or another type), so a malformed or older payload never warns.
 * @object may be %NULL.
 */

const char *tally_json_object_get_string (JsonObject *object,
                                          const char *member,
                                          const char *default_value);
gint64      tally_json_object_get_int    (JsonObject *object,
                                          const char *member,
                                          gint64      default_value);
double      tally_json_object_get_double (JsonObject *object,
                                          const char *member,
                                          double      default_value);
gboolean    tally_json_object_get_bool   (JsonObject *object,
                                          const char *member,
                                          gboolean    default_value);
gboolean    tally_json_object_lookup_int    (JsonObject *object,
                                             const char *member,
                                             gint64     *value);
gboolean    tally_json_object_lookup_double (JsonObject *object,
                                             const char *member,
                                             double     *value);
JsonObject *tally_json_object_get_object (JsonObject *object,
                                          const char *member);
JsonArray  *tally_json_object_get_array  (JsonObject *object,
                                          const char *member);

const char *tally_json_node_describe      (JsonNode   *node);
char       *tally_json_to_string          (JsonNode   *node,
                                           gboolean    pretty);

void        tally_json_object_set_string_or_null (JsonObject *object,
                                                  const char *member,
                                                  const char *value);
void        tally_json_object_set_string_unless_null (JsonObject *object,
                                                      const char *member,
                                                      const char *value);

G_END_DECLS
