/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-cards"

#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <md4c-html.h>
#include <string.h>

#include "tally-plan-card-private.h"
#include "tally-card-diff.h"
/* tally-cards-common.h also brings TALLY_HAVE_WEBKIT and WebKit's header. */
#include "tally-cards-common.h"
#include "tally-json.h"
#include "tally-markdown-link.h"
#include "tally-markdown-view.h"

/**
 * TallyPlanCard:
 *
 * The card of a plan the model proposed with `ExitPlanMode` (a
 * %TALLY_BLOCK_PLAN block; docs/architecture.md §7.2): the plan's markdown,
 * its version, and the buttons that write the next message, "Implement"
 * and "Refine" (the `session.implement-plan` and `session.refine-plan`
 * actions, with the plan id and version; docs/architecture.md §3.2). From
 * the second version on, an open expander shows what changed since the
 * version before: the whole plan, the steps added tinted green and marked
 * `+`, the steps removed tinted red and marked `−` (a step that only got a
 * new number counts as unchanged). The versions of the plan (found in
 * #TallyBlockWidget:transcript by their `plan_id`) stay reachable from
 * every card: "Version 2 of 3" between a previous and a next button shows
 * that version, with what changed since the one before it, in place.
 *
 * Only the newest plan can be acted on: once a later user message or plan
 * follows it in the transcript, or Implement was pressed, the buttons go;
 * they are also hidden while the card shows another version than its own.
 * Old versions stay readable.
 *
 * Rendering. The markdown is turned into HTML by md4c (GitHub dialect,
 * raw HTML escaped) and shown by WebKitGTK, in a page that can load
 * nothing (a Content-Security-Policy of `default-src 'none'`, images only
 * from data: URLs) and runs none of its own script (script in markup is
 * off; only the card's own measuring call runs). The card allows only the
 * load of its own page; a clicked link opens in the browser, never in the
 * card. The web view is as tall as the page (measured after each load and
 * when the width changes), so it never scrolls inside the transcript. Its
 * colours follow libadwaita's light or dark style; the page is rebuilt
 * when that changes. Its background is transparent, so the card shows
 * through.
 *
 * WebKit is heavy: each web process costs hundreds of megabytes. So
 * nothing of WebKit is created until the first plan card gets a plan, and
 * then one web context, one ephemeral network session and one web process
 * (every later view is created related to a live one) serve all plan
 * cards. When WebKit is not built in, `TALLY_NO_WEBKIT=1` is set, the web
 * process dies or a page fails to load or measure, the card shows the
 * same plan with #TallyMarkdownView instead.
 */

struct _TallyPlanCard
{
  TallyBlockWidget parent_instance;

  /* Template */
  GtkWidget    *box;
  GtkLabel     *version_label;
  GtkWidget    *previous_button;
  GtkWidget    *next_button;
  GtkWidget    *content_box;
  GtkExpander  *changes_expander;
  GtkTextView  *changes_view;
  GtkWidget    *actions;
  GtkButton    *implement_button;
  GtkButton    *refine_button;

  /* The block and the transcript around it */
  GListModel   *transcript;        /* the view's model while rooted */
  gboolean      implemented;
  GPtrArray    *versions;          /* the plan's blocks, version 1 first */
  TallyBlock   *shown;             /* the version shown (one of them) */

  /* Rendering */
  GtkWidget    *web_view;          /* a WebKitWebView, or NULL */
  GtkWidget    *native_view;       /* a TallyMarkdownView, or NULL */
  char         *page;              /* the HTML last loaded */
  char         *rendered;          /* the markdown last rendered */
  gboolean      rendered_dark;
  gboolean      expecting_load;
  int           content_height;    /* measured; 0 until then */
  int           measured_width;
  guint         measure_id;
  GCancellable *cancellable;
};

G_DEFINE_FINAL_TYPE (TallyPlanCard, tally_plan_card, TALLY_TYPE_BLOCK_WIDGET)

