/* SPDX-License-Identifier: GPL-3.0-or-later */

/* Linked into the UI tests. Under AddressSanitizer, tells LeakSanitizer to
 * ignore the one allocation GLib leaks on purpose.
 *
 * GLib keeps its quarks in an array that it replaces by a bigger one every
 * 2048 quarks, leaking the old one so that lookups need no lock (gquark.c).
 * A whole GTK application in one process makes more than 2048 quarks, so
 * LeakSanitizer would report GLib's first array (16 KiB, allocated before
 * main by GLib's constructor), and its truncated stack cannot be told apart
 * by a suppression. The allocator hook notes the 16 KiB blocks allocated
 * early; a constructor that runs after GLib's tells LeakSanitizer to ignore
 * the one that is the quark table. Without ASan this file is empty. */

#include "config.h"

#include <glib.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>

#define QUARK_TABLE_BYTES (2048 * sizeof (char *))

static const volatile void *early_blocks[16];
static volatile gboolean watching = TRUE;

void __sanitizer_malloc_hook (const volatile void *ptr, size_t size);

void
__sanitizer_malloc_hook (const volatile void *ptr,
                         size_t               size)
{
  static int n;

  if (watching && size == QUARK_TABLE_BYTES && n < (int)G_N_ELEMENTS (early_blocks))
    early_blocks[n++] = ptr;
}

__attribute__((constructor (65535)))
static void
ignore_quark_table (void)
{
  watching = FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (early_blocks) && early_blocks[i] != NULL; i++)
    {
      const char *const *table = (const char *const *)early_blocks[i];

      if (table[1] == g_quark_to_string (1) && table[2] == g_quark_to_string (2))
        __lsan_ignore_object ((const void *)early_blocks[i]);
    }
}
#endif
