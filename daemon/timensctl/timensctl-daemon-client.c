/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the commands share to talk to timensd: connecting, one request,
 * error messages that name what failed, and printing namespaces. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "clocks.h"
#include "ns-model.h"
#include "paths.h" /* TNS_TIMENSD_PATH: generated from the Makefile's SBINDIR */
#include "faketime.h"
#include "rate.h"
#include "timensctl.h"

int ctl_common_option(int c, struct ctl_options *o) {
        switch (c) {
        case CTL_ARG_SOCKET:
                o->socket = optarg;
                return 1;
        case CTL_ARG_JSON:
                o->json = true;
                return 1;
        default:
                return 0;
        }
}

int ctl_parse_common_only(int argc, char *argv[], struct ctl_options *o, const char *verb, void (*help)(void)) {
        static const struct option options[] = {CTL_COMMON_OPTIONS, {}};
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                if (ctl_common_option(c, o))
                        continue;
                if (c == 'h')
                        return help(), 0;
                return ctl_bad_option(verb);
        }
        return 1;
}

int ctl_connect(const struct ctl_options *o, bool quiet, struct tns_client **ret) {
        const char *path = o->socket ?: tns_client_default_socket();
        int r;

        r = tns_client_connect(path, ret);
        if (r < 0 && !quiet)
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to connect to timensd at %s: %m%s", path,
                                     r == -ENOENT || r == -ECONNREFUSED ? " (is timensd running?)" : "");
        return r;
}

/* timensd: $TIMENSD, else beside this program (a build tree), else where
 * `make install` puts it, else $PATH. */
