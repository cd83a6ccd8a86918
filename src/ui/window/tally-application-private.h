/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-application.h"

G_BEGIN_DECLS

/*
 * Test hooks: not for the application's own code paths.
 *
 * _tally_application_set_network_override: -1 follows GNetworkMonitor (the
 * default), 0 forces "offline", 1 forces "online".
 */
void _tally_application_set_network_override (TallyApplication *self,
                                              int               state);

/* Start-up: what waits until a window's first frame (tally-window.c). */
void _tally_application_after_first_frame (TallyApplication *self);

TallyStore *_tally_application_peek_store (TallyApplication *self);
gboolean    _tally_application_store_tried (TallyApplication *self);

G_END_DECLS
