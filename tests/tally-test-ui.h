/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-transcript.h"

G_BEGIN_DECLS

/* Helpers shared by the UI tests (linked into each of them). */

/* How long a UI test waits for a condition before it fails: a guard
 * against hangs, not a speed limit. */
#define TALLY_TEST_WAIT_SECONDS 60

void     tally_test_init_ui         (int       *argc,
                                     char    ***argv);
void     tally_test_prepare_ui_process (void);
gboolean tally_test_log_is_tolerated (const char *log_domain,
                                      const char *message);
void     tally_test_heartbeat_start (guint     *id);
gboolean tally_test_deadline_passed (gint64     deadline);
void     tally_test_spin_idle       (void);
void     tally_test_wait_frames     (GtkWidget *widget,
                                     guint      n);

/* A 1 ms main-loop heartbeat that keeps the longest gap between two of
 * its beats: the longest stall of the main loop while it runs. */
typedef struct {
  guint  id;
  gint64 last_us;
  gint64 longest_us;
} TallyTestStallMeter;

void     tally_test_stall_meter_start (TallyTestStallMeter *meter);
gint64   tally_test_stall_meter_stop  (TallyTestStallMeter *meter);

GPtrArray *tally_test_find_all      (GtkWidget       *root,
                                     GType            type);
GtkWidget *tally_test_find_first    (GtkWidget       *root,
                                     GType            type);
void       tally_test_apply_event   (TallyTranscript *transcript,
                                     const char      *json);
guint      tally_test_count_blocks  (TallyTranscript *transcript,
                                     TallyBlockKind   kind);
guint      tally_test_block_index   (GListModel      *blocks,
                                     TallyBlock      *block);
void       tally_test_save_png      (GtkWidget       *widget,
                                     const char      *name);
GtkWidget *tally_test_find_action_button (GtkWidget  *root,
                                          const char *action_name);
gboolean   tally_test_has_accessible_label (gpointer    widget,
                                            const char *label);
void       tally_test_assert_centring_bin (GtkWidget *bin);
GtkWindow *tally_test_find_message_dialog (void);
gboolean   tally_test_chooser_names (GtkFileChooser *chooser,
                                     const char     *path);

/* Spins the main loop until @cond holds; fails the test after
 * TALLY_TEST_WAIT_SECONDS (it catches a hang, not a slow machine). */
#define SPIN_UNTIL(cond)                                                       \
  G_STMT_START {                                                               \
    gint64 _deadline = g_get_monotonic_time () + TALLY_TEST_WAIT_SECONDS * G_USEC_PER_SEC; \
    guint _beat;                                                               \
    tally_test_heartbeat_start (&_beat);                                       \
    while (!(cond))                                                            \
      {                                                                        \
        if (tally_test_deadline_passed (_deadline))                            \
          g_error ("Timed out waiting for %s", #cond);                         \
        g_main_context_iteration (NULL, TRUE);                                 \
      }                                                                        \
    g_source_remove (_beat);                                                   \
  } G_STMT_END

G_END_DECLS
