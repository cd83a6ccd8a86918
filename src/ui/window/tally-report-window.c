/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "tally-report-window.h"

/* tally-cards-common.h also brings TALLY_HAVE_WEBKIT and WebKit's header. */
#include "tally-cards-common.h"
#include "tally-error-dialog.h"
#include "tally-file-chip.h"
#include "tally-markdown-link.h"
#include "tally-markdown-view.h"
#include "tally-plan-card-private.h"
#include "tally-report.h"

/**
 * TallyReportWindow:
 *
 * The report preview (issue 12 §3): a Markdown file the agent wrote, shown
 * rendered with its charts, in a window of its own. The page is the
 * self-contained HTML of tally_report_file_to_html() (CSS inline, charts
 * as inline SVG, no script), made in a worker thread and shown by a
 * WebKitWebView that runs no JavaScript, uses an ephemeral network session
 * and never navigates away. A clicked http, https or mailto link, or a
 * link to a file in the report's folder, opens in the application the
 * desktop picks; any other link does not open, and a toast says so
 * (_tally_report_window_classify_navigation()). A build without
 * WebKit shows the Markdown with #TallyMarkdownView instead (charts then
 * appear as their alternative text).
 *
 * The header has *Reload* (`report.reload`) and an *Export* menu
 * (`report.export` with `html` or `pdf`): a save chooser, then
 * tally_report_export_file_async(), a toast with *Open* on success and an
 * error dialog on failure. A #GFileMonitor watches the file; when it
 * changes, a toast offers *Reload*.
 */

struct _TallyReportWindow
{
  AdwWindow             parent_instance;

  /* Template */
  AdwWindowTitle       *window_title;
  AdwToastOverlay      *toast_overlay;
  GtkStack             *stack;
  GtkWidget            *page_box;
  AdwStatusPage        *error_page;

  GFile                *file;
  GFileMonitor         *monitor;
  GCancellable         *cancellable;
  char                 *html;
  char                 *base_uri;
  GtkWidget            *web_view;     /* a WebKitWebView, or NULL */
  GtkWidget            *native_view;  /* a TallyMarkdownView, or NULL */
  GtkFileChooserNative *chooser;
  TallyExportFormat     export_format;  /* the chooser's */
  AdwToast             *changed_toast;
  gboolean              changed;
  guint                 n_exports;
  guint                 n_loads;
};

G_DEFINE_FINAL_TYPE (TallyReportWindow, tally_report_window, ADW_TYPE_WINDOW)

static void
show_error_page (TallyReportWindow *self,
                 const char        *message)
{
  adw_status_page_set_description (self->error_page, message);
  gtk_stack_set_visible_child_name (self->stack, "error");
}

/* The navigation rule */

/* Whether @uri is a local file URI that names a regular file in the
 * report's folder or below it. A fragment is not part of the file (a link
 * to `notes.md#q2` opens notes.md); a URI with a query is refused: GIO
 * would read the query as part of the file name and then drop the `..`
 * segments in it by text alone, so `report.md?/../../secret.txt` would
 * open a file this check never saw. open_outside() opens the path checked
 * here, never the URI as WebKit gave it. */
static gboolean
is_file_beside (GFile      *report,
                const char *uri)
{
  g_autoptr(GUri) parsed = g_uri_parse (uri, G_URI_FLAGS_NONE, NULL);
  g_autoptr(GFile) folder = g_file_get_parent (report);
  g_autoptr(GFile) target = NULL;
  const char *host;

  if (parsed == NULL || folder == NULL ||
      g_ascii_strcasecmp (g_uri_get_scheme (parsed), "file") != 0 ||
      g_uri_get_query (parsed) != NULL)
    return FALSE;

  host = g_uri_get_host (parsed);
  if (host != NULL && *host != '\0' && g_ascii_strcasecmp (host, "localhost") != 0)
    return FALSE;

  target = g_file_new_for_path (g_uri_get_path (parsed));
  return tally_report_file_resolves_inside (folder, target) &&
         g_file_query_file_type (target, G_FILE_QUERY_INFO_NONE, NULL) == G_FILE_TYPE_REGULAR;
}

