/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "test-markdown"

#include "config.h"

#include <string.h>

#include <adwaita.h>
#include <gtk/gtk.h>

#include "tally-markdown-code-block.h"
#include "tally-markdown-link.h"
#include "tally-markdown-renderer.h"
#include "tally-markdown-scanner.h"
#include "tally-markdown-table.h"
#include "tally-markdown-view-private.h"
#include "tally-test-ui.h"
#include "tally-ui.h"

/*
 * TallyMarkdownView: golden renders (tests/golden/markdown/<case>.md →
 * <case>.structure, compared via dup_structure), streaming one character at
 * a time and in random chunks (the final buffer must equal a fresh render),
 * the tail-only re-rendering, link activation, code blocks, and the width
 * and place of the blocks (children of the view drawn over their anchors'
 * lines).
 *
 * Set TALLY_UPDATE_GOLDEN=1 to rewrite the .structure files from the
 * current output (then review the diff).
 */

static const char *golden_cases[] = {
  "headings", "emphasis", "links", "lists", "code", "table", "quote",
  "rule", "unclosed", "nested_blocks", "answer", "refdef",
};

#define TIMEOUT_US (10 * G_USEC_PER_SEC)

/* ---------------------------------------------------------------------- */
/* Helpers                                                                  */

typedef gboolean (*Condition) (gpointer data);

static void
spin_until (Condition   cond,
            gpointer    data,
            const char *what)
{
  gint64 deadline = g_get_monotonic_time () + TIMEOUT_US;

  while (!cond (data))
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("Timed out waiting for %s", what);
      g_main_context_iteration (NULL, FALSE);
      if (!cond (data))
        g_usleep (1000);
    }
}

static void
pump_pending (void)
{
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

static gboolean
is_mapped (gpointer data)
{
  return gtk_widget_get_mapped (GTK_WIDGET (data));
}

static gboolean
not_pending (gpointer data)
{
  return !tally_markdown_view_get_pending (TALLY_MARKDOWN_VIEW (data));
}

typedef struct
{
  GtkWidget *window;
  TallyMarkdownView *view;
} Fixture;

static void
fixture_open (Fixture *fx,
              int      width)
{
  fx->window = gtk_window_new ();
  fx->view = TALLY_MARKDOWN_VIEW (tally_markdown_view_new ());
  gtk_window_set_default_size (GTK_WINDOW (fx->window), width, 600);
  gtk_window_set_child (GTK_WINDOW (fx->window), GTK_WIDGET (fx->view));
  gtk_window_present (GTK_WINDOW (fx->window));
  spin_until (is_mapped, fx->view, "the view to be mapped");
}

static void
fixture_close (Fixture *fx)
{
  gtk_window_destroy (GTK_WINDOW (fx->window));
  pump_pending ();
}

static char *
read_case (const char *name,
           const char *suffix)
{
  g_autofree char *file = g_strconcat (name, suffix, NULL);
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "golden", "markdown", file, NULL);
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, &error))
    return NULL;
  return contents;
}

static char *
fresh_structure (const char *markdown,
                 gboolean    full)
{
  TallyMarkdownView *view = TALLY_MARKDOWN_VIEW (tally_markdown_view_new ());
  char *structure;

  g_object_ref_sink (view);
  tally_markdown_view_set_markdown (view, markdown);
  structure = full ? tally_markdown_view_dup_full_structure (view)
                   : tally_markdown_view_dup_structure (view);
  g_object_unref (view);

  return structure;
}

static GtkTextChildAnchor *
nth_anchor (GtkTextBuffer *buffer,
            guint          n)
{
  GtkTextIter iter;

  gtk_text_buffer_get_start_iter (buffer, &iter);
  do
    {
      GtkTextChildAnchor *anchor = gtk_text_iter_get_child_anchor (&iter);

      if (anchor != NULL && n-- == 0)
        return anchor;
    }
  while (gtk_text_iter_forward_char (&iter));

  return NULL;
}

/* The widget the view shows at @anchor, drawn over the anchor's line. */
static GtkWidget *
anchor_widget (TallyMarkdownView  *view,
               GtkTextChildAnchor *anchor)
{
  return tally_markdown_view_get_block (view, anchor);
}

/* ---------------------------------------------------------------------- */
/* Scanner                                                                  */

static void
test_scanner (void)
{
  static const struct { const char *text; gsize commit; } cases[] = {
    { "", 0 },
    { "one paragraph", 0 },
    { "a\n\nb", 3 },
    { "a\n\nb\n\nc", 6 },
    { "a\n\n", 0 },
    { "a\n\n- b", 0 },
    { "a\n\n-", 0 },
    { "a\n\n-x", 3 },
    { "a\n\n---", 3 },
    { "a\n\n* b", 0 },
    { "a\n\n**b**", 3 },
    { "a\n\n1. b", 0 },
    { "a\n\n12) b", 0 },
    { "a\n\n12", 0 },
    { "a\n\n1.5 b", 3 },
    { "a\n\n2024 was", 3 },
    { "a\n\n  b", 0 },
    { "a\n\n\tb", 0 },
    { "a\n\n> q", 3 },
    { "```\nx\n\ny\n", 0 },
    { "```\nx\n```\ny", 10 },
    { "```\nx\n```\n\ny", 11 },
    { "````\n```\n\nz", 0 },
    { "~~~\n```\n~~~\nz", 12 },
    { "``` a`b\n\nc", 9 },
    { "    ```\n\nc", 9 },
    { "- a\n\n  b\n\nc", 10 },
    { "a\r\n\r\nb", 5 },
    /* A lone CR ends a line too (found by tests/fuzz/fuzz-markdown): here
     * it opens a fence that keeps "e" inside the code block, so the split
     * may not come before "e". */
    { "a\r\rb", 3 },
    { "\r```\n\ne", 1 },
    { "```\rx\r```\r\ry", 11 },
    { "a\r\r", 0 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      TallyMarkdownScanner scanner;
      gsize commit;

      tally_markdown_scanner_init (&scanner);
      commit = tally_markdown_scanner_feed (&scanner, cases[i].text, strlen (cases[i].text));
      if (commit != cases[i].commit)
        g_error ("scanner on %s: got %" G_GSIZE_FORMAT ", expected %" G_GSIZE_FORMAT,
                 g_strescape (cases[i].text, NULL), commit, cases[i].commit);

      /* Fed a byte at a time, the answer is the same. */
      tally_markdown_scanner_init (&scanner);
      commit = 0;
      for (gsize n = 0; n <= strlen (cases[i].text); n++)
        {
          gsize next = tally_markdown_scanner_feed (&scanner, cases[i].text, n);

          g_assert_cmpuint (next, >=, commit);
          commit = next;
        }
      g_assert_cmpuint (commit, ==, cases[i].commit);
    }
}

/* ---------------------------------------------------------------------- */
/* Renderer                                                                 */

/* The doc's own description and that of a buffer it was inserted into
 * agree, for every golden case. */
static void
test_doc_matches_buffer (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (golden_cases); i++)
    {
      g_autofree char *markdown = read_case (golden_cases[i], ".md");
      g_autoptr(TallyMarkdownDoc) doc = NULL;
      g_autoptr(GtkTextBuffer) buffer = gtk_text_buffer_new (NULL);
      g_autofree char *from_doc = NULL;
      g_autofree char *from_buffer = NULL;

      g_assert_nonnull (markdown);
      doc = tally_markdown_doc_parse (markdown, strlen (markdown), TALLY_MARKDOWN_AT_START);
      tally_markdown_doc_insert (doc, buffer, NULL);
      from_doc = tally_markdown_doc_dup_structure (doc, TRUE);
      from_buffer = tally_markdown_buffer_dup_structure (buffer, TRUE);
      g_assert_cmpstr (from_doc, ==, from_buffer);
      g_assert_cmpint (gtk_text_buffer_get_char_count (buffer), ==, (int)tally_markdown_doc_get_n_chars (doc));
    }
}

