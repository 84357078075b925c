/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-unotify: the bare seccomp user-notification round trip, the floor
 * under any supervisor that emulates a syscall.
 *
 *   bench-unotify [--sync|--no-sync] [--loop blocking|epoll|sd-event] [--filter seccomp|timens]
 *                 [--emulate] [--new-session] [-b BATCHES] [-t BATCH_MS]
 *
 * A child installs a filter (libseccomp: SCMP_ACT_NOTIFY on clock_gettime,
 * everything else allowed) and calls raw clock_gettime in batches; the
 * parent is the least a supervisor can be: receive, reply
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE, nothing else. The child reports ns per
 * call, so the figure is directly comparable with bench-clock's
 * syscall_clock_gettime_monotonic under `timensctl run`.
 *
 * --loop blocking  the parent sleeps in SECCOMP_IOCTL_NOTIF_RECV: the
 *                  fastest supervisor possible (2 syscalls per call);
 * --loop epoll     it sleeps in epoll_wait first, as an sd-event loop does
 *                  (3 syscalls): the cost of waking through epoll. Note
 *                  that fs/eventpoll.c's ep_poll_callback() passes on at most
 *                  WF_SYNC, so SYNC_WAKE_UP's "wake on this CPU" reaches
 *                  only a supervisor asleep in RECV itself, never one asleep
 *                  in epoll_wait: only the reply side keeps it;
 * --loop sd-event  an sd-event io source, as lib/supervisor/supervisor.c has: the same
 *                  syscalls as epoll, plus sd-event's own code.
 * --sync           SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6, Andrei Vagin's
 *                  "seccomp: add the synchronous mode for seccomp_unotify"):
 *                  the wakee runs on the waker's CPU, so the pair hands one
 *                  CPU back and forth instead of waking another one.
 * --filter timens  install timens's own filter (lib/kernel/filter.c, the one
 *                  `timensctl run` installs) instead of the one-rule filter:
 *                  its BPF runs on every syscall of the caller.
 * --emulate        answer instead of CONTINUE, with the kernel work that
 *                  lib/supervisor/supervisor.c does for a clock_gettime: read the clock,
 *                  SECCOMP_IOCTL_NOTIF_ID_VALID, process_vm_writev of the
 *                  timespec, reply val=0. With --loop sd-event it makes the
 *                  same syscalls per call as timens (epoll_wait, RECV,
 *                  ID_VALID, process_vm_writev, SEND).
 * --new-session    the supervisor calls setsid(), as timensctl's embedded
 *                  one does (daemon/timensctl/timensctl-embedded.c, detach()): with
 *                  sched_autogroup_enabled it then runs in another scheduling
 *                  group than the caller. Measured: a little dearer with a
 *                  blocking loop; with an epoll-woken one, often split
 *                  across CPUs (a migration every third switch, 10-40 us).
 *
 * Output as bench-clock's: `bench NAME MEDIAN_NS MIN_NS CALLS BATCHES` and
 * `info KEY VALUE`, the timing tests/include/bench.h's. Exit status 77 if
 * the kernel lacks what was asked. */
#include <errno.h>
#include <getopt.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "bare-filter.h"
#include "bench.h"
#include "fd-pass.h"
#include "filter.h"
#include "util.h"

/* Newer than Debian 12's kernel headers (6.6). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define EXIT_SKIP 77
/* A bound on the whole run, so that a lost notification fails the
 * benchmark instead of hanging `make bench`. */
#define TIMEOUT_S 60

/* The child's last call is clock_gettime(CLOCK_MONOTONIC, NULL): trapped
 * by both filters, made by no measured call. Waiting for the listener to
 * hang up would not do: the kernel drops the filter only when the child is
 * reaped (release_task), and the parent cannot reap it while it sleeps in
 * RECV. */
static bool is_done_call(const struct seccomp_notif *req) {
        return (int) req->data.args[0] == CLOCK_MONOTONIC && req->data.args[1] == 0;
}

enum loop_kind { LOOP_BLOCKING, LOOP_EPOLL, LOOP_SD_EVENT, _LOOP_MAX };

static const char *const loop_names[_LOOP_MAX] = {"blocking", "epoll", "sd-event"};

struct options {
        bool sync;
        bool emulate;
        bool timens_filter;
        bool new_session;
        enum loop_kind loop;
        struct bench_options bench;
};

static volatile int64_t sink;

/* -------- the child: the caller under the filter -------- */

/* bench_now_ns() reads the vDSO: never trapped. */
static int64_t time_batch(void *ctx, uint64_t n) {
        int64_t start = bench_now_ns(), acc = 0;
        struct timespec ts;

        for (uint64_t i = 0; i < n; i++) {
                syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
                acc += ts.tv_nsec;
        }
        sink = acc;
        return bench_now_ns() - start;
}

