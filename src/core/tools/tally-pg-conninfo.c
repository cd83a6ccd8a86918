/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-tools"

#include "config.h"

#include "tally-pg-conninfo.h"

#include <string.h>

/* PostgreSQL connection strings and URIs (docs/postgresql.md): telling one
 * from a SQLite path, writing one without its password for the store and
 * the screen, and adding the keyring's password back in memory. No libpq:
 * the text is read here, and libpq reads it again when it connects. */

static gboolean
has_uri_scheme (const char *text)
{
  return g_str_has_prefix (text, "postgresql://") || g_str_has_prefix (text, "postgres://");
}

/**
 * tally_pg_conninfo_is:
 * @database: (nullable): what the analyst gave as the database (`--db`)
 *
 * Tells a libpq connection string from a SQLite path: a `postgresql://` or
 * `postgres://` URI, or text with an `=` (`service=sales`,
 * `host=db dbname=sales`) that is not the name of an existing file.
 *
 * Returns: %TRUE when @database is a PostgreSQL connection string
 */
gboolean
tally_pg_conninfo_is (const char *database)
{
  if (database == NULL || database[0] == '\0')
    return FALSE;

  if (has_uri_scheme (database))
    return TRUE;

  return strchr (database, '=') != NULL && !g_file_test (database, G_FILE_TEST_EXISTS);
}

static gboolean
is_secret_keyword (const char *keyword,
                   gsize       length)
{
  return (length == strlen ("password") && g_ascii_strncasecmp (keyword, "password", length) == 0) ||
         (length == strlen ("sslpassword") && g_ascii_strncasecmp (keyword, "sslpassword", length) == 0);
}

/* Whether a URI parameter's keyword is a secret; libpq percent-decodes
 * keywords (`%70assword`), so they are compared decoded, and one that does
 * not decode counts as a secret. */
static gboolean
is_secret_parameter (const char *param,
                     gsize       length)
{
  g_autofree char *keyword = g_uri_unescape_segment (param, param + length, NULL);

  return keyword == NULL || is_secret_keyword (keyword, strlen (keyword));
}

/* The URI form: drops ":password" from the user info and every
 * password=/sslpassword= parameter from the query. Like libpq, the user
 * info runs to an @ before the first /, so a password may hold ? or #. */
