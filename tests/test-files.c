/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Files the agent writes (issue 12 §3), under Xvfb: the file chips of a
 * turn (name, size and kind read from the workspace, a deleted file shown
 * as such, a Markdown file opened in the report preview), the report
 * preview (the HTML of tally_report_file_to_html() loaded in WebKit with
 * its chart, exported as HTML and PDF, a change on disk noticed) and the
 * export file names. Screenshots (file-chips.png, report-preview.png) are
 * written when TALLY_SCREENSHOT_DIR is set. */

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "tally-cards-config.h"
#if TALLY_HAVE_WEBKIT
#include <webkit/webkit.h>
#endif

#include "tally-event.h"
#include "tally-export-dialog.h"
#include "tally-file-chip.h"
#include "tally-report-window.h"
#include "tally-test-ui.h"
#include "tally-test-util.h"
#include "tally-transcript-view.h"
#include "tally-transcript.h"
#include "tally-ui.h"

#define REPORT_MD "# Q2 revenue by store\n\nMinster Yard earned the most.\n\n![Revenue by store](charts/q2.svg)\n\n| Store | Revenue |\n| --- | --: |\n| Minster Yard | 214,242.60 |\n| Leeds Station | 126,583.70 |\n\nSee [the sample](https://example.org/beanline).\n"
#define CHART_SVG "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"200\" viewBox=\"0 0 400 200\">" \
                  "<rect x=\"20\" y=\"20\" width=\"120\" height=\"160\" fill=\"#3584e4\"/>" \
                  "<rect x=\"180\" y=\"90\" width=\"120\" height=\"90\" fill=\"#e66100\"/></svg>"

/* A workspace with report.md (REPORT_MD), charts/q2.svg and charts/q2.png */
static char *
make_workspace (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("tally-test-files-XXXXXX", &error);
  g_autofree char *charts = g_build_filename (dir, "charts", NULL);
  g_autofree char *report = g_build_filename (dir, "report.md", NULL);
  g_autofree char *svg = g_build_filename (charts, "q2.svg", NULL);
  g_autofree char *png = g_build_filename (charts, "q2.png", NULL);
  g_autofree char *png_bytes = g_malloc0 (2500);

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir (charts, 0755), ==, 0);
  g_assert_true (g_file_set_contents (report, REPORT_MD, -1, NULL));
  g_assert_true (g_file_set_contents (svg, CHART_SVG, -1, NULL));
  memcpy (png_bytes, "\x89PNG\r\n\x1a\n", 8);
  g_assert_true (g_file_set_contents (png, png_bytes, 2500, NULL));
  return dir;
}

