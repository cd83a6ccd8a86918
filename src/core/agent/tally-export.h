/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-store.h"

G_BEGIN_DECLS

char *tally_export_session_markdown (TallyStore  *store,
                                     const char  *session_id,
                                     GError     **error);

G_END_DECLS