/* md4c can report a text span that runs past the end of damaged input
 * (found by fuzzing; tests/fuzz/corpus/markdown/regression-md4c-span-size):
 * the renderer cuts it at the end instead of reading or allocating ~4 GiB. */
static void
test_span_past_end (void)
{
  static const char markdown[] =
    "See [the manual][maD] and [missing].\n\n"
    "[man]: https://exampte.com/manual\340\333Manul\nDao\n\"ne.\nLinks: [the docs](https://example";
  g_autoptr(TallyMarkdownDoc) doc = NULL;
  g_autoptr(GtkTextBuffer) buffer = gtk_text_buffer_new (NULL);
  g_autofree char *from_doc = NULL;
  g_autofree char *from_buffer = NULL;

  doc = tally_markdown_doc_parse (markdown, sizeof markdown - 1, TALLY_MARKDOWN_AT_START);
  tally_markdown_doc_insert (doc, buffer, NULL);
  /* Every character shown came from the 121-byte source. */
  g_assert_cmpuint (tally_markdown_doc_get_n_chars (doc), <=, sizeof markdown - 1);
  from_doc = tally_markdown_doc_dup_structure (doc, TRUE);
  from_buffer = tally_markdown_buffer_dup_structure (buffer, TRUE);
  g_assert_cmpstr (from_doc, ==, from_buffer);
}

static void
test_bad_input (void)
{
  TallyMarkdownView *view = TALLY_MARKDOWN_VIEW (tally_markdown_view_new ());
  g_autofree char *s1 = NULL;
  g_autofree char *s2 = NULL;
  g_autofree char *s3 = NULL;

  g_object_ref_sink (view);

  /* Invalid UTF-8 and a literal object-replacement character. */
  tally_markdown_view_set_markdown (view, "bad \xff\xfe bytes \xef\xbf\xbc here");
  s1 = tally_markdown_view_dup_structure (view);
  g_assert_cmpstr (s1, ==, "[p]bad \xef\xbf\xbd\xef\xbf\xbd bytes \xef\xbf\xbd here[/p]");

  /* A character split across two deltas. */
  tally_markdown_view_set_markdown (view, NULL);
  tally_markdown_view_append (view, "caf\xc3");
  tally_markdown_view_append (view, "\xa9 ");
  tally_markdown_view_append (view, "");
  tally_markdown_view_append (view, NULL);
  tally_markdown_view_finish (view);
  s2 = tally_markdown_view_dup_structure (view);
  g_assert_cmpstr (s2, ==, "[p]caf\xc3\xa9[/p]");
  g_assert_cmpstr (tally_markdown_view_get_markdown (view), ==, "caf\xc3\xa9 ");

  tally_markdown_view_set_markdown (view, "");
  s3 = tally_markdown_view_dup_structure (view);
  g_assert_cmpstr (s3, ==, "");

  g_object_unref (view);
}

/* ---------------------------------------------------------------------- */
/* Golden cases                                                             */

static void
test_golden (gconstpointer data)
{
  const char *name = data;
  g_autofree char *markdown = read_case (name, ".md");
  g_autofree char *expected = read_case (name, ".structure");
  g_autofree char *actual = NULL;

  g_assert_nonnull (markdown);
  actual = fresh_structure (markdown, FALSE);

  if (g_getenv ("TALLY_UPDATE_GOLDEN") != NULL)
    {
      g_autofree char *file = g_strconcat (name, ".structure", NULL);
      g_autofree char *path = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "golden", "markdown", file, NULL);
      g_autoptr(GError) error = NULL;

      g_file_set_contents (path, actual, -1, &error);
      g_assert_no_error (error);
      return;
    }

  g_assert_nonnull (expected);
  g_assert_cmpstr (actual, ==, expected);
}

/* Checks that the buffer's committed part is a fresh render of the
 * committed markdown, and that the open tail is no longer than the block
 * being written. */
static void
check_prefix (TallyMarkdownView *view)
{
  TallyMarkdownViewStats stats;
  const char *source = tally_markdown_view_get_markdown (view);
  g_autoptr(TallyMarkdownDoc) doc = NULL;
  g_autofree char *prefix = NULL;
  g_autofree char *buffer = NULL;

  tally_markdown_view_get_stats (view, &stats);
  doc = tally_markdown_doc_parse (source, stats.committed_bytes, TALLY_MARKDOWN_AT_START);
  prefix = tally_markdown_doc_dup_structure (doc, TRUE);
  buffer = tally_markdown_view_dup_full_structure (view);
  if (!g_str_has_prefix (buffer, prefix))
    g_error ("committed part differs from a fresh render:\n%s\n---\n%s", prefix, buffer);
}

static void
compare_with_fresh (TallyMarkdownView *view,
                    const char        *markdown,
                    const char        *name)
{
  g_autofree char *fresh = fresh_structure (markdown, FALSE);
  g_autofree char *fresh_full = fresh_structure (markdown, TRUE);
  g_autofree char *streamed = tally_markdown_view_dup_structure (view);
  g_autofree char *streamed_full = tally_markdown_view_dup_full_structure (view);
  TallyMarkdownViewStats stats;

  g_assert_cmpstr (streamed, ==, fresh);
  g_assert_cmpstr (streamed_full, ==, fresh_full);
  g_assert_cmpstr (tally_markdown_view_get_markdown (view), ==, markdown);

  /* The incremental result must be right by itself: only link reference
   * definitions (which act backwards) need the full render at finish. */
  tally_markdown_view_get_stats (view, &stats);
  if (g_str_equal (name, "refdef"))
    g_assert_cmpuint (stats.fallbacks, <=, 1);
  else
    g_assert_cmpuint (stats.fallbacks, ==, 0);
}

