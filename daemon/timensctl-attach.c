/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl attach: move a running process tree into a namespace. The
 * protocol has the operation; timensd answers "unsupported" until the
 * containers issue brings it (a process must be patched in place). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl attach NAME|ID PID\n"
               "\n"
               "Move the running process PID and its descendants into a namespace. Not\n"
               "implemented yet: timensd answers 'unsupported'. Use 'timensctl run --join NAME'.\n");
}

int verb_attach(int argc, char *argv[], struct ctl_options *o) {
        struct tns_request req = {.op = TNS_OP_ATTACH};
        _cleanup_json_ json_object *res = NULL;
        char *end;
        int r;

        r = ctl_parse_common_only(argc, argv, o, "attach", help);
        if (r <= 0)
                return ctl_exit(r);
        if (optind != argc - 2)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "attach takes NAME|ID and PID"));
        ctl_target(argv[optind], &req);
        req.pid = strtol(argv[optind + 1], &end, 10);
        if (*end || req.pid <= 0)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "Invalid PID '%s'", argv[optind + 1]));
        r = ctl_request(o, &req, &res);
        return ctl_exit(r);
}
