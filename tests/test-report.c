/* SPDX-License-Identifier: GPL-3.0-or-later */

/* libtally-report and tally-cli's --report and --export in html and pdf
 * (docs/reports.md, issue 12 §3): the HTML is well-formed and
 * self-contained with raw HTML escaped and SVGs re-drawn, a missing chart
 * shows a placeholder, the PDF's text, pages and repeated table header
 * (read back with pdftotext and pdfinfo), the errors, and the end to end
 * run against the mock: query, chart, report.md, PDF. */

#include "config.h"

#include <cairo.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tally-report.h"
#include "tally-transcript-export.h"
#include "tally-test-mock.h"
#include "tally-test-util.h"

/* {{{ Helpers */

static char *
make_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("tally-report-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

static guint
count (const char *haystack,
       const char *needle)
{
  guint n = 0;

  for (const char *p = strstr (haystack, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

/* Runs a program; returns its exit status, with stdout in @out. */
static int
run (char              **out,
     char              **err,
     const char * const *argv)
{
  g_autoptr(GError) error = NULL;
  int status = -1;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, out, err, &status, &error);
  g_assert_no_error (error);
  return g_spawn_check_wait_status (status, NULL) ? 0 : (WIFEXITED (status) ? WEXITSTATUS (status) : -1);
}

static char *
pdf_text (const char *path,
          int         page)
{
  g_autofree char *number = g_strdup_printf ("%d", page);
  const char *all[] = { "pdftotext", path, "-", NULL };
  const char *one[] = { "pdftotext", "-f", number, "-l", number, path, "-", NULL };
  char *out = NULL;

  g_assert_cmpint (run (&out, NULL, page > 0 ? one : all), ==, 0);
  return out;
}

static int
pdf_pages (const char *path,
           char      **size)
{
  const char *argv[] = { "pdfinfo", path, NULL };
  g_autofree char *out = NULL;
  const char *pages;

  g_assert_cmpint (run (&out, NULL, argv), ==, 0);
  pages = strstr (out, "Pages:");
  g_assert_nonnull (pages);
  if (size != NULL)
    {
      const char *line = strstr (out, "Page size:");
      const char *end;

      g_assert_nonnull (line);
      line += strlen ("Page size:");
      while (*line == ' ')
        line++;
      end = strchr (line, '\n');
      *size = g_strndup (line, end - line);
    }
  return atoi (pages + strlen ("Pages:"));
}

static void
write_png (const char *path,
           int         width,
           int         height)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create (surface);

  cairo_set_source_rgb (cr, 0.9, 0.6, 0.0);
  cairo_paint (cr);
  cairo_destroy (cr);
  g_assert_cmpint (cairo_surface_write_to_png (surface, path), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_destroy (surface);
}

static char *
to_html (const char *dir,
         const char *markdown)
{
  g_autofree char *path = g_build_filename (dir, "report.md", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  char *html;

  g_assert_true (g_file_set_contents (path, markdown, -1, NULL));
  html = tally_report_file_to_html (file, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (html);
  return html;
}

static void
assert_well_formed (const char *html)
{
  static const GMarkupParser parser = { 0 };
  g_autoptr(GMarkupParseContext) context = NULL;
  g_autoptr(GError) error = NULL;
  const char *root;

  g_assert_true (g_str_has_prefix (html, "<!DOCTYPE html>\n"));
  root = html + strlen ("<!DOCTYPE html>\n");
  context = g_markup_parse_context_new (&parser, G_MARKUP_DEFAULT_FLAGS, NULL, NULL);
  g_markup_parse_context_parse (context, root, -1, &error);
  g_assert_no_error (error);
  g_markup_parse_context_end_parse (context, &error);
  g_assert_no_error (error);
}

/* }}} */

/* {{{ HTML */

static const char hostile_svg[] =
  "<?xml version=\"1.0\"?>\n"
  "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
  "width=\"200\" height=\"100\" onload=\"alert('onload')\">\n"
  "<style>@import url(https://evil.example/x.css);</style>\n"
  "<script>alert('script')</script>\n"
  "<rect x=\"0\" y=\"0\" width=\"100\" height=\"100\" fill=\"#0072b2\"/>\n"
  "<image xlink:href=\"https://evil.example/pixel.png\" width=\"10\" height=\"10\"/>\n"
  "<a xlink:href=\"javascript:alert('link')\"><rect x=\"100\" width=\"100\" height=\"100\" fill=\"#e69f00\"/></a>\n"
  "<foreignObject width=\"50\" height=\"50\"><div xmlns=\"http://www.w3.org/1999/xhtml\">foreign</div></foreignObject>\n"
  "</svg>\n";

static void
test_html_self_contained (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *png = g_build_filename (dir, "charts", "pixel.png", NULL);
  g_autofree char *html = NULL;

  tally_test_write_file (dir, "charts/hostile.svg", hostile_svg, -1);
  write_png (png, 40, 20);
  html = to_html (dir,
                  "# Sales & <costs>\n\n"
                  "Raw <script>alert('md')</script> and <img src=x onerror=alert(1)> stay text.\n\n"
                  "<div onclick=\"alert(2)\">a block</div>\n\n"
                  "![Revenue chart](charts/hostile.svg)\n\n"
                  "![A pixel](charts/pixel.png)\n\n"
                  "![Gone](charts/missing.svg)\n\n"
                  "![Secret](../secret.svg)\n\n"
                  "[click](javascript:alert(3)) and [section](#method)\n\n"
                  "| a | b |\n|---|--:|\n| 1 | 2 |\n");

  assert_well_formed (html);
  /* self-contained: nothing to fetch, no script */
  g_assert_null (strstr (html, "http"));
  g_assert_null (strstr (html, "<script"));
  g_assert_null (strstr (html, "alert('onload')"));
  g_assert_null (strstr (html, "alert('script')"));
  g_assert_null (strstr (html, "alert('link')"));
  g_assert_null (strstr (html, "javascript:"));
  g_assert_null (strstr (html, "onload"));
  g_assert_null (strstr (html, "<img src=x"));
  g_assert_null (strstr (html, "<div"));
  g_assert_null (strstr (html, "foreign"));
  g_assert_cmpuint (count (html, "<style"), ==, 1);
  g_assert_nonnull (strstr (html, "<title>Sales &amp; &lt;costs&gt;</title>"));

  /* raw HTML is text */
  g_assert_nonnull (strstr (html, "Raw &lt;script&gt;alert('md')&lt;/script&gt; and &lt;img src=x onerror=alert(1)&gt;"));
  g_assert_nonnull (strstr (html, "&lt;div onclick="));

  /* the SVG is inline, re-drawn: its two rectangles, nothing else of it */
  g_assert_cmpuint (count (html, "<svg class=\"chart\" role=\"img\" aria-label=\"Revenue chart\""), ==, 1);
  g_assert_nonnull (strstr (html, "fill:rgb(0%,44.705883%,69.803923%)"));
  g_assert_nonnull (strstr (html, "fill:rgb(90.196079%,62.352943%,0%)"));
  g_assert_null (strstr (html, "xmlns"));
  g_assert_null (strstr (html, "xlink"));

  /* the PNG as a data: URI */
  g_assert_nonnull (strstr (html, "<img src=\"data:image/png;base64,iVBORw0KGgo"));
  g_assert_nonnull (strstr (html, "alt=\"A pixel\""));

  /* placeholders */
  g_assert_nonnull (strstr (html, "<span class=\"missing\" role=\"img\">Chart not found: charts/missing.svg</span>"));
  g_assert_nonnull (strstr (html, "Image outside the report’s folder: ../secret.svg"));

  /* links: a script target is dropped, a fragment kept */
  g_assert_nonnull (strstr (html, "<a>click</a>"));
  g_assert_nonnull (strstr (html, "<a href=\"#method\">section</a>"));
  g_assert_nonnull (strstr (html, "<th>a</th>"));
  g_assert_nonnull (strstr (html, "<td align=\"right\">2</td>"));

  tally_test_rm_rf (dir);
}

/* A symbolic link under the report's folder that leads out of it (to a
 * file or through a folder) is outside; one that stays inside is shown;
 * a FIFO is refused instead of blocking the export. */
static void
test_html_links_out (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *outside = make_dir ();
  g_autofree char *secret = g_build_filename (outside, "secret.png", NULL);
  g_autofree char *pixel = g_build_filename (dir, "charts", "pixel.png", NULL);
  g_autofree char *leak = g_build_filename (dir, "charts", "leak.png", NULL);
  g_autofree char *via = g_build_filename (dir, "via", NULL);
  g_autofree char *alias = g_build_filename (dir, "charts", "alias.png", NULL);
  g_autofree char *fifo = g_build_filename (dir, "charts", "fifo.png", NULL);
  g_autofree char *html = NULL;

  tally_test_write_file (dir, "charts/.keep", "", 0);
  write_png (secret, 7, 5);
  write_png (pixel, 40, 20);
  g_assert_cmpint (symlink (secret, leak), ==, 0);
  g_assert_cmpint (symlink (outside, via), ==, 0);
  g_assert_cmpint (symlink ("pixel.png", alias), ==, 0);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);

  html = to_html (dir,
                  "![Leak](charts/leak.png)\n\n"
                  "![Via](via/secret.png)\n\n"
                  "![Alias](charts/alias.png)\n\n"
                  "![Fifo](charts/fifo.png)\n");

  assert_well_formed (html);
  g_assert_nonnull (strstr (html, "Image outside the report’s folder: charts/leak.png"));
  g_assert_nonnull (strstr (html, "Image outside the report’s folder: via/secret.png"));
  g_assert_nonnull (strstr (html, "Chart could not be read: charts/fifo.png (not a regular file)"));
  /* only the link inside the folder is embedded */
  g_assert_cmpuint (count (html, "<img src=\"data:image/png;base64,"), ==, 1);
  g_assert_nonnull (strstr (html, "alt=\"Alias\""));

  tally_test_rm_rf (dir);
  tally_test_rm_rf (outside);
}

/* Two SVGs in one page keep their own ids; a remote image is a link. */
static void
test_html_ids_and_remote (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *html = NULL;
  static const char text_svg[] =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"120\" height=\"40\">"
    "<text x=\"5\" y=\"30\" font-size=\"20\">Tally</text></svg>";

  tally_test_write_file (dir, "a.svg", text_svg, -1);
  tally_test_write_file (dir, "b.svg", text_svg, -1);
  html = to_html (dir, "![first](a.svg) ![second](b.svg)\n\n![logo](https://example.org/logo.png)\n");

  assert_well_formed (html);
  g_assert_cmpuint (count (html, "<svg class=\"chart\""), ==, 2);
  g_assert_nonnull (strstr (html, "id=\"r1-"));
  g_assert_nonnull (strstr (html, "id=\"r2-"));
  /* every reference points at an id of its own drawing */
  g_assert_cmpuint (count (html, "href=\"#r"), ==, count (html, "href=\"#r1-") + count (html, "href=\"#r2-"));
  g_assert_nonnull (strstr (html, "<a href=\"https://example.org/logo.png\">logo</a>"));
  g_assert_null (strstr (html, "<img"));

  tally_test_rm_rf (dir);
}

/* }}} */

/* {{{ PDF */

static char *
export_pdf (const char *dir,
            const char *markdown)
{
  g_autofree char *md = g_build_filename (dir, "report.md", NULL);
  char *pdf = g_build_filename (dir, "report.pdf", NULL);
  g_autoptr(GFile) input = g_file_new_for_path (md);
  g_autoptr(GFile) output = g_file_new_for_path (pdf);
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (md, markdown, -1, NULL));
  g_assert_true (tally_report_export_file (input, TALLY_REPORT_FORMAT_PDF, output, NULL, &error));
  g_assert_no_error (error);
  return pdf;
}

static void
test_pdf_text (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *pdf = NULL;
  g_autofree char *text = NULL;
  g_autofree char *size = NULL;

  pdf = export_pdf (dir,
                    "# Quarterly report\n\n"
                    "Minster Yard **earned the most**, with *£214,242.60* in `Q2`.\n\n"
                    "<script>alert(1)</script>\n\n"
                    "- first point\n- second point\n  1. nested one\n\n"
                    "> Quoted remark\n\n"
                    "```sql\nSELECT store\n  FROM sales;\n```\n\n"
                    "---\n\n"
                    "![Gone](charts/missing.svg)\n\n"
                    "| Store | Revenue |\n|---|--:|\n| York | 12.50 |\n");
  g_assert_cmpint (pdf_pages (pdf, &size), ==, 1);
  /* the C locale's paper is A4 */
  g_assert_true (g_str_has_prefix (size, "595.276 x 841.89"));

  text = pdf_text (pdf, 0);
  g_assert_nonnull (strstr (text, "Quarterly report"));
  g_assert_nonnull (strstr (text, "Minster Yard earned the most, with £214,242.60 in Q2."));
  g_assert_nonnull (strstr (text, "<script>alert(1)</script>"));
  g_assert_nonnull (strstr (text, "first point"));
  g_assert_nonnull (strstr (text, "nested one"));
  g_assert_nonnull (strstr (text, "Quoted remark"));
  /* pdftotext drops the indent of a line */
  g_assert_nonnull (strstr (text, "SELECT store\nFROM sales;"));
  g_assert_nonnull (strstr (text, "Chart not found: charts/missing.svg"));
  g_assert_nonnull (strstr (text, "York"));
  g_assert_nonnull (strstr (text, "12.50"));
  g_assert_nonnull (strstr (text, "Page 1 of 1"));

  tally_test_rm_rf (dir);
}

/* A 150-row table spans pages; each page after the first starts with
 * the header row, and a long cell wraps instead of running off. */
static void
test_pdf_table_across_pages (void)
{
  g_autofree char *dir = make_dir ();
  g_autoptr(GString) markdown = g_string_new ("# Long table\n\n| Row label | Revenue | Note |\n|---|--:|---|\n");
  g_autofree char *pdf = NULL;
  g_autofree char *page1 = NULL;
  g_autofree char *page2 = NULL;
  g_autofree char *last = NULL;
  g_autofree char *footer = NULL;
  int pages;

  for (int i = 0; i < 150; i++)
    g_string_append_printf (markdown, "| row-%03d | %d.00 | %s |\n", i, i * 10,
                            i == 3 ? "a long note that keeps going well past the width of its column so that "
                                     "it has to wrap onto several lines of the cell rather than run off the page "
                                     "endofnote"
                                   : "-");
  pdf = export_pdf (dir, markdown->str);
  pages = pdf_pages (pdf, NULL);
  g_assert_cmpint (pages, >=, 3);

  page1 = pdf_text (pdf, 1);
  page2 = pdf_text (pdf, 2);
  last = pdf_text (pdf, pages);
  g_assert_nonnull (strstr (page1, "row-000"));
  g_assert_nonnull (strstr (page1, "endofnote"));
  g_assert_null (strstr (page1, "row-149"));
  /* the header again at the top of page 2, before its first row */
  g_assert_nonnull (strstr (page2, "Row label"));
  g_assert_nonnull (strstr (page2, "Revenue"));
  g_assert_true (strstr (page2, "Row label") < strstr (page2, "row-"));
  g_assert_null (strstr (page2, "row-000"));
  g_assert_nonnull (strstr (last, "row-149"));
  g_assert_nonnull (strstr (last, "Row label"));
  footer = g_strdup_printf ("Page 2 of %d", pages);
  g_assert_nonnull (strstr (page2, footer));

  tally_test_rm_rf (dir);
}


/* US Letter where the locale's paper is Letter: en_US is compiled into a
 * temporary LOCPATH (glibc's localedef), since test machines rarely have
 * it installed. */
static void
test_pdf_letter (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *locales = g_build_filename (dir, "locales", NULL);
  g_autofree char *locale = g_build_filename (locales, "en_US.UTF-8", NULL);
  g_autofree char *md = g_build_filename (dir, "r.md", NULL);
  g_autofree char *pdf = g_build_filename (dir, "r.pdf", NULL);
  g_autofree char *size = NULL;
  const char *localedef[] = { "localedef", "-i", "en_US", "-f", "UTF-8", locale, NULL };
  const char *argv[] = { TALLY_TEST_CLI, "--report", md, "--format", "pdf", "--output", pdf, NULL };
  g_auto(GStrv) env = g_get_environ ();
  g_autofree char *localedef_path = g_find_program_in_path ("localedef");
  g_autoptr(GError) error = NULL;
  int status = -1;

  if (localedef_path == NULL ||
      !g_file_test ("/usr/share/i18n/locales/en_US", G_FILE_TEST_EXISTS))
    {
      g_test_skip ("localedef or the en_US locale source is missing");
      tally_test_rm_rf (dir);
      return;
    }
  g_assert_cmpint (g_mkdir (locales, 0755), ==, 0);
  g_spawn_sync (NULL, (char **) localedef, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL |
                G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, &error);
  g_assert_no_error (error);
  if (!g_file_test (locale, G_FILE_TEST_IS_DIR))
    {
      g_test_skip ("localedef could not compile en_US");
      tally_test_rm_rf (dir);
      return;
    }

  g_assert_true (g_file_set_contents (md, "# Letter\n\nOn US paper.\n", -1, NULL));
  env = g_environ_setenv (env, "LOCPATH", locales, TRUE);
  env = g_environ_setenv (env, "LC_ALL", "en_US.UTF-8", TRUE);
  g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_cmpint (pdf_pages (pdf, &size), ==, 1);
  g_assert_true (g_str_has_prefix (size, "612 x 792"));

  tally_test_rm_rf (dir);
}

/* }}} */

/* {{{ Errors and the async API */

static gboolean
dir_has_temporaries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (name[0] == '.')
      return TRUE;
  return FALSE;
}

static void
test_errors (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *md_path = g_build_filename (dir, "r.md", NULL);
  g_autofree char *bad_path = g_build_filename (dir, "bad.md", NULL);
  g_autofree char *missing_path = g_build_filename (dir, "nope.md", NULL);
  g_autofree char *out_in_missing = g_build_filename (dir, "no-such-folder", "r.pdf", NULL);
  g_autoptr(GFile) md = g_file_new_for_path (md_path);
  g_autoptr(GFile) bad = g_file_new_for_path (bad_path);
  g_autoptr(GFile) missing = g_file_new_for_path (missing_path);
  g_autoptr(GFile) dir_file = g_file_new_for_path (dir);
  g_autoptr(GFile) out_missing = g_file_new_for_path (out_in_missing);
  g_autoptr(GError) error = NULL;
  char *html;

  g_assert_true (g_file_set_contents (md_path, "# Fine\n", -1, NULL));
  g_assert_true (g_file_set_contents (bad_path, "caf\xe9\n", -1, NULL));

  {
    g_autoptr(GEnumClass) formats = g_type_class_ref (TALLY_TYPE_REPORT_FORMAT);
    TallyReportFormat format = TALLY_REPORT_FORMAT_HTML;

    g_assert_cmpstr (g_enum_get_value (formats, TALLY_REPORT_FORMAT_PDF)->value_nick, ==, "pdf");
    g_assert_true (tally_report_format_from_string ("pdf", &format));
    g_assert_cmpint (format, ==, TALLY_REPORT_FORMAT_PDF);
    g_assert_false (tally_report_format_from_string ("docx", &format));
    g_assert_false (tally_report_format_from_string (NULL, &format));
    g_assert_true (tally_report_format_from_string ("jsonl", &format));
    g_assert_cmpint (format, ==, TALLY_REPORT_FORMAT_JSONL);
    g_assert_true (tally_report_format_from_string ("md", &format));
    g_assert_cmpint (format, ==, TALLY_REPORT_FORMAT_MD);
    g_assert_true (tally_report_format_is_rendered (TALLY_REPORT_FORMAT_HTML));
    g_assert_true (tally_report_format_is_rendered (TALLY_REPORT_FORMAT_PDF));
    g_assert_false (tally_report_format_is_rendered (TALLY_REPORT_FORMAT_MD));
    g_assert_false (tally_report_format_is_rendered (TALLY_REPORT_FORMAT_JSONL));
  }

  html = tally_report_file_to_html (missing, NULL, &error);
  g_assert_null (html);
  g_assert_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_READ);
  g_assert_nonnull (strstr (error->message, "nope.md"));
  g_clear_error (&error);

  g_assert_false (tally_report_export_file (bad, TALLY_REPORT_FORMAT_PDF, dir_file, NULL, &error));
  g_assert_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID);
  g_clear_error (&error);

  g_assert_false (tally_report_export_file (md, TALLY_REPORT_FORMAT_HTML, out_missing, NULL, &error));
  g_assert_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_WRITE);
  g_assert_nonnull (strstr (error->message, "No such file or directory"));
  g_clear_error (&error);

  /* a folder as the output */
  g_assert_false (tally_report_export_file (md, TALLY_REPORT_FORMAT_PDF, dir_file, NULL, &error));
  g_assert_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_WRITE);
  g_clear_error (&error);
  g_assert_false (dir_has_temporaries (dir));

  /* a format that is neither HTML nor PDF: refused before anything is read or written */
  {
    g_autofree char *out_path = g_build_filename (dir, "r.out", NULL);
    g_autoptr(GFile) out = g_file_new_for_path (out_path);

    g_assert_false (tally_report_export_file (md, (TallyReportFormat) 7, out, NULL, &error));
    g_assert_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID);
    g_assert_nonnull (strstr (error->message, "7"));
    g_clear_error (&error);
    g_assert_false (g_file_test (out_path, G_FILE_TEST_EXISTS));

    /* a report file has no Markdown or JSON Lines export: a session has */
    g_assert_false (tally_report_export_file (md, TALLY_REPORT_FORMAT_MD, out, NULL, &error));
    g_assert_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID);
    g_assert_nonnull (strstr (error->message, "HTML or PDF, not as md"));
    g_clear_error (&error);
    g_assert_false (g_file_test (out_path, G_FILE_TEST_EXISTS));
  }

  tally_test_rm_rf (dir);
}

