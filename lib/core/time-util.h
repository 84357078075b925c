/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Checked time arithmetic. Offsets are signed 64-bit nanoseconds (about
 * +-292 years); clock values are struct timespec as the kernel's 64-bit ABI
 * has them (tv_sec int64, tv_nsec long). Every function that can overflow
 * says so by returning -ERANGE (offsets) or -EOVERFLOW (clock values) and
 * leaves its ret_* untouched. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define TNS_NSEC_PER_SEC 1000000000LL
#define TNS_NSEC_PER_USEC 1000LL
#define TNS_USEC_PER_SEC 1000000LL

/* The kernel's KTIME_SEC_MAX (KTIME_MAX / NSEC_PER_SEC): no clock may read
 * past it. Its time namespaces refuse offsets that would put MONOTONIC or
 * BOOTTIME beyond KTIME_SEC_MAX / 2 (kernel/time/namespace.c), and
 * settimeofday refuses REALTIME beyond KTIME_SEC_MAX - 30 years
 * (TIME_SETTOD_SEC_MAX, include/linux/time64.h). */
#define TNS_KTIME_SEC_MAX (INT64_MAX / TNS_NSEC_PER_SEC)
#define TNS_MONO_SEC_MAX (TNS_KTIME_SEC_MAX / 2)
#define TNS_SETTOD_SEC_MAX (TNS_KTIME_SEC_MAX - 30LL * 365 * 86400)

/* The kernel's timespec64_valid(): tv_sec >= 0 and 0 <= tv_nsec < 1e9. */
bool tns_ts_valid(const struct timespec *ts);

/* timespec -> nanoseconds; -EINVAL if tv_nsec is out of range, -ERANGE if
 * the result does not fit in int64 (negative tv_sec allowed). */
int tns_ts_to_ns(const struct timespec *ts, int64_t *ret);

/* nanoseconds -> normalised timespec (floor: tv_nsec always in [0, 1e9)). */
struct timespec tns_ns_to_ts(int64_t ns);

/* ts + ns, normalised; -EOVERFLOW if tv_sec would overflow, -EINVAL if ts
 * is not normalised. */
int tns_ts_add_ns(const struct timespec *ts, int64_t ns, struct timespec *ret);

/* a - b in nanoseconds, exact for any tv_nsec; -ERANGE if it does not fit. */
int tns_ts_diff_ns(const struct timespec *a, const struct timespec *b, int64_t *ret);

/* a + b; -ERANGE on overflow. */
int tns_ns_add(int64_t a, int64_t b, int64_t *ret);