static void
test_stream_chars (gconstpointer data)
{
  const char *name = data;
  g_autofree char *markdown = read_case (name, ".md");
  TallyMarkdownViewStats stats;
  Fixture fx;
  guint n = 0;

  g_assert_nonnull (markdown);
  fixture_open (&fx, 600);

  for (const char *p = markdown; *p != '\0'; p = g_utf8_next_char (p), n++)
    {
      char ch[8] = { 0 };

      memcpy (ch, p, g_utf8_next_char (p) - p);
      tally_markdown_view_append (fx.view, ch);
      pump_pending ();

      /* Every few characters a real frame renders; in between, a forced
       * update covers the states the frame clock would skip. */
      if (n % 29 == 0)
        spin_until (not_pending, fx.view, "a tick to render the text");
      else if (n % 3 == 0)
        tally_markdown_view_flush (fx.view);

      /* A link reference definition changes text before it, so there the
       * committed part may differ until finish. */
      if (!tally_markdown_view_get_pending (fx.view) && !g_str_equal (name, "refdef"))
        check_prefix (fx.view);
    }

  /* The view is shown: its frames complete finish(). */
  tally_markdown_view_finish (fx.view);
  spin_until (not_pending, fx.view, "frames to complete finish()");

  tally_markdown_view_get_stats (fx.view, &stats);
  g_assert_cmpuint (stats.finished_by_frames, ==, 1);
  g_assert_cmpuint (stats.updates, >, n / 4);
  compare_with_fresh (fx.view, markdown, name);

  fixture_close (&fx);
}

/* A unit that shows nothing (a paragraph of an empty code span) takes no
 * line, so its neighbours are spaced alike whether it starts or ends a
 * streamed part or not (found by tests/fuzz/fuzz-markdown). */
static void
test_empty_unit (void)
{
  static const char * const texts[] = {
    "i\n\n`\n`\n```",
    "i\n\n`\n`\n\nj",
    "`\n`\n\nj",
  };

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      g_autofree char *fresh = fresh_structure (texts[i], FALSE);
      Fixture fx;

      fixture_open (&fx, 600);
      for (const char *p = texts[i]; *p != '\0'; p++)
        {
          char ch[2] = { *p, '\0' };

          tally_markdown_view_append (fx.view, ch);
          tally_markdown_view_flush (fx.view);
        }
      tally_markdown_view_finish (fx.view);
      compare_with_fresh (fx.view, texts[i], "empty-unit");
      g_assert_false (strstr (fresh, "\n\n") != NULL);
      fixture_close (&fx);
    }
}

static void
test_stream_random (gconstpointer data)
{
  const char *name = data;
  g_autofree char *markdown = read_case (name, ".md");
  g_autoptr(GRand) rand = g_rand_new_with_seed (20240601);
  gsize len, pos = 0;
  Fixture fx;

  g_assert_nonnull (markdown);
  len = strlen (markdown);
  fixture_open (&fx, 600);

  while (pos < len)
    {
      /* Byte-sized chunks: a delta may end inside a multi-byte character. */
      gsize chunk = MIN ((gsize)g_rand_int_range (rand, 1, 40), len - pos);
      g_autofree char *delta = g_strndup (markdown + pos, chunk);

      tally_markdown_view_append (fx.view, delta);
      pos += chunk;
      if (g_rand_boolean (rand))
        spin_until (not_pending, fx.view, "a tick to render the text");
      else
        pump_pending ();
    }

  tally_markdown_view_finish (fx.view);
  compare_with_fresh (fx.view, markdown, name);

  fixture_close (&fx);
}

/* A row bound while its message streams: the text so far is set at once,
 * the rest arrives as deltas. The view need not be shown for that. */
static void
test_set_then_stream (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (golden_cases); i++)
    {
      g_autofree char *markdown = read_case (golden_cases[i], ".md");
      gsize len = strlen (markdown);
      TallyMarkdownView *view = TALLY_MARKDOWN_VIEW (tally_markdown_view_new ());
      g_autofree char *head = g_strndup (markdown, len / 3);

      g_object_ref_sink (view);
      tally_markdown_view_set_markdown (view, head);
      for (gsize pos = len / 3; pos < len; pos += 5)
        {
          g_autofree char *delta = g_strndup (markdown + pos, MIN (5, len - pos));

          tally_markdown_view_append (view, delta);
          tally_markdown_view_flush (view);
        }
      tally_markdown_view_finish (view);
      compare_with_fresh (view, markdown, golden_cases[i]);
      g_object_unref (view);
    }
}

/* ---------------------------------------------------------------------- */
/* Streaming re-renders only the tail                                       */

