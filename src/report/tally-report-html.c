/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * Markdown to one self-contained HTML file (docs/reports.md §1–2): md4c-html
 * with raw HTML turned off (so it is escaped as text), then every image the
 * renderer wrote is replaced by its drawing inlined as SVG, a PNG as a
 * `data:` URI, a link (remote URLs) or a placeholder, and every link that is
 * not http, https, mailto or relative loses its target. The style sheet is
 * inline; there is no script.
 */

#define G_LOG_DOMAIN "tally-report"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <md4c-html.h>
#include <string.h>

#include "tally-report-private.h"

static const char style_sheet[] =
  "body{margin:0;background:#fff;color:#1c1c1e;font:11pt/1.5 \"DejaVu Sans\",\"Helvetica Neue\",Arial,sans-serif}\n"
  "main{max-width:46em;margin:2em auto;padding:0 1.5em}\n"
  "h1,h2,h3,h4,h5,h6{line-height:1.25;margin:1.4em 0 .5em}\n"
  "h1{font-size:1.8em;border-bottom:1px solid #d8d8d8;padding-bottom:.2em}\n"
  "h2{font-size:1.4em}h3{font-size:1.15em}\n"
  "p,ul,ol,blockquote,table,pre{margin:.7em 0}\n"
  "a{color:#1a5fb4}\n"
  "code,pre{font-family:\"DejaVu Sans Mono\",Menlo,Consolas,monospace;font-size:.9em}\n"
  "code{background:#f2f2f2;border-radius:3px;padding:.1em .3em}\n"
  "pre{background:#f6f6f6;border:1px solid #e2e2e2;border-radius:4px;padding:.6em .9em;"
  "white-space:pre-wrap;overflow-wrap:anywhere}\n"
  "pre code{background:none;padding:0}\n"
  "blockquote{border-left:4px solid #d0d0d0;color:#3d3d40;padding:0 1em;margin-left:0}\n"
  "table{border-collapse:collapse;font-size:.95em}\n"
  "th,td{border:1px solid #d2d2d2;padding:.3em .6em;vertical-align:top;text-align:left}\n"
  "th{background:#eeeeee}\n"
  /* md4c writes a column's alignment (| --: |) as an align attribute,
   * which the text-align above would override. */
  "th[align=right],td[align=right]{text-align:right}\n"
  "th[align=center],td[align=center]{text-align:center}\n"
  "tbody tr:nth-child(even) td{background:#fafafa}\n"
  "hr{border:0;border-top:1px solid #c8c8c8;margin:1.5em 0}\n"
  "img,svg.chart{display:block;max-width:100%;height:auto;margin:1em 0}\n"
  ".missing{display:inline-block;border:2px dashed #c01c28;color:#a51d2d;background:#fff5f5;"
  "padding:.6em 1em;margin:.5em 0;font-weight:bold}\n"
  "@page{margin:20mm}\n"
  "@media print{main{max-width:none;margin:0;padding:0}"
  "pre,tr,img,svg.chart{break-inside:avoid}thead{display:table-header-group}a{color:inherit}}\n";

static void
append_output_cb (const MD_CHAR *text,
                  MD_SIZE        size,
                  void          *user_data)
{
  g_string_append_len (user_data, text, size);
}

static void
append_escaped (GString    *out,
                const char *text)
{
  g_autofree char *escaped = g_markup_escape_text (text, -1);

  g_string_append (out, escaped);
}

/* An attribute's value as md4c-html wrote it, back to its text: `&amp;`
 * and the other escapes undone, then `%XX`. */
static char *
attribute_to_url (const char *start,
                  gsize       length)
{
  g_autoptr(GString) text = g_string_new_len (start, length);

  g_string_replace (text, "&quot;", "\"", 0);
  g_string_replace (text, "&lt;", "<", 0);
  g_string_replace (text, "&gt;", ">", 0);
  g_string_replace (text, "&amp;", "&", 0);
  return tally_report_url_decode (text->str, text->len);
}

static gboolean
is_safe_link (const char *url)
{
  const char *colon = strchr (url, ':');
  const char *stop = strpbrk (url, "/?#");

  /* no scheme at all: relative or a fragment */
  if (colon == NULL || (stop != NULL && stop < colon))
    return TRUE;
  return g_ascii_strncasecmp (url, "http:", 5) == 0 || g_ascii_strncasecmp (url, "https:", 6) == 0 ||
         g_ascii_strncasecmp (url, "mailto:", 7) == 0;
}

/* Finds `"` from @p; returns the position or NULL */
static const char *
find_quote (const char *p)
{
  return strchr (p, '"');
}

typedef struct {
  const TallyReportSource *source;
  guint                    serial;
  GCancellable            *cancellable;
} Rewrite;

/* `<img src="S" alt="A" title="T" />`, as md4c-html writes it with
 * MD_HTML_FLAG_XHTML; returns the end of the tag or NULL when the tag is
 * not in that shape. */