static void exec_timensd(const char *socket) {
        /* Where this build installs it, then a distribution's. */
        static const char *const fixed[] = {TNS_TIMENSD_PATH, "/usr/sbin/timensd"};
        char self[PATH_MAX], *slash;
        ssize_t n;

        if (getenv("TIMENSD"))
                execl(getenv("TIMENSD"), "timensd", "--socket", socket, (char *) NULL);
        n = readlink("/proc/self/exe", self, sizeof(self) - sizeof("timensd"));
        if (n > 0) {
                self[n] = '\0';
                slash = strrchr(self, '/');
                if (slash) {
                        strcpy(slash + 1, "timensd");
                        execl(self, "timensd", "--socket", socket, (char *) NULL);
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                execl(fixed[i], "timensd", "--socket", socket, (char *) NULL);
        execlp("timensd", "timensd", "--socket", socket, (char *) NULL);
}

/* Starts timensd on path and waits until it listens: without
 * --foreground it returns once its socket is bound (timensd(8)). Its
 * stdio goes to /dev/null, so that whoever reads ours (a container
 * runtime running a hook) does not wait for it. */
static int start_timensd(const char *path) {
        pid_t pid;
        int status;

        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                /* O_CLOEXEC: timensd gets /dev/null as 0, 1 and 2 (dup2
                 * clears the flag there), not a fourth, leaked copy. */
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (null >= 0)
                        (void) dup2(null, 0), (void) dup2(null, 1), (void) dup2(null, 2);
                if (null <= STDERR_FILENO) /* it was one of them: keep it across exec */
                        (void) fcntl(null, F_SETFD, 0);
                (void) setsid();
                exec_timensd(path);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                return negative_errno();
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -EIO;
        return 0;
}

int ctl_connect_or_start(const struct ctl_options *o, struct tns_client **ret) {
        const char *path = o->socket ?: tns_client_default_socket();
        int r;

        r = tns_client_connect(path, ret);
        if (r != -ENOENT && r != -ECONNREFUSED)
                return r < 0 ? ctl_connect(o, false, ret) : r;
        if (geteuid() != 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r,
                                     "Failed to connect to timensd at %s: %m (it runs as root: start it as root)",
                                     path);
        tns_log(&timensctl_log, LOG_DEBUG, "Nothing answers at %s: starting timensd", path);
        r = start_timensd(path);
        if (r < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r,
                                     "Failed to start timensd on %s: %m%s (start it yourself: timensd --socket %s)",
                                     path, r == -ENOENT ? " (not found: set $TIMENSD)" : "", path);
        return ctl_connect(o, false, ret);
}

static int errno_of(enum tns_err e) {
        switch (e) {
        case TNS_ERR_NOT_FOUND:
                return -ENOENT;
        case TNS_ERR_EXISTS:
                return -EEXIST;
        case TNS_ERR_PERMISSION_DENIED:
                return -EACCES;
        default:
                return -EPROTO;
        }
}

int ctl_call(struct tns_client *c, struct tns_request *req, const int *fds, size_t n_fds, json_object **ret_result) {
        struct tns_proto_error e = {};
        int r;

        r = tns_client_call(c, req, fds, n_fds, ret_result, &e);
        if (r < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to talk to timensd (%s): %m",
                                     tns_op_name(req->op));
        if (r == 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, errno_of(e.code), "timensd: %s (%s)", e.message,
                                     tns_err_code(e.code));
        return 0;
}

int ctl_request(const struct ctl_options *o, struct tns_request *req, json_object **ret_result) {
        _cleanup_client_ struct tns_client *c = NULL;
        int r;

        r = ctl_connect(o, false, &c);
        if (r < 0)
                return r;
        if (req->op == TNS_OP_WAIT)
                tns_client_set_timeout(c, (int) req->timeout_ms + TNS_CLIENT_TIMEOUT_MS);
        return ctl_call(c, req, NULL, 0, ret_result);
}

void ctl_target(const char *arg, struct tns_request *req) {
        char *end;
        unsigned long long id;

        /* Names are never all digits (tns_ns_name_valid): digits are an id. */
        errno = 0;
        id = strtoull(arg, &end, 10);
        if (arg[0] >= '0' && arg[0] <= '9' && *end == '\0' && errno == 0 && id > 0)
                req->ns_id = id;
        else
                req->name = arg;
}

/* The classes a --freeze=, --unfreeze= or a --rate CLASS= names: a
 * comma-separated list, "" for every clock. */
static int classes_arg(const char *opt, const char *s, size_t len, unsigned *ret) {
        *ret = 0;
        if (len == 0) {
                *ret = TNS_RATE_CLASSES_ALL;
                return 0;
        }
        for (size_t i = 0; i < len;) {
                size_t n = strcspn(s + i, ",");
                unsigned m;

                if (n > len - i)
                        n = len - i;
                /* An empty one ("realtime,", ",,") names nothing. */
                if (n == 0 || s[len - 1] == ',')
                        return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                             "Invalid %s: '%.*s' has an empty clock class", opt, (int) len, s);
                if (tns_rate_classes_parse(s + i, n, &m) < 0)
                        return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                             "Invalid %s: '%.*s' is not a clock class: realtime or monotonic "
                                             "(MONOTONIC and BOOTTIME run at one rate)",
                                             opt, (int) n, s + i);
                *ret |= m;
                i += n + 1;
        }
        return 0;
}

static int one_rate(const char *text, uint64_t *ret) {
        int r = tns_rate_parse(text, ret);

        if (r == -ERANGE)
                return tns_log_errno(&timensctl_log, LOG_ERR, r,
                                     "--rate '%s' is out of range: 1/1000000 to " TNS_RATE_MAX_TEXT, text);
        if (r < 0)
                return tns_log_errno(
                        &timensctl_log, LOG_ERR, r,
                        "Invalid --rate '%s': expected a positive decimal or fraction (2, 0.5, 1440, "
                        "1/60)%s",
                        text,
                        strspn(text, "0./") == strlen(text) && *text ? "; a clock that stands still is --freeze" : "");
        return 0;
}

