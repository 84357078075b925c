/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* clockprobe: what a program sees of its clocks.
 *
 *   clockprobe [--vdso]              one line per clock id 0..11, then
 *                                    gettimeofday, time and timezone:
 *                                    "NAME RESULT SEC.NSEC" (RESULT: 0 or
 *                                    the errno name, value "-" on error)
 *   clockprobe [--vdso] --sec CLOCK  one clock as integer seconds
 *   clockprobe [--vdso] --ns CLOCK   one clock as integer nanoseconds
 *
 * CLOCK is a name (CLOCK_MONOTONIC, monotonic, MONOTONIC), a number, or
 * gettimeofday / time. Without --vdso every read is the raw syscall, which
 * is what the seccomp path sees; with it, libc's functions, which go
 * through the vDSO (the kernel's timens selftest checks both ways too).
 *
 * Self-contained on purpose: the Makefile also builds it -static, without
 * libtimens. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define N_CLOCK_IDS 12

/* Id 10 was CLOCK_SGI_CYCLE, long removed: the kernel answers EINVAL. */
static const char *const clock_names[N_CLOCK_IDS] = {
        "CLOCK_REALTIME",       "CLOCK_MONOTONIC",       "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID",
        "CLOCK_MONOTONIC_RAW",  "CLOCK_REALTIME_COARSE", "CLOCK_MONOTONIC_COARSE",   "CLOCK_BOOTTIME",
        "CLOCK_REALTIME_ALARM", "CLOCK_BOOTTIME_ALARM",  "CLOCK_SGI_CYCLE",          "CLOCK_TAI",
};

/* Pseudo clock ids for the two syscalls that are not clock_gettime. */
enum { PSEUDO_GETTIMEOFDAY = -1000, PSEUDO_TIME = -1001 };

static bool use_vdso;

static const char *errno_name(int e) {
        const char *n = strerrorname_np(e);

        return n ? n : "E?";
}

/* 0 or an errno. */
static int read_clock(int id, struct timespec *ret) {
        if (use_vdso)
                return clock_gettime(id, ret) < 0 ? errno : 0;
        return syscall(SYS_clock_gettime, id, ret) < 0 ? errno : 0;
}

static int read_gettimeofday(struct timeval *tv, struct timezone *tz) {
        if (use_vdso)
                return gettimeofday(tv, tz) < 0 ? errno : 0;
        return syscall(SYS_gettimeofday, tv, tz) < 0 ? errno : 0;
}

static int read_time(time_t *ret) {
        long t;

        if (use_vdso) {
                t = time(NULL);
        } else {
                errno = 0;
                t = syscall(SYS_time, NULL);
                if (t == -1 && errno != 0)
                        return errno;
        }
        *ret = t;
        return 0;
}

/* Any clock (real or pseudo) as a timespec. */
static int read_any(int id, struct timespec *ret) {
        struct timeval tv;
        time_t t;
        int r;

        switch (id) {
        case PSEUDO_GETTIMEOFDAY:
                r = read_gettimeofday(&tv, NULL);
                *ret = (struct timespec){tv.tv_sec, tv.tv_usec * 1000};
                return r;
        case PSEUDO_TIME:
                r = read_time(&t);
                *ret = (struct timespec){t, 0};
                return r;
        default:
                return read_clock(id, ret);
        }
}

static int parse_clock(const char *s) {
        char *end;
        long v;

        if (strcasecmp(s, "gettimeofday") == 0)
                return PSEUDO_GETTIMEOFDAY;
        if (strcasecmp(s, "time") == 0)
                return PSEUDO_TIME;
        for (int i = 0; i < N_CLOCK_IDS; i++)
                if (strcasecmp(s, clock_names[i]) == 0 || strcasecmp(s, clock_names[i] + strlen("CLOCK_")) == 0)
                        return i;
        errno = 0;
        v = strtol(s, &end, 0);
        if (errno != 0 || *s == '\0' || *end != '\0' || v < -2147483648L || v > 2147483647L) {
                fprintf(stderr, "clockprobe: unknown clock '%s'\n", s);
                exit(2);
        }
        return (int) v;
}

static void print_all(void) {
        struct timespec ts;
        struct timeval tv;
        struct timezone tz;
        time_t t;
        int r;

        for (int id = 0; id < N_CLOCK_IDS; id++) {
                r = read_clock(id, &ts);
                if (r)
                        printf("%s %s -\n", clock_names[id], errno_name(r));
                else
                        printf("%s 0 %lld.%09ld\n", clock_names[id], (long long) ts.tv_sec, ts.tv_nsec);
        }
        r = read_gettimeofday(&tv, NULL);
        if (r)
                printf("gettimeofday %s -\n", errno_name(r));
        else
                printf("gettimeofday 0 %lld.%06ld\n", (long long) tv.tv_sec, (long) tv.tv_usec);
        r = read_time(&t);
        if (r)
                printf("time %s -\n", errno_name(r));
        else
                printf("time 0 %lld\n", (long long) t);
        /* The timezone alone: settimeofday() in a namespace may set its own. */
        r = read_gettimeofday(NULL, &tz);
        if (r)
                printf("timezone %s -\n", errno_name(r));
        else
                printf("timezone 0 %d %d\n", tz.tz_minuteswest, tz.tz_dsttime);
}

static int print_one(int id, bool nanoseconds) {
        struct timespec ts;
        int r;

        r = read_any(id, &ts);
        if (r) {
                fprintf(stderr, "clockprobe: reading clock %d: %s\n", id, errno_name(r));
                return 1;
        }
        if (nanoseconds)
                printf("%" PRId64 "\n", (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec);
        else
                printf("%lld\n", (long long) ts.tv_sec);
        return 0;
}

static void usage(void) {
        fprintf(stderr, "Usage: clockprobe [--vdso] [--sec CLOCK | --ns CLOCK]\n");
        exit(2);
}

int main(int argc, char *argv[]) {
        const char *one = NULL;
        bool nanoseconds = false;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--vdso") == 0)
                        use_vdso = true;
                else if ((strcmp(argv[i], "--sec") == 0 || strcmp(argv[i], "--ns") == 0) && i + 1 < argc) {
                        nanoseconds = argv[i][2] == 'n';
                        one = argv[++i];
                } else
                        usage();
        }
        if (one)
                return print_one(parse_clock(one), nanoseconds);
        print_all();
        return 0;
}
