/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

/* What the files of tally-cli share: the run's state and the readable
 * printer (tally-cli-print.c) and the cards answered on stdin
 * (tally-cli-cards.c). Not installed. */

#include <json-glib/json-glib.h>

#include "tally-agent.h"
#include "tally-session-info.h"
#include "tally-tool.h"

G_BEGIN_DECLS

#define EXIT_DONE      0
#define EXIT_FAILED    1
#define EXIT_USAGE     2
#define EXIT_CANCELLED 130
/* Cancelled by SIGHUP or SIGTERM: 128 + the signal, as a shell reports. */
#define EXIT_HANGUP    129
#define EXIT_TERMINATED 143

typedef struct {
  GMainLoop    *loop;
  GCancellable *cancellable;
  TallyAgent   *agent;
  gboolean      json;
  gboolean      color;
  gboolean      thinking_open;
  gboolean      text_open;
  int           exit_status;
  guint         sigint_count;
  int           stop_signal;      /* the first of SIGINT, SIGTERM, SIGHUP */
  gint64        text_blocks;
  gint64        attempts;          /* api_call events of the current turn */

  /* cards answered on stdin */
  GDataInputStream *stdin_lines;  /* made once, freed by stop_reading_stdin() */
  GCancellable *stdin_cancellable;
  gboolean      stdin_reading;    /* a line read is pending */
  gboolean      stdin_eof;
  gboolean      interactive;
  char         *card_id;          /* approval or question id being read */
  gboolean      card_is_question;
  JsonArray    *suggestions;      /* of the pending approval */
  JsonArray    *questions;        /* of the pending question card */
  JsonObject   *answers;          /* collected so far */
  guint         question_index;
} Cli;

void   tally_cli_out_flush           (void);
int    tally_cli_out_finish          (void);
void   tally_cli_close_open_text     (Cli              *cli);
char  *tally_cli_escape              (const char       *text);
TallyToolPreview *tally_cli_dup_preview (const char     *tool_name,
                                         JsonNode       *input);
char  *tally_cli_one_line            (JsonNode         *node,
                                      gsize             max_chars);
void   tally_cli_print_json_line     (JsonObject       *object);
void   tally_cli_print_event         (Cli              *cli,
                                      JsonObject       *event);
void   tally_cli_print_session_line  (TallySessionInfo *info,
                                      gboolean          with_snippet);
gboolean tally_cli_print_event_lines (Cli              *cli,
                                      GPtrArray        *lines);

void   tally_cli_start_card          (Cli              *cli,
                                      JsonObject       *event);
void   tally_cli_stop_reading_stdin  (Cli              *cli);

int    tally_cli_run_notes           (const char       *store_path,
                                      const char       *database,
                                      const char       *edit_file,
                                      gboolean          json);

G_END_DECLS
