/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-clock: what one clock read costs the program that makes it.
 *
 *   bench-clock [-b BATCHES] [-t BATCH_MS]
 *
 * Measures, in one run, ns per call of clock_gettime(CLOCK_MONOTONIC)
 * through libc (the vDSO), the same as a raw syscall, and a raw time(NULL).
 * Run on the host, in a kernel time namespace and under `timensctl run`, it
 * gives the rows that tests/bench/run.sh puts side by side.
 *
 * Output, one line per fact, whitespace-separated, for awk:
 *   bench NAME MEDIAN_NS MIN_NS CALLS_PER_BATCH BATCHES
 *   info KEY VALUE
 * The median of the batches is the figure to quote (robust to a batch hit
 * by an interrupt or a migration); the minimum is what the path costs when
 * nothing disturbs it. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define MAX_BATCHES 99
#define NSEC_PER_SEC INT64_C(1000000000)
#define NSEC_PER_MSEC INT64_C(1000000)

typedef void (*loop_fn)(uint64_t n);

struct bench {
        const char *name;
        loop_fn loop;
};

struct options {
        unsigned batches;
        int64_t batch_ns;
};

/* Results land here, so that the compiler cannot drop the loops. */
static volatile int64_t sink;

/* The timer is the vDSO: it costs ~20 ns against batches of ~100 ms, and
 * stays a vDSO read under timens too, where the raw path is trapped. */
static int64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void loop_vdso(uint64_t n) {
        struct timespec ts;
        int64_t acc = 0;

        for (uint64_t i = 0; i < n; i++) {
                clock_gettime(CLOCK_MONOTONIC, &ts);
                acc += ts.tv_nsec;
        }
        sink = acc;
}

/* syscall(2), not the vDSO: the path seccomp sees, so the one timens
 * emulates today. */
static void loop_syscall(uint64_t n) {
        struct timespec ts;
        int64_t acc = 0;

        for (uint64_t i = 0; i < n; i++) {
                syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
                acc += ts.tv_nsec;
        }
        sink = acc;
}

/* time(NULL): no pointer to write back, so under timens the answer rides
 * in the reply alone (no process_vm_writev). */
static void loop_time(uint64_t n) {
        int64_t acc = 0;

        for (uint64_t i = 0; i < n; i++)
                acc += syscall(SYS_time, NULL);
        sink = acc;
}

static int64_t time_batch(loop_fn loop, uint64_t n) {
        int64_t start = now_ns();

        loop(n);
        return now_ns() - start;
}

/* Doubles n until a batch is long enough to time (1/8 of the target), then
 * scales it to the target. Doubles as the warm-up: caches, branch
 * predictors, the supervisor's first-call setup. */
static uint64_t calibrate(loop_fn loop, int64_t batch_ns) {
        uint64_t n = 1;

        for (;;) {
                int64_t t = time_batch(loop, n);

                if (t >= batch_ns / 8 || n >= (UINT64_C(1) << 40)) {
                        uint64_t scaled = (uint64_t) ((double) n * (double) batch_ns / (double) (t > 0 ? t : 1));

                        return scaled > 0 ? scaled : 1;
                }
                n *= 2;
        }
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

static void run_bench(const struct bench *b, const struct options *o) {
        double per_call[MAX_BATCHES] = {};
        uint64_t n = calibrate(b->loop, o->batch_ns);

        for (unsigned i = 0; i < o->batches; i++)
                per_call[i] = (double) time_batch(b->loop, n) / (double) n;
        qsort(per_call, o->batches, sizeof(per_call[0]), cmp_double);
        printf("bench %s %.1f %.1f %llu %u\n", b->name, per_call[o->batches / 2], per_call[0], (unsigned long long) n,
               o->batches);
        fflush(stdout);
}

/* Tells run.sh which path is shifted where: under timensctl today the raw
 * syscall is ahead of the vDSO by the offset (the vDSO is not replaced
 * yet); on the host and in a kernel time namespace the two agree. */
static void print_offset_check(void) {
        struct timespec vdso, raw;
        double diff;

        clock_gettime(CLOCK_MONOTONIC, &vdso);
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &raw);
        diff = (double) (raw.tv_sec - vdso.tv_sec) + (double) (raw.tv_nsec - vdso.tv_nsec) / 1e9;
        printf("info raw_minus_vdso_monotonic_s %.3f\n", diff);
        printf("info vdso_monotonic_s %.3f\n", (double) vdso.tv_sec + (double) vdso.tv_nsec / 1e9);
}

static int parse_options(int argc, char *argv[], struct options *o) {
        long v;
        int c;

        while ((c = getopt(argc, argv, "b:t:h")) >= 0)
                switch (c) {
                case 'b':
                        v = strtol(optarg, NULL, 10);
                        if (v < 1 || v > MAX_BATCHES)
                                return -EINVAL;
                        o->batches = (unsigned) v;
                        break;
                case 't':
                        v = strtol(optarg, NULL, 10);
                        if (v < 1 || v > 10000)
                                return -EINVAL;
                        o->batch_ns = v * NSEC_PER_MSEC;
                        break;
                default:
                        return -EINVAL;
                }
        return optind == argc ? 0 : -EINVAL;
}

int main(int argc, char *argv[]) {
        static const struct bench benches[] = {
                {"vdso_clock_gettime_monotonic", loop_vdso},
                {"syscall_clock_gettime_monotonic", loop_syscall},
                {"syscall_time", loop_time},
        };
        struct options o = {.batches = 7, .batch_ns = 120 * NSEC_PER_MSEC};

        if (parse_options(argc, argv, &o) < 0) {
                fprintf(stderr, "Usage: %s [-b BATCHES (1-%d, default 7)] [-t BATCH_MS (default 120)]\n", argv[0],
                        MAX_BATCHES);
                return EXIT_FAILURE;
        }
        print_offset_check();
        for (size_t i = 0; i < ELEMENTSOF(benches); i++)
                run_bench(&benches[i], &o);
        return EXIT_SUCCESS;
}
