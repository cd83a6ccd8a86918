/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * Markdown to PDF (docs/reports.md §1, §4): md4c's parser builds a small
 * tree of blocks, and a layout of our own flows it onto pages of the
 * locale's paper with Cairo's PDF surface and PangoCairo. Text stays text
 * (pdftotext reads it back), charts are drawn as vectors, tables split
 * between rows and repeat their header row, and every page has
 * "Page N of M" in its footer. The layout runs twice: once to count the
 * pages, once to draw them.
 */

#define G_LOG_DOMAIN "tally-report"

#include "config.h"

#include <cairo-pdf.h>
#include <glib/gi18n-lib.h>
#include <langinfo.h>
#include <md4c.h>
#include <pango/pangocairo.h>
#include <string.h>

#include "tally-html-entity.h"
#include "tally-report-private.h"

#define MM               (72.0 / 25.4)
#define MARGIN_SIDE      (20 * MM)
#define MARGIN_TOP       (20 * MM)
#define MARGIN_BOTTOM    (22 * MM)
#define BODY_FONT        "DejaVu Sans"
#define MONO_FONT        "DejaVu Sans Mono"
#define BODY_SIZE        10.0
#define CODE_SIZE        8.5
#define TABLE_SIZE       9.0
#define FOOTER_SIZE      8.0
#define PARA_GAP         7.0
#define LIST_INDENT      18.0
#define QUOTE_INDENT     14.0
#define CELL_PAD         4.0
#define LINK_COLOR       "#1a5fb4"

/* {{{ The block tree */

typedef enum {
  NODE_DOC,
  NODE_PARA,
  NODE_HEADING,
  NODE_QUOTE,
  NODE_UL,
  NODE_OL,
  NODE_LI,
  NODE_CODE,
  NODE_HR,
  NODE_TABLE,
  NODE_ROW,
  NODE_CELL,
  NODE_IMAGE,
} NodeKind;

typedef struct _Node Node;
struct _Node {
  NodeKind   kind;
  Node      *parent;
  GPtrArray *children;   /* of Node*, owned */
  GString   *markup;     /* text leaves: Pango markup; images: alt text */
  char      *src;        /* images: the decoded URL */
  guint      level;      /* headings */
  guint      start;      /* ordered lists */
  int        task;       /* list items: 0 none, 1 open, 2 done */
  gboolean   header;     /* rows and cells of a table's head */
  int        align;      /* cells: PangoAlignment */
  gboolean   implicit;   /* a paragraph made for a tight list item's text */
};

static void
node_free (Node *node)
{
  if (node == NULL)
    return;
  g_clear_pointer (&node->children, g_ptr_array_unref);
  if (node->markup != NULL)
    g_string_free (node->markup, TRUE);
  g_free (node->src);
  g_free (node);
}

static Node *
node_add (Node     *parent,
          NodeKind  kind)
{
  Node *node = g_new0 (Node, 1);

  node->kind = kind;
  node->parent = parent;
  node->children = g_ptr_array_new_with_free_func ((GDestroyNotify) node_free);
  node->markup = g_string_new (NULL);
  if (parent != NULL)
    g_ptr_array_add (parent->children, node);
  return node;
}

typedef struct {
  Node      *root;
  Node      *current;
  Node      *image;        /* the image whose alt text is being read */
  guint      image_depth;
  gboolean   in_head;
  GPtrArray *open_tags;    /* of const char*: the spans open in current */
} Builder;

static gboolean
is_text_leaf (Node *node)
{
  return node->kind == NODE_PARA || node->kind == NODE_HEADING || node->kind == NODE_CODE ||
         node->kind == NODE_CELL;
}

/* The node text goes to; a tight list item's text gets a paragraph. */
static Node *
text_target (Builder *b)
{
  if (!is_text_leaf (b->current))
    {
      b->current = node_add (b->current, NODE_PARA);
      b->current->implicit = TRUE;
    }
  return b->current;
}

static void
close_implicit (Builder *b)
{
  if (b->current->implicit)
    b->current = b->current->parent;
}

