/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * File names as Glob and Grep print them and Read, Write and Edit take them
 * back: a name that could forge an output line (a newline, a control
 * character, invalid UTF-8) is printed quoted with escapes
 * (docs/security.md, "Tool input"). Split from tally-tool.c, which keeps
 * the base class and path resolution.
 */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-tool.h"
#include "tally-tool-private.h"

#include <string.h>

/* Characters that make a file name print in its quoted form: control
 * characters (C0, DEL, C1), the Unicode line and paragraph separators, and
 * the bidirectional controls that can make a name read as another. */
static gboolean
needs_escape (gunichar c)
{
  return c < 0x20 || (c >= 0x7f && c < 0xa0) ||
         c == 0x2028 || c == 0x2029 || c == 0x061c || c == 0x200e || c == 0x200f ||
         (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/**
 * tally_tool_escape_path:
 * @path: a file path as the file system gives it: any bytes but NUL, not
 *   necessarily UTF-8
 * @quote_colons: also quote a path that holds a `:` (for `Grep`, whose
 *   lines are `path:line:text`)
 *
 * Prints a path so that it takes exactly one line of a tool result and can
 * be handed back to any file tool. A path that is valid UTF-8, holds no
 * control character (C0, DEL, C1, U+2028, U+2029) and no bidirectional
 * control, does not start with `"` and has no blank at either end (and no
 * `:` when @quote_colons) comes back unchanged. Any other is written in
 * double quotes with backslash escapes: `\"`, `\\`, `\n`, `\t`, `\r`,
 * `\xHH` for any other byte below 0x20, for 0x7F and for every byte that is
 * not part of valid UTF-8, and `\uHHHH` for the other characters above.
 * tally_tool_unescape_path() reverses it, and every path a tool resolves
 * goes through that, so Read opens what Glob and Grep list
 * (docs/security.md, "Tool input").
 *
 * Returns: (transfer full): the path as one line of valid UTF-8
 */
char *
tally_tool_escape_path (const char *path,
                        gboolean    quote_colons)
{
  GString *out;
  const char *p;
  const char *end;
  gsize len;
  gboolean quote;

  g_return_val_if_fail (path != NULL, NULL);

  len = strlen (path);
  end = path + len;
  quote = path[0] == '"' || g_ascii_isspace (path[0]) ||
          (len > 0 && g_ascii_isspace (path[len - 1])) ||
          (quote_colons && strchr (path, ':') != NULL) ||
          !g_utf8_validate_len (path, len, NULL);

  for (p = path; !quote && p < end; p = g_utf8_next_char (p))
    quote = needs_escape (g_utf8_get_char (p));

  if (!quote)
    return g_strdup (path);

  out = g_string_sized_new (len + 2);
  g_string_append_c (out, '"');
  for (p = path; p < end;)
    {
      gunichar c = g_utf8_get_char_validated (p, end - p);

      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_printf (out, "\\x%02X", (guchar) *p);
          p++;
          continue;
        }

      switch (c)
        {
        case '"':
          g_string_append (out, "\\\"");
          break;
        case '\\':
          g_string_append (out, "\\\\");
          break;
        case '\n':
          g_string_append (out, "\\n");
          break;
        case '\t':
          g_string_append (out, "\\t");
          break;
        case '\r':
          g_string_append (out, "\\r");
          break;
        default:
          if (c < 0x20 || c == 0x7f)
            g_string_append_printf (out, "\\x%02X", c);
          else if (needs_escape (c))
            g_string_append_printf (out, "\\u%04X", c);
          else
            g_string_append_len (out, p, g_utf8_next_char (p) - p);
          break;
        }
      p = g_utf8_next_char (p);
    }
  g_string_append_c (out, '"');

  return g_string_free (out, FALSE);
}

static int
hex_value (char c)
{
  return g_ascii_isxdigit (c) ? g_ascii_xdigit_value (c) : -1;
}

/**
 * tally_tool_unescape_path:
 * @text: a path as a model gives it: plain, or in the quoted form of
 *   tally_tool_escape_path()
 * @error: return location for a #GError
 *
 * Turns a quoted path (one that starts with `"`) back into its bytes; any
 * other text is returned as it is. Since a name that starts with `"` is
 * always printed quoted, a quoted path never means a file whose name has
 * the quotes. Pure.
 *
 * Errors: %TALLY_TOOL_ERROR_INVALID_INPUT when @text starts with `"` but is
 * not a complete quoted path: no closing quote, text after it, an unknown
 * escape, or an escape that stands for NUL or a UTF-16 surrogate.
 *
 * Returns: (transfer full): the path, or %NULL with @error set
 */
char *
tally_tool_unescape_path (const char  *text,
                          GError     **error)
{
  g_autoptr(GString) out = NULL;
  const char *p;

  g_return_val_if_fail (text != NULL, NULL);

  if (text[0] != '"')
    return g_strdup (text);

  out = g_string_new (NULL);
  for (p = text + 1; *p != '"'; p++)
    {
      if (*p == '\0')
        goto invalid;

      if (*p != '\\')
        {
          g_string_append_c (out, *p);
          continue;
        }

      p++;
      switch (*p)
        {
        case '"':
        case '\\':
          g_string_append_c (out, *p);
          break;
        case 'n':
          g_string_append_c (out, '\n');
          break;
        case 't':
          g_string_append_c (out, '\t');
          break;
        case 'r':
          g_string_append_c (out, '\r');
          break;
        case 'x':
          {
            int hi = hex_value (p[1]);
            int lo = hi < 0 ? -1 : hex_value (p[2]);

            if (lo < 0 || (hi == 0 && lo == 0))
              goto invalid;
            g_string_append_c (out, (char) (hi * 16 + lo));
            p += 2;
          }
          break;
        case 'u':
          {
            gunichar c = 0;

            for (guint i = 1; i <= 4; i++)
              {
                int digit = hex_value (p[i]);

                if (digit < 0)
                  goto invalid;
                c = c * 16 + digit;
              }
            if (c == 0 || (c >= 0xd800 && c <= 0xdfff))
              goto invalid;
            g_string_append_unichar (out, c);
            p += 4;
          }
          break;
        default:
          goto invalid;
        }
    }

  if (p[1] != '\0')
    goto invalid;

  return g_string_free (g_steal_pointer (&out), FALSE);

invalid:
  g_set_error (error, TALLY_TOOL_ERROR, TALLY_TOOL_ERROR_INVALID_INPUT,
               "The path %s starts with a double quote but is not a quoted name as Glob and Grep "
               "print it (\"…\" with \\\" \\\\ \\n \\t \\r \\xHH \\uHHHH escapes); copy the name "
               "exactly as listed, or give the path without quotes", text);
  return NULL;
}