static void
remove_workspace (const char *dir)
{
  static const char * const files[] = { "charts/q2.svg", "charts/q2.png", "report.md", "report.html",
                                        "report.pdf", "charts", NULL };

  for (guint i = 0; files[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (dir, files[i], NULL);

      g_remove (path);
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static void
apply (TallyTranscript *transcript,
       const char      *json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) event = tally_event_from_json (json, &error);

  g_assert_no_error (error);
  tally_transcript_apply (transcript, event);
}

/* A turn that wrote report.md, drew charts/q2.svg and .png, and wrote
 * gone.csv, which is not in the workspace (deleted since). */
static void
fill_turn (TallyTranscript *transcript)
{
  static const char * const events[] = {
    "{\"type\":\"turn_started\",\"turn_id\":\"t1\",\"mode\":\"auto\",\"text\":\"Chart Q2 and write a report\"}",
    "{\"type\":\"tool_use_start\",\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"tool_name\":\"create_chart\",\"tool_input\":{}}",
    "{\"type\":\"tool_result\",\"turn_id\":\"t1\",\"tool_id\":\"tu1\",\"content\":\"A bar chart.\",\"is_error\":false,\"duration_ms\":40}",
    "{\"type\":\"chart_created\",\"turn_id\":\"t1\",\"chart_id\":\"c1\",\"tool_id\":\"tu1\",\"title\":\"Revenue by store\","
    "\"spec\":{\"title\":\"Revenue by store\",\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"store\",\"type\":\"nominal\"},"
    "\"y\":{\"field\":\"revenue\",\"type\":\"quantitative\"}},\"data\":{\"values\":[{\"store\":\"Minster Yard\",\"revenue\":214242.6},{\"store\":\"Leeds Station\",\"revenue\":126583.7}]}},"
    "\"files\":[\"charts/q2.svg\",\"charts/q2.png\"],\"rows\":2}",
    "{\"type\":\"tool_use_start\",\"turn_id\":\"t1\",\"tool_id\":\"tu2\",\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"report.md\",\"content\":\"…\"}}",
    "{\"type\":\"tool_result\",\"turn_id\":\"t1\",\"tool_id\":\"tu2\",\"content\":\"Wrote report.md\",\"is_error\":false,\"duration_ms\":2}",
    "{\"type\":\"tool_use_start\",\"turn_id\":\"t1\",\"tool_id\":\"tu3\",\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"gone.csv\",\"content\":\"a,b\\n\"}}",
    "{\"type\":\"tool_result\",\"turn_id\":\"t1\",\"tool_id\":\"tu3\",\"content\":\"Wrote gone.csv\",\"is_error\":false,\"duration_ms\":1}",
    "{\"type\":\"turn_finished\",\"turn_id\":\"t1\",\"status\":\"done\",\"cost_usd\":0.01,\"duration_ms\":900,\"api_calls\":2,\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}",
    NULL
  };

  for (guint i = 0; events[i] != NULL; i++)
    apply (transcript, events[i]);
}

static void
collect (GtkWidget *widget,
         GType      type,
         GPtrArray *found)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    g_ptr_array_add (found, widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    collect (child, type, found);
}

static TallyFileChip *
find_chip (GtkWidget  *root,
           const char *name)
{
  g_autoptr(GPtrArray) chips = g_ptr_array_new ();

  collect (root, TALLY_TYPE_FILE_CHIP, chips);
  for (guint i = 0; i < chips->len; i++)
    if (g_strcmp0 (tally_file_chip_get_name (g_ptr_array_index (chips, i)), name) == 0)
      return g_ptr_array_index (chips, i);
  return NULL;
}

/* Writes @widget as it is drawn to $TALLY_SCREENSHOT_DIR/@name. */
static void
screenshot (GtkWidget  *widget,
            const char *name)
{
  const char *dir = g_getenv ("TALLY_SCREENSHOT_DIR");
  g_autoptr(GdkPaintable) paintable = NULL;
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree char *path = NULL;
  GtkSnapshot *snapshot;
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);

  if (dir == NULL)
    return;

  paintable = gtk_widget_paintable_new (widget);
  snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (widget)),
                                         node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  path = g_build_filename (dir, name, NULL);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("Screenshot: %s", path);
}

/* /tally/files/chips */

static void
preview_cb (GSimpleAction *action,
            GVariant      *parameter,
            gpointer       user_data)
{
  char **path = user_data;

  g_free (*path);
  *path = g_variant_dup_string (parameter, NULL);
}

