/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl set: change the offsets of a running namespace. An offset
 * means what it means to run: the namespace's clock becomes the host's
 * plus it (set +3d after +1d moves the clock by two days); a date makes
 * CLOCK_REALTIME read that date now. Every process of the namespace sees
 * the change at its next clock read. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl set NAME|ID [--monotonic OFFSET] [--boottime OFFSET]\n"
               "                     [--realtime OFFSET|DATE] [--allow-backwards]\n"
               "                     [--rate [CLASS=]R] [--freeze[=CLASS] | --unfreeze[=CLASS]]\n"
               "                     [--faketime SPEC] [--json]\n"
               "\n"
               "Set offsets of a namespace while it runs: each given clock becomes the host's\n"
               "plus OFFSET (the same meaning as for 'run'; not added to the current offset);\n"
               "a DATE makes CLOCK_REALTIME read that date now. All clocks change at once.\n"
               "Moving MONOTONIC or BOOTTIME backwards while the namespace has processes is\n"
               "refused unless --allow-backwards.\n"
               "--rate R: the clocks run R times as fast as the host's from now on (2, 0.5,\n"
               "1440, 1/60); --freeze stops them where they are, --unfreeze lets them run\n"
               "on at their rate; no clock jumps, MONOTONIC never goes back. CLASS, realtime\n"
               "or monotonic (MONOTONIC and BOOTTIME), limits them to it: --rate\n"
               "realtime=2,monotonic=0.5, --freeze=realtime, --unfreeze=realtime. Only for a\n"
               "namespace made with a rate (run/create --rate 1) once it has processes.\n"
               "--faketime SPEC: libfaketime's FAKETIME forms (see timensctl(1), RATES).\n");
}

int verb_set(int argc, char *argv[], struct ctl_options *o) {
        enum { ARG_BACKWARDS = 0x100 };
        static const struct option options[] = {CTL_OFFSET_OPTIONS,
                                                {"allow-backwards", no_argument, NULL, ARG_BACKWARDS},
                                                {"unfreeze", optional_argument, NULL, CTL_ARG_UNFREEZE},
                                                CTL_COMMON_OPTIONS,
                                                {}};
        struct tns_request req = {.op = TNS_OP_SET};
        _cleanup_json_ json_object *res = NULL;
        struct offset_args off = {};
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                if (ctl_common_option(c, o) || ctl_offset_option(c, &off))
                        continue;
                if (c == 'h')
                        return help(), 0;
                if (c != ARG_BACKWARDS)
                        return ctl_exit(ctl_bad_option("set"));
                req.allow_backwards = true;
        }
        if (optind != argc - 1)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "set takes one NAME or ID"));
        if (!off.text[0] && !off.text[1] && !off.text[2] && !offset_args_rated(&off))
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                              "set needs at least one of --monotonic, --boottime, --realtime, "
                                              "--rate, --freeze, --unfreeze, --faketime"));
        ctl_target(argv[optind], &req);
        r = ctl_offsets_to_request(&off, &req);
        if (r >= 0)
                r = ctl_request(o, &req, &res);
        if (r >= 0 && o->json)
                ctl_print_json(res);
        return ctl_exit(r);
}