enum {
  PROP_0,
  PROP_ACTIVE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static TallyPlanUriLauncher uri_launcher = tally_markdown_link_open;

/* The page */

static void
append_html_cb (const MD_CHAR *text,
                MD_SIZE        size,
                void          *user_data)
{
  g_assert (user_data != NULL);

  g_string_append_len (user_data, text, size);
}

/* A font family name as a CSS string: quotes and anything that could end
 * the style sheet are left out. */
static char *
css_font_family (const char *family)
{
  GString *out = g_string_new ("\"");

  for (const char *p = family; p != NULL && *p != '\0'; p++)
    if (g_ascii_isalnum (*p) || *p == ' ' || *p == '-' || *p == '_')
      g_string_append_c (out, *p);
  g_string_append (out, "\", ");
  return g_string_free (out, FALSE);
}

/**
 * _tally_plan_card_build_page:
 * @markdown: (nullable): the plan
 * @style: (nullable): colours and font; %NULL for light with the system's
 *   sans-serif at 11 pt
 *
 * Builds the HTML page a plan card loads: @markdown rendered by md4c with
 * %MD_DIALECT_GITHUB and %MD_FLAG_NOHTML (raw HTML in the plan comes out
 * escaped, as text), under a Content-Security-Policy that allows inline
 * style and data: images only, with colours for light or dark.
 *
 * Returns: (transfer full): the page
 */
char *
_tally_plan_card_build_page (const char               *markdown,
                             const TallyPlanPageStyle *style)
{
  static const TallyPlanPageStyle light = { FALSE, NULL, 0 };
  g_autoptr(GString) body = g_string_new (NULL);
  g_autofree char *family = NULL;
  GString *page;
  const char *fg, *accent, *subtle, *border;
  double size;

  if (style == NULL)
    style = &light;
  if (markdown == NULL)
    markdown = "";

  if (md_html (markdown, strlen (markdown), append_html_cb, body,
               MD_DIALECT_GITHUB | MD_FLAG_NOHTML, 0) != 0)
    {
      /* md4c refuses only on running out of memory; show the text. */
      g_autofree char *escaped = g_markup_escape_text (markdown, -1);
      g_string_assign (body, "<pre>");
      g_string_append (body, escaped);
      g_string_append (body, "</pre>");
    }

  /* libadwaita's palette (window foreground, accent) for each style. */
  if (style->dark)
    {
      fg = "#ffffff";
      accent = "#78aeed";
      subtle = "rgba(255, 255, 255, 0.08)";
      border = "rgba(255, 255, 255, 0.15)";
    }
  else
    {
      fg = "rgba(0, 0, 0, 0.8)";
      accent = "#1c71d8";
      subtle = "rgba(0, 0, 0, 0.05)";
      border = "rgba(0, 0, 0, 0.15)";
    }
  family = style->font_family != NULL ? css_font_family (style->font_family) : g_strdup ("");
  size = style->font_size_pt > 0 ? style->font_size_pt : 11.0;

  page = g_string_new (NULL);
  g_string_append (page,
                   "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
                   "<meta http-equiv=\"Content-Security-Policy\" "
                   "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n");
  g_string_append_printf (page, "<meta name=\"color-scheme\" content=\"%s\">\n<style>\n",
                          style->dark ? "dark" : "light");
  g_string_append_printf (page,
                          ":root { color-scheme: %s; }\n"
                          "html, body { margin: 0; padding: 0; background: transparent; overflow: hidden; }\n"
                          "body { color: %s; font-family: %ssans-serif; line-height: 1.5; "
                          "overflow-wrap: anywhere; -webkit-user-select: text; }\n",
                          style->dark ? "dark" : "light", fg, family);
  {
    char number[G_ASCII_DTOSTR_BUF_SIZE];

    g_string_append_printf (page, "body { font-size: %spt; }\n",
                            g_ascii_formatd (number, sizeof number, "%.1f", size));
  }
  g_string_append_printf (page,
                          "#plan { display: flow-root; padding: 0 1px; }\n"
                          "#plan > :first-child { margin-top: 0; }\n"
                          "#plan > :last-child { margin-bottom: 0; }\n"
                          "h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.1em 0 0.45em; }\n"
                          "h1 { font-size: 1.35em; } h2 { font-size: 1.2em; } h3 { font-size: 1.05em; }\n"
                          "h4, h5, h6 { font-size: 1em; }\n"
                          "p, ul, ol, pre, table, blockquote { margin: 0 0 0.7em; }\n"
                          "ul, ol { padding-left: 1.6em; }\n"
                          "li { margin: 0.2em 0; }\n"
                          "li > ul, li > ol { margin: 0.2em 0; }\n"
                          "a { color: %s; }\n"
                          "code { font-family: monospace; font-size: 0.9em; background: %s; "
                          "padding: 0.1em 0.3em; border-radius: 4px; }\n"
                          "pre { background: %s; padding: 8px 10px; border-radius: 6px; "
                          "white-space: pre-wrap; }\n"
                          "pre code { background: none; padding: 0; }\n"
                          "table { border-collapse: collapse; }\n"
                          "th, td { border: 1px solid %s; padding: 3px 8px; text-align: left; }\n"
                          "th { background: %s; }\n"
                          "blockquote { border-left: 3px solid %s; margin-left: 0; padding-left: 10px; }\n"
                          "hr { border: none; border-top: 1px solid %s; }\n"
                          "input[type=checkbox] { margin: 0 0.4em 0 0; }\n"
                          "li.task-list-item { list-style: none; margin-left: -1.3em; }\n"
                          "img { max-width: 100%%; }\n"
                          "</style></head>\n<body><div id=\"plan\">\n",
                          accent, subtle, subtle, border, subtle, border, border);
  g_string_append_len (page, body->str, body->len);
  g_string_append (page, "</div></body></html>\n");

  return g_string_free (page, FALSE);
}

/**
 * _tally_plan_card_classify_navigation:
 * @uri: the URI a navigation goes to
 * @link_clicked: whether the analyst clicked a link (or a new window was
 *   asked for)
 * @expecting_load: whether the card has just loaded its own page
 *
 * The card's navigation rule: its own page load (to `about:blank`, which
 * is where tally loads the page) is allowed; a clicked http, https or
 * mailto link is opened outside; anything else is ignored.
 *
 * Returns: what to do
 */
TallyPlanNavigation
_tally_plan_card_classify_navigation (const char *uri,
                                      gboolean    link_clicked,
                                      gboolean    expecting_load)
{
  if (uri == NULL)
    return TALLY_PLAN_NAVIGATION_IGNORE;

  if (link_clicked)
    return tally_markdown_link_is_safe (uri) ? TALLY_PLAN_NAVIGATION_OPEN : TALLY_PLAN_NAVIGATION_IGNORE;

  if (expecting_load && g_str_equal (uri, "about:blank"))
    return TALLY_PLAN_NAVIGATION_ALLOW;

  return TALLY_PLAN_NAVIGATION_IGNORE;
}

/**
 * _tally_plan_card_set_uri_launcher:
 * @launcher: (nullable): what opens a clicked link; %NULL restores the
 *   default (the desktop's browser)
 *
 * Lets a test see the links a card would open instead of opening them.
 */
void
_tally_plan_card_set_uri_launcher (TallyPlanUriLauncher launcher)
{
  uri_launcher = launcher != NULL ? launcher : tally_markdown_link_open;
}

/* WebKit, shared by every plan card */

#if TALLY_HAVE_WEBKIT
static WebKitWebContext *shared_context;
static WebKitNetworkSession *shared_session;
static GPtrArray *live_views;       /* WebKitWebView, weak */
#endif
static gboolean webkit_broken;      /* the web process died; stay native */

#if TALLY_HAVE_WEBKIT
/* WebKit's sandbox starts a D-Bus proxy for the session bus named in the
 * environment and aborts the whole application when that fails. A bus
 * address that points at a socket file that is not there cannot work, so
 * plans are then shown natively instead. */
static gboolean
session_bus_is_missing (void)
{
  const char *address = g_getenv ("DBUS_SESSION_BUS_ADDRESS");
  g_auto(GStrv) entries = NULL;

  if (address == NULL || *address == '\0')
    return FALSE;

  entries = g_strsplit (address, ";", -1);
  for (guint i = 0; entries[i] != NULL; i++)
    {
      const char *path;

      if (!g_str_has_prefix (entries[i], "unix:"))
        return FALSE;
      path = strstr (entries[i], "path=");
      if (path == NULL)
        return FALSE;     /* abstract sockets cannot be checked */
      path += strlen ("path=");
      {
        g_autofree char *file = g_strndup (path, strcspn (path, ","));

        if (g_file_test (file, G_FILE_TEST_EXISTS))
          return FALSE;
      }
    }
  return TRUE;
}
#endif

static gboolean
webkit_allowed (void)
{
#if TALLY_HAVE_WEBKIT
  static gboolean bus_checked;
  const char *no_webkit = g_getenv ("TALLY_NO_WEBKIT");

  if (no_webkit != NULL && *no_webkit != '\0' && !g_str_equal (no_webkit, "0"))
    return FALSE;

  if (!bus_checked)
    {
      g_autoptr(GError) error = NULL;

      bus_checked = TRUE;
      if (session_bus_is_missing ())
        {
          g_message ("The session bus in DBUS_SESSION_BUS_ADDRESS does not exist; plans are shown without WebKit");
          webkit_broken = TRUE;
        }
      /* WebKit is loaded here, when the first plan or report is shown,
       * not when Tally starts (tally-webkit-loader.h). */
      else if (!tally_webkit_loader_load (&error))
        {
          g_message ("%s; plans are shown without WebKit", error->message);
          webkit_broken = TRUE;
        }
    }
  return !webkit_broken;
#else
  return FALSE;
#endif
}

/**
 * _tally_plan_card_webkit_allowed:
 *
 * Whether a web view may be created now: WebKit is built in,
 * `TALLY_NO_WEBKIT` is not set, no web process has died, and the session
 * bus named in the environment, if any, exists (WebKit's sandbox aborts
 * the application otherwise). The report preview asks it too.
 *
 * Returns: %TRUE when WebKit may be used
 */
gboolean
_tally_plan_card_webkit_allowed (void)
{
  return webkit_allowed ();
}

/**
 * _tally_plan_card_webkit_started:
 *
 * Returns: whether any plan card has created WebKit's context yet (it is
 *   created with the first web view and kept)
 */
gboolean
_tally_plan_card_webkit_started (void)
{
#if TALLY_HAVE_WEBKIT
  return shared_context != NULL;
#else
  return FALSE;
#endif
}

#if TALLY_HAVE_WEBKIT
static void
live_view_gone (gpointer  data,
                GObject  *where_the_view_was)
{
  g_ptr_array_remove (live_views, where_the_view_was);
}

static GtkWidget *
create_web_view (void)
{
  WebKitWebView *related = NULL;
  GtkWidget *view;

  if (shared_context == NULL)
    {
      shared_context = webkit_web_context_new ();
      webkit_web_context_set_cache_model (shared_context, WEBKIT_CACHE_MODEL_DOCUMENT_VIEWER);
      shared_session = webkit_network_session_new_ephemeral ();
      live_views = g_ptr_array_new ();
    }

  if (live_views->len > 0)
    related = g_ptr_array_index (live_views, 0);

  if (related != NULL)
    {
      /* Same web process, settings and network session as the others. */
      view = g_object_new (WEBKIT_TYPE_WEB_VIEW, "related-view", related, NULL);
    }
  else
    {
      /* Script in the page never runs; the card's own measuring call
       * (webkit_web_view_evaluate_javascript) still does. */
      g_autoptr(WebKitSettings) settings = tally_cards_new_web_settings (TRUE);

      webkit_settings_set_enable_smooth_scrolling (settings, FALSE);

      view = g_object_new (WEBKIT_TYPE_WEB_VIEW,
                           "web-context", shared_context,
                           "network-session", shared_session,
                           "settings", settings,
                           NULL);
    }

  g_ptr_array_add (live_views, view);
  g_object_weak_ref (G_OBJECT (view), live_view_gone, NULL);
  return view;
}
#endif

/* Rendering */

static void use_native (TallyPlanCard *self);

static void
page_style (TallyPlanCard      *self,
            TallyPlanPageStyle *style,
            char              **family)
{
  g_autofree char *font_name = NULL;
  PangoFontDescription *description;

  style->dark = tally_cards_is_dark ();
  style->font_family = NULL;
  style->font_size_pt = 0;
  *family = NULL;

  g_object_get (gtk_widget_get_settings (GTK_WIDGET (self)), "gtk-font-name", &font_name, NULL);
  if (font_name == NULL)
    return;

  description = pango_font_description_from_string (font_name);
  if (pango_font_description_get_family (description) != NULL)
    *family = g_strdup (pango_font_description_get_family (description));
  style->font_family = *family;
  if (!pango_font_description_get_size_is_absolute (description))
    style->font_size_pt = (double) pango_font_description_get_size (description) / PANGO_SCALE;
  pango_font_description_free (description);
}

/* The version shown: the card's own block unless the analyst picked
 * another. */
static TallyBlock *
shown_block (TallyPlanCard *self)
{
  return self->shown != NULL ? self->shown : TALLY_BLOCK_WIDGET_BLOCK (self);
}

static const char *
block_markdown (TallyPlanCard *self)
{
  const char *markdown = shown_block (self) != NULL ? tally_block_get_text (shown_block (self)) : NULL;

  return markdown != NULL ? markdown : "";
}

#if TALLY_HAVE_WEBKIT
static void
measured_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(TallyPlanCard) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value = NULL;
  int height;

