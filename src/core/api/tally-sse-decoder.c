/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-sse-decoder.h"

#include <string.h>

/**
 * TallySseDecoder:
 *
 * An incremental decoder for `text/event-stream` bodies that follows the
 * "Interpreting an event stream" rules of the HTML standard
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
 *
 * - lines end at LF, CR or CRLF, also when the CR and the LF arrive in
 *   different tally_sse_decoder_feed() calls;
 * - bytes are buffered across calls and only whole lines are interpreted,
 *   so a UTF-8 sequence may be split anywhere; invalid UTF-8 (and NUL
 *   bytes, which C strings cannot carry) is replaced with U+FFFD;
 * - one UTF-8 byte order mark at the very start of the stream is skipped;
 * - lines starting with ':' are comments; otherwise the field name runs up
 *   to the first ':' and one space after the colon is dropped from the
 *   value; a line without ':' is a field with an empty value;
 * - `data` values are joined with "\n"; `event` sets the event type; `id`
 *   sets the last event ID (ignored when it contains NUL; it persists
 *   across events; an empty one is reported as %NULL); `retry` sets the
 *   reconnection time when it consists of one or more ASCII digits only;
 *   other fields are ignored;
 * - a blank line dispatches the pending event when its data buffer is not
 *   empty; when it is empty nothing is dispatched (so `event: ping` followed
 *   by a blank line produces no event) and the event type is reset.
 *
 * There is no limit on the length of a line.
 *
 * One deliberate deviation from the standard: tally_sse_decoder_finish(),
 * called at the end of the body, interprets an unterminated last line and
 * then dispatches a pending event even though no blank line followed it.
 * The standard (and the official SDK decoders) drop such an event; we keep
 * it because several documented Anthropic streams end with
 * `data: {"type":"message_stop"}` and no blank line, and a complete
 * `message_stop` is better than a false "incomplete stream" error.
 *
 * The decoder is a plain struct, not a #GObject, and is not thread-safe.
 */
struct _TallySseDecoder
{
  TallySseEventFunc  func;
  gpointer           user_data;

  /* Bytes of a line whose end has not been seen yet. */
  GByteArray        *line;

  /* The event being assembled (raw bytes, validated at dispatch). */
  GString           *data;
  GString           *event_type;
  GString           *last_event_id;

  gint64             retry;

  /* Incremented by reset so that a callback that resets the decoder stops
   * the interpretation of the rest of the current feed. */
  guint              generation;

  /* The previous line ended with CR: an LF that follows belongs to it. */
  guint              skip_lf : 1;
  /* No byte of the stream has been interpreted yet (BOM detection). */
  guint              at_start : 1;
};

static const guint8 utf8_bom[3] = { 0xEF, 0xBB, 0xBF };

/**
 * tally_sse_decoder_new:
 * @func: called for every dispatched event, for the lifetime of the decoder
 * @user_data: data passed to @func
 *
 * Creates a decoder for one event stream.
 *
 * Returns: (transfer full): a new decoder, free it with
 *   tally_sse_decoder_free()
 */
TallySseDecoder *
tally_sse_decoder_new (TallySseEventFunc func,
                       gpointer          user_data)
{
  TallySseDecoder *self;

  g_return_val_if_fail (func != NULL, NULL);

  self = g_new0 (TallySseDecoder, 1);
  self->func = func;
  self->user_data = user_data;
  self->line = g_byte_array_new ();
  self->data = g_string_new (NULL);
  self->event_type = g_string_new (NULL);
  self->last_event_id = g_string_new (NULL);
  self->retry = -1;
  self->at_start = TRUE;

  return self;
}

/**
 * tally_sse_decoder_free:
 * @self: (nullable) (transfer full): a decoder
 *
 * Frees the decoder and everything it buffered. Must not be called from
 * the event callback.
 */
void
tally_sse_decoder_free (TallySseDecoder *self)
{
  if (self == NULL)
    return;

  g_byte_array_unref (self->line);
  g_string_free (self->data, TRUE);
  g_string_free (self->event_type, TRUE);
  g_string_free (self->last_event_id, TRUE);
  g_free (self);
}

/**
 * tally_sse_decoder_reset:
 * @self: a decoder
 *
 * Forgets all state — buffered bytes, the pending event, the last event ID,
 * the reconnection time — so that the decoder can read a new stream (for
 * example the body of the next HTTP attempt). May be called from the event
 * callback; the rest of the input of the running tally_sse_decoder_feed()
 * call is then dropped.
 */
void
tally_sse_decoder_reset (TallySseDecoder *self)
{
  g_return_if_fail (self != NULL);

  g_byte_array_set_size (self->line, 0);
  g_string_truncate (self->data, 0);
  g_string_truncate (self->event_type, 0);
  g_string_truncate (self->last_event_id, 0);
  self->retry = -1;
  self->skip_lf = FALSE;
  self->at_start = TRUE;
  self->generation++;
}

