/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include "tally-test-mock.h"