  g_assert (TALLY_IS_PLAN_CARD (self));
  g_assert (WEBKIT_IS_WEB_VIEW (object));

  value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (object), result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || (GtkWidget *) object != self->web_view)
    return;

  if (value == NULL || !jsc_value_is_number (value))
    {
      g_warning ("Could not measure a plan's page (%s); showing it natively",
                 error != NULL ? error->message : "not a number");
      use_native (self);
      return;
    }

  height = MAX (1, jsc_value_to_int32 (value));
  if (height != self->content_height)
    {
      self->content_height = height;
      gtk_widget_set_size_request (self->web_view, -1, height);
    }
}

static gboolean
measure_cb (gpointer user_data)
{
  TallyPlanCard *self = user_data;
  static const char script[] =
    "Math.ceil(document.getElementById('plan').getBoundingClientRect().height)";
  int width;

  g_assert (TALLY_IS_PLAN_CARD (self));

  self->measure_id = 0;
  if (self->web_view == NULL || self->expecting_load ||
      webkit_web_view_is_loading (WEBKIT_WEB_VIEW (self->web_view)))
    return G_SOURCE_REMOVE;

  /* Until the view has its width the page's height means nothing; the
   * allocation measures again. */
  width = gtk_widget_get_width (self->web_view);
  if (width <= 1)
    return G_SOURCE_REMOVE;

  self->measured_width = width;
  webkit_web_view_evaluate_javascript (WEBKIT_WEB_VIEW (self->web_view), script, -1,
                                       NULL, NULL, self->cancellable, measured_cb, g_object_ref (self));
  return G_SOURCE_REMOVE;
}