static int
enter_block_cb (MD_BLOCKTYPE  type,
                void         *detail,
                void         *user_data)
{
  Builder *b = user_data;
  Node *node = NULL;

  if (type != MD_BLOCK_DOC)
    close_implicit (b);

  switch (type)
    {
    case MD_BLOCK_DOC:
      return 0;
    case MD_BLOCK_QUOTE:
      node = node_add (b->current, NODE_QUOTE);
      break;
    case MD_BLOCK_UL:
      node = node_add (b->current, NODE_UL);
      break;
    case MD_BLOCK_OL:
      node = node_add (b->current, NODE_OL);
      node->start = ((MD_BLOCK_OL_DETAIL *) detail)->start;
      break;
    case MD_BLOCK_LI:
      {
        MD_BLOCK_LI_DETAIL *li = detail;

        node = node_add (b->current, NODE_LI);
        node->task = li->is_task ? (li->task_mark == ' ' ? 1 : 2) : 0;
      }
      break;
    case MD_BLOCK_HR:
      node = node_add (b->current, NODE_HR);
      break;
    case MD_BLOCK_H:
      node = node_add (b->current, NODE_HEADING);
      node->level = ((MD_BLOCK_H_DETAIL *) detail)->level;
      break;
    case MD_BLOCK_CODE:
      node = node_add (b->current, NODE_CODE);
      break;
    case MD_BLOCK_HTML:
    case MD_BLOCK_P:
      node = node_add (b->current, NODE_PARA);
      break;
    case MD_BLOCK_TABLE:
      node = node_add (b->current, NODE_TABLE);
      break;
    case MD_BLOCK_THEAD:
      b->in_head = TRUE;
      return 0;
    case MD_BLOCK_TBODY:
      b->in_head = FALSE;
      return 0;
    case MD_BLOCK_TR:
      node = node_add (b->current, NODE_ROW);
      node->header = b->in_head;
      break;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
      {
        MD_BLOCK_TD_DETAIL *td = detail;

        node = node_add (b->current, NODE_CELL);
        node->header = type == MD_BLOCK_TH;
        node->align = td->align == MD_ALIGN_RIGHT ? PANGO_ALIGN_RIGHT
                      : td->align == MD_ALIGN_CENTER ? PANGO_ALIGN_CENTER : PANGO_ALIGN_LEFT;
      }
      break;
    default:
      return 0;
    }
  b->current = node;
  g_ptr_array_set_size (b->open_tags, 0);
  return 0;
}

static int
leave_block_cb (MD_BLOCKTYPE  type,
                void         *detail,
                void         *user_data)
{
  Builder *b = user_data;

  if (type == MD_BLOCK_DOC || type == MD_BLOCK_THEAD || type == MD_BLOCK_TBODY)
    return 0;
  close_implicit (b);
  if (b->current->parent != NULL)
    b->current = b->current->parent;
  return 0;
}

static const char *
span_open_tag (MD_SPANTYPE type)
{
  switch (type)
    {
    case MD_SPAN_EM: return "<i>";
    case MD_SPAN_STRONG: return "<b>";
    case MD_SPAN_CODE: return "<span font_family=\"" MONO_FONT "\" size=\"90%\" background=\"#eeeeee\">";
    case MD_SPAN_A: return "<span foreground=\"" LINK_COLOR "\" underline=\"single\">";
    case MD_SPAN_DEL: return "<s>";
    case MD_SPAN_U: return "<u>";
    case MD_SPAN_IMG:
    case MD_SPAN_LATEXMATH:
    case MD_SPAN_LATEXMATH_DISPLAY:
    case MD_SPAN_WIKILINK:
    default: return NULL;
    }
}

static const char *
span_close_tag (MD_SPANTYPE type)
{
  switch (type)
    {
    case MD_SPAN_EM: return "</i>";
    case MD_SPAN_STRONG: return "</b>";
    case MD_SPAN_DEL: return "</s>";
    case MD_SPAN_U: return "</u>";
    case MD_SPAN_CODE:
    case MD_SPAN_A: return "</span>";
    case MD_SPAN_IMG:
    case MD_SPAN_LATEXMATH:
    case MD_SPAN_LATEXMATH_DISPLAY:
    case MD_SPAN_WIKILINK:
    default: return NULL;
    }
}

static char *
attribute_text (const MD_ATTRIBUTE *attribute)
{
  return tally_report_url_decode (attribute->text, attribute->size);
}

static int
enter_span_cb (MD_SPANTYPE  type,
               void        *detail,
               void        *user_data)
{
  Builder *b = user_data;
  const char *tag;

  if (b->image_depth > 0)
    {
      if (type == MD_SPAN_IMG)
        b->image_depth++;
      return 0;
    }

  if (type == MD_SPAN_IMG)
    {
      Node *leaf = text_target (b);

      /* In a table cell, an image is its alt text; elsewhere it ends
       * the paragraph's run and becomes a block of its own. */
      b->image_depth = 1;
      if (leaf->kind == NODE_CELL)
        {
          b->image = NULL;
          return 0;
        }
      b->image = node_add (leaf->parent, NODE_IMAGE);
      b->image->src = attribute_text (&((MD_SPAN_IMG_DETAIL *) detail)->src);
      return 0;
    }

  tag = span_open_tag (type);
  if (tag != NULL)
    {
      g_string_append (text_target (b)->markup, tag);
      g_ptr_array_add (b->open_tags, (gpointer) tag);
    }
  return 0;
}

