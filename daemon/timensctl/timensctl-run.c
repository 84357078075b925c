/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl run: a command in a new time namespace. timensctl spawns the
 * command under the filter itself; the namespace is then served by
 * timensd when its socket answers and lets us change state (the listener
 * fd goes over with SCM_RIGHTS: op "adopt"), else by an embedded
 * supervisor process of our own. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>

#include "client.h"
#include "filter.h"
#include "spawn.h"
#include "supervisor.h"
#include "timensctl.h"
#include "util.h"

/* Signals passed on to the command when sent to timensctl itself. */
static const int forwarded_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH};

static void help(void) {
        printf("Usage: timensctl run [OPTIONS] [--] COMMAND [ARGS...]\n"
               "\n"
               "Run COMMAND in a new time namespace whose clocks are the host's moved by the\n"
               "given offsets. Without options the clocks are the host's.\n"
               "\n"
               "  --monotonic OFFSET  offset of CLOCK_MONOTONIC, _RAW and _COARSE\n"
               "  --boottime OFFSET   offset of CLOCK_BOOTTIME and CLOCK_BOOTTIME_ALARM\n"
               "  --realtime OFFSET|DATE\n"
               "                      offset of CLOCK_REALTIME, _COARSE, _ALARM, CLOCK_TAI,\n"
               "                      gettimeofday() and time(); or the date the clock shows now\n"
               "  --rate R            the clocks run R times as fast as the host's (2, 0.5,\n"
               "                      1440, 1/60); --rate 1: a rate can be set later;\n"
               "                      --rate realtime=R,monotonic=R: per class (monotonic\n"
               "                      is MONOTONIC and BOOTTIME)\n"
               "  --freeze[=CLASS]    the clocks stand still (with --realtime DATE: at DATE);\n"
               "                      --freeze=realtime: only the date stands, MONOTONIC\n"
               "                      runs (Go timers, Java and Python sleeps go on)\n"
               "  --faketime SPEC     libfaketime's FAKETIME: '+2d', '-3h x2', '+0 x10',\n"
               "                      '@2030-01-01 12:00:00' (starts there),\n"
               "                      '2030-01-01 12:00:00' (frozen there)\n"
               "                      (these three need timensd: as root, started if\n"
               "                      nothing answers)\n"
               "  --name NAME         a name for the namespace (unique in timensd)\n"
               "  --join NAME         run in an existing namespace of timensd (create, import)\n"
               "  --grant G           what processes inside may do through timensd's socket:\n"
               "                      none (default), read, full\n"
               "  --shared            other users may join the namespace (default: only this uid)\n"
               "  --no-daemon         serve the namespace from timensctl's own supervisor even\n"
               "                      when timensd runs (it is the fallback anyway)\n"
               "  --no-vdso           no vDSO in the command's programs: every clock read takes\n"
               "                      the (emulated) syscall, ~150x slower (implies --no-daemon)\n"
               "  --socket PATH       timensd's socket (default $TIMENS_SOCKET or\n"
               "                      /run/timens/timensd.sock)\n"
               "  -h --help           show this help\n"
               "\n"
               "OFFSET: seconds (86400, -3600, 0.5) or signed suffixed components (+10d,\n"
               "-3h30m, +1y; units ns us ms s m h d w y, m = minutes, y = 365 days).\n"
               "DATE: 2030-01-01, 2030-01-01T12:00:00Z, '2030-01-01 12:00:00' (local time),\n"
               "@1893456000.\n"
               "\n"
               "Exit status: COMMAND's, 128+N if it was killed by signal N, 125 if timensctl\n"
               "failed, 126 if COMMAND could not be executed, 127 if it was not found.\n");
}

struct run_args {
        struct offset_args offsets;
        const char *name;
        const char *join;
        int grant;
        bool shared;
        bool no_daemon;
        bool no_vdso;
        char **argv;
};

