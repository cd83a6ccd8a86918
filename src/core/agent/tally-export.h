/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-store.h"

G_BEGIN_DECLS

char *tally_export_session_markdown (TallyStore  *store,
                                     const char  *session_id,
                                     GError     **error);
char *tally_export_session_markdown_full (TallyStore  *store,
                                          const char  *session_id,
                                          gboolean     include_thinking,
                                          GPtrArray  **charts,
                                          GError     **error);

G_END_DECLS