static int
leave_span_cb (MD_SPANTYPE  type,
               void        *detail,
               void        *user_data)
{
  Builder *b = user_data;
  const char *tag;

  if (b->image_depth > 0)
    {
      if (type == MD_SPAN_IMG && --b->image_depth == 0 && b->image != NULL)
        {
          Node *leaf = b->current;
          Node *rest;

          /* The paragraph goes on after the image, its spans still open. */
          for (guint i = b->open_tags->len; i > 0; i--)
            {
              const char *open = g_ptr_array_index (b->open_tags, i - 1);

              g_string_append (leaf->markup, g_str_equal (open, "<i>") ? "</i>"
                                             : g_str_equal (open, "<b>") ? "</b>"
                                             : g_str_equal (open, "<s>") ? "</s>"
                                             : g_str_equal (open, "<u>") ? "</u>" : "</span>");
            }
          rest = node_add (leaf->parent, leaf->kind);
          rest->level = leaf->level;
          rest->implicit = leaf->implicit;
          for (guint i = 0; i < b->open_tags->len; i++)
            g_string_append (rest->markup, g_ptr_array_index (b->open_tags, i));
          b->current = rest;
          b->image = NULL;
        }
      return 0;
    }

  tag = span_close_tag (type);
  if (tag != NULL)
    {
      g_string_append (text_target (b)->markup, tag);
      if (b->open_tags->len > 0)
        g_ptr_array_set_size (b->open_tags, b->open_tags->len - 1);
    }
  return 0;
}

static int
text_cb (MD_TEXTTYPE    type,
         const MD_CHAR *text,
         MD_SIZE        size,
         void          *user_data)
{
  Builder *b = user_data;
  g_autoptr(GString) plain = g_string_new (NULL);
  g_autofree char *escaped = NULL;

  switch (type)
    {
    case MD_TEXT_BR:
      g_string_append_c (plain, '\n');
      break;
    case MD_TEXT_SOFTBR:
      g_string_append_c (plain, ' ');
      break;
    case MD_TEXT_NULLCHAR:
      g_string_append (plain, "\uFFFD");
      break;
    case MD_TEXT_ENTITY:
      tally_html_entity_append (plain, text, size);
      break;
    case MD_TEXT_NORMAL:
    case MD_TEXT_CODE:
    case MD_TEXT_HTML:
    case MD_TEXT_LATEXMATH:
    default:
      g_string_append_len (plain, text, size);
      break;
    }

  if (b->image_depth > 0 && b->image != NULL)
    {
      g_string_append (b->image->markup, plain->str);
      return 0;
    }
  escaped = g_markup_escape_text (plain->str, plain->len);
  g_string_append (text_target (b)->markup, escaped);
  return 0;
}

static Node *
parse_markdown (const char *markdown)
{
  Builder b = { 0 };
  MD_PARSER parser = { 0 };

  b.root = node_add (NULL, NODE_DOC);
  b.current = b.root;
  b.open_tags = g_ptr_array_new ();
  parser.flags = MD_DIALECT_GITHUB | MD_FLAG_NOHTML;
  parser.enter_block = enter_block_cb;
  parser.leave_block = leave_block_cb;
  parser.enter_span = enter_span_cb;
  parser.leave_span = leave_span_cb;
  parser.text = text_cb;
  if (md_parse (markdown, (MD_SIZE) strlen (markdown), &parser, &b) != 0)
    g_clear_pointer (&b.root, node_free);
  g_ptr_array_unref (b.open_tags);
  return b.root;
}

/* }}} */

/* {{{ Paper */

/**
 * tally_report_paper_size:
 * @width: (out): the page's width in points
 * @height: (out): the page's height in points
 *
 * The paper of the locale's `LC_PAPER` (glibc's `_NL_PAPER_WIDTH`):
 * US Letter (216 × 279 mm) where the locale uses it, else A4.
 */
void
tally_report_paper_size (double *width,
                         double *height)
{
  int width_mm = 0, height_mm = 0;

#ifdef __GLIBC__
  /* glibc returns these numbers in the pointer itself: a union of the
   * string and an unsigned int, read as `locale -k LC_PAPER` does. */
  width_mm = (int) (unsigned int) (guintptr) nl_langinfo (_NL_PAPER_WIDTH);
  height_mm = (int) (unsigned int) (guintptr) nl_langinfo (_NL_PAPER_HEIGHT);
#endif
  if (width_mm == 216 && height_mm == 279)
    {
      *width = 612.0;
      *height = 792.0;
    }
  else
    {
      *width = 210 * MM;
      *height = 297 * MM;
    }
}

/* }}} */

/* {{{ Layout */

typedef struct {
  cairo_t                 *cr;
  PangoContext            *context;
  gboolean                 drawing;
  double                   page_width;
  double                   page_height;
  double                   y;
  int                      page;
  int                      pages;       /* known when drawing */
  GArray                  *bars;        /* of double: quote bars' x */
  char                    *marker;      /* a list item's marker, drawn with its first line */
  double                   marker_x;
  const TallyReportSource *source;
  GHashTable              *images;      /* src → TallyReportImage */
  GCancellable            *cancellable;
} Layout;

