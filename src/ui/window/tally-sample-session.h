/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-store.h"

G_BEGIN_DECLS

/**
 * TALLY_SAMPLE_SESSION_ID:
 *
 * The id of the bundled sample session (data/sample-session/README.md):
 * the same in every store, so the first-launch page opens the copy made
 * before instead of adding a second one.
 */
#define TALLY_SAMPLE_SESSION_ID "61c5623f-2b96-4609-9ba3-3876dff7971f"

gboolean tally_sample_session_install (TallyStore  *store,
                                       const char  *database,
                                       const char  *workspace,
                                       GError     **error);

G_END_DECLS