/* --rate R (every clock) or --rate CLASS=R[,CLASS=R]. */
static int rate_arg(const char *s, unsigned *given, struct tns_request *req) {
        if (*s && s[strlen(s) - 1] == ',')
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "Invalid --rate '%s': it ends with a comma", s);
        if (!strchr(s, '=')) {
                uint64_t mult;
                int r = one_rate(s, &mult);

                if (r < 0)
                        return r;
                if (*given)
                        return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "--rate gives a clock's rate twice");
                *given = TNS_RATE_CLASSES_ALL;
                tns_request_set_rate(req, TNS_RATE_CLASSES_ALL, mult);
                return 0;
        }
        for (const char *p = s; *p;) {
                size_t n = strcspn(p, ","), eq = strcspn(p, "=");
                char value[64];
                uint64_t mult;
                unsigned mask;
                int r;

                if (eq == 0 || eq >= n || n - eq - 1 >= sizeof(value))
                        return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                             "Invalid --rate '%s': expected R, or CLASS=R[,CLASS=R] with CLASS "
                                             "realtime or monotonic",
                                             s);
                r = classes_arg("--rate", p, eq, &mask);
                if (r < 0)
                        return r;
                memcpy(value, p + eq + 1, n - eq - 1);
                value[n - eq - 1] = '\0';
                r = one_rate(value, &mult);
                if (r < 0)
                        return r;
                if (*given & mask)
                        return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "--rate gives a clock's rate twice");
                *given |= mask;
                tns_request_set_rate(req, mask, mult);
                p += n + (p[n] == ',');
        }
        return 0;
}

void ctl_format_rates(const struct tns_ns_view *v, bool compact, char *buf, size_t size) {
        static const enum tns_clock_class order[] = {TNS_CLASS_REALTIME, TNS_CLASS_MONOTONIC};
        const bool one = v->rate_mult[TNS_CLASS_REALTIME] == v->rate_mult[TNS_CLASS_MONOTONIC] &&
                         v->run_mult[TNS_CLASS_REALTIME] == v->run_mult[TNS_CLASS_MONOTONIC];
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < (one ? 1 : 2) && len < size; i++) {
                enum tns_clock_class c = order[i];
                char r[32];

                (void) tns_rate_format(v->run_mult[c], r, sizeof(r));
                len += (size_t) snprintf(buf + len, size - len, "%s%s%s%s%s", i ? (compact ? "," : ", ") : "",
                                         one       ? ""
                                         : compact ? (c == TNS_CLASS_REALTIME ? "rt:" : "mono:")
                                                   : (c == TNS_CLASS_REALTIME ? "realtime " : "monotonic "),
                                         r, v->rate_mult[c] == 0 ? (compact ? "/frozen" : " (frozen)") : "", "");
        }
}

int ctl_rates_to_request(const struct offset_args *a, struct tns_request *req) {
        struct tns_faketime f = {};
        const char *why = NULL;
        unsigned given = 0, frozen = 0, unfrozen = 0;
        int r;

        if (a->n_rate > CTL_RATE_ARGS_MAX || a->n_freeze > CTL_RATE_ARGS_MAX || a->n_unfreeze > CTL_RATE_ARGS_MAX)
                return tns_log_errno(&timensctl_log, LOG_ERR, E2BIG,
                                     "Too many --rate, --freeze or --unfreeze: at most %d of each", CTL_RATE_ARGS_MAX);
        if (a->faketime && (a->text[TNS_CLASS_REALTIME] || a->n_rate || a->n_freeze || a->n_unfreeze))
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                     "--faketime '%s' gives the realtime offset, rate and freeze itself: not with "
                                     "--realtime, --rate, --freeze or --unfreeze",
                                     a->faketime);
        if (a->faketime) {
                r = tns_faketime_parse(a->faketime, &f, &why);
                if (r < 0)
                        return tns_log_errno(&timensctl_log, LOG_ERR, r, "Invalid --faketime '%s': %s", a->faketime,
                                             why);
                req->clocks[TNS_CLASS_REALTIME] = (struct tns_clock_arg){.set = true, .spec = f.realtime};
                /* A spec makes the namespace rate-capable even at x1: the
                 * rate can be changed later. */
                tns_request_set_rate(req, TNS_RATE_CLASSES_ALL, f.rate_mult ?: (f.freeze ? 0 : TNS_RATE_ONE));
                /* A spec says whether the clocks stand or run: a running
                 * one unfreezes a frozen namespace (set). */
                tns_request_set_freeze(req, TNS_RATE_CLASSES_ALL, f.freeze ? TNS_FREEZE_ON : TNS_FREEZE_OFF);
                return 0;
        }
        for (unsigned i = 0; i < a->n_rate; i++) {
                r = rate_arg(a->rate[i], &given, req);
                if (r < 0)
                        return r;
        }
        for (unsigned i = 0; i < a->n_freeze + a->n_unfreeze; i++) {
                bool on = i < a->n_freeze;
                const char *s = on ? a->freeze[i] : a->unfreeze[i - a->n_freeze];
                unsigned mask;

                r = classes_arg(on ? "--freeze" : "--unfreeze", s, strlen(s), &mask);
                if (r < 0)
                        return r;
                *(on ? &frozen : &unfrozen) |= mask;
                tns_request_set_freeze(req, mask, on ? TNS_FREEZE_ON : TNS_FREEZE_OFF);
        }
        if (frozen & unfrozen)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                     "--freeze and --unfreeze exclude each other for one clock");
        return 0;
}

