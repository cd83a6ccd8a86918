/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-message-stream-private.h"

#include <string.h>

/*
 * The fast path of #TallyMessageStream: a small validating scanner for the
 * events that make up almost all of a streamed response (docs/protocol.md
 * §9) — `content_block_delta` with a `text_delta`, `thinking_delta`,
 * `input_json_delta` or `signature_delta`, and `ping` — that decodes the
 * delta's string straight from the event's text, without building a JSON
 * tree.
 *
 * It accepts only the exact compact form the API sends:
 *
 *   {"type":"content_block_delta","index":N,"delta":{"type":T,F:"…"}}
 *   {"type":"ping"}
 *
 * with no white space, the members in this order and nothing more. Of the
 * JSON grammar (RFC 8259) it implements:
 *
 * - numbers (§6): only the index, as `0` or a digit 1–9 followed by at
 *   most eight digits (no sign, fraction or exponent);
 * - strings (§7): any character from U+0020 up except `"` and `\`, as the
 *   UTF-8 of the event (the SSE decoder hands on valid UTF-8 only, §8.1);
 *   the two-character escapes `\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t`; and
 *   `\uXXXX` with four hexadecimal digits of either case, where a high
 *   surrogate (D800–DBFF) must be followed by a `\uXXXX` low surrogate
 *   (DC00–DFFF) and the pair stands for one character beyond U+FFFF.
 *
 * Anything else is not refused but handed back: the caller then applies
 * the event with the full json-glib path, which makes every decision. That
 * covers malformed JSON, white space, other member orders, extra members,
 * other event and delta types, unescaped control characters, `\u0000`, and
 * a lone surrogate escape (which json-glib decodes to bytes that
 * tally_message_stream_make_strings_valid() then repairs — the fast path
 * does not try to imitate that). The scanner also hands back every event
 * the full path would refuse or ignore — before `message_start`, after
 * `message_stop`, for an unknown or stopped block, a delta that does not
 * fit its block — so the two paths cannot disagree on an error: only
 * events the full path applies successfully are ever applied here, and they
 * are applied with the same state changes and signals.
 */

/* The hot delta shapes: the delta's "type" and the one member after it. */
typedef struct {
  const char *shape;
  gsize       shape_len;
  BlockKind   kind;
  /* The signal that carries the decoded text, or N_SIGNALS for none. */
  guint       signal;
  /* The text replaces the block's signature instead of adding to its
   * text. */
  gboolean    is_signature;
} HotDelta;

#define SHAPE(type, member) type "\",\"" member "\":\"", sizeof (type "\",\"" member "\":\"") - 1

static const HotDelta hot_deltas[] = {
  { SHAPE ("text_delta", "text"), BLOCK_TEXT, TEXT_DELTA, FALSE },
  { SHAPE ("input_json_delta", "partial_json"), BLOCK_TOOL_USE, N_SIGNALS, FALSE },
  { SHAPE ("thinking_delta", "thinking"), BLOCK_THINKING, THINKING_DELTA, FALSE },
  { SHAPE ("signature_delta", "signature"), BLOCK_THINKING, N_SIGNALS, TRUE },
};

#undef SHAPE

static const char delta_head[] = "{\"type\":\"content_block_delta\",\"index\":";
static const char delta_middle[] = ",\"delta\":{\"type\":\"";
static const char ping_event[] = "{\"type\":\"ping\"}";

/* Whether the @len bytes at @p start with the literal @lit (a string
 * constant: its size includes the NUL). */
#define HAS_LITERAL(p, end, lit) \
  ((gsize) ((end) - (p)) >= sizeof (lit) - 1 && memcmp ((p), (lit), sizeof (lit) - 1) == 0)

