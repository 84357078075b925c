/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* selftest-probe: the checks of the kernel's timens selftests
 * (tools/testing/selftests/timens/), ported as semantics, not code, for
 * tests/bats/selftests.bats. Each prints what it saw, so that the same run
 * under timensctl and under the kernel's own time namespace (unshare -T)
 * can be compared line by line.
 *
 *   read LABEL        exec.c, vfork_exec.c: the five clocks timens.c
 *                     checks, by the vDSO and by the raw syscall, from the
 *                     main thread and from a second thread; procfs.c's
 *                     /proc/uptime and /proc/stat btime, and sysinfo():
 *                     "LABEL WHERE CLOCK PATH RESULT NS", a line each
 *   spawn HOW [CMD]   runs CMD (default: this probe's `read exec`) by HOW:
 *                     fork (fork + exec), vfork (vfork + exec), clone_vm
 *                     (glibc's posix_spawn: clone(CLONE_VM | CLONE_VFORK)
 *                     + exec), thread (fork + exec from a second thread)
 *   nest MODE HOW MONO BOOT [CMD]
 *                     a child namespace: reads "outer-before"; a process
 *                     unshares CLONE_NEWTIME and shifts MONOTONIC by MONO,
 *                     BOOTTIME by BOOT seconds, and CMD (default `read
 *                     inner-exec`) runs in the new namespace by HOW: fork
 *                     (a forked process unshares, reads "unsharer", forks;
 *                     its child reads "inner-fork" and execs), vfork (the
 *                     vfork child unshares and execs: vfork_exec.c), clone_vm
 *                     or thread (a forked process unshares, then spawns
 *                     CMD so); then reads "outer-after"
 *   setns MODE MONO BOOT
 *                     timens.c, procfs.c: unshare, shift, then setns back
 *                     and forth between the two namespaces, reading
 *                     "child", "parent", "child-again" (exit 77: the two
 *                     namespaces have the same /proc/self/ns inode)
 *   timers CLOCK      timerfd.c, timer.c: timerfd and POSIX timers armed
 *                     3600 s ahead (relative and absolute, interval 1 s):
 *                     "KIND REL|ABS CLOCK RESULT LEFT_NS INTERVAL_NS"
 *   nanosleep CLOCK rel|abs
 *                     clock_nanosleep.c: a thread sleeps 3600 s, a handled
 *                     SIGUSR1 to it ends the sleep: "nanosleep REL|ABS CLOCK
 *                     RESULT REM" (REM: seconds left, or "untouched")
 *   futex CLOCK       futex.c: FUTEX_WAIT_BITSET (shared, with
 *                     FUTEX_CLOCK_REALTIME for realtime) 100 ms ahead:
 *                     "futex CLOCK RESULT LATE_NS" (LATE_NS: how long
 *                     after the deadline it ended, by the same clock)
 *
 * MODE: kernel (the offsets through /proc/self/timens_offsets, as the
 * kernel since 5.6 takes them; the unsharer stays where it is, its
 * children enter) or rfc (clock_settime inside, as the 2018 RFC and
 * timensctl take them; the unsharer moves). Setting needs CAP_SYS_TIME
 * over the namespace: run it under unshare -U -r, never on the host.
 * CLOCK: monotonic, boottime, boottime_alarm, realtime.
 *
 * Exits 0 when the probe could do what it was asked (the values are for
 * the caller to judge, except futex's: ETIMEDOUT, never early), 1 when it
 * saw something wrong, 2 on a usage or setup error. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define NSEC_PER_SEC 1000000000LL
#define HOUR 3600

static const char *self;

static const struct {
        const char *name;
        clockid_t id;
} clocks[] = {
        {"monotonic", CLOCK_MONOTONIC},
        {"monotonic_raw", CLOCK_MONOTONIC_RAW},
        {"monotonic_coarse", CLOCK_MONOTONIC_COARSE},
        {"boottime", CLOCK_BOOTTIME},
        {"boottime_alarm", CLOCK_BOOTTIME_ALARM},
        {"realtime", CLOCK_REALTIME},
};

static clockid_t parse_clock(const char *s) {
        for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
                if (strcmp(s, clocks[i].name) == 0)
                        return clocks[i].id;
        fprintf(stderr, "unknown clock %s\n", s);
        exit(2);
}

static const char *errname(int e) {
        const char *n = strerrorname_np(e);

        return n ? n : "E?";
}

static int64_t ts_ns(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

/* 0 or an errno: through libc (the vDSO) or the raw syscall. */
static int get(clockid_t id, bool vdso, struct timespec *ret) {
        if (vdso)
                return clock_gettime(id, ret) < 0 ? errno : 0;
        return syscall(SYS_clock_gettime, id, ret) < 0 ? errno : 0;
}

/* The clock now, raw syscall; exits on failure. */
static struct timespec now(clockid_t id) {
        struct timespec ts;
        int e = get(id, false, &ts);

        if (e) {
                fprintf(stderr, "clock_gettime(%d): %s\n", (int) id, errname(e));
                exit(2);
        }
        return ts;
}

/* ---- read: what a program reads, from two threads ---- */

static void read_all(const char *label, const char *where) {
        /* The first five: timens.c's clocks. */
        for (size_t i = 0; i < 5; i++)
                for (int vdso = 1; vdso >= 0; vdso--) {
                        struct timespec ts;
                        int e = get(clocks[i].id, vdso, &ts);

                        if (e)
                                printf("%s %s %s %s %s -\n", label, where, clocks[i].name, vdso ? "vdso" : "syscall",
                                       errname(e));
                        else
                                printf("%s %s %s %s 0 %" PRId64 "\n", label, where, clocks[i].name,
                                       vdso ? "vdso" : "syscall", ts_ns(&ts));
                }
}

static void *read_thread(void *label) {
        read_all(label, "thread");
        return NULL;
}

/* procfs.c: what /proc/uptime, /proc/stat's btime and sysinfo() say. */
static void read_proc(const char *label) {
        unsigned long long sec = 0, centi = 0, btime = 0;
        struct sysinfo si;
        char line[256];
        FILE *f;

        f = fopen("/proc/uptime", "re");
        if (f && fscanf(f, "%llu.%llu", &sec, &centi) == 2)
                printf("%s main uptime proc 0 %llu\n", label, sec * NSEC_PER_SEC + centi * (NSEC_PER_SEC / 100));
        else
                printf("%s main uptime proc %s -\n", label, errname(errno));
        if (f)
                fclose(f);
        f = fopen("/proc/stat", "re");
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "btime %llu", &btime) == 1)
                        break;
        if (f)
                fclose(f);
        printf("%s main btime proc %s %llu\n", label, btime ? "0" : "ENOENT", btime * NSEC_PER_SEC);
        if (sysinfo(&si) == 0)
                printf("%s main sysinfo syscall 0 %lld\n", label, (long long) si.uptime * NSEC_PER_SEC);
        else
                printf("%s main sysinfo syscall %s -\n", label, errname(errno));
}

static int cmd_read(const char *label) {
        pthread_t t;

        read_all(label, "main");
        read_proc(label);
        fflush(stdout);
        if (pthread_create(&t, NULL, read_thread, (void *) label) != 0 || pthread_join(t, NULL) != 0) {
                fprintf(stderr, "a second thread: failed\n");
                return 2;
        }
        fflush(stdout);
        return 0;
}

/* ---- spawn and nest: exec after fork, vfork, clone(CLONE_VM), from a thread ---- */

static char *const *exec_argv;
static const char *spawn_how;

static int wait_ok(pid_t pid) {
        int status;

        if (pid < 0 || waitpid(pid, &status, 0) != pid)
                return 2;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

static int exec_child(void *arg) {
        (void) arg;
        execv(exec_argv[0], exec_argv);
        _exit(127);
}

/* fork + exec, or what glibc's posix_spawn does: clone(CLONE_VM |
 * CLONE_VFORK) onto a stack of its own, and exec. */
static int fork_exec(void) {
        static char stack[64 * 1024] __attribute__((aligned(16)));
        pid_t pid;

        fflush(stdout);
        if (strcmp(spawn_how, "clone_vm") == 0)
                return wait_ok(clone(exec_child, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, NULL));
        pid = fork();
        if (pid == 0) {
                execv(exec_argv[0], exec_argv);
                _exit(127);
        }
        return wait_ok(pid);
}

static void *fork_exec_thread(void *arg) {
        (void) arg;
        return (void *) (intptr_t) fork_exec();
}

static int fork_exec_from_thread(void) {
        pthread_t t;
        void *r;

        if (pthread_create(&t, NULL, fork_exec_thread, NULL) != 0 || pthread_join(t, &r) != 0)
                return 2;
        return (int) (intptr_t) r;
}

/* Raw syscalls and stack buffers only: it also runs in a vfork child,
 * which shares its parent's memory. 0 or an errno. */
static int write_offsets(int64_t mono, int64_t boot) {
        char buf[256];
        long long m_s = 0, b_s = 0;
        long m_ns = 0, b_ns = 0;
        ssize_t len;
        int fd, n, e = 0;

        /* What the new namespace was given: its parent's offsets, which
         * are from the host's clocks, as the ones written must be. */
        fd = open("/proc/self/timens_offsets", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno;
        len = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (len < 0)
                return errno;
        buf[len] = 0;
        for (char *line = buf, *nl; line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (sscanf(line, "monotonic %lld %ld", &m_s, &m_ns) != 2)
                        (void) sscanf(line, "boottime %lld %ld", &b_s, &b_ns);
        }
        n = snprintf(buf, sizeof(buf), "%d %lld %ld\n%d %lld %ld\n", CLOCK_MONOTONIC, m_s + (long long) mono, m_ns,
                     CLOCK_BOOTTIME, b_s + (long long) boot, b_ns);
        fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return errno;
        if (write(fd, buf, (size_t) n) != n)
                e = errno;
        close(fd);
        return e;
}

static int set_shift(clockid_t id, int64_t sec) {
        struct timespec ts;

        if (sec == 0)
                return 0;
        if (syscall(SYS_clock_gettime, id, &ts) < 0)
                return errno;
        ts.tv_sec += sec;
        return syscall(SYS_clock_settime, id, &ts) < 0 ? errno : 0;
}

static bool kernel_mode;

/* 0 or an errno; safe in a vfork child. */
static int unshare_and_shift(int64_t mono, int64_t boot) {
        int e;

        if (syscall(SYS_unshare, CLONE_NEWTIME) < 0)
                return errno;
        if (kernel_mode)
                return write_offsets(mono, boot);
        e = set_shift(CLOCK_MONOTONIC, mono);
        return e ? e : set_shift(CLOCK_BOOTTIME, boot);
}

static _Noreturn void die_in_child(const char *what, int e) {
        char msg[128];
        int n = snprintf(msg, sizeof(msg), "%s: %s\n", what, errname(e));

        (void) !write(2, msg, (size_t) n);
        _exit(3);
}

/* vfork_exec.c: the vfork child (unshares and) execs; its parent goes on
 * with the memory they shared. */
static int vfork_exec(bool nest, int64_t mono, int64_t boot) {
        pid_t pid;
        int e;

        fflush(stdout);
        pid = vfork();
        if (pid == 0) {
                if (nest && (e = unshare_and_shift(mono, boot)) != 0)
                        die_in_child("unshare and shift", e);
                execv(exec_argv[0], exec_argv);
                _exit(127);
        }
        return wait_ok(pid);
}

/* exec.c: a process unshares; its children, forked or spawned, and what
 * they exec, are in the new namespace. */
static int unsharer(int64_t mono, int64_t boot) {
        pid_t pid;
        int e;

        e = unshare_and_shift(mono, boot);
        if (e)
                die_in_child("unshare and shift", e);
        if (strcmp(spawn_how, "fork") != 0)
                return strcmp(spawn_how, "thread") == 0 ? fork_exec_from_thread() : fork_exec();
        (void) cmd_read("unsharer");
        pid = fork();
        if (pid == 0) {
                (void) cmd_read("inner-fork");
                execv(exec_argv[0], exec_argv);
                _exit(127);
        }
        return wait_ok(pid);
}

static int spawn(bool nest, int64_t mono, int64_t boot) {
        pid_t pid;

        if (strcmp(spawn_how, "vfork") == 0)
                return vfork_exec(nest, mono, boot);
        if (!nest)
                return strcmp(spawn_how, "thread") == 0 ? fork_exec_from_thread() : fork_exec();
        fflush(stdout);
        pid = fork();
        if (pid == 0)
                _exit(unsharer(mono, boot));
        return wait_ok(pid);
}

static int cmd_spawn(int argc, char *argv[], bool nest) {
        static char *deflt[4];
        int64_t mono = 0, boot = 0;
        int r;

        if (nest) {
                kernel_mode = strcmp(argv[0], "kernel") == 0;
                mono = strtoll(argv[2], NULL, 10);
                boot = strtoll(argv[3], NULL, 10);
                argc -= 3;
                argv += 3;
                spawn_how = argv[-2];
        } else {
                spawn_how = argv[0];
        }
        if (strcmp(spawn_how, "fork") != 0 && strcmp(spawn_how, "vfork") != 0 && strcmp(spawn_how, "clone_vm") != 0 &&
            strcmp(spawn_how, "thread") != 0)
                return 2;
        deflt[0] = (char *) self;
        deflt[1] = (char *) "read";
        deflt[2] = (char *) (nest ? "inner-exec" : "exec");
        exec_argv = argc > 1 ? argv + 1 : deflt;
        if (nest && (r = cmd_read("outer-before")) != 0)
                return r;
        r = spawn(nest, mono, boot);
        if (r != 0)
                return r;
        return nest ? cmd_read("outer-after") : 0;
}

/* ---- setns: in and out (timens.c, procfs.c) ---- */

static int enter(int fd) {
        /* A thread that read the clocks may not be quite gone yet: the
         * kernel takes a time namespace only in a single-threaded process. */
        for (int i = 0; i < 1000; i++) {
                if (setns(fd, CLONE_NEWTIME) == 0)
                        return 0;
                if (errno != EUSERS)
                        break;
                usleep(1000);
        }
        fprintf(stderr, "setns: %s\n", errname(errno));
        return 1;
}

static int cmd_setns(int argc, char *argv[]) {
        struct stat st_parent, st_child;
        int parent, child, e;

        if (argc != 3)
                return 2;
        kernel_mode = strcmp(argv[0], "kernel") == 0;
        parent = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
        if (parent < 0 || fstat(parent, &st_parent) < 0)
                return 2;
        e = unshare_and_shift(strtoll(argv[1], NULL, 10), strtoll(argv[2], NULL, 10));
        if (e) {
                fprintf(stderr, "unshare and shift: %s\n", errname(e));
                return 1;
        }
        /* The kernel's unshare makes the namespace of the children. The
         * RFC's moves the caller's clocks too, but the identity is the
         * kernel's under timens as well (supervisor-kns.c): the new
         * namespace is time_for_children in both modes. */
        child = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
        if (child < 0 || fstat(child, &st_child) < 0)
                return 2;
        if (st_child.st_ino == st_parent.st_ino) {
                printf("# SKIP the new namespace has the parent's inode %ju\n", (uintmax_t) st_child.st_ino);
                return 77;
        }
        if (enter(child) || cmd_read("child") || enter(parent) || cmd_read("parent") || enter(child) ||
            cmd_read("child-again"))
                return 1;
        return 0;
}

/* ---- timers (timerfd.c, timer.c) ---- */

/* The time to arm an absolute timer from: an alarm clock counts as its
 * base clock, as timerfd.c reads it. */
static struct timespec base_now(clockid_t c) {
        return now(c == CLOCK_BOOTTIME_ALARM ? CLOCK_BOOTTIME : c);
}

static void print_timer(const char *kind, bool abs, const char *clock, int e, const struct itimerspec *cur) {
        if (e)
                printf("%s %s %s %s - -\n", kind, abs ? "abs" : "rel", clock, errname(e));
        else
                printf("%s %s %s 0 %" PRId64 " %" PRId64 "\n", kind, abs ? "abs" : "rel", clock, ts_ns(&cur->it_value),
                       ts_ns(&cur->it_interval));
}

static struct itimerspec hour_ahead(clockid_t c, bool abs) {
        struct itimerspec its = {.it_value = {HOUR, 0}, .it_interval = {1, 0}};

        if (abs) {
                struct timespec n = base_now(c);

                its.it_value.tv_sec += n.tv_sec;
                its.it_value.tv_nsec = n.tv_nsec;
        }
        return its;
}

static int one_timerfd(clockid_t c, bool abs, struct itimerspec *cur) {
        struct itimerspec its;
        int fd, e = 0;

        fd = timerfd_create(c, TFD_CLOEXEC);
        if (fd < 0)
                return errno;
        its = hour_ahead(c, abs);
        if (timerfd_settime(fd, abs ? TFD_TIMER_ABSTIME : 0, &its, NULL) < 0 || timerfd_gettime(fd, cur) < 0)
                e = errno;
        close(fd);
        return e;
}

static int one_timer(clockid_t c, bool abs, struct itimerspec *cur) {
        struct sigevent sev = {.sigev_notify = SIGEV_NONE};
        struct itimerspec its;
        timer_t t;
        int e = 0;

        if (timer_create(c, &sev, &t) < 0)
                return errno;
        its = hour_ahead(c, abs);
        if (timer_settime(t, abs ? TIMER_ABSTIME : 0, &its, NULL) < 0 || timer_gettime(t, cur) < 0)
                e = errno;
        timer_delete(t);
        return e;
}

static int cmd_timers(const char *clock) {
        clockid_t c = parse_clock(clock);
        struct itimerspec cur;
        int e;

        for (int abs = 0; abs <= 1; abs++) {
                e = one_timerfd(c, abs, &cur);
                print_timer("timerfd", abs, clock, e, &cur);
                e = one_timer(c, abs, &cur);
                print_timer("timer", abs, clock, e, &cur);
        }
        return 0;
}

/* ---- nanosleep (clock_nanosleep.c) ---- */

static struct {
        clockid_t clock;
        bool abs;
        struct timespec req, rem;
        volatile int done, err;
} sleeper;

static void on_usr1(int sig) {
        (void) sig;
}

static void *sleep_thread(void *arg) {
        long r = syscall(SYS_clock_nanosleep, sleeper.clock, sleeper.abs ? TIMER_ABSTIME : 0, &sleeper.req,
                         &sleeper.rem);

        sleeper.err = r < 0 ? errno : 0;
        __atomic_store_n(&sleeper.done, 1, __ATOMIC_SEQ_CST);
        return arg;
}

static int cmd_nanosleep(const char *clock, const char *how) {
        struct sigaction sa = {.sa_handler = on_usr1};
        pthread_t t;
        int i;

        sleeper.clock = parse_clock(clock);
        sleeper.abs = strcmp(how, "abs") == 0;
        sleeper.req = (struct timespec){HOUR, 0};
        if (sleeper.abs)
                sleeper.req.tv_sec += base_now(sleeper.clock).tv_sec;
        /* A value the kernel never writes: the remainder is in [0, 3600]. */
        sleeper.rem = (struct timespec){-1, 0};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, NULL);
        if (pthread_create(&t, NULL, sleep_thread, NULL) != 0)
                return 2;
        /* As clock_nanosleep.c does: signal until the sleep has ended, at
         * growing intervals (a signal before the sleep began is lost). */
        for (i = 0; i < 12 && !__atomic_load_n(&sleeper.done, __ATOMIC_SEQ_CST); i++) {
                usleep(10000 << (i < 8 ? i : 8));
                pthread_kill(t, SIGUSR1);
                usleep(10000);
        }
        if (!__atomic_load_n(&sleeper.done, __ATOMIC_SEQ_CST)) {
                printf("nanosleep %s %s not-interrupted -\n", how, clock);
                return 1;
        }
        pthread_join(t, NULL);
        if (sleeper.rem.tv_sec == -1)
                printf("nanosleep %s %s %s untouched\n", how, clock, sleeper.err ? errname(sleeper.err) : "0");
        else
                printf("nanosleep %s %s %s %lld\n", how, clock, sleeper.err ? errname(sleeper.err) : "0",
                       (long long) sleeper.rem.tv_sec);
        return 0;
}

/* ---- futex (futex.c) ---- */

static int cmd_futex(const char *clock) {
        static uint32_t word;
        clockid_t c = parse_clock(clock);
        int op = FUTEX_WAIT_BITSET | (c == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
        struct timespec deadline, end;
        int64_t late;
        long r;
        int e;

        /* A wrong conversion could sleep for days: fail instead. */
        alarm(10);
        if (get(c, true, &deadline))
                return 2;
        deadline.tv_nsec += NSEC_PER_SEC / 10;
        if (deadline.tv_nsec >= NSEC_PER_SEC) {
                deadline.tv_sec++;
                deadline.tv_nsec -= NSEC_PER_SEC;
        }
        r = syscall(SYS_futex, &word, op, 0, &deadline, NULL, FUTEX_BITSET_MATCH_ANY);
        e = r < 0 ? errno : 0;
        if (get(c, true, &end))
                return 2;
        late = ts_ns(&end) - ts_ns(&deadline);
        printf("futex %s %s %" PRId64 "\n", clock, e ? errname(e) : "0", late);
        return e == ETIMEDOUT && late >= 0 ? 0 : 1;
}

int main(int argc, char *argv[]) {
        const char *cmd = argc > 1 ? argv[1] : "";

        self = argv[0];
        if (strcmp(cmd, "read") == 0 && argc == 3)
                return cmd_read(argv[2]);
        if (strcmp(cmd, "spawn") == 0 && argc >= 3)
                return cmd_spawn(argc - 2, argv + 2, false);
        if (strcmp(cmd, "nest") == 0 && argc >= 6)
                return cmd_spawn(argc - 2, argv + 2, true);
        if (strcmp(cmd, "setns") == 0)
                return cmd_setns(argc - 2, argv + 2);
        if (strcmp(cmd, "timers") == 0 && argc == 3)
                return cmd_timers(argv[2]);
        if (strcmp(cmd, "nanosleep") == 0 && argc == 4)
                return cmd_nanosleep(argv[2], argv[3]);
        if (strcmp(cmd, "futex") == 0 && argc == 3)
                return cmd_futex(argv[2]);
        fprintf(stderr, "usage: see the comment at the top of tests/helpers/selftest-probe.c\n");
        return 2;
}