static void
test_chips (void)
{
  g_autofree char *workspace = make_workspace ();
  g_autoptr(TallyTranscript) transcript = tally_transcript_new ();
  g_autoptr(GSimpleActionGroup) win = g_simple_action_group_new ();
  g_autoptr(GSimpleAction) preview = g_simple_action_new ("preview-report", G_VARIANT_TYPE_STRING);
  g_autofree char *previewed = NULL;
  g_autofree char *report_path = g_build_filename (workspace, "report.md", NULL);
  g_autoptr(GFile) report_file = NULL;
  GtkWidget *view = tally_transcript_view_new ();
  GtkWindow *window = GTK_WINDOW (gtk_window_new ());
  TallyFileChip *report, *svg, *png, *gone;

  g_signal_connect (preview, "activate", G_CALLBACK (preview_cb), &previewed);
  g_action_map_add_action (G_ACTION_MAP (win), G_ACTION (preview));
  gtk_widget_insert_action_group (GTK_WIDGET (window), "win", G_ACTION_GROUP (win));

  fill_turn (transcript);
  tally_transcript_view_set_workspace (TALLY_TRANSCRIPT_VIEW (view), workspace);
  tally_transcript_view_set_model (TALLY_TRANSCRIPT_VIEW (view), G_LIST_MODEL (transcript));
  gtk_window_set_default_size (window, 760, 900);
  gtk_window_set_child (window, view);
  gtk_window_present (window);
  tally_test_wait_frames (view, 6);

  /* Each file once, in the order written, with its size and kind. */
  report = find_chip (view, "report.md");
  svg = find_chip (view, "q2.svg");
  png = find_chip (view, "q2.png");
  gone = find_chip (view, "gone.csv");
  g_assert_nonnull (report);
  g_assert_nonnull (svg);
  g_assert_nonnull (png);
  g_assert_nonnull (gone);
  g_assert_false (tally_file_chip_get_deleted (report));
  g_assert_cmpuint (strlen (REPORT_MD), ==, 234);
  g_assert_cmpstr (tally_file_chip_get_detail (report), ==, "234 bytes · Markdown document");
  g_assert_cmpuint (strlen (CHART_SVG), ==, 215);
  g_assert_cmpstr (tally_file_chip_get_detail (svg), ==, "215 bytes · SVG image");
  g_assert_cmpstr (tally_file_chip_get_detail (png), ==, "2.5\xc2\xa0kB · PNG image");
  report_file = tally_file_chip_dup_file (report);
  g_assert_cmpstr (g_file_peek_path (report_file), ==, report_path);

  /* A file that is gone says so, dimmed, and offers nothing to click. */
  g_assert_true (tally_file_chip_get_deleted (gone));
  g_assert_cmpstr (tally_file_chip_get_detail (gone), ==, "Deleted");
  g_assert_false (gtk_widget_activate_action (GTK_WIDGET (gone), "file.open", NULL) && previewed != NULL);

  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_FORCE_LIGHT);
  tally_test_wait_frames (view, 4);
  screenshot (view, "file-chips.png");
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);

  /* Open on a Markdown file asks the window for the report preview. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (report), "file.open", NULL));
  g_assert_cmpstr (previewed, ==, report_path);

  /* Deleted after it was shown: the next look (or click) says so. */
  g_assert_cmpint (g_remove (report_path), ==, 0);
  g_clear_pointer (&previewed, g_free);
  gtk_widget_activate_action (GTK_WIDGET (report), "file.open", NULL);
  g_assert_null (previewed);
  g_assert_true (tally_file_chip_get_deleted (report));
  g_assert_cmpstr (tally_file_chip_get_detail (report), ==, "Deleted");

  gtk_window_destroy (window);
  remove_workspace (workspace);
}

/* /tally/files/report-links: which clicked links of a report open. The
 * report is the model's, so a link's text may hide where it leads. */

static TallyReportNavigation
classify_link (GFile      *report,
               const char *uri)
{
  return _tally_report_window_classify_navigation (report, uri, TRUE, FALSE);
}

static char *
uri_below (const char *dir,
           const char *relative)
{
  g_autofree char *path = g_build_filename (dir, relative, NULL);

  return g_filename_to_uri (path, NULL, NULL);
}

