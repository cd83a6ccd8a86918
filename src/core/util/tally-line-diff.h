/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * TallyDiffOp:
 * @TALLY_DIFF_EQUAL: the line is in both texts
 * @TALLY_DIFF_DELETE: the line is only in the old text
 * @TALLY_DIFF_INSERT: the line is only in the new text
 *
 * One step of a line edit script (tally_line_diff()).
 */
typedef enum {
  TALLY_DIFF_EQUAL,
  TALLY_DIFF_DELETE,
  TALLY_DIFF_INSERT,
} TallyDiffOp;

GByteArray *tally_line_diff      (const guint        *old_ids,
                                  gsize               n_old,
                                  const guint        *new_ids,
                                  gsize               n_new);
GByteArray *tally_line_diff_strv (const char * const *old_lines,
                                  const char * const *new_lines);

G_END_DECLS
