/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <string.h>

#include "tally-html-entity.h"

/* tally_html_entity_append(), the one decoder the window's Markdown
 * renderer and the PDF report share (issue 11). */

static char *
decode (const char *entity)
{
  GString *out = g_string_new ("x");

  tally_html_entity_append (out, entity, strlen (entity));
  return g_string_free (out, FALSE);
}

static void
check (const char *entity,
       const char *expected)
{
  g_autofree char *got = decode (entity);
  g_autofree char *want = g_strconcat ("x", expected, NULL);

  g_assert_cmpstr (got, ==, want);
}

static void
test_named (void)
{
  check ("&amp;", "&");
  check ("&lt;", "<");
  check ("&gt;", ">");
  check ("&quot;", "\"");
  check ("&apos;", "'");
  check ("&nbsp;", "\xc2\xa0");
  check ("&mdash;", "\xe2\x80\x94");
  check ("&hellip;", "\xe2\x80\xa6");
  check ("&euro;", "\xe2\x82\xac");
  /* The renderer knew these and the PDF did not: now both do. */
  check ("&rarr;", "\xe2\x86\x92");
  check ("&frac12;", "\xc2\xbd");
}

static void
test_numeric (void)
{
  check ("&#35;", "#");
  check ("&#x23;", "#");
  check ("&#X23;", "#");
  check ("&#233;", "\xc3\xa9");
  check ("&#x1F600;", "\xf0\x9f\x98\x80");
  check ("&#x10FFFF;", "\xf4\x8f\xbf\xbf");
}

static void
test_replacement (void)
{
  /* Zero, a surrogate, and values past U+10FFFF (one that a 32-bit
   * wrap would have made a valid character) become U+FFFD. */
  check ("&#0;", "\xef\xbf\xbd");
  check ("&#xD800;", "\xef\xbf\xbd");
  check ("&#x110000;", "\xef\xbf\xbd");
  check ("&#4294967361;", "\xef\xbf\xbd");
}

static void
test_unknown (void)
{
  /* An unknown name stays as it was written, and so does a name that is
   * only the start of a known one. */
  check ("&bogus;", "&bogus;");
  check ("&am;", "&am;");
  check ("&ampx;", "&ampx;");

  /* Only @size bytes are read. */
  {
    GString *out = g_string_new (NULL);

    tally_html_entity_append (out, "&lt;&gt;", 4);
    g_assert_cmpstr (out->str, ==, "<");
    g_string_free (out, TRUE);
  }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/html-entity/named", test_named);
  g_test_add_func ("/tally/html-entity/numeric", test_numeric);
  g_test_add_func ("/tally/html-entity/replacement", test_replacement);
  g_test_add_func ("/tally/html-entity/unknown", test_unknown);

  return g_test_run ();
}
