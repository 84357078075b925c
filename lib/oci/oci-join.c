/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A container joining a namespace of its name: the clocks it asks for
 * must be the namespace's (lib/oci/oci.h, tns_oci_join_check). */
#include <errno.h>
#include <stdio.h>

#include "clocks.h"
#include "oci.h"
#include "rate.h"
#include "time-util.h"

static int differs(char *err, const char *what, const char *have, const char *want) {
        snprintf(err, TNS_OCI_ERR_MAX,
                 "the namespace of that name exists with another %s (%s, the container asks %s): containers that "
                 "share a name share its clocks; ask for the same, or give the name alone",
                 what, have, want);
        return -EEXIST;
}

int tns_oci_join_check(const struct tns_oci_request *req, const struct tns_oci_existing *ns, int64_t host_now_ns,
                       char *err) {
        char have[40], want[40];

        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                const struct tns_clock_arg *a = &req->clocks[c];
                int64_t age;

                if (!a->set)
                        continue;
                if (a->spec.kind == TNS_OFFSET_RELATIVE) {
                        if (ns->offset_ns[c] == a->spec.ns)
                                continue;
                        (void) tns_offset_format(ns->offset_ns[c], have, sizeof(have));
                        (void) tns_offset_format(a->spec.ns, want, sizeof(want));
                        return differs(err, tns_class_name(c), have, want);
                }
                /* A date: a namespace made for it read it when it was made,
                 * and has run since (at its rate: a rated one is judged by
                 * its rate below). */
                if (req->rated || ns->rate_capable)
                        continue;
                age = ns->created_host_ns > 0 && host_now_ns > ns->created_host_ns ? host_now_ns - ns->created_host_ns
                                                                                   : 0;
                if (!__builtin_add_overflow(host_now_ns, ns->offset_ns[c], &(int64_t){0})) {
                        int64_t reads = host_now_ns + ns->offset_ns[c];

                        /* One second of slack: the two were made from
                         * different readings of the host's clock. */
                        if (reads >= a->spec.ns - TNS_NSEC_PER_SEC && reads - a->spec.ns <= age + TNS_NSEC_PER_SEC)
                                continue;
                }
                (void) tns_offset_format(ns->offset_ns[c], have, sizeof(have));
                snprintf(want, sizeof(want), "a date");
                return differs(err, "realtime clock", have, want);
        }
        if (req->rated) {
                uint64_t mult = req->freeze ? 0 : (req->rate_mult ?: TNS_RATE_ONE);

                if (!ns->rate_capable || ns->rate_mult != mult) {
                        (void) tns_rate_format(ns->rate_capable ? ns->rate_mult : TNS_RATE_ONE, have, sizeof(have));
                        (void) tns_rate_format(mult, want, sizeof(want));
                        return differs(err, "rate", have, want);
                }
        }
        return 0;
}
