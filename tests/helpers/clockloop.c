/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* clockloop: a running program whose clocks change under it (attach).
 *
 *   clockloop [--threads N] [--interval-ms MS]
 *
 * Prints a line every MS milliseconds (default 20), flushed:
 *   SEQ RT_VDSO RT_SYS MONO_VDSO MONO_SYS BOOT_VDSO BOOT_SYS TOD_VDSO TOD_SYS TIME_VDSO TIME_SYS [WORKERS]
 * the seconds of CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
 * gettimeofday and time, each read through libc (the vDSO) and by the raw
 * syscall. With --threads, N threads read CLOCK_REALTIME through the vDSO
 * in a loop (1 ms apart) and WORKERS is the oldest of their latest
 * readings: every thread of the process must see the change. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static _Atomic long latest[MAX_THREADS];

static long vdso_sec(clockid_t id) {
        struct timespec ts;

        return clock_gettime(id, &ts) < 0 ? -1 : (long) ts.tv_sec;
}

static long sys_sec(clockid_t id) {
        struct timespec ts;

        return syscall(SYS_clock_gettime, id, &ts) < 0 ? -1 : (long) ts.tv_sec;
}

static void *worker(void *arg) {
        _Atomic long *slot = arg;
        const struct timespec ms = {0, 1000000};

        for (;;) {
                atomic_store(slot, vdso_sec(CLOCK_REALTIME));
                nanosleep(&ms, NULL);
        }
        return NULL;
}

int main(int argc, char *argv[]) {
        int threads = 0, interval_ms = 20;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
                        threads = atoi(argv[++i]);
                else if (strcmp(argv[i], "--interval-ms") == 0 && i + 1 < argc)
                        interval_ms = atoi(argv[++i]);
                else {
                        fprintf(stderr, "Usage: clockloop [--threads N] [--interval-ms MS]\n");
                        return 2;
                }
        }
        if (threads < 0 || threads > MAX_THREADS || interval_ms <= 0)
                return 2;
        setvbuf(stdout, NULL, _IOLBF, 0);
        for (int i = 0; i < threads; i++) {
                pthread_t t;

                atomic_store(&latest[i], vdso_sec(CLOCK_REALTIME));
                if (pthread_create(&t, NULL, worker, &latest[i]) != 0)
                        return 1;
        }
        for (unsigned long seq = 0;; seq++) {
                const struct timespec pause = {interval_ms / 1000, (long) (interval_ms % 1000) * 1000000};
                struct timeval tv_v, tv_s;
                long oldest = -1;

                gettimeofday(&tv_v, NULL);
                syscall(SYS_gettimeofday, &tv_s, NULL);
                for (int i = 0; i < threads; i++) {
                        long v = atomic_load(&latest[i]);

                        if (oldest < 0 || v < oldest)
                                oldest = v;
                }
                printf("%lu %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld", seq, vdso_sec(CLOCK_REALTIME),
                       sys_sec(CLOCK_REALTIME), vdso_sec(CLOCK_MONOTONIC), sys_sec(CLOCK_MONOTONIC),
                       vdso_sec(CLOCK_BOOTTIME), sys_sec(CLOCK_BOOTTIME), (long) tv_v.tv_sec, (long) tv_s.tv_sec,
                       (long) time(NULL), (long) syscall(SYS_time, NULL));
                if (threads)
                        printf(" %ld", oldest);
                putchar('\n');
                nanosleep(&pause, NULL);
        }
}
