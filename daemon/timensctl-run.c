/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl run: a command in a new time namespace. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>

#include "filter.h"
#include "spawn.h"
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
               "  --name NAME         a name for the namespace\n"
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
        char **argv;
};

static int parse_args(int argc, char *argv[], struct run_args *a) {
        enum { ARG_MONOTONIC = 0x100, ARG_BOOTTIME, ARG_REALTIME, ARG_NAME };
        static const struct option options[] = {
                {"monotonic", required_argument, NULL, ARG_MONOTONIC},
                {"boottime", required_argument, NULL, ARG_BOOTTIME},
                {"realtime", required_argument, NULL, ARG_REALTIME},
                {"name", required_argument, NULL, ARG_NAME},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        int c;

        optind = 0;
        /* '+': stop at the command, so its own options stay its own. */
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_MONOTONIC:
                        a->offsets.text[TNS_CLASS_MONOTONIC] = optarg;
                        break;
                case ARG_BOOTTIME:
                        a->offsets.text[TNS_CLASS_BOOTTIME] = optarg;
                        break;
                case ARG_REALTIME:
                        a->offsets.text[TNS_CLASS_REALTIME] = optarg;
                        break;
                case ARG_NAME:
                        a->name = optarg;
                        break;
                default:
                        return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                             "Try 'timensctl run --help' for the options.");
                }
        if (optind >= argc)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                     "No command given: timensctl run [OPTIONS] -- COMMAND [ARGS...]");
        a->argv = argv + optind;
        return 1;
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

static int run(const struct run_args *a, const int64_t offsets[TNS_CLASS_MAX]) {
        struct tns_filter filter = {};
        enum tns_spawn_stage stage = TNS_SPAWN_SETUP;
        struct tns_child child;
        struct run_state st;
        sigset_t mask;
        int r;

        /* Blocked before the fork, so that none is lost before the loop
         * listens: sd-event reads them from a signalfd. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                sigaddset(&mask, forwarded_signals[i]);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);

        r = tns_filter_build(&filter);
        if (r < 0) {
                tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to build the seccomp filter: %m");
                return EXIT_RUN_INTERNAL;
        }
        r = tns_spawn(&filter, a->argv, &child, &stage);
        tns_filter_done(&filter);
        if (r < 0)
                return spawn_error(r, stage, a->argv[0]);
        r = embedded_supervisor_start(child.listener, a->name, offsets);
        if (r < 0) {
                tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to start the supervisor: %m");
                (void) syscall(SYS_pidfd_send_signal, child.pidfd, SIGKILL, NULL, 0);
                return EXIT_RUN_INTERNAL;
        }
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

int verb_run(int argc, char *argv[]) {
        struct run_args a = {};
        int64_t offsets[TNS_CLASS_MAX];
        int r;

        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? EXIT_RUN_INTERNAL : 0;
        if (offsets_resolve(&a.offsets, offsets) < 0)
                return EXIT_RUN_INTERNAL;
        return run(&a, offsets);
}