static void
schedule_measure (TallyPlanCard *self,
                  guint          delay_ms)
{
  g_clear_handle_id (&self->measure_id, g_source_remove);
  self->measure_id = g_timeout_add (delay_ms, measure_cb, self);
}

static void
load_changed_cb (WebKitWebView   *view,
                 WebKitLoadEvent  event,
                 TallyPlanCard   *self)
{
  g_assert (TALLY_IS_PLAN_CARD (self));

  if (event == WEBKIT_LOAD_COMMITTED)
    self->expecting_load = FALSE;
  else if (event == WEBKIT_LOAD_FINISHED)
    {
      self->expecting_load = FALSE;
      schedule_measure (self, 0);
    }
}

static gboolean
load_failed_cb (WebKitWebView   *view,
                WebKitLoadEvent  event,
                const char      *uri,
                GError          *error,
                TallyPlanCard   *self)
{
  g_assert (TALLY_IS_PLAN_CARD (self));

  /* An ignored navigation reports a cancelled load; the page stays. */
  if (g_error_matches (error, WEBKIT_NETWORK_ERROR, WEBKIT_NETWORK_ERROR_CANCELLED) ||
      g_error_matches (error, WEBKIT_POLICY_ERROR, WEBKIT_POLICY_ERROR_FRAME_LOAD_INTERRUPTED_BY_POLICY_CHANGE))
    return TRUE;

  g_warning ("A plan's page failed to load (%s); showing it natively", error->message);
  use_native (self);
  return TRUE;
}

static void
web_process_terminated_cb (WebKitWebView                     *view,
                           WebKitWebProcessTerminationReason  reason,
                           TallyPlanCard                     *self)
{
  g_assert (TALLY_IS_PLAN_CARD (self));

  g_warning ("The web process of the plan cards ended (reason %d); plans are shown natively from now on",
             (int) reason);
  webkit_broken = TRUE;
  use_native (self);
}

