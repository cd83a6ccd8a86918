/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include "tally-module-table.h"

#include <gmodule.h>

/**
 * tally_module_table_load:
 * @table: the library's state
 * @names: (array length=n_names): the functions to look up, by name
 * @slots: (array length=n_names): where each function's address goes;
 *   @slots[i] receives @names[i]
 * @n_names: the number of functions
 * @error: return location for a #GError, or %NULL
 *
 * Loads @table's library (its soname) the first time it is called and
 * looks up every function of @names into @slots. The library then stays
 * loaded for the life of the process. Later calls return the first call's
 * answer at once, failure included. Safe to call from any thread.
 *
 * Returns: %TRUE when the library and every function are there; %FALSE
 *   with @error set to %G_IO_ERROR_NOT_FOUND (naming the library, or the
 *   function it lacks) otherwise, and then every slot stays %NULL
 */
gboolean
tally_module_table_load (TallyModuleTable   *table,
                         const char * const *names,
                         gpointer * const   *slots,
                         guint               n_names,
                         GError            **error)
{
  g_autoptr(GMutexLocker) locker = NULL;
  GModule *module;

  g_return_val_if_fail (table != NULL && table->soname != NULL, FALSE);
  g_return_val_if_fail (names != NULL && slots != NULL, FALSE);

  if (g_atomic_int_get (&table->loaded))
    return TRUE;

  locker = g_mutex_locker_new (&table->lock);
  if (table->loaded)
    return TRUE;
  if (table->failure != NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, table->failure);
      return FALSE;
    }

  module = g_module_open (table->soname, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  if (module == NULL)
    {
      table->failure = g_strdup_printf ("Could not load %s: %s", table->soname, g_module_error ());
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, table->failure);
      return FALSE;
    }

  for (guint i = 0; i < n_names && table->failure == NULL; i++)
    if (!g_module_symbol (module, names[i], slots[i]) || *slots[i] == NULL)
      table->failure = g_strdup_printf ("%s has no function %s", table->soname, names[i]);

  if (table->failure != NULL)
    {
      for (guint i = 0; i < n_names; i++)
        *slots[i] = NULL;
      g_module_close (module);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, table->failure);
      return FALSE;
    }

  g_module_make_resident (module);
  g_atomic_int_set (&table->loaded, TRUE);
  return TRUE;
}

/**
 * tally_module_table_is_loaded:
 * @table: the library's state
 *
 * Returns: whether tally_module_table_load() has succeeded for @table
 *   (its functions can be called)
 */
gboolean
tally_module_table_is_loaded (TallyModuleTable *table)
{
  g_return_val_if_fail (table != NULL, FALSE);
  return g_atomic_int_get (&table->loaded);
}
