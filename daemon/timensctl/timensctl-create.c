/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl create: an empty namespace in timensd, for `run --join` and,
 * later, attach. It lives until destroyed. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl create NAME [--monotonic OFFSET] [--boottime OFFSET]\n"
               "                        [--realtime OFFSET|DATE] [--rate [CLASS=]R] [--freeze[=CLASS]]\n"
               "                        [--faketime SPEC] [--grant none|read|full] [--shared] [--json]\n"
               "\n"
               "Create an empty time namespace in timensd. Start processes in it with\n"
               "'timensctl run --join NAME -- COMMAND'. It lives until 'timensctl destroy NAME'.\n"
               "--grant: what processes inside may do through timensd's socket (default none).\n"
               "--shared: other users may join it too (by default only its maker's uid may).\n"
               "--rate R: its clocks run R times as fast as the host's (2, 0.5, 1440, 1/60);\n"
               "--rate 1 makes a namespace whose rate can be set later. --freeze: they stand\n"
               "still. CLASS, realtime or monotonic (MONOTONIC and BOOTTIME), limits a rate\n"
               "or a freeze to it: --rate realtime=2,monotonic=1, --freeze=realtime.\n"
               "--faketime SPEC: libfaketime's FAKETIME forms ('+2d', '-3h x2',\n"
               "'@2030-01-01 12:00:00', '2030-01-01 12:00:00' frozen; timensctl(1), RATES).\n");
}

int verb_create(int argc, char *argv[], struct ctl_options *o) {
        enum { ARG_GRANT = 0x100, ARG_SHARED };
        static const struct option options[] = {CTL_OFFSET_OPTIONS,
                                                {"grant", required_argument, NULL, ARG_GRANT},
                                                {"shared", no_argument, NULL, ARG_SHARED},
                                                CTL_COMMON_OPTIONS,
                                                {}};
        struct tns_request req = {.op = TNS_OP_CREATE};
        _cleanup_json_ json_object *res = NULL;
        struct offset_args off = {};
        int c, g, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                if (ctl_common_option(c, o) || ctl_offset_option(c, &off))
                        continue;
                if (c == 'h')
                        return help(), 0;
                if (c == ARG_SHARED) {
                        req.shared = true;
                        continue;
                }
                if (c != ARG_GRANT || ctl_parse_grant(optarg, &g) < 0)
                        return ctl_exit(ctl_bad_option("create"));
                req.grant = g;
        }
        if (optind != argc - 1)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "create takes one NAME"));
        req.name = argv[optind];
        r = ctl_check_name("name", req.name);
        if (r < 0)
                return ctl_exit(r);
        r = ctl_offsets_to_request(&off, &req);
        if (r >= 0)
                r = ctl_request(o, &req, &res);
        if (r >= 0 && o->json)
                ctl_print_json(res);
        return ctl_exit(r);
}
