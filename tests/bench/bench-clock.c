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
 * nothing disturbs it. The timing itself is tests/include/bench.h's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "util.h"

typedef void (*loop_fn)(uint64_t n);

struct bench {
        const char *name;
        loop_fn loop;
};

/* Results land here, so that the compiler cannot drop the loops. */
static volatile int64_t sink;

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

/* ctx: the loop_fn to time. */
static int64_t time_batch(void *ctx, uint64_t n) {
        loop_fn loop = *(loop_fn *) ctx;
        int64_t start = bench_now_ns();

        loop(n);
        return bench_now_ns() - start;
}

static void run_bench(const struct bench *b, const struct bench_options *o) {
        loop_fn loop = b->loop;
        struct bench_result r;
        uint64_t n;

        r = bench_measure(time_batch, &loop, o, &n);
        printf("bench %s %.1f %.1f %llu %u\n", b->name, r.median, r.min, (unsigned long long) n, o->batches);
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

int main(int argc, char *argv[]) {
        static const struct bench benches[] = {
                {"vdso_clock_gettime_monotonic", loop_vdso},
                {"syscall_clock_gettime_monotonic", loop_syscall},
                {"syscall_time", loop_time},
        };
        struct bench_options o = {.batches = 7, .batch_ns = 120 * NSEC_PER_MSEC};

        if (bench_parse_options(argc, argv, &o, NULL, NULL, NULL) < 0) {
                fprintf(stderr, "Usage: %s [-b BATCHES (1-%d, default 7)] [-t BATCH_MS (default 120)]\n", argv[0],
                        BENCH_MAX_BATCHES);
                return EXIT_FAILURE;
        }
        print_offset_check();
        for (size_t i = 0; i < ELEMENTSOF(benches); i++)
                run_bench(&benches[i], &o);
        return EXIT_SUCCESS;
}
