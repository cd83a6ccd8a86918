/* SPDX-License-Identifier: GPL-3.0-or-later */

/* The one decoder of HTML character references for the Markdown that is
 * shown (the window's renderer) and printed (the PDF report): md4c hands
 * both an entity as it stands in the source and leaves the decoding to its
 * caller (CommonMark §6.2, "Entity and numeric character references"). */

#include "config.h"

#include <string.h>

#include "tally-html-entity.h"

#define REPLACEMENT "\xef\xbf\xbd"   /* U+FFFD */

typedef struct
{
  const char *name;
  gunichar    ch;
} NamedEntity;

/* The named entities an assistant is likely to write; others stay verbatim. */
static const NamedEntity named_entities[] = {
  { "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' },
  { "apos", '\'' }, { "nbsp", 0x00a0 }, { "copy", 0x00a9 }, { "reg", 0x00ae },
  { "trade", 0x2122 }, { "mdash", 0x2014 }, { "ndash", 0x2013 },
  { "hellip", 0x2026 }, { "laquo", 0x00ab }, { "raquo", 0x00bb },
  { "ldquo", 0x201c }, { "rdquo", 0x201d }, { "lsquo", 0x2018 },
  { "rsquo", 0x2019 }, { "times", 0x00d7 }, { "divide", 0x00f7 },
  { "deg", 0x00b0 }, { "plusmn", 0x00b1 }, { "middot", 0x00b7 },
  { "bull", 0x2022 }, { "euro", 0x20ac }, { "pound", 0x00a3 },
  { "yen", 0x00a5 }, { "cent", 0x00a2 }, { "sect", 0x00a7 },
  { "para", 0x00b6 }, { "larr", 0x2190 }, { "rarr", 0x2192 },
  { "uarr", 0x2191 }, { "darr", 0x2193 }, { "harr", 0x2194 },
  { "le", 0x2264 }, { "ge", 0x2265 }, { "ne", 0x2260 }, { "asymp", 0x2248 },
  { "infin", 0x221e }, { "minus", 0x2212 }, { "check", 0x2713 },
  { "shy", 0x00ad }, { "thinsp", 0x2009 }, { "ensp", 0x2002 },
  { "emsp", 0x2003 }, { "micro", 0x00b5 }, { "frac12", 0x00bd },
  { "frac14", 0x00bc }, { "frac34", 0x00be }, { "sup2", 0x00b2 },
  { "sup3", 0x00b3 },
};

/**
 * tally_html_entity_append:
 * @out: the string to append to
 * @entity: (array length=size): an entity as md4c reports it, from its `&`
 *   to its `;`: "&amp;", "&#35;" or "&#x23;"; need not be nul-terminated
 * @size: the entity's length in bytes
 *
 * Appends to @out the UTF-8 of the character @entity stands for. A
 * numeric reference (decimal or hexadecimal) that is zero, above U+10FFFF
 * or a surrogate appends U+FFFD REPLACEMENT CHARACTER, as CommonMark asks.
 * A named entity outside the table of those an assistant is likely to
 * write (the five of XML, typography, arrows, maths signs, currencies) is
 * appended as it stands, so the text still shows what was written.
 */
void
tally_html_entity_append (GString    *out,
                          const char *entity,
                          gsize       size)
{
  g_return_if_fail (out != NULL);
  g_return_if_fail (entity != NULL || size == 0);

  if (size >= 4 && entity[0] == '&' && entity[1] == '#')
    {
      guint64 value = 0;
      gboolean hex = entity[2] == 'x' || entity[2] == 'X';
      gsize i = hex ? 3 : 2;

      for (; i + 1 < size && value <= 0x10ffff; i++)
        {
          int digit = hex ? g_ascii_xdigit_value (entity[i]) : g_ascii_digit_value (entity[i]);

          if (digit < 0)
            break;
          value = value * (hex ? 16 : 10) + (guint64) digit;
        }

      if (value == 0 || value > 0x10ffff || !g_unichar_validate ((gunichar) value))
        g_string_append (out, REPLACEMENT);
      else
        g_string_append_unichar (out, (gunichar) value);
      return;
    }

  if (size > 2 && entity[0] == '&' && entity[size - 1] == ';')
    {
      for (guint i = 0; i < G_N_ELEMENTS (named_entities); i++)
        {
          gsize len = strlen (named_entities[i].name);

          if (len == size - 2 && memcmp (entity + 1, named_entities[i].name, len) == 0)
            {
              g_string_append_unichar (out, named_entities[i].ch);
              return;
            }
        }
    }

  g_string_append_len (out, entity, (gssize) size);
}