static void
test_tail_only (void)
{
  GString *markdown = g_string_new (NULL);
  TallyMarkdownViewStats stats;
  g_autoptr(TallyMarkdownDoc) whole = NULL;
  GtkTextBuffer *buffer;
  GtkTextChildAnchor *first_code = NULL;
  GtkWidget *first_code_widget = NULL;
  gsize longest_block = 0;
  guint flushes = 0;
  Fixture fx;

  for (guint i = 0; i < 6; i++)
    {
      g_autofree char *para = g_strdup_printf ("Paragraph %u has **some** words that run on for a while, "
                                               "long enough to wrap.\n\n", i);
      g_autofree char *code = g_strdup_printf ("```sql\nSELECT %u;\n```\n\n", i);

      g_string_append (markdown, para);
      g_string_append (markdown, code);
      longest_block = MAX (longest_block, strlen (para));
    }
  g_string_append (markdown, "The end.");

  fixture_open (&fx, 600);
  buffer = gtk_text_view_get_buffer (tally_markdown_view_get_text_view (fx.view));

  for (gsize i = 0; i < markdown->len; i++)
    {
      char ch[2] = { markdown->str[i], '\0' };

      tally_markdown_view_append (fx.view, ch);
      tally_markdown_view_flush (fx.view);
      flushes++;

      tally_markdown_view_get_stats (fx.view, &stats);
      /* The open tail never holds more than the block being written (plus
       * the blank line and the first bytes of the next one). */
      g_assert_cmpuint (i + 1 - stats.committed_bytes, <=, longest_block + 3);

      if (first_code == NULL && stats.committed_bytes > 0)
        {
          GtkTextIter start;
          GtkTextChildAnchor *anchor = nth_anchor (buffer, 0);

          gtk_text_buffer_get_iter_at_mark (buffer, &start, gtk_text_buffer_get_mark (buffer, "tally-markdown-tail"));
          if (anchor != NULL)
            {
              GtkTextIter at;

              gtk_text_buffer_get_iter_at_child_anchor (buffer, &at, anchor);
              if (gtk_text_iter_compare (&at, &start) < 0)
                {
                  first_code = g_object_ref (anchor);
                  first_code_widget = g_object_ref (anchor_widget (fx.view, anchor));
                }
            }
        }
    }

  tally_markdown_view_finish (fx.view);
  tally_markdown_view_get_stats (fx.view, &stats);

  /* The first code block, once committed, kept its anchor and widget. */
  g_assert_nonnull (first_code);
  g_assert_false (gtk_text_child_anchor_get_deleted (first_code));
  g_assert_true (nth_anchor (buffer, 0) == first_code);
  g_assert_true (anchor_widget (fx.view, first_code) == first_code_widget);
  g_assert_true (TALLY_IS_MARKDOWN_CODE_BLOCK (first_code_widget));
  g_assert_cmpstr (tally_markdown_code_block_get_code (TALLY_MARKDOWN_CODE_BLOCK (first_code_widget)), ==, "SELECT 0;");

  /* Every block but the last was committed exactly once. */
  whole = tally_markdown_doc_parse (markdown->str, markdown->len, TALLY_MARKDOWN_AT_START);
  g_assert_cmpuint (tally_markdown_doc_get_n_blocks (whole), ==, 13);
  g_assert_cmpuint (stats.blocks_committed, ==, 12);
  g_assert_cmpuint (stats.updates, ==, flushes);
  g_assert_cmpuint (stats.fallbacks, ==, 0);
  /* Far less than re-parsing everything at each of the flushes would. */
  g_assert_cmpuint (stats.bytes_rendered, <, (guint64)markdown->len * flushes / 4);

  compare_with_fresh (fx.view, markdown->str, "tail-only");

  g_object_unref (first_code);
  g_object_unref (first_code_widget);
  fixture_close (&fx);
  g_string_free (markdown, TRUE);
}

/* Deltas are coalesced: a burst of appends renders once, at the next
 * frame, and nothing happens without a frame. */
static void
test_coalescing (void)
{
  TallyMarkdownViewStats stats;
  Fixture fx;

  fixture_open (&fx, 600);

  for (guint i = 0; i < 500; i++)
    tally_markdown_view_append (fx.view, "word ");
  tally_markdown_view_get_stats (fx.view, &stats);
  g_assert_cmpuint (stats.updates, ==, 0);
  g_assert_true (tally_markdown_view_get_pending (fx.view));

  spin_until (not_pending, fx.view, "a tick to render the text");
  tally_markdown_view_get_stats (fx.view, &stats);
  g_assert_cmpuint (stats.updates, ==, 1);

  /* Idle: no further updates. */
  for (guint i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);
  tally_markdown_view_get_stats (fx.view, &stats);
  g_assert_cmpuint (stats.updates, ==, 1);

  fixture_close (&fx);
}

/* ---------------------------------------------------------------------- */
/* Links                                                                    */

typedef struct
{
  GPtrArray *urls;
} LinkLog;

static gboolean
activate_link_cb (TallyMarkdownView *view,
                  const char        *url,
                  LinkLog           *log)
{
  g_ptr_array_add (log->urls, g_strdup (url));
  return TRUE;   /* never launch a browser from a test */
}

static gboolean
has_height (gpointer data)
{
  return gtk_widget_get_height (GTK_WIDGET (data)) > 0;
}

static void
click_text (TallyMarkdownView *view,
            const char        *needle,
            gboolean           expect_link)
{
  GtkTextView *text_view = tally_markdown_view_get_text_view (view);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (text_view);
  GtkTextIter start, match, match_end;
  GdkRectangle rect;

  gtk_text_buffer_get_start_iter (buffer, &start);
  g_assert_true (gtk_text_iter_forward_search (&start, needle, 0, &match, &match_end, NULL));
  gtk_text_iter_forward_char (&match);
  gtk_text_view_get_iter_location (text_view, &match, &rect);
  g_assert_cmpint (tally_markdown_view_click_at (view, rect.x + 1, rect.y + rect.height / 2), ==, expect_link);
}

static GtkWidget *
find_label_with_link (GtkWidget *widget)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found;

      if (GTK_IS_LABEL (child) && strstr (gtk_label_get_label (GTK_LABEL (child)), "<a href") != NULL)
        return child;
      found = find_label_with_link (child);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* What a link's target becomes, and which targets may be opened. */
static void
test_link_targets (void)
{
  static const struct { const char *written, *opened; gboolean safe; } cases[] = {
    { "https://example.com/a?b=1", "https://example.com/a?b=1", TRUE },
    { "HTTP://EXAMPLE.COM",        "HTTP://EXAMPLE.COM",        TRUE },
    { "www.example.net",           "http://www.example.net",    TRUE },
    { "analyst@example.org",       "mailto:analyst@example.org", TRUE },
    { "mailto:a@example.org",      "mailto:a@example.org",      TRUE },
    { "file:///etc/passwd",        "file:///etc/passwd",        FALSE },
    { "javascript:alert(1)",       "javascript:alert(1)",       FALSE },
    { "reports/q3.md",             "reports/q3.md",             FALSE },
    { "a@example.org/path",        "a@example.org/path",        FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *opened = tally_markdown_link_normalize (cases[i].written);

      g_assert_cmpstr (opened, ==, cases[i].opened);
      g_assert_cmpint (tally_markdown_link_is_safe (opened), ==, cases[i].safe);
    }
  g_assert_false (tally_markdown_link_is_safe (NULL));
}

static void
test_links (void)
{
  LinkLog log = { g_ptr_array_new_with_free_func (g_free) };
  GtkTextBuffer *buffer;
  GtkWidget *table, *label;
  gboolean handled = FALSE;
  Fixture fx;

  fixture_open (&fx, 600);
  g_signal_connect (fx.view, "activate-link", G_CALLBACK (activate_link_cb), &log);

  tally_markdown_view_set_markdown (fx.view,
                                    "See [the docs](https://example.com/docs) now, or www.example.net.\n"
                                    "\n"
                                    "| site |\n|---|\n| [cell link](https://example.org/cell) |\n");
  spin_until (has_height, tally_markdown_view_get_text_view (fx.view), "the text view to be laid out");
  for (guint i = 0; i < 5; i++)
    g_main_context_iteration (NULL, FALSE);

  click_text (fx.view, "docs", TRUE);
  click_text (fx.view, "See", FALSE);
  click_text (fx.view, "example.net", TRUE);

  g_assert_cmpuint (log.urls->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (log.urls, 0), ==, "https://example.com/docs");
  g_assert_cmpstr (g_ptr_array_index (log.urls, 1), ==, "http://www.example.net");

  /* A link in a table cell goes through the same signal. */
  buffer = gtk_text_view_get_buffer (tally_markdown_view_get_text_view (fx.view));
  table = anchor_widget (fx.view, nth_anchor (buffer, 0));
  g_assert_nonnull (table);
  label = find_label_with_link (table);
  g_assert_nonnull (label);
  g_signal_emit_by_name (label, "activate-link", "https://example.org/cell", &handled);
  g_assert_true (handled);
  g_assert_cmpuint (log.urls->len, ==, 3);
  g_assert_cmpstr (g_ptr_array_index (log.urls, 2), ==, "https://example.org/cell");

  fixture_close (&fx);
  g_ptr_array_unref (log.urls);
}


static void
table_read_text_cb (GObject      *object,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  char **text = user_data;

  *text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (object), result, NULL);
  if (*text == NULL)
    *text = g_strdup ("(nothing)");
}

