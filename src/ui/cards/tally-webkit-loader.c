/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-webkit"

#include "config.h"

#define TALLY_WEBKIT_LOADER_NO_REDIRECT
#include "tally-webkit-loader.h"

#if TALLY_HAVE_WEBKIT

#include <gmodule.h>
#include <string.h>

/**
 * tally_webkit_api:
 *
 * The loaded WebKit functions (see #TallyWebKitApi). The header's
 * #defines call through it.
 */
TallyWebKitApi tally_webkit_api;

static gboolean loaded;
static char *load_failure;

/**
 * tally_webkit_loader_load:
 * @error: return location for a #GError, or %NULL
 *
 * Loads WebKitGTK (%TALLY_WEBKIT_SONAME, the library the build was
 * configured with) the first time it is called and fills in
 * #tally_webkit_api. The library stays loaded. Later calls return the
 * first call's answer at once. Main thread only.
 *
 * Returns: %TRUE when every WebKit function the UI calls is there; %FALSE
 *   with @error set to %G_IO_ERROR_NOT_FOUND (naming the library or the
 *   missing function) otherwise, and then the table stays empty
 */
gboolean
tally_webkit_loader_load (GError **error)
{
  GModule *module;

  if (loaded)
    return TRUE;
  if (load_failure != NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, load_failure);
      return FALSE;
    }

  module = g_module_open (TALLY_WEBKIT_SONAME, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  if (module == NULL)
    {
      load_failure = g_strdup_printf ("Could not load %s: %s", TALLY_WEBKIT_SONAME, g_module_error ());
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, load_failure);
      return FALSE;
    }

#define TALLY_WEBKIT_RESOLVE(ret, name, args) \
  if (load_failure == NULL && !g_module_symbol (module, #name, (gpointer *) &tally_webkit_api.name)) \
    load_failure = g_strdup_printf ("%s has no function %s", TALLY_WEBKIT_SONAME, #name);
  TALLY_WEBKIT_FUNCTIONS (TALLY_WEBKIT_RESOLVE)
#undef TALLY_WEBKIT_RESOLVE

  if (load_failure != NULL)
    {
      memset (&tally_webkit_api, 0, sizeof tally_webkit_api);
      g_module_close (module);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, load_failure);
      return FALSE;
    }

  g_module_make_resident (module);
  loaded = TRUE;
  return TRUE;
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
  return loaded;
}

#endif
