/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl show: one namespace in detail. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl show NAME|ID [--json]\n"
               "\n"
               "Show a namespace of timensd: its offsets and what its clocks read now, its\n"
               "processes, listeners, child namespaces and counters.\n");
}

int verb_show(int argc, char *argv[], struct ctl_options *o) {
        struct tns_request req = {.op = TNS_OP_SHOW};
        _cleanup_json_ json_object *res = NULL;
        int r;

        r = ctl_parse_common_only(argc, argv, o, "show", help);
        if (r <= 0)
                return ctl_exit(r);
        if (optind != argc - 1)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "show takes one NAME or ID"));
        ctl_target(argv[optind], &req);
        r = ctl_request(o, &req, &res);
        if (r >= 0)
                r = ctl_print_namespace(res, o, true);
        return ctl_exit(r);
}
