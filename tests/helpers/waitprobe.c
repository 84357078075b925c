/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* waitprobe: one absolute wait, its deadline taken from the namespace's
 * clock, its length measured on the host's clock. The semantics of the
 * kernel's tools/testing/selftests/timens/ (clock_nanosleep.c, timerfd.c,
 * timer.c, futex.c), ported: an absolute wait must end when the
 * namespace's clock reaches the deadline, not when the host's does.
 *
 *     waitprobe KIND CLOCK MS        wait MS ms from now, absolutely
 *     waitprobe sig-sleep CLOCK MS SIGMS restart|norestart
 *                                    SIGUSR1 (handled) after SIGMS ms
 *     waitprobe stop-sleep CLOCK MS SIGMS   SIGSTOP + SIGCONT after SIGMS ms
 *     waitprobe late-stop-sleep CLOCK MS SIGMS   the same, after another
 *                                    thread's absolute sleep of 100 ms
 *                                    that starts at SIGMS ms (a timensd
 *                                    handed over meanwhile serves it)
 *     waitprobe decoy-stop-sleep CLOCK MS SIGMS   stop-sleep, after a
 *                                    short absolute sleep (our wait page
 *                                    mapped) and a mapping named as wait
 *                                    pages are, with their magic, placed
 *                                    low so that it comes first in the maps
 *                                    (as a second page of ours would)
 *     waitprobe exec-thread CLOCK MS while the main thread sleeps 10 x MS,
 *                                    another execs "waitprobe sleep CLOCK MS"
 *     waitprobe exec-busy CLOCK N    4 threads in relative 100 us sleeps
 *                                    while the main thread execs itself
 *                                    after 5 ms, N times in a row (in a
 *                                    rated namespace every sleep is held:
 *                                    threads die held, at each de_thread)
 *     waitprobe jump-KIND CLOCK MS   KIND (sleep, cond, waitv) until 2 x MS
 *                                    from now, while another thread moves
 *                                    CLOCK on by MS after MS / 2 ms: ends
 *                                    after MS (needs CAP_SYS_TIME: run it
 *                                    under unshare -U -r, never on the host)
 *     waitprobe errnos               the error cases of the wait syscalls,
 *                                    one "CASE RET ERRNO" line each: the
 *                                    same on the host and under timensctl
 *     waitprobe rfc-KIND CLOCK MS SHIFT_SEC
 *                                    RFC style: unshare(CLONE_NEWTIME), move
 *                                    CLOCK on by SHIFT_SEC with clock_settime,
 *                                    then KIND (needs CAP_SYS_TIME: run it
 *                                    under unshare -U -r, never on the host)
 *
 * KIND: sleep (clock_nanosleep TIMER_ABSTIME), timerfd (TFD_TIMER_ABSTIME,
 * then read and timerfd_gettime), timer (timer_settime TIMER_ABSTIME,
 * SIGEV_SIGNAL), cond (pthread_cond_timedwait, condattr clock CLOCK),
 * sem (sem_timedwait: realtime), lockpi (pthread_mutex_timedlock on a PI
 * mutex: FUTEX_LOCK_PI, realtime), waitv (futex_waitv), mq
 * (mq_timedreceive on an empty queue: realtime), threads (32
 * threads sleeping to one deadline at once), rel-sleep and
 * futex-wait (relative: never intercepted).
 * CLOCK: realtime, monotonic, boottime, tai.
 *
 * Prints one line "KIND CLOCK result=R elapsed=E ms", where E is measured
 * on the host's clock (the mtime the kernel gives a file we write: coarse
 * realtime, which no filter sees), and R the wait's outcome (0, ETIMEDOUT,
 * EINTR, ...). Exits 0 if the wait ended within 50 ms of the deadline
 * (and, for sig-*, as the kernel ends it), 1 otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define SLACK_MS 50

static int host_fd = -1;