static void
test_report_links (void)
{
  g_autofree char *workspace = make_workspace ();
  g_autofree char *outside = g_dir_make_tmp ("tally-test-outside-XXXXXX", NULL);
  g_autofree char *report_path = g_build_filename (workspace, "report.md", NULL);
  g_autofree char *secret = g_build_filename (outside, "secret.txt", NULL);
  g_autofree char *leak = g_build_filename (workspace, "leak.txt", NULL);
  g_autofree char *evil_dir = g_strconcat (workspace, "-evil", NULL);
  g_autofree char *evil = g_build_filename (evil_dir, "x.txt", NULL);
  g_autoptr(GFile) report = g_file_new_for_path (report_path);
  g_autofree char *self_uri = g_file_get_uri (report);
  g_autofree char *anchor = g_strconcat (self_uri, "#q2", NULL);
  g_autofree char *svg = uri_below (workspace, "charts/q2.svg");
  g_autofree char *svg_fragment = g_strconcat (svg, "#top", NULL);
  g_autofree char *spaced = g_build_filename (workspace, "notes 2.csv", NULL);
  g_autofree char *spaced_uri = g_filename_to_uri (spaced, NULL, NULL);
  g_autofree char *query_escape = g_strconcat (self_uri, "?/../../secret.txt", NULL);
  g_autofree char *svg_query = g_strconcat (svg, "?v=2", NULL);
  g_autofree char *svg_localhost = NULL;
  g_autofree char *svg_host = NULL;
  g_autofree char *dotdot = uri_below (workspace, "charts/../../");
  g_autofree char *missing = uri_below (workspace, "charts/gone.svg");
  g_autofree char *folder = uri_below (workspace, "charts");
  g_autofree char *leak_uri = uri_below (workspace, "leak.txt");
  g_autofree char *secret_uri = g_filename_to_uri (secret, NULL, NULL);
  g_autofree char *evil_uri = g_filename_to_uri (evil, NULL, NULL);

  g_assert_nonnull (outside);
  g_assert_true (g_file_set_contents (secret, "not for the model", -1, NULL));
  g_assert_cmpint (symlink (secret, leak), ==, 0);
  g_assert_true (g_file_set_contents (spaced, "store,revenue\n", -1, NULL));
  g_assert_cmpint (g_mkdir (evil_dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (evil, "beside, not inside", -1, NULL));
  svg_localhost = g_strconcat ("file://localhost", svg + strlen ("file://"), NULL);
  svg_host = g_strconcat ("file://files.example", svg + strlen ("file://"), NULL);

  /* The page itself and its anchors load in the view, clicked or not. */
  g_assert_cmpint (_tally_report_window_classify_navigation (report, self_uri, FALSE, FALSE), ==,
                   TALLY_REPORT_NAVIGATION_ALLOW);
  g_assert_cmpint (classify_link (report, anchor), ==, TALLY_REPORT_NAVIGATION_ALLOW);
  /* A form, even to the page itself, and a page that is not clicked. */
  g_assert_cmpint (_tally_report_window_classify_navigation (report, self_uri, FALSE, TRUE), ==,
                   TALLY_REPORT_NAVIGATION_IGNORE);
  g_assert_cmpint (_tally_report_window_classify_navigation (report, "https://example.org/", FALSE, FALSE), ==,
                   TALLY_REPORT_NAVIGATION_IGNORE);
  g_assert_cmpint (_tally_report_window_classify_navigation (report, NULL, TRUE, FALSE), ==,
                   TALLY_REPORT_NAVIGATION_IGNORE);

  /* Web and mail links open outside. */
  g_assert_cmpint (classify_link (report, "https://example.org/beanline"), ==, TALLY_REPORT_NAVIGATION_OPEN);
  g_assert_cmpint (classify_link (report, "mailto:ops@beanline.example"), ==, TALLY_REPORT_NAVIGATION_OPEN);
  /* Files in the report's folder or below it open; a fragment is not part
   * of the file; a local host name is the same machine. */
  g_assert_cmpint (classify_link (report, svg), ==, TALLY_REPORT_NAVIGATION_OPEN);
  g_assert_cmpint (classify_link (report, svg_fragment), ==, TALLY_REPORT_NAVIGATION_OPEN);
  g_assert_cmpint (classify_link (report, svg_localhost), ==, TALLY_REPORT_NAVIGATION_OPEN);
  g_assert_nonnull (strstr (spaced_uri, "%20"));
  g_assert_cmpint (classify_link (report, spaced_uri), ==, TALLY_REPORT_NAVIGATION_OPEN);

  /* Everything else is refused, and the window says so. */
  g_assert_cmpint (classify_link (report, svg_host), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  /* A query: GIO would take it as part of the name, `..` and all. */
  g_assert_cmpint (classify_link (report, query_escape), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, svg_query), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, secret_uri), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, leak_uri), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, evil_uri), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, dotdot), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, missing), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, folder), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, "file:///etc/passwd"), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, "javascript:alert(1)"), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, "smb://files.example/share/q2.xlsx"), ==, TALLY_REPORT_NAVIGATION_REFUSE);
  g_assert_cmpint (classify_link (report, "ftp://files.example/q2.csv"), ==, TALLY_REPORT_NAVIGATION_REFUSE);

  g_assert_cmpint (g_remove (leak), ==, 0);
  g_assert_cmpint (g_remove (spaced), ==, 0);
  tally_test_rm_rf (evil_dir);
  tally_test_rm_rf (outside);
  remove_workspace (workspace);
}

