/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rfc-probe: the 2018 time namespace RFC's semantics, step by step, as
 * timens emulates them. Prints one "PASS name: ..." or "FAIL name: ..."
 * line per check, with the values it saw, and exits 1 if any failed.
 *
 * Run it as
 *
 *     timensctl run -- unshare -U -r rfc-probe
 *
 * The user namespace gives it CAP_SYS_TIME and CAP_SYS_ADMIN for the
 * emulation (capabilities in its own user namespace, as the RFC asks)
 * while the kernel refuses it the host's clock: a clock_settime that slips
 * past the supervisor fails with EPERM instead of stepping the machine.
 * The probe refuses to run in the initial user namespace for that reason.
 *
 * Every check reads the clocks through the raw syscalls, which the
 * supervisor serves. Where the vDSO is replaced too (libc's clock_gettime
 * sees timensctl's namespace), each process also checks that its vDSO
 * reads agree with its raw ones at every step ("vdso_*" checks); where it
 * is not, the probe says "# SKIP vdso: ..." once and leaves them out.
 *
 * What it checks, in order:
 *  - clock_settime in the outer namespace moves that namespace's clocks;
 *  - unshare(CLONE_NEWTIME) moves the caller (all its threads) at once into
 *    a child namespace that starts with its parent's clocks;
 *  - settime of MONOTONIC (and _RAW, _COARSE), BOOTTIME and REALTIME sets
 *    the new namespace's clocks; the siblings of each clock follow;
 *  - a child forked before the unshare, and what it forks later, stay in
 *    the parent namespace; a child forked after follows the caller, and
 *    so do an orphaned grandchild (double fork) and an exec'd program;
 *  - moving the parent namespace moves the child's clocks too (lib/kernel/ns.h:
 *    a child stores its offsets relative to its parent);
 *  - settimeofday (time and timezone), adjtimex and clock_adjtime with
 *    ADJ_SETOFFSET;
 *  - the kernel's value checks, with the capability held;
 *  - a second unshare nests; unshare from a secondary thread moves the
 *    whole process;
 *  - without CAP_SYS_TIME every setter fails with EPERM and changes
 *    nothing; without CAP_SYS_ADMIN unshare fails with EPERM. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define NSEC_PER_SEC INT64_C(1000000000)
/* Two reads of one clock a few syscalls apart, on a machine that may be
 * busy: generous, yet far below the seconds-to-years steps checked. */
#define TOLERANCE_NS (NSEC_PER_SEC / 2)
/* KTIME_SEC_MAX / 2: the kernel's limit for time namespace offsets. */
#define MONO_SEC_MAX INT64_C(4611686018)
/* KTIME_SEC_MAX - 30 years: TIME_SETTOD_SEC_MAX. */
#define SETTOD_SEC_MAX INT64_C(8277292036)

static unsigned failures, passes;

/* ---- reporting ---------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static bool check(bool ok, const char *name, const char *fmt, ...) {
        va_list ap;

        printf("%s %s: ", ok ? "PASS" : "FAIL", name);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
        if (ok)
                passes++;
        else
                failures++;
        return ok;
}

/* "-12.345678901" */
static const char *fmt_ns(int64_t ns, char buf[static 32]) {
        uint64_t a = ns < 0 ? -(uint64_t) ns : (uint64_t) ns;

        snprintf(buf, 32, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "", a / NSEC_PER_SEC, a % NSEC_PER_SEC);
        return buf;
}

static bool check_near(const char *name, int64_t got, int64_t want) {
        char g[32], w[32], d[32];
        int64_t diff = got - want;

        return check(diff > -TOLERANCE_NS && diff < TOLERANCE_NS, name, "got %s want %s (diff %s, tolerance 0.5 s)",
                     fmt_ns(got, g), fmt_ns(want, w), fmt_ns(diff, d));
}

static bool check_far(const char *name, int64_t got, int64_t other, int64_t min_distance) {
        char g[32], o[32];
        int64_t diff = got - other;

        return check(diff >= min_distance || diff <= -min_distance, name,
                     "got %s, must be at least %" PRId64 " s away from %s", fmt_ns(got, g), min_distance / NSEC_PER_SEC,
                     fmt_ns(other, o));
}

static const char *errname(int e) {
        return e ? strerrorname_np(e) ?: "E?" : "0";
}

/* got, want: 0 for success or an errno. */
static bool check_err(const char *name, int got, int want) {
        return check(got == want, name, "errno %s, want %s", errname(got), errname(want));
}

/* A raw syscall's outcome as 0 or its errno. */
#define SYSERR(call)                                                                                                   \
        ({                                                                                                             \
                long r_ = (call);                                                                                      \
                r_ < 0 ? errno : 0;                                                                                    \
        })

