/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rateprobe: waits and reads in a namespace whose clocks run at a rate.
 *
 *     rateprobe wait KIND MS   one wait of MS ms of the namespace's clock;
 *                              prints "KIND elapsed=E ms" with E measured
 *                              on the host's clock
 *     rateprobe read SEC       reads MONOTONIC and REALTIME through the
 *                              vDSO and the raw syscall, sleeps SEC host
 *                              seconds (a busy loop on the host's clock:
 *                              no wait a rate would change), reads again;
 *                              prints "vdso_mono= sys_mono= vdso_real=
 *                              sys_real= host=" in ns advanced
 *     rateprobe left select|nanosleep MS SIGMS
 *                              a wait of MS ms interrupted by SIGALRM
 *                              (setitimer) after SIGMS ms; prints the
 *                              time left it reports ("left=L ms")
 *     rateprobe old KIND       arms KIND (itimer, timer, timerfd) for 10 s
 *                              with an interval of 3 s, then disarms it
 *                              after 100 ms (the namespace's): prints
 *                              the old value it returned ("value=V
 *                              interval=I", ms); KIND timerfd-get,
 *                              timer-get, itimer-get: what
 *                              timerfd_gettime, timer_gettime, getitimer
 *                              read instead; timerfd-rt-get and
 *                              timerfd-rtabs-get: a CLOCK_REALTIME
 *                              timerfd set relative, or absolute 10 s
 *                              ahead
 *     rateprobe alarm-left S   alarm(S), then alarm(0) after 100 ms (the
 *                              namespace's): prints what the second
 *                              returned ("left=N")
 *     rateprobe mono-loop MS   reads MONOTONIC through the vDSO and the
 *                              syscall in turn for MS host ms; prints
 *                              "backwards=N" (reads below the one before)
 *
 * KIND: nanosleep, clock_nanosleep (relative, MONOTONIC), abs_sleep
 * (TIMER_ABSTIME on MONOTONIC), realtime_sleep (relative, REALTIME),
 * poll, ppoll, select, pselect, epoll, futex (FUTEX_WAIT), sigtimedwait,
 * poll-converted (a timeout a killed timensd converted: MS host ms),
 * timerfd, timer (POSIX, SIGEV_SIGNAL), itimer (setitimer), alarm (the
 * last two: MS rounded to what they take: microseconds, whole seconds).
 *
 * The host's clock is the mtime the kernel stamps on a file we write
 * (coarse realtime, which no filter sees) — as waitprobe does. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>

#include "wait-convert.h"
#include <unistd.h>

static int host_fd = -1;

static int64_t host_ns(void) {
        struct stat st;

        if (pwrite(host_fd, "x", 1, 0) != 1 || fstat(host_fd, &st) < 0) {
                perror("host clock");
                exit(2);
        }
        return (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

static int64_t ns_of(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int64_t vdso_ns(clockid_t c) {
        struct timespec ts;

        clock_gettime(c, &ts);
        return ns_of(&ts);
}

static int64_t sys_ns(clockid_t c) {
        struct timespec ts;

        syscall(SYS_clock_gettime, c, &ts);
        return ns_of(&ts);
}

static void on_signal(int sig) {
        (void) sig;
}

static int do_wait(const char *kind, long ms) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
        sigset_t set;
        int r = 0;

        if (strcmp(kind, "nanosleep") == 0)
                r = nanosleep(&ts, NULL);
        else if (strcmp(kind, "clock_nanosleep") == 0)
                r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
        else if (strcmp(kind, "realtime_sleep") == 0)
                r = clock_nanosleep(CLOCK_REALTIME, 0, &ts, NULL);
        else if (strcmp(kind, "abs_sleep") == 0) {
                struct timespec now;

                clock_gettime(CLOCK_MONOTONIC, &now);
                now.tv_sec += ts.tv_sec;
                now.tv_nsec += ts.tv_nsec;
                if (now.tv_nsec >= 1000000000)
                        now.tv_sec++, now.tv_nsec -= 1000000000;
                r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &now, NULL);
        } else if (strcmp(kind, "poll") == 0)
                r = poll(NULL, 0, (int) ms);
        else if (strcmp(kind, "poll-converted") == 0)
                /* As a timensd that converted it left it, killed before
                 * the call ran: host ms (lib/core/wait-convert.h). */
                r = (int) syscall(SYS_poll, NULL, 0, TNS_WAIT_REG_MARK | (uint64_t) ms);
        else if (strcmp(kind, "ppoll") == 0)
                r = ppoll(NULL, 0, &ts, NULL);
        else if (strcmp(kind, "select") == 0) {
                struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

                r = select(0, NULL, NULL, NULL, &tv);
        } else if (strcmp(kind, "pselect") == 0)
                r = pselect(0, NULL, NULL, NULL, &ts, NULL);
        else if (strcmp(kind, "epoll") == 0) {
                struct epoll_event ev;
                int ep = epoll_create1(EPOLL_CLOEXEC);

                r = epoll_wait(ep, &ev, 1, (int) ms);
        } else if (strcmp(kind, "futex") == 0) {
                int word = 0;

                r = (int) syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
                if (r < 0 && errno == ETIMEDOUT)
                        r = 0;
        } else if (strcmp(kind, "sigtimedwait") == 0) {
                sigemptyset(&set);
                sigaddset(&set, SIGUSR1);
                sigprocmask(SIG_BLOCK, &set, NULL);
                r = sigtimedwait(&set, NULL, &ts);
                if (r < 0 && errno == EAGAIN)
                        r = 0;
        } else if (strcmp(kind, "timerfd") == 0) {
                struct itimerspec its = {.it_value = ts};
                uint64_t n;
                int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

                r = timerfd_settime(fd, 0, &its, NULL);
                if (r == 0)
                        r = read(fd, &n, sizeof(n)) == sizeof(n) ? 0 : -1;
        } else if (strcmp(kind, "timer") == 0 || strcmp(kind, "itimer") == 0 || strcmp(kind, "alarm") == 0) {
                signal(SIGALRM, on_signal);
                sigemptyset(&set);
                sigaddset(&set, SIGALRM);
                sigprocmask(SIG_BLOCK, &set, NULL);
                if (kind[0] == 't') {
                        struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
                        struct itimerspec its = {.it_value = ts};
                        timer_t t;

                        r = timer_create(CLOCK_MONOTONIC, &sev, &t);
                        if (r == 0)
                                r = timer_settime(t, 0, &its, NULL);
                } else if (kind[0] == 'i') {
                        struct itimerval itv = {.it_value = {ms / 1000, (ms % 1000) * 1000}};

                        r = setitimer(ITIMER_REAL, &itv, NULL);
                } else
                        alarm((unsigned) (ms / 1000));
                if (r == 0) {
                        int sig;

                        r = sigwait(&set, &sig);
                }
        } else {
                fprintf(stderr, "unknown wait %s\n", kind);
                exit(2);
        }
        return r;
}

int main(int argc, char *argv[]) {
        char path[] = "/tmp/rateprobe.XXXXXX";

        host_fd = mkstemp(path);
        if (host_fd < 0)
                return 2;
        unlink(path);
        if (argc == 4 && strcmp(argv[1], "wait") == 0) {
                int64_t t0 = host_ns(), t1;
                int r = do_wait(argv[2], atol(argv[3]));

                t1 = host_ns();
                printf("%s result=%d elapsed=%lld ms\n", argv[2], r, (long long) ((t1 - t0) / 1000000));
                return r < 0;
        }
        if (argc == 5 && strcmp(argv[1], "left") == 0) {
                /* A wait of MS interrupted by SIGALRM after SIGMS (both
                 * the namespace's): the time left it reports. */
                long ms = atol(argv[3]), sig_ms = atol(argv[4]);
                struct itimerval it = {.it_value = {sig_ms / 1000, (sig_ms % 1000) * 1000}};
                struct sigaction sa = {.sa_handler = on_signal};
                long long left_us = -1;
                int r;

                sigaction(SIGALRM, &sa, NULL);
                setitimer(ITIMER_REAL, &it, NULL);
                if (strcmp(argv[2], "select") == 0) {
                        struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

                        r = select(0, NULL, NULL, NULL, &tv);
                        left_us = tv.tv_sec * 1000000LL + tv.tv_usec;
                } else {
                        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000}, rem = {0, 0};

                        r = nanosleep(&ts, &rem);
                        left_us = rem.tv_sec * 1000000LL + rem.tv_nsec / 1000;
                }
                printf("%s result=%d errno=%d left=%lld ms\n", argv[2], r, r < 0 ? errno : 0, left_us / 1000);
                return 0;
        }
        if (argc == 3 && strcmp(argv[1], "old") == 0) {
                struct timespec pause_ts = {0, 100 * 1000 * 1000};
                long long value = -1, interval = -1;

                if (strncmp(argv[2], "itimer", 6) == 0) {
                        struct itimerval it = {.it_value = {10, 0}, .it_interval = {3, 0}}, zero = {}, old;
                        int r;

                        signal(SIGALRM, SIG_IGN);
                        setitimer(ITIMER_REAL, &it, NULL);
                        nanosleep(&pause_ts, NULL);
                        r = strcmp(argv[2], "itimer-get") == 0 ? getitimer(ITIMER_REAL, &old)
                                                               : setitimer(ITIMER_REAL, &zero, &old);
                        if (r == 0) {
                                value = old.it_value.tv_sec * 1000LL + old.it_value.tv_usec / 1000;
                                interval = old.it_interval.tv_sec * 1000LL + old.it_interval.tv_usec / 1000;
                        }
                } else {
                        struct itimerspec its = {.it_value = {10, 0}, .it_interval = {3, 0}}, zero = {}, old;
                        int r = -1;

                        if (strncmp(argv[2], "timer", 5) == 0 && strncmp(argv[2], "timerfd", 7) != 0) {
                                struct sigevent sev = {.sigev_notify = SIGEV_NONE};
                                timer_t t;

                                if (timer_create(CLOCK_MONOTONIC, &sev, &t) == 0 &&
                                    timer_settime(t, 0, &its, NULL) == 0) {
                                        nanosleep(&pause_ts, NULL);
                                        r = strcmp(argv[2], "timer-get") == 0 ? timer_gettime(t, &old)
                                                                              : timer_settime(t, 0, &zero, &old);
                                }
                        } else {
                                /* timerfd-rt-get: CLOCK_REALTIME, relative;
                                 * timerfd-rtabs-get: CLOCK_REALTIME, 10 s
                                 * from now, absolute. */
                                bool rt = strncmp(argv[2], "timerfd-rt", 10) == 0;
                                bool abs = strcmp(argv[2], "timerfd-rtabs-get") == 0;
                                int fd = timerfd_create(rt ? CLOCK_REALTIME : CLOCK_MONOTONIC, 0);

                                if (abs) {
                                        struct timespec now;

                                        syscall(SYS_clock_gettime, CLOCK_REALTIME, &now);
                                        its.it_value.tv_sec += now.tv_sec;
                                        its.it_value.tv_nsec = now.tv_nsec;
                                }
                                if (fd >= 0 && timerfd_settime(fd, abs ? TFD_TIMER_ABSTIME : 0, &its, NULL) == 0) {
                                        nanosleep(&pause_ts, NULL);
                                        r = strstr(argv[2], "-get") ? timerfd_gettime(fd, &old)
                                                                    : timerfd_settime(fd, 0, &zero, &old);
                                }
                        }
                        if (r == 0) {
                                value = old.it_value.tv_sec * 1000LL + old.it_value.tv_nsec / 1000000;
                                interval = old.it_interval.tv_sec * 1000LL + old.it_interval.tv_nsec / 1000000;
                        }
                }
                printf("value=%lld interval=%lld\n", value, interval);
                return 0;
        }
        if (argc == 3 && strcmp(argv[1], "alarm-left") == 0) {
                unsigned first = alarm((unsigned) atol(argv[2])), left;
                struct timespec ts = {0, 100 * 1000 * 1000};

                nanosleep(&ts, NULL);
                left = alarm(0);
                printf("first=%u left=%u\n", first, left);
                return 0;
        }
        if (argc == 3 && strcmp(argv[1], "read") == 0) {
                int64_t vm = vdso_ns(CLOCK_MONOTONIC), sm = sys_ns(CLOCK_MONOTONIC);
                int64_t vr = vdso_ns(CLOCK_REALTIME), sr = sys_ns(CLOCK_REALTIME), h = host_ns(), end;

                end = h + (int64_t) (atof(argv[2]) * 1e9);
                while (host_ns() < end)
                        ;
                printf("vdso_mono=%lld sys_mono=%lld vdso_real=%lld sys_real=%lld host=%lld\n",
                       (long long) (vdso_ns(CLOCK_MONOTONIC) - vm), (long long) (sys_ns(CLOCK_MONOTONIC) - sm),
                       (long long) (vdso_ns(CLOCK_REALTIME) - vr), (long long) (sys_ns(CLOCK_REALTIME) - sr),
                       (long long) (host_ns() - h));
                return 0;
        }
        if (argc == 3 && strcmp(argv[1], "mono-loop") == 0) {
                int64_t end = host_ns() + atol(argv[2]) * 1000000, last = vdso_ns(CLOCK_MONOTONIC), n = 0;

                /* The two paths in turn: a trapped read must not lag
                 * behind a vDSO read across a change (the supervisor reads
                 * the clock with the namespace's state it shifts by). */
                for (unsigned i = 0; host_ns() < end; i++) {
                        int64_t v = i & 1 ? sys_ns(CLOCK_MONOTONIC) : vdso_ns(CLOCK_MONOTONIC);

                        n += v < last;
                        last = v;
                }
                printf("backwards=%lld\n", (long long) n);
                return 0;
        }
        fprintf(stderr, "usage: rateprobe wait KIND MS | read SEC | mono-loop MS\n");
        return 2;
}
