/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl wait: returns when a namespace is gone — one made by `run`
 * when its last process exits, any when destroyed. timensd answers on
 * the event (the listener's hang-up), so nothing polls. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl wait NAME|ID [--timeout SEC]\n"
               "\n"
               "Wait until a namespace of timensd is gone (default timeout 30 s, at most\n"
               "3600). Exit status 0 when it is gone, 1 on timeout or error.\n");
}

static int parse_timeout(const char *s, uint32_t *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || v < 0 || v * 1000 > TNS_PROTO_WAIT_MAX_MS)
                return tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "Invalid --timeout '%s': 0 to %d seconds", s,
                                     TNS_PROTO_WAIT_MAX_MS / 1000);
        *ret = (uint32_t) (v * 1000);
        return 0;
}

int verb_wait(int argc, char *argv[], struct ctl_options *o) {
        static const struct option options[] = {{"timeout", required_argument, NULL, 't'}, CTL_COMMON_OPTIONS, {}};
        struct tns_request req = {.op = TNS_OP_WAIT, .timeout_ms = TNS_PROTO_WAIT_DEFAULT_MS};
        _cleanup_json_ json_object *res = NULL;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "ht:", options, NULL)) >= 0) {
                if (ctl_common_option(c, o))
                        continue;
                if (c == 'h')
                        return help(), 0;
                if (c != 't' || parse_timeout(optarg, &req.timeout_ms) < 0)
                        return ctl_exit(ctl_bad_option("wait"));
        }
        if (optind != argc - 1)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "wait takes one NAME or ID"));
        ctl_target(argv[optind], &req);
        r = ctl_request(o, &req, &res);
        /* Gone before we asked is gone too. */
        if (r == -ENOENT)
                return 0;
        if (r >= 0 && o->json)
                ctl_print_json(res);
        return ctl_exit(r);
}
