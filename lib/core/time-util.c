/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "time-util.h"

/* tns_ns_to_ts() puts a whole int64 of seconds' worth into tv_sec. */
_Static_assert(sizeof(time_t) >= sizeof(int64_t), "time_t must be 64-bit");

bool tns_ts_valid(const struct timespec *ts) {
        return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < TNS_NSEC_PER_SEC;
}

/* sec * 1e9 + nsec without spurious overflow: whole seconds are folded out
 * of nsec, and one second is moved across when the signs differ, because
 * the floor second of a value near INT64_MIN (-9223372037 s + 145224192 ns)
 * overflows on its own although the sum fits. */
static int sec_nsec_to_ns(int64_t sec, int64_t nsec, int64_t *ret) {
        int64_t ns;

        if (__builtin_add_overflow(sec, nsec / TNS_NSEC_PER_SEC, &sec))
                return -ERANGE;
        nsec %= TNS_NSEC_PER_SEC;
        if (sec < 0 && nsec > 0) {
                sec++;
                nsec -= TNS_NSEC_PER_SEC;
        } else if (sec > 0 && nsec < 0) {
                sec--;
                nsec += TNS_NSEC_PER_SEC;
        }
        if (__builtin_mul_overflow(sec, TNS_NSEC_PER_SEC, &ns) || __builtin_add_overflow(ns, nsec, &ns))
                return -ERANGE;
        *ret = ns;
        return 0;
}

int tns_ts_to_ns(const struct timespec *ts, int64_t *ret) {
        if (ts->tv_nsec < 0 || ts->tv_nsec >= TNS_NSEC_PER_SEC)
                return -EINVAL;
        return sec_nsec_to_ns(ts->tv_sec, ts->tv_nsec, ret);
}

struct timespec tns_ns_to_ts(int64_t ns) {
        struct timespec ts = {
                .tv_sec = ns / TNS_NSEC_PER_SEC,
                .tv_nsec = ns % TNS_NSEC_PER_SEC,
        };

        /* C division truncates toward zero; clock values want the floor. */
        if (ts.tv_nsec < 0) {
                ts.tv_sec--;
                ts.tv_nsec += TNS_NSEC_PER_SEC;
        }
        return ts;
}

int tns_ts_add_ns(const struct timespec *ts, int64_t ns, struct timespec *ret) {
        struct timespec d = tns_ns_to_ts(ns);
        time_t sec;

        /* An unnormalised tv_nsec would carry more than one second; refuse it
         * rather than return a timespec that is not normalised either. */
        if (ts->tv_nsec < 0 || ts->tv_nsec >= TNS_NSEC_PER_SEC)
                return -EINVAL;
        d.tv_nsec += ts->tv_nsec;
        if (d.tv_nsec >= TNS_NSEC_PER_SEC) {
                /* Carried into d, whose |tv_sec| <= INT64_MAX / 1e9 + 1, so that
                 * only the final addition can overflow. */
                d.tv_sec++;
                d.tv_nsec -= TNS_NSEC_PER_SEC;
        }
        if (__builtin_add_overflow(ts->tv_sec, d.tv_sec, &sec))
                return -EOVERFLOW;
        *ret = (struct timespec){.tv_sec = sec, .tv_nsec = d.tv_nsec};
        return 0;
}

int tns_ts_diff_ns(const struct timespec *a, const struct timespec *b, int64_t *ret) {
        /* Whole seconds of each tv_nsec go into sec first so that the
         * nanosecond difference stays within +-2e9 whatever tv_nsec holds.
         * If the seconds alone overflow, so would the result. */
        int64_t carry = a->tv_nsec / TNS_NSEC_PER_SEC - b->tv_nsec / TNS_NSEC_PER_SEC;
        int64_t nsec = a->tv_nsec % TNS_NSEC_PER_SEC - b->tv_nsec % TNS_NSEC_PER_SEC;
        int64_t sec;

        if (__builtin_sub_overflow((int64_t) a->tv_sec, (int64_t) b->tv_sec, &sec) ||
            __builtin_add_overflow(sec, carry, &sec))
                return -ERANGE;
        return sec_nsec_to_ns(sec, nsec, ret);
}

int tns_ns_add(int64_t a, int64_t b, int64_t *ret) {
        int64_t sum;

        if (__builtin_add_overflow(a, b, &sum))
                return -ERANGE;
        *ret = sum;
        return 0;
}
