/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-restart: trapped calls in a loop, for tests/bench/restart.sh.
 *
 *   bench-restart SECONDS
 *
 * Calls clock_gettime(CLOCK_REALTIME) by raw syscall (trapped) back to
 * back and prints "gap START END" (CLOCK_MONOTONIC ns, read through the
 * vDSO: run it with no monotonic offset, so that they are the host's) for
 * every call that took over 2 ms: a call made while timensd was dead
 * returns when the next timensd answers it. At the end "calls N". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ns(void) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (int64_t) t.tv_sec * 1000000000 + t.tv_nsec;
}

int main(int argc, char *argv[]) {
        int64_t end, calls = 0;
        struct timespec rt;

        if (argc != 2)
                return 2;
        end = mono_ns() + (int64_t) atoi(argv[1]) * 1000000000;
        setvbuf(stdout, NULL, _IOLBF, 0);
        for (int64_t t0 = mono_ns(), t1; t0 < end; t0 = t1) {
                if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &rt) < 0) {
                        perror("clock_gettime");
                        return 1;
                }
                t1 = mono_ns();
                calls++;
                if (t1 - t0 > 2000000)
                        printf("gap %" PRId64 " %" PRId64 "\n", t0, t1);
        }
        printf("calls %" PRId64 "\n", calls);
        return 0;
}