static char *
redact_uri (const char *uri)
{
  g_autoptr(GString) out = g_string_new (NULL);
  const char *authority = strstr (uri, "://") + 3;
  const char *credentials_end = authority + strcspn (authority, "/");
  const char *end;
  const char *at = NULL;
  const char *query;

  for (const char *p = authority; p < credentials_end; p++)
    if (*p == '@')
      at = p;
  end = (at != NULL ? at : authority) + strcspn (at != NULL ? at : authority, "/?#");

  g_string_append_len (out, uri, authority - uri);
  if (at != NULL)
    {
      const char *colon = memchr (authority, ':', at - authority);

      g_string_append_len (out, authority, (colon ? colon : at) - authority);
      g_string_append_len (out, at, end - at);
    }
  else
    g_string_append_len (out, authority, end - authority);

  query = strchr (end, '?');
  g_string_append_len (out, end, (query ? query : end + strlen (end)) - end);
  if (query != NULL)
    {
      g_auto(GStrv) params = g_strsplit (query + 1, "&", -1);
      gboolean first = TRUE;

      for (guint i = 0; params[i] != NULL; i++)
        {
          gsize klen = strcspn (params[i], "=");

          if (params[i][0] == '\0' || is_secret_parameter (params[i], klen))
            continue;
          g_string_append_c (out, first ? '?' : '&');
          g_string_append (out, params[i]);
          first = FALSE;
        }
    }

  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Skips one value of the keyword=value form (libpq's grammar: quoted with
 * '…' and backslash escapes, or up to the next blank). */
static const char *
skip_value (const char *p)
{
  if (*p == '\'')
    {
      for (p++; *p != '\0' && *p != '\''; p++)
        if (*p == '\\' && p[1] != '\0')
          p++;
      return *p == '\'' ? p + 1 : p;
    }

  for (; *p != '\0' && !g_ascii_isspace (*p); p++)
    if (*p == '\\' && p[1] != '\0')
      p++;
  return p;
}

/**
 * tally_pg_conninfo_redact:
 * @conninfo: a libpq connection string or URI
 *
 * Removes the secrets from a connection string so it can be stored and
 * shown: the `password` and `sslpassword` keywords of the keyword=value
 * form, and the URI's `user:password@` password and `password=` parameter.
 * Everything else is kept as written.
 *
 * Returns: (transfer full): the connection string without its password
 */
char *
tally_pg_conninfo_redact (const char *conninfo)
{
  g_autoptr(GString) out = NULL;
  const char *p;

  g_return_val_if_fail (conninfo != NULL, NULL);

  if (has_uri_scheme (conninfo))
    return redact_uri (conninfo);

  out = g_string_new (NULL);
  p = conninfo;
  while (*p != '\0')
    {
      const char *start = p;
      const char *keyword;
      gsize klen;

      while (g_ascii_isspace (*p))
        p++;
      keyword = p;
      while (*p != '\0' && *p != '=' && !g_ascii_isspace (*p))
        p++;
      klen = p - keyword;
      while (g_ascii_isspace (*p))
        p++;
      if (*p != '=')
        {
          /* Not keyword=value: keep the rest as it is (libpq refuses it
           * anyway, and nothing after it can be a value). */
          g_string_append (out, start);
          break;
        }
      p++;
      while (g_ascii_isspace (*p))
        p++;
      p = skip_value (p);

      if (!is_secret_keyword (keyword, klen))
        {
          if (out->len > 0)
            g_string_append_c (out, ' ');
          g_string_append_len (out, keyword, p - keyword);
        }
    }

  return g_string_free (g_steal_pointer (&out), FALSE);
}

/**
 * tally_pg_database_key:
 * @database: what the analyst gave as the database (`--db`): a SQLite
 *   path or a PostgreSQL connection string or URI
 *
 * The database as a session records it, and the key of its profile folder
 * (tally_database_profile_dir()): a connection string without its
 * password (tally_pg_conninfo_redact()), or the SQLite path made absolute.
 *
 * Returns: (transfer full): the database's key
 */
char *
tally_pg_database_key (const char *database)
{
  g_return_val_if_fail (database != NULL, NULL);

  if (tally_pg_conninfo_is (database))
    return tally_pg_conninfo_redact (database);
  return g_canonicalize_filename (database, NULL);
}

/**
 * tally_pg_conninfo_add_password:
 * @conninfo: a libpq connection string or URI, normally without a
 *   password (tally_pg_conninfo_redact())
 * @password: (nullable): the password, or %NULL or "" for none
 *
 * The string to hand to libpq when the password comes from elsewhere (the
 * keyring): @conninfo with ` password='…'` appended (quotes and
 * backslashes escaped), or for a URI a `password` parameter
 * (percent-encoded). Keep the result in memory only: store and show
 * @conninfo, or tally_pg_conninfo_redact() of the result.
 *
 * Returns: (transfer full): the connection string with the password, to
 *   free with g_free() (better: wipe it first)
 */
char *
tally_pg_conninfo_add_password (const char *conninfo,
                                const char *password)
{
  GString *out;

  g_return_val_if_fail (conninfo != NULL, NULL);

  if (password == NULL || password[0] == '\0')
    return g_strdup (conninfo);

  out = g_string_new (conninfo);
  if (has_uri_scheme (conninfo))
    {
      g_autofree char *escaped = g_uri_escape_string (password, NULL, FALSE);

      g_string_append_c (out, strchr (conninfo, '?') != NULL ? '&' : '?');
      g_string_append (out, "password=");
      g_string_append (out, escaped);
    }
  else
    {
      if (out->len > 0)
        g_string_append_c (out, ' ');
      g_string_append (out, "password='");
      for (const char *p = password; *p != '\0'; p++)
        {
          if (*p == '\'' || *p == '\\')
            g_string_append_c (out, '\\');
          g_string_append_c (out, *p);
        }
      g_string_append_c (out, '\'');
    }

  return g_string_free (out, FALSE);
}