/* Whether @uri is the page itself (@base_uri) or an anchor on it. */
static gboolean
is_own_page (const char *base_uri,
             const char *uri)
{
  gsize len = strlen (base_uri);

  return strncmp (uri, base_uri, len) == 0 && (uri[len] == '\0' || uri[len] == '#');
}

/**
 * _tally_report_window_classify_navigation:
 * @report: the Markdown file shown; its URI is the page's base URI
 * @uri: (nullable): the URI a navigation goes to, already resolved
 *   against the base URI by WebKit
 * @link_clicked: whether the analyst clicked a link (or a new window was
 *   asked for)
 * @form_submitted: whether the navigation submits a form
 *
 * The report preview's navigation rule. The report is written by the
 * model, so a link's text may hide where it leads: only the page itself
 * and its anchors load in the view; a clicked link opens outside when it
 * is http, https or mailto (as in the transcript and the plan cards), or
 * when it is a regular file in the report's folder or below it, after
 * symbolic links are resolved (a chart or a data file next to the
 * report). Every other clicked link is refused, and the window says so.
 *
 * Returns: what to do
 */
TallyReportNavigation
_tally_report_window_classify_navigation (GFile      *report,
                                          const char *uri,
                                          gboolean    link_clicked,
                                          gboolean    form_submitted)
{
  g_autofree char *base_uri = NULL;

  g_return_val_if_fail (G_IS_FILE (report), TALLY_REPORT_NAVIGATION_IGNORE);

  if (uri == NULL || form_submitted)
    return TALLY_REPORT_NAVIGATION_IGNORE;

  base_uri = g_file_get_uri (report);
  if (is_own_page (base_uri, uri))
    return TALLY_REPORT_NAVIGATION_ALLOW;

  if (!link_clicked)
    return TALLY_REPORT_NAVIGATION_IGNORE;

  if (tally_markdown_link_is_safe (uri) || is_file_beside (report, uri))
    return TALLY_REPORT_NAVIGATION_OPEN;

  return TALLY_REPORT_NAVIGATION_REFUSE;
}

/* The page */

#if TALLY_HAVE_WEBKIT
static void
open_outside (TallyReportWindow *self,
              const char        *uri)
{
  g_autoptr(GUri) parsed = NULL;
  g_autoptr(GFile) target = NULL;

  if (tally_markdown_link_is_safe (uri))
    {
      tally_markdown_link_open (GTK_WIDGET (self), uri);
      return;
    }

  /* The path that _tally_report_window_classify_navigation() checked,
   * without its fragment. */
  parsed = g_uri_parse (uri, G_URI_FLAGS_NONE, NULL);
  g_return_if_fail (parsed != NULL && g_uri_get_query (parsed) == NULL);
  target = g_file_new_for_path (g_uri_get_path (parsed));
  tally_file_chip_open_with_system (GTK_WIDGET (self), target);
}