static double
bottom (Layout *l)
{
  return l->page_height - MARGIN_BOTTOM;
}

static double
content_height (Layout *l)
{
  return l->page_height - MARGIN_TOP - MARGIN_BOTTOM;
}

static gboolean
at_top (Layout *l)
{
  return l->y <= MARGIN_TOP + 0.01;
}

static void
draw_footer (Layout *l)
{
  g_autoptr(PangoLayout) layout = pango_layout_new (l->context);
  g_autoptr(PangoFontDescription) font = pango_font_description_from_string (BODY_FONT);
  /* TRANSLATORS: the footer of every page of an exported PDF */
  g_autofree char *text = g_strdup_printf (_("Page %d of %d"), l->page, l->pages);
  int w, h;

  pango_font_description_set_size (font, FOOTER_SIZE * PANGO_SCALE);
  pango_layout_set_font_description (layout, font);
  pango_layout_set_text (layout, text, -1);
  pango_layout_get_size (layout, &w, &h);
  cairo_set_source_rgb (l->cr, 0.4, 0.4, 0.42);
  cairo_move_to (l->cr, (l->page_width - (double) w / PANGO_SCALE) / 2,
                 l->page_height - MARGIN_BOTTOM / 2 - (double) h / PANGO_SCALE / 2);
  pango_cairo_show_layout (l->cr, layout);
}

static void
new_page (Layout *l)
{
  if (l->drawing)
    {
      draw_footer (l);
      cairo_show_page (l->cr);
    }
  l->page++;
  l->y = MARGIN_TOP;
}

static void
set_color (Layout     *l,
           const char *hex)
{
  PangoColor color;

  if (!pango_color_parse (&color, hex))
    return;
  cairo_set_source_rgb (l->cr, color.red / 65535.0, color.green / 65535.0, color.blue / 65535.0);
}

static PangoLayout *
make_layout (Layout     *l,
             const char *markup,
             const char *family,
             double      size,
             gboolean    bold,
             double      width)
{
  PangoLayout *layout = pango_layout_new (l->context);
  g_autoptr(PangoFontDescription) font = pango_font_description_from_string (family);

  pango_font_description_set_size (font, (int) (size * PANGO_SCALE));
  if (bold)
    pango_font_description_set_weight (font, PANGO_WEIGHT_BOLD);
  pango_layout_set_font_description (layout, font);
  pango_layout_set_wrap (layout, PANGO_WRAP_WORD_CHAR);
  if (width > 0)
    pango_layout_set_width (layout, (int) (width * PANGO_SCALE));
  pango_layout_set_markup (layout, markup, -1);
  return layout;
}

typedef enum {
  LINE_PLAIN,
  LINE_CODE,
} LineStyle;

/* Flows @layout's lines from l->y, breaking pages between lines. */
static void
flow_layout (Layout      *l,
             PangoLayout *layout,
             double       x,
             double       width,
             LineStyle    style,
             const char  *color)
{
  PangoLayoutIter *iter = pango_layout_get_iter (layout);

  do
    {
      PangoRectangle logical;
      double line_height, baseline;

      pango_layout_iter_get_line_extents (iter, NULL, &logical);
      line_height = (double) logical.height / PANGO_SCALE;
      baseline = (double) (pango_layout_iter_get_baseline (iter) - logical.y) / PANGO_SCALE;
      if (l->y + line_height > bottom (l) && !at_top (l))
        new_page (l);

      if (l->drawing)
        {
          if (style == LINE_CODE)
            {
              cairo_set_source_rgb (l->cr, 0.96, 0.96, 0.96);
              cairo_rectangle (l->cr, x - 5, l->y, width + 10, line_height);
              cairo_fill (l->cr);
            }
          for (guint i = 0; i < l->bars->len; i++)
            {
              cairo_set_source_rgb (l->cr, 0.80, 0.80, 0.82);
              cairo_rectangle (l->cr, g_array_index (l->bars, double, i), l->y, 3, line_height);
              cairo_fill (l->cr);
            }
          if (l->marker != NULL)
            {
              g_autoptr(PangoLayout) marker = make_layout (l, l->marker, BODY_FONT, BODY_SIZE, FALSE, -1);

              set_color (l, "#1c1c1e");
              cairo_move_to (l->cr, l->marker_x,
                             l->y + baseline - (double) pango_layout_get_baseline (marker) / PANGO_SCALE);
              pango_cairo_show_layout (l->cr, marker);
            }
          set_color (l, color);
          cairo_move_to (l->cr, x + (double) logical.x / PANGO_SCALE, l->y + baseline);
          pango_cairo_show_layout_line (l->cr, pango_layout_iter_get_line_readonly (iter));
        }
      g_clear_pointer (&l->marker, g_free);
      l->y += line_height;
    }
  while (pango_layout_iter_next_line (iter));
  pango_layout_iter_free (iter);
}

