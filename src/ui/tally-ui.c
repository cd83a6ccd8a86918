/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-ui"

#include "config.h"

#include "tally-ui.h"

#include <adwaita.h>

#include "tally-approval-card.h"
#include "tally-assistant-text.h"
#include "tally-block-widget.h"
#include "tally-chart-row.h"
#include "tally-error-banner.h"
#include "tally-file-chip.h"
#include "tally-note-row.h"
#include "tally-plan-card.h"
#include "tally-question-card.h"
#include "tally-receipt-row.h"
#include "tally-thinking-drawer.h"
#include "tally-tool-chip.h"
#include "tally-user-bubble.h"

/**
 * tally_ui_init:
 *
 * Registers which #TallyBlockWidget shows each #TallyBlockKind
 * (tally_block_widget_register_kind()). It is the one place that knows
 * both cards/ and transcript/, so neither includes the other.
 *
 * The UI's stylesheet (`style.css` of the one resource bundle) is loaded
 * by AdwApplication from the resource base path. Outside an
 * #AdwApplication (the UI tests), this loads it the same way, at
 * application priority, for the default display.
 *
 * The window calls it from its class init; a test that shows widgets
 * without the application calls it after adw_init(). Calling it again
 * does nothing.
 *
 * A new block kind gets its widget here (docs/architecture.md §11.1).
 */
void
tally_ui_init (void)
{
  static gsize done;

  if (!g_once_init_enter (&done))
    return;

  tally_block_widget_register_kind (TALLY_BLOCK_USER, TALLY_TYPE_USER_BUBBLE);
  tally_block_widget_register_kind (TALLY_BLOCK_TEXT, TALLY_TYPE_ASSISTANT_TEXT);
  tally_block_widget_register_kind (TALLY_BLOCK_THINKING, TALLY_TYPE_THINKING_DRAWER);
  tally_block_widget_register_kind (TALLY_BLOCK_TOOL_CALL, TALLY_TYPE_TOOL_CHIP);
  tally_block_widget_register_kind (TALLY_BLOCK_RECEIPT, TALLY_TYPE_RECEIPT_ROW);
  tally_block_widget_register_kind (TALLY_BLOCK_ERROR, TALLY_TYPE_ERROR_BANNER);
  tally_block_widget_register_kind (TALLY_BLOCK_APPROVAL, TALLY_TYPE_APPROVAL_CARD);
  tally_block_widget_register_kind (TALLY_BLOCK_QUESTION, TALLY_TYPE_QUESTION_CARD);
  tally_block_widget_register_kind (TALLY_BLOCK_PLAN, TALLY_TYPE_PLAN_CARD);
  tally_block_widget_register_kind (TALLY_BLOCK_CHART, TALLY_TYPE_CHART_ROW);
  tally_block_widget_register_kind (TALLY_BLOCK_FILE, TALLY_TYPE_FILE_CHIP);
  tally_block_widget_register_kind (TALLY_BLOCK_INCOMPLETE, TALLY_TYPE_NOTE_ROW);
  tally_block_widget_register_kind (TALLY_BLOCK_NOTICE, TALLY_TYPE_NOTE_ROW);

  if (!ADW_IS_APPLICATION (g_application_get_default ()) && gdk_display_get_default () != NULL)
    {
      g_autoptr(GtkCssProvider) provider = gtk_css_provider_new ();

      gtk_css_provider_load_from_resource (provider, "/io/github/tallyapp/Tally/style.css");
      gtk_style_context_add_provider_for_display (gdk_display_get_default (),
                                                  GTK_STYLE_PROVIDER (provider),
                                                  GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    }

  g_once_init_leave (&done, 1);
}
