/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl destroy: a namespace goes. One that still has processes only
 * with --force, and then it is detached (it loses its name; its
 * processes keep their clocks until they exit), as `ip netns delete`. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl destroy NAME|ID [--force] [--json]\n"
               "\n"
               "Destroy a time namespace of timensd. A namespace that still has processes is\n"
               "refused unless --force: it is then detached — it loses its name, and its\n"
               "processes keep their clocks until they exit.\n");
}

int verb_destroy(int argc, char *argv[], struct ctl_options *o) {
        enum { ARG_FORCE = 0x100 };
        static const struct option options[] = {{"force", no_argument, NULL, ARG_FORCE}, CTL_COMMON_OPTIONS, {}};
        struct tns_request req = {.op = TNS_OP_DESTROY};
        _cleanup_json_ json_object *res = NULL;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "hf", options, NULL)) >= 0) {
                if (ctl_common_option(c, o))
                        continue;
                if (c == 'h')
                        return help(), 0;
                if (c != ARG_FORCE && c != 'f')
                        return ctl_exit(ctl_bad_option("destroy"));
                req.force = true;
        }
        if (optind != argc - 1)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "destroy takes one NAME or ID"));
        ctl_target(argv[optind], &req);
        r = ctl_request(o, &req, &res);
        if (r >= 0 && o->json)
                ctl_print_json(res);
        return ctl_exit(r);
}