static gboolean
decide_policy_cb (WebKitWebView            *view,
                  WebKitPolicyDecision     *decision,
                  WebKitPolicyDecisionType  type,
                  TallyPlanCard            *self)
{
  WebKitNavigationAction *action;
  const char *uri;
  gboolean link;

  g_assert (TALLY_IS_PLAN_CARD (self));

  if (type == WEBKIT_POLICY_DECISION_TYPE_RESPONSE)
    return FALSE;

  action = webkit_navigation_policy_decision_get_navigation_action (WEBKIT_NAVIGATION_POLICY_DECISION (decision));
  uri = webkit_uri_request_get_uri (webkit_navigation_action_get_request (action));
  link = type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION ||
         webkit_navigation_action_get_navigation_type (action) == WEBKIT_NAVIGATION_TYPE_LINK_CLICKED;

  switch (_tally_plan_card_classify_navigation (uri, link, self->expecting_load))
    {
    case TALLY_PLAN_NAVIGATION_ALLOW:
      webkit_policy_decision_use (decision);
      break;
    case TALLY_PLAN_NAVIGATION_OPEN:
      webkit_policy_decision_ignore (decision);
      uri_launcher (GTK_WIDGET (self), uri);
      break;
    case TALLY_PLAN_NAVIGATION_IGNORE:
    default:
      webkit_policy_decision_ignore (decision);
      break;
    }
  return TRUE;
}

static void
ensure_web_view (TallyPlanCard *self)
{
  static const GdkRGBA transparent = { 0, 0, 0, 0 };

  if (self->web_view != NULL)
    return;

  self->web_view = create_web_view ();
  gtk_widget_set_hexpand (self->web_view, TRUE);
  gtk_widget_set_vexpand (self->web_view, FALSE);
  gtk_widget_set_size_request (self->web_view, -1, 1);
  webkit_web_view_set_background_color (WEBKIT_WEB_VIEW (self->web_view), &transparent);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->web_view),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("The plan"), -1);

  g_signal_connect_object (self->web_view, "decide-policy", G_CALLBACK (decide_policy_cb), self, 0);
  g_signal_connect_object (self->web_view, "load-changed", G_CALLBACK (load_changed_cb), self, 0);
  g_signal_connect_object (self->web_view, "load-failed", G_CALLBACK (load_failed_cb), self, 0);
  g_signal_connect_object (self->web_view, "web-process-terminated",
                           G_CALLBACK (web_process_terminated_cb), self, 0);
  g_signal_connect (self->web_view, "context-menu", G_CALLBACK (tally_cards_refuse_context_menu), NULL);

  gtk_box_append (GTK_BOX (self->content_box), self->web_view);
}
#endif

static void
drop_web_view (TallyPlanCard *self)
{
  g_clear_handle_id (&self->measure_id, g_source_remove);
  if (self->web_view == NULL)
    return;

  g_signal_handlers_disconnect_by_data (self->web_view, self);
  gtk_box_remove (GTK_BOX (self->content_box), self->web_view);
  self->web_view = NULL;
  self->content_height = 0;
  self->measured_width = 0;
}

static void
render_native (TallyPlanCard *self)
{
  g_free (self->rendered);
  self->rendered = g_strdup (block_markdown (self));

  if (self->native_view == NULL)
    {
      self->native_view = tally_markdown_view_new ();
      gtk_widget_set_hexpand (self->native_view, TRUE);
      gtk_box_append (GTK_BOX (self->content_box), self->native_view);
    }
  tally_markdown_view_set_markdown (TALLY_MARKDOWN_VIEW (self->native_view), block_markdown (self));
}

/* Falls back to the native view, for good (for this card). */
static void
use_native (TallyPlanCard *self)
{
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();

  drop_web_view (self);
  if (TALLY_BLOCK_WIDGET_BLOCK (self) != NULL)
    render_native (self);
}

static void
render (TallyPlanCard *self)
{
  const char *markdown;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL)
    return;

  /* Only when something shown changed: a web page load is not free. */
  markdown = block_markdown (self);
  if (self->rendered != NULL && g_str_equal (self->rendered, markdown) &&
      self->rendered_dark == tally_cards_is_dark ())
    return;
  g_free (self->rendered);
  self->rendered = g_strdup (markdown);
  self->rendered_dark = tally_cards_is_dark ();

#if TALLY_HAVE_WEBKIT
  if (self->native_view == NULL && webkit_allowed ())
    {
      TallyPlanPageStyle style;
      g_autofree char *family = NULL;

      ensure_web_view (self);
      page_style (self, &style, &family);
      g_free (self->page);
      self->page = _tally_plan_card_build_page (block_markdown (self), &style);
      self->expecting_load = TRUE;
      webkit_web_view_load_html (WEBKIT_WEB_VIEW (self->web_view), self->page, "about:blank");
      return;
    }
#endif

  if (self->web_view != NULL)
    drop_web_view (self);
  render_native (self);
}

static void
style_dark_cb (TallyPlanCard *self)
{
  g_assert (TALLY_IS_PLAN_CARD (self));

  /* The page carries its colours; build it again for the new style. */
  if (self->web_view != NULL)
    render (self);
}

/* The card lays out its one child itself (no layout manager), so that it
 * sees every allocation: GTK does not call size_allocate on a widget that
 * has a layout manager. */
