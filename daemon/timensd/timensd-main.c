/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensd: the host's time namespace daemon (see timensd(8)). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "oci.h"
#include "timensd.h"

struct args {
        const char *socket;
        const char *agent_socket; /* "" : no agent socket */
        const char *group;
        int log_level;
        int log_target; /* -1 auto, 0 stderr, 1 journal */
        bool foreground;
        unsigned max_connections;
        unsigned idle_timeout_sec;
        enum entrants_mode entrants;
};

static void help(void) {
        printf("Usage: timensd [OPTIONS]\n"
               "\n"
               "The time namespace daemon: serves the clocks of every namespace on this host and\n"
               "the control socket that timensctl speaks to.\n"
               "\n"
               "  --socket PATH           control socket (default " TNS_DEFAULT_SOCKET ")\n"
               "  --agent-socket PATH     OCI seccomp agent socket, for linux.seccomp.listenerPath\n"
               "                          (default: seccomp-agent.sock beside the control socket,\n"
               "                          " TNS_OCI_DEFAULT_AGENT_SOCKET "; '' for none)\n"
               "  --group NAME            group whose members may change state (default " TIMENSD_DEFAULT_GROUP ")\n"
               "  --log-level LEVEL       err, warning, notice, info (default), debug\n"
               "  --log-target TARGET     auto (default: the journal if it runs), journal, stderr\n"
               "  --foreground            do not detach (implied when started by systemd); without\n"
               "                          it, a keeper process holds the daemon's fds and starts\n"
               "                          it again when it dies (timensd(8), RESTARTS)\n"
               "  --max-connections N     clients at once (default %d)\n"
               "  --idle-timeout SEC      close connections idle this long (default %d)\n"
               "  --entrants MODE         how processes entering a served container later are\n"
               "                          found: auto (default: bpf, else proc), bpf, proc, off\n"
               "  -h --help               show this help\n"
               "  --version               show the version\n"
               "\n"
               "See timensd(8).\n",
               TIMENSD_DEFAULT_MAX_CONNECTIONS, TIMENSD_DEFAULT_IDLE_TIMEOUT_SEC);
}

static int parse_unsigned(const char *s, unsigned min, unsigned max, unsigned *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *s == '\0' || *s == '-' || *end || v < min || v > max)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static int bad_arg(const char *opt, const char *value) {
        fprintf(stderr, "timensd: invalid %s '%s'. Try 'timensd --help'.\n", opt, value);
        return -EINVAL;
}

static int parse_one(int c, struct args *a) {
        switch (c) {
        case 'S':
                a->socket = optarg;
                return 0;
        case 'A':
                a->agent_socket = optarg;
                return 0;
        case 'G':
                a->group = optarg;
                return 0;
        case 'L':
                a->log_level = timensd_parse_log_level(optarg);
                return a->log_level < 0 ? bad_arg("--log-level", optarg) : 0;
        case 'T':
                a->log_target = strcmp(optarg, "auto") == 0      ? -1
                                : strcmp(optarg, "stderr") == 0  ? 0
                                : strcmp(optarg, "journal") == 0 ? 1
                                                                 : -2;
                return a->log_target == -2 ? bad_arg("--log-target", optarg) : 0;
        case 'E':
                a->entrants = strcmp(optarg, "auto") == 0   ? ENTRANTS_AUTO
                              : strcmp(optarg, "bpf") == 0  ? ENTRANTS_BPF
                              : strcmp(optarg, "proc") == 0 ? ENTRANTS_PROC
                              : strcmp(optarg, "off") == 0  ? ENTRANTS_OFF
                                                            : -1;
                return (int) a->entrants < 0 ? bad_arg("--entrants", optarg) : 0;
        case 'F':
                a->foreground = true;
                return 0;
        case 'C':
                return parse_unsigned(optarg, 1, 65536, &a->max_connections) < 0 ? bad_arg("--max-connections", optarg)
                                                                                 : 0;
        case 'I':
                return parse_unsigned(optarg, 1, 86400, &a->idle_timeout_sec) < 0 ? bad_arg("--idle-timeout", optarg)
                                                                                  : 0;
        default:
                fprintf(stderr, "timensd: try 'timensd --help' for the options.\n");
                return -EINVAL;
        }
}

