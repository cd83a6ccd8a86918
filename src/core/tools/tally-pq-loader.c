/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-pq"

#include "config.h"

#define TALLY_PQ_LOADER_NO_REDIRECT
#include "tally-pq-loader.h"

#include "tally-module-table.h"
#include "tally-tools-config.h"

/**
 * tally_pq_api:
 *
 * The loaded libpq functions (see #TallyPqApi). The header's #defines
 * call through it.
 */
TallyPqApi tally_pq_api;

static TallyModuleTable libpq = { .soname = TALLY_LIBPQ_SONAME };

/**
 * tally_pq_loader_load:
 * @error: return location for a #GError, or %NULL
 *
 * Loads libpq (%TALLY_LIBPQ_SONAME, the library the build was configured
 * with) the first time it is called and fills in #tally_pq_api; later
 * calls return the first call's answer at once. Any thread.
 *
 * Returns: %TRUE when every libpq function Tally calls is there; %FALSE
 *   with @error set to %G_IO_ERROR_NOT_FOUND (naming the library or the
 *   missing function) otherwise, and then the table stays empty
 */
gboolean
tally_pq_loader_load (GError **error)
{
#define TALLY_PQ_NAME(ret, name, args) #name,
  static const char * const names[] = { TALLY_PQ_FUNCTIONS (TALLY_PQ_NAME) };
#undef TALLY_PQ_NAME
#define TALLY_PQ_SLOT(ret, name, args) (gpointer *) &tally_pq_api.name,
  static gpointer * const slots[] = { TALLY_PQ_FUNCTIONS (TALLY_PQ_SLOT) };
#undef TALLY_PQ_SLOT

  G_STATIC_ASSERT (G_N_ELEMENTS (names) == G_N_ELEMENTS (slots));
  return tally_module_table_load (&libpq, names, slots, G_N_ELEMENTS (names), error);
}

/**
 * tally_pq_loader_is_loaded:
 *
 * Returns: whether tally_pq_loader_load() has succeeded (the libpq
 *   functions can be called)
 */
gboolean
tally_pq_loader_is_loaded (void)
{
  return tally_module_table_is_loaded (&libpq);
}