/* The host's CLOCK_REALTIME_COARSE, as the kernel stamps a write. */
static int64_t host_ms(void) {
        struct stat st;

        if (pwrite(host_fd, "x", 1, 0) != 1 || fstat(host_fd, &st) < 0) {
                perror("host clock");
                exit(2);
        }
        return (int64_t) st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

static clockid_t parse_clock(const char *s) {
        if (strcmp(s, "realtime") == 0)
                return CLOCK_REALTIME;
        if (strcmp(s, "monotonic") == 0)
                return CLOCK_MONOTONIC;
        if (strcmp(s, "boottime") == 0)
                return CLOCK_BOOTTIME;
        if (strcmp(s, "tai") == 0)
                return CLOCK_TAI;
        fprintf(stderr, "unknown clock %s\n", s);
        exit(2);
}

/* The deadline, from the namespace's clock (a raw syscall, the emulated
 * one, as the selftests read it with and without the vDSO alike). */
static struct timespec deadline(clockid_t c, long ms) {
        struct timespec ts;

        if (syscall(SYS_clock_gettime, c, &ts) < 0) {
                perror("clock_gettime");
                exit(2);
        }
        ts.tv_sec += ms / 1000;
        ts.tv_nsec += (ms % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
        }
        return ts;
}

static clockid_t late_clock; /* late-stop-sleep's clock, for its thread */

static int do_sleep(clockid_t c, long ms) {
        struct timespec d = deadline(c, ms);
        int r;

        /* The raw syscall: glibc would retry nothing, but be explicit. */
        r = (int) syscall(SYS_clock_nanosleep, c, TIMER_ABSTIME, &d, NULL);
        return r < 0 ? errno : 0;
}

static int do_rel_sleep(long ms) {
        struct timespec d = {ms / 1000, (ms % 1000) * 1000000};

        return clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
}

static int do_futex_wait(long ms) {
        static uint32_t word;
        struct timespec d = {ms / 1000, (ms % 1000) * 1000000};

        return syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &d, NULL, 0) < 0 ? errno : 0;
}

/* timerfd.c of the selftests: an absolute timer on the namespace's clock
 * fires at its deadline; timerfd_gettime and old_value are relative (the
 * time left), whatever the offset. */
static int do_timerfd(clockid_t c, long ms) {
        struct itimerspec its = {.it_value = deadline(c, ms)}, cur, old;
        uint64_t n = 0;
        int fd = timerfd_create(c, TFD_CLOEXEC);
        double left;

        if (fd < 0 || timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
                return errno;
        if (timerfd_gettime(fd, &cur) < 0)
                return errno;
        left = cur.it_value.tv_sec * 1e3 + cur.it_value.tv_nsec / 1e6;
        if (left > ms || left < ms - SLACK_MS) {
                printf("timerfd_gettime: %.1f ms left, want about %ld\n", left, ms);
                return EBADE;
        }
        /* Same deadline again: the old value is the time left, relative. */
        its.it_value = deadline(c, ms);
        if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, &old) < 0)
                return errno;
        left = old.it_value.tv_sec * 1e3 + old.it_value.tv_nsec / 1e6;
        if (left > ms || left < ms - SLACK_MS) {
                printf("old_value: %.1f ms left, want about %ld\n", left, ms);
                return EBADE;
        }
        if (read(fd, &n, sizeof(n)) != sizeof(n) || n != 1)
                return n == 0 ? errno : EBADE;
        close(fd);
        return 0;
}

/* timer.c of the selftests: a POSIX timer armed absolutely signals at
 * its deadline; timer_gettime is relative. */
static int do_timer(clockid_t c, long ms) {
        struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN};
        struct itimerspec its = {.it_value = deadline(c, ms)}, cur;
        sigset_t set;
        timer_t t;
        double left;

        sigemptyset(&set);
        sigaddset(&set, SIGRTMIN);
        sigprocmask(SIG_BLOCK, &set, NULL);
        if (timer_create(c, &sev, &t) < 0 || timer_settime(t, TIMER_ABSTIME, &its, NULL) < 0)
                return errno;
        if (timer_gettime(t, &cur) < 0)
                return errno;
        left = cur.it_value.tv_sec * 1e3 + cur.it_value.tv_nsec / 1e6;
        if (left > ms || left < ms - SLACK_MS) {
                printf("timer_gettime: %.1f ms left, want about %ld\n", left, ms);
                return EBADE;
        }
        return sigwaitinfo(&set, NULL) == SIGRTMIN ? 0 : errno;
}