/* The Copy button of a code block and the buttons over a table get their
 * tooltips while hidden (so that GTK does not ask the X server where the
 * pointer is for each block a streamed answer makes), and are shown with
 * them. */
static void
test_block_button_tooltips (void)
{
  static const char *table_tooltips[] = { "Copy Table", "Save Table as CSV…" };
  GtkWidget *code = g_object_ref_sink (tally_markdown_code_block_new ("SELECT 1;\n", "sql"));
  TallyMarkdownTable table = { 0 };
  TallyMarkdownAlign aligns[1] = { TALLY_MARKDOWN_ALIGN_DEFAULT };
  char *cells[2] = { (char *)"a", (char *)"1" };
  GtkWidget *grid;
  GPtrArray *buttons;

  buttons = tally_test_find_all (code, GTK_TYPE_BUTTON);
  g_assert_cmpuint (buttons->len, ==, 1);
  g_assert_true (gtk_widget_get_visible (g_ptr_array_index (buttons, 0)));
  g_assert_cmpstr (gtk_widget_get_tooltip_text (g_ptr_array_index (buttons, 0)), ==, "Copy");
  g_ptr_array_unref (buttons);
  g_object_unref (code);

  table.n_columns = 1;
  table.n_rows = 2;
  table.aligns = aligns;
  table.plain = cells;
  table.markup = cells;
  grid = g_object_ref_sink (tally_markdown_table_widget_new (&table, NULL, NULL));
  buttons = tally_test_find_all (grid, GTK_TYPE_BUTTON);
  g_assert_cmpuint (buttons->len, ==, G_N_ELEMENTS (table_tooltips));
  for (guint i = 0; i < buttons->len; i++)
    {
      g_assert_true (gtk_widget_get_visible (g_ptr_array_index (buttons, i)));
      g_assert_cmpstr (gtk_widget_get_tooltip_text (g_ptr_array_index (buttons, i)), ==, table_tooltips[i]);
    }
  g_ptr_array_unref (buttons);
  g_object_unref (grid);
}

/* A table in a message leaves the window: table.copy puts its plain
 * cells on the clipboard as TSV with the header row, and the CSV text is
 * RFC 4180. */
static void
test_table_copy (void)
{
  GtkTextBuffer *buffer;
  GtkWidget *table;
  g_autofree char *copied = NULL;
  g_autofree char *csv = NULL;
  Fixture fx;

  fixture_open (&fx, 600);
  tally_markdown_view_set_markdown (fx.view,
                                    "| store | **revenue** |\n|---|---:|\n"
                                    "| Leeds, Briggate | 1,200 |\n| `Köln` | [say \"hi\"](https://example.org) |\n");
  spin_until (has_height, tally_markdown_view_get_text_view (fx.view), "the text view to be laid out");

  buffer = gtk_text_view_get_buffer (tally_markdown_view_get_text_view (fx.view));
  table = anchor_widget (fx.view, nth_anchor (buffer, 0));
  g_assert_true (TALLY_IS_MARKDOWN_TABLE_WIDGET (table));

  g_assert_true (gtk_widget_activate_action (table, "table.copy", NULL));
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (table), NULL, table_read_text_cb, &copied);
  while (copied == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpstr (copied, ==,
                   "store\trevenue\n"
                   "Leeds, Briggate\t1,200\n"
                   "Köln\tsay \"hi\"\n");

  csv = tally_markdown_table_widget_dup_text (TALLY_MARKDOWN_TABLE_WIDGET (table), TALLY_CSV_FORMAT_CSV);
  g_assert_cmpstr (csv, ==,
                   "store,revenue\r\n"
                   "\"Leeds, Briggate\",\"1,200\"\r\n"
                   "Köln,\"say \"\"hi\"\"\"\r\n");

  fixture_close (&fx);
}

/* ---------------------------------------------------------------------- */
/* Code blocks                                                              */

typedef struct
{
  char *text;
  gboolean done;
} ClipboardRead;

static void
clipboard_read_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  ClipboardRead *read = user_data;

  read->text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), result, NULL);
  read->done = TRUE;
}

static gboolean
read_done (gpointer data)
{
  return ((ClipboardRead *)data)->done;
}

static gboolean
scheme_is_dark (gpointer data)
{
  return g_strcmp0 (tally_markdown_code_block_get_scheme_id (data), "Adwaita-dark") == 0;
}

static gboolean
scheme_is_light (gpointer data)
{
  return g_strcmp0 (tally_markdown_code_block_get_scheme_id (data), "Adwaita") == 0;
}

