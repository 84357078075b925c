/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A namespace member that holds as many of timensd's converted absolute
 * waits as it can (tests/bats/security-memory.bats), and the probe that
 * checks another namespace's waits are still converted.
 *
 *   wait-hog hog NTHREADS SECONDS
 *       NTHREADS threads each in clock_nanosleep(CLOCK_REALTIME,
 *       TIMER_ABSTIME) until an hour from now; exits after SECONDS.
 *   wait-hog once
 *       one absolute sleep of 1 s on CLOCK_REALTIME (the namespace's
 *       clock, read by raw syscall); prints the host time it took, in ms.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void *sleeper(void *unused) {
        struct timespec ts;

        (void) unused;
        syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
        ts.tv_sec += 3600;
        for (;;)
                syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
        return NULL;
}

static int hog(int n, int seconds) {
        pthread_attr_t a;
        int made = 0;

        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 65536);
        for (int i = 0; i < n; i++) {
                pthread_t t;

                if (pthread_create(&t, &a, sleeper, NULL) == 0)
                        made++;
        }
        fprintf(stderr, "wait-hog: %d sleeping threads\n", made);
        sleep((unsigned) seconds);
        return 0;
}

static int once(void) {
        struct timespec ts, a, b;
        long r;

        syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        /* The host's monotonic clock is not shifted by --realtime. */
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a);
        r = syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
        printf("%ld %lld\n", r, (long long) ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000));
        return 0;
}

int main(int argc, char *argv[]) {
        if (argc == 4 && strcmp(argv[1], "hog") == 0)
                return hog(atoi(argv[2]), atoi(argv[3]));
        if (argc == 2 && strcmp(argv[1], "once") == 0)
                return once();
        fprintf(stderr, "usage: wait-hog hog NTHREADS SECONDS | once\n");
        return 2;
}