static void
flow_text (Layout     *l,
           const char *markup,
           const char *family,
           double      size,
           gboolean    bold,
           double      x,
           double      width,
           LineStyle   style,
           const char *color)
{
  g_autoptr(PangoLayout) layout = make_layout (l, markup, family, size, bold, width);

  flow_layout (l, layout, x, width, style, color);
}

static void layout_children (Layout *l, Node *node, double x, double width);

static TallyReportImage *
get_image (Layout     *l,
           const char *src)
{
  TallyReportImage *image = g_hash_table_lookup (l->images, src);

  if (image == NULL)
    {
      image = tally_report_image_load (l->source, src);
      g_hash_table_insert (l->images, g_strdup (src), image);
    }
  return image;
}

static void
layout_image (Layout *l,
              Node   *node,
              double  x,
              double  width)
{
  TallyReportImage *image = get_image (l, node->src);
  double w, h;

  if (image->kind == TALLY_REPORT_IMAGE_REMOTE)
    {
      g_autofree char *text = g_markup_printf_escaped ("<span foreground=\"" LINK_COLOR "\" underline=\"single\">%s</span> (%s)",
                                                       node->markup->len > 0 ? node->markup->str : image->src,
                                                       image->src);

      flow_text (l, text, BODY_FONT, BODY_SIZE, FALSE, x, width, LINE_PLAIN, "#1c1c1e");
      l->y += PARA_GAP;
      return;
    }
  if (image->kind == TALLY_REPORT_IMAGE_MISSING)
    {
      g_autofree char *text = g_markup_escape_text (image->message, -1);
      g_autoptr(PangoLayout) layout = make_layout (l, text, BODY_FONT, BODY_SIZE, TRUE, width - 24);
      int lw, lh;

      pango_layout_get_size (layout, &lw, &lh);
      h = (double) lh / PANGO_SCALE + 20;
      if (l->y + h > bottom (l) && !at_top (l))
        new_page (l);
      if (l->drawing)
        {
          static const double dash[] = { 5, 3 };

          cairo_save (l->cr);
          cairo_set_source_rgb (l->cr, 1.0, 0.96, 0.96);
          cairo_rectangle (l->cr, x, l->y, width, h);
          cairo_fill_preserve (l->cr);
          cairo_set_source_rgb (l->cr, 0.75, 0.11, 0.16);
          cairo_set_line_width (l->cr, 1.5);
          cairo_set_dash (l->cr, dash, 2, 0);
          cairo_stroke (l->cr);
          cairo_restore (l->cr);
          set_color (l, "#a51d2d");
          cairo_move_to (l->cr, x + 12, l->y + 10);
          pango_cairo_show_layout (l->cr, layout);
        }
      l->y += h + PARA_GAP;
      return;
    }

  w = MIN (image->width, width);
  h = image->height * w / image->width;
  if (h > content_height (l) * 0.75)
    {
      h = content_height (l) * 0.75;
      w = image->width * h / image->height;
    }
  if (l->y + h > bottom (l) && !at_top (l))
    new_page (l);
  if (l->drawing)
    {
      cairo_save (l->cr);
      cairo_translate (l->cr, x, l->y);
      tally_report_image_draw (image, l->cr, w, h);
      cairo_restore (l->cr);
    }
  l->y += h + PARA_GAP;
}

static const char *
heading_color (void)
{
  return "#111113";
}

static void
layout_heading (Layout *l,
                Node   *node,
                double  x,
                double  width)
{
  static const double sizes[] = { 20, 15, 12.5, 11, 10.5, 10 };
  double size = sizes[CLAMP (node->level, 1, 6) - 1];
  g_autoptr(PangoLayout) layout = make_layout (l, node->markup->str, BODY_FONT, size, TRUE, width);
  int w, h;

  pango_layout_get_size (layout, &w, &h);
  if (!at_top (l))
    l->y += size * 0.6;
  /* Keep a heading with at least three lines of what follows. */
  if (l->y + (double) h / PANGO_SCALE + 3 * BODY_SIZE * 1.4 > bottom (l) && !at_top (l))
    new_page (l);
  flow_layout (l, layout, x, width, LINE_PLAIN, heading_color ());
  if (node->level == 1)
    {
      if (l->drawing)
        {
          cairo_set_source_rgb (l->cr, 0.82, 0.82, 0.84);
          cairo_rectangle (l->cr, x, l->y + 2, width, 0.8);
          cairo_fill (l->cr);
        }
      l->y += 4;
    }
  l->y += PARA_GAP * 0.7;
}

static void
layout_code (Layout *l,
             Node   *node,
             double  x,
             double  width)
{
  GString *text = node->markup;

  /* md4c ends a code block with its newline; an empty last line would
   * only add a grey band. */
  while (text->len > 0 && text->str[text->len - 1] == '\n')
    g_string_truncate (text, text->len - 1);
  l->y += 3;
  flow_text (l, text->str, MONO_FONT, CODE_SIZE, FALSE, x + 5, width - 10, LINE_CODE, "#1c1c1e");
  l->y += 3 + PARA_GAP;
}