/**
 * tally_sse_decoder_get_retry:
 * @self: a decoder
 *
 * Returns the reconnection time of the last valid `retry` field (a value
 * made of ASCII digits only; values beyond %G_MAXINT64 are ignored).
 *
 * Returns: the reconnection time in milliseconds, or -1 when the stream
 *   has not set one
 */
gint64
tally_sse_decoder_get_retry (TallySseDecoder *self)
{
  g_return_val_if_fail (self != NULL, -1);

  return self->retry;
}

/* Whether @len bytes at @str are valid UTF-8 without NUL bytes. Event data
 * is mostly ASCII: whole words without a byte >= 0x80 and without a zero
 * byte are skipped eight bytes at a time, and g_utf8_validate() (which
 * refuses NUL within a given length) checks the rest from the first word
 * that has either. */
static gboolean
is_utf8_without_nul (const char *str,
                     gsize       len)
{
  const guint64 ones = G_GUINT64_CONSTANT (0x0101010101010101);
  const guint64 highs = G_GUINT64_CONSTANT (0x8080808080808080);
  gsize i = 0;

  for (; i + sizeof (guint64) <= len; i += sizeof (guint64))
    {
      guint64 word;

      memcpy (&word, str + i, sizeof word);
      /* A byte >= 0x80, or a zero byte (the classic has-zero-byte test). */
      if ((word & highs) != 0 || ((word - ones) & ~word & highs) != 0)
        break;
    }

  return g_utf8_validate (str + i, len - i, NULL);
}

/* Makes @str valid UTF-8 without NUL bytes. Returns @str itself when it
 * already is, else a new string stored in @tmp. */
static const char *
ensure_utf8 (const GString  *str,
             char          **tmp)
{
  if (is_utf8_without_nul (str->str, str->len))
    return str->str;

  *tmp = g_utf8_make_valid (str->str, str->len);
  return *tmp;
}

/* Returns TRUE when the callback reset the decoder. */
static gboolean
dispatch (TallySseDecoder *self)
{
  g_autofree char *data_tmp = NULL;
  g_autofree char *event_tmp = NULL;
  g_autofree char *id_tmp = NULL;
  TallySseEvent event;
  guint generation = self->generation;

  if (self->data->len == 0)
    {
      g_string_truncate (self->event_type, 0);
      return FALSE;
    }

  /* Every data line appended a "\n"; the last one is not part of the data. */
  g_string_truncate (self->data, self->data->len - 1);

  event.data = ensure_utf8 (self->data, &data_tmp);
  event.data_len = data_tmp != NULL ? strlen (data_tmp) : self->data->len;
  event.event = self->event_type->len > 0 ? ensure_utf8 (self->event_type, &event_tmp) : NULL;
  event.id = self->last_event_id->len > 0 ? ensure_utf8 (self->last_event_id, &id_tmp) : NULL;

  self->func (&event, self->user_data);

  if (generation != self->generation)
    return TRUE;

  g_string_truncate (self->data, 0);
  g_string_truncate (self->event_type, 0);
  return FALSE;
}

static gboolean
field_is (const guint8 *name,
          gsize         name_len,
          const char   *expected)
{
  gsize len = strlen (expected);

  return name_len == len && memcmp (name, expected, len) == 0;
}

static void
set_retry (TallySseDecoder *self,
           const guint8    *value,
           gsize            len)
{
  gint64 retry = 0;

  if (len == 0)
    return;

  for (gsize i = 0; i < len; i++)
    {
      int digit;

      if (value[i] < '0' || value[i] > '9')
        return;

      digit = value[i] - '0';
      if (retry > (G_MAXINT64 - digit) / 10)
        return;

      retry = retry * 10 + digit;
    }

  self->retry = retry;
}

/* Interprets one complete line (without its line ending). Returns TRUE when
 * a callback reset the decoder. */
static gboolean
process_line (TallySseDecoder *self,
              const guint8    *line,
              gsize            len)
{
  const guint8 *colon;
  const guint8 *value;
  gsize name_len;
  gsize value_len;

  if (len == 0)
    return dispatch (self);

  if (line[0] == ':')
    return FALSE;

  colon = memchr (line, ':', len);
  if (colon != NULL)
    {
      name_len = colon - line;
      value = colon + 1;
      value_len = len - name_len - 1;
      if (value_len > 0 && value[0] == ' ')
        {
          value++;
          value_len--;
        }
    }
  else
    {
      name_len = len;
      value = line + len;
      value_len = 0;
    }

  if (field_is (line, name_len, "data"))
    {
      g_string_append_len (self->data, (const char *) value, value_len);
      g_string_append_c (self->data, '\n');
    }
  else if (field_is (line, name_len, "event"))
    {
      g_string_truncate (self->event_type, 0);
      g_string_append_len (self->event_type, (const char *) value, value_len);
    }
  else if (field_is (line, name_len, "id"))
    {
      if (memchr (value, '\0', value_len) == NULL)
        {
          g_string_truncate (self->last_event_id, 0);
          g_string_append_len (self->last_event_id, (const char *) value, value_len);
        }
    }
  else if (field_is (line, name_len, "retry"))
    {
      set_retry (self, value, value_len);
    }

  return FALSE;
}