int ctl_offsets_to_request(const struct offset_args *a, struct tns_request *req) {
        int64_t checked[TNS_CLASS_MAX];
        int r;

        r = ctl_rates_to_request(a, req);
        if (r < 0)
                return r;
        r = offsets_resolve(a, checked);
        if (r < 0)
                return r;
        /* Dates go as dates: the daemon makes them offsets when it applies
         * them, so that the clock reads the date then, not a little before. */
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (a->text[c] && tns_offset_parse(a->text[c], c == TNS_CLASS_REALTIME, &req->clocks[c].spec) == 0)
                        req->clocks[c].set = true;
        return 0;
}

int ctl_parse_grant(const char *s, int *ret) {
        int g = tns_grant_from_name(s);

        if (g < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                     "Invalid --grant '%s': expected none, read or full", s);
        *ret = g;
        return 0;
}

void ctl_print_json(json_object *o) {
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void print_reading(enum tns_clock_class c, int64_t now_ns) {
        struct tm tm;
        time_t t = (time_t) (now_ns / 1000000000);
        char buf[64];

        if (c == TNS_CLASS_REALTIME && localtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S %Z", &tm))
                printf("  (reads %s)\n", buf);
        else
                printf("  (reads %" PRId64 ".%03" PRId64 " s)\n", now_ns / 1000000000, now_ns % 1000000000 / 1000000);
}

static void print_processes(const struct tns_ns_view *v) {
        unsigned shown = v->n_processes < 8 ? v->n_processes : 8;

        printf("    Processes: %u", v->n_processes);
        for (unsigned i = 0; i < shown; i++)
                printf("%s%d", i == 0 ? " (" : " ", (int) v->processes[i]);
        printf("%s\n", shown == 0 ? "" : shown < v->n_processes ? " ...)" : ")");
}

static void print_details(const struct tns_ns_view *v) {
        char offset[40];

        printf("%s (id %" PRIu64 ")\n", v->name[0] ? v->name : "(no name)", v->id);
        printf("       Origin: %s\n", tns_origin_name(v->origin));
        if (v->parent_id)
                printf("       Parent: %" PRIu64 " (depth %u)\n", v->parent_id, v->depth);
        if (v->kernel_ns) {
                printf("    Kernel ns: time:[%" PRIu64 "]", v->kernel_ns);
                if (v->kernel_offsets_known) {
                        char m[40], b[40];

                        (void) tns_offset_format(v->kernel_offset_ns[TNS_CLASS_MONOTONIC], m, sizeof(m));
                        (void) tns_offset_format(v->kernel_offset_ns[TNS_CLASS_BOOTTIME], b, sizeof(b));
                        printf(" (its offsets, added: monotonic %s, boottime %s)", m, b);
                }
                printf("\n");
        }
        printf("        Grant: %s\n", tns_grant_name(v->grant));
        if (v->origin != TNS_ORIGIN_UNSHARE && v->origin != TNS_ORIGIN_DETACHED)
                printf("        Owner: uid %u%s\n", v->owner, v->shared ? " (shared: any uid may join)" : "");
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                (void) tns_offset_format(v->offset_ns[c], offset, sizeof(offset));
                printf("%13s: %-12s",
                       c == TNS_CLASS_MONOTONIC  ? "Monotonic"
                       : c == TNS_CLASS_BOOTTIME ? "Boottime"
                                                 : "Realtime",
                       offset);
                print_reading(c, v->now_ns[c]);
        }
        {
                char rates[96];

                ctl_format_rates(v, false, rates, sizeof(rates));
                printf("         Rate: %s%s\n", rates, v->rate_capable ? "" : " (fixed: made without --rate)");
        }
        printf("    Listeners: %u\n", v->listeners);
        if (v->has_processes)
                print_processes(v);
        printf("     Children: %u\n", v->children);
        printf("        Calls: %" PRIu64 " (%" PRIu64 " failed)\n", v->calls, v->failures);
        printf("         Sets: %" PRIu64 "\n", v->sets);
}

int ctl_print_namespace(json_object *result, const struct ctl_options *o, bool details) {
        _cleanup_free_ struct tns_ns_view *v = NULL;
        json_object *ns;
        char offset[3][40];

        if (o->json) {
                ctl_print_json(result);
                return 0;
        }
        v = malloc(sizeof(*v));
        if (!v)
                return tns_log_errno(&timensctl_log, LOG_ERR, ENOMEM, "Out of memory");
        if (!json_object_object_get_ex(result, "namespace", &ns) || tns_ns_view_from_json(ns, v) < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, EBADMSG, "timensd sent a namespace we cannot read");
        if (details) {
                print_details(v);
                return 0;
        }
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                (void) tns_offset_format(v->offset_ns[c], offset[c], sizeof(offset[c]));
        printf("%s (id %" PRIu64 "): monotonic %s, boottime %s, realtime %s\n", v->name[0] ? v->name : "(no name)",
               v->id, offset[0], offset[1], offset[2]);
        return 0;
}

int ctl_offset_option(int c, struct offset_args *a) {
        /* Kept in order; beyond the room, counted and refused later. */
        if (c == CTL_ARG_RATE) {
                if (a->n_rate < CTL_RATE_ARGS_MAX)
                        a->rate[a->n_rate] = optarg;
                return a->n_rate++, 1;
        }
        if (c == CTL_ARG_FREEZE) {
                if (a->n_freeze < CTL_RATE_ARGS_MAX)
                        a->freeze[a->n_freeze] = optarg ?: "";
                return a->n_freeze++, 1;
        }
        if (c == CTL_ARG_UNFREEZE) {
                if (a->n_unfreeze < CTL_RATE_ARGS_MAX)
                        a->unfreeze[a->n_unfreeze] = optarg ?: "";
                return a->n_unfreeze++, 1;
        }
        if (c == CTL_ARG_FAKETIME)
                return a->faketime = optarg, 1;
        if (c < CTL_ARG_MONOTONIC || c > CTL_ARG_REALTIME)
                return 0;
        a->text[c == CTL_ARG_MONOTONIC  ? TNS_CLASS_MONOTONIC
                : c == CTL_ARG_BOOTTIME ? TNS_CLASS_BOOTTIME
                                        : TNS_CLASS_REALTIME] = optarg;
        return 1;
}

int ctl_bad_option(const char *verb) {
        return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "Try 'timensctl %s --help' for the options.", verb);
}

int ctl_check_name(const char *what, const char *name) {
        if (tns_ns_name_valid(name))
                return 0;
        return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "Invalid %s '%s': " TNS_NS_NAME_RULE, what, name);
}
