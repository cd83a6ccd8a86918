/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-types"

#include "config.h"

#include "tally-types.h"

/* The class is never unreferenced: static types keep theirs anyway, and
 * the nicks handed out point into it. */
static GEnumClass *
enum_class (GType enum_type)
{
  GEnumClass *klass = g_type_class_peek (enum_type);

  return klass != NULL ? klass : g_type_class_ref (enum_type);
}

/**
 * tally_enum_to_nick:
 * @enum_type: the #GType of an enum registered by mkenums
 * @value: one of its values
 *
 * Looks up the nick of @value, the spelling Tally writes to its event log
 * and prints. The enum class is created once and kept, so the nick stays
 * valid for the life of the process.
 *
 * Returns: (transfer none) (nullable): the nick, or %NULL when @value is
 *   not a value of @enum_type
 */
const char *
tally_enum_to_nick (GType enum_type,
                    int   value)
{
  GEnumValue *found;

  g_return_val_if_fail (G_TYPE_IS_ENUM (enum_type), NULL);

  found = g_enum_get_value (enum_class (enum_type), value);
  return found != NULL ? found->value_nick : NULL;
}

/**
 * tally_enum_to_nick_or:
 * @enum_type: the #GType of an enum registered by mkenums
 * @value: a value, possibly out of range (read from an old or damaged log)
 * @fallback: a value of @enum_type
 *
 * tally_enum_to_nick() for the `_to_string()` functions, which never
 * return %NULL: the nick of @value, or that of @fallback when @value is
 * not one of the enum's values.
 *
 * Returns: (transfer none): the nick, valid for the life of the process
 */
const char *
tally_enum_to_nick_or (GType enum_type,
                       int   value,
                       int   fallback)
{
  const char *nick = tally_enum_to_nick (enum_type, value);

  return nick != NULL ? nick : tally_enum_to_nick (enum_type, fallback);
}

/**
 * tally_enum_from_nick:
 * @enum_type: the #GType of an enum registered by mkenums
 * @nick: (nullable): a nick, e.g. `"plan"`
 * @value: (out): the value named by @nick
 *
 * The reverse of tally_enum_to_nick(); matching is exact.
 *
 * Returns: %TRUE when @nick names a value of @enum_type; @value is left
 *   untouched otherwise
 */
gboolean
tally_enum_from_nick (GType       enum_type,
                      const char *nick,
                      int        *value)
{
  GEnumValue *found;

  g_return_val_if_fail (G_TYPE_IS_ENUM (enum_type), FALSE);
  g_return_val_if_fail (value != NULL, FALSE);

  if (nick == NULL)
    return FALSE;

  found = g_enum_get_value_by_nick (enum_class (enum_type), nick);
  if (found == NULL)
    return FALSE;

  *value = found->value;
  return TRUE;
}

/**
 * tally_mode_to_string:
 * @mode: a #TallyMode
 *
 * Returns: (transfer none): `"ask"`, `"plan"` or `"auto"`; `"ask"` for a
 *   value out of range
 */
const char *
tally_mode_to_string (TallyMode mode)
{
  return tally_enum_to_nick_or (TALLY_TYPE_MODE, mode, TALLY_MODE_ASK);
}

/**
 * tally_mode_from_string:
 * @text: (nullable): `"ask"`, `"plan"` or `"auto"`
 * @mode: (out): the mode
 *
 * Returns: %TRUE when @text names a mode; @mode is left untouched
 *   otherwise
 */
gboolean
tally_mode_from_string (const char *text,
                        TallyMode  *mode)
{
  int value;

  g_return_val_if_fail (mode != NULL, FALSE);

  if (!tally_enum_from_nick (TALLY_TYPE_MODE, text, &value))
    return FALSE;

  *mode = value;
  return TRUE;
}

/**
 * tally_turn_status_to_string:
 * @status: a #TallyTurnStatus
 *
 * Returns: (transfer none): `"done"`, `"cancelled"` or `"failed"`; `"done"`
 *   for a value out of range
 */
const char *
tally_turn_status_to_string (TallyTurnStatus status)
{
  return tally_enum_to_nick_or (TALLY_TYPE_TURN_STATUS, status, TALLY_TURN_DONE);
}

/**
 * tally_turn_status_propagate:
 * @task: a finished #GTask that returned a #TallyTurnStatus with
 *   g_task_return_int(), or an error
 * @error: return location for a #GError
 *
 * The body of the `_send_finish()` functions of #TallyAgent and
 * #TallySession: the status the turn ended with, or the task's error.
 *
 * Returns: the status; %TALLY_TURN_FAILED with @error set (transfer of the
 *   task's error) when the task returned an error
 */
TallyTurnStatus
tally_turn_status_propagate (GTask   *task,
                             GError **error)
{
  GError *local_error = NULL;
  gssize status;

  g_return_val_if_fail (G_IS_TASK (task), TALLY_TURN_FAILED);

  status = g_task_propagate_int (task, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return TALLY_TURN_FAILED;
    }

  return (TallyTurnStatus) status;
}

/**
 * tally_decision_to_string:
 * @decision: a #TallyDecision
 *
 * The word the `approval_resolved` event records for @decision: "deny and
 * stop" is recorded as `deny` (its `stop` member says the rest).
 *
 * Returns: (transfer none): `"allow"`, `"allow_edited"`, `"allow_always"`
 *   or `"deny"`; `"deny"` for a value out of range
 */
const char *
tally_decision_to_string (TallyDecision decision)
{
  if (decision == TALLY_DECISION_DENY_STOP)
    decision = TALLY_DECISION_DENY;

  return tally_enum_to_nick_or (TALLY_TYPE_DECISION, decision, TALLY_DECISION_DENY);
}

/**
 * tally_block_kind_to_string:
 * @kind: a #TallyBlockKind
 *
 * Returns: (transfer none): the kind's nick, e.g. `"tool-call"`, or
 *   `"unknown"` for a value out of range
 */
const char *
tally_block_kind_to_string (TallyBlockKind kind)
{
  const char *nick = tally_enum_to_nick (TALLY_TYPE_BLOCK_KIND, kind);

  return nick != NULL ? nick : "unknown";
}
