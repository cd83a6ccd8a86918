/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-util"

#include "config.h"

#include "tally-line-diff.h"

#include <string.h>

/*
 * The one line diff of Tally: the Write and Edit tools print it as a
 * unified diff for the approval card, the plan card compares two versions
 * of a plan with it.
 *
 * The common head and tail are matched first (the usual case for an edit),
 * then the middle with Myers' O(ND) greedy search (E. Myers, "An O(ND)
 * Difference Algorithm and Its Variations", 1986), the rounds kept for
 * backtracking. The trace kept for D edits holds about D² offsets, so
 * MAX_EDIT_DISTANCE bounds the memory (8 MiB at 1000) and MAX_DIFF_WORK
 * the time; past either the middle is given as removed and re-added
 * whole, which is still a correct script, only not the shortest.
 */

#define MAX_EDIT_DISTANCE 1000
#define MAX_DIFF_WORK (20 * 1000 * 1000)

/* One Myers step onto diagonal @k, from the furthest points of round d-1
 * held in @prev (indexed by diagonal, -1 where unreached): down from k+1
 * (an insertion) or right from k-1 (a deletion), whichever reaches further
 * while staying inside the n×m edit graph. */
static gboolean
myers_step (const gssize *prev,
            gssize        k,
            gssize        n,
            gssize        m,
            gssize       *x,
            gboolean     *down)
{
  gssize x_down = prev[k + 1];
  gssize x_right = prev[k - 1];
  gboolean down_ok = x_down >= 0 && x_down - k <= m;
  gboolean right_ok = x_right >= 0 && x_right + 1 <= n;

  if (down_ok && (!right_ok || x_down >= x_right + 1))
    {
      *x = x_down;
      *down = TRUE;
      return TRUE;
    }

  if (right_ok)
    {
      *x = x_right + 1;
      *down = FALSE;
      return TRUE;
    }

  return FALSE;
}

static void
append_ops (GByteArray  *ops,
            TallyDiffOp  op,
            gsize        count)
{
  guint8 byte = op;

  for (gsize i = 0; i < count; i++)
    g_byte_array_append (ops, &byte, 1);
}

/* Appends to @ops (in forward order) a shortest edit script turning @a
 * into @b. Returns %FALSE, appending nothing, when a bound is exceeded. */
static gboolean
myers_diff (const guint *a,
            gssize       n,
            const guint *b,
            gssize       m,
            GByteArray  *ops)
{
  g_autoptr(GPtrArray) trace = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GByteArray) reversed = g_byte_array_new ();
  g_autofree gssize *v = NULL;
  gssize max = n + m;
  gssize offset = max + 1;
  gssize d, x, y;
  guint64 work = 0;
  gboolean done = FALSE;

  v = g_new (gssize, 2 * max + 3);
  for (gssize i = 0; i < 2 * max + 3; i++)
    v[i] = -1;

  for (d = 0; !done; d++)
    {
      gssize *snapshot;

      if (d > MAX_EDIT_DISTANCE)
        return FALSE;

      /* The furthest points of round d-1, diagonals -d-1 … d+1. */
      snapshot = g_new (gssize, 2 * d + 3);
      memcpy (snapshot, v + offset - d - 1, (2 * d + 3) * sizeof (gssize));
      g_ptr_array_add (trace, snapshot);

      for (gssize k = -d; k <= d; k += 2)
        {
          gboolean down;

          if (d == 0)
            x = 0;
          else if (!myers_step (v + offset, k, n, m, &x, &down))
            {
              v[offset + k] = -1;
              continue;
            }

          y = x - k;
          while (x < n && y < m && a[x] == b[y])
            {
              x++;
              y++;
              work++;
            }
          v[offset + k] = x;

          if (x >= n && y >= m)
            {
              done = TRUE;
              break;
            }

          if (++work > MAX_DIFF_WORK)
            return FALSE;
        }
    }

  /* Walk back from the end through the kept rounds. */
  x = n;
  y = m;
  for (d = trace->len - 1; d > 0; d--)
    {
      const gssize *prev = (const gssize *) g_ptr_array_index (trace, d) + d + 1;
      gssize k = x - y;
      gssize x_start;
      gboolean down = FALSE;

      if (!myers_step (prev, k, n, m, &x_start, &down))
        g_assert_not_reached ();

      for (; x > x_start; x--)
        append_ops (reversed, TALLY_DIFF_EQUAL, 1);

      if (down)
        {
          append_ops (reversed, TALLY_DIFF_INSERT, 1);
          y = x - k - 1;
        }
      else
        {
          append_ops (reversed, TALLY_DIFF_DELETE, 1);
          x = x - 1;
          y = x - k + 1;
        }
    }

  for (; x > 0; x--)
    append_ops (reversed, TALLY_DIFF_EQUAL, 1);

  for (guint i = reversed->len; i > 0; i--)
    g_byte_array_append (ops, &reversed->data[i - 1], 1);

  return TRUE;
}

