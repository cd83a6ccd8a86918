/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-secret-env.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

/* A store the compiler may not drop, unlike a memset() of memory that is
 * about to be freed or never read again. */
static void
wipe_bytes (char  *bytes,
            gsize  len)
{
  volatile char *p = bytes;

  while (len-- > 0)
    *p++ = '\0';
}

/**
 * tally_secret_wipe:
 * @secret: (nullable) (transfer full): a string from g_malloc(), such as
 *   the result of tally_secret_env_take()
 *
 * Overwrites @secret with zeros and frees it.
 */
void
tally_secret_wipe (char *secret)
{
  if (secret == NULL)
    return;

  wipe_bytes (secret, strlen (secret));
  g_free (secret);
}

/**
 * tally_secret_env_take:
 * @name: the name of an environment variable, e.g. `ANTHROPIC_API_KEY`
 *
 * Takes a secret out of the process's environment: returns a copy of the
 * value of @name, removes the variable, and then overwrites every
 * `NAME=value` entry that `environ` held for it with zeros, name and value.
 *
 * Removing alone is not enough: unsetenv() only drops the pointer from
 * `environ`, while `/proc/PID/environ` (readable by every process of the
 * same user, such as a command Tally runs) shows the block the kernel
 * copied onto the stack at exec, which still holds the bytes. After this
 * call that block shows zeros where the entry was, and neither this process
 * nor the children it starts later see the variable.
 *
 * Call it early, before other threads may read the environment: like
 * setenv(), it is not thread-safe.
 *
 * Returns: (transfer full) (nullable): the value, or %NULL when @name is
 *   not set or empty; free it with tally_secret_wipe()
 */
char *
tally_secret_env_take (const char *name)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new ();
  char *value = NULL;
  gsize name_len;

  g_return_val_if_fail (name != NULL && *name != '\0' && strchr (name, '=') == NULL, NULL);

  name_len = strlen (name);
  for (char **entry = environ; entry != NULL && *entry != NULL; entry++)
    {
      char *text = *entry;

      if (strncmp (text, name, name_len) != 0 || text[name_len] != '=')
        continue;

      /* getenv() returns the first entry; so does this. */
      if (value == NULL && text[name_len + 1] != '\0')
        value = g_strdup (text + name_len + 1);
      g_ptr_array_add (entries, text);
    }

  /* Once no pointer in `environ` refers to them any more, the entries are
   * wiped whole, name included, so that `/proc/PID/environ` shows neither
   * the value nor that there was one. */
  g_unsetenv (name);
  for (guint i = 0; i < entries->len; i++)
    {
      char *text = g_ptr_array_index (entries, i);

      wipe_bytes (text, strlen (text));
    }

  return value;
}
