/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TallyThinkingStyle:
 * @TALLY_THINKING_MANUAL: the model takes `{"type":"enabled","budget_tokens":N}`
 * @TALLY_THINKING_ADAPTIVE: the model rejects manual budgets; Tally sends
 *   `{"type":"adaptive","display":"summarized"}` so the thinking text streams
 *
 * How a model is asked to think (docs/protocol.md §3).
 */
typedef enum {
  TALLY_THINKING_MANUAL,
  TALLY_THINKING_ADAPTIVE,
} TallyThinkingStyle;

/**
 * TallyModelInfo:
 * @id: the API model id, e.g. `claude-sonnet-5`
 * @display_name: a name for people, e.g. "Claude Sonnet 5"
 * @thinking: how to ask for thinking
 * @thinking_off_explicit: %TRUE when "off" is sent as `{"type":"disabled"}`,
 *   %FALSE when the field must be left out (the model rejects `disabled`)
 * @max_tokens: the model's output limit in tokens
 *
 * One row of the bundled model table (`resources/models.json`).
 */
typedef struct {
  char               *id;
  char               *display_name;
  TallyThinkingStyle  thinking;
  gboolean            thinking_off_explicit;
  gint64              max_tokens;
} TallyModelInfo;

const TallyModelInfo *tally_model_table_lookup            (const char *name);
const char           *tally_model_table_resolve           (const char *name);
const char           *tally_model_table_get_default       (void);
guint                 tally_model_table_get_n_models      (void);
const TallyModelInfo *tally_model_table_get_model         (guint       position);
char                 *tally_model_table_dup_thinking_json (const char *model,
                                                           gboolean    enabled,
                                                           gint64      budget_tokens,
                                                           gint64      max_tokens,
                                                           gint64     *budget_used);

G_END_DECLS