static int
hex_value (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Reads `\uXXXX` at @p (at the backslash). Returns the code unit, or -1
 * when @p does not hold one. */
static int
read_unicode_escape (const char *p,
                     const char *end)
{
  int value = 0;

  if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
    return -1;

  for (int i = 2; i < 6; i++)
    {
      int digit = hex_value (p[i]);

      if (digit < 0)
        return -1;
      value = value * 16 + digit;
    }

  return value;
}

/* Decodes the JSON string that starts after its opening quote at @p into
 * @out (RFC 8259 §7, the subset listed at the top of this file). Returns
 * the position after the closing quote, or %NULL when the string is not
 * one the fast path takes; @out is then partly written. */
static const char *
scan_string (const char *p,
             const char *end,
             GString    *out)
{
  const char *run = p;

  while (p < end)
    {
      guchar c = (guchar) *p;
      gunichar ch;
      int unit;

      if (c >= 0x20 && c != '"' && c != '\\')
        {
          p++;
          continue;
        }

      g_string_append_len (out, run, p - run);

      if (c == '"')
        return p + 1;
      if (c < 0x20 || end - p < 2)
        return NULL;

      switch (p[1])
        {
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '/': ch = '/'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u':
          unit = read_unicode_escape (p, end);
          if (unit <= 0 || (unit >= 0xDC00 && unit <= 0xDFFF))
            return NULL;
          if (unit >= 0xD800 && unit <= 0xDBFF)
            {
              int low = read_unicode_escape (p + 6, end);

              if (low < 0xDC00 || low > 0xDFFF)
                return NULL;
              ch = 0x10000 + (((gunichar) unit - 0xD800) << 10) + ((gunichar) low - 0xDC00);
              p += 6;
            }
          else
            {
              ch = (gunichar) unit;
            }
          p += 4;
          break;
        default:
          return NULL;
        }

      g_string_append_unichar (out, ch);
      p += 2;
      run = p;
    }

  return NULL;
}

/* Reads the index: `0` or 1–9 followed by up to eight digits. */
static const char *
scan_index (const char *p,
            const char *end,
            guint      *index)
{
  const char *start = p;
  guint value = 0;

  while (p < end && *p >= '0' && *p <= '9' && p - start < 9)
    value = value * 10 + (guint) (*p++ - '0');

  if (p == start || (*start == '0' && p - start > 1))
    return NULL;
  if (p < end && *p >= '0' && *p <= '9')
    return NULL;

  *index = value;
  return p;
}

/**
 * tally_message_stream_apply_fast:
 * @self: a #TallyMessageStream without a stored error
 * @event_name: (nullable): the SSE `event:` name
 * @data: the event's data, valid UTF-8 without NUL bytes
 * @len: the length of @data in bytes
 *
 * Applies one event with the fast scanner described at the top of this
 * file, when it is one of the hot shapes and the full path would apply it
 * successfully. Nothing is changed and no signal is emitted when it
 * returns %FALSE.
 *
 * Returns: %TRUE when the event was applied (a ping: ignored); %FALSE when
 *   the caller must apply it with tally_message_stream_apply_event()
 */
gboolean
tally_message_stream_apply_fast (TallyMessageStream *self,
                                 const char         *event_name,
                                 const char         *data,
                                 gsize               len)
{
  const char *end = data + len;
  const char *p = data;
  const HotDelta *hot = NULL;
  g_autoptr(GString) text = NULL;
  Block *block;
  guint index;

  if (event_name == NULL && len == sizeof ping_event - 1 && memcmp (data, ping_event, len) == 0)
    {
      self->n_fast_events++;
      return TRUE;
    }

  if (event_name != NULL && strcmp (event_name, "content_block_delta") != 0)
    return FALSE;

  /* The full path refuses deltas outside a message. */
  if (!self->started || self->complete)
    return FALSE;

  if (!HAS_LITERAL (p, end, delta_head))
    return FALSE;
  p += sizeof delta_head - 1;

  p = scan_index (p, end, &index);
  if (p == NULL || !HAS_LITERAL (p, end, delta_middle))
    return FALSE;
  p += sizeof delta_middle - 1;

  for (guint i = 0; i < G_N_ELEMENTS (hot_deltas); i++)
    {
      if ((gsize) (end - p) >= hot_deltas[i].shape_len &&
          memcmp (p, hot_deltas[i].shape, hot_deltas[i].shape_len) == 0)
        {
          hot = &hot_deltas[i];
          break;
        }
    }
  if (hot == NULL)
    return FALSE;
  p += hot->shape_len;

  /* Unknown and stopped blocks are errors of the full path; a delta that
   * does not fit its block is ignored there. */
  if (index >= self->blocks->len)
    return FALSE;
  block = g_ptr_array_index (self->blocks, index);
  if (block->stopped || block->kind != hot->kind)
    return FALSE;

  /* The decoded text goes to a buffer of its own, taken from the stream
   * for the emission, so that a handler that feeds the stream again (or
   * starts a new attempt) cannot change the text other handlers see. */
  text = self->scan_buffer != NULL ? g_steal_pointer (&self->scan_buffer) : g_string_sized_new (256);
  g_string_truncate (text, 0);

  p = scan_string (p, end, text);
  if (p == NULL || end - p != 2 || p[0] != '}' || p[1] != '}')
    {
      if (self->scan_buffer == NULL)
        self->scan_buffer = g_steal_pointer (&text);
      return FALSE;
    }

  self->n_fast_events++;

  if (hot->is_signature)
    {
      g_free (block->signature);
      block->signature = g_strndup (text->str, text->len);
    }
  else
    {
      g_string_append_len (block->text, text->str, text->len);
    }

  if (hot->signal != N_SIGNALS)
    g_signal_emit (self, tally_message_stream_signals[hot->signal], 0, index, text->str);

  if (self->scan_buffer == NULL)
    self->scan_buffer = g_steal_pointer (&text);

  return TRUE;
}