/* 1: go on, 0: done (help, version), <0: bad arguments. */
static int parse_args(int argc, char *argv[], struct args *a) {
        static const struct option options[] = {
                {"socket", required_argument, NULL, 'S'},
                {"agent-socket", required_argument, NULL, 'A'},
                {"group", required_argument, NULL, 'G'},
                {"log-level", required_argument, NULL, 'L'},
                {"log-target", required_argument, NULL, 'T'},
                {"foreground", no_argument, NULL, 'F'},
                {"max-connections", required_argument, NULL, 'C'},
                {"idle-timeout", required_argument, NULL, 'I'},
                {"entrants", required_argument, NULL, 'E'},
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, 'V'},
                {},
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                if (c == 'h')
                        return help(), 0;
                if (c == 'V')
                        return printf("timensd " TNS_VERSION "\n"), 0;
                r = parse_one(c, a);
                if (r < 0)
                        return r;
        }
        if (optind < argc) {
                fprintf(stderr, "timensd: unexpected argument '%s'.\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

/* Every namespace costs fds (its memfd, listeners, pidfds of pinned
 * processes) and every client one: take what the hard limit allows, as
 * systemd's services do. */
static void raise_nofile(const struct tns_logger *log) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                tns_log_errno(log, LOG_WARNING, errno, "Failed to raise RLIMIT_NOFILE, ignoring: %m");
}

static int on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct manager *m = userdata;

        tns_log(&m->log, LOG_INFO, "Received %s, stopping", strsignal((int) si->ssi_signo));
        (void) sd_notify(false, "STOPPING=1");
        /* What the receive threads handed over is served while the loop
         * still follows what it starts (an exec's injection), as the
         * calls the loop received itself were. */
        tns_supervisor_stop_threads(m->supervisor);
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct manager *m = userdata;

        (void) sd_notify(false, "RELOADING=1");
        manager_reload(m);
        tns_log(&m->log, LOG_INFO, "Reloaded: group '%s' %s", m->group_name,
                m->have_group ? "found" : "not found (root only may change state)");
        (void) sd_notify(false, "READY=1");
        return 0;
}

/* SIGUSR2: a new image (an upgrade) takes over every fd; we go. */
static int on_handoff(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct manager *m = userdata;

        /* Nothing a receive thread took may die with us unanswered. */
        tns_supervisor_stop_threads(m->supervisor);
        tns_supervisor_settle_held_calls(m->supervisor);
        if (fdstore_handoff(m) < 0) {
                tns_supervisor_start_threads(m->supervisor);
                return 0;
        }
        /* Nothing torn down: the sockets and fds are the new image's now. */
        _exit(EXIT_SUCCESS);
}

static int add_signals(sd_event *e, struct manager *m) {
        static const struct {
                int sig;
                const char *name;
                sd_event_signal_handler_t fn;
        } sigs[] = {
                {SIGTERM, "timensd-sigterm", on_terminate},
                {SIGINT, "timensd-sigint", on_terminate},
                {SIGHUP, "timensd-sighup", on_reload},
                {SIGUSR2, "timensd-sigusr2", on_handoff},
        };
        sd_event_source *src;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(sigs); i++) {
                r = sd_event_add_signal(e, &src, sigs[i].sig, sigs[i].fn, m);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(src, sigs[i].name);
                (void) sd_event_source_set_floating(src, true);
                sd_event_source_unref(src);
        }
        return 0;
}

/* Without --foreground (and not under systemd): the parent returns once
 * the socket listens, so that `timensd && timensctl ...` works. */
static int daemonize(int *ret_ready_fd) {
        int p[2], null;
        char byte;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid > 0) {
                close(p[1]);
                _exit(read(p[0], &byte, 1) == 1 ? EXIT_SUCCESS : EXIT_FAILURE);
        }
        close(p[0]);
        if (setsid() < 0 || chdir("/") < 0)
                return negative_errno();
        null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
                (void) dup2(null, STDIN_FILENO);
                (void) dup2(null, STDOUT_FILENO);
                close(null);
        }
        *ret_ready_fd = p[1];
        return 0;
}

static int log_oom(struct manager *m) {
        return tns_log_errno(&m->log, LOG_ERR, ENOMEM, "Out of memory");
}

static int setup(struct manager *m, const struct args *a) {
        _cleanup_free_ char *agent = NULL;
        int r;

        m->max_connections = a->max_connections;
        m->idle_timeout_usec = (uint64_t) a->idle_timeout_sec * 1000000;
        if (a->group) {
                free(m->group_name);
                m->group_name = strdup(a->group);
                if (!m->group_name)
                        return -ENOMEM;
                manager_reload(m);
        }
        r = fdstore_collect(m);
        if (r < 0)
                return r;
        r = add_signals(m->event, m);
        if (r < 0)
                return tns_log_errno(&m->log, LOG_ERR, r, "Failed to watch signals: %m");
        r = server_listen(m, a->socket);
        if (r < 0)
                return r;
        if (!a->agent_socket) {
                _cleanup_free_ char *copy = strdup(a->socket);

                if (!copy || asprintf(&agent, "%s/seccomp-agent.sock", dirname(copy)) < 0)
                        return log_oom(m);
        }
        if (!a->agent_socket || *a->agent_socket) {
                r = agent_listen(m, a->agent_socket ?: agent);
                if (r < 0)
                        return r;
        }
        (void) sd_event_set_watchdog(m->event, true);
        return 0;
}

