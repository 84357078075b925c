/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl import: a namespace from an exported clock state. MONOTONIC
 * and BOOTTIME continue from the exported values (as CRIU restores a time
 * namespace); REALTIME keeps its offset from real time. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl import FILE|- [--name NAME] [--grant none|read|full] [--shared] [--json]\n"
               "\n"
               "Create a namespace from a state 'timensctl export' wrote: its MONOTONIC and\n"
               "BOOTTIME read now what they read at export, and REALTIME keeps its offset from\n"
               "the host's real time. --name overrides the name in the state.\n");
}

static int read_state(const char *path, struct tns_request *req) {
        _cleanup_json_ json_object *o = NULL;
        struct tns_proto_error e;

        o = strcmp(path, "-") == 0 ? json_object_from_fd(STDIN_FILENO) : json_object_from_file(path);
        if (!o)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "Failed to read a JSON document from '%s': %s",
                                     path, json_util_get_last_err() ?: "unknown error");
        if (tns_clock_state_from_json(o, &req->state, &e) < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "'%s' is not a clock state: %s", path, e.message);
        req->has_state = true;
        return 0;
}

int verb_import(int argc, char *argv[], struct ctl_options *o) {
        enum { ARG_NAME = 0x100, ARG_GRANT, ARG_SHARED };
        static const struct option options[] = {{"name", required_argument, NULL, ARG_NAME},
                                                {"grant", required_argument, NULL, ARG_GRANT},
                                                {"shared", no_argument, NULL, ARG_SHARED},
                                                CTL_COMMON_OPTIONS,
                                                {}};
        struct tns_request req = {.op = TNS_OP_IMPORT};
        _cleanup_json_ json_object *res = NULL;
        int c, g, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                if (ctl_common_option(c, o))
                        continue;
                if (c == 'h')
                        return help(), 0;
                if (c == ARG_NAME)
                        req.name = optarg;
                else if (c == ARG_SHARED)
                        req.shared = true;
                else if (c == ARG_GRANT && ctl_parse_grant(optarg, &g) >= 0)
                        req.grant = g;
                else
                        return ctl_exit(ctl_bad_option("import"));
        }
        if (optind != argc - 1)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "import takes one FILE (or -)"));
        r = read_state(argv[optind], &req);
        if (r >= 0)
                r = ctl_request(o, &req, &res);
        if (r >= 0 && o->json)
                ctl_print_json(res);
        return ctl_exit(r);
}