/* One wait for either export: @finish is its _finish function. */
typedef struct {
  GMainLoop *loop;
  gboolean (*finish) (GAsyncResult *result, GError **error);
  gboolean   ok;
  GError    *error;
} AsyncWait;

static void
exported_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  AsyncWait *wait = user_data;

  wait->ok = wait->finish (result, &wait->error);
  g_main_loop_quit (wait->loop);
}

static void
test_async (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *md_path = g_build_filename (dir, "r.md", NULL);
  g_autofree char *out_path = g_build_filename (dir, "r.html", NULL);
  g_autoptr(GFile) md = g_file_new_for_path (md_path);
  g_autoptr(GFile) out = g_file_new_for_path (out_path);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *html = NULL;
  AsyncWait wait = { loop, tally_report_export_file_finish, FALSE, NULL };

  g_assert_true (g_file_set_contents (md_path, "# Async\n\nText.\n", -1, NULL));
  tally_report_export_file_async (md, TALLY_REPORT_FORMAT_HTML, out, NULL, exported_cb, &wait);
  g_main_loop_run (loop);
  g_assert_no_error (wait.error);
  g_assert_true (wait.ok);
  g_assert_true (g_file_get_contents (out_path, &html, NULL, NULL));
  g_assert_nonnull (strstr (html, "<h1>Async</h1>"));
  g_clear_pointer (&html, g_free);

  /* cancelled before it ran: no file replaced */
  g_assert_true (g_file_set_contents (md_path, "# Changed\n", -1, NULL));
  g_cancellable_cancel (cancellable);
  tally_report_export_file_async (md, TALLY_REPORT_FORMAT_PDF, out, cancellable, exported_cb, &wait);
  g_main_loop_run (loop);
  g_assert_false (wait.ok);
  g_assert_error (wait.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&wait.error);
  g_assert_true (g_file_get_contents (out_path, &html, NULL, NULL));
  g_assert_nonnull (strstr (html, "<h1>Async</h1>"));
  g_assert_false (dir_has_temporaries (dir));

  tally_test_rm_rf (dir);
}