static int do_cond(clockid_t c, long ms) {
        pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
        pthread_condattr_t a;
        pthread_cond_t cv;
        struct timespec d;
        int r;

        pthread_condattr_init(&a);
        if (pthread_condattr_setclock(&a, c) != 0)
                return EINVAL;
        pthread_cond_init(&cv, &a);
        pthread_mutex_lock(&m);
        d = deadline(c, ms);
        do
                r = pthread_cond_timedwait(&cv, &m, &d);
        while (r == 0);
        return r;
}

static int do_sem(long ms) {
        struct timespec d;
        sem_t s;
        int r;

        sem_init(&s, 0, 0);
        d = deadline(CLOCK_REALTIME, ms);
        do
                r = sem_timedwait(&s, &d);
        while (r < 0 && errno == EINTR);
        return r < 0 ? errno : 0;
}

static pthread_mutex_t pi;
static pthread_barrier_t held;

static void *hold_pi(void *arg) {
        pthread_mutex_lock(&pi);
        pthread_barrier_wait(&held);
        pause();
        return arg;
}

static int do_lockpi(long ms) {
        pthread_mutexattr_t a;
        struct timespec d;
        pthread_t t;

        pthread_mutexattr_init(&a);
        pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
        pthread_mutex_init(&pi, &a);
        pthread_barrier_init(&held, NULL, 2);
        pthread_create(&t, NULL, hold_pi, NULL);
        pthread_barrier_wait(&held);
        d = deadline(CLOCK_REALTIME, ms);
        return pthread_mutex_timedlock(&pi, &d);
}

static int do_mq(long ms) {
        struct mq_attr attr = {.mq_maxmsg = 1, .mq_msgsize = 8};
        char name[64], buf[8];
        struct timespec d;
        mqd_t q;
        int r;

        snprintf(name, sizeof(name), "/waitprobe-%d", getpid());
        q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &attr);
        if (q == (mqd_t) -1)
                return errno;
        mq_unlink(name);
        d = deadline(CLOCK_REALTIME, ms);
        r = mq_timedreceive(q, buf, sizeof(buf), NULL, &d) < 0 ? errno : 0;
        mq_close(q);
        return r;
}

struct waitv {
        uint64_t val, uaddr;
        uint32_t flags, reserved;
};

static int do_waitv(clockid_t c, long ms) {
        static uint32_t word;
        struct waitv w = {.val = 0, .uaddr = (uintptr_t) &word, .flags = 2 /* FUTEX2_SIZE_U32 */ | 128 /* PRIVATE */};
        struct timespec d = deadline(c, ms);

        return syscall(449, &w, 1, 0, &d, c) < 0 ? errno : 0;
}

static struct timespec shared_deadline;
static clockid_t shared_clock;

static void *sleep_thread(void *arg) {
        long r = syscall(SYS_clock_nanosleep, shared_clock, TIMER_ABSTIME, &shared_deadline, NULL);

        return (void *) (r < 0 ? (long) errno : 0L);
}

static int do_threads(clockid_t c, long ms) {
        pthread_t t[32];
        int r = 0;

        shared_clock = c;
        shared_deadline = deadline(c, ms);
        for (int i = 0; i < 32; i++)
                if (pthread_create(&t[i], NULL, sleep_thread, NULL) != 0)
                        return EAGAIN;
        for (int i = 0; i < 32; i++) {
                void *ret;

                pthread_join(t[i], &ret);
                if (ret)
                        r = (int) (long) ret;
        }
        return r;
}

/* A thread execs while the leader is held in a converted wait: the new
 * program takes the leader's id (de_thread), and must run normally. */
static const char *self;
static char exec_clock[16], exec_ms[16];

static void *exec_later(void *arg) {
        long ms = atol(exec_ms);
        struct timespec d = {ms / 1000, (ms % 1000) * 1000000};

        nanosleep(&d, NULL);
        execl(self, self, "sleep", exec_clock, exec_ms, (char *) NULL);
        perror("execl");
        exit(2);
        return arg;
}