/* {{{ Tables */

typedef struct {
  guint         n_columns;
  double       *widths;
} Columns;

static char *
cell_markup (Node *cell)
{
  if (cell->header)
    return g_strdup_printf ("<b>%s</b>", cell->markup->str);
  return g_strdup (cell->markup->str);
}

static PangoLayout *
cell_layout (Layout *l,
             Node   *cell,
             double  width)
{
  g_autofree char *markup = cell_markup (cell);
  PangoLayout *layout = make_layout (l, markup, BODY_FONT, TABLE_SIZE, FALSE, width);

  pango_layout_set_alignment (layout, cell->align);
  return layout;
}

static void
measure_columns (Layout  *l,
                 Node    *table,
                 double   width,
                 Columns *columns)
{
  g_autofree double *natural = NULL;
  g_autofree double *minimum = NULL;
  double sum_natural = 0;

  columns->n_columns = 0;
  for (guint r = 0; r < table->children->len; r++)
    columns->n_columns = MAX (columns->n_columns, ((Node *) g_ptr_array_index (table->children, r))->children->len);
  columns->n_columns = MAX (columns->n_columns, 1);
  natural = g_new0 (double, columns->n_columns);
  minimum = g_new0 (double, columns->n_columns);
  columns->widths = g_new0 (double, columns->n_columns);

  for (guint r = 0; r < table->children->len; r++)
    {
      Node *row = g_ptr_array_index (table->children, r);

      for (guint c = 0; c < row->children->len; c++)
        {
          g_autoptr(PangoLayout) layout = cell_layout (l, g_ptr_array_index (row->children, c), -1);
          PangoRectangle logical;

          pango_layout_get_extents (layout, NULL, &logical);
          natural[c] = MAX (natural[c], (double) logical.width / PANGO_SCALE + 2 * CELL_PAD);
          /* the longest word */
          pango_layout_set_wrap (layout, PANGO_WRAP_WORD);
          pango_layout_set_width (layout, 1);
          pango_layout_get_extents (layout, NULL, &logical);
          minimum[c] = MAX (minimum[c], MIN ((double) logical.width / PANGO_SCALE + 2 * CELL_PAD, width * 0.3));
        }
    }
  for (guint c = 0; c < columns->n_columns; c++)
    {
      natural[c] = MAX (natural[c], 2 * CELL_PAD + 8);
      minimum[c] = MIN (MAX (minimum[c], 2 * CELL_PAD + 8), natural[c]);
      sum_natural += natural[c];
    }

  if (sum_natural <= width)
    {
      memcpy (columns->widths, natural, columns->n_columns * sizeof (double));
      return;
    }

  /* Columns narrower than a fair share keep their natural width; the
   * others share what is left by need, each at least its longest word. */
  {
    g_autofree gboolean *fixed = g_new0 (gboolean, columns->n_columns);
    double remaining = width, flexible_natural = 0, total = 0;
    guint n_flexible = columns->n_columns;
    gboolean changed = TRUE;

    while (changed && n_flexible > 0)
      {
        double fair = remaining / n_flexible;

        changed = FALSE;
        for (guint c = 0; c < columns->n_columns; c++)
          if (!fixed[c] && natural[c] <= fair)
            {
              fixed[c] = TRUE;
              columns->widths[c] = natural[c];
              remaining -= natural[c];
              n_flexible--;
              changed = TRUE;
            }
      }
    for (guint c = 0; c < columns->n_columns; c++)
      if (!fixed[c])
        flexible_natural += natural[c];
    for (guint c = 0; c < columns->n_columns; c++)
      {
        if (!fixed[c])
          columns->widths[c] = MAX (minimum[c], remaining * natural[c] / MAX (flexible_natural, 1));
        total += columns->widths[c];
      }
    /* Longest words that do not fit break inside (PANGO_WRAP_WORD_CHAR). */
    if (total > width)
      for (guint c = 0; c < columns->n_columns; c++)
        columns->widths[c] *= width / total;
  }
}

static double
row_height (Layout  *l,
            Node    *row,
            Columns *columns)
{
  double height = 0;

  for (guint c = 0; c < row->children->len && c < columns->n_columns; c++)
    {
      g_autoptr(PangoLayout) layout = cell_layout (l, g_ptr_array_index (row->children, c),
                                                   columns->widths[c] - 2 * CELL_PAD);
      int w, h;

      pango_layout_get_size (layout, &w, &h);
      height = MAX (height, (double) h / PANGO_SCALE);
    }
  return MAX (height, TABLE_SIZE) + 2 * CELL_PAD;
}