/* }}} */

/* {{{ The Markdown export's provenance notes and thinking */

static void
test_markdown_notes_and_thinking (void)
{
  static const char * const events[] = {
    "{\"type\":\"turn_started\",\"seq\":1,\"turn_id\":\"t1\",\"mode\":\"ask\",\"text\":\"Stores?\"}",
    "{\"type\":\"thinking_delta\",\"seq\":2,\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"text\":\"Count the stores table.\"}",
    "{\"type\":\"block_done\",\"seq\":3,\"turn_id\":\"t1\",\"call\":0,\"block\":0,\"kind\":\"thinking\"}",
    "{\"type\":\"tool_use_start\",\"seq\":4,\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT count(*) FROM stores\"}}",
    "{\"type\":\"tool_result\",\"seq\":5,\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"content\":\"count(*)\\n6\",\"is_error\":false,\"duration_ms\":3}",
    "{\"type\":\"tool_use_start\",\"seq\":6,\"turn_id\":\"t1\",\"tool_id\":\"tu2\",\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT count(*) FROM stores\"}}",
    "{\"type\":\"tool_result\",\"seq\":7,\"turn_id\":\"t1\",\"tool_id\":\"tu2\",\"content\":\"count(*)\\n6\",\"is_error\":false,\"duration_ms\":3}",
    "{\"type\":\"tool_use_start\",\"seq\":8,\"turn_id\":\"t1\",\"tool_id\":\"tu3\",\"tool_name\":\"create_chart\",\"tool_input\":{}}",
    "{\"type\":\"tool_result\",\"seq\":9,\"turn_id\":\"t1\",\"tool_id\":\"tu3\",\"content\":\"A bar chart.\",\"is_error\":false,\"duration_ms\":3}",
    "{\"type\":\"chart_created\",\"seq\":10,\"turn_id\":\"t1\",\"chart_id\":\"c1\",\"tool_id\":\"tu3\",\"title\":\"Seats\","
    "\"spec\":{\"title\":\"Seats\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"s\",\"type\":\"nominal\"},"
    "\"y\":{\"field\":\"n\",\"type\":\"quantitative\"}},\"data\":{\"values\":[{\"s\":\"York\",\"n\":3},{\"s\":\"Leeds\",\"n\":4}]}},"
    "\"files\":[\"charts/seats.svg\",\"charts/seats.png\"],\"rows\":2}",
    "{\"type\":\"tool_use_start\",\"seq\":11,\"turn_id\":\"t1\",\"tool_id\":\"tu4\",\"tool_name\":\"query_database\",\"tool_input\":{\"sql\":\"SELECT name FROM stores\"}}",
    "{\"type\":\"tool_result\",\"seq\":12,\"turn_id\":\"t1\",\"tool_id\":\"tu4\",\"content\":\"no such table\",\"is_error\":true,\"duration_ms\":3}",
    NULL
  };
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  TallyTranscriptExportHeader header = { .title = "Stores", .database = "/data/beanline.db" };
  g_autofree char *plain = NULL;
  g_autofree char *with_thinking = NULL;

  for (guint i = 0; events[i] != NULL; i++)
    {
      g_autoptr(JsonObject) event = tally_test_parse_object (events[i]);

      tally_transcript_apply (transcript, event);
    }

  plain = tally_transcript_export_markdown (transcript, &header);
  g_assert_nonnull (strstr (plain, "*Thought for 4 words.*"));
  g_assert_null (strstr (plain, "Count the stores table."));
  /* one note for the statement run twice, one for the inline chart; the
   * failed query has none */
  g_assert_cmpuint (count (plain, "*Source: [1]*"), ==, 2);
  g_assert_nonnull (strstr (plain, "![Seats](charts/seats.svg)\n\n*Source: [2]*\n\n"));
  g_assert_null (strstr (plain, "[3]"));
  g_assert_nonnull (strstr (plain, "---\n\n## Sources\n\n[1] SQL on database `beanline.db`:\n\n"
                                   "```sql\nSELECT count(*) FROM stores\n```\n\n"
                                   "[2] Data written into the spec of the chart “Seats” by the model (2 rows); "
                                   "no query.\n\n"));

  header.include_thinking = TRUE;
  with_thinking = tally_transcript_export_markdown (transcript, &header);
  g_assert_nonnull (strstr (with_thinking, "*Thinking:*\n\n> Count the stores table.\n\n"));
  g_assert_null (strstr (with_thinking, "*Thought for"));
}