static int do_exec_thread(const char *clock, clockid_t c, long ms) {
        pthread_t t;

        snprintf(exec_clock, sizeof(exec_clock), "%s", clock);
        snprintf(exec_ms, sizeof(exec_ms), "%ld", ms);
        pthread_create(&t, NULL, exec_later, NULL);
        do_sleep(c, 10 * ms);
        return EBADE; /* the exec ends this program first */
}

/* Threads killed by an exec (de_thread) while the supervisor holds their
 * waits: the exec waits until their tracer reaps them. */
static void *busy_sleeper(void *arg) {
        const struct timespec d = {0, 100000};

        for (;;)
                nanosleep(&d, NULL);
        return arg;
}

static int do_exec_busy(const char *clock, long n) {
        const struct timespec d = {0, 5000000};
        char next[24];
        pthread_t t;

        if (n <= 0)
                return 0;
        for (int i = 0; i < 4; i++)
                pthread_create(&t, NULL, busy_sleeper, NULL);
        nanosleep(&d, NULL);
        snprintf(next, sizeof(next), "%ld", n - 1);
        execl(self, self, "exec-busy", clock, next, (char *) NULL);
        perror("execl");
        return EBADE;
}

/* A clock moved forward during a wait: the deadline comes sooner, as a
 * REALTIME timer's does when the kernel's clock is set (clock_was_set). */
static clockid_t jump_clock;
static long jump_ms;

static void *jump_later(void *arg) {
        struct timespec d = {jump_ms / 2000, (jump_ms / 2 % 1000) * 1000000}, ts;

        nanosleep(&d, NULL);
        ts = deadline(jump_clock, jump_ms);
        if (syscall(SYS_clock_settime, jump_clock, &ts) < 0) {
                perror("clock_settime");
                exit(2);
        }
        return arg;
}

static void start_jump(clockid_t c, long ms) {
        pthread_t t;

        jump_clock = c;
        jump_ms = ms;
        pthread_create(&t, NULL, jump_later, NULL);
}

/* RFC style: the caller moves into a new namespace and sets its clock. */
static void rfc_setup(clockid_t c, long shift) {
        struct timespec ts;

        if (unshare(0x80 /* CLONE_NEWTIME */) < 0 || syscall(SYS_clock_gettime, c, &ts) < 0) {
                perror("unshare(CLONE_NEWTIME)");
                exit(2);
        }
        ts.tv_sec += shift;
        if (syscall(SYS_clock_settime, c == CLOCK_BOOTTIME ? CLOCK_BOOTTIME : c, &ts) < 0) {
                perror("clock_settime");
                exit(2);
        }
}

/* Bad input gets the kernel's errno: anything the supervisor cannot
 * convert goes to the kernel unchanged. BAD is an unmapped address. */
static void errno_case(const char *name, long r) {
        printf("%s %ld %s\n", name, r < 0 ? -1L : r, r < 0 ? strerrorname_np(errno) : "0");
}

#define BAD ((void *) 1)