/**
 * tally_line_diff:
 * @old_ids: (array length=n_old): the old text's lines as ids: equal
 *   lines have equal ids
 * @n_old: the number of old lines
 * @new_ids: (array length=n_new): the new text's lines as ids, numbered
 *   like @old_ids
 * @n_new: the number of new lines
 *
 * Computes an edit script turning the old lines into the new ones: one
 * #TallyDiffOp per byte, %TALLY_DIFF_EQUAL and %TALLY_DIFF_DELETE stepping
 * through the old lines, %TALLY_DIFF_EQUAL and %TALLY_DIFF_INSERT through
 * the new ones. The script is a shortest one unless the texts differ in
 * more than 1000 lines (then the changed middle is removed and re-added
 * whole). Within each run of changes the removals come first, as `diff`
 * prints them.
 *
 * Returns: (transfer full): the script
 */
GByteArray *
tally_line_diff (const guint *old_ids,
                 gsize        n_old,
                 const guint *new_ids,
                 gsize        n_new)
{
  GByteArray *ops = g_byte_array_new ();
  gsize head = 0, tail = 0;

  g_return_val_if_fail (old_ids != NULL || n_old == 0, ops);
  g_return_val_if_fail (new_ids != NULL || n_new == 0, ops);

  while (head < n_old && head < n_new && old_ids[head] == new_ids[head])
    head++;
  while (tail < n_old - head && tail < n_new - head &&
         old_ids[n_old - 1 - tail] == new_ids[n_new - 1 - tail])
    tail++;

  append_ops (ops, TALLY_DIFF_EQUAL, head);
  if (!myers_diff (old_ids + head, n_old - head - tail, new_ids + head, n_new - head - tail, ops))
    {
      append_ops (ops, TALLY_DIFF_DELETE, n_old - head - tail);
      append_ops (ops, TALLY_DIFF_INSERT, n_new - head - tail);
    }
  append_ops (ops, TALLY_DIFF_EQUAL, tail);

  /* Within each run of changes, removals before additions. */
  for (guint i = 0; i < ops->len;)
    {
      guint j = i, n_delete = 0;

      if (ops->data[i] == TALLY_DIFF_EQUAL)
        {
          i++;
          continue;
        }

      for (; j < ops->len && ops->data[j] != TALLY_DIFF_EQUAL; j++)
        if (ops->data[j] == TALLY_DIFF_DELETE)
          n_delete++;

      for (guint t = i; t < j; t++)
        ops->data[t] = (t - i < n_delete) ? TALLY_DIFF_DELETE : TALLY_DIFF_INSERT;

      i = j;
    }

  return ops;
}

/* Numbers each line of @lines in @ids: equal lines, equal numbers */
static guint *
number_lines (const char * const *lines,
              GHashTable         *ids,
              gsize              *n_lines)
{
  gsize n = lines != NULL ? g_strv_length ((char **) lines) : 0;
  guint *numbers = g_new (guint, n + 1);

  for (gsize i = 0; i < n; i++)
    {
      gpointer id = g_hash_table_lookup (ids, lines[i]);

      if (id == NULL)
        {
          id = GUINT_TO_POINTER (g_hash_table_size (ids) + 1);
          g_hash_table_insert (ids, (gpointer) lines[i], id);
        }
      numbers[i] = GPOINTER_TO_UINT (id);
    }

  *n_lines = n;
  return numbers;
}

/**
 * tally_line_diff_strv:
 * @old_lines: (nullable) (array zero-terminated=1): the old lines
 * @new_lines: (nullable) (array zero-terminated=1): the new lines
 *
 * tally_line_diff() over two arrays of lines compared as strings; %NULL
 * stands for no lines.
 *
 * Returns: (transfer full): the script
 */
GByteArray *
tally_line_diff_strv (const char * const *old_lines,
                      const char * const *new_lines)
{
  g_autoptr(GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree guint *a = NULL;
  g_autofree guint *b = NULL;
  gsize n = 0, m = 0;

  a = number_lines (old_lines, ids, &n);
  b = number_lines (new_lines, ids, &m);

  return tally_line_diff (a, n, b, m);
}