static int check_args(const struct run_args *a) {
        bool offsets = a->offsets.text[0] || a->offsets.text[1] || a->offsets.text[2] || offset_args_rated(&a->offsets);

        if (a->join && (a->name || offsets || a->grant || a->shared))
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                     "--join takes the namespace as it is: no --name, offsets, rates, --grant or "
                                     "--shared");
        if (offset_args_rated(&a->offsets) && a->no_daemon)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                     "--rate, --freeze and --faketime need timensd: not with --no-daemon or "
                                     "--no-vdso");
        if (a->join && a->no_daemon)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "--join needs timensd: not with --no-daemon");
        if (a->name && ctl_check_name("--name", a->name) < 0)
                return -EINVAL;
        return 1;
}

static int parse_args(int argc, char *argv[], struct run_args *a, struct ctl_options *o) {
        enum { ARG_NAME = 0x100, ARG_JOIN, ARG_GRANT, ARG_SHARED, ARG_NO_DAEMON, ARG_NO_VDSO };
        static const struct option options[] = {
                CTL_OFFSET_OPTIONS,
                {"name", required_argument, NULL, ARG_NAME},
                {"join", required_argument, NULL, ARG_JOIN},
                {"grant", required_argument, NULL, ARG_GRANT},
                {"shared", no_argument, NULL, ARG_SHARED},
                {"no-daemon", no_argument, NULL, ARG_NO_DAEMON},
                {"no-vdso", no_argument, NULL, ARG_NO_VDSO},
                CTL_COMMON_OPTIONS,
                {},
        };
        int c;

        optind = 0;
        /* '+': stop at the command, so its own options stay its own. */
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                if (ctl_common_option(c, o) || ctl_offset_option(c, &a->offsets))
                        continue;
                if (c == 'h')
                        return help(), 0;
                if (c == ARG_NAME)
                        a->name = optarg;
                else if (c == ARG_JOIN)
                        a->join = optarg;
                else if (c == ARG_NO_DAEMON)
                        a->no_daemon = true;
                else if (c == ARG_SHARED)
                        a->shared = true;
                else if (c == ARG_NO_VDSO)
                        /* timensd's namespaces all carry the vDSO: this one
                         * is the embedded supervisor's. */
                        a->no_vdso = a->no_daemon = true;
                else if (c != ARG_GRANT || ctl_parse_grant(optarg, &a->grant) < 0)
                        return ctl_bad_option("run");
        }
        if (optind >= argc)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                     "No command given: timensctl run [OPTIONS] -- COMMAND [ARGS...]");
        a->argv = argv + optind;
        return check_args(a);
}

struct run_state {
        int child_pidfd;
};

/* A signal the kernel sent (a terminal's ^C, ^\, SIGWINCH) already reached
 * the command, which is in our process group: passing it on would deliver
 * it twice. Signals sent to us by someone (kill, a runtime) are passed on. */
static int on_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata) {
        struct run_state *st = userdata;

        if (si->ssi_code == SI_KERNEL)
                return 0;
        if (syscall(SYS_pidfd_send_signal, st->child_pidfd, si->ssi_signo, NULL, 0) < 0 && errno != ESRCH)
                tns_log_errno(&timensctl_log, LOG_WARNING, errno, "Failed to forward signal %d, ignoring: %m",
                              (int) si->ssi_signo);
        return 0;
}

static int on_child(sd_event_source *src, const siginfo_t *si, void *userdata) {
        int code = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;

        return sd_event_exit(sd_event_source_get_event(src), code);
}

/* The pidfd says the command exited when its last thread did; if a tracer
 * (timensd holding a thread in a converted wait, or an exec) still has it,
 * waitid() finds nothing yet, and sd-event's one-shot child source never
 * fires again. The kernel sends us SIGCHLD when the tracer lets it go. */
