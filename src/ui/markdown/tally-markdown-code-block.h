/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TALLY_TYPE_MARKDOWN_CODE_BLOCK (tally_markdown_code_block_get_type ())

G_DECLARE_FINAL_TYPE (TallyMarkdownCodeBlock, tally_markdown_code_block, TALLY, MARKDOWN_CODE_BLOCK, GtkWidget)

GtkWidget  *tally_markdown_code_block_new               (const char             *code,
                                                         const char             *language);
const char *tally_markdown_code_block_get_code          (TallyMarkdownCodeBlock *self);
void        tally_markdown_code_block_set_code          (TallyMarkdownCodeBlock *self,
                                                         const char             *code);
const char *tally_markdown_code_block_get_language      (TallyMarkdownCodeBlock *self);
void        tally_markdown_code_block_set_language      (TallyMarkdownCodeBlock *self,
                                                         const char             *language);
const char *tally_markdown_code_block_get_language_name (TallyMarkdownCodeBlock *self);
const char *tally_markdown_code_block_get_scheme_id     (TallyMarkdownCodeBlock *self);
void        tally_markdown_code_block_copy              (TallyMarkdownCodeBlock *self);

G_END_DECLS