static int do_errnos(void) {
        struct timespec past = {0, 0}, bad_nsec = {0, 1000000000}, neg = {-1, 0};
        struct itimerspec ok = {.it_value = {1, 0}}, bad_int = {.it_interval = {0, 1000000000}, .it_value = {1, 0}};
        struct sigevent sev = {.sigev_notify = SIGEV_NONE};
        uint32_t word = 0;
        struct waitv w = {.uaddr = (uintptr_t) &word, .flags = 2 | 128};
        int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        timer_t t;

        timer_create(CLOCK_MONOTONIC, &sev, &t);
        errno_case("nanosleep_null", syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, NULL, NULL));
        errno_case("nanosleep_bad", syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, BAD, NULL));
        errno_case("nanosleep_nsec", syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &bad_nsec, NULL));
        errno_case("nanosleep_neg", syscall(SYS_clock_nanosleep, CLOCK_BOOTTIME, TIMER_ABSTIME, &neg, NULL));
        errno_case("nanosleep_past", syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &past, BAD));
        errno_case("nanosleep_raw", syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC_RAW, TIMER_ABSTIME, &past, NULL));
        errno_case("nanosleep_coarse",
                   syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC_COARSE, TIMER_ABSTIME, &past, NULL));
        errno_case("nanosleep_clock99", syscall(SYS_clock_nanosleep, 99, TIMER_ABSTIME, &past, NULL));
        errno_case("nanosleep_alarm", syscall(SYS_clock_nanosleep, CLOCK_BOOTTIME_ALARM, TIMER_ABSTIME, &past, NULL));
        errno_case("nanosleep_alarm_flags",
                   syscall(SYS_clock_nanosleep, CLOCK_REALTIME_ALARM, TIMER_ABSTIME | 2, &past, NULL));
        errno_case("timerfd_badfd", syscall(SYS_timerfd_settime, 999, TFD_TIMER_ABSTIME, &ok, NULL));
        errno_case("timerfd_notimer", syscall(SYS_timerfd_settime, 0, TFD_TIMER_ABSTIME, &ok, NULL));
        errno_case("timerfd_flags", syscall(SYS_timerfd_settime, tfd, TFD_TIMER_ABSTIME | 0x100, &ok, NULL));
        errno_case("timerfd_null", syscall(SYS_timerfd_settime, tfd, TFD_TIMER_ABSTIME, NULL, NULL));
        errno_case("timerfd_interval", syscall(SYS_timerfd_settime, tfd, TFD_TIMER_ABSTIME, &bad_int, NULL));
        errno_case("timerfd_old_bad", syscall(SYS_timerfd_settime, tfd, TFD_TIMER_ABSTIME, &ok, BAD));
        errno_case("timerfd_cancel_mono",
                   syscall(SYS_timerfd_settime, tfd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &ok, NULL));
        errno_case("timer_badid", syscall(SYS_timer_settime, 12345, TIMER_ABSTIME, &ok, NULL));
        errno_case("timer_null", syscall(SYS_timer_settime, t, TIMER_ABSTIME, NULL, NULL));
        errno_case("timer_interval", syscall(SYS_timer_settime, t, TIMER_ABSTIME, &bad_int, NULL));
        errno_case("timer_old_bad", syscall(SYS_timer_settime, t, TIMER_ABSTIME, &ok, BAD));
        errno_case("futex_bitset0", syscall(SYS_futex, &word, FUTEX_WAIT_BITSET, 0, &past, NULL, 0));
        errno_case("futex_bad", syscall(SYS_futex, &word, FUTEX_WAIT_BITSET, 0, BAD, NULL, ~0U));
        errno_case("futex_nsec", syscall(SYS_futex, &word, FUTEX_WAIT_BITSET, 0, &bad_nsec, NULL, ~0U));
        errno_case("futex_value", syscall(SYS_futex, &word, FUTEX_WAIT_BITSET, 1, &past, NULL, ~0U));
        errno_case("futex_past", syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, 0, &past, NULL, ~0U));
        errno_case("futex_past_rt",
                   syscall(SYS_futex, &word, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 0, &past, NULL, ~0U));
        errno_case("futex_lockpi_rt",
                   syscall(SYS_futex, &word, FUTEX_LOCK_PI | FUTEX_CLOCK_REALTIME, 0, &past, NULL, 0));
        errno_case("futex_uaddr_bad", syscall(SYS_futex, BAD, FUTEX_WAIT_BITSET, 0, &past, NULL, ~0U));
        errno_case("waitv_flags", syscall(449, &w, 1, 1, &past, CLOCK_MONOTONIC));
        errno_case("waitv_clock", syscall(449, &w, 1, 0, &past, CLOCK_BOOTTIME));
        errno_case("waitv_bad", syscall(449, &w, 1, 0, BAD, CLOCK_MONOTONIC));
        errno_case("waitv_past", syscall(449, &w, 1, 0, &past, CLOCK_REALTIME));
        errno_case("mq_badfd", syscall(SYS_mq_timedreceive, 999, &word, 8, NULL, &past));
        errno_case("mq_bad", syscall(SYS_mq_timedreceive, 0, &word, 8, NULL, BAD));
        errno_case("mq_nsec", syscall(SYS_mq_timedsend, 0, &word, 4, 0, &bad_nsec));
        errno_case("mq_notmq", syscall(SYS_mq_timedsend, 0, &word, 4, 0, &past));
        errno_case("waitv_nsec", syscall(449, &w, 1, 0, &bad_nsec, CLOCK_MONOTONIC));
        return 0;
}