/* ---- clocks, raw ---------------------------------------------------------- */

static int64_t ts_ns(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static int64_t now(clockid_t id) {
        struct timespec ts;

        if (syscall(SYS_clock_gettime, id, &ts) < 0) {
                printf("FAIL read_clock_%d: %s\n", id, errname(errno));
                exit(1);
        }
        return ts_ns(&ts);
}

/* 0 or errno. */
static int set_clock(clockid_t id, int64_t ns) {
        struct timespec ts = {ns / NSEC_PER_SEC, ns % NSEC_PER_SEC};

        return syscall(SYS_clock_settime, id, &ts) < 0 ? errno : 0;
}

static int64_t gtod_ns(struct timezone *tz) {
        struct timeval tv;

        if (syscall(SYS_gettimeofday, &tv, tz) < 0) {
                printf("FAIL gettimeofday: %s\n", errname(errno));
                exit(1);
        }
        return (int64_t) tv.tv_sec * NSEC_PER_SEC + tv.tv_usec * 1000;
}

/* 0 or errno; returns the clock state otherwise discarded. */
static int step_realtime(long sys, int64_t sec, long frac, bool nano, struct timex *ret) {
        struct timex tx = {.modes = ADJ_SETOFFSET | (nano ? ADJ_NANO : 0)};
        long r;

        tx.time.tv_sec = sec;
        tx.time.tv_usec = frac;
        r = sys == SYS_adjtimex ? syscall(SYS_adjtimex, &tx) : syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx);
        if (ret)
                *ret = tx;
        return r < 0 ? errno : 0;
}

static int do_unshare(void) {
        return syscall(SYS_unshare, CLONE_NEWTIME) < 0 ? errno : 0;
}

/* Through libc, i.e. the vDSO. */
static int64_t vdso_now(clockid_t id) {
        struct timespec ts;

        if (clock_gettime(id, &ts) < 0) {
                printf("FAIL vdso_read_clock_%d: %s\n", id, errname(errno));
                exit(1);
        }
        return ts_ns(&ts);
}

/* Set once the outer namespace's clocks have moved: whether libc's reads
 * see the namespace at all. */
static bool vdso_checked;

struct reading {
        int err;
        int tz_minuteswest;
        int64_t mono, boot, real;
        int64_t vdso_mono, vdso_boot, vdso_real;
};

static void take_reading(struct reading *r) {
        struct timezone tz;

        r->vdso_mono = vdso_now(CLOCK_MONOTONIC);
        r->mono = now(CLOCK_MONOTONIC);
        r->vdso_boot = vdso_now(CLOCK_BOOTTIME);
        r->boot = now(CLOCK_BOOTTIME);
        r->vdso_real = vdso_now(CLOCK_REALTIME);
        r->real = now(CLOCK_REALTIME);
        (void) gtod_ns(&tz);
        r->tz_minuteswest = tz.tz_minuteswest;
}

/* In the process that took it, the vDSO read what the syscalls read. */
static void check_vdso(const char *where, const struct reading *r) {
        char n[96];

        if (!vdso_checked)
                return;
        snprintf(n, sizeof(n), "vdso_%s_monotonic", where);
        check_near(n, r->vdso_mono, r->mono);
        snprintf(n, sizeof(n), "vdso_%s_boottime", where);
        check_near(n, r->vdso_boot, r->boot);
        snprintf(n, sizeof(n), "vdso_%s_realtime", where);
        check_near(n, r->vdso_real, r->real);
}

static void check_vdso_self(const char *where) {
        struct reading r;

        take_reading(&r);
        check_vdso(where, &r);
}

/* ---- observers: processes that stay behind -------------------------------- */

/* A child that waits for commands on a pipe: it exists before the unshare
 * and so must stay in the old namespace, with anything it forks later. */
struct observer {
        pid_t pid;
        int cmd, res;
};

/* Keeps only stdio and a, b: an observer that held another's command
 * pipe would keep that one from ever seeing its end. */
static void close_other_fds(int a, int b) {
        int lo = a < b ? a : b, hi = a < b ? b : a;

        (void) close_range(3, lo - 1, 0);
        (void) close_range(lo + 1, hi - 1, 0);
        (void) close_range(hi + 1, ~0U, 0);
}

static void observer_serve(int cmd, int res) {
        struct reading r;
        char c;

        close_other_fds(cmd, res);
        while (read(cmd, &c, 1) == 1) {
                memset(&r, 0, sizeof(r));
                switch (c) {
                case 'r': /* read my clocks */
                        take_reading(&r);
                        break;
                case 'f': { /* fork now, and let the grandchild read */
                        pid_t p = fork();

                        if (p == 0) {
                                take_reading(&r);
                                (void) !write(res, &r, sizeof(r));
                                _exit(0);
                        }
                        (void) waitpid(p, NULL, 0);
                        continue;
                }
                case 's': /* step my namespace's realtime by +100 s */
                        r.err = step_realtime(SYS_adjtimex, 100, 0, false, NULL);
                        take_reading(&r);
                        break;
                default:
                        _exit(2);
                }
                (void) !write(res, &r, sizeof(r));
        }
        _exit(0);
}