/* }}} */

/* {{{ tally-cli */

typedef struct {
  gint64 max_bytes;
} Limit;

static void
limit_file_size (gpointer user_data)
{
  Limit *limit = user_data;
  struct rlimit rl = { (rlim_t) limit->max_bytes, (rlim_t) limit->max_bytes };

  /* A write past the limit then fails with EFBIG, as on a full disk. */
  signal (SIGXFSZ, SIG_IGN);
  setrlimit (RLIMIT_FSIZE, &rl);
}

static int
cli (char       **out,
     char       **err,
     const char  *cwd,
     Limit       *limit,
     ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GError) error = NULL;
  const char *arg;
  va_list args;
  int status = -1;

  g_ptr_array_add (argv, (gpointer) TALLY_TEST_CLI);
  va_start (args, limit);
  while ((arg = va_arg (args, const char *)) != NULL)
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  env = g_environ_setenv (env, "LC_ALL", "C.UTF-8", TRUE);
  env = g_environ_setenv (env, "ANTHROPIC_API_KEY", "sk-test-key", TRUE);
  env = g_environ_unsetenv (env, "ANTHROPIC_BASE_URL");
  g_spawn_sync (cwd, (char **) argv->pdata, env, G_SPAWN_DEFAULT, limit != NULL ? limit_file_size : NULL, limit,
                out, err, &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static void
test_cli_errors (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *md = g_build_filename (dir, "r.md", NULL);
  g_autofree char *out = g_build_filename (dir, "r.pdf", NULL);
  g_autoptr(GString) big = g_string_new ("# Big\n\n");
  Limit limit = { 4096 };
  char *err = NULL;

  for (int i = 0; i < 400; i++)
    g_string_append_printf (big, "Paragraph %d with a few words to fill the page.\n\n", i);
  g_assert_true (g_file_set_contents (md, big->str, -1, NULL));

  g_assert_cmpint (cli (NULL, &err, dir, NULL, "--report", md, "--format", "docx", "--output", out, NULL), ==, 2);
  g_assert_nonnull (strstr (err, "--report needs --format html or pdf"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli (NULL, &err, dir, NULL, "--report", md, "--format", "md", "--output", out, NULL), ==, 2);
  g_assert_nonnull (strstr (err, "--report needs --format html or pdf"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli (NULL, &err, dir, NULL, "--report", md, "--format", "pdf", NULL), ==, 2);
  g_assert_nonnull (strstr (err, "--report needs --output FILE"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli (NULL, &err, dir, NULL, "--report", "nope.md", "--format", "pdf", "--output", out, NULL), ==, 1);
  g_assert_nonnull (strstr (err, "Could not read"));
  g_assert_nonnull (strstr (err, "nope.md"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli (NULL, &err, dir, NULL, "--export", "x", "--format", "html", NULL), ==, 2);
  g_assert_nonnull (strstr (err, "--format html and pdf need --output FILE"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli (NULL, &err, dir, NULL, "--output", out, "a prompt", NULL), ==, 2);
  g_clear_pointer (&err, g_free);
  /* a format for a prompt's answer would be silently ignored: refused */
  g_assert_cmpint (cli (NULL, &err, dir, NULL, "--format", "html", "a prompt", NULL), ==, 2);
  g_assert_nonnull (strstr (err, "--format, --output and --include-thinking go with --export or --report"));
  g_clear_pointer (&err, g_free);

  /* a full disk: the write fails, nothing is left behind */
  g_assert_cmpint (cli (NULL, &err, dir, &limit, "--report", md, "--format", "pdf", "--output", out, NULL), ==, 1);
  g_assert_nonnull (strstr (err, "Could not write"));
  g_assert_nonnull (strstr (err, "r.pdf"));
  g_clear_pointer (&err, g_free);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_assert_false (dir_has_temporaries (dir));

  /* and without the limit it is written */
  g_assert_cmpint (cli (NULL, NULL, dir, NULL, "--report", md, "--format", "pdf", "--output", out, NULL), ==, 0);
  g_assert_cmpint (pdf_pages (out, NULL), >, 4);

  tally_test_rm_rf (dir);
}

static JsonObject *
find_event (GPtrArray  *events,
            const char *type,
            guint       nth)
{
  for (guint i = 0; i < events->len; i++)
    if (g_str_equal (json_object_get_string_member (g_ptr_array_index (events, i), "type"), type) && nth-- == 0)
      return g_ptr_array_index (events, i);
  return NULL;
}

/* The end to end: "Which store earned the most in Q2? Chart it
 * and write a one-page report" against the mock and the Beanline sample,
 * then the report as PDF, and the session exported offline with its
 * chart drawn from the event after charts/ is deleted. */
static void
test_end_to_end (void)
{
  g_autofree char *scenario = g_test_build_filename (G_TEST_DIST, "scenarios", "report-q2-store.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TallyTestMock) mock = tally_test_mock_start_file (scenario, &error);
  g_autofree char *dir = make_dir ();
  g_autofree char *ws = g_build_filename (dir, "ws", NULL);
  g_autofree char *store = g_build_filename (dir, "store.db", NULL);
  g_autofree char *charts = g_build_filename (ws, "charts", NULL);
  g_autofree char *svg = g_build_filename (ws, "charts", "q2-revenue-by-store.svg", NULL);
  g_autofree char *png = g_build_filename (ws, "charts", "q2-revenue-by-store.png", NULL);
  g_autofree char *report = g_build_filename (ws, "report.md", NULL);
  g_autofree char *pdf = g_build_filename (ws, "report.pdf", NULL);
  g_autofree char *session_pdf = g_build_filename (dir, "session.pdf", NULL);
  g_autofree char *session_html = g_build_filename (dir, "session.html", NULL);
  g_autofree char *session_md = g_build_filename (dir, "session.md", NULL);
  g_autofree char *out = NULL;
  g_autofree char *text = NULL;
  g_autofree char *html = NULL;
  g_autofree char *markdown = NULL;
  g_autofree char *ppm_prefix = g_build_filename (dir, "page", NULL);
  g_autofree char *page_png = g_build_filename (dir, "page-1.png", NULL);
  g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  g_auto(GStrv) lines = NULL;
  JsonObject *chart;
  const char *session_id;

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir (ws, 0755), ==, 0);
  g_assert_cmpint (cli (&out, NULL, dir, NULL, "--base-url", tally_test_mock_get_base_url (mock),
                        "--db", g_getenv ("TALLY_SAMPLE_DB"), "--workspace", ws, "--store", store,
                        "--mode", "auto", "--json",
                        "Which store earned the most in Q2? Chart it and write a one-page report", NULL), ==, 0);

  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    g_ptr_array_add (events, tally_test_parse_object (lines[i]));

  /* the events: the query, the chart, the report, a finished turn */
  g_assert_cmpstr (json_object_get_string_member (find_event (events, "tool_use_start", 0), "tool_name"), ==,
                   "query_database");
  g_assert_cmpstr (json_object_get_string_member (find_event (events, "tool_use_start", 1), "tool_name"), ==,
                   "create_chart");
  g_assert_cmpstr (json_object_get_string_member (find_event (events, "tool_use_start", 2), "tool_name"), ==,
                   "Write");
  chart = find_event (events, "chart_created", 0);
  g_assert_nonnull (chart);
  g_assert_cmpstr (json_object_get_string_member (chart, "title"), ==, "Q2 2025 revenue by store");
  g_assert_cmpint (json_object_get_int_member (chart, "rows"), ==, 6);
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (chart, "files"), 0), ==,
                   "charts/q2-revenue-by-store.svg");
  g_assert_cmpstr (json_object_get_string_member (find_event (events, "turn_finished", 0), "status"), ==, "done");
  session_id = json_object_get_string_member (g_ptr_array_index (events, 0), "session_id");

  /* the files */
  g_assert_true (g_file_test (svg, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (png, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (report, G_FILE_TEST_IS_REGULAR));

  /* the report as a one-page PDF */
  g_assert_cmpint (cli (NULL, NULL, ws, NULL, "--report", "report.md", "--format", "pdf", "--output", "report.pdf",
                        NULL), ==, 0);
  g_assert_cmpint (pdf_pages (pdf, NULL), ==, 1);
  text = pdf_text (pdf, 0);
  g_assert_nonnull (strstr (text, "Q2 2025 revenue by store"));
  g_assert_nonnull (strstr (text, "Minster Yard earned the most in Q2 2025: £214,242.60"));
  g_assert_nonnull (strstr (text, "764,450.30"));
  g_assert_nonnull (strstr (text, "Heslington Hall"));
  g_assert_nonnull (strstr (text, "How the figures were made"));
  g_assert_nonnull (strstr (text, "WHERE s.sold_on BETWEEN '2025-04-01' AND"));
  g_assert_nonnull (strstr (text, "'2025-06-30' GROUP BY st.store_id ORDER BY revenue_gbp DESC"));
  g_assert_nonnull (strstr (text, "Page 1 of 1"));
  g_assert_null (strstr (text, "Chart not found"));
  g_clear_pointer (&text, g_free);

  /* page 1 rendered (data/screenshots/report-page.png is one): a page of
   * A4 at 60 dpi with ink on it, the chart's blue among it */
  {
    const char *argv[] = { "pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", pdf, ppm_prefix, NULL };
    cairo_surface_t *page;
    guint blue = 0, ink = 0;
    int width, height, stride;
    const guint8 *data;

    g_assert_cmpint (run (NULL, NULL, argv), ==, 0);
    page = cairo_image_surface_create_from_png (page_png);
    g_assert_cmpint (cairo_surface_status (page), ==, CAIRO_STATUS_SUCCESS);
    width = cairo_image_surface_get_width (page);
    height = cairo_image_surface_get_height (page);
    g_assert_cmpint (width, >=, 495);
    g_assert_cmpint (width, <=, 497);
    g_assert_cmpint (height, >=, 701);
    g_assert_cmpint (height, <=, 703);
    stride = cairo_image_surface_get_stride (page);
    data = cairo_image_surface_get_data (page);
    for (int y = 0; y < height; y++)
      for (int x = 0; x < width; x++)
        {
          guint32 pixel = *(const guint32 *) (data + y * stride + x * 4);
          guint r = (pixel >> 16) & 0xff, g = (pixel >> 8) & 0xff, b = pixel & 0xff;

          if (r < 200 || g < 200 || b < 200)
            ink++;
          /* Okabe–Ito blue, #0072b2 */
          if (r < 30 && g > 90 && g < 140 && b > 150 && b < 200)
            blue++;
        }
    cairo_surface_destroy (page);
    g_assert_cmpuint (ink, >, (guint) (width * height / 20));
    g_assert_cmpuint (blue, >, (guint) (width * height / 50));
  }

  /* the session, offline, its chart drawn from the event with charts/ gone */
  tally_test_rm_rf (charts);
  g_assert_cmpint (cli (NULL, NULL, dir, NULL, "--store", store, "--export", session_id, "--format", "pdf",
                        "--output", session_pdf, NULL), ==, 0);
  text = pdf_text (session_pdf, 0);
  g_assert_nonnull (strstr (text, "Which store earned the most in Q2?"));
  /* the chart's own text, drawn as text from its spec */
  g_assert_cmpuint (count (text, "Q2 2025 revenue by store"), >=, 1);
  g_assert_nonnull (strstr (text, "Revenue (£)"));
  g_assert_null (strstr (text, "Chart not found"));
  /* provenance: the result and the chart name the query and the database */
  g_assert_nonnull (strstr (text, "Source: [1]"));
  g_assert_nonnull (strstr (text, "[1] SQL on database beanline.db"));
  g_assert_null (strstr (text, "[2] SQL"));
  g_clear_pointer (&text, g_free);

  g_assert_cmpint (cli (NULL, NULL, dir, NULL, "--store", store, "--export", session_id, "--format", "html",
                        "--output", session_html, NULL), ==, 0);
  g_assert_true (g_file_get_contents (session_html, &html, NULL, NULL));
  assert_well_formed (html);
  g_assert_cmpuint (count (html, "<svg class=\"chart\" role=\"img\" aria-label=\"Q2 2025 revenue by store\""), ==, 1);
  g_assert_null (strstr (html, "<script"));
  g_assert_null (strstr (html, "http"));
  g_assert_nonnull (strstr (html, "[1] SQL on database <code>beanline.db</code>"));

  g_assert_cmpint (cli (NULL, NULL, dir, NULL, "--store", store, "--export", session_id, "--format", "md",
                        "--output", session_md, NULL), ==, 0);
  g_assert_true (g_file_get_contents (session_md, &markdown, NULL, NULL));
  g_assert_nonnull (strstr (markdown, "![Q2 2025 revenue by store](charts/q2-revenue-by-store.svg)\n\n*Source: [1]*\n\n"));
  g_assert_nonnull (strstr (markdown, "## Sources\n\n[1] SQL on database `beanline.db`:\n\n```sql\nSELECT st.name"));

  /* the CLI's stdout and the window's path (the async export, every
   * format) write the same text as --output */
  {
    g_autofree char *session_jsonl = g_build_filename (dir, "session.jsonl", NULL);
    g_autoptr(GFile) jsonl_file = g_file_new_for_path (session_jsonl);
    g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
    g_autoptr(TallyStore) opened = NULL;
    g_autofree char *printed = NULL;
    g_autofree char *jsonl = NULL;
    AsyncWait wait = { loop, tally_report_export_session_finish, FALSE, NULL };

    g_assert_cmpint (cli (&printed, NULL, dir, NULL, "--store", store, "--export", session_id, NULL), ==, 0);
    g_assert_cmpstr (printed, ==, markdown);
    g_clear_pointer (&printed, g_free);
    g_assert_cmpint (cli (&printed, NULL, dir, NULL, "--store", store, "--export", session_id, "--format", "jsonl", NULL), ==, 0);
    g_assert_nonnull (strstr (printed, "\"type\":\"chart_created\""));

    opened = tally_store_open (store, &error);
    g_assert_no_error (error);
    tally_report_export_session_async (opened, session_id, TALLY_REPORT_FORMAT_JSONL, FALSE, jsonl_file,
                                       NULL, exported_cb, &wait);
    g_main_loop_run (loop);
    g_assert_no_error (wait.error);
    g_assert_true (wait.ok);
    g_assert_true (g_file_get_contents (session_jsonl, &jsonl, NULL, NULL));
    g_assert_cmpstr (jsonl, ==, printed);

    /* a session that is not there fails through the callback with the store's error */
    tally_report_export_session_async (opened, "no-such-session", TALLY_REPORT_FORMAT_MD, FALSE, jsonl_file,
                                       NULL, exported_cb, &wait);
    g_main_loop_run (loop);
    g_assert_false (wait.ok);
    g_assert_nonnull (wait.error);
    g_clear_error (&wait.error);
    g_clear_pointer (&printed, g_free);
    g_assert_true (g_file_get_contents (session_jsonl, &printed, NULL, NULL));
    g_assert_cmpstr (printed, ==, jsonl);
  }

  tally_test_rm_rf (dir);
}

/* }}} */

/* An output that is a FIFO is written into, not replaced by a regular
 * file (as a device such as /dev/stdout would be); an output that is a
 * symbolic link keeps the link and replaces the file it points to. */
static void
test_write_special_outputs (void)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *fifo_path = g_build_filename (dir, "fifo", NULL);
  g_autofree char *target_path = g_build_filename (dir, "target.html", NULL);
  g_autofree char *link_path = g_build_filename (dir, "link.html", NULL);
  g_autoptr(GFile) fifo = g_file_new_for_path (fifo_path);
  g_autoptr(GFile) link = g_file_new_for_path (link_path);
  g_autoptr(GError) error = NULL;
  g_autofree char *contents = NULL;
  GStatBuf st;
  char buffer[64] = { 0 };
  int reader;

  g_assert_cmpint (mkfifo (fifo_path, 0600), ==, 0);
  /* a reader first, so that opening the FIFO to write does not block */
  reader = g_open (fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
  g_assert_cmpint (reader, >=, 0);
  g_assert_true (tally_report_write_atomic (fifo, "<p>piped</p>", 12, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (read (reader, buffer, sizeof buffer - 1), ==, 12);
  g_assert_cmpstr (buffer, ==, "<p>piped</p>");
  close (reader);
  g_assert_cmpint (g_lstat (fifo_path, &st), ==, 0);
  g_assert_true (S_ISFIFO (st.st_mode));

  g_assert_true (g_file_set_contents (target_path, "old", -1, NULL));
  g_assert_cmpint (symlink ("target.html", link_path), ==, 0);
  g_assert_true (tally_report_write_atomic (link, "new", 3, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_lstat (link_path, &st), ==, 0);
  g_assert_true (S_ISLNK (st.st_mode));
  g_assert_true (g_file_get_contents (target_path, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "new");
  g_assert_false (dir_has_temporaries (dir));

  tally_test_rm_rf (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/report/html/self-contained", test_html_self_contained);
  g_test_add_func ("/tally/report/html/links-out", test_html_links_out);
  g_test_add_func ("/tally/report/html/ids-and-remote", test_html_ids_and_remote);
  g_test_add_func ("/tally/report/pdf/text", test_pdf_text);
  g_test_add_func ("/tally/report/pdf/table-across-pages", test_pdf_table_across_pages);
  g_test_add_func ("/tally/report/pdf/letter", test_pdf_letter);
  g_test_add_func ("/tally/report/errors", test_errors);
  g_test_add_func ("/tally/report/write-special-outputs", test_write_special_outputs);
  g_test_add_func ("/tally/report/async", test_async);
  g_test_add_func ("/tally/report/markdown/notes-and-thinking", test_markdown_notes_and_thinking);
  g_test_add_func ("/tally/report/cli-errors", test_cli_errors);
  g_test_add_func ("/tally/report/end-to-end", test_end_to_end);

  return g_test_run ();
}