/**
 * tally_sse_decoder_feed:
 * @self: a decoder
 * @data: (array length=len): the next bytes of the stream
 * @len: the number of bytes in @data
 *
 * Interprets @data, calling the event callback (synchronously) for every
 * event completed by a blank line. Bytes of an unfinished line are kept for
 * the next call.
 */
void
tally_sse_decoder_feed (TallySseDecoder *self,
                        const guint8    *data,
                        gsize            len)
{
  const guint8 *next_lf;
  const guint8 *next_cr;
  const guint8 *end;
  const guint8 *p;

  g_return_if_fail (self != NULL);
  g_return_if_fail (data != NULL || len == 0);

  if (len == 0)
    return;

  if (self->at_start)
    {
      /* The BOM may itself be split across calls: hold back a prefix of it
       * until it is complete or proven not to be one. */
      gsize have = self->line->len;
      gsize take = MIN (len, sizeof utf8_bom - have);

      g_byte_array_append (self->line, data, take);
      data += take;
      len -= take;

      if (memcmp (self->line->data, utf8_bom, self->line->len) == 0)
        {
          if (self->line->len < sizeof utf8_bom)
            return;
          g_byte_array_set_size (self->line, 0);
          self->at_start = FALSE;
        }
      else
        {
          g_autoptr(GByteArray) held = self->line;

          /* Not a BOM: interpret the held bytes as ordinary input. */
          self->line = g_byte_array_new ();
          self->at_start = FALSE;
          tally_sse_decoder_feed (self, held->data, held->len);
          /* The recursive call may have reset the decoder; then the rest
           * of the input belongs to the old stream and is dropped. */
          if (self->at_start)
            return;
        }

      if (len == 0)
        return;
    }

  p = data;
  end = data + len;

  if (self->skip_lf)
    {
      self->skip_lf = FALSE;
      if (*p == '\n')
        p++;
    }

  /* The next LF and the next CR at or after p, or end when there is
   * none; NULL while unknown. */
  next_lf = NULL;
  next_cr = NULL;

  while (p < end)
    {
      const guint8 *eol;
      guint generation;
      gboolean was_reset;

      /* Vectorised searches instead of a loop over every byte. Each result
       * is kept until p passes it, so a stream with LF endings only looks
       * for a CR once per feed (and one with CR endings for an LF), and no
       * byte is searched twice for the same character. */
      if (next_lf == NULL || next_lf < p)
        {
          next_lf = memchr (p, '\n', end - p);
          if (next_lf == NULL)
            next_lf = end;
        }
      if (next_cr == NULL || next_cr < p)
        {
          next_cr = memchr (p, '\r', end - p);
          if (next_cr == NULL)
            next_cr = end;
        }
      eol = MIN (next_lf, next_cr);

      if (eol == end)
        {
          g_byte_array_append (self->line, p, end - p);
          break;
        }

      generation = self->generation;

      if (self->line->len > 0)
        {
          g_byte_array_append (self->line, p, eol - p);
          was_reset = process_line (self, self->line->data, self->line->len);
          if (!was_reset)
            g_byte_array_set_size (self->line, 0);
        }
      else
        {
          was_reset = process_line (self, p, eol - p);
        }

      if (was_reset || generation != self->generation)
        return;

      p = eol + 1;
      if (*eol == '\r')
        {
          if (p == end)
            self->skip_lf = TRUE;
          else if (*p == '\n')
            p++;
        }
    }
}

/**
 * tally_sse_decoder_finish:
 * @self: a decoder
 *
 * Tells the decoder that the stream has ended. An unterminated last line is
 * interpreted as if it had a line ending, and then — deviating from the
 * HTML standard, see #TallySseDecoder — a pending event with a non-empty
 * data buffer is dispatched even though no blank line ended it.
 *
 * Afterwards the decoder holds no pending line or event; call
 * tally_sse_decoder_reset() before feeding an unrelated stream.
 */
void
tally_sse_decoder_finish (TallySseDecoder *self)
{
  guint generation;

  g_return_if_fail (self != NULL);

  generation = self->generation;

  if (self->line->len > 0)
    {
      g_autoptr(GByteArray) line = self->line;

      self->line = g_byte_array_new ();
      self->at_start = FALSE;
      if (process_line (self, line->data, line->len) || generation != self->generation)
        return;
    }

  self->skip_lf = FALSE;
  dispatch (self);
}