static struct observer observer_start(void) {
        int cmd[2], res[2];
        struct observer o;

        if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0) {
                perror("pipe");
                exit(1);
        }
        fflush(stdout);
        o.pid = fork();
        if (o.pid < 0) {
                perror("fork");
                exit(1);
        }
        if (o.pid == 0) {
                close(cmd[1]), close(res[0]);
                observer_serve(cmd[0], res[1]);
        }
        close(cmd[0]), close(res[1]);
        o.cmd = cmd[1];
        o.res = res[0];
        return o;
}

static struct reading observer_ask(const struct observer *o, char c) {
        struct reading r = {.err = -1};

        if (write(o->cmd, &c, 1) != 1 || read(o->res, &r, sizeof(r)) != (ssize_t) sizeof(r))
                printf("FAIL observer: no answer to '%c'\n", c), failures++;
        return r;
}

static void observer_stop(struct observer *o) {
        close(o->cmd);
        close(o->res);
        (void) waitpid(o->pid, NULL, 0);
}

/* A child forked now reads its clocks once. */
static struct reading fresh_child_reading(void) {
        struct observer o = observer_start();
        struct reading r = observer_ask(&o, 'r');

        observer_stop(&o);
        return r;
}

/* ---- a thread that exists before the unshare ------------------------------ */

struct waiter {
        pthread_t thread;
        int go[2];
        int64_t mono;
};

static void *waiter_main(void *userdata) {
        struct waiter *w = userdata;
        char c;

        if (read(w->go[0], &c, 1) == 1)
                w->mono = now(CLOCK_MONOTONIC);
        return NULL;
}

/* ---- capabilities --------------------------------------------------------- */

static int drop_effective(int cap) {
        struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[2];

        if (syscall(SYS_capget, &hdr, data) < 0)
                return errno;
        data[cap / 32].effective &= ~(1U << (cap % 32));
        return syscall(SYS_capset, &hdr, data) < 0 ? errno : 0;
}

static bool has_effective(int cap) {
        struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[2];

        return syscall(SYS_capget, &hdr, data) >= 0 && (data[cap / 32].effective & (1U << (cap % 32)));
}

/* The initial user namespace maps every id onto itself. */
static bool in_initial_user_ns(void) {
        unsigned long a = 1, b = 1, n = 0;
        FILE *f = fopen("/proc/self/uid_map", "re");
        bool initial = true;

        if (!f)
                return true;
        if (fscanf(f, "%lu %lu %lu", &a, &b, &n) == 3)
                initial = a == 0 && b == 0 && n == 4294967295UL;
        fclose(f);
        return initial;
}

/* ---- the steps -------------------------------------------------------------- */

/* The namespace timensctl made for us: settable like any other. */
static void outer_namespace(void) {
        int64_t m0 = now(CLOCK_MONOTONIC), b0 = now(CLOCK_BOOTTIME);

        check_err("outer_settime_monotonic", set_clock(CLOCK_MONOTONIC, m0 + 1000 * NSEC_PER_SEC), 0);
        check_near("outer_monotonic_moved", now(CLOCK_MONOTONIC), m0 + 1000 * NSEC_PER_SEC);
        check_err("outer_settime_boottime", set_clock(CLOCK_BOOTTIME, b0 + 2000 * NSEC_PER_SEC), 0);
        check_near("outer_boottime_moved", now(CLOCK_BOOTTIME), b0 + 2000 * NSEC_PER_SEC);
        check_err("outer_settime_realtime", set_clock(CLOCK_REALTIME, 2000000000 * NSEC_PER_SEC), 0);
        check_near("outer_realtime_moved", now(CLOCK_REALTIME), 2000000000 * NSEC_PER_SEC);

        /* The host's realtime is decades from 2033: a vDSO that reads it
         * is the kernel's own, not one that serves the namespace. */
        if (llabs(vdso_now(CLOCK_REALTIME) - now(CLOCK_REALTIME)) > 3600 * NSEC_PER_SEC) {
                printf("# SKIP vdso: libc's clock_gettime reads the host's clocks (the vDSO is not replaced)\n");
                return;
        }
        vdso_checked = true;
        check_vdso_self("outer_after_settime");
}

/* Sets a clock and reads it back right after: checks PREFIX_settime_NAME
 * and PREFIX_NAME_reads_back. */