static void
refuse_link (TallyReportWindow *self)
{
  AdwToast *toast;

  /* Translators: a toast, kept short; a report is a Markdown file the
   * agent wrote, and its files are those in its folder */
  toast = adw_toast_new (_("Link not opened: only web, mail and the report’s own files open"));
  adw_toast_set_timeout (toast, 5);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

/* Only the page Tally loads is shown; a same-page anchor scrolls; every
 * other navigation is refused, and a clicked link opens outside when
 * _tally_report_window_classify_navigation() says it may. */
static gboolean
decide_policy_cb (WebKitWebView            *view,
                  WebKitPolicyDecision     *decision,
                  WebKitPolicyDecisionType  type,
                  TallyReportWindow        *self)
{
  WebKitNavigationAction *action;
  WebKitNavigationType navigation_type;
  g_autofree char *uri = NULL;
  gboolean link;

  g_assert (TALLY_IS_REPORT_WINDOW (self));

  if (type == WEBKIT_POLICY_DECISION_TYPE_RESPONSE)
    return FALSE;

  action = webkit_navigation_policy_decision_get_navigation_action (WEBKIT_NAVIGATION_POLICY_DECISION (decision));
  uri = g_strdup (webkit_uri_request_get_uri (webkit_navigation_action_get_request (action)));
  navigation_type = webkit_navigation_action_get_navigation_type (action);
  link = type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION ||
         navigation_type == WEBKIT_NAVIGATION_TYPE_LINK_CLICKED;

  switch (_tally_report_window_classify_navigation (self->file, uri, link,
                                                    navigation_type == WEBKIT_NAVIGATION_TYPE_FORM_SUBMITTED))
    {
    case TALLY_REPORT_NAVIGATION_ALLOW:
      /* A new window is never opened, even for the page itself. */
      if (type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION)
        webkit_policy_decision_ignore (decision);
      else
        webkit_policy_decision_use (decision);
      break;
    case TALLY_REPORT_NAVIGATION_OPEN:
      webkit_policy_decision_ignore (decision);
      open_outside (self, uri);
      break;
    case TALLY_REPORT_NAVIGATION_REFUSE:
      webkit_policy_decision_ignore (decision);
      refuse_link (self);
      break;
    case TALLY_REPORT_NAVIGATION_IGNORE:
    default:
      webkit_policy_decision_ignore (decision);
      break;
    }
  return TRUE;
}

static void
web_process_terminated_cb (WebKitWebView                     *view,
                           WebKitWebProcessTerminationReason  reason,
                           TallyReportWindow                 *self)
{
  show_error_page (self, _("The page’s renderer stopped. Reload to try again."));
}

static void
load_changed_cb (WebKitWebView     *view,
                 WebKitLoadEvent    event,
                 TallyReportWindow *self)
{
  if (event == WEBKIT_LOAD_FINISHED)
    self->n_loads++;
}

static GtkWidget *
create_web_view (TallyReportWindow *self)
{
  /* The plan cards' settings (tally-cards-common.c), without script. */
  g_autoptr(WebKitSettings) settings = tally_cards_new_web_settings (FALSE);
  g_autoptr(WebKitNetworkSession) session = webkit_network_session_new_ephemeral ();
  GtkWidget *view;

  view = g_object_new (WEBKIT_TYPE_WEB_VIEW,
                       "settings", settings,
                       "network-session", session,
                       "vexpand", TRUE,
                       "hexpand", TRUE,
                       NULL);
  g_signal_connect_object (view, "decide-policy", G_CALLBACK (decide_policy_cb), self, 0);
  g_signal_connect (view, "context-menu", G_CALLBACK (tally_cards_refuse_context_menu), NULL);
  g_signal_connect_object (view, "load-changed", G_CALLBACK (load_changed_cb), self, 0);
  g_signal_connect_object (view, "web-process-terminated", G_CALLBACK (web_process_terminated_cb), self, 0);
  return view;
}
#endif

static void
show_native (TallyReportWindow *self)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;

  if (!g_file_load_contents (self->file, NULL, &text, NULL, NULL, &error))
    {
      show_error_page (self, error->message);
      return;
    }
  if (self->native_view == NULL)
    {
      GtkWidget *scroller = gtk_scrolled_window_new ();
      GtkWidget *clamp = adw_clamp_new ();

      self->native_view = tally_markdown_view_new ();
      gtk_widget_set_margin_top (self->native_view, 24);
      gtk_widget_set_margin_bottom (self->native_view, 24);
      gtk_widget_set_margin_start (self->native_view, 12);
      gtk_widget_set_margin_end (self->native_view, 12);
      adw_clamp_set_child (ADW_CLAMP (clamp), self->native_view);
      gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), clamp);
      gtk_widget_set_vexpand (scroller, TRUE);
      gtk_box_append (GTK_BOX (self->page_box), scroller);
    }
  tally_markdown_view_set_markdown (TALLY_MARKDOWN_VIEW (self->native_view), text);
  gtk_stack_set_visible_child_name (self->stack, "page");
  self->n_loads++;
}