/* /tally/files/report-preview */

#if TALLY_HAVE_WEBKIT
typedef struct {
  gboolean  loaded;
  char     *value;
} PageProbe;

static void
probe_load_changed_cb (WebKitWebView   *view,
                       WebKitLoadEvent  event,
                       PageProbe       *probe)
{
  if (event == WEBKIT_LOAD_FINISHED)
    probe->loaded = TRUE;
}

static void
probe_evaluated_cb (GObject      *object,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  PageProbe *probe = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (object), result, &error);

  g_assert_no_error (error);
  probe->value = jsc_value_to_string (value);
}

/* What @script says of @page as WebKit lays it out, in a separate view
 * with scripts on (the preview keeps them off). */
static char *
probe_page (const char *page,
            const char *script)
{
  PageProbe probe = { 0 };
  g_autoptr(WebKitNetworkSession) session = webkit_network_session_new_ephemeral ();
  GtkWidget *view = g_object_ref_sink (g_object_new (WEBKIT_TYPE_WEB_VIEW, "network-session", session, NULL));

  g_signal_connect (view, "load-changed", G_CALLBACK (probe_load_changed_cb), &probe);
  webkit_web_view_load_html (WEBKIT_WEB_VIEW (view), page, "about:blank");
  SPIN_UNTIL (probe.loaded);
  webkit_web_view_evaluate_javascript (WEBKIT_WEB_VIEW (view), script, -1, NULL, NULL, NULL,
                                       probe_evaluated_cb, &probe);
  SPIN_UNTIL (probe.value != NULL);
  g_signal_handlers_disconnect_by_data (view, &probe);
  g_object_unref (view);
  return probe.value;
}
#endif

static gboolean
chooser_folder_is (GtkNativeDialog *chooser,
                   const char      *path)
{
  g_autoptr(GFile) folder = gtk_file_chooser_get_current_folder (GTK_FILE_CHOOSER (chooser));

  return folder != NULL && g_strcmp0 (g_file_peek_path (folder), path) == 0;
}

/* Answers "Export as HTML…" of @window with @name in @folder (the
 * report's), as the analyst would: the chooser settled in the folder, the
 * name typed, Export. */
static void
export_html_named (TallyReportWindow *window,
                   const char        *folder,
                   const char        *name)
{
  g_autofree char *typed = g_build_filename (folder, name, NULL);
  GtkNativeDialog *chooser;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "report.export", "s", "html"));
  chooser = _tally_report_window_get_chooser (window);
  g_assert_nonnull (chooser);
  SPIN_UNTIL (chooser_folder_is (chooser, folder));
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), name);
  SPIN_UNTIL (tally_test_chooser_names (GTK_FILE_CHOOSER (chooser), typed));
  gtk_native_dialog_hide (chooser);
  g_signal_emit_by_name (chooser, "response", GTK_RESPONSE_ACCEPT);
}

static void
test_report_preview (void)
{
  g_autofree char *workspace = make_workspace ();
  g_autofree char *report_path = g_build_filename (workspace, "report.md", NULL);
  g_autofree char *html_path = g_build_filename (workspace, "report.html", NULL);
  g_autofree char *pdf_path = g_build_filename (workspace, "report.pdf", NULL);
  g_autoptr(GFile) report = g_file_new_for_path (report_path);
  g_autoptr(GFile) html_file = g_file_new_for_path (html_path);
  g_autoptr(GFile) pdf_file = g_file_new_for_path (pdf_path);
  g_autofree char *html = NULL;
  g_autofree char *pdf = NULL;
  gsize pdf_length = 0;
  const char *page;
  TallyReportWindow *window;

  g_unsetenv ("TALLY_NO_WEBKIT");
  window = TALLY_REPORT_WINDOW (tally_report_window_new (NULL, report));
  gtk_window_present (GTK_WINDOW (window));
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "report.md");
  SPIN_UNTIL (_tally_report_window_get_n_loads (window) == 1);
  g_assert_cmpstr (_tally_report_window_get_state (window), ==, "page");

  /* The page: the report's own text, the chart inline as SVG, no script. */
  page = _tally_report_window_get_html (window);
  g_assert_nonnull (page);
  g_assert_nonnull (strstr (page, "Q2 revenue by store"));
  g_assert_nonnull (strstr (page, "<svg"));
  g_assert_nonnull (strstr (page, "Leeds Station"));
  g_assert_null (strstr (page, "<script"));