static void set_and_check(const char *prefix, const char *name, clockid_t id, int64_t value) {
        char n[96];

        snprintf(n, sizeof(n), "%s_settime_%s", prefix, name);
        check_err(n, set_clock(id, value), 0);
        snprintf(n, sizeof(n), "%s_%s_reads_back", prefix, name);
        check_near(n, now(id), value);
}

/* A clock of the class keeps its distance to the one that was set (one
 * offset per class). */
static void check_siblings(const char *name, clockid_t id, clockid_t base, int64_t distance_before) {
        char n[96];

        snprintf(n, sizeof(n), "inner_%s_follows", name);
        check_near(n, now(id) - now(base), distance_before);
}

struct shift {
        int64_t mono, boot, real; /* inner - outer, per class */
};

/* Unshare and set the new namespace's clocks; returns inner - outer. */
/* time() is the coarse second (lib/core/emulate.c): read between two
 * reads of the coarse clock, in that order (the arguments of one call are
 * evaluated in any order, and a tick between them moved the second: the
 * clock was just set to a whole second), it is the second of one of them. */
static void inner_time_follows(void) {
        int64_t before = now(CLOCK_REALTIME_COARSE) / NSEC_PER_SEC * NSEC_PER_SEC;
        int64_t t = (int64_t) syscall(SYS_time, NULL) * NSEC_PER_SEC;
        int64_t after = now(CLOCK_REALTIME_COARSE) / NSEC_PER_SEC * NSEC_PER_SEC;

        check_near("inner_time_follows", t, t == after ? after : before);
}

static struct shift unshare_and_set(struct waiter *w) {
        int64_t raw_d = now(CLOCK_MONOTONIC_RAW) - now(CLOCK_MONOTONIC);
        int64_t coarse_d = now(CLOCK_MONOTONIC_COARSE) - now(CLOCK_MONOTONIC);
        int64_t tai_d = now(CLOCK_TAI) - now(CLOCK_REALTIME);
        struct reading before, after;
        struct shift s;

        take_reading(&before);
        check_err("unshare_newtime", do_unshare(), 0);
        take_reading(&after);
        check_vdso("after_unshare", &after);
        check_near("unshare_keeps_monotonic", after.mono, before.mono);
        check_near("unshare_keeps_boottime", after.boot, before.boot);
        check_near("unshare_keeps_realtime", after.real, before.real);

        s.mono = 5000 * NSEC_PER_SEC - now(CLOCK_MONOTONIC);
        set_and_check("inner", "monotonic", CLOCK_MONOTONIC, 5000 * NSEC_PER_SEC);
        s.boot = 7000 * NSEC_PER_SEC - now(CLOCK_BOOTTIME);
        set_and_check("inner", "boottime", CLOCK_BOOTTIME, 7000 * NSEC_PER_SEC);
        s.real = 2100000000 * NSEC_PER_SEC - now(CLOCK_REALTIME);
        set_and_check("inner", "realtime", CLOCK_REALTIME, 2100000000 * NSEC_PER_SEC);

        check_vdso_self("inner_after_settime");
        check_siblings("monotonic_raw", CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, raw_d);
        check_siblings("monotonic_coarse", CLOCK_MONOTONIC_COARSE, CLOCK_MONOTONIC, coarse_d);
        check_siblings("realtime_coarse", CLOCK_REALTIME_COARSE, CLOCK_REALTIME, 0);
        check_siblings("tai", CLOCK_TAI, CLOCK_REALTIME, tai_d);
        check_near("inner_gettimeofday_follows", gtod_ns(NULL), now(CLOCK_REALTIME));
        inner_time_follows();

        /* The whole thread group moved, not just the calling thread. */
        (void) !write(w->go[1], "x", 1);
        pthread_join(w->thread, NULL);
        check_near("unshare_moves_waiting_thread", w->mono, now(CLOCK_MONOTONIC));

        /* A setting clock id of the class moves the class. */
        set_and_check("inner", "monotonic_raw", CLOCK_MONOTONIC_RAW, 5000 * NSEC_PER_SEC + raw_d);
        set_and_check("inner", "monotonic_coarse", CLOCK_MONOTONIC_COARSE, 5000 * NSEC_PER_SEC + coarse_d);
        check_near("inner_monotonic_after_class_sets", now(CLOCK_MONOTONIC), 5000 * NSEC_PER_SEC);
        return s;
}

/* A reading of the outer namespace, from the inner one: inner - shift. */
static void check_outer_reading(const char *name, const struct reading *r, const struct shift *s) {
        char n[96];

        snprintf(n, sizeof(n), "%s_monotonic", name);
        check_near(n, r->mono, now(CLOCK_MONOTONIC) - s->mono);
        snprintf(n, sizeof(n), "%s_boottime", name);
        check_near(n, r->boot, now(CLOCK_BOOTTIME) - s->boot);
        snprintf(n, sizeof(n), "%s_realtime", name);
        check_near(n, r->real, now(CLOCK_REALTIME) - s->real);
}