static int on_sigchld(sd_event_source *src, const struct signalfd_siginfo *ssi, void *userdata) {
        struct run_state *st = userdata;
        siginfo_t si = {};

        if (waitid(P_PIDFD, (id_t) st->child_pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
                return 0;
        return on_child(src, &si, userdata);
}

static int wait_child(struct run_state *st) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        int r, code;

        r = sd_event_default(&e);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++) {
                r = sd_event_add_signal(e, NULL, forwarded_signals[i], on_signal, st);
                if (r < 0)
                        return r;
        }
        r = sd_event_add_child_pidfd(e, NULL, st->child_pidfd, WEXITED, on_child, st);
        if (r >= 0)
                r = sd_event_add_signal(e, NULL, SIGCHLD, on_sigchld, st);
        if (r < 0)
                return r;
        r = sd_event_loop(e);
        if (r < 0)
                return r;
        code = r;
        return code;
}

static int spawn_error(int r, enum tns_spawn_stage stage, const char *cmd) {
        if (stage != TNS_SPAWN_EXEC) {
                tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to set up the time namespace for '%s': %m", cmd);
                return EXIT_RUN_INTERNAL;
        }
        tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to execute '%s': %m", cmd);
        return r == -ENOENT || r == -ENOTDIR ? EXIT_RUN_NOT_FOUND : EXIT_RUN_CANNOT_EXEC;
}

/* A timensd that accepted the connection is there: a busy one (a
 * thousand containers starting at once) is waited for, as long as any
 * request, rather than left for a supervisor of our own that its list
 * and restarts would not know. */
#define RUN_HELLO_TIMEOUT_MS TNS_CLIENT_TIMEOUT_MS

/* Whether timensd answers and lets us change state (hello). */
static bool daemon_usable(struct tns_client *c) {
        struct tns_request req = {.op = TNS_OP_HELLO};
        _cleanup_json_ json_object *res = NULL;
        struct tns_proto_error e;
        struct tns_hello h;

        tns_client_set_timeout(c, RUN_HELLO_TIMEOUT_MS);
        if (tns_client_call(c, &req, NULL, 0, &res, &e) <= 0 || tns_hello_from_json(res, &h) < 0)
                return false;
        return h.protocol == TNS_PROTO_VERSION && h.access == TNS_ACCESS_WRITE &&
               (h.ops & (UINT64_C(1) << TNS_OP_ADOPT));
}

/* Refused before the command starts, not after: a name timensd has. */
static int check_name_free(struct tns_client *c, const char *name) {
        /* export: the cheapest read by name (show walks the processes). */
        struct tns_request req = {.op = TNS_OP_EXPORT, .name = name};
        _cleanup_json_ json_object *res = NULL;
        struct tns_proto_error e;

        if (tns_client_call(c, &req, NULL, 0, &res, &e) > 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, EEXIST,
                                     "A namespace named '%s' exists in timensd already (use --join to run in it)",
                                     name);
        return 0;
}

/* Whether the namespace to join was made rate-capable: its members need
 * the filter that traps relative waits too. */
static bool join_rate_capable(struct tns_client *c, const char *name) {
        struct tns_request req = {.op = TNS_OP_EXPORT, .name = name};
        _cleanup_json_ json_object *res = NULL;
        struct tns_clock_state st;
        struct tns_proto_error e;
        json_object *o;

        if (tns_client_call(c, &req, NULL, 0, &res, &e) <= 0 || !json_object_object_get_ex(res, "state", &o) ||
            tns_clock_state_from_json(o, &st, &e) < 0)
                return false;
        return st.rate_capable;
}

/* The daemon to hand the namespace to, or NULL: the embedded supervisor
 * serves then. Fails only where falling back would not do what was asked
 * (--join, a name timensd has). */