static void
draw_row (Layout  *l,
          Node    *row,
          Columns *columns,
          double   x,
          double   height)
{
  double cx = x;

  if (!l->drawing)
    return;
  for (guint c = 0; c < columns->n_columns; c++)
    {
      Node *cell = c < row->children->len ? g_ptr_array_index (row->children, c) : NULL;

      if (row->header)
        {
          cairo_set_source_rgb (l->cr, 0.93, 0.93, 0.93);
          cairo_rectangle (l->cr, cx, l->y, columns->widths[c], height);
          cairo_fill (l->cr);
        }
      cairo_set_source_rgb (l->cr, 0.78, 0.78, 0.80);
      cairo_set_line_width (l->cr, 0.6);
      cairo_rectangle (l->cr, cx, l->y, columns->widths[c], height);
      cairo_stroke (l->cr);
      if (cell != NULL)
        {
          g_autoptr(PangoLayout) layout = cell_layout (l, cell, columns->widths[c] - 2 * CELL_PAD);

          set_color (l, "#1c1c1e");
          cairo_move_to (l->cr, cx + CELL_PAD, l->y + CELL_PAD);
          pango_cairo_show_layout (l->cr, layout);
        }
      cx += columns->widths[c];
    }
}

static void
layout_table (Layout *l,
              Node   *table,
              double  x,
              double  width)
{
  Columns columns = { 0 };
  Node *header = NULL;
  double header_height = 0;

  measure_columns (l, table, width, &columns);
  if (table->children->len > 0 && ((Node *) g_ptr_array_index (table->children, 0))->header)
    {
      header = g_ptr_array_index (table->children, 0);
      header_height = row_height (l, header, &columns);
    }

  for (guint r = 0; r < table->children->len; r++)
    {
      Node *row = g_ptr_array_index (table->children, r);
      double height = row_height (l, row, &columns);
      /* a header row goes with the first row below it */
      double needed = row == header && r + 1 < table->children->len
                        ? height + row_height (l, g_ptr_array_index (table->children, r + 1), &columns)
                        : height;

      if (l->y + needed > bottom (l) && !at_top (l))
        {
          new_page (l);
          if (header != NULL && row != header)
            {
              draw_row (l, header, &columns, x, header_height);
              l->y += header_height;
            }
        }
      draw_row (l, row, &columns, x, height);
      l->y += height;
    }
  l->y += PARA_GAP + 2;
  g_free (columns.widths);
}

/* }}} */

static void
layout_list (Layout *l,
             Node   *list,
             double  x,
             double  width)
{
  for (guint i = 0; i < list->children->len; i++)
    {
      Node *item = g_ptr_array_index (list->children, i);

      g_free (l->marker);
      if (list->kind == NODE_OL)
        l->marker = g_strdup_printf ("%u.", list->start + i);
      else
        l->marker = g_strdup ("•");
      if (item->task != 0)
        {
          char *marker = g_strdup_printf ("%s %s", l->marker, item->task == 2 ? "☑" : "☐");

          g_free (l->marker);
          l->marker = marker;
        }
      l->marker_x = x + 2;
      layout_children (l, item, x + LIST_INDENT + (item->task != 0 ? 12 : 0),
                       width - LIST_INDENT - (item->task != 0 ? 12 : 0));
    }
  g_clear_pointer (&l->marker, g_free);
}

static gboolean
is_blank (GString *markup)
{
  for (gsize i = 0; i < markup->len; i++)
    if (!g_ascii_isspace (markup->str[i]))
      return FALSE;
  return TRUE;
}

static void
layout_node (Layout *l,
             Node   *node,
             double  x,
             double  width)
{
  switch (node->kind)
    {
    case NODE_PARA:
      if (is_blank (node->markup))
        break;
      flow_text (l, node->markup->str, BODY_FONT, BODY_SIZE, FALSE, x, width, LINE_PLAIN, "#1c1c1e");
      /* the items of a tight list sit close together */
      l->y += node->implicit ? 2 : PARA_GAP;
      break;

    case NODE_HEADING:
      if (!is_blank (node->markup))
        layout_heading (l, node, x, width);
      break;

    case NODE_CODE:
      layout_code (l, node, x, width);
      break;

    case NODE_QUOTE:
      {
        double bar = x;

        g_array_append_val (l->bars, bar);
        layout_children (l, node, x + QUOTE_INDENT, width - QUOTE_INDENT);
        g_array_set_size (l->bars, l->bars->len - 1);
      }
      break;

    case NODE_UL:
    case NODE_OL:
      layout_list (l, node, x, width);
      if (node->parent == NULL || node->parent->kind != NODE_LI)
        l->y += PARA_GAP - 2;
      break;

    case NODE_HR:
      if (l->y + 14 > bottom (l))
        new_page (l);
      else
        {
          if (l->drawing)
            {
              cairo_set_source_rgb (l->cr, 0.78, 0.78, 0.80);
              cairo_rectangle (l->cr, x, l->y + 6, width, 0.8);
              cairo_fill (l->cr);
            }
          l->y += 14;
        }
      break;

    case NODE_TABLE:
      layout_table (l, node, x, width);
      break;

    case NODE_IMAGE:
      layout_image (l, node, x, width);
      break;

    case NODE_LI:
    case NODE_DOC:
      layout_children (l, node, x, width);
      break;

    case NODE_ROW:
    case NODE_CELL:
      break;
    }
}