static void check_inner_reading(const char *name, const struct reading *r) {
        char n[96];

        snprintf(n, sizeof(n), "%s_monotonic", name);
        check_near(n, r->mono, now(CLOCK_MONOTONIC));
        snprintf(n, sizeof(n), "%s_boottime", name);
        check_near(n, r->boot, now(CLOCK_BOOTTIME));
        snprintf(n, sizeof(n), "%s_realtime", name);
        check_near(n, r->real, now(CLOCK_REALTIME));
}

static void who_sees_what(struct observer *before, const struct shift *s) {
        struct reading r;

        r = observer_ask(before, 'r');
        check_vdso("child_forked_before", &r);
        check_outer_reading("child_forked_before_stays", &r, s);
        check_far("child_forked_before_not_inner", r.mono, now(CLOCK_MONOTONIC), 10 * NSEC_PER_SEC);
        r = observer_ask(before, 'f');
        check_vdso("grandchild_of_child_before", &r);
        check_outer_reading("grandchild_of_child_before_stays", &r, s);
        r = fresh_child_reading();
        check_vdso("child_forked_after", &r);
        check_inner_reading("child_forked_after_follows", &r);
}

/* lib/kernel/ns.h: a child namespace's offsets are relative to its parent's, so
 * a step of the parent's clock shows in the child too (checks parent_step_*). */
static void parent_step_moves_child(struct observer *before, struct shift *s) {
        int64_t r0 = now(CLOCK_REALTIME);
        struct reading r = observer_ask(before, 's');

        check_err("parent_step_adjtimex_setoffset", r.err, 0);
        check_vdso("parent_after_step", &r);
        check_vdso_self("child_ns_after_parent_step");
        check_near("parent_step_moves_inner_realtime", now(CLOCK_REALTIME), r0 + 100 * NSEC_PER_SEC);
        check_near("parent_step_inner_monotonic_unmoved", now(CLOCK_MONOTONIC) - s->mono, r.mono);
        check_near("parent_step_seen_outside", r.real, now(CLOCK_REALTIME) - s->real);
}

static void settimeofday_steps(struct observer *before, struct observer *after) {
        struct timeval tv = {2200000000, 250000};
        struct timezone tz = {-60, 0}, got;
        struct reading r;

        check_err("settimeofday_time", SYSERR(syscall(SYS_settimeofday, &tv, NULL)), 0);
        check_near("settimeofday_realtime_reads_back", now(CLOCK_REALTIME), 2200000000 * NSEC_PER_SEC + 250000000);
        check_near("settimeofday_gettimeofday_reads_back", gtod_ns(NULL), 2200000000 * NSEC_PER_SEC + 250000000);

        check_err("settimeofday_timezone", SYSERR(syscall(SYS_settimeofday, NULL, &tz)), 0);
        (void) gtod_ns(&got);
        check(got.tz_minuteswest == -60, "settimeofday_timezone_reads_back", "tz_minuteswest %d want -60",
              got.tz_minuteswest);
        r = observer_ask(before, 'r');
        check(r.tz_minuteswest != -60, "settimeofday_timezone_not_outside", "outside tz_minuteswest %d",
              r.tz_minuteswest);
        /* A child that was already there, in the same namespace, sees both. */
        check_vdso_self("after_settimeofday");
        r = observer_ask(after, 'r');
        check_vdso("child_after_unshare_after_settimeofday", &r);
        check_near("settimeofday_seen_by_child_after_unshare", r.real, now(CLOCK_REALTIME));
        check(r.tz_minuteswest == -60, "settimeofday_timezone_seen_by_child_after_unshare",
              "tz_minuteswest %d want -60", r.tz_minuteswest);
}

/* The double fork of every daemon: the middle process exits at once, so
 * the grandchild is reparented (to init) before it reads any clock. It was
 * born in the new namespace and must stay there. */
static void orphan_stays(void) {
        struct reading r = {.err = -1};
        int res[2], status;
        pid_t mid;

        if (pipe2(res, O_CLOEXEC) < 0) {
                perror("pipe");
                exit(1);
        }
        fflush(stdout);
        mid = fork();
        if (mid == 0) {
                pid_t me = getpid();

                if (fork() == 0) {
                        /* Bounded wait for the reparenting (the event), 10 s. */
                        for (int i = 0; i < 10000 && getppid() == me; i++)
                                usleep(1000);
                        take_reading(&r);
                        r.err = getppid() == me;
                        (void) !write(res[1], &r, sizeof(r));
                        _exit(0);
                }
                _exit(0);
        }
        close(res[1]);
        (void) waitpid(mid, &status, 0);
        if (read(res[0], &r, sizeof(r)) != (ssize_t) sizeof(r))
                r.err = -1;
        close(res[0]);
        check(r.err == 0, "orphan_reparented", "err %d", r.err);
        check_vdso("orphan", &r);
        check_inner_reading("orphan_forked_after_unshare_stays", &r);
}

