/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include "tally-transcript-style.h"

#include "tally-transcript-resources.h"

/*
 * The transcript widgets live in a static library, so their resources are
 * registered by hand (a constructor in an object file nobody references
 * would be dropped by the linker) and their style sheet is installed for
 * the default display the first time any of them is created.
 */

#define STYLE_RESOURCE "/io/github/tallyapp/Tally/transcript/style.css"

/**
 * tally_transcript_ui_ensure:
 *
 * Registers the transcript widgets' resources (templates, style sheet) and
 * installs their style sheet for the default display, once. Every widget
 * of `src/ui/transcript` calls it from its class_init, so callers need not;
 * it is safe to call any number of times from the main thread.
 */
void
tally_transcript_ui_ensure (void)
{
  static gboolean registered;
  static gboolean styled;
  GdkDisplay *display;

  if (!registered)
    {
      tally_transcript_register_resource ();
      registered = TRUE;
    }

  if (styled)
    return;

  display = gdk_display_get_default ();
  if (display != NULL)
    {
      g_autoptr(GtkCssProvider) provider = gtk_css_provider_new ();

      gtk_css_provider_load_from_resource (provider, STYLE_RESOURCE);
      gtk_style_context_add_provider_for_display (display,
                                                  GTK_STYLE_PROVIDER (provider),
                                                  GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
      styled = TRUE;
    }
}