static void
show_html (TallyReportWindow *self)
{
#if TALLY_HAVE_WEBKIT
  /* The plan cards' rules: TALLY_NO_WEBKIT, a dead web process, a
   * session bus that is named but missing (WebKit's sandbox would abort
   * the application). */
  if (_tally_plan_card_webkit_allowed ())
    {
      if (self->web_view == NULL)
        {
          self->web_view = create_web_view (self);
          gtk_box_append (GTK_BOX (self->page_box), self->web_view);
        }
      webkit_web_view_load_html (WEBKIT_WEB_VIEW (self->web_view), self->html, self->base_uri);
      gtk_stack_set_visible_child_name (self->stack, "page");
      return;
    }
#endif
  show_native (self);
}

static void
render_thread (GTask        *task,
               gpointer      source,
               gpointer      task_data,
               GCancellable *cancellable)
{
  GError *error = NULL;
  char *html = tally_report_file_to_html (task_data, cancellable, &error);

  if (html != NULL)
    g_task_return_pointer (task, html, g_free);
  else
    g_task_return_error (task, error);
}

static void
rendered_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(TallyReportWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  char *html = g_task_propagate_pointer (G_TASK (result), &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (html == NULL)
    {
      show_error_page (self, error->message);
      return;
    }

  g_free (self->html);
  self->html = html;
  show_html (self);
}

/**
 * tally_report_window_reload:
 * @self: a #TallyReportWindow
 *
 * Reads and renders the file again, in a worker thread; the page shown
 * stays until the new one is ready. A file that cannot be read or is not
 * UTF-8 text shows the reason in place of the page.
 */
void
tally_report_window_reload (TallyReportWindow *self)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (TALLY_IS_REPORT_WINDOW (self));

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();

  self->changed = FALSE;
  if (self->changed_toast != NULL)
    adw_toast_dismiss (self->changed_toast);
  if (self->html == NULL)
    gtk_stack_set_visible_child_name (self->stack, "loading");

  /* The window travels as the callback's data, not as the task's source
   * object: the worker thread may drop the task's last reference after
   * the callback ran, and a window must never be disposed off the main
   * thread. The callback, on the main thread, releases this reference. */
  task = g_task_new (NULL, self->cancellable, rendered_cb, g_object_ref (self));
  g_task_set_source_tag (task, tally_report_window_reload);
  g_task_set_task_data (task, g_object_ref (self->file), g_object_unref);
  g_task_run_in_thread (task, render_thread);
}

/* The file changed on disk */

static void
changed_toast_dismissed_cb (AdwToast          *toast,
                            TallyReportWindow *self)
{
  if (self->changed_toast == toast)
    g_clear_object (&self->changed_toast);
}

static void
file_changed_cb (GFileMonitor      *monitor,
                 GFile             *file,
                 GFile             *other,
                 GFileMonitorEvent  event,
                 TallyReportWindow *self)
{
  if (event != G_FILE_MONITOR_EVENT_CHANGES_DONE_HINT && event != G_FILE_MONITOR_EVENT_CREATED &&
      event != G_FILE_MONITOR_EVENT_DELETED && event != G_FILE_MONITOR_EVENT_MOVED_IN &&
      event != G_FILE_MONITOR_EVENT_RENAMED)
    return;

  self->changed = TRUE;
  if (self->changed_toast != NULL)
    return;

  self->changed_toast = adw_toast_new (_("The report changed on disk"));
  adw_toast_set_button_label (self->changed_toast, _("_Reload"));
  adw_toast_set_action_name (self->changed_toast, "report.reload");
  adw_toast_set_timeout (self->changed_toast, 0);
  g_signal_connect_object (self->changed_toast, "dismissed", G_CALLBACK (changed_toast_dismissed_cb), self, 0);
  adw_toast_overlay_add_toast (self->toast_overlay, g_object_ref (self->changed_toast));
}

