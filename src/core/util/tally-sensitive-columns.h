/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * TALLY_SENSITIVE_REDACTED:
 *
 * The text that stands in the tool result for every value of a sensitive
 * column (docs/ledger.md).
 */
#define TALLY_SENSITIVE_REDACTED "[redacted]"

char     **tally_sensitive_columns_parse        (const char         *text,
                                                 GError            **error);
gboolean   tally_sensitive_columns_check_entry  (const char         *entry,
                                                 GError            **error);
char      *tally_sensitive_columns_format       (const char * const *columns);
char     **tally_sensitive_columns_merge        (const char * const *columns,
                                                 const char * const *more);
gboolean   tally_sensitive_columns_match        (const char * const *columns,
                                                 const char         *schema,
                                                 const char         *table,
                                                 const char         *column);
gboolean   tally_sensitive_columns_names        (const char * const *columns,
                                                 const char         *name);
char      *tally_sensitive_columns_redact_quoted (const char         *message,
                                                 char                quote);

G_END_DECLS
