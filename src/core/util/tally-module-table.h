/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

/*
 * A shared library loaded on first use (docs/architecture.md §11.1,
 * "Start-up and WebKit"): a library the first frame does not need is not
 * linked, so the dynamic linker neither maps nor relocates it (and what
 * it depends on) before main(). Its functions are reached through a table
 * of pointers that tally_module_table_load() fills in. The WebKit loader
 * (src/ui/cards/tally-webkit-loader.c) and the libpq loader
 * (src/core/tools/tally-pq-loader.c) are built on it.
 */

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * TallyModuleTable:
 * @soname: the library's file name as the dynamic loader knows it (its
 *   soname, e.g. `libpq.so.5`)
 *
 * The load state of one library. Declare it static and zero-filled apart
 * from @soname; the other fields are private.
 */
typedef struct
{
  const char *soname;

  /*< private >*/
  GMutex      lock;
  int         loaded;
  char       *failure;
} TallyModuleTable;

gboolean tally_module_table_load      (TallyModuleTable   *table,
                                       const char * const *names,
                                       gpointer * const   *slots,
                                       guint               n_names,
                                       GError            **error);
gboolean tally_module_table_is_loaded (TallyModuleTable   *table);

G_END_DECLS
