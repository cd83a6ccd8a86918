/* SPDX-License-Identifier: GPL-3.0-or-later */

/*
 * What the approval card says: its question, the editor's hint, where a
 * rule is kept and what a settled decision was. Split from
 * tally-approval-card.c, which keeps the widget.
 */

#define G_LOG_DOMAIN "tally-cards"

#include "config.h"

#include <glib/gi18n.h>

#include "tally-approval-card-text.h"
#include "tally-format.h"

/**
 * _tally_approval_scope_text:
 * @scope: (nullable): a rule's scope: `session`, `workspace` or `global`
 *
 * Returns: (transfer none): where a rule is kept, in words ("in this
 *   workspace" for an unknown scope)
 */
const char *
_tally_approval_scope_text (const char *scope)
{
  if (g_strcmp0 (scope, "session") == 0)
    return _("for this session");
  if (g_strcmp0 (scope, "global") == 0)
    return _("everywhere");
  return _("in this workspace");
}

/**
 * _tally_approval_edit_hint:
 * @preview: what the call would do
 *
 * Returns: (transfer none): the line above the "Allow with changes"
 *   editor, which says what it holds
 */
const char *
_tally_approval_edit_hint (const TallyToolPreview *preview)
{
  switch (preview->kind)
    {
    case TALLY_TOOL_PREVIEW_COMMAND:
      return _("Edit the command Tally will run:");
    case TALLY_TOOL_PREVIEW_QUERY:
      return _("Edit the query Tally will run:");
    case TALLY_TOOL_PREVIEW_CHANGE_FILE:
      return _("Edit the file as it should be after the change:");
    case TALLY_TOOL_PREVIEW_WRITE_FILE:
    case TALLY_TOOL_PREVIEW_CREATE_FILE:
      return _("Edit what Tally will write to the file:");
    case TALLY_TOOL_PREVIEW_READ:
    case TALLY_TOOL_PREVIEW_INPUT:
    default:
      return _("Edit the input the tool will run with (a JSON object):");
    }
}

/**
 * _tally_approval_title_markup:
 * @preview: (nullable): what the call would do; %NULL before it is known
 * @tool_name: the tool's name, named when the call has no file
 *
 * The card's question, such as "Allow Tally to create <b>report.md</b>?".
 * The name is shown as it is (tally_format_shown_as_is()) and escaped for
 * Pango markup.
 *
 * Returns: (transfer full): Pango markup
 */
char *
_tally_approval_title_markup (const TallyToolPreview *preview,
                              const char             *tool_name)
{
  g_autofree char *base = preview != NULL && preview->subject != NULL ? g_path_get_basename (preview->subject) : NULL;
  g_autofree char *shown = tally_format_shown_as_is (base != NULL ? base : tool_name);
  g_autofree char *name = g_markup_escape_text (shown, -1);

  switch (preview != NULL ? preview->kind : TALLY_TOOL_PREVIEW_INPUT)
    {
    case TALLY_TOOL_PREVIEW_WRITE_FILE:
      return g_strdup_printf (_("Allow Tally to write <b>%s</b>?"), name);
    case TALLY_TOOL_PREVIEW_CREATE_FILE:
      return g_strdup_printf (_("Allow Tally to create <b>%s</b>?"), name);
    case TALLY_TOOL_PREVIEW_CHANGE_FILE:
      return g_strdup_printf (_("Allow Tally to change <b>%s</b>?"), name);
    case TALLY_TOOL_PREVIEW_READ:
      return g_strdup_printf (_("Allow Tally to read <b>%s</b>?"), name);
    case TALLY_TOOL_PREVIEW_COMMAND:
      return g_strdup (_("Allow Tally to run this command?"));
    case TALLY_TOOL_PREVIEW_QUERY:
      return g_strdup (_("Allow Tally to run this query?"));
    case TALLY_TOOL_PREVIEW_INPUT:
    default:
      return g_strdup_printf (_("Allow Tally to use <b>%s</b>?"), name);
    }
}

/**
 * _tally_approval_decision_text:
 * @decision: the decision
 * @stop: whether the denial also stopped the turn
 *
 * Returns: (transfer none): what the card says a settled decision was
 */
const char *
_tally_approval_decision_text (TallyDecision decision,
                               gboolean      stop)
{
  switch (decision)
    {
    case TALLY_DECISION_ALLOW_EDITED:
      return _("Allowed with changes");
    case TALLY_DECISION_ALLOW_ALWAYS:
      return _("Always allowed");
    case TALLY_DECISION_DENY:
    case TALLY_DECISION_DENY_STOP:
      return stop ? _("Denied, turn stopped") : _("Denied");
    case TALLY_DECISION_ALLOW:
    default:
      return _("Allowed once");
    }
}