static void
tally_plan_card_measure (GtkWidget      *widget,
                         GtkOrientation  orientation,
                         int             for_size,
                         int            *minimum,
                         int            *natural,
                         int            *minimum_baseline,
                         int            *natural_baseline)
{
  TallyPlanCard *self = TALLY_PLAN_CARD (widget);

  gtk_widget_measure (self->box, orientation, for_size, minimum, natural,
                      minimum_baseline, natural_baseline);
}

static GtkSizeRequestMode
tally_plan_card_get_request_mode (GtkWidget *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

static void
tally_plan_card_size_allocate (GtkWidget *widget,
                               int        width,
                               int        height,
                               int        baseline)
{
  TallyPlanCard *self = TALLY_PLAN_CARD (widget);

  gtk_widget_allocate (self->box, width, height, baseline, NULL);

#if TALLY_HAVE_WEBKIT
  /* A new width reflows the page: measure again once it settles. */
  if (self->web_view != NULL && !self->expecting_load && self->measure_id == 0 &&
      gtk_widget_get_width (self->web_view) != self->measured_width)
    schedule_measure (self, 30);
#endif
}

/* The transcript around the card */

/* The plan's version (1 when the event does not say). */
static gint64
block_version (TallyBlock *block)
{
  return tally_json_object_get_int (tally_block_get_details (block), "version", 1);
}

static void
sync_active (TallyPlanCard *self)
{
  gboolean active = tally_plan_card_get_active (self) && shown_block (self) == TALLY_BLOCK_WIDGET_BLOCK (self);

  gtk_widget_set_visible (self->actions, active);
  gtk_widget_set_sensitive (self->actions, active);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ACTIVE]);
}

static guint
shown_index (TallyPlanCard *self)
{
  guint index = 0;

  if (self->versions == NULL || !g_ptr_array_find (self->versions, shown_block (self), &index))
    return 0;
  return index;
}

static void
sync_changes (TallyPlanCard *self)
{
  TallyBlock *previous;
  g_autofree char *label = NULL;
  guint index = shown_index (self);
  guint added = 0, removed = 0;

  gtk_widget_set_visible (GTK_WIDGET (self->changes_expander), FALSE);
  if (shown_block (self) == NULL || self->versions == NULL || index == 0)
    return;

  previous = g_ptr_array_index (self->versions, index - 1);
  tally_card_diff_show (self->changes_view, tally_block_get_text (previous), block_markdown (self),
                        TALLY_CARD_DIFF_IGNORE_NUMBERING, G_MAXUINT, 0, &added, &removed);
  if (added + removed == 0)
    label = g_strdup_printf (_("No change since version %d"), (int) CLAMP (block_version (previous), 0, G_MAXINT));
  else
    {
      g_autofree char *counts = tally_card_diff_dup_counts (added, removed);

      /* TRANSLATORS: "Changes since version 1: 2 lines added, 1 removed" */
      label = g_strdup_printf (_("Changes since version %d: %s"),
                               (int) CLAMP (block_version (previous), 0, G_MAXINT), counts);
    }
  gtk_expander_set_label (self->changes_expander, label);
  gtk_widget_set_visible (GTK_WIDGET (self->changes_expander), TRUE);
}

/* "Version 2 of 3" and the buttons to the others. */
static void
sync_version (TallyPlanCard *self)
{
  g_autofree char *text = NULL;
  guint n = self->versions != NULL ? self->versions->len : 1;
  guint index = shown_index (self);
  int version;

  if (shown_block (self) == NULL)
    return;

  version = (int) CLAMP (block_version (shown_block (self)), 0, G_MAXINT);
  if (n > 1)
    text = g_strdup_printf (_("Version %d of %u"), version, n);
  else
    text = g_strdup_printf (_("Version %d"), version);
  gtk_label_set_text (self->version_label, text);

  gtk_widget_set_visible (self->previous_button, n > 1);
  gtk_widget_set_visible (self->next_button, n > 1);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "plan.previous-version", n > 1 && index > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "plan.next-version", n > 1 && index + 1 < n);
}

static void
show_version (TallyPlanCard *self,
              TallyBlock    *block)
{
  self->shown = block == TALLY_BLOCK_WIDGET_BLOCK (self) ? NULL : block;
  render (self);
  sync_version (self);
  sync_changes (self);
  sync_active (self);
}

/* Finds the plan's versions again; the card keeps showing the one it
 * showed while that is still there. */
static void
sync_versions (TallyPlanCard *self)
{
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);

  g_clear_pointer (&self->versions, g_ptr_array_unref);
  if (block != NULL && self->transcript != NULL)
    self->versions = tally_cards_find_plan_versions (self->transcript, block);
  if (self->shown != NULL && (self->versions == NULL || !g_ptr_array_find (self->versions, self->shown, NULL)))
    show_version (self, block);
  else
    {
      sync_version (self);
      sync_changes (self);
    }
}

static void
step_version (TallyPlanCard *self,
              int            step)
{
  guint index = shown_index (self);

  if (self->versions == NULL || (step < 0 && index == 0) || (step > 0 && index + 1 >= self->versions->len))
    return;
  show_version (self, g_ptr_array_index (self->versions, step < 0 ? index - 1 : index + 1));
}

static void
previous_version_action (GtkWidget  *widget,
                         const char *action_name,
                         GVariant   *parameter)
{
  g_assert (TALLY_IS_PLAN_CARD (widget));

  step_version (TALLY_PLAN_CARD (widget), -1);
}

