/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-vdso-calls: every time call a program makes through libc (the
 * vDSO), in this process as it is: on the host, in a kernel time namespace
 * (unshare -T), under timensctl (our image). tests/bench/vdso.sh runs it
 * in each and prints the ratios (issue 19).
 *
 *   bench-vdso-calls [-b BATCHES] [-t BATCH_MS]
 *
 * Output, one line per call (tests/bench/bench-clock.c's format):
 *   bench NAME MEDIAN_NS MIN_NS CALLS_PER_BATCH BATCHES */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#include "bench.h"
#include "util.h"

static volatile int64_t sink;

struct call {
        const char *name;
        clockid_t clock; /* -1: time(), -2: gettimeofday() */
};

static int64_t time_batch(void *ctx, uint64_t n) {
        const struct call *c = ctx;
        clockid_t id = c->clock;
        int64_t start = bench_now_ns(), acc = 0;

        if (id == -1)
                for (uint64_t i = 0; i < n; i++)
                        acc += time(NULL);
        else if (id == -2)
                for (uint64_t i = 0; i < n; i++) {
                        struct timeval tv;

                        gettimeofday(&tv, NULL);
                        acc += tv.tv_usec;
                }
        else
                for (uint64_t i = 0; i < n; i++) {
                        struct timespec ts;

                        clock_gettime(id, &ts);
                        acc += ts.tv_nsec;
                }
        sink = acc;
        return bench_now_ns() - start;
}

int main(int argc, char *argv[]) {
        static const struct call calls[] = {
                {"monotonic", CLOCK_MONOTONIC},
                {"realtime", CLOCK_REALTIME},
                {"boottime", CLOCK_BOOTTIME},
                {"tai", CLOCK_TAI},
                {"monotonic_raw", CLOCK_MONOTONIC_RAW},
                {"monotonic_coarse", CLOCK_MONOTONIC_COARSE},
                {"realtime_coarse", CLOCK_REALTIME_COARSE},
                {"time", -1},
                {"gettimeofday", -2},
        };
        struct bench_options o = {.batches = 5, .batch_ns = 40 * NSEC_PER_MSEC};

        if (bench_parse_options(argc, argv, &o, NULL, NULL, NULL) < 0) {
                fprintf(stderr, "Usage: %s [-b BATCHES (1-%d, default 5)] [-t BATCH_MS (default 40)]\n", argv[0],
                        BENCH_MAX_BATCHES);
                return EXIT_FAILURE;
        }
        for (size_t i = 0; i < ELEMENTSOF(calls); i++) {
                uint64_t n;
                struct bench_result r = bench_measure(time_batch, (void *) &calls[i], &o, &n);

                printf("bench %s %.2f %.2f %llu %u\n", calls[i].name, r.median, r.min, (unsigned long long) n,
                       o.batches);
        }
        return EXIT_SUCCESS;
}
