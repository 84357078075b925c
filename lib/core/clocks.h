/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <time.h>

#include "offsets-page.h"

/* CLOCK_TAI and the alarm clocks are missing from older libc headers. */
#ifndef CLOCK_BOOTTIME_ALARM
#define CLOCK_REALTIME_ALARM 8
#define CLOCK_BOOTTIME_ALARM 9
#endif
#ifndef CLOCK_TAI
#define CLOCK_TAI 11
#endif

/* The clock ids whose readings a namespace shifts, in one list that the
 * filter, the emulation and the tests all use. */
extern const clockid_t tns_virtual_clocks[];
extern const unsigned tns_n_virtual_clocks;

/* The class (offset) of a clock id, or -EINVAL if the namespace does not
 * shift it (CPU-time clocks, dynamic clocks, invalid ids). */
int tns_clock_class(clockid_t id);

/* Clocks that clock_settime() may set inside a namespace: REALTIME as the
 * kernel, and the monotonic and boottime clocks as the 2018 RFC allowed. */
bool tns_clock_settable(clockid_t id);

/* "CLOCK_MONOTONIC", ...; "CLOCK_<n>" style is not produced: NULL if unknown. */
const char *tns_clock_name(clockid_t id);

/* "monotonic", "boottime", "realtime". */
const char *tns_class_name(enum tns_clock_class c);