/* Export */

static void
exported_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(TallyExportJob) job = user_data;
  TallyReportWindow *self = job->owner;
  g_autoptr(GError) error = NULL;

  self->n_exports++;
  if (!tally_report_export_file_finish (result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        tally_error_dialog_show (GTK_WIDGET (self), _("Could Not Export the Report"), error->message);
      return;
    }
  adw_toast_overlay_add_toast (self->toast_overlay,
                               tally_export_dialog_new_done_toast (job->output, "report.open-file"));
}

/**
 * tally_report_window_export:
 * @self: a #TallyReportWindow
 * @format: %TALLY_EXPORT_HTML or %TALLY_EXPORT_PDF
 * @output: (transfer none): the file to write, a local path
 *
 * Exports the report with tally_report_export_file_async(), without
 * blocking the window; a toast with *Open* says when it is written, an
 * error dialog says why it was not.
 */
void
tally_report_window_export (TallyReportWindow *self,
                            TallyExportFormat  format,
                            GFile             *output)
{
  g_return_if_fail (TALLY_IS_REPORT_WINDOW (self));
  g_return_if_fail (format == TALLY_EXPORT_HTML || format == TALLY_EXPORT_PDF);
  g_return_if_fail (G_IS_FILE (output));

  tally_report_export_file_async (self->file, tally_export_format_to_report (format), output,
                                  self->cancellable, exported_cb, tally_export_job_new (self, output));
}

/* The analyst chose to replace the file (@data, the output) in the
 * question tally_export_dialog_ask_replace() asked. */
static void
replace_confirmed (GtkWidget *owner,
                   gpointer   data)
{
  TallyReportWindow *self = TALLY_REPORT_WINDOW (owner);

  tally_report_window_export (self, self->export_format, G_FILE (data));
}

static void
chooser_response_cb (TallyReportWindow *self,
                     int                response,
                     GtkNativeDialog   *chooser)
{
  TallyExportFormat format;
  gboolean unasked = FALSE;
  g_autoptr(GFile) output = tally_export_dialog_dup_output (chooser, response, self->export_format,
                                                            &format, &unasked);

  g_clear_object (&self->chooser);
  if (output == NULL)
    return;
  if (!unasked)
    {
      tally_report_window_export (self, format, output);
      return;
    }

  /* The name was given the format's suffix, and that file exists. The
   * format stays in export_format: no other chooser opens meanwhile (the
   * question is modal). */
  tally_export_dialog_ask_replace (GTK_WIDGET (self), output, replace_confirmed,
                                   g_object_ref (output), g_object_unref);
}

static void
export_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  TallyReportWindow *self = TALLY_REPORT_WINDOW (widget);
  g_autofree char *name = NULL;
  g_autofree char *stem = NULL;
  g_autoptr(GFile) folder = NULL;
  TallyExportFormat format = TALLY_EXPORT_HTML;
  char *dot;

  if (self->chooser != NULL)
    return;
  if (!tally_export_format_from_id (g_variant_get_string (parameter, NULL), &format) ||
      (format != TALLY_EXPORT_HTML && format != TALLY_EXPORT_PDF))
    {
      g_warning ("report.export: “%s” is not a report format", g_variant_get_string (parameter, NULL));
      return;
    }

  name = g_file_get_basename (self->file);
  dot = strrchr (name, '.');
  stem = dot != NULL && dot != name ? g_strndup (name, dot - name) : g_strdup (name);
  self->export_format = format;
  folder = g_file_get_parent (self->file);
  self->chooser = tally_export_dialog_new_chooser (widget, _("Export the Report"), stem, format, FALSE, folder);
  g_signal_connect_object (self->chooser, "response", G_CALLBACK (chooser_response_cb), self, G_CONNECT_SWAPPED);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
