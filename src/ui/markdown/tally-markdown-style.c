/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <gtksourceview/gtksource.h>

#include "tally-markdown-resources.h"
#include "tally-markdown-style.h"

/**
 * tally_markdown_style_ensure:
 *
 * Registers the markdown widgets' resources (templates and stylesheet),
 * initialises GtkSourceView and adds the stylesheet to the default display
 * at application priority. Does the work once; later calls return at once.
 * Call it from the class_init of every widget of this folder, before its
 * template is set.
 */
void
tally_markdown_style_ensure (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done))
    {
      GdkDisplay *display;

      tally_markdown_register_resource ();
      gtk_source_init ();

      display = gdk_display_get_default ();
      if (display != NULL)
        {
          g_autoptr(GtkCssProvider) provider = gtk_css_provider_new ();

          gtk_css_provider_load_from_resource (provider, "/io/github/tallyapp/Tally/markdown/tally-markdown.css");
          gtk_style_context_add_provider_for_display (display,
                                                      GTK_STYLE_PROVIDER (provider),
                                                      GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
        }
      else
        g_warning ("No display: the markdown stylesheet is not loaded");

      g_once_init_leave (&done, 1);
    }
}
