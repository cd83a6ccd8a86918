/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * TallyDataReader:
 *
 * A streaming reader of delimited text (CSV as RFC 4180 defines it, with
 * any one-byte delimiter) or of plain lines, for tally_data_import(). It
 * reads its #GInputStream in chunks of 256 KiB and holds one record at a
 * time, so a file of any size goes through in constant memory.
 *
 * What it checks on the way (docs/data-files.md §3): a UTF-8 byte order
 * mark at the start is skipped, a UTF-16 one is refused, a NUL byte makes
 * the file binary, every field must be valid UTF-8, a record longer than
 * %TALLY_DATA_IMPORT_MAX_RECORD and a quoted field left open at the end of
 * the file are errors. Errors are in %TALLY_DATA_IMPORT_ERROR and their
 * messages start with the line they concern ("line 12: …").
 *
 * Lines end in LF, CRLF or a lone CR. Line numbers count physical lines
 * from 1, so a record whose quoted field holds two newlines spans three.
 */
typedef struct _TallyDataReader TallyDataReader;

TallyDataReader *tally_data_reader_new            (GInputStream     *stream,
                                                   char              delimiter);
void             tally_data_reader_free           (TallyDataReader  *reader);

gboolean         tally_data_reader_next           (TallyDataReader  *reader,
                                                   gboolean         *has_record,
                                                   GCancellable     *cancellable,
                                                   GError          **error);
guint            tally_data_reader_get_n_fields   (TallyDataReader  *reader);
const char      *tally_data_reader_get_field      (TallyDataReader  *reader,
                                                   guint             index,
                                                   gsize            *length);
guint64          tally_data_reader_get_line       (TallyDataReader  *reader);
guint64          tally_data_reader_get_bytes_read (TallyDataReader  *reader);
gboolean         tally_data_reader_is_blank       (TallyDataReader  *reader);

char             tally_data_detect_delimiter      (const char       *sample,
                                                   gsize             length,
                                                   gboolean          whole);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyDataReader, tally_data_reader_free)

G_END_DECLS
