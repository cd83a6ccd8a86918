/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-webkit"

#include "config.h"

#define TALLY_WEBKIT_LOADER_NO_REDIRECT
#include "tally-webkit-loader.h"

#if TALLY_HAVE_WEBKIT

#include "tally-module-table.h"

/**
 * tally_webkit_api:
 *
 * The loaded WebKit functions (see #TallyWebKitApi). The header's
 * #defines call through it.
 */
TallyWebKitApi tally_webkit_api;

static TallyModuleTable webkit = { .soname = TALLY_WEBKIT_SONAME };

/**
 * tally_webkit_loader_load:
 * @error: return location for a #GError, or %NULL
 *
 * Loads WebKitGTK (%TALLY_WEBKIT_SONAME, the library the build was
 * configured with) the first time it is called and fills in
 * #tally_webkit_api. The library stays loaded. Later calls return the
 * first call's answer at once. Main thread only (WebKit is).
 *
 * Returns: %TRUE when every WebKit function the UI calls is there; %FALSE
 *   with @error set to %G_IO_ERROR_NOT_FOUND (naming the library or the
 *   missing function) otherwise, and then the table stays empty
 */
gboolean
tally_webkit_loader_load (GError **error)
{
#define TALLY_WEBKIT_NAME(ret, name, args) #name,
  static const char * const names[] = { TALLY_WEBKIT_FUNCTIONS (TALLY_WEBKIT_NAME) };
#undef TALLY_WEBKIT_NAME
#define TALLY_WEBKIT_SLOT(ret, name, args) (gpointer *) &tally_webkit_api.name,
  static gpointer * const slots[] = { TALLY_WEBKIT_FUNCTIONS (TALLY_WEBKIT_SLOT) };
#undef TALLY_WEBKIT_SLOT

  G_STATIC_ASSERT (G_N_ELEMENTS (names) == G_N_ELEMENTS (slots));
  return tally_module_table_load (&webkit, names, slots, G_N_ELEMENTS (names), error);
}

/**
 * tally_webkit_loader_is_loaded:
 *
 * Returns: whether tally_webkit_loader_load() has succeeded (the
 *   WebKit functions can be called)
 */
gboolean
tally_webkit_loader_is_loaded (void)
{
  return tally_module_table_is_loaded (&webkit);
}

#endif
