/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vdso-hammer: every shifted clock through the vDSO against the raw
 * syscall, for tests/bats/vdso-direct.bats.
 *
 *   vdso-hammer SECONDS [--settime] [--cpu]
 *
 * SECONDS of CLOCK_MONOTONIC_RAW, the namespace's; with --cpu, of the
 * process's CPU time, which no namespace shifts: for a namespace whose
 * clocks run at a rate or stand frozen (issue 18).
 *
 * For SECONDS, in a loop over CLOCK_REALTIME, MONOTONIC, MONOTONIC_RAW,
 * REALTIME_COARSE, MONOTONIC_COARSE, BOOTTIME, TAI, time() and
 * gettimeofday(): a raw syscall (trapped, answered by the supervisor), the
 * libc call (the vDSO: our image), a raw syscall again; the vDSO value
 * must lie between the two (monotonic order per clock, offsets included),
 * with tv_nsec in [0, 1e9).
 *
 * The namespace's offsets may change meanwhile (`timensctl set` from
 * outside, or --settime: a thread that moves CLOCK_REALTIME back and forth
 * by an hour and a fraction with clock_settime every 5 ms; run it under
 * `unshare -U -r` so that it has CAP_SYS_TIME in its user namespace).
 * A sample across a change cannot be ordered: the offsets page's sequence
 * (just below our image, lib/core/offsets-page.h) is read before and after
 * it, and a sample during which it moved is counted as skipped, not
 * checked. Prints "checked N skipped M changes C wrong W" and exits 1 on
 * any wrong value, or if nothing was checked. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NSEC 1000000000LL

static const clockid_t clocks[] = {
        CLOCK_REALTIME,         CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE,
        CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME,  CLOCK_TAI,
};
#define N_KINDS (sizeof(clocks) / sizeof(clocks[0]) + 2) /* + time(), gettimeofday() */

static atomic_bool stop;
static atomic_uint_fast64_t settimes;

static __int128 ns_of(const struct timespec *ts) {
        return (__int128) ts->tv_sec * NSEC + ts->tv_nsec;
}

/* The offsets page's sequence; 0 (never odd, never changing) without our
 * image, where there is nothing to skip. */
static const _Atomic uint32_t *page_seq(void) {
        static const _Atomic uint32_t zero;
        unsigned long base = getauxval(AT_SYSINFO_EHDR);
        char line[512];
        FILE *f = fopen("/proc/self/maps", "re");
        bool ours = false;

        if (!base || !f)
                return &zero;
        while (fgets(line, sizeof(line), f)) {
                unsigned long lo, hi;

                /* The offsets page: our memfd's mapping just below the image. */
                if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= base - 4096 && base - 4096 < hi &&
                    strstr(line, "timens-vdso"))
                        ours = true;
        }
        fclose(f);
        return ours ? (const _Atomic uint32_t *) (base - 4096 + 12) : &zero;
}