static void measure(const struct options *o) {
        struct bench_result r;
        uint64_t n;

        r = bench_measure(time_batch, NULL, &o->bench, &n);
        printf("bench unotify_%s_%s%s%s%s %.1f %.1f %llu %u\n",
               o->loop == LOOP_SD_EVENT ? "sdevent" : loop_names[o->loop], o->sync ? "sync" : "nosync",
               o->emulate ? "_emulate" : "", o->timens_filter ? "_timensfilter" : "",
               o->new_session ? "_newsession" : "", r.median, r.min, (unsigned long long) n, o->bench.batches);
        fflush(stdout);
}

static _Noreturn void child(int sock, const struct options *o, const struct tns_filter *f) {
        char go;
        int fd;

        fd = o->timens_filter ? tns_filter_install(f) : bench_install_bare_filter();
        if (fd < 0) {
                fprintf(stderr, "bench-unotify: Failed to install the filter: %s\n", strerror(-fd));
                _exit(EXIT_FAILURE);
        }
        if (tns_send_fd(sock, fd) < 0)
                _exit(EXIT_FAILURE);
        close(fd);
        /* The parent sets the listener's flags first. */
        if (read(sock, &go, 1) != 1)
                _exit(EXIT_FAILURE);
        close(sock);
        measure(o);
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, NULL);
        _exit(EXIT_SUCCESS);
}

/* -------- the parent: the minimal supervisor -------- */

/* What lib/supervisor/supervisor.c's serve() costs the kernel for a clock_gettime,
 * without its user-space code: the answer (shifted by a day, so that it is
 * a real emulation), an id check before writing into the caller, the
 * write, a reply that carries the result. */
static void emulate(int fd, const struct seccomp_notif *req, struct seccomp_notif_resp *resp) {
        struct timespec ts;
        struct iovec local = {&ts, sizeof(ts)}, remote = {(void *) (uintptr_t) req->data.args[1], sizeof(ts)};

        clock_gettime((clockid_t) req->data.args[0], &ts);
        ts.tv_sec += 86400;
        resp->flags = 0;
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
                resp->error = -ESRCH;
        else if (process_vm_writev(req->pid, &local, 1, &remote, 1, 0) != (ssize_t) sizeof(ts))
                resp->error = -EFAULT;
}

/* Returns 1 when the child said it is done, 0 to go on, -errno on error.
 * The structs are the kernel's sizes since 5.0 (SECCOMP_GET_NOTIF_SIZES
 * has reported no growth since), so stack copies are fine here. */
static int serve_one(int fd, bool emulated) {
        struct seccomp_notif req;
        struct seccomp_notif_resp resp;
        bool done;

        memset(&req, 0, sizeof(req)); /* RECV insists on a zeroed struct */
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
                return errno == EINTR || errno == ENOENT ? 0 : negative_errno();
        done = is_done_call(&req);
        resp = (struct seccomp_notif_resp){.id = req.id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
        if (emulated && !done)
                emulate(fd, &req, &resp);
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
                return negative_errno();
        return done;
}

static int loop_blocking(int fd, bool emulated) {
        int r;

        while ((r = serve_one(fd, emulated)) == 0)
                ;
        return r;
}

static int loop_epoll(int fd, bool emulated) {
        struct epoll_event ev = {.events = EPOLLIN};
        _cleanup_close_ int ep = epoll_create1(EPOLL_CLOEXEC);
        int r = 0;

        if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
                return negative_errno();
        while (r == 0) {
                int n = epoll_wait(ep, &ev, 1, -1);

                if (n < 0 && errno != EINTR)
                        return negative_errno();
                if (n > 0)
                        r = serve_one(fd, emulated);
        }
        return r;
}

struct sd_loop {
        int fd;
        bool emulated;
        int result;
};

static int on_notification(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        struct sd_loop *l = userdata;
        int r = serve_one(fd, l->emulated);

        if (r == 0)
                return 0;
        l->result = r < 0 ? r : 0;
        return sd_event_exit(sd_event_source_get_event(src), 0);
}

static int loop_sd_event(int fd, bool emulated) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        struct sd_loop l = {fd, emulated, 0};
        int r;

        r = sd_event_new(&e);
        if (r < 0)
                return r;
        r = sd_event_add_io(e, NULL, fd, EPOLLIN, on_notification, &l);
        if (r < 0)
                return r;
        r = sd_event_loop(e);
        return r < 0 ? r : l.result;
}

static int run_loop(int fd, const struct options *o) {
        switch (o->loop) {
        case LOOP_EPOLL:
                return loop_epoll(fd, o->emulate);
        case LOOP_SD_EVENT:
                return loop_sd_event(fd, o->emulate);
        default:
                return loop_blocking(fd, o->emulate);
        }
}