#if TALLY_HAVE_WEBKIT
  {
    GtkWidget *web_view = _tally_report_window_get_web_view (window);
    g_autofree char *uri = g_file_get_uri (report);
    g_autofree char *title = NULL;
    const char *start = strstr (page, "<title>");

    g_assert_nonnull (web_view);
    g_assert_cmpstr (webkit_web_view_get_uri (WEBKIT_WEB_VIEW (web_view)), ==, uri);
    g_assert_false (webkit_settings_get_enable_javascript (webkit_web_view_get_settings (WEBKIT_WEB_VIEW (web_view))));
    /* The page WebKit shows is the one Tally made: same <title>. */
    g_assert_nonnull (start);
    start += strlen ("<title>");
    title = g_strndup (start, strstr (start, "</title>") - start);
    g_assert_cmpstr (title, !=, "");
    SPIN_UNTIL (webkit_web_view_get_title (WEBKIT_WEB_VIEW (web_view)) != NULL);
    g_assert_cmpstr (webkit_web_view_get_title (WEBKIT_WEB_VIEW (web_view)), ==, title);
  }
  /* A column the Markdown aligns right (| --: |) is drawn right-aligned;
   * the others are left-aligned. */
  {
    g_autofree char *revenue = probe_page (page, "getComputedStyle(document.querySelector('tbody td:nth-child(2)')).textAlign");
    g_autofree char *store = probe_page (page, "getComputedStyle(document.querySelector('tbody td:nth-child(1)')).textAlign");

    g_assert_cmpstr (revenue, ==, "right");
    g_assert_cmpstr (store, ==, "left");
  }
  /* The web process paints a little after the load; the screenshot waits
   * for some frames (nothing is asserted on time). */
  for (guint i = 0; i < 30 && g_getenv ("TALLY_SCREENSHOT_DIR") != NULL; i++)
    {
      gtk_widget_queue_draw (GTK_WIDGET (window));
      tally_test_wait_frames (GTK_WIDGET (window), 2);
    }