/* Signals during an absolute sleep: what the kernel does (EINTR for a
 * handled signal, SA_RESTART or not — ERESTARTNOHAND; a stop and continue
 * resumes the sleep to its deadline) must happen here too. */
static void on_usr1(int sig) {
        (void) sig;
}

struct sender {
        long ms;
        int sig;
        pthread_t target;
};

/* A child that sends us SIGCONT after ms: a stopped program cannot. */
static void cont_later(long ms) {
        if (fork() == 0) {
                struct timespec d = {ms / 1000, (ms % 1000) * 1000000};

                nanosleep(&d, NULL);
                kill(getppid(), SIGCONT);
                _exit(0);
        }
}

static void *send_later(void *arg) {
        struct sender *s = arg;
        struct timespec d = {s->ms / 1000, (s->ms % 1000) * 1000000};

        nanosleep(&d, NULL);
        if (s->sig == SIGSTOP) {
                kill(getpid(), SIGSTOP);
                nanosleep(&(struct timespec){0, 20000000}, NULL);
                /* Stopped with the whole group: continued by our child. */
                return NULL;
        }
        pthread_kill(s->target, s->sig);
        return NULL;
}

static int do_sig_sleep(clockid_t c, long ms, long sig_ms, int sig, int flags) {
        struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = flags};
        static struct sender snd;
        pthread_t t;

        sigaction(SIGUSR1, &sa, NULL);
        snd = (struct sender){sig_ms, sig, pthread_self()};
        if (sig == SIGSTOP)
                cont_later(sig_ms + 100);
        pthread_create(&t, NULL, send_later, &snd);
        return do_sleep(c, ms);
}

/* After sig_ms, another thread's absolute sleep of 100 ms (held by
 * whoever serves then), then SIGSTOP + SIGCONT, which restart the first
 * thread's sleep: it reads its slot again, which must still hold its own
 * deadline. */
static void *late_sleep(void *arg) {
        struct sender *s = arg;
        struct timespec d = {s->ms / 1000, (s->ms % 1000) * 1000000};

        nanosleep(&d, NULL);
        (void) do_sleep(late_clock, 100);
        return send_later(&(struct sender){0, SIGSTOP, s->target});
}

/* A second "wait page" low in the address space: a memfd of the name and
 * magic of ours, mapped as ours are (lib/supervisor/supervisor-wait.c). */
