/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-cards"

#include "config.h"

#include <adwaita.h>

#include "tally-cards-common.h"
#include "tally-json.h"

/*
 * What the three cards share: reading a block's details and what a card
 * learns from the transcript it is bound with (#TallyBlockWidget:transcript):
 * whether a plan was acted on, the plan's other versions; and the
 * locked-down web view settings of the plan card, which the report
 * preview (src/ui/window/tally-report-window.c) uses too.
 */

/**
 * tally_cards_block_is_followed:
 * @blocks: a #GListModel of #TallyBlock
 * @block: one of its blocks
 *
 * Tells whether the analyst has moved on from @block: a later user message
 * (%TALLY_BLOCK_USER) or a later plan (%TALLY_BLOCK_PLAN) exists. Looks
 * from the end back to @block, so it costs little for recent blocks.
 *
 * Returns: %TRUE when such a block follows @block; %FALSE otherwise, and
 *   when @block is not in @blocks
 */
gboolean
tally_cards_block_is_followed (GListModel *blocks,
                               TallyBlock *block)
{
  gboolean followed = FALSE;

  g_return_val_if_fail (G_IS_LIST_MODEL (blocks), FALSE);
  g_return_val_if_fail (TALLY_IS_BLOCK (block), FALSE);

  for (guint i = g_list_model_get_n_items (blocks); i > 0; i--)
    {
      g_autoptr(TallyBlock) item = g_list_model_get_item (blocks, i - 1);
      TallyBlockKind kind;

      if (item == block)
        return followed;
      kind = tally_block_get_kind (item);
      if (kind == TALLY_BLOCK_USER || kind == TALLY_BLOCK_PLAN)
        followed = TRUE;
    }

  return FALSE;
}

/**
 * tally_cards_find_plan_versions:
 * @blocks: a #GListModel of #TallyBlock
 * @block: a %TALLY_BLOCK_PLAN block of @blocks
 *
 * Finds every version of the plan @block shows: the plan blocks of @blocks
 * with the same `plan_id`, in transcript order (version 1 first), @block
 * among them. A refined plan keeps its id (docs/architecture.md §7.2).
 *
 * Returns: (transfer full) (element-type TallyBlock): the versions; holds
 *   only @block when @block is not in @blocks or has no id
 */
GPtrArray *
tally_cards_find_plan_versions (GListModel *blocks,
                                TallyBlock *block)
{
  GPtrArray *versions;
  const char *plan_id;
  guint n;

  g_return_val_if_fail (G_IS_LIST_MODEL (blocks), NULL);
  g_return_val_if_fail (TALLY_IS_BLOCK (block), NULL);

  versions = g_ptr_array_new_with_free_func (g_object_unref);
  plan_id = tally_cards_details_string (block, "plan_id");
  n = g_list_model_get_n_items (blocks);
  for (guint i = 0; plan_id != NULL && i < n; i++)
    {
      g_autoptr(TallyBlock) item = g_list_model_get_item (blocks, i);

      if (item == block ||
          (tally_block_get_kind (item) == TALLY_BLOCK_PLAN &&
           g_strcmp0 (tally_cards_details_string (item, "plan_id"), plan_id) == 0))
        g_ptr_array_add (versions, g_steal_pointer (&item));
    }

  if (!g_ptr_array_find (versions, block, NULL))
    g_ptr_array_add (versions, g_object_ref (block));
  return versions;
}

/**
 * tally_cards_details_string:
 * @block: a block
 * @member: a member of the block's details (its event)
 *
 * Returns: (transfer none) (nullable): the string value of @member in the
 *   block's details, or %NULL when it is missing or not a string
 */
const char *
tally_cards_details_string (TallyBlock *block,
                            const char *member)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (block), NULL);

  return tally_json_object_get_string (tally_block_get_details (block), member, NULL);
}

/**
 * tally_cards_get_resolution:
 * @block: an approval or question block
 *
 * Returns: (transfer none) (nullable): the resolution event a settled card
 *   keeps in its details (`resolution`), or %NULL while it is pending
 */
JsonObject *
tally_cards_get_resolution (TallyBlock *block)
{
  g_return_val_if_fail (TALLY_IS_BLOCK (block), NULL);

  return tally_json_object_get_object (tally_block_get_details (block), "resolution");
}

/**
 * tally_cards_is_dark:
 *
 * Returns: whether libadwaita shows the dark style now
 */
gboolean
tally_cards_is_dark (void)
{
  return adw_style_manager_get_dark (adw_style_manager_get_default ());
}

#if TALLY_HAVE_WEBKIT
/**
 * tally_cards_new_web_settings:
 * @javascript: whether the application's own calls may run script
 *   (webkit_web_view_evaluate_javascript(), the plan card's measuring);
 *   script in the page never runs either way
 *
 * Settings for a web view that shows a page Tally wrote and nothing else:
 * no script in the page, no windows opened by script, no clipboard access
 * from script, no developer tools, no page cache, no HTML5 local storage
 * or database, no WebGL, Web Audio or media, no back/forward swipe.
 *
 * Returns: (transfer full): new settings
 */
WebKitSettings *
tally_cards_new_web_settings (gboolean javascript)
{
  WebKitSettings *settings = webkit_settings_new ();

  webkit_settings_set_enable_javascript (settings, javascript);
  webkit_settings_set_enable_javascript_markup (settings, FALSE);
  webkit_settings_set_javascript_can_open_windows_automatically (settings, FALSE);
  webkit_settings_set_javascript_can_access_clipboard (settings, FALSE);
  webkit_settings_set_enable_developer_extras (settings, FALSE);
  webkit_settings_set_enable_page_cache (settings, FALSE);
  webkit_settings_set_enable_html5_local_storage (settings, FALSE);
  webkit_settings_set_enable_html5_database (settings, FALSE);
  webkit_settings_set_enable_webgl (settings, FALSE);
  webkit_settings_set_enable_webaudio (settings, FALSE);
  webkit_settings_set_enable_media (settings, FALSE);
  webkit_settings_set_enable_back_forward_navigation_gestures (settings, FALSE);
  return settings;
}

/**
 * tally_cards_refuse_context_menu:
 * @view: the web view
 * @menu: its context menu
 * @hit: what is under the pointer
 * @user_data: unused
 *
 * A #WebKitWebView::context-menu handler that shows no menu: its Back,
 * Reload, Open Link and Inspect items would navigate or open the page;
 * copying a selection still works with the keyboard.
 *
 * Returns: %TRUE, the menu is handled (not shown)
 */
gboolean
tally_cards_refuse_context_menu (WebKitWebView       *view,
                                 WebKitContextMenu   *menu,
                                 WebKitHitTestResult *hit,
                                 gpointer             user_data)
{
  return TRUE;
}
#endif