/* One sample of kind k; 1 ordered, 0 wrong, fills a message. */
static int sample(unsigned k, char *msg, size_t len) {
        __int128 a, v, b;

        if (k < N_KINDS - 2) {
                clockid_t c = clocks[k];
                struct timespec s1, x, s2;

                if (syscall(SYS_clock_gettime, c, &s1) != 0 || clock_gettime(c, &x) != 0 ||
                    syscall(SYS_clock_gettime, c, &s2) != 0) {
                        snprintf(msg, len, "clock %d: %s", c, strerror(errno));
                        return 0;
                }
                if (x.tv_nsec < 0 || x.tv_nsec >= NSEC) {
                        snprintf(msg, len, "clock %d: tv_nsec %ld", c, x.tv_nsec);
                        return 0;
                }
                a = ns_of(&s1);
                v = ns_of(&x);
                b = ns_of(&s2);
                snprintf(msg, len, "clock %d", c);
        } else if (k == N_KINDS - 2) {
                a = syscall(SYS_time, NULL);
                v = time(NULL);
                b = syscall(SYS_time, NULL);
                snprintf(msg, len, "time()");
        } else {
                struct timeval s1, x, s2;

                if (syscall(SYS_gettimeofday, &s1, NULL) != 0 || gettimeofday(&x, NULL) != 0 ||
                    syscall(SYS_gettimeofday, &s2, NULL) != 0 || x.tv_usec < 0 || x.tv_usec >= 1000000) {
                        snprintf(msg, len, "gettimeofday failed or tv_usec out of range");
                        return 0;
                }
                a = (__int128) s1.tv_sec * 1000000 + s1.tv_usec;
                v = (__int128) x.tv_sec * 1000000 + x.tv_usec;
                b = (__int128) s2.tv_sec * 1000000 + s2.tv_usec;
                snprintf(msg, len, "gettimeofday()");
        }
        if (v < a || v > b) {
                size_t n = strlen(msg);

                snprintf(msg + n, len - n, ": vDSO %" PRId64 " not in [%" PRId64 ", %" PRId64 "]", (int64_t) v,
                         (int64_t) a, (int64_t) b);
                return 0;
        }
        return 1;
}

/* Realtime back and forth by 3600.123456789 s around where it is. */
static void *settime_loop(void *p) {
        int64_t sign = 1;

        (void) p;
        while (!atomic_load(&stop)) {
                struct timespec now, to;
                __int128 t;

                clock_gettime(CLOCK_REALTIME, &now);
                t = ns_of(&now) + sign * (3600 * NSEC + 123456789);
                to = (struct timespec){(time_t) (t / NSEC), (long) (t % NSEC)};
                if (clock_settime(CLOCK_REALTIME, &to) != 0) {
                        fprintf(stderr, "vdso-hammer: clock_settime: %s\n", strerror(errno));
                        exit(2);
                }
                atomic_fetch_add(&settimes, 1);
                sign = -sign;
                usleep(5000);
        }
        return NULL;
}

int main(int argc, char *argv[]) {
        uint64_t checked = 0, skipped = 0, wrong = 0, changes = 0;
        const _Atomic uint32_t *seq = page_seq();
        struct timespec start, now;
        bool settime = false, bad = argc < 2;
        clockid_t timer = CLOCK_MONOTONIC_RAW;
        pthread_t t;
        long seconds = 0;

        for (int i = 2; i < argc; i++)
                if (strcmp(argv[i], "--settime") == 0)
                        settime = true;
                else if (strcmp(argv[i], "--cpu") == 0)
                        timer = CLOCK_PROCESS_CPUTIME_ID;
                else
                        bad = true;
        if (bad || (seconds = atol(argv[1])) <= 0) {
                fprintf(stderr, "Usage: %s SECONDS [--settime] [--cpu]\n", argv[0]);
                return 2;
        }
        if (settime && pthread_create(&t, NULL, settime_loop, NULL) != 0)
                return 2;
        clock_gettime(timer, &start);
        do {
                for (unsigned k = 0; k < N_KINDS; k++) {
                        uint32_t s0 = atomic_load(seq), s1;
                        char msg[160];
                        int ok = sample(k, msg, sizeof(msg));

                        s1 = atomic_load(seq);
                        if (s0 != s1 || (s0 & 1)) {
                                skipped++;
                                changes += s0 != s1;
                                continue;
                        }
                        checked++;
                        if (!ok && wrong++ < 10)
                                fprintf(stderr, "vdso-hammer: wrong: %s\n", msg);
                }
                clock_gettime(timer, &now);
        } while (now.tv_sec - start.tv_sec < seconds);
        if (settime) {
                atomic_store(&stop, true);
                pthread_join(t, NULL);
        }
        printf("checked %" PRIu64 " skipped %" PRIu64 " changes %" PRIu64 " settimes %" PRIu64 " wrong %" PRIu64 "\n",
               checked, skipped, changes, (uint64_t) atomic_load(&settimes), wrong);
        return wrong == 0 && checked > 0 ? 0 : 1;
}
