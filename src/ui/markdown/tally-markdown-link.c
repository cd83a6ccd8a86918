/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <string.h>

#include "tally-markdown-link.h"

/**
 * tally_markdown_link_normalize:
 * @url: a link's target as written in the message
 *
 * Completes a link that a message may write without its scheme, the way
 * GitHub Flavored Markdown's autolinks do: a target starting with `www.`
 * gets `http://` and a bare e-mail address gets `mailto:`; anything else,
 * and any target that already has a scheme, comes back unchanged.
 *
 * Returns: (transfer full): the target to open
 */
char *
tally_markdown_link_normalize (const char *url)
{
  g_return_val_if_fail (url != NULL, NULL);

  if (g_uri_peek_scheme (url) != NULL)
    return g_strdup (url);
  if (g_str_has_prefix (url, "www."))
    return g_strconcat ("http://", url, NULL);
  if (strchr (url, '@') != NULL && strchr (url, '/') == NULL)
    return g_strconcat ("mailto:", url, NULL);
  return g_strdup (url);
}

static void
show_uri_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  /* No source when the link's widget was not in a window. */
  g_assert (source == NULL || GTK_IS_WINDOW (source));
  g_assert (G_IS_ASYNC_RESULT (result));

  if (!gtk_show_uri_full_finish ((GtkWindow *) source, result, &error))
    g_warning ("Could not open the link: %s", error->message);
}

/**
 * tally_markdown_link_is_safe:
 * @url: (nullable): a link's target
 *
 * Tells whether a link in a message may be opened: only what a browser or
 * mail client handles (http, https, mailto), so that a message cannot
 * launch local files or custom URI handlers with one click.
 *
 * Returns: %TRUE for an http, https or mailto URI
 */
gboolean
tally_markdown_link_is_safe (const char *url)
{
  g_autofree char *scheme = url != NULL ? g_uri_parse_scheme (url) : NULL;

  return scheme != NULL &&
         (g_ascii_strcasecmp (scheme, "http") == 0 ||
          g_ascii_strcasecmp (scheme, "https") == 0 ||
          g_ascii_strcasecmp (scheme, "mailto") == 0);
}

/**
 * tally_markdown_link_open:
 * @widget: the widget the link was clicked in (its window becomes the
 *   parent of any dialog)
 * @url: the link's target, checked with tally_markdown_link_is_safe()
 *
 * Opens @url with the desktop's default application (gtk_show_uri_full(),
 * through the OpenURI portal inside a sandbox). A failure is logged as a
 * warning; there is nothing for the caller to handle.
 */
void
tally_markdown_link_open (GtkWidget  *widget,
                          const char *url)
{
  GtkRoot *root;

  g_return_if_fail (GTK_IS_WIDGET (widget));
  g_return_if_fail (url != NULL);

  root = gtk_widget_get_root (widget);
  gtk_show_uri_full (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                     url, GDK_CURRENT_TIME, NULL, show_uri_cb, NULL);
}
