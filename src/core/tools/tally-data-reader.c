/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-data-reader.h"
#include "tally-data-import.h"

#include <string.h>

#define CHUNK_SIZE (256 * 1024)

typedef enum {
  STATE_FIELD_START,
  STATE_UNQUOTED,
  STATE_QUOTED,
  STATE_QUOTE_IN_QUOTED,   /* a quote inside a quoted field: "" or the end */
} State;

struct _TallyDataReader
{
  GInputStream *stream;
  char          delimiter;  /* '\0': every line is one field */

  /* the chunk being parsed */
  char         *buffer;
  gsize         length;
  gsize         position;
  gboolean      eof;
  gboolean      started;    /* the byte order mark was looked at */
  gboolean      pending_cr; /* the last line ended in CR: skip one LF */
  guint64       bytes_read;

  /* the record: fields end in '\0' inside one string */
  GString      *record;
  GArray       *starts;     /* gsize: offset of each field */
  GArray       *lines;      /* guint64: line each field starts on */
  guint64       line;       /* the line being read, from 1 */
  guint64       record_line;
  gboolean      quoted;     /* a field of the record was quoted */
};

/**
 * tally_data_reader_new:
 * @stream: the text to read, positioned at its start
 * @delimiter: the field delimiter (`,`, `;`, `\t`, `|`, …), or `'\0'` to
 *   read every line as one field with no quoting (JSON Lines)
 *
 * Creates a reader of @stream. The reader holds a reference on @stream and
 * never closes it.
 *
 * Returns: (transfer full): a new reader; free it with
 *   tally_data_reader_free()
 */
TallyDataReader *
tally_data_reader_new (GInputStream *stream,
                       char          delimiter)
{
  TallyDataReader *reader;

  g_return_val_if_fail (G_IS_INPUT_STREAM (stream), NULL);

  reader = g_new0 (TallyDataReader, 1);
  reader->stream = g_object_ref (stream);
  reader->delimiter = delimiter;
  reader->buffer = g_malloc (CHUNK_SIZE);
  reader->record = g_string_sized_new (1024);
  reader->starts = g_array_new (FALSE, FALSE, sizeof (gsize));
  reader->lines = g_array_new (FALSE, FALSE, sizeof (guint64));
  reader->line = 1;

  return reader;
}

/**
 * tally_data_reader_free:
 * @reader: (transfer full) (nullable): a reader
 *
 * Frees @reader and drops its reference on the stream.
 */
void
tally_data_reader_free (TallyDataReader *reader)
{
  if (reader == NULL)
    return;

  g_object_unref (reader->stream);
  g_free (reader->buffer);
  g_string_free (reader->record, TRUE);
  g_array_unref (reader->starts);
  g_array_unref (reader->lines);
  g_free (reader);
}

static gboolean
fill (TallyDataReader  *reader,
      GCancellable     *cancellable,
      GError          **error)
{
  gsize got = 0;

  if (!g_input_stream_read_all (reader->stream, reader->buffer, CHUNK_SIZE, &got,
                                cancellable, error))
    return FALSE;

  reader->length = got;
  reader->position = 0;
  reader->bytes_read += got;
  if (got < CHUNK_SIZE)
    reader->eof = TRUE;

  if (!reader->started)
    {
      const guchar *bytes = (const guchar *) reader->buffer;

      reader->started = TRUE;
      if (got >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF)
        reader->position = 3;
      else if (got >= 2 && ((bytes[0] == 0xFF && bytes[1] == 0xFE) ||
                            (bytes[0] == 0xFE && bytes[1] == 0xFF)))
        {
          g_set_error_literal (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_ENCODING,
                               "line 1: the file is UTF-16, not UTF-8; save it as UTF-8");
          return FALSE;
        }
    }

  return TRUE;
}

static void
start_field (TallyDataReader *reader)
{
  gsize start = reader->record->len;

  g_array_append_val (reader->starts, start);
  g_array_append_val (reader->lines, reader->line);
}

