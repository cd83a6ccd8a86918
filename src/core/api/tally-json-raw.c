/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-json-raw.h"

#include <string.h>

/*
 * Reading and editing JSON text without re-serialising it. Assistant
 * content goes back to the API byte for byte (docs/protocol.md §4), so when
 * Tally must look at or change one member of a block it works on the text:
 * these scanners find a member's value as written and can swap it for
 * another, leaving every other byte as it was.
 */

static const char *
skip_json_space (const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  return p;
}

/* @p points at '"'; returns the position after the closing quote. */
static const char *
skip_json_string (const char *p)
{
  p++;
  while (*p != '\0' && *p != '"')
    {
      if (*p == '\\' && p[1] != '\0')
        p++;
      p++;
    }

  return *p == '"' ? p + 1 : NULL;
}

static const char *
skip_json_value (const char *p)
{
  if (*p == '"')
    return skip_json_string (p);

  if (*p == '{' || *p == '[')
    {
      guint depth = 0;

      while (*p != '\0')
        {
          if (*p == '"')
            {
              p = skip_json_string (p);
              if (p == NULL)
                return NULL;
              continue;
            }

          if (*p == '{' || *p == '[')
            depth++;
          else if ((*p == '}' || *p == ']') && --depth == 0)
            return p + 1;

          p++;
        }

      return NULL;
    }

  while (*p != '\0' && strchr (",}] \t\r\n", *p) == NULL)
    p++;

  return p;
}

/**
 * tally_json_raw_find_member:
 * @json: the text of a JSON object, already known to be valid JSON (for
 *   example because json-glib parsed it)
 * @key: a member name
 * @value: (out) (transfer none): where the member's value starts in @json
 * @value_len: (out): the length of that value in bytes
 *
 * Finds the text of member @key of the JSON object that starts at @json
 * (leading white space allowed), byte for byte as it was written. Only
 * the object's own members are searched, not nested ones. A key written
 * with escapes is not found; callers then fall back to re-serialising the
 * parsed node.
 *
 * Returns: %TRUE when the member was found
 */
gboolean
tally_json_raw_find_member (const char  *json,
                            const char  *key,
                            const char **value,
                            gsize       *value_len)
{
  gsize key_len = strlen (key);
  const char *p = skip_json_space (json);

  if (*p != '{')
    return FALSE;
  p++;

  for (;;)
    {
      const char *key_start;
      const char *key_end;
      const char *value_start;

      p = skip_json_space (p);
      if (*p != '"')
        return FALSE;

      key_start = p + 1;
      p = skip_json_string (p);
      if (p == NULL)
        return FALSE;
      key_end = p - 1;

      p = skip_json_space (p);
      if (*p != ':')
        return FALSE;
      p = skip_json_space (p + 1);

      value_start = p;
      p = skip_json_value (p);
      if (p == NULL || p == value_start)
        return FALSE;

      if ((gsize) (key_end - key_start) == key_len && memcmp (key_start, key, key_len) == 0)
        {
          *value = value_start;
          *value_len = p - value_start;
          return TRUE;
        }

      p = skip_json_space (p);
      if (*p != ',')
        return FALSE;
      p++;
    }
}

/**
 * tally_json_raw_replace_member:
 * @json: the text of a JSON object, already known to be valid JSON
 * @key: the name of one of its own members
 * @value_json: the new value as JSON text (for example `"{}"` or a quoted
 *   string)
 *
 * Replaces the value of member @key, keeping every other byte of @json.
 *
 * Returns: (transfer full) (nullable): the new text, or %NULL when @key was
 *   not found (see tally_json_raw_find_member())
 */
char *
tally_json_raw_replace_member (const char *json,
                               const char *key,
                               const char *value_json)
{
  const char *value;
  gsize value_len;
  GString *out;

  g_return_val_if_fail (json != NULL, NULL);
  g_return_val_if_fail (key != NULL, NULL);
  g_return_val_if_fail (value_json != NULL, NULL);

  if (!tally_json_raw_find_member (json, key, &value, &value_len))
    return NULL;

  out = g_string_new_len (json, value - json);
  g_string_append (out, value_json);
  g_string_append (out, value + value_len);
  return g_string_free (out, FALSE);
}

/**
 * tally_json_raw_repair_exponents:
 * @json: JSON text as json-glib 1.6's generator writes it
 *
 * Drops the `.0` that json-glib 1.6 (Debian 12) writes after the exponent
 * of a double with no point in its `%.17g` form: 1e20 comes out as
 * `1e+20.0`, which is not JSON (RFC 8259 §6) and which no parser reads
 * back. Only numbers change; strings are copied as they are.
 *
 * Returns: (transfer full): the repaired text
 */
char *
tally_json_raw_repair_exponents (const char *json)
{
  GString *out;
  const char *p = json;

  g_return_val_if_fail (json != NULL, NULL);

  out = g_string_sized_new (strlen (json));
  while (*p != '\0')
    {
      if (*p == '"')
        {
          const char *end = skip_json_string (p);

          if (end == NULL)
            end = p + strlen (p);
          g_string_append_len (out, p, end - p);
          p = end;
        }
      else if ((*p == 'e' || *p == 'E') && (p[1] == '+' || p[1] == '-' || g_ascii_isdigit (p[1])))
        {
          /* An exponent: its sign and digits, then a `.0` dropped. */
          g_string_append_c (out, *p++);
          if (*p == '+' || *p == '-')
            g_string_append_c (out, *p++);
          while (g_ascii_isdigit (*p))
            g_string_append_c (out, *p++);
          if (p[0] == '.' && p[1] == '0' && !g_ascii_isdigit (p[2]))
            p += 2;
        }
      else
        g_string_append_c (out, *p++);
    }
  return g_string_free (out, FALSE);
}