static int map_decoy_page(void) {
        int fd = memfd_create("timens-wait", MFD_CLOEXEC);
        void *p = MAP_FAILED;

        if (fd < 0 || ftruncate(fd, 16 * 4096) < 0 || pwrite(fd, "timens-wait-pg1", 16, 0) != 16)
                return -1;
        for (uintptr_t at = 0x10000000; at < 0x80000000 && p == MAP_FAILED; at += 0x10000000)
                p = mmap((void *) at, 16 * 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
        close(fd);
        return p == MAP_FAILED ? -1 : 0;
}

static int do_decoy_sleep(clockid_t c, long ms, long sig_ms) {
        if (do_sleep(c, 20) != 0 || map_decoy_page() < 0)
                return -1;
        return do_sig_sleep(c, ms, sig_ms, SIGSTOP, 0);
}

static int do_late_sleep(clockid_t c, long ms, long sig_ms) {
        static struct sender snd;
        pthread_t t;

        snd = (struct sender){sig_ms, SIGSTOP, pthread_self()};
        late_clock = c;
        cont_later(sig_ms + 300);
        pthread_create(&t, NULL, late_sleep, &snd);
        return do_sleep(c, ms);
}

int main(int argc, char **argv) {
        char tmpl[] = "/tmp/waitprobe.XXXXXX";
        const char *kind;
        clockid_t c;
        long ms, expect_ms;
        int64_t t0, t1;
        int r, want = 0;
        bool jump = false;

        if (argc == 2 && strcmp(argv[1], "errnos") == 0)
                return do_errnos();
        if (argc < 4) {
                fprintf(stderr, "usage: waitprobe KIND CLOCK MS [SIGMS [restart|norestart]]\n");
                return 2;
        }
        kind = argv[1];
        self = argv[0];
        c = parse_clock(argv[2]);
        ms = atol(argv[3]);
        if (strcmp(kind, "exec-busy") == 0) {
                r = do_exec_busy(argv[2], ms);
                printf("exec-busy %s result=%s\n", argv[2], r ? strerrorname_np(r) : "0");
                return r ? 1 : 0;
        }
        if (strncmp(kind, "jump-", 5) == 0) {
                start_jump(c, ms);
                kind += 5;
                jump = true;
        }
        if (strncmp(kind, "rfc-", 4) == 0 && argc == 5) {
                rfc_setup(c, atol(argv[4]));
                kind += 4;
                argc--;
        }
        expect_ms = ms;
        if (jump)
                ms *= 2;
        host_fd = mkstemp(tmpl);
        if (host_fd < 0)
                return 2;
        unlink(tmpl);
        t0 = host_ms();
        if (strcmp(kind, "sleep") == 0)
                r = do_sleep(c, ms);
        else if (strcmp(kind, "rel-sleep") == 0)
                r = do_rel_sleep(ms);
        else if (strcmp(kind, "futex-wait") == 0)
                r = do_futex_wait(ms), want = ETIMEDOUT;
        else if (strcmp(kind, "timerfd") == 0)
                r = do_timerfd(c, ms);
        else if (strcmp(kind, "timer") == 0)
                r = do_timer(c, ms);
        else if (strcmp(kind, "cond") == 0)
                r = do_cond(c, ms), want = ETIMEDOUT;
        else if (strcmp(kind, "sem") == 0)
                r = do_sem(ms), want = ETIMEDOUT;
        else if (strcmp(kind, "lockpi") == 0)
                r = do_lockpi(ms), want = ETIMEDOUT;
        else if (strcmp(kind, "exec-thread") == 0)
                r = do_exec_thread(argv[2], c, ms);
        else if (strcmp(kind, "threads") == 0)
                r = do_threads(c, ms);
        else if (strcmp(kind, "mq") == 0)
                r = do_mq(ms), want = ETIMEDOUT;
        else if (strcmp(kind, "waitv") == 0)
                r = do_waitv(c, ms), want = ETIMEDOUT;
        else if (strcmp(kind, "sig-sleep") == 0 && argc == 6) {
                long sig_ms = atol(argv[4]);

                r = do_sig_sleep(c, ms, sig_ms, SIGUSR1, strcmp(argv[5], "restart") == 0 ? SA_RESTART : 0);
                want = EINTR, expect_ms = sig_ms;
        } else if (strcmp(kind, "stop-sleep") == 0 && argc == 5)
                r = do_sig_sleep(c, ms, atol(argv[4]), SIGSTOP, 0);
        else if (strcmp(kind, "late-stop-sleep") == 0 && argc == 5)
                r = do_late_sleep(c, ms, atol(argv[4]));
        else if (strcmp(kind, "decoy-stop-sleep") == 0 && argc == 5)
                r = do_decoy_sleep(c, ms, atol(argv[4]));
        else {
                fprintf(stderr, "unknown kind %s\n", kind);
                return 2;
        }
        t1 = host_ms();
        printf("%s %s result=%s elapsed=%lld ms\n", kind, argv[2], r ? strerrorname_np(r) : "0", (long long) (t1 - t0));
        /* The coarse clock may lag by a tick: 10 ms of grace below. */
        return r == want && t1 - t0 >= expect_ms - 10 && t1 - t0 <= expect_ms + SLACK_MS ? 0 : 1;
}