static void
test_code_block (void)
{
  AdwStyleManager *style = adw_style_manager_get_default ();
  ClipboardRead read = { NULL, FALSE };
  TallyMarkdownCodeBlock *sql, *plain, *guessed;
  GtkTextBuffer *buffer;
  Fixture fx;

  fixture_open (&fx, 600);
  tally_markdown_view_set_markdown (fx.view,
                                    "```sql\nSELECT 1;\n```\n\n```\nno language\n```\n\n```vala\nvar x = 1;\n```\n");
  buffer = gtk_text_view_get_buffer (tally_markdown_view_get_text_view (fx.view));

  sql = TALLY_MARKDOWN_CODE_BLOCK (anchor_widget (fx.view, nth_anchor (buffer, 0)));
  plain = TALLY_MARKDOWN_CODE_BLOCK (anchor_widget (fx.view, nth_anchor (buffer, 1)));
  guessed = TALLY_MARKDOWN_CODE_BLOCK (anchor_widget (fx.view, nth_anchor (buffer, 2)));

  g_assert_cmpstr (tally_markdown_code_block_get_code (sql), ==, "SELECT 1;");
  g_assert_cmpstr (tally_markdown_code_block_get_language (sql), ==, "sql");
  g_assert_cmpstr (tally_markdown_code_block_get_language_name (sql), ==, "SQL");
  g_assert_cmpstr (tally_markdown_code_block_get_language (plain), ==, "");
  g_assert_cmpstr (tally_markdown_code_block_get_language_name (plain), ==, "Code");
  g_assert_cmpstr (tally_markdown_code_block_get_language_name (guessed), ==, "Vala");

  /* Copy puts exactly the code on the clipboard. */
  tally_markdown_code_block_copy (sql);
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (GTK_WIDGET (sql)), NULL, clipboard_read_cb, &read);
  spin_until (read_done, &read, "the clipboard");
  g_assert_cmpstr (read.text, ==, "SELECT 1;");
  g_free (read.text);

  /* The colour scheme follows the dark setting. */
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_DARK);
  spin_until (scheme_is_dark, sql, "the dark scheme");
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_LIGHT);
  spin_until (scheme_is_light, sql, "the light scheme");
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_DEFAULT);

  fixture_close (&fx);
}

/* ---------------------------------------------------------------------- */
/* Colours follow light and dark                                            */

typedef struct
{
  GtkTextTag *tag;
  const char *property;
  GdkRGBA     before;
} ColorWatch;

static GdkRGBA
tag_color (GtkTextTag *tag,
           const char *property)
{
  GdkRGBA *color = NULL;
  GdkRGBA out = { 0, 0, 0, 0 };

  g_object_get (tag, property, &color, NULL);
  if (color != NULL)
    {
      out = *color;
      gdk_rgba_free (color);
    }
  return out;
}

static gboolean
color_changed (gpointer data)
{
  ColorWatch *watch = data;
  GdkRGBA now = tag_color (watch->tag, watch->property);

  return !gdk_rgba_equal (&now, &watch->before);
}

static double
luminance (const GdkRGBA *c)
{
  return 0.2126 * c->red + 0.7152 * c->green + 0.0722 * c->blue;
}

static void
test_theme_colors (void)
{
  AdwStyleManager *style = adw_style_manager_get_default ();
  GtkTextTagTable *table;
  GtkTextTag *link, *quote, *code;
  ColorWatch watch;
  GdkRGBA light_link, dark_link, dark_quote, code_bg;
  Fixture fx;

  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_LIGHT);
  fixture_open (&fx, 600);
  tally_markdown_view_set_markdown (fx.view, "A [link](https://example.com) and `code`.\n\n> quoted\n");
  spin_until (has_height, tally_markdown_view_get_text_view (fx.view), "the text view to be laid out");

  table = gtk_text_buffer_get_tag_table (gtk_text_view_get_buffer (tally_markdown_view_get_text_view (fx.view)));
  link = gtk_text_tag_table_lookup (table, "link");
  quote = gtk_text_tag_table_lookup (table, "quote");
  code = gtk_text_tag_table_lookup (table, "code");

  /* Links take the accent colour: a saturated, fairly dark blue on light. */
  light_link = tag_color (link, "foreground-rgba");
  g_assert_cmpfloat (light_link.alpha, >, 0.9);
  g_assert_cmpfloat (light_link.blue, >, light_link.red);
  g_assert_cmpfloat (luminance (&light_link), <, 0.5);

  /* Inline code sits on a faint tint, not an opaque box. */
  code_bg = tag_color (code, "background-rgba");
  g_assert_cmpfloat (code_bg.alpha, >, 0.0);
  g_assert_cmpfloat (code_bg.alpha, <, 0.3);

  watch.tag = link;
  watch.property = "foreground-rgba";
  watch.before = light_link;
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_DARK);
  spin_until (color_changed, &watch, "the link colour to follow the dark style");

  /* On dark, the accent is lighter and quotes are a dimmed light text. */
  dark_link = tag_color (link, "foreground-rgba");
  dark_quote = tag_color (quote, "foreground-rgba");
  g_assert_cmpfloat (luminance (&dark_link), >, luminance (&light_link));
  g_assert_cmpfloat (luminance (&dark_quote), >, 0.5);
  g_assert_cmpfloat (dark_quote.alpha, <, 1.0);

  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_DEFAULT);
  fixture_close (&fx);
}

/* ---------------------------------------------------------------------- */
/* Anchored blocks follow the view's width                                  */

typedef struct
{
  GtkWidget *block;
  GtkWidget *text_view;
  int min_view_width;
} WidthCheck;

static gboolean
block_fits (gpointer data)
{
  WidthCheck *check = data;
  int view_width = gtk_widget_get_width (check->text_view);
  int request = -1;
  graphene_rect_t bounds;

  gtk_widget_get_size_request (check->block, &request, NULL);
  if (view_width < check->min_view_width || request != view_width - 28)
    return FALSE;

  /* The block's border box starts at the indent and ends at the text's
   * right edge. */
  if (!gtk_widget_compute_bounds (check->block, check->text_view, &bounds))
    return FALSE;
  return (int)bounds.origin.x == 28 &&
         (int)(bounds.origin.x + bounds.size.width) == view_width;
}

static void
test_block_width (void)
{
  GString *markdown = g_string_new ("1. A list item with long code:\n\n   ```\n   ");
  GtkTextBuffer *buffer;
  WidthCheck check;
  Fixture fx;
  int first_width;

  for (guint i = 0; i < 200; i++)
    g_string_append (markdown, "long_identifier_");
  g_string_append (markdown, "\n   ```\n");

  fixture_open (&fx, 500);
  tally_markdown_view_set_markdown (fx.view, markdown->str);
  buffer = gtk_text_view_get_buffer (tally_markdown_view_get_text_view (fx.view));

  check.text_view = GTK_WIDGET (tally_markdown_view_get_text_view (fx.view));
  check.block = anchor_widget (fx.view, nth_anchor (buffer, 0));
  check.min_view_width = 100;
  g_assert_cmpint (tally_markdown_anchor_get_indent (nth_anchor (buffer, 0)), ==, 28);

  /* 3,200 characters of code do not widen the message: the block is as
   * wide as the text minus the list indent, and scrolls inside. */
  spin_until (block_fits, &check, "the code block to fit the view");
  first_width = gtk_widget_get_width (check.block);
  g_assert_cmpint (first_width, >, 400);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (fx.view)), <=, 500);

  gtk_window_set_default_size (GTK_WINDOW (fx.window), 800, 600);
  check.min_view_width = 700;
  spin_until (block_fits, &check, "the code block to follow a wider view");
  g_assert_cmpint (gtk_widget_get_width (check.block), >, first_width);

  fixture_close (&fx);
  g_string_free (markdown, TRUE);
}