static int daemon_open(const struct run_args *a, const struct ctl_options *o, struct tns_client **ret) {
        _cleanup_client_ struct tns_client *c = NULL;
        int r;

        *ret = NULL;
        if (a->no_daemon)
                return 0;
        /* Only timensd serves rates: as root, started if nothing answers
         * (as attach does), rather than the command refused. */
        if (offset_args_rated(&a->offsets) && geteuid() == 0) {
                r = ctl_connect_or_start(o, &c);
                if (r < 0)
                        return r; /* logged */
        } else
                r = tns_client_connect(o->socket, &c);
        if (r < 0 || !daemon_usable(c)) {
                if (a->join)
                        return tns_log_errno(&timensctl_log, LOG_ERR, r < 0 ? r : EACCES,
                                             "--join needs timensd at %s, which does not answer or does not let us "
                                             "change state",
                                             o->socket ?: tns_client_default_socket());
                if (offset_args_rated(&a->offsets))
                        return tns_log_errno(&timensctl_log, LOG_ERR, r < 0 ? r : EACCES,
                                             "--rate, --freeze and --faketime need timensd at %s, which does not "
                                             "answer or does not let us change state: run this as root (it starts "
                                             "timensd then), or as a member of group timens with timensd running",
                                             o->socket ?: tns_client_default_socket());
                tns_log(&timensctl_log, LOG_DEBUG, "timensd is not usable here: serving the namespace ourselves");
                return 0;
        }
        if (a->name && check_name_free(c, a->name) < 0)
                return -EEXIST;
        tns_client_set_timeout(c, TNS_CLIENT_TIMEOUT_MS);
        *ret = TAKE_PTR(c);
        return 0;
}

/* 0: timensd serves the namespace now; 1: it refused, serve it here;
 * <0: failed (the command must not run unserved). */
static int daemon_adopt(struct tns_client *c, const struct run_args *a, struct tns_child *child) {
        struct tns_request req = {.op = TNS_OP_ADOPT,
                                  .name = a->join ?: a->name,
                                  .join = a->join,
                                  .grant = a->grant,
                                  .shared = a->shared};
        _cleanup_json_ json_object *res = NULL;
        int fds[2] = {child->listener, child->pidfd};
        struct tns_proto_error e;
        int r;

        for (int k = 0; k < TNS_CLASS_MAX; k++)
                req.clocks[k].set = a->offsets.text[k] && tns_offset_parse(a->offsets.text[k], k == TNS_CLASS_REALTIME,
                                                                           &req.clocks[k].spec) == 0;
        if (ctl_rates_to_request(&a->offsets, &req) < 0)
                return -EINVAL;
        r = tns_client_call(c, &req, fds, ELEMENTSOF(fds), &res, &e);
        if (r < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to hand the namespace to timensd: %m");
        if (r == 0 && (a->join || e.code == TNS_ERR_EXISTS))
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "timensd: %s (%s)", e.message,
                                     tns_err_code(e.code));
        if (r == 0 && offset_args_rated(&a->offsets))
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "timensd: %s (%s)", e.message,
                                     tns_err_code(e.code));
        if (r == 0) {
                tns_log(&timensctl_log, LOG_DEBUG, "timensd refused the namespace (%s): serving it ourselves",
                        e.message);
                return 1;
        }
        child->listener = safe_close(child->listener); /* timensd has its own now */
        return 0;
}