static void
end_field (TallyDataReader *reader)
{
  g_string_append_c (reader->record, '\0');
}

/* Every field must be UTF-8; the error names the line of the first bad
 * byte, counting the newlines of a quoted field before it. */
static gboolean
validate_record (TallyDataReader  *reader,
                 GError          **error)
{
  for (guint i = 0; i < reader->starts->len; i++)
    {
      gsize length = 0;
      const char *field = tally_data_reader_get_field (reader, i, &length);
      const char *end = NULL;
      guint64 line;

      if (g_utf8_validate (field, length, &end))
        continue;

      line = g_array_index (reader->lines, guint64, i);
      for (const char *p = field; p < end; p++)
        if (*p == '\n')
          line++;
      g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_ENCODING,
                   "line %" G_GUINT64_FORMAT ": byte 0x%02X is not UTF-8; "
                   "save the file as UTF-8 (the importer reads no other encoding)",
                   line, (guint) (guchar) *end);
      return FALSE;
    }

  return TRUE;
}

/**
 * tally_data_reader_next:
 * @reader: a reader
 * @has_record: (out): set to %TRUE when a record was read, %FALSE at the
 *   end of the stream
 * @cancellable: (nullable): a #GCancellable, looked at before each chunk
 * @error: return location for a #TALLY_DATA_IMPORT_ERROR, a #GIOErrorEnum
 *   error of the stream, or %G_IO_ERROR_CANCELLED
 *
 * Reads the next record. A blank line is a record of one empty field
 * (see tally_data_reader_is_blank()).
 *
 * Returns: %FALSE on error
 */
gboolean
tally_data_reader_next (TallyDataReader  *reader,
                        gboolean         *has_record,
                        GCancellable     *cancellable,
                        GError          **error)
{
  State state = STATE_FIELD_START;
  gboolean begun = FALSE;
  const char delimiter = reader->delimiter;

  g_return_val_if_fail (reader != NULL, FALSE);
  g_return_val_if_fail (has_record != NULL, FALSE);

  *has_record = FALSE;
  g_string_truncate (reader->record, 0);
  g_array_set_size (reader->starts, 0);
  g_array_set_size (reader->lines, 0);
  reader->record_line = reader->line;
  reader->quoted = FALSE;

  for (;;)
    {
      const char *p;
      const char *end;

      if (reader->position == reader->length)
        {
          if (!reader->eof)
            {
              if (!fill (reader, cancellable, error))
                return FALSE;
              continue;
            }

          /* The end of the file. */
          if (!begun)
            return TRUE;
          if (state == STATE_QUOTED)
            {
              g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_QUOTE,
                           "line %" G_GUINT64_FORMAT ": a quoted field is never closed "
                           "(a double quote is missing)",
                           g_array_index (reader->lines, guint64, reader->lines->len - 1));
              return FALSE;
            }
          if (state == STATE_FIELD_START)
            start_field (reader);
          end_field (reader);
          *has_record = TRUE;
          return validate_record (reader, error);
        }

      p = reader->buffer + reader->position;
      end = reader->buffer + reader->length;

      if (reader->pending_cr)
        {
          reader->pending_cr = FALSE;
          if (*p == '\n')
            {
              reader->position++;
              continue;
            }
        }

      if (reader->record->len > TALLY_DATA_IMPORT_MAX_RECORD)
        {
          g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_TOO_LONG,
                       "line %" G_GUINT64_FORMAT ": the record is longer than %d MiB; "
                       "is a closing double quote missing?",
                       reader->record_line, TALLY_DATA_IMPORT_MAX_RECORD / (1024 * 1024));
          return FALSE;
        }

      while (p < end)
        {
          char c = *p;

          if (c == '\0')
            {
              g_set_error (error, TALLY_DATA_IMPORT_ERROR, TALLY_DATA_IMPORT_ERROR_BINARY,
                           "line %" G_GUINT64_FORMAT ": a NUL byte; this is a binary file, "
                           "not CSV, TSV or JSON Lines text", reader->line);
              return FALSE;
            }

          if (!begun)
            {
              begun = TRUE;
              reader->record_line = reader->line;
            }

          switch (state)
            {
            case STATE_FIELD_START:
              start_field (reader);
              if (c == '"' && delimiter != '\0')
                {
                  state = STATE_QUOTED;
                  reader->quoted = TRUE;
                  p++;
                }
              else
                state = STATE_UNQUOTED;
              break;

            case STATE_UNQUOTED:
              {
                const char *run = p;

                while (p < end && *p != delimiter && *p != '\n' && *p != '\r' && *p != '\0')
                  p++;
                g_string_append_len (reader->record, run, p - run);
                if (p == end || *p == '\0')
                  break;
                c = *p++;
                end_field (reader);
                if (c == delimiter)
                  {
                    state = STATE_FIELD_START;
                    break;
                  }
                reader->line++;
                reader->pending_cr = (c == '\r');
                reader->position = p - reader->buffer;
                *has_record = TRUE;
                return validate_record (reader, error);
              }

            case STATE_QUOTED:
              {
                const char *run = p;

                while (p < end && *p != '"' && *p != '\n' && *p != '\0')
                  p++;
                g_string_append_len (reader->record, run, p - run);
                if (p == end || *p == '\0')
                  break;
                if (*p == '\n')
                  {
                    g_string_append_c (reader->record, '\n');
                    reader->line++;
                  }
                else
                  state = STATE_QUOTE_IN_QUOTED;
                p++;
                break;
              }

            case STATE_QUOTE_IN_QUOTED:
              if (c == '"')
                {
                  g_string_append_c (reader->record, '"');
                  state = STATE_QUOTED;
                  p++;
                }
              else
                /* The closing quote; text after it up to the delimiter is
                 * kept as it stands (`"a"b` reads as `ab`). */
                state = STATE_UNQUOTED;
              break;

            default:
              g_assert_not_reached ();
            }
        }

      reader->position = p - reader->buffer;
    }
}

