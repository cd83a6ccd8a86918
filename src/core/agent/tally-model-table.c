/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-agent"

#include "config.h"

#include "tally-model-table.h"
