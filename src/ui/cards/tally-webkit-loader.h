/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

/*
 * WebKitGTK, loaded when the first web view is needed rather than linked
 * (docs/architecture.md §11.1, "Start-up and WebKit"): linking it made every start of
 * the window load and relocate WebKit, JavaScriptCore, ICU and GStreamer
 * before main(), for a window that shows no web view at all.
 *
 * Include this header instead of <webkit/webkit.h>. It gives WebKit's
 * types and constants as usual, and turns each WebKit and JavaScriptCore
 * function the UI calls into a pointer filled in by
 * tally_webkit_loader_load(). Call no WebKit function before that
 * returned %TRUE. A function the UI starts to use is added to both lists
 * below (the table and the #defines).
 */

#include <gtk/gtk.h>

#include "tally-cards-config.h"

#if TALLY_HAVE_WEBKIT
#include <webkit/webkit.h>

G_BEGIN_DECLS

#define TALLY_WEBKIT_FUNCTIONS(F) \
  F (GType, webkit_web_view_get_type, (void)) \
  F (GType, webkit_navigation_policy_decision_get_type, (void)) \
  F (GQuark, webkit_network_error_quark, (void)) \
  F (GQuark, webkit_policy_error_quark, (void)) \
  F (WebKitWebContext *, webkit_web_context_new, (void)) \
  F (void, webkit_web_context_set_cache_model, (WebKitWebContext *, WebKitCacheModel)) \
  F (WebKitNetworkSession *, webkit_network_session_new_ephemeral, (void)) \
  F (WebKitSettings *, webkit_settings_new, (void)) \
  F (void, webkit_settings_set_enable_javascript, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_enable_javascript_markup, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_javascript_can_open_windows_automatically, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_javascript_can_access_clipboard, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_enable_developer_extras, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_enable_page_cache, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_enable_html5_local_storage, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_enable_html5_database, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_enable_webgl, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_enable_webaudio, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_enable_media, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_enable_back_forward_navigation_gestures, (WebKitSettings *, gboolean)) \
  F (void, webkit_settings_set_enable_smooth_scrolling, (WebKitSettings *, gboolean)) \
  F (void, webkit_web_view_load_html, (WebKitWebView *, const char *, const char *)) \
  F (gboolean, webkit_web_view_is_loading, (WebKitWebView *)) \
  F (void, webkit_web_view_set_background_color, (WebKitWebView *, const GdkRGBA *)) \
  F (void, webkit_web_view_evaluate_javascript, (WebKitWebView *, const char *, gssize, const char *, \
                                                 const char *, GCancellable *, GAsyncReadyCallback, gpointer)) \
  F (JSCValue *, webkit_web_view_evaluate_javascript_finish, (WebKitWebView *, GAsyncResult *, GError **)) \
  F (WebKitNavigationAction *, webkit_navigation_policy_decision_get_navigation_action, \
     (WebKitNavigationPolicyDecision *)) \
  F (WebKitURIRequest *, webkit_navigation_action_get_request, (WebKitNavigationAction *)) \
  F (WebKitNavigationType, webkit_navigation_action_get_navigation_type, (WebKitNavigationAction *)) \
  F (const char *, webkit_uri_request_get_uri, (WebKitURIRequest *)) \
  F (void, webkit_policy_decision_use, (WebKitPolicyDecision *)) \
  F (void, webkit_policy_decision_ignore, (WebKitPolicyDecision *)) \
  F (gboolean, jsc_value_is_number, (JSCValue *)) \
  F (gint32, jsc_value_to_int32, (JSCValue *))

/**
 * TallyWebKitApi:
 *
 * The WebKit functions the UI calls, one pointer each, named after the
 * function; all %NULL until tally_webkit_loader_load() succeeds.
 */
typedef struct
{
#define TALLY_WEBKIT_POINTER(ret, name, args) ret (*name) args;
  TALLY_WEBKIT_FUNCTIONS (TALLY_WEBKIT_POINTER)
#undef TALLY_WEBKIT_POINTER
} TallyWebKitApi;

extern TallyWebKitApi tally_webkit_api;

gboolean tally_webkit_loader_load      (GError **error);
gboolean tally_webkit_loader_is_loaded (void);

