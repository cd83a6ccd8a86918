/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-api"

#include "config.h"

#include "tally-client.h"
