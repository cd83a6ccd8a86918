/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define TALLY_TYPE_CONVERSATION (tally_conversation_get_type ())

G_DECLARE_FINAL_TYPE (TallyConversation, tally_conversation, TALLY, CONVERSATION, GObject)

/**
 * TallyOrphanReason:
 * @TALLY_ORPHAN_NEVER_STARTED: the tool never ran (cancel or crash before it)
 * @TALLY_ORPHAN_INTERRUPTED: the tool was running when the turn stopped
 *
 * Why a `tool_use` had no `tool_result` when the conversation was repaired.
 */
typedef enum {
  TALLY_ORPHAN_NEVER_STARTED,
  TALLY_ORPHAN_INTERRUPTED,
} TallyOrphanReason;

TallyConversation *tally_conversation_new                 (void);
guint              tally_conversation_get_n_messages      (TallyConversation *self);
const char        *tally_conversation_get_role            (TallyConversation *self,
                                                           guint              index);
GPtrArray         *tally_conversation_get_blocks          (TallyConversation *self,
                                                           guint              index);
char              *tally_conversation_dup_message_json    (TallyConversation *self,
                                                           guint              index);
char              *tally_conversation_dup_messages_json   (TallyConversation *self);

void               tally_conversation_append_assistant    (TallyConversation *self,
                                                           GPtrArray         *blocks);
gboolean           tally_conversation_append_message_json (TallyConversation *self,
                                                           const char        *role,
                                                           const char        *content_json,
                                                           GError           **error);
void               tally_conversation_add_user_block      (TallyConversation *self,
                                                           const char        *block_json);
void               tally_conversation_add_user_text       (TallyConversation *self,
                                                           const char        *text);
void               tally_conversation_add_tool_result     (TallyConversation *self,
                                                           const char        *tool_use_id,
                                                           const char        *content,
                                                           gboolean           is_error);

GPtrArray         *tally_conversation_dup_pending_tool_uses (TallyConversation *self);
guint              tally_conversation_repair              (TallyConversation *self,
                                                           GHashTable        *reasons);

JsonObject        *tally_conversation_parse_tool_use      (const char        *block_json);
GHashTable        *tally_conversation_dup_tool_use_ids    (TallyConversation *self);
GHashTable        *tally_conversation_dedup_new_tool_uses (TallyConversation *self,
                                                           GPtrArray         *blocks);
guint              tally_conversation_repair_duplicate_ids (TallyConversation *self,
                                                           GArray            *changed);

GBytes            *tally_conversation_build_request       (TallyConversation *self,
                                                           const char        *model,
                                                           gint64             max_tokens,
                                                           const char        *system_prompt,
                                                           const char        *tools_json,
                                                           const char        *thinking_json);

char              *tally_conversation_orphan_message      (TallyOrphanReason  reason);

G_END_DECLS