/* The calls, through the table. */
#ifndef TALLY_WEBKIT_LOADER_NO_REDIRECT
#define webkit_web_view_get_type (tally_webkit_api.webkit_web_view_get_type)
#define webkit_navigation_policy_decision_get_type (tally_webkit_api.webkit_navigation_policy_decision_get_type)
#define webkit_network_error_quark (tally_webkit_api.webkit_network_error_quark)
#define webkit_policy_error_quark (tally_webkit_api.webkit_policy_error_quark)
#define webkit_web_context_new (tally_webkit_api.webkit_web_context_new)
#define webkit_web_context_set_cache_model (tally_webkit_api.webkit_web_context_set_cache_model)
#define webkit_network_session_new_ephemeral (tally_webkit_api.webkit_network_session_new_ephemeral)
#define webkit_settings_new (tally_webkit_api.webkit_settings_new)
#define webkit_settings_set_enable_javascript (tally_webkit_api.webkit_settings_set_enable_javascript)
#define webkit_settings_set_enable_javascript_markup (tally_webkit_api.webkit_settings_set_enable_javascript_markup)
#define webkit_settings_set_javascript_can_open_windows_automatically \
  (tally_webkit_api.webkit_settings_set_javascript_can_open_windows_automatically)
#define webkit_settings_set_javascript_can_access_clipboard \
  (tally_webkit_api.webkit_settings_set_javascript_can_access_clipboard)
#define webkit_settings_set_enable_developer_extras (tally_webkit_api.webkit_settings_set_enable_developer_extras)
#define webkit_settings_set_enable_page_cache (tally_webkit_api.webkit_settings_set_enable_page_cache)
#define webkit_settings_set_enable_html5_local_storage \
  (tally_webkit_api.webkit_settings_set_enable_html5_local_storage)
#define webkit_settings_set_enable_html5_database (tally_webkit_api.webkit_settings_set_enable_html5_database)
#define webkit_settings_set_enable_webgl (tally_webkit_api.webkit_settings_set_enable_webgl)
#define webkit_settings_set_enable_webaudio (tally_webkit_api.webkit_settings_set_enable_webaudio)
#define webkit_settings_set_enable_media (tally_webkit_api.webkit_settings_set_enable_media)
#define webkit_settings_set_enable_back_forward_navigation_gestures \
  (tally_webkit_api.webkit_settings_set_enable_back_forward_navigation_gestures)
#define webkit_settings_set_enable_smooth_scrolling (tally_webkit_api.webkit_settings_set_enable_smooth_scrolling)
#define webkit_web_view_load_html (tally_webkit_api.webkit_web_view_load_html)
#define webkit_web_view_is_loading (tally_webkit_api.webkit_web_view_is_loading)
#define webkit_web_view_set_background_color (tally_webkit_api.webkit_web_view_set_background_color)
#define webkit_web_view_evaluate_javascript (tally_webkit_api.webkit_web_view_evaluate_javascript)
#define webkit_web_view_evaluate_javascript_finish (tally_webkit_api.webkit_web_view_evaluate_javascript_finish)
#define webkit_navigation_policy_decision_get_navigation_action \
  (tally_webkit_api.webkit_navigation_policy_decision_get_navigation_action)
#define webkit_navigation_action_get_request (tally_webkit_api.webkit_navigation_action_get_request)
#define webkit_navigation_action_get_navigation_type (tally_webkit_api.webkit_navigation_action_get_navigation_type)
#define webkit_uri_request_get_uri (tally_webkit_api.webkit_uri_request_get_uri)
#define webkit_policy_decision_use (tally_webkit_api.webkit_policy_decision_use)
#define webkit_policy_decision_ignore (tally_webkit_api.webkit_policy_decision_ignore)
#define jsc_value_is_number (tally_webkit_api.jsc_value_is_number)
#define jsc_value_to_int32 (tally_webkit_api.jsc_value_to_int32)

/* WebKit's headers define these casts as inline functions that call the
 * linked get_type(); these call the loaded one. */
#define WEBKIT_WEB_VIEW(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), webkit_web_view_get_type (), WebKitWebView))
#define WEBKIT_IS_WEB_VIEW(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), webkit_web_view_get_type ()))
#define WEBKIT_NAVIGATION_POLICY_DECISION(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), webkit_navigation_policy_decision_get_type (), \
                               WebKitNavigationPolicyDecision))
#endif

G_END_DECLS

#endif