#endif
  screenshot (GTK_WIDGET (window), "report-preview.png");

  /* Export as HTML and as PDF, in the background. */
  tally_report_window_export (window, TALLY_EXPORT_HTML, html_file);
  SPIN_UNTIL (_tally_report_window_get_n_exports (window) == 1);
  g_assert_true (g_file_get_contents (html_path, &html, NULL, NULL));
  g_assert_nonnull (strstr (html, "Minster Yard earned the most."));
  g_assert_nonnull (strstr (html, "<svg"));
  tally_report_window_export (window, TALLY_EXPORT_PDF, pdf_file);
  SPIN_UNTIL (_tally_report_window_get_n_exports (window) == 2);
  g_assert_true (g_file_get_contents (pdf_path, &pdf, &pdf_length, NULL));
  g_assert_cmpuint (pdf_length, >, 1000);
  g_assert_true (g_str_has_prefix (pdf, "%PDF-"));

  /* "Export as PDF…" from the menu writes a PDF: its chooser offers the
   * .pdf name and has no format choice that could say HTML. */
  {
    g_autofree char *menu_dir = g_build_filename (workspace, "from-menu", NULL);
    g_autofree char *menu_pdf = g_build_filename (menu_dir, "report.pdf", NULL);
    g_autofree char *menu_html = g_build_filename (menu_dir, "report.html", NULL);
    g_autofree char *name = NULL;
    g_autofree char *written = NULL;
    g_autoptr(GFile) folder = g_file_new_for_path (menu_dir);
    g_autoptr(GError) error = NULL;
    GtkNativeDialog *chooser;

    g_assert_cmpint (g_mkdir (menu_dir, 0700), ==, 0);
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "report.export", "s", "pdf"));
    chooser = _tally_report_window_get_chooser (window);
    g_assert_nonnull (chooser);
    name = gtk_file_chooser_get_current_name (GTK_FILE_CHOOSER (chooser));
    g_assert_cmpstr (name, ==, "report.pdf");
    /* It opens in the report's folder (once the chooser has loaded it). */
    SPIN_UNTIL (chooser_folder_is (chooser, workspace));
    g_assert_true (gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), folder, &error));
    g_assert_no_error (error);
    /* The chooser names a file once it has loaded the folder. */
    SPIN_UNTIL (tally_test_chooser_names (GTK_FILE_CHOOSER (chooser), menu_pdf));
    gtk_native_dialog_hide (chooser);
    g_signal_emit_by_name (chooser, "response", GTK_RESPONSE_ACCEPT);
    g_assert_null (_tally_report_window_get_chooser (window));
    SPIN_UNTIL (_tally_report_window_get_n_exports (window) == 3);
    g_assert_true (g_file_get_contents (menu_pdf, &written, NULL, NULL));
    g_assert_true (g_str_has_prefix (written, "%PDF-"));
    g_assert_false (g_file_test (menu_html, G_FILE_TEST_EXISTS));

    /* HTML named keep.pdf is written as keep.html. The chooser asked
     * about keep.pdf, so replacing an existing keep.html is asked here:
     * Cancel keeps it, Replace writes it. */
    {
      g_autofree char *typed = g_build_filename (workspace, "keep.pdf", NULL);
      g_autofree char *kept = g_build_filename (workspace, "keep.html", NULL);
      g_autofree char *contents = NULL;
      const char *answers[] = { "cancel", "replace" };

      g_assert_true (g_file_set_contents (kept, "the analyst's own page", -1, NULL));
      for (guint i = 0; i < G_N_ELEMENTS (answers); i++)
        {
          AdwMessageDialog *question;

          export_html_named (window, workspace, "keep.pdf");

          question = ADW_MESSAGE_DIALOG (tally_test_find_message_dialog ());
          g_assert_nonnull (question);
          g_assert_cmpstr (adw_message_dialog_get_heading (question), ==, "Replace “keep.html”?");
          g_assert_cmpuint (_tally_report_window_get_n_exports (window), ==, 3);
          /* As its buttons do: the response, then the dialog closes. */
          adw_message_dialog_response (question, answers[i]);
          gtk_window_close (GTK_WINDOW (question));
          SPIN_UNTIL (tally_test_find_message_dialog () == NULL);
          if (i == 0)
            {
              /* Nothing is written. */
              g_assert_cmpuint (_tally_report_window_get_n_exports (window), ==, 3);
              g_assert_true (g_file_get_contents (kept, &contents, NULL, NULL));
              g_assert_cmpstr (contents, ==, "the analyst's own page");
              g_clear_pointer (&contents, g_free);
            }
          else
            {
              SPIN_UNTIL (_tally_report_window_get_n_exports (window) == 4);
              g_assert_true (g_file_get_contents (kept, &contents, NULL, NULL));
              g_assert_true (g_str_has_prefix (contents, "<!DOCTYPE html>"));
              g_assert_nonnull (strstr (contents, "Minster Yard earned the most."));
            }
        }
      g_assert_false (g_file_test (typed, G_FILE_TEST_EXISTS));
      g_assert_cmpint (g_remove (kept), ==, 0);
    }

    /* A folder of the suffixed name is not offered for replacing: the
     * export runs and fails, saying why. */
    {
      g_autofree char *box = g_build_filename (workspace, "box.html", NULL);
      AdwMessageDialog *failure;

      g_assert_cmpint (g_mkdir (box, 0700), ==, 0);
      export_html_named (window, workspace, "box.pdf");
      g_assert_null (tally_test_find_message_dialog ());
      SPIN_UNTIL (_tally_report_window_get_n_exports (window) == 5);
      SPIN_UNTIL ((failure = ADW_MESSAGE_DIALOG (tally_test_find_message_dialog ())) != NULL);
      g_assert_cmpstr (adw_message_dialog_get_heading (failure), !=, "Replace “box.html”?");
      gtk_window_close (GTK_WINDOW (failure));
      SPIN_UNTIL (tally_test_find_message_dialog () == NULL);
      g_assert_true (g_file_test (box, G_FILE_TEST_IS_DIR));
      g_assert_cmpint (g_rmdir (box), ==, 0);
    }
    tally_test_rm_rf (menu_dir);
  }

  /* A change on disk is noticed; Reload shows it. */
  g_assert_false (_tally_report_window_get_changed (window));
  g_assert_true (g_file_set_contents (report_path, "# Q3 revenue by store\n\nNew figures.\n", -1, NULL));
  SPIN_UNTIL (_tally_report_window_get_changed (window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "report.reload", NULL));
  g_assert_false (_tally_report_window_get_changed (window));
  SPIN_UNTIL (_tally_report_window_get_n_loads (window) == 2);
  g_assert_nonnull (strstr (_tally_report_window_get_html (window), "Q3 revenue by store"));

  /* A file that cannot be read shows why, in place of the page. */
  g_assert_cmpint (g_remove (report_path), ==, 0);
  tally_report_window_reload (window);
  SPIN_UNTIL (g_strcmp0 (_tally_report_window_get_state (window), "error") == 0);

  /* Closing the window while it asks whether to replace a file closes
   * the question too, and nothing is written. */
  {
    g_autofree char *kept = g_build_filename (workspace, "last.html", NULL);
    g_autofree char *contents = NULL;

    g_assert_true (g_file_set_contents (kept, "kept as it was", -1, NULL));
    export_html_named (window, workspace, "last.pdf");
    g_assert_nonnull (tally_test_find_message_dialog ());

    gtk_window_destroy (GTK_WINDOW (window));
    SPIN_UNTIL (tally_test_find_message_dialog () == NULL);
    g_assert_true (g_file_get_contents (kept, &contents, NULL, NULL));
    g_assert_cmpstr (contents, ==, "kept as it was");
    g_assert_cmpint (g_remove (kept), ==, 0);
  }

  remove_workspace (workspace);
}

