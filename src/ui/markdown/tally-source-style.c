/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include <adwaita.h>

#include "tally-source-style.h"

/*
 * What every GtkSourceView in the window shares: the code blocks of a
 * message and the SQL of a tool call are highlighted with the Adwaita
 * style scheme that matches the light or dark style.
 */

static void
update_scheme (GtkSourceBuffer *buffer)
{
  AdwStyleManager *style = adw_style_manager_get_default ();
  GtkSourceStyleSchemeManager *schemes = gtk_source_style_scheme_manager_get_default ();
  const char *id = adw_style_manager_get_dark (style) ? "Adwaita-dark" : "Adwaita";
  GtkSourceStyleScheme *scheme = gtk_source_style_scheme_manager_get_scheme (schemes, id);

  if (scheme == NULL)
    scheme = gtk_source_style_scheme_manager_get_scheme (schemes, "classic");
  gtk_source_buffer_set_style_scheme (buffer, scheme);
}

/**
 * tally_source_style_follow:
 * @buffer: a #GtkSourceBuffer
 *
 * Gives @buffer the "Adwaita" style scheme, or "Adwaita-dark" while the
 * application is dark ("classic" when those are missing), and changes it
 * with the style for as long as @buffer lives.
 */
void
tally_source_style_follow (GtkSourceBuffer *buffer)
{
  g_return_if_fail (GTK_SOURCE_IS_BUFFER (buffer));

  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (update_scheme), buffer, G_CONNECT_SWAPPED);
  update_scheme (buffer);
}

/**
 * tally_source_language_keep_compiled:
 * @language: (nullable): a language, or %NULL for none
 *
 * GtkSourceView compiles a language's highlighting rules when a buffer
 * first uses it and drops them with the last such buffer: about 10 ms for
 * SQL. A message re-renders its code blocks while it streams and tool
 * calls come and go as the transcript scrolls, so one idle buffer per
 * language used is kept for the life of the process.
 */
void
tally_source_language_keep_compiled (GtkSourceLanguage *language)
{
  static GHashTable *keepers = NULL;
  const char *id;

  if (language == NULL)
    return;

  if (keepers == NULL)
    keepers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);

  id = gtk_source_language_get_id (language);
  if (!g_hash_table_contains (keepers, id))
    g_hash_table_insert (keepers, g_strdup (id), gtk_source_buffer_new_with_language (language));
}
