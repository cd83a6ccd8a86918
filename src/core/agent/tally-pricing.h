/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tally-message-stream.h"

G_BEGIN_DECLS

gboolean tally_pricing_compute_cost (const char       *model,
                                     const TallyUsage *usage,
                                     double           *cost_usd);

G_END_DECLS
