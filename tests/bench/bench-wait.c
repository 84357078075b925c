/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-wait: how late a wait wakes, for tests/bench/waits.sh.
 *
 *     bench-wait KIND [-n ITERATIONS] [-d DELAY_US]
 *
 * KIND: abs-sleep (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME): the
 * converted path under timens), cond (pthread_cond_timedwait on a
 * CLOCK_MONOTONIC condvar: FUTEX_WAIT_BITSET, converted), rel-sleep
 * (clock_nanosleep relative) and futex-wait (FUTEX_WAIT with a relative
 * timeout): never intercepted. Each iteration reads CLOCK_MONOTONIC (the
 * namespace's, through the vDSO: host + a constant, so differences are the
 * host's), waits DELAY_US (default 1000) and reads it again; lateness is
 * the wake-up time minus the deadline. Prints
 *
 *     wake KIND P50_US P99_US MAX_US ITERATIONS
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static struct timespec ts_of(int64_t ns) {
        return (struct timespec){ns / 1000000000, ns % 1000000000};
}

/* One wait of `delay` ns; returns the ns between its deadline and the
 * wake-up. */
static int64_t wait_once(const char *kind, int64_t delay, pthread_cond_t *cv, pthread_mutex_t *m) {
        static uint32_t word;
        int64_t start = bench_now_ns(), deadline = start + delay;
        struct timespec d = ts_of(deadline), rel = ts_of(delay);

        if (strcmp(kind, "abs-sleep") == 0)
                clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL);
        else if (strcmp(kind, "rel-sleep") == 0)
                clock_nanosleep(CLOCK_MONOTONIC, 0, &rel, NULL);
        else if (strcmp(kind, "futex-wait") == 0)
                syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
        else
                while (pthread_cond_timedwait(cv, m, &d) == 0)
                        ;
        return bench_now_ns() - deadline;
}

int main(int argc, char *argv[]) {
        pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
        pthread_condattr_t a;
        pthread_cond_t cv;
        long n = 500, delay_us = 1000;
        const char *kind;
        int64_t *late;
        int c;

        if (argc < 2) {
                fprintf(stderr, "usage: bench-wait abs-sleep|cond|rel-sleep|futex-wait [-n N] [-d DELAY_US]\n");
                return 2;
        }
        kind = argv[1];
        optind = 2;
        while ((c = getopt(argc, argv, "n:d:")) >= 0)
                if (c == 'n')
                        n = atol(optarg);
                else if (c == 'd')
                        delay_us = atol(optarg);
                else
                        return 2;
        if (n < 1 || n > 1000000 || delay_us < 1)
                return 2;
        late = calloc((size_t) n, sizeof(*late));
        if (!late)
                return 2;
        pthread_condattr_init(&a);
        pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
        pthread_cond_init(&cv, &a);
        pthread_mutex_lock(&m);
        for (long i = 0; i < n; i++)
                late[i] = wait_once(kind, delay_us * 1000, &cv, &m);
        qsort(late, (size_t) n, sizeof(*late), bench_cmp_int64);
        printf("wake %s %.1f %.1f %.1f %ld\n", kind, late[n / 2] / 1e3, late[n * 99 / 100] / 1e3, late[n - 1] / 1e3, n);
        return 0;
}
