/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TALLY_TYPE_TRANSCRIPT_VIEW (tally_transcript_view_get_type ())

G_DECLARE_FINAL_TYPE (TallyTranscriptView, tally_transcript_view, TALLY, TRANSCRIPT_VIEW, GtkWidget)

GtkWidget  *tally_transcript_view_new            (void);
GListModel *tally_transcript_view_get_model      (TallyTranscriptView *self);
void        tally_transcript_view_set_model      (TallyTranscriptView *self,
                                                  GListModel          *blocks);
gboolean    tally_transcript_view_get_following  (TallyTranscriptView *self);
void        tally_transcript_view_scroll_to_end  (TallyTranscriptView *self,
                                                  gboolean             animate);
void        tally_transcript_view_resume_following (TallyTranscriptView *self);
const char *tally_transcript_view_get_workspace (TallyTranscriptView *self);
void        tally_transcript_view_set_workspace (TallyTranscriptView *self,
                                                 const char          *workspace);

G_END_DECLS