static void
next_version_action (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  g_assert (TALLY_IS_PLAN_CARD (widget));

  step_version (TALLY_PLAN_CARD (widget), 1);
}

static void
transcript_changed_cb (TallyPlanCard *self,
                       guint          position,
                       guint          removed,
                       guint          added)
{
  g_assert (TALLY_IS_PLAN_CARD (self));

  sync_active (self);

  /* A new version of this plan, or blocks gone: look again. */
  if (removed > 0)
    {
      sync_versions (self);
      return;
    }
  for (guint i = position; i < position + added; i++)
    {
      g_autoptr(TallyBlock) item = g_list_model_get_item (self->transcript, i);

      if (item != NULL && tally_block_get_kind (item) == TALLY_BLOCK_PLAN)
        {
          sync_versions (self);
          return;
        }
    }
}

static void
set_transcript (TallyPlanCard *self,
                GListModel    *transcript)
{
  if (self->transcript == transcript)
    return;

  if (self->transcript != NULL)
    g_signal_handlers_disconnect_by_data (self->transcript, self);
  g_set_object (&self->transcript, transcript);
  if (transcript != NULL)
    g_signal_connect_object (transcript, "items-changed",
                             G_CALLBACK (transcript_changed_cb), self, G_CONNECT_SWAPPED);

  sync_active (self);
  sync_versions (self);
}

/* The row sets the blocks around this one before binding it. */
static void
transcript_set_cb (TallyPlanCard *self)
{
  g_assert (TALLY_IS_PLAN_CARD (self));

  set_transcript (self, tally_block_widget_get_transcript (TALLY_BLOCK_WIDGET (self)));
}

/* Activates a plan action with the plan's id and version, e.g.
 * ("plan_1", 2); see docs/architecture.md §3.2. */
static void
activate_plan_action (TallyPlanCard *self,
                      const char    *name)
{
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);
  const char *id = block != NULL ? tally_cards_details_string (block, "plan_id") : NULL;

  g_assert (TALLY_IS_PLAN_CARD (self));

  gtk_widget_activate_action (GTK_WIDGET (self), name, "(sx)",
                              id != NULL ? id : "", block != NULL ? block_version (block) : (gint64) 0);
}

/* Buttons */

static void
implement_clicked_cb (TallyPlanCard *self)
{
  g_autoptr(TallyPlanCard) hold = g_object_ref (self);

  g_assert (TALLY_IS_PLAN_CARD (self));

  if (!tally_plan_card_get_active (self))
    return;
  self->implemented = TRUE;
  sync_active (self);
  activate_plan_action (self, "session.implement-plan");
}

static void
refine_clicked_cb (TallyPlanCard *self)
{
  g_assert (TALLY_IS_PLAN_CARD (self));

  if (!tally_plan_card_get_active (self))
    return;
  activate_plan_action (self, "session.refine-plan");
}

/* Showing the block */

static void
sync_card (TallyPlanCard *self)
{
  gint64 version;
  g_autofree char *accessible = NULL;

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL)
    return;

  version = block_version (TALLY_BLOCK_WIDGET_BLOCK (self));
  accessible = g_strdup_printf (_("Plan, version %d"), (int) CLAMP (version, 0, G_MAXINT));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, accessible, -1);

  render (self);
  sync_versions (self);
  sync_active (self);
}

/* Binding and unbinding both show the current block. */
static void
tally_plan_card_bind (TallyBlockWidget *widget,
                      TallyBlock       *previous)
{
  TallyPlanCard *self = TALLY_PLAN_CARD (widget);
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);   /* NULL when unbinding */

  self->implemented = FALSE;
  self->shown = NULL;
  g_clear_pointer (&self->versions, g_ptr_array_unref);
  g_clear_pointer (&self->rendered, g_free);

  /* The reducer fills the block in after adding it (text, then the event
   * with the version). */
  if (block != NULL)
    sync_card (self);
}

static void
tally_plan_card_dispose (GObject *object)
{
  TallyPlanCard *self = (TallyPlanCard *)object;

  g_cancellable_cancel (self->cancellable);
  g_clear_handle_id (&self->measure_id, g_source_remove);
  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);
  set_transcript (self, NULL);
  self->shown = NULL;
  g_clear_pointer (&self->versions, g_ptr_array_unref);
  drop_web_view (self);
  if (self->native_view != NULL)
    {
      gtk_box_remove (GTK_BOX (self->content_box), self->native_view);
      self->native_view = NULL;
    }

  gtk_widget_dispose_template (GTK_WIDGET (object), TALLY_TYPE_PLAN_CARD);

  G_OBJECT_CLASS (tally_plan_card_parent_class)->dispose (object);
}

static void
tally_plan_card_finalize (GObject *object)
{
  TallyPlanCard *self = (TallyPlanCard *)object;

  g_clear_object (&self->cancellable);
  g_free (self->page);
  g_free (self->rendered);

  G_OBJECT_CLASS (tally_plan_card_parent_class)->finalize (object);
}