/* ---------------------------------------------------------------------- */
/* Blocks are drawn over the lines their anchors reserve                    */

typedef struct
{
  TallyMarkdownView *view;
  guint n_blocks;
  const char *failure;   /* what did not hold at the last check */
} LinesCheck;

/* Whether every block is a child of the view, not of its text view, and
 * covers its anchor's line: from the line's top (after the line's gap) to
 * its bottom, as a block anchored in the text view did; the next line
 * starts below it. */
static gboolean
blocks_on_lines (gpointer data)
{
  LinesCheck *check = data;
  GtkTextView *text_view = tally_markdown_view_get_text_view (check->view);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (text_view);
  guint n = 0;

  for (GtkTextChildAnchor *anchor; (anchor = nth_anchor (buffer, n)) != NULL; n++)
    {
      GtkWidget *block = anchor_widget (check->view, anchor);
      g_autofree GtkWidget **anchored = NULL;
      guint n_anchored = 0;
      graphene_rect_t bounds;
      GdkRectangle location;
      GtkTextIter iter, next;
      int line_y, line_height, next_y, next_height, top, bottom;

      anchored = gtk_text_child_anchor_get_widgets (anchor, &n_anchored);
      g_assert_cmpuint (n_anchored, ==, 0);
      g_assert_nonnull (block);
      g_assert_true (gtk_widget_get_parent (block) == GTK_WIDGET (check->view));

      if (!gtk_widget_compute_bounds (block, GTK_WIDGET (text_view), &bounds))
        return (check->failure = "block not allocated", FALSE);
      gtk_text_view_window_to_buffer_coords (text_view, GTK_TEXT_WINDOW_WIDGET,
                                             (int)bounds.origin.x, (int)bounds.origin.y, NULL, &top);
      bottom = top + (int)bounds.size.height;

      gtk_text_buffer_get_iter_at_child_anchor (buffer, &iter, anchor);
      gtk_text_view_get_line_yrange (text_view, &iter, &line_y, &line_height);
      gtk_text_view_get_iter_location (text_view, &iter, &location);
      next = iter;
      if (!gtk_text_iter_forward_line (&next))
        return (check->failure = "no line after a block", FALSE);
      gtk_text_view_get_line_yrange (text_view, &next, &next_y, &next_height);

      if (GTK_IS_SEPARATOR (block))
        {
          /* A rule's bounds leave out its CSS margins, which the line
           * holds too. */
          if (top <= location.y || bottom >= line_y + line_height)
            return (check->failure = "rule outside its line", FALSE);
        }
      else if (top != location.y || bottom != line_y + line_height)
        return (check->failure = "block not over its line", FALSE);
      if (next_y < bottom)
        return (check->failure = "next line under a block", FALSE);
    }

  check->n_blocks = n;
  check->failure = NULL;
  return TRUE;
}

static void
test_blocks_over_lines (void)
{
  LinesCheck check = { NULL, 0, NULL };
  Fixture fx;

  fixture_open (&fx, 600);
  check.view = fx.view;
  tally_markdown_view_set_markdown (fx.view,
                                    "Before the blocks.\n\n"
                                    "```sql\nSELECT store,\n       SUM(total)\nFROM sales\nGROUP BY store;\n```\n\n"
                                    "| store | revenue |\n|---|---:|\n| Leeds | 1,200 |\n| York | 980 |\n\n"
                                    "---\n\n"
                                    "1. A list item with code:\n\n   ```\n   x = 1\n   ```\n\n"
                                    "After the blocks.\n");
  spin_until (blocks_on_lines, &check, "the blocks to sit on their lines");
  g_assert_cmpuint (check.n_blocks, ==, 4);

  /* A block that grows (a fence streaming in the tail) makes its line
   * grow, and the text below moves down under it. */
  tally_markdown_view_set_markdown (fx.view, "```\none\n```\nafter");
  spin_until (blocks_on_lines, &check, "a short code block to sit on its line");
  tally_markdown_view_set_markdown (fx.view, "```\none\ntwo\nthree\nfour\nfive\n```\nafter");
  spin_until (blocks_on_lines, &check, "a taller code block to sit on its line");
  g_assert_cmpuint (check.n_blocks, ==, 1);

  /* At another width the lines follow the blocks' new heights. */
  tally_markdown_view_set_markdown (fx.view,
                                    "| a | b |\n|---|---|\n"
                                    "| a cell with enough words to wrap when the view is narrow | 2 |\n\nAfter.\n");
  spin_until (blocks_on_lines, &check, "the table to sit on its line");
  gtk_window_set_default_size (GTK_WINDOW (fx.window), 300, 600);
  spin_until (blocks_on_lines, &check, "the table to sit on its line at 300 px");

  fixture_close (&fx);
}

/* ---------------------------------------------------------------------- */
/* A short text's height                                                    */

static gboolean
has_width (gpointer data)
{
  return gtk_widget_get_width (GTK_WIDGET (data)) > 0;
}

typedef struct
{
  GtkWidget         *window;
  TallyMarkdownView *view;
  GtkWidget         *below;   /* the next child of the box */
} Boxed;

/* A view in a vertical box, with a label under it, in a window: as a plan
 * or approval card holds one. With @markdown, the text is set before the
 * window is shown. */
static Boxed
boxed_open (const char *markdown)
{
  Boxed boxed = { gtk_window_new (), TALLY_MARKDOWN_VIEW (tally_markdown_view_new ()),
                  gtk_label_new ("Below the text") };
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);

  if (markdown != NULL)
    tally_markdown_view_set_markdown (boxed.view, markdown);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (boxed.view));
  gtk_box_append (GTK_BOX (box), boxed.below);
  gtk_window_set_child (GTK_WINDOW (boxed.window), box);
  gtk_window_set_default_size (GTK_WINDOW (boxed.window), 600, 1000);
  gtk_window_present (GTK_WINDOW (boxed.window));
  spin_until (has_width, boxed.view, "the view to be allocated");
  return boxed;
}

/* The view is as tall as its text: from its top to the end of its last
 * line, and the label below starts there. */
static void
assert_text_height (Boxed      *boxed,
                    const char *text)
{
  GtkTextView *text_view = tally_markdown_view_get_text_view (boxed->view);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (text_view);
  g_autofree char *shown = NULL;
  GtkTextIter start, end;
  graphene_rect_t bounds;
  int y, height, expected;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  shown = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  g_assert_cmpstr (shown, ==, text);
  gtk_text_view_get_line_yrange (text_view, &end, &y, &height);
  g_assert_cmpint (height, >, 0);
  expected = y + height + gtk_text_view_get_top_margin (text_view) + gtk_text_view_get_bottom_margin (text_view);

  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (boxed->view)), ==, expected);
  g_assert_true (gtk_widget_compute_bounds (boxed->below, GTK_WIDGET (boxed->view), &bounds));
  g_assert_cmpfloat (bounds.origin.y, ==, expected);
}

