/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/**
 * TallyCardDiffFlags:
 * @TALLY_CARD_DIFF_NONE: compare lines as they are, no gutter
 * @TALLY_CARD_DIFF_LINE_NUMBERS: start each line with its number (in the
 *   new text; in the old one for a removed line)
 * @TALLY_CARD_DIFF_IGNORE_NUMBERING: compare the items of a list by their
 *   text, leaving out their number or bullet ("2. Write report.md" and
 *   "3. Write report.md" are the same step)
 *
 * How tally_card_diff_show() compares and shows two texts.
 */
typedef enum {
  TALLY_CARD_DIFF_NONE             = 0,
  TALLY_CARD_DIFF_LINE_NUMBERS     = 1 << 0,
  TALLY_CARD_DIFF_IGNORE_NUMBERING = 1 << 1,
} TallyCardDiffFlags;

void tally_card_diff_show (GtkTextView        *view,
                           const char         *old_text,
                           const char         *new_text,
                           TallyCardDiffFlags  flags,
                           guint               context,
                           guint               max_lines,
                           guint              *added,
                           guint              *removed);
char *tally_card_diff_dup_counts (guint added,
                                  guint removed);

G_END_DECLS