static void
tally_plan_card_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  TallyPlanCard *self = TALLY_PLAN_CARD (object);

  switch (prop_id)
    {
    case PROP_ACTIVE:
      g_value_set_boolean (value, tally_plan_card_get_active (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tally_plan_card_class_init (TallyPlanCardClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_plan_card_dispose;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_plan_card_bind;
  object_class->finalize = tally_plan_card_finalize;
  object_class->get_property = tally_plan_card_get_property;
  widget_class->measure = tally_plan_card_measure;
  widget_class->get_request_mode = tally_plan_card_get_request_mode;
  widget_class->size_allocate = tally_plan_card_size_allocate;


  /**
   * TallyPlanCard:active:
   *
   * Whether the plan can still be acted on (see tally_plan_card_get_active()).
   */
  properties[PROP_ACTIVE] =
    g_param_spec_boolean ("active", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_install_action (widget_class, "plan.previous-version", NULL, previous_version_action);
  gtk_widget_class_install_action (widget_class, "plan.next-version", NULL, next_version_action);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/cards/tally-plan-card.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyPlanCard, box);
  gtk_widget_class_bind_template_child (widget_class, TallyPlanCard, version_label);
  gtk_widget_class_bind_template_child (widget_class, TallyPlanCard, previous_button);
  gtk_widget_class_bind_template_child (widget_class, TallyPlanCard, next_button);
  gtk_widget_class_bind_template_child (widget_class, TallyPlanCard, content_box);
  gtk_widget_class_bind_template_child (widget_class, TallyPlanCard, changes_expander);
  gtk_widget_class_bind_template_child (widget_class, TallyPlanCard, changes_view);
  gtk_widget_class_bind_template_child (widget_class, TallyPlanCard, actions);
  gtk_widget_class_bind_template_child (widget_class, TallyPlanCard, implement_button);
  gtk_widget_class_bind_template_child (widget_class, TallyPlanCard, refine_button);
  gtk_widget_class_bind_template_callback (widget_class, implement_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, refine_clicked_cb);
  gtk_widget_class_set_css_name (widget_class, "tallyplancard");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
tally_plan_card_init (TallyPlanCard *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  self->cancellable = g_cancellable_new ();
  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (style_dark_cb), self, G_CONNECT_SWAPPED);

  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::text", G_CALLBACK (sync_card), self);
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::finished", G_CALLBACK (sync_card), self);
  g_signal_connect (self, "notify::transcript", G_CALLBACK (transcript_set_cb), NULL);
}

/**
 * tally_plan_card_new:
 *
 * Creates an empty plan card; give it a block with
 * tally_block_widget_set_block(). Nothing of WebKit is created before that.
 *
 * Returns: (transfer floating): a new #TallyPlanCard
 */
GtkWidget *
tally_plan_card_new (void)
{
  return g_object_new (TALLY_TYPE_PLAN_CARD, NULL);
}

/**
 * tally_plan_card_get_active:
 * @self: a #TallyPlanCard
 *
 * A plan is active while it can be acted on: it is shown, Implement was
 * not pressed, and no later user message or plan follows it in the
 * transcript the card is bound with (#TallyBlockWidget:transcript).
 *
 * Returns: whether the card offers Implement and Refine
 */
gboolean
tally_plan_card_get_active (TallyPlanCard *self)
{
  g_return_val_if_fail (TALLY_IS_PLAN_CARD (self), FALSE);

  if (TALLY_BLOCK_WIDGET_BLOCK (self) == NULL || self->implemented)
    return FALSE;
  if (self->transcript != NULL && tally_cards_block_is_followed (self->transcript, TALLY_BLOCK_WIDGET_BLOCK (self)))
    return FALSE;
  return TRUE;
}

/**
 * _tally_plan_card_get_web_view:
 * @self: a #TallyPlanCard
 *
 * Returns: (transfer none) (nullable): the WebKitWebView showing the plan,
 *   or %NULL when the card renders natively
 */
GtkWidget *
_tally_plan_card_get_web_view (TallyPlanCard *self)
{
  g_return_val_if_fail (TALLY_IS_PLAN_CARD (self), NULL);
  return self->web_view;
}

/**
 * _tally_plan_card_get_native_view:
 * @self: a #TallyPlanCard
 *
 * Returns: (transfer none) (nullable): the #TallyMarkdownView showing the
 *   plan, or %NULL while the card uses WebKit
 */
GtkWidget *
_tally_plan_card_get_native_view (TallyPlanCard *self)
{
  g_return_val_if_fail (TALLY_IS_PLAN_CARD (self), NULL);
  return self->native_view;
}

/**
 * _tally_plan_card_get_page:
 * @self: a #TallyPlanCard
 *
 * Returns: (transfer none) (nullable): the HTML the web view last loaded
 */
const char *
_tally_plan_card_get_page (TallyPlanCard *self)
{
  g_return_val_if_fail (TALLY_IS_PLAN_CARD (self), NULL);
  return self->page;
}

/**
 * _tally_plan_card_get_content_height:
 * @self: a #TallyPlanCard
 *
 * Returns: the page's measured height in pixels, 0 until it is measured
 */
int
_tally_plan_card_get_content_height (TallyPlanCard *self)
{
  g_return_val_if_fail (TALLY_IS_PLAN_CARD (self), 0);
  return self->content_height;
}

/**
 * _tally_plan_card_get_changes:
 * @self: a #TallyPlanCard
 *
 * Returns: (transfer none): the expander of the changes since the
 *   previous version (hidden for a first version); its child is a
 *   scrolled window holding the text view of the diff
 */
GtkWidget *
_tally_plan_card_get_changes (TallyPlanCard *self)
{
  g_return_val_if_fail (TALLY_IS_PLAN_CARD (self), NULL);
  return GTK_WIDGET (self->changes_expander);
}