/* exec keeps the process, and so its namespace. */
static void exec_follows(void) {
        char buf[64] = "", self[4096], *end;
        int64_t raw, vdso;
        int out[2], status;
        ssize_t n;
        pid_t p;

        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n < 0 || pipe2(out, O_CLOEXEC) < 0) {
                perror("exec setup");
                exit(1);
        }
        self[n] = '\0';
        fflush(stdout);
        p = fork();
        if (p == 0) {
                dup2(out[1], STDOUT_FILENO);
                execl(self, self, "--print-monotonic", (char *) NULL);
                _exit(127);
        }
        close(out[1]);
        n = read(out[0], buf, sizeof(buf) - 1);
        close(out[0]);
        (void) waitpid(p, &status, 0);
        buf[n > 0 ? n : 0] = '\0';
        raw = strtoll(buf, &end, 10);
        vdso = strtoll(end, NULL, 10);
        check_near("exec_after_unshare_follows", raw, now(CLOCK_MONOTONIC));
        /* A new program gets a new vDSO: it must serve the new namespace. */
        if (vdso_checked)
                check_near("vdso_exec_after_unshare_monotonic", vdso, raw);
}

static void *unshare_thread(void *userdata) {
        int *e = userdata;

        *e = do_unshare();
        if (*e == 0)
                *e = set_clock(CLOCK_MONOTONIC, 12345 * NSEC_PER_SEC);
        return NULL;
}

/* unshare() from a thread that is not the leader moves the whole process. */
static void thread_unshare(void) {
        int status;
        pid_t p;

        fflush(stdout);
        p = fork();
        if (p == 0) {
                pthread_t t;
                int e = -1;

                failures = 0;
                if (pthread_create(&t, NULL, unshare_thread, &e) != 0)
                        _exit(1);
                pthread_join(t, NULL);
                check_err("thread_unshare_and_settime", e, 0);
                check_near("thread_unshare_moves_main_thread", now(CLOCK_MONOTONIC), 12345 * NSEC_PER_SEC);
                check_vdso_self("after_thread_unshare");
                fflush(stdout);
                _exit(failures ? 1 : 0);
        }
        if (p < 0 || waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                failures++;
        check_far("thread_unshare_leaves_parent", now(CLOCK_MONOTONIC), 12345 * NSEC_PER_SEC, 10 * NSEC_PER_SEC);
}

static void adjtimex_steps(void) {
        struct timex tx;
        int64_t r0;
        int e;

        r0 = now(CLOCK_REALTIME);
        e = step_realtime(SYS_adjtimex, 3600, 0, false, &tx);
        check_err("adjtimex_setoffset", e, 0);
        check_near("adjtimex_setoffset_steps", now(CLOCK_REALTIME), r0 + 3600 * NSEC_PER_SEC);
        check_vdso_self("after_adjtimex_setoffset");
        check_near("adjtimex_reports_namespace_time",
                   (int64_t) tx.time.tv_sec * NSEC_PER_SEC + tx.time.tv_usec * ((tx.status & STA_NANO) ? 1 : 1000),
                   now(CLOCK_REALTIME));

        r0 = now(CLOCK_REALTIME);
        e = step_realtime(SYS_adjtimex, -1, 500000000, true, NULL);
        check_err("adjtimex_setoffset_nano_negative", e, 0);
        check_near("adjtimex_setoffset_nano_negative_steps", now(CLOCK_REALTIME), r0 - NSEC_PER_SEC / 2);

        r0 = now(CLOCK_REALTIME);
        e = step_realtime(SYS_clock_adjtime, 10, 0, false, NULL);
        check_err("clock_adjtime_setoffset", e, 0);
        check_near("clock_adjtime_setoffset_steps", now(CLOCK_REALTIME), r0 + 10 * NSEC_PER_SEC);

        /* timekeeping_inject_offset: the result must be a valid wall time. */
        r0 = now(CLOCK_REALTIME);
        e = step_realtime(SYS_adjtimex, -(r0 / NSEC_PER_SEC) - 10, 0, false, NULL);
        check_err("adjtimex_setoffset_before_epoch", e, EINVAL);
        check_near("adjtimex_setoffset_before_epoch_unmoved", now(CLOCK_REALTIME), r0);
}

/* The kernel's checks still apply when the capability is there. */
static void value_checks(void) {
        struct timeval tv = {2300000000, 0};
        struct timezone tz = {16 * 60, 0};
        int64_t m0 = now(CLOCK_MONOTONIC), r0 = now(CLOCK_REALTIME);
        struct timespec bad_nsec = {1000, NSEC_PER_SEC}, negative = {-1, 0}, over = {MONO_SEC_MAX + 1, 0};

        check_err("value_settime_monotonic_nsec_1e9", SYSERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &bad_nsec)),
                  EINVAL);
        check_err("value_settime_monotonic_negative", SYSERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &negative)),
                  EINVAL);
        check_err("value_settime_monotonic_over_limit", SYSERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &over)),
                  EINVAL);
        check_err("value_settime_boottime_over_limit", SYSERR(syscall(SYS_clock_settime, CLOCK_BOOTTIME, &over)),
                  EINVAL);
        check_near("value_failed_settime_monotonic_unmoved", now(CLOCK_MONOTONIC), m0);
        check_err("value_settime_realtime_coarse", set_clock(CLOCK_REALTIME_COARSE, 1000 * NSEC_PER_SEC), EINVAL);
        check_err("value_settime_tai", set_clock(CLOCK_TAI, 1000 * NSEC_PER_SEC), EINVAL);
        check_err("value_settimeofday_tz_out_of_range", SYSERR(syscall(SYS_settimeofday, &tv, &tz)), EINVAL);
        check_near("value_settimeofday_tz_out_of_range_unmoved", now(CLOCK_REALTIME), r0);
}