static void
layout_children (Layout *l,
                 Node   *node,
                 double  x,
                 double  width)
{
  for (guint i = 0; i < node->children->len; i++)
    {
      if (g_cancellable_is_cancelled (l->cancellable))
        return;
      layout_node (l, g_ptr_array_index (node->children, i), x, width);
    }
}

static void
layout_document (Layout *l,
                 Node   *root)
{
  l->page = 1;
  l->y = MARGIN_TOP;
  layout_children (l, root, MARGIN_SIDE, l->page_width - 2 * MARGIN_SIDE);
  g_clear_pointer (&l->marker, g_free);
  if (l->drawing)
    {
      draw_footer (l);
      cairo_show_page (l->cr);
    }
}

/* }}} */

static cairo_status_t
append_bytes_cb (void                *closure,
                 const unsigned char *data,
                 unsigned int         length)
{
  g_byte_array_append (closure, data, length);
  return CAIRO_STATUS_SUCCESS;
}

/**
 * tally_report_markdown_to_pdf:
 * @markdown: the report, UTF-8
 * @title: the PDF's title (its metadata)
 * @source: where its images come from
 * @cancellable: (nullable): a #GCancellable, checked between blocks
 * @error: return location for a #GError
 *
 * Lays @markdown out on pages of the locale's paper
 * (tally_report_paper_size()) with 20 mm margins: headings, paragraphs
 * with bold, italic, code and links, lists (task lists too), code
 * blocks, block quotes, rules, tables (split between rows, the header row
 * repeated on each page, long cells wrapped) and images (charts and SVGs
 * as vectors, at most the text's width and three quarters of a page
 * high; a placeholder for what cannot be shown). Raw HTML is text.
 *
 * Returns: (transfer full) (nullable): the PDF's bytes; %NULL with
 *   %TALLY_REPORT_ERROR_INVALID (not UTF-8, unparsable),
 *   %TALLY_REPORT_ERROR_WRITE (Cairo failed) or %G_IO_ERROR_CANCELLED
 */
GBytes *
tally_report_markdown_to_pdf (const char               *markdown,
                              const char               *title,
                              const TallyReportSource  *source,
                              GCancellable             *cancellable,
                              GError                  **error)
{
  g_autoptr(GByteArray) bytes = g_byte_array_new ();
  g_autoptr(GHashTable) images = NULL;
  g_autoptr(GObject) context_object = NULL;
  PangoContext *context;
  g_autoptr(GArray) bars = NULL;
  cairo_font_options_t *options;
  cairo_surface_t *surface;
  cairo_status_t status;
  Node *root;
  Layout l = { 0 };

  if (!tally_report_check_utf8 (markdown, error))
    return NULL;
  root = parse_markdown (markdown);
  if (root == NULL)
    {
      g_set_error_literal (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_INVALID,
                           _("The report’s Markdown could not be read"));
      return NULL;
    }

  images = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) tally_report_image_free);
  bars = g_array_new (FALSE, FALSE, sizeof (double));
  context = pango_font_map_create_context (pango_cairo_font_map_get_default ());
  context_object = G_OBJECT (context);
  pango_cairo_context_set_resolution (context, 72.0);
  options = cairo_font_options_create ();
  cairo_font_options_set_hint_metrics (options, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style (options, CAIRO_HINT_STYLE_NONE);
  pango_cairo_context_set_font_options (context, options);
  cairo_font_options_destroy (options);

  l.context = context;
  l.bars = bars;
  l.source = source;
  l.images = images;
  l.cancellable = cancellable;
  tally_report_paper_size (&l.page_width, &l.page_height);

  /* Count the pages, then draw them. */
  layout_document (&l, root);
  l.pages = l.page;

  surface = cairo_pdf_surface_create_for_stream (append_bytes_cb, bytes, l.page_width, l.page_height);
  cairo_pdf_surface_set_metadata (surface, CAIRO_PDF_METADATA_TITLE, title);
  cairo_pdf_surface_set_metadata (surface, CAIRO_PDF_METADATA_CREATOR, "Tally");
  l.cr = cairo_create (surface);
  l.drawing = TRUE;
  if (!g_cancellable_is_cancelled (cancellable))
    layout_document (&l, root);
  cairo_destroy (l.cr);
  cairo_surface_finish (surface);
  status = cairo_surface_status (surface);
  cairo_surface_destroy (surface);
  node_free (root);
  g_free (l.marker);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  if (status != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, TALLY_REPORT_ERROR, TALLY_REPORT_ERROR_WRITE,
                   _("The PDF could not be drawn: %s"), cairo_status_to_string (status));
      return NULL;
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&bytes));
}
