/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every fuzz target checks with: an abort libFuzzer reports, with
 * the condition that failed. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                                    \
        do {                                                                                                           \
                if (!(cond)) {                                                                                         \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                       \
                        abort();                                                                                       \
                }                                                                                                      \
        } while (0)