reload_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  tally_report_window_reload (TALLY_REPORT_WINDOW (widget));
}

static void
open_file_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  g_autoptr(GFile) file = g_file_new_for_uri (g_variant_get_string (parameter, NULL));

  tally_file_chip_open_with_system (widget, file);
}

/* Object */

static void
tally_report_window_dispose (GObject *object)
{
  TallyReportWindow *self = (TallyReportWindow *)object;

  g_cancellable_cancel (self->cancellable);
  if (self->chooser != NULL)
    gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
  g_clear_object (&self->chooser);
  if (self->monitor != NULL)
    g_file_monitor_cancel (self->monitor);
  g_clear_object (&self->monitor);
  g_clear_object (&self->changed_toast);

  gtk_widget_dispose_template (GTK_WIDGET (self), TALLY_TYPE_REPORT_WINDOW);

  G_OBJECT_CLASS (tally_report_window_parent_class)->dispose (object);
}

static void
tally_report_window_finalize (GObject *object)
{
  TallyReportWindow *self = (TallyReportWindow *)object;

  g_clear_object (&self->cancellable);
  g_clear_object (&self->file);
  g_free (self->html);
  g_free (self->base_uri);

  G_OBJECT_CLASS (tally_report_window_parent_class)->finalize (object);
}

static void
tally_report_window_class_init (TallyReportWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_report_window_dispose;
  object_class->finalize = tally_report_window_finalize;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/window/tally-report-window.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyReportWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, TallyReportWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, TallyReportWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, TallyReportWindow, page_box);
  gtk_widget_class_bind_template_child (widget_class, TallyReportWindow, error_page);

  /**
   * TallyReportWindow|report.reload:
   *
   * Renders the file again.
   */
  gtk_widget_class_install_action (widget_class, "report.reload", NULL, reload_action);
  /**
   * TallyReportWindow|report.export:
   * @format: `html` or `pdf`
   *
   * Asks where to export the report, then exports it.
   */
  gtk_widget_class_install_action (widget_class, "report.export", "s", export_action);
  /**
   * TallyReportWindow|report.open-file:
   * @uri: the file's URI
   *
   * Opens an exported file in the application the desktop picks.
   */
  gtk_widget_class_install_action (widget_class, "report.open-file", "s", open_file_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r, GDK_CONTROL_MASK, "report.reload", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "window.close", NULL);
}