static const char *
rewrite_image (Rewrite    *rewrite,
               GString    *out,
               const char *tag)
{
  const char *src = tag + strlen ("<img src=\"");
  const char *src_end = find_quote (src);
  const char *alt, *alt_end, *end;
  g_autofree char *url = NULL;
  g_autofree char *alt_text = NULL;
  g_autoptr(TallyReportImage) image = NULL;

  if (src_end == NULL || !g_str_has_prefix (src_end, "\" alt=\""))
    return NULL;
  alt = src_end + strlen ("\" alt=\"");
  alt_end = find_quote (alt);
  if (alt_end == NULL)
    return NULL;
  end = strstr (alt_end, "/>");
  if (end == NULL)
    return NULL;
  end += 2;

  url = attribute_to_url (src, src_end - src);
  alt_text = g_strndup (alt, alt_end - alt);   /* still escaped */
  image = tally_report_image_load (rewrite->source, url);

  switch (image->kind)
    {
    case TALLY_REPORT_IMAGE_SVG:
    case TALLY_REPORT_IMAGE_CHART:
      {
        g_autofree char *svg = tally_report_image_dup_svg (image, ++rewrite->serial, alt_text);

        g_string_append (out, svg);
      }
      break;

    case TALLY_REPORT_IMAGE_PNG:
      {
        gsize length = 0;
        const guint8 *data = g_bytes_get_data (image->png_bytes, &length);
        g_autofree char *base64 = g_base64_encode (data, length);

        g_string_append_printf (out, "<img src=\"data:image/png;base64,%s\" alt=\"%s\" />", base64, alt_text);
      }
      break;

    case TALLY_REPORT_IMAGE_REMOTE:
      /* Never fetched: the reader may follow the link. */
      g_string_append (out, "<a href=\"");
      append_escaped (out, url);
      g_string_append (out, "\">");
      if (*alt_text != '\0')
        g_string_append (out, alt_text);
      else
        append_escaped (out, url);
      g_string_append (out, "</a>");
      break;

    case TALLY_REPORT_IMAGE_MISSING:
      g_string_append (out, "<span class=\"missing\" role=\"img\">");
      append_escaped (out, image->message);
      g_string_append (out, "</span>");
      break;
    }
  return end;
}

/* `<a href="U"`: a target that could run script loses it. */
static const char *
rewrite_link (GString    *out,
              const char *tag)
{
  const char *href = tag + strlen ("<a href=\"");
  const char *href_end = find_quote (href);
  g_autofree char *url = NULL;

  if (href_end == NULL)
    return NULL;
  url = attribute_to_url (href, href_end - href);
  if (is_safe_link (url))
    g_string_append_len (out, tag, href_end + 1 - tag);
  else
    g_string_append (out, "<a");
  return href_end + 1;
}

static gboolean
rewrite_body (Rewrite     *rewrite,
              GString     *out,
              const char  *body,
              GError     **error)
{
  const char *p = body;

  while (*p != '\0')
    {
      const char *lt = strchr (p, '<');
      const char *next = NULL;

      if (lt == NULL)
        {
          g_string_append (out, p);
          break;
        }
      g_string_append_len (out, p, lt - p);

      if (g_str_has_prefix (lt, "<img src=\""))
        {
          if (g_cancellable_set_error_if_cancelled (rewrite->cancellable, error))
            return FALSE;
          next = rewrite_image (rewrite, out, lt);
        }
      else if (g_str_has_prefix (lt, "<a href=\""))
        next = rewrite_link (out, lt);

      if (next == NULL)
        {
          g_string_append_c (out, '<');
          next = lt + 1;
        }
      p = next;
    }
  return TRUE;
}

/**
 * tally_report_markdown_to_html:
 * @markdown: the report, UTF-8
 * @title: the document's title
 * @source: where its images come from
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Renders @markdown (CommonMark with GitHub tables, strikethrough, task
 * lists and autolinks; raw HTML is shown as text) as one self-contained
 * HTML document, well-formed as XML.
 *
 * Returns: (transfer full) (nullable): the document; %NULL with
 *   %TALLY_REPORT_ERROR_INVALID when @markdown is not UTF-8 or md4c fails,
 *   or %G_IO_ERROR_CANCELLED
 */
char *
tally_report_markdown_to_html (const char               *markdown,
                               const char               *title,
                               const TallyReportSource  *source,
                               GCancellable             *cancellable,
                               GError                  **error)
{
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(GString) out = g_string_new (NULL);
  Rewrite rewrite = { source, 0, cancellable };

  if (!tally_report_check_utf8 (markdown, error))
    return NULL;

  if (md_html (markdown, (MD_SIZE) strlen (markdown), append_output_cb, body,
               MD_DIALECT_GITHUB | MD_FLAG_NOHTML,
               MD_HTML_FLAG_XHTML | MD_HTML_FLAG_SKIP_UTF8_BOM) != 0)
    {
      g_set_error_literal (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID,
                           _("The report’s Markdown could not be read"));
      return NULL;
    }

  g_string_append (out, "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\" />\n"
                        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n"
                        "<meta name=\"generator\" content=\"Tally\" />\n<title>");
  append_escaped (out, title);
  g_string_append (out, "</title>\n<style>\n");
  g_string_append (out, style_sheet);
  g_string_append (out, "</style>\n</head>\n<body>\n<main>\n");
  if (!rewrite_body (&rewrite, out, body->str, error))
    return NULL;
  g_string_append (out, "</main>\n</body>\n</html>\n");

  return g_string_free (g_steal_pointer (&out), FALSE);
}