/**
 * tally_data_reader_get_n_fields:
 * @reader: a reader
 *
 * Returns: the number of fields of the record tally_data_reader_next()
 *   read last
 */
guint
tally_data_reader_get_n_fields (TallyDataReader *reader)
{
  g_return_val_if_fail (reader != NULL, 0);

  return reader->starts->len;
}

/**
 * tally_data_reader_get_field:
 * @reader: a reader
 * @index: a field of the last record, from 0
 * @length: (out) (optional): the field's length in bytes
 *
 * Returns: (transfer none): the field's text, UTF-8 ending in a NUL byte,
 *   valid until the next call of tally_data_reader_next()
 */
const char *
tally_data_reader_get_field (TallyDataReader *reader,
                             guint            index,
                             gsize           *length)
{
  gsize start;
  gsize next;

  g_return_val_if_fail (reader != NULL, NULL);
  g_return_val_if_fail (index < reader->starts->len, NULL);

  start = g_array_index (reader->starts, gsize, index);
  next = index + 1 < reader->starts->len
           ? g_array_index (reader->starts, gsize, index + 1)
           : reader->record->len;
  if (length != NULL)
    *length = next - start - 1;

  return reader->record->str + start;
}

/**
 * tally_data_reader_get_line:
 * @reader: a reader
 *
 * Returns: the line, from 1, the last record started on
 */
guint64
tally_data_reader_get_line (TallyDataReader *reader)
{
  g_return_val_if_fail (reader != NULL, 0);

  return reader->record_line;
}

/**
 * tally_data_reader_get_bytes_read:
 * @reader: a reader
 *
 * Returns: the bytes taken from the stream so far (whole chunks, so a
 *   little ahead of the records returned)
 */
guint64
tally_data_reader_get_bytes_read (TallyDataReader *reader)
{
  g_return_val_if_fail (reader != NULL, 0);

  return reader->bytes_read;
}

/**
 * tally_data_reader_is_blank:
 * @reader: a reader
 *
 * Returns: %TRUE when the last record is a blank line: one field, empty
 *   and not quoted. Such lines are skipped by the importer.
 */
