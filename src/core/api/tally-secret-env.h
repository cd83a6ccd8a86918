/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

char *tally_secret_env_take (const char *name);
void  tally_secret_wipe     (char       *secret);

/* For g_autoptr(TallySecret): a string wiped with tally_secret_wipe(). */
typedef char TallySecret;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TallySecret, tally_secret_wipe)

G_END_DECLS
