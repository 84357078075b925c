/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The timing that the benchmarks of tests/bench/ share: the -b BATCHES and
 * -t BATCH_MS options, the timer, the calibration of a batch and the
 * summary of the batches (median and minimum of ns per call).
 *
 * A benchmark hands over its batch as a callback that runs n calls and
 * returns the ns they took, and prints its own lines, in the format that
 * tests/bench/run.sh and vdso.sh parse (see tests/bench/bench-clock.c):
 *   bench NAME MEDIAN_NS MIN_NS CALLS_PER_BATCH BATCHES */
#pragma once

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_MAX_BATCHES 99
#define NSEC_PER_SEC INT64_C(1000000000)
#define NSEC_PER_MSEC INT64_C(1000000)

struct bench_options {
        unsigned batches;
        int64_t batch_ns;
};

/* Runs n calls, returns the ns they took (timed with bench_now_ns()). */
typedef int64_t (*bench_batch_fn)(void *ctx, uint64_t n);

/* A caller's own option, as getopt_long() returned it: 0 if taken,
 * -EINVAL if not. */
typedef int (*bench_option_fn)(int c, const char *arg, void *userdata);

struct bench_result {
        double median, min;
};

/* -b BATCHES (1-BENCH_MAX_BATCHES) and -t BATCH_MS (1-10000) into o, which
 * holds the caller's defaults; longopts and extra (either may be NULL) add
 * the caller's own options. -h, an unknown option or a stray argument:
 * -EINVAL, and the caller prints its usage. */
static inline int bench_parse_options(int argc, char *argv[], struct bench_options *o, const struct option *longopts,
                                      bench_option_fn extra, void *userdata) {
        long v;
        int c, r;

        while ((c = getopt_long(argc, argv, "b:t:h", longopts, NULL)) >= 0)
                switch (c) {
                case 'b':
                        v = strtol(optarg, NULL, 10);
                        if (v < 1 || v > BENCH_MAX_BATCHES)
                                return -EINVAL;
                        o->batches = (unsigned) v;
                        break;
                case 't':
                        v = strtol(optarg, NULL, 10);
                        if (v < 1 || v > 10000)
                                return -EINVAL;
                        o->batch_ns = v * NSEC_PER_MSEC;
                        break;
                case 'h':
                case '?':
                        return -EINVAL;
                default:
                        r = extra ? extra(c, optarg, userdata) : -EINVAL;
                        if (r < 0)
                                return r;
                        break;
                }
        return optind == argc ? 0 : -EINVAL;
}

/* The timer is the vDSO: it costs ~20 ns against batches of ~100 ms, and
 * stays a vDSO read under timens too, where the raw path is trapped (it
 * makes no syscall with a TSC clocksource, so no filter ever sees it). */
static inline int64_t bench_now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Doubles n until a batch is long enough to time (1/8 of the target), then
 * scales it to the target. Doubles as the warm-up: caches, branch
 * predictors, the supervisor's first-call setup. */
static inline uint64_t bench_calibrate(bench_batch_fn batch, void *ctx, int64_t batch_ns) {
        for (uint64_t n = 1;; n *= 2) {
                int64_t t = batch(ctx, n);

                if (t >= batch_ns / 8 || n >= (UINT64_C(1) << 40)) {
                        uint64_t scaled = (uint64_t) ((double) n * (double) batch_ns / (double) (t > 0 ? t : 1));

                        return scaled > 0 ? scaled : 1;
                }
        }
}

/* For qsort() of the per-call times (ns) of the benchmarks that quote
 * percentiles (bench-procfs, bench-utime, bench-wait). */
static inline int bench_cmp_int64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return (x > y) - (x < y);
}

static inline int bench_cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

/* Sorts the n (>= 1) per-call values in place. The median is the figure
 * to quote (robust to a batch hit by an interrupt or a migration); the
 * minimum is what the path costs when nothing disturbs it. */
static inline struct bench_result bench_summarise(double *v, unsigned n) {
        qsort(v, n, sizeof(v[0]), bench_cmp_double);
        return (struct bench_result){v[n / 2], v[0]};
}

/* Calibrates, then times o->batches batches of the same *ret_n calls:
 * ns per call. */
static inline struct bench_result bench_measure(bench_batch_fn batch, void *ctx, const struct bench_options *o,
                                                uint64_t *ret_n) {
        double per_call[BENCH_MAX_BATCHES] = {};
        uint64_t n = bench_calibrate(batch, ctx, o->batch_ns);

        for (unsigned i = 0; i < o->batches; i++)
                per_call[i] = (double) batch(ctx, n) / (double) n;
        *ret_n = n;
        return bench_summarise(per_call, o->batches);
}