/* The namespace's supervisor: timensd if it takes it, else our own. */
static int start_supervisor(struct tns_client *daemon, const struct run_args *a, struct tns_child *child,
                            const int64_t offsets[TNS_CLASS_MAX]) {
        int r = daemon ? daemon_adopt(daemon, a, child) : 1;

        if (r <= 0)
                return r;
        if (offset_args_rated(&a->offsets)) /* daemon_open() made sure of it */
                return tns_log_errno(&timensctl_log, LOG_ERR, ENOTCONN, "--rate, --freeze and --faketime need timensd");
        r = embedded_supervisor_start(TAKE_FD(child->listener), child->pid, a->name, offsets,
                                      a->no_vdso ? TNS_NS_NO_VDSO : 0);
        if (r < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to start the supervisor: %m");
        return 0;
}

/* --join as root: the command enters the kernel time namespace the
 * joined namespace's processes are in (timensd's show names it), so that
 * all show one /proc/PID/ns/time; -ENOENT where there is none (the
 * command then gets one of its own). */
static int join_time_fd(struct tns_client *c, const char *join) {
        struct tns_request req = {};

        ctl_target(join, &req);
        return tns_client_time_ns_fd(c, req.name, req.ns_id);
}

static int run(const struct run_args *a, const struct ctl_options *o, const int64_t offsets[TNS_CLASS_MAX]) {
        _cleanup_client_ struct tns_client *daemon = NULL;
        struct tns_filter filter = {};
        enum tns_spawn_stage stage = TNS_SPAWN_SETUP;
        struct tns_child child;
        struct run_state st;
        sigset_t mask;
        int time_fd, r;

        /* Blocked before the fork, so that none is lost before the loop
         * listens: sd-event reads them from a signalfd. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                sigaddset(&mask, forwarded_signals[i]);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);

        if (daemon_open(a, o, &daemon) < 0)
                return EXIT_RUN_INTERNAL;
        r = tns_filter_build_flags(offset_args_rated(&a->offsets) ||
                                                   (daemon && a->join && join_rate_capable(daemon, a->join))
                                           ? TNS_FILTER_RATED
                                           : 0,
                                   &filter);
        if (r < 0) {
                tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to build the seccomp filter: %m");
                return EXIT_RUN_INTERNAL;
        }
        time_fd = a->join && daemon && geteuid() == 0 ? join_time_fd(daemon, a->join) : -ENOENT;
        r = tns_spawn_flags_time(&filter, a->argv, TNS_SPAWN_PRIVATE_PROC | TNS_SPAWN_NEWTIME, time_fd, &child, &stage);
        safe_close(time_fd);
        tns_filter_done(&filter);
        if (r < 0)
                return spawn_error(r, stage, a->argv[0]);
        r = start_supervisor(daemon, a, &child, offsets);
        /* No connection held for the command's lifetime: timensd caps them. */
        daemon = tns_client_free(daemon);
        if (r < 0) {
                (void) syscall(SYS_pidfd_send_signal, child.pidfd, SIGKILL, NULL, 0);
                safe_close(child.listener);
                safe_close(child.release_fd);
                return EXIT_RUN_INTERNAL;
        }
        /* The supervisor has covered its /proc files: it may exec now. */
        tns_spawn_release(&child);
        /* Only now: the exec is trapped, and served by the supervisor. */
        r = tns_spawn_wait_exec(&child, &stage);
        if (r < 0) {
                safe_close(child.pidfd);
                return spawn_error(r, stage, a->argv[0]);
        }
        st.child_pidfd = child.pidfd;
        r = wait_child(&st);
        safe_close(child.pidfd);
        if (r < 0) {
                tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to wait for '%s': %m", a->argv[0]);
                return EXIT_RUN_INTERNAL;
        }
        return r;
}

int verb_run(int argc, char *argv[], struct ctl_options *o) {
        struct run_args a = {};
        int64_t offsets[TNS_CLASS_MAX];
        int r;

        r = parse_args(argc, argv, &a, o);
        if (r <= 0)
                return r < 0 ? EXIT_RUN_INTERNAL : 0;
        if (offsets_resolve(&a.offsets, offsets) < 0)
                return EXIT_RUN_INTERNAL;
        /* Checked before anything runs: a bad --rate or --faketime is the
         * user's mistake, not timensd's. */
        if (offset_args_rated(&a.offsets)) {
                struct tns_request probe = {};

                if (ctl_rates_to_request(&a.offsets, &probe) < 0)
                        return EXIT_RUN_INTERNAL;
        }
        return run(&a, o, offsets);
}