gboolean
tally_data_reader_is_blank (TallyDataReader *reader)
{
  g_return_val_if_fail (reader != NULL, FALSE);

  return reader->starts->len == 1 && reader->record->len == 1 && !reader->quoted;
}

/* The field count of every complete record of @sample read with
 * @delimiter; the last record is left out unless @whole. */
static GArray *
count_fields (const char *sample,
              gsize       length,
              gboolean    whole,
              char        delimiter)
{
  GArray *counts = g_array_new (FALSE, FALSE, sizeof (guint));
  gboolean quoted = FALSE;
  gboolean at_start = TRUE;
  gboolean blank = TRUE;
  guint fields = 1;

  for (gsize i = 0; i < length; i++)
    {
      char c = sample[i];

      if (quoted)
        {
          if (c == '"')
            {
              if (i + 1 < length && sample[i + 1] == '"')
                i++;
              else
                quoted = FALSE;
            }
          continue;
        }

      if (c == '"' && at_start)
        {
          quoted = TRUE;
          at_start = FALSE;
          blank = FALSE;
        }
      else if (c == delimiter)
        {
          fields++;
          at_start = TRUE;
          blank = FALSE;
        }
      else if (c == '\n' || c == '\r')
        {
          if (!blank)
            g_array_append_val (counts, fields);
          if (c == '\r' && i + 1 < length && sample[i + 1] == '\n')
            i++;
          fields = 1;
          at_start = TRUE;
          blank = TRUE;
        }
      else
        {
          at_start = FALSE;
          blank = FALSE;
        }
    }

  if (whole && !blank && !quoted)
    g_array_append_val (counts, fields);

  return counts;
}

/**
 * tally_data_detect_delimiter:
 * @sample: (array length=length): the start of a delimited file
 * @length: bytes in @sample
 * @whole: %TRUE when @sample is the whole file (its last record is
 *   complete even without a newline)
 *
 * Picks the delimiter of a file from its start (docs/data-files.md §2):
 * of comma, semicolon, tab and pipe, the one that splits every record of
 * the sample into the same number of fields, more than one, the highest
 * number winning; when none is consistent, the one whose most common
 * count above one covers the most records; a comma when nothing splits.
 *
 * Returns: the delimiter
 */
char
tally_data_detect_delimiter (const char *sample,
                             gsize       length,
                             gboolean    whole)
{
  static const char candidates[] = { ',', ';', '\t', '|' };
  char best = ',';
  guint best_fields = 1;
  gboolean best_consistent = FALSE;
  guint best_cover = 0;

  g_return_val_if_fail (sample != NULL || length == 0, ',');

  for (guint c = 0; c < G_N_ELEMENTS (candidates); c++)
    {
      g_autoptr(GArray) counts = count_fields (sample, length, whole, candidates[c]);
      g_autoptr(GHashTable) tally = g_hash_table_new (NULL, NULL);
      gboolean consistent = counts->len > 0;
      guint mode = 1;
      guint cover = 0;

      for (guint i = 0; i < counts->len; i++)
        {
          guint n = g_array_index (counts, guint, i);
          guint seen = GPOINTER_TO_UINT (g_hash_table_lookup (tally, GUINT_TO_POINTER (n))) + 1;

          g_hash_table_insert (tally, GUINT_TO_POINTER (n), GUINT_TO_POINTER (seen));
          if (n != g_array_index (counts, guint, 0))
            consistent = FALSE;
          if (n > 1 && (seen > cover || (seen == cover && n > mode)))
            {
              cover = seen;
              mode = n;
            }
        }

      if (mode <= 1)
        continue;
      if (consistent && (!best_consistent || mode > best_fields))
        {
          best = candidates[c];
          best_fields = mode;
          best_consistent = TRUE;
          best_cover = cover;
        }
      else if (!consistent && !best_consistent && cover > best_cover)
        {
          best = candidates[c];
          best_fields = mode;
          best_cover = cover;
        }
    }

  return best;
}