/* TIME_SETTOD_SEC_MAX (include/linux/time64.h): no wall time at or past it
 * may be set, by clock_settime or by an ADJ_SETOFFSET step; and the step's
 * fraction must be a valid one (timekeeping_validate_timex). */
static void realtime_limits(void) {
        struct timespec at_max = {SETTOD_SEC_MAX, 0};
        int64_t r0 = now(CLOCK_REALTIME), r1;

        check_err("value_settime_realtime_settod_max", SYSERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &at_max)),
                  EINVAL);
        set_and_check("value", "realtime_below_settod_max", CLOCK_REALTIME, (SETTOD_SEC_MAX - 100) * NSEC_PER_SEC);
        r1 = now(CLOCK_REALTIME);
        check_err("value_adjtimex_setoffset_past_settod_max", step_realtime(SYS_adjtimex, 200, 0, false, NULL), EINVAL);
        check_near("value_adjtimex_setoffset_past_settod_max_unmoved", now(CLOCK_REALTIME), r1);
        check_err("value_adjtimex_setoffset_usec_1e6", step_realtime(SYS_adjtimex, 0, 1000000, false, NULL), EINVAL);
        check_err("value_adjtimex_setoffset_nsec_1e9", step_realtime(SYS_adjtimex, 0, 1000000000, true, NULL), EINVAL);
        check_err("value_adjtimex_setoffset_usec_negative", step_realtime(SYS_adjtimex, 1, -1, false, NULL), EINVAL);
        check_near("value_adjtimex_setoffset_bad_fraction_unmoved", now(CLOCK_REALTIME), r1);
        check_err("value_settime_realtime_back", set_clock(CLOCK_REALTIME, r0), 0);
}

/* do_settimeofday64 and timekeeping_inject_offset: no wall time before
 * boot, i.e. below the monotonic clock's reading (the namespace's own). */
static void realtime_before_boot(void) {
        int64_t r0 = now(CLOCK_REALTIME), mono = now(CLOCK_MONOTONIC);
        struct timeval tv = {100, 0};

        check_err("value_settime_realtime_before_boot", set_clock(CLOCK_REALTIME, 100 * NSEC_PER_SEC), EINVAL);
        check_err("value_settimeofday_before_boot", SYSERR(syscall(SYS_settimeofday, &tv, NULL)), EINVAL);
        check_near("value_before_boot_unmoved", now(CLOCK_REALTIME), r0);
        set_and_check("value", "realtime_just_after_boot", CLOCK_REALTIME, mono + 1000 * NSEC_PER_SEC);
        check_err("value_adjtimex_setoffset_before_boot", step_realtime(SYS_adjtimex, -2000, 0, false, NULL), EINVAL);
        check_err("value_settime_realtime_back_from_boot", set_clock(CLOCK_REALTIME, r0), 0);
}

/* A second unshare nests: the new namespace starts from the current one. */
static void nested(void) {
        struct observer mid = observer_start();
        int64_t m0 = now(CLOCK_MONOTONIC), shift;
        struct reading r;

        check_err("nested_unshare", do_unshare(), 0);
        check_near("nested_unshare_keeps_monotonic", now(CLOCK_MONOTONIC), m0);
        shift = 9000 * NSEC_PER_SEC - now(CLOCK_MONOTONIC);
        set_and_check("nested", "monotonic", CLOCK_MONOTONIC, 9000 * NSEC_PER_SEC);
        check_vdso_self("nested");
        r = observer_ask(&mid, 'r');
        check_vdso("nested_child_before", &r);
        check_near("nested_child_before_stays_monotonic", r.mono, now(CLOCK_MONOTONIC) - shift);
        observer_stop(&mid);
        r = fresh_child_reading();
        check_vdso("nested_child_after", &r);
        check_near("nested_child_after_follows_monotonic", r.mono, now(CLOCK_MONOTONIC));
}