/* /tally/files/export-names */

static void
check_suffix (const char        *name,
              TallyExportFormat  format,
              const char        *expected)
{
  g_autoptr(GFile) file = g_file_new_for_path (name);
  g_autoptr(GFile) renamed = tally_export_file_with_suffix (file, format);
  g_autoptr(GFile) wanted = g_file_new_for_path (expected);

  g_assert_cmpstr (g_file_peek_path (renamed), ==, g_file_peek_path (wanted));
}

static void
test_export_names (void)
{
  TallyExportFormat format = TALLY_EXPORT_MARKDOWN;

  check_suffix ("/tmp/q2", TALLY_EXPORT_PDF, "/tmp/q2.pdf");
  check_suffix ("/tmp/q2.md", TALLY_EXPORT_HTML, "/tmp/q2.html");
  check_suffix ("/tmp/q2.HTML", TALLY_EXPORT_HTML, "/tmp/q2.HTML");
  check_suffix ("/tmp/q2.htm", TALLY_EXPORT_PDF, "/tmp/q2.pdf");
  check_suffix ("/tmp/q2.final", TALLY_EXPORT_JSONL, "/tmp/q2.final.jsonl");
  check_suffix ("/tmp/.md", TALLY_EXPORT_PDF, "/tmp/.md.pdf");

  g_assert_true (tally_export_format_from_id ("jsonl", &format));
  g_assert_cmpint (format, ==, TALLY_EXPORT_JSONL);
  g_assert_false (tally_export_format_from_id ("docx", &format));
  g_assert_cmpint (format, ==, TALLY_EXPORT_JSONL);
  g_assert_cmpstr (tally_export_format_get_id (TALLY_EXPORT_PDF), ==, "pdf");
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  tally_test_prepare_ui_process ();
  adw_init ();
  tally_ui_init ();

  g_test_add_func ("/tally/files/chips", test_chips);
  g_test_add_func ("/tally/files/report-preview", test_report_preview);
  g_test_add_func ("/tally/files/report-links", test_report_links);
  g_test_add_func ("/tally/files/export-names", test_export_names);

  return g_test_run ();
}
