/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Shared by the HTML and PDF writers of libtally-report; not installed. */

#pragma once

#include <cairo.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <librsvg/rsvg.h>

#include "tally-chart.h"
#include "tally-report.h"

G_BEGIN_DECLS

/* The natural size of a chart drawn from its spec, in points (CSS px):
 * the proportions create_chart writes its files in (height 0.55 × width). */
#define TALLY_REPORT_CHART_WIDTH  640.0
#define TALLY_REPORT_CHART_HEIGHT 352.0

/*
 * Where a report's images come from (docs/reports.md §2):
 * @base_dir: (nullable): the folder relative image paths are read from;
 *   %NULL reads no file at all
 * @charts: (nullable): workspace-relative SVG path (`charts/x.svg`) →
 *   the `chart_created` event whose spec draws it; looked up before any
 *   file, so a session's charts are drawn offline from their events
 */
typedef struct {
  GFile      *base_dir;
  GHashTable *charts;
} TallyReportSource;

typedef enum {
  TALLY_REPORT_IMAGE_MISSING,   /* a placeholder with @message */
  TALLY_REPORT_IMAGE_REMOTE,    /* a URL with a scheme: shown as a link */
  TALLY_REPORT_IMAGE_SVG,       /* @svg, parsed by librsvg */
  TALLY_REPORT_IMAGE_PNG,       /* @png and its file's bytes */
  TALLY_REPORT_IMAGE_CHART,     /* @chart, drawn by libtally-chart */
} TallyReportImageKind;

typedef struct {
  TallyReportImageKind  kind;
  char                 *src;       /* decoded, as the Markdown names it */
  char                 *message;   /* MISSING: what the reader sees */
  RsvgHandle           *svg;
  cairo_surface_t      *png;
  GBytes               *png_bytes;
  TallyChart           *chart;
  double                width;     /* natural size, points (CSS px) */
  double                height;
} TallyReportImage;

TallyReportImage *tally_report_image_load       (const TallyReportSource *source,
                                                 const char              *src);
void              tally_report_image_free       (TallyReportImage        *image);
void              tally_report_image_draw       (TallyReportImage        *image,
                                                 cairo_t                 *cr,
                                                 double                   width,
                                                 double                   height);
char             *tally_report_image_dup_svg    (TallyReportImage        *image,
                                                 guint                    serial,
                                                 const char              *label);

char             *tally_report_url_decode       (const char              *text,
                                                 gsize                    length);
char             *tally_report_dup_title        (const char              *markdown,
                                                 const char              *fallback);
gboolean          tally_report_check_utf8       (const char              *markdown,
                                                 GError                 **error);

char             *tally_report_markdown_to_html (const char              *markdown,
                                                 const char              *title,
                                                 const TallyReportSource *source,
                                                 GCancellable            *cancellable,
                                                 GError                 **error);
GBytes           *tally_report_markdown_to_pdf  (const char              *markdown,
                                                 const char              *title,
                                                 const TallyReportSource *source,
                                                 GCancellable            *cancellable,
                                                 GError                 **error);
void              tally_report_paper_size       (double                  *width,
                                                 double                  *height);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallyReportImage, tally_report_image_free)

G_END_DECLS
