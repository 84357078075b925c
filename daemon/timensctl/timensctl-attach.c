/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl attach: put a running process (and its descendants) into a
 * namespace. timensd does it (it must trace the process: lib/kernel/attach.h);
 * timensctl starts timensd if nothing answers on its socket, so that
 * nothing has to be set up beforehand. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "client.h"
#include "registry.h"
#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl attach PID [--monotonic OFFSET] [--boottime OFFSET]\n"
               "                            [--realtime OFFSET|DATE] [--name NAME | --join NAME]\n"
               "                            [--grant none|read|full] [--no-tree] [--json]\n"
               "\n"
               "Put the running process PID, and every process it has started, into a time\n"
               "namespace: from their next clock read on they see its clocks. Children they\n"
               "start later inherit it. timensd does it (it is started if it does not answer).\n"
               "\n"
               "  --monotonic OFFSET  offset of CLOCK_MONOTONIC, _RAW and _COARSE\n"
               "  --boottime OFFSET   offset of CLOCK_BOOTTIME and CLOCK_BOOTTIME_ALARM\n"
               "  --realtime OFFSET|DATE\n"
               "                      offset of CLOCK_REALTIME, _COARSE, _ALARM, CLOCK_TAI,\n"
               "                      gettimeofday() and time(); or the date the clock shows now\n"
               "  --name NAME         a name for the new namespace (unique in timensd)\n"
               "  --join NAME         attach to an existing namespace instead\n"
               "  --grant G           what processes inside may do through timensd's socket:\n"
               "                      none (default), read or full\n"
               "  --no-tree           the process alone, not its descendants\n"
               "  --json              print timensd's reply as JSON\n"
               "  --socket PATH       timensd's socket (default $TIMENS_SOCKET or\n"
               "                      /run/timens/timensd.sock)\n"
               "  -h --help           show this help\n"
               "\n"
               "OFFSET and DATE as for 'timensctl run --help'. PID is a process id as timensd\n"
               "sees it (the host's pid namespace).\n"
               "\n"
               "The namespace made here goes when the last attached process has exited.\n"
               "Users other than root attach only their own processes: one of the tree\n"
               "that is not (a setuid program, say) is skipped with what runs under it,\n"
               "and named on standard error.\n"
               "A process that already has a seccomp listener (another supervisor, a\n"
               "container runtime's seccomp agent) cannot be attached. See timensctl(1).\n");
}

struct attach_args {
        struct offset_args off;
        const char *name, *join;
        int grant;
        bool no_tree;
        pid_t pid;
};

static int parse_args(int argc, char *argv[], struct ctl_options *o, struct attach_args *a) {
        enum { ARG_NAME = 0x100, ARG_JOIN, ARG_GRANT, ARG_NO_TREE };
        static const struct option options[] = {
                CTL_OFFSET_OPTIONS,
                {"name", required_argument, NULL, ARG_NAME},
                {"join", required_argument, NULL, ARG_JOIN},
                {"grant", required_argument, NULL, ARG_GRANT},
                {"no-tree", no_argument, NULL, ARG_NO_TREE},
                CTL_COMMON_OPTIONS,
                {},
        };
        char *end;
        long pid;
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                if (ctl_common_option(c, o) || ctl_offset_option(c, &a->off))
                        continue;
                if (c == 'h')
                        return help(), 0;
                if (c == ARG_NAME)
                        a->name = optarg;
                else if (c == ARG_JOIN)
                        a->join = optarg;
                else if (c == ARG_NO_TREE)
                        a->no_tree = true;
                else if (c != ARG_GRANT || ctl_parse_grant(optarg, &a->grant) < 0)
                        return ctl_bad_option("attach");
        }
        if (optind != argc - 1)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "attach takes one PID (see --help)");
        errno = 0;
        pid = strtol(argv[optind], &end, 10);
        if (errno || *end || pid <= 0 || pid > INT32_MAX)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "Invalid PID '%s'", argv[optind]);
        a->pid = (pid_t) pid;
        return 1;
}

static int check_args(const struct attach_args *a) {
        bool offsets = a->off.text[0] || a->off.text[1] || a->off.text[2];

        if (a->join && (a->name || offsets || a->grant))
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                     "--join takes the namespace as it is: no --name, offsets or --grant");
        return a->name ? ctl_check_name("--name", a->name) : 0;
}

static int print_result(json_object *res, const struct ctl_options *o) {
        json_object *attached = NULL, *failed = NULL, *skipped = NULL;
        size_t n_failed, n_skipped;
        int r;

        r = ctl_print_namespace(res, o, false);
        if (r < 0)
                return r;
        (void) json_object_object_get_ex(res, "attached", &attached);
        (void) json_object_object_get_ex(res, "failed", &failed);
        (void) json_object_object_get_ex(res, "skipped", &skipped);
        n_failed = failed ? json_object_array_length(failed) : 0;
        n_skipped = skipped ? json_object_array_length(skipped) : 0;
        if (!o->json)
                printf("Attached %zu process%s.\n", attached ? json_object_array_length(attached) : 0,
                       attached && json_object_array_length(attached) == 1 ? "" : "es");
        for (size_t i = 0; i < n_failed; i++) {
                json_object *f = json_object_array_get_idx(failed, i), *pid = NULL, *msg = NULL;

                (void) json_object_object_get_ex(f, "pid", &pid);
                (void) json_object_object_get_ex(f, "message", &msg);
                tns_log(&timensctl_log, LOG_ERR, "Failed to attach process %d of the tree: %s",
                        json_object_get_int(pid), json_object_get_string(msg));
        }
        /* Not failures: timensd did what it may. They read the host's
         * clocks, which the user must know. */
        for (size_t i = 0; i < n_skipped; i++) {
                json_object *k = json_object_array_get_idx(skipped, i), *pid = NULL, *why = NULL;

                (void) json_object_object_get_ex(k, "pid", &pid);
                (void) json_object_object_get_ex(k, "reason", &why);
                tns_log(&timensctl_log, LOG_WARNING,
                        "Skipped process %d of the tree and what runs under it, not yours to attach: %s",
                        json_object_get_int(pid), json_object_get_string(why));
        }
        /* A process of the tree left out reads the host's clocks: that is
         * a failure of the command, though the others are attached. */
        return n_failed ? -ECHILD : 0;
}

int verb_attach(int argc, char *argv[], struct ctl_options *o) {
        struct attach_args a = {};
        struct tns_request req = {.op = TNS_OP_ATTACH};
        _cleanup_client_ struct tns_client *c = NULL;
        _cleanup_json_ json_object *res = NULL;
        int r;

        r = parse_args(argc, argv, o, &a);
        if (r <= 0)
                return ctl_exit(r);
        r = check_args(&a);
        if (r >= 0)
                r = ctl_offsets_to_request(&a.off, &req);
        if (r < 0)
                return ctl_exit(r);
        req.pid = a.pid;
        req.name = a.join ?: a.name;
        req.join = a.join;
        req.grant = a.grant;
        req.no_tree = a.no_tree;
        r = ctl_connect_or_start(o, &c);
        if (r < 0)
                return ctl_exit(r);
        /* A tree of many processes takes a while: timensd bounds a request
         * to about two seconds (lib/supervisor/supervisor.h). */
        tns_client_set_timeout(c, 60000);
        r = ctl_call(c, &req, NULL, 0, &res);
        if (r < 0)
                return ctl_exit(r);
        return ctl_exit(print_result(res, o));
}