static void
boxed_close (Boxed *boxed)
{
  gtk_window_destroy (GTK_WINDOW (boxed->window));
  pump_pending ();
}

/* A text whose lines are all laid out by the view's first allocation (one
 * line, or a few) used to keep the height measured before it, 0 px: the
 * resize GtkTextView asked for as it laid the lines out was dropped, as
 * one asked for during an allocation is. A few frames on, the view is as
 * tall as its text, whether the text came before the view was shown,
 * after, or streamed. */
static void
test_short_text_height (void)
{
  static const char *const texts[][2] = {
    { "A short answer.", "A short answer." },
    { "A short answer.\n", "A short answer." },
    { "A **short** answer.\n\nTwo.", "A short answer.\nTwo." },
  };

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      Boxed boxed;

      /* Set, then shown. */
      boxed = boxed_open (texts[i][0]);
      tally_test_wait_frames (boxed.window, 4);
      assert_text_height (&boxed, texts[i][1]);
      boxed_close (&boxed);

      /* Shown, then set. */
      boxed = boxed_open (NULL);
      tally_test_wait_frames (boxed.window, 2);
      tally_markdown_view_set_markdown (boxed.view, texts[i][0]);
      tally_test_wait_frames (boxed.window, 4);
      assert_text_height (&boxed, texts[i][1]);
      boxed_close (&boxed);
    }

  /* Shown, then streamed in two parts. */
  {
    Boxed boxed = boxed_open (NULL);

    tally_markdown_view_append (boxed.view, "A short ");
    tally_test_wait_frames (boxed.window, 2);
    tally_markdown_view_append (boxed.view, "answer.");
    tally_markdown_view_finish (boxed.view);
    tally_test_wait_frames (boxed.window, 4);
    assert_text_height (&boxed, "A short answer.");
    boxed_close (&boxed);
  }
}

/* /tally/harness/tolerated-criticals: the UI tests' log filter
 * (tally_test_prepare_ui_process()) lets GTK 4.8's two tooltip criticals
 * through and keeps every other critical fatal, of GDK's too. */
static void
test_tolerated_criticals (void)
{
  if (g_test_subprocess ())
    {
      g_log ("Gdk", G_LOG_LEVEL_CRITICAL, "%s",
             "gdk_surface_get_device_position: assertion 'GDK_IS_SURFACE (surface)' failed");
      g_log ("Gtk", G_LOG_LEVEL_CRITICAL, "%s",
             "_gtk_widget_find_at_coords: assertion 'GDK_IS_SURFACE (surface)' failed");
      g_printerr ("still running\n");
      g_log ("Gdk", G_LOG_LEVEL_CRITICAL, "%s",
             "gdk_surface_get_width: assertion 'GDK_IS_SURFACE (surface)' failed");
      g_printerr ("not reached\n");
      return;
    }
  /* In this process too, whose output meson reads as TAP: the two are
   * printed as comments, not as "Bail out!", which meson would count as
   * this test failing. */
  g_log ("Gdk", G_LOG_LEVEL_CRITICAL, "%s",
         "gdk_surface_get_device_position: assertion 'GDK_IS_SURFACE (surface)' failed");
  g_log ("Gtk", G_LOG_LEVEL_CRITICAL, "%s",
         "_gtk_widget_find_at_coords: assertion 'GDK_IS_SURFACE (surface)' failed");

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*gdk_surface_get_device_position*_gtk_widget_find_at_coords*still running*"
                             "gdk_surface_get_width*");
  g_test_trap_assert_stderr_unmatched ("*not reached*");
  g_assert_false (tally_test_log_is_tolerated ("Gtk", "gtk_widget_get_parent: assertion 'GTK_IS_WIDGET (widget)' failed"));
  g_assert_false (tally_test_log_is_tolerated ("Tally", "gdk_surface_get_device_position: assertion 'GDK_IS_SURFACE (surface)' failed"));
  g_assert_false (tally_test_log_is_tolerated ("Gdk", "_gtk_widget_find_at_coords: assertion 'GDK_IS_SURFACE (surface)' failed"));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  gtk_init ();
  tally_test_prepare_ui_process ();
  adw_init ();
  tally_ui_init ();

  g_test_add_func ("/tally/harness/tolerated-criticals", test_tolerated_criticals);
  g_test_add_func ("/tally/markdown/scanner", test_scanner);
  g_test_add_func ("/tally/markdown/doc-matches-buffer", test_doc_matches_buffer);
  g_test_add_func ("/tally/markdown/bad-input", test_bad_input);

  for (guint i = 0; i < G_N_ELEMENTS (golden_cases); i++)
    {
      g_autofree char *golden = g_strdup_printf ("/tally/markdown/golden/%s", golden_cases[i]);
      g_autofree char *chars = g_strdup_printf ("/tally/markdown/stream-chars/%s", golden_cases[i]);
      g_autofree char *random = g_strdup_printf ("/tally/markdown/stream-random/%s", golden_cases[i]);

      g_test_add_data_func (golden, golden_cases[i], test_golden);
      g_test_add_data_func (chars, golden_cases[i], test_stream_chars);
      g_test_add_data_func (random, golden_cases[i], test_stream_random);
    }

  g_test_add_func ("/tally/markdown/set-then-stream", test_set_then_stream);
  g_test_add_func ("/tally/markdown/tail-only", test_tail_only);
  g_test_add_func ("/tally/markdown/empty-unit", test_empty_unit);
  g_test_add_func ("/tally/markdown/span-past-end", test_span_past_end);
  g_test_add_func ("/tally/markdown/coalescing", test_coalescing);
  g_test_add_func ("/tally/markdown/link-targets", test_link_targets);
  g_test_add_func ("/tally/markdown/links", test_links);
  g_test_add_func ("/tally/markdown/code-block", test_code_block);
  g_test_add_func ("/tally/markdown/table-copy", test_table_copy);
  g_test_add_func ("/tally/markdown/block-button-tooltips", test_block_button_tooltips);
  g_test_add_func ("/tally/markdown/theme-colors", test_theme_colors);
  g_test_add_func ("/tally/markdown/block-width", test_block_width);
  g_test_add_func ("/tally/markdown/blocks-over-lines", test_blocks_over_lines);
  g_test_add_func ("/tally/markdown/short-text-height", test_short_text_height);

  return g_test_run ();
}