static void
tally_report_window_init (TallyReportWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * tally_report_window_new:
 * @parent: (nullable): the window it is opened from; the preview belongs
 *   to its application and closes with it
 * @file: (transfer none): the Markdown file, a local path
 *
 * Creates the preview of @file and starts rendering it; present it with
 * gtk_window_present().
 *
 * Returns: (transfer floating): a new #TallyReportWindow
 */
GtkWidget *
tally_report_window_new (GtkWindow *parent,
                         GFile     *file)
{
  TallyReportWindow *self;
  g_autofree char *name = NULL;
  g_autoptr(GFile) folder = NULL;
  g_autofree char *folder_name = NULL;
  g_autoptr(GError) error = NULL;

  g_return_val_if_fail (parent == NULL || GTK_IS_WINDOW (parent), NULL);
  g_return_val_if_fail (G_IS_FILE (file), NULL);

  self = g_object_new (TALLY_TYPE_REPORT_WINDOW,
                       "transient-for", parent,
                       "destroy-with-parent", TRUE,
                       "application", parent != NULL ? gtk_window_get_application (parent) : NULL,
                       NULL);
  self->file = g_object_ref (file);
  self->base_uri = g_file_get_uri (file);

  name = g_file_get_basename (file);
  folder = g_file_get_parent (file);
  folder_name = folder != NULL ? g_file_get_parse_name (folder) : NULL;
  gtk_window_set_title (GTK_WINDOW (self), name);
  adw_window_title_set_title (self->window_title, name);
  adw_window_title_set_subtitle (self->window_title, folder_name);

  self->monitor = g_file_monitor_file (file, G_FILE_MONITOR_WATCH_MOVES, NULL, &error);
  if (self->monitor != NULL)
    g_signal_connect_object (self->monitor, "changed", G_CALLBACK (file_changed_cb), self, 0);
  else
    g_debug ("Not watching %s: %s", name, error->message);

  tally_report_window_reload (self);
  return GTK_WIDGET (self);
}

/**
 * tally_report_window_get_file:
 * @self: a #TallyReportWindow
 *
 * Returns: (transfer none): the Markdown file shown
 */
GFile *
tally_report_window_get_file (TallyReportWindow *self)
{
  g_return_val_if_fail (TALLY_IS_REPORT_WINDOW (self), NULL);
  return self->file;
}

/**
 * _tally_report_window_get_state:
 * @self: a #TallyReportWindow
 *
 * Returns: (transfer none): `loading`, `page` or `error`
 */
const char *
_tally_report_window_get_state (TallyReportWindow *self)
{
  g_return_val_if_fail (TALLY_IS_REPORT_WINDOW (self), NULL);
  return gtk_stack_get_visible_child_name (self->stack);
}

/**
 * _tally_report_window_get_html:
 * @self: a #TallyReportWindow
 *
 * Returns: (transfer none) (nullable): the HTML last loaded in the page
 */
const char *
_tally_report_window_get_html (TallyReportWindow *self)
{
  g_return_val_if_fail (TALLY_IS_REPORT_WINDOW (self), NULL);
  return self->html;
}

/**
 * _tally_report_window_get_web_view:
 * @self: a #TallyReportWindow
 *
 * Returns: (transfer none) (nullable): the WebKitWebView, %NULL before the
 *   first page or without WebKit
 */
GtkWidget *
_tally_report_window_get_web_view (TallyReportWindow *self)
{
  g_return_val_if_fail (TALLY_IS_REPORT_WINDOW (self), NULL);
  return self->web_view;
}

/**
 * _tally_report_window_get_n_exports:
 * @self: a #TallyReportWindow
 *
 * Returns: how many exports have finished, written or not
 */
guint
_tally_report_window_get_n_exports (TallyReportWindow *self)
{
  g_return_val_if_fail (TALLY_IS_REPORT_WINDOW (self), 0);
  return self->n_exports;
}

/**
 * _tally_report_window_get_chooser:
 * @self: a #TallyReportWindow
 *
 * Returns: (transfer none) (nullable): the export chooser while it is
 *   open
 */
GtkNativeDialog *
_tally_report_window_get_chooser (TallyReportWindow *self)
{
  g_return_val_if_fail (TALLY_IS_REPORT_WINDOW (self), NULL);
  return self->chooser != NULL ? GTK_NATIVE_DIALOG (self->chooser) : NULL;
}

/**
 * _tally_report_window_get_n_loads:
 * @self: a #TallyReportWindow
 *
 * Returns: how many pages have finished loading
 */
guint
_tally_report_window_get_n_loads (TallyReportWindow *self)
{
  g_return_val_if_fail (TALLY_IS_REPORT_WINDOW (self), 0);
  return self->n_loads;
}

/**
 * _tally_report_window_get_changed:
 * @self: a #TallyReportWindow
 *
 * Returns: whether the file changed on disk since the last reload
 */
gboolean
_tally_report_window_get_changed (TallyReportWindow *self)
{
  g_return_val_if_fail (TALLY_IS_REPORT_WINDOW (self), FALSE);
  return self->changed;
}