static void setters_refused(const char *prefix) {
        struct timeval tv = {2400000000, 0};
        struct timespec ts = {2400000000, 0};
        struct timex tx = {.modes = ADJ_SETOFFSET};
        int64_t m0 = now(CLOCK_MONOTONIC), r0 = now(CLOCK_REALTIME);
        char n[96];

        tx.time.tv_sec = 3600;
#define REFUSED(what, call)                                                                                            \
        do {                                                                                                           \
                int e_ = SYSERR(call);                                                                                 \
                snprintf(n, sizeof(n), "%s_%s", prefix, what);                                                         \
                check_err(n, e_, EPERM);                                                                               \
        } while (0)
        REFUSED("settime_realtime", syscall(SYS_clock_settime, CLOCK_REALTIME, &ts));
        REFUSED("settime_monotonic", syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts));
        REFUSED("settime_boottime", syscall(SYS_clock_settime, CLOCK_BOOTTIME, &ts));
        REFUSED("settimeofday", syscall(SYS_settimeofday, &tv, NULL));
        REFUSED("adjtimex_setoffset", syscall(SYS_adjtimex, &tx));
        REFUSED("clock_adjtime_setoffset", syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
#undef REFUSED
        snprintf(n, sizeof(n), "%s_monotonic_unmoved", prefix);
        check_near(n, now(CLOCK_MONOTONIC), m0);
        snprintf(n, sizeof(n), "%s_realtime_unmoved", prefix);
        check_near(n, now(CLOCK_REALTIME), r0);
}

/* In a child, so that the rest keeps its capabilities. */
static void capabilities_dropped(void) {
        int status;
        pid_t p;

        fflush(stdout);
        p = fork();
        if (p == 0) {
                int e = drop_effective(CAP_SYS_TIME);

                failures = 0;
                check(e == 0 && !has_effective(CAP_SYS_TIME), "drop_cap_sys_time", "errno %s", errname(e));
                setters_refused("no_cap_sys_time");
                /* CAP_SYS_ADMIN is still there: unshare is allowed. */
                check_err("no_cap_sys_time_unshare", do_unshare(), 0);
                e = drop_effective(CAP_SYS_ADMIN);
                check(e == 0 && !has_effective(CAP_SYS_ADMIN), "drop_cap_sys_admin", "errno %s", errname(e));
                check_err("no_cap_sys_admin_unshare", do_unshare(), EPERM);
                fflush(stdout);
                _exit(failures ? 1 : 0);
        }
        if (p < 0 || waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                failures++;
}

int main(int argc, char *argv[]) {
        struct observer before, after;
        struct waiter w = {};
        struct shift s;

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc == 2 && strcmp(argv[1], "--print-monotonic") == 0) {
                int64_t v = vdso_now(CLOCK_MONOTONIC);

                printf("%" PRId64 " %" PRId64 "\n", now(CLOCK_MONOTONIC), v);
                return 0;
        }
        if (in_initial_user_ns()) {
                fprintf(stderr,
                        "rfc-probe: run me in a user namespace (timensctl run -- unshare -U -r %s): a "
                        "setting call that escaped the supervisor must not step the host's clock\n",
                        "rfc-probe");
                return 2;
        }
        if (!has_effective(CAP_SYS_TIME) || !has_effective(CAP_SYS_ADMIN)) {
                fprintf(stderr, "rfc-probe: needs CAP_SYS_TIME and CAP_SYS_ADMIN in its user namespace\n");
                return 2;
        }
        outer_namespace();
        before = observer_start();
        if (pipe2(w.go, O_CLOEXEC) < 0 || pthread_create(&w.thread, NULL, waiter_main, &w) != 0) {
                perror("thread");
                return 1;
        }
        s = unshare_and_set(&w);
        after = observer_start();
        who_sees_what(&before, &s);
        orphan_stays();
        exec_follows();
        parent_step_moves_child(&before, &s);
        settimeofday_steps(&before, &after);
        adjtimex_steps();
        value_checks();
        realtime_limits();
        realtime_before_boot();
        observer_stop(&before);
        observer_stop(&after);
        nested();
        thread_unshare();
        capabilities_dropped();
        printf("# %u passed, %u failed\n", passes, failures);
        return failures ? 1 : 0;
}