/* 1 if set, 0 if the kernel lacks it (< 6.6), -errno otherwise. */
static int set_sync_wakeup(int fd) {
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (uint64_t) SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) >= 0)
                return 1;
        return errno == EINVAL || errno == ENOTTY ? 0 : negative_errno();
}

static int supervise(int sock, const struct options *o) {
        _cleanup_close_ int fd = tns_recv_fd(sock);
        int r;

        if (fd < 0)
                return fd;
        if (o->new_session && setsid() < 0)
                return negative_errno();
        if (o->sync) {
                r = set_sync_wakeup(fd);
                if (r <= 0)
                        return r == 0 ? -EOPNOTSUPP : r;
        }
        printf("info sync_wakeup %d\n", o->sync);
        fflush(stdout);
        if (write(sock, "g", 1) != 1)
                return negative_errno();
        r = run_loop(fd, o);
        return r < 0 ? r : 0;
}

static int wait_child(pid_t pid) {
        int status;

        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return EXIT_FAILURE;
        return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FAILURE;
}

static int parse_loop(const char *s) {
        for (int i = 0; i < _LOOP_MAX; i++)
                if (strcmp(s, loop_names[i]) == 0)
                        return i;
        return -EINVAL;
}

enum { ARG_SYNC = 0x100, ARG_NO_SYNC, ARG_LOOP, ARG_EMULATE, ARG_FILTER, ARG_NEW_SESSION };

/* bench_parse_options() takes -b and -t, and hands the rest here. */
static int parse_option(int c, const char *arg, void *userdata) {
        struct options *o = userdata;
        int r;

        switch (c) {
        case ARG_SYNC:
        case ARG_NO_SYNC:
                o->sync = c == ARG_SYNC;
                return 0;
        case ARG_FILTER:
                if (strcmp(arg, "seccomp") != 0 && strcmp(arg, "timens") != 0)
                        return -EINVAL;
                o->timens_filter = strcmp(arg, "timens") == 0;
                return 0;
        case ARG_NEW_SESSION:
                o->new_session = true;
                return 0;
        case ARG_EMULATE:
                o->emulate = true;
                return 0;
        case ARG_LOOP:
                r = parse_loop(arg);
                if (r < 0)
                        return r;
                o->loop = (enum loop_kind) r;
                return 0;
        default:
                return -EINVAL;
        }
}

static int parse_options(int argc, char *argv[], struct options *o) {
        static const struct option options[] = {
                {"new-session", no_argument, NULL, ARG_NEW_SESSION},
                {"filter", required_argument, NULL, ARG_FILTER},
                {"sync", no_argument, NULL, ARG_SYNC},
                {"emulate", no_argument, NULL, ARG_EMULATE},
                {"no-sync", no_argument, NULL, ARG_NO_SYNC},
                {"loop", required_argument, NULL, ARG_LOOP},
                {},
        };

        return bench_parse_options(argc, argv, &o->bench, options, parse_option, o);
}

static void usage(const char *prog) {
        fprintf(stderr,
                "Usage: %s [--sync|--no-sync] [--loop blocking|epoll|sd-event] [--filter seccomp|timens]\n"
                "          [--emulate] [--new-session] [-b BATCHES] [-t BATCH_MS]\n",
                prog);
}

/* Forks the caller; returns its pid and the parent's end of the socket. */
static pid_t start_child(const struct options *o, const struct tns_filter *f, int *ret_sock) {
        int socks[2];
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, socks) < 0)
                return -1;
        fflush(stdout); /* nothing buffered may be printed twice */
        pid = fork();
        if (pid == 0) {
                close(socks[0]);
                child(socks[1], o, f);
        }
        close(socks[1]);
        if (pid < 0)
                close(socks[0]);
        else
                *ret_sock = socks[0];
        return pid;
}

int main(int argc, char *argv[]) {
        struct options o = {
                .sync = true,
                .loop = LOOP_BLOCKING,
                .bench = {.batches = 7, .batch_ns = 120 * NSEC_PER_MSEC},
        };
        struct tns_filter f = {};
        int sock, r;
        pid_t pid;

        if (parse_options(argc, argv, &o) < 0) {
                usage(argv[0]);
                return EXIT_FAILURE;
        }
        /* Built before the fork, as timensctl does: the child only installs it. */
        if (o.timens_filter && (r = tns_filter_build(&f)) < 0) {
                fprintf(stderr, "bench-unotify: Failed to build the timens filter: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        pid = start_child(&o, &f, &sock);
        tns_filter_done(&f);
        if (pid < 0)
                return EXIT_FAILURE;
        alarm(TIMEOUT_S);
        r = supervise(sock, &o);
        close(sock);
        if (r < 0) {
                fprintf(stderr, "bench-unotify: %s\n", strerror(-r));
                kill(pid, SIGKILL);
                (void) wait_child(pid);
                return r == -EOPNOTSUPP ? EXIT_SKIP : EXIT_FAILURE;
        }
        return wait_child(pid);
}