/* For SIGUSR2: our binary as it is on disk then (an upgrade replaced it)
 * and our arguments, in the foreground (detached already). */
static int remember_exec(struct manager *m, int argc, char *argv[]) {
        bool foreground = false;

        m->exe = realpath("/proc/self/exe", NULL);
        if (!m->exe)
                return -errno;
        if (strstr(m->exe, " (deleted)"))
                m->exe[strlen(m->exe) - strlen(" (deleted)")] = '\0';
        m->argv = calloc((size_t) argc + 2, sizeof(char *));
        if (!m->argv)
                return -ENOMEM;
        for (int i = 0; i < argc; i++) {
                if (!(m->argv[i] = strdup(argv[i])))
                        return -ENOMEM;
                if (i > 0 && strcmp(argv[i], "--foreground") == 0)
                        foreground = true;
        }
        /* Once: a successor that hands over again must not grow its
         * command line (helper-44: one more each time). */
        if (!foreground && !(m->argv[argc] = strdup("--foreground")))
                return -ENOMEM;
        return 0;
}

static int run(const struct args *a, struct tns_logger *log, int argc, char *argv[]) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        struct manager *m = NULL;
        struct entrants *entrants = NULL;
        int ready = -EBADF, r;

        if (!a->foreground && !getenv("NOTIFY_SOCKET")) {
                _cleanup_free_ char *exe = NULL;
                char **wargv;

                r = daemonize(&ready);
                if (r < 0)
                        return tns_log_errno(log, LOG_ERR, r, "Failed to detach: %m");
                /* The keeper, and the worker is this program again, in the
                 * foreground, under it (timensd(8), RESTARTS). */
                exe = realpath("/proc/self/exe", NULL);
                wargv = calloc((size_t) argc + 2, sizeof(char *));
                if (!exe || !wargv)
                        return tns_log_errno(log, LOG_ERR, ENOMEM, "Failed to start the keeper: %m");
                memcpy(wargv, argv, (size_t) argc * sizeof(char *));
                wargv[argc] = (char *) "--foreground";
                r = keeper_run(exe, wargv, ready, log);
                free(wargv);
                return r == EXIT_SUCCESS ? 0 : -EIO;
        }
        r = sd_event_new(&e);
        if (r >= 0)
                r = manager_new(e, log, &m);
        if (r < 0)
                return tns_log_errno(log, LOG_ERR, r, "Failed to set up: %m");
        if (remember_exec(m, argc, argv) < 0)
                tns_log(log, LOG_WARNING, "Cannot find our own binary: SIGUSR2 will not hand over");
        r = setup(m, a);
        if (r >= 0) {
                /* Without it, entrants are not attached: logged, not fatal. */
                (void) entrants_start(m, a->entrants, &entrants);
                /* What a predecessor served, before READY=1. */
                r = fdstore_restore(m);
        }
        if (r >= 0) {
                tns_log(&m->log, LOG_INFO, "Listening on %s", a->socket);
                (void) sd_notifyf(false, "READY=1\nMAINPID=%d", (int) getpid());
                if (ready >= 0)
                        (void) !write(ready, "", 1);
                ready = safe_close(ready);
                r = tns_supervisor_run(m->supervisor);
        }
        safe_close(ready);
        entrants_free(entrants);
        manager_free(m);
        return r;
}

int main(int argc, char *argv[]) {
        struct args a = {
                .socket = TNS_DEFAULT_SOCKET,
                .log_level = LOG_INFO,
                .log_target = -1,
                .max_connections = TIMENSD_DEFAULT_MAX_CONNECTIONS,
                .idle_timeout_sec = TIMENSD_DEFAULT_IDLE_TIMEOUT_SEC,
        };
        struct log_target target = {};
        struct tns_logger log = {timensd_log, &target, LOG_INFO};
        sigset_t mask;
        int r;

        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        log.max_level = a.log_level;
        target.journal = a.log_target == 1 || (a.log_target < 0 && timensd_journal_available());
        /* On stderr that a service manager or container runtime collects,
         * the severity travels as a "<N>" prefix (sd-daemon(3)): journald
         * and systemd's stdout stream read it. A terminal gets plain lines. */
        target.prefix = !target.journal && (a.log_target == 0 || !isatty(STDERR_FILENO));
        if (geteuid() != 0)
                tns_log(&log, LOG_WARNING, "Not running as root: only processes of this user can be served");
        /* A client gone mid-reply must cost its connection, not us. */
        (void) signal(SIGPIPE, SIG_IGN);
        /* sd-event reads these from a signalfd: blocked before any thread
         * or child exists. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM), sigaddset(&mask, SIGINT), sigaddset(&mask, SIGHUP), sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGUSR2);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        raise_nofile(&log);
        r = run(&a, &log, argc, argv);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
