/* SPDX-License-Identifier: GPL-3.0-or-later */

/* tally: the GTK face of Tally (DESIGN "Faces and their contracts"). */

#define G_LOG_DOMAIN "tally"

#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "tally-application.h"

int
main (int    argc,
      char **argv)
{
  g_autoptr(TallyApplication) app = NULL;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  g_set_application_name (_("Tally"));

  app = tally_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
