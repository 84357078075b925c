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

/* Whether the namespace's realtime, reading `reads` now, is where one
 * made for `date` would be: at it or past it, by at most its age run at
 * its rate (a second of slack either way: the two were made from
 * different readings of the host's clock). */
static bool date_reached(const struct tns_oci_existing *ns, int64_t date, int64_t host_now_ns) {
        const uint64_t run = ns->run_mult[TNS_CLASS_REALTIME];
        const uint64_t mult = ns->rate_capable && run > TNS_RATE_ONE ? run : TNS_RATE_ONE;
        __int128 age =
                ns->created_host_ns > 0 && host_now_ns > ns->created_host_ns ? host_now_ns - ns->created_host_ns : 0;
        __int128 past = (__int128) ns->realtime_now_ns - date;

        /* Frozen, it reads the one date it stands at. */
        if (ns->rate_capable && ns->rate_mult[TNS_CLASS_REALTIME] == 0)
                age = 0;
        age = age * mult / TNS_RATE_ONE;
        return past >= -TNS_NSEC_PER_SEC && past <= age + TNS_NSEC_PER_SEC;
}

int tns_oci_join_check(const struct tns_oci_request *req, const struct tns_oci_existing *ns, int64_t host_now_ns,
                       char *err) {
        const uint64_t want = req->rated ? (req->freeze ? 0 : (req->rate_mult ?: TNS_RATE_ONE)) : TNS_RATE_ONE;
        char a[40], b[40];
        bool any = req->rated;

        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                const struct tns_clock_arg *arg = &req->clocks[c];

                if (!arg->set)
                        continue;
                any = true;
                if (arg->spec.kind == TNS_OFFSET_RELATIVE) {
                        if (ns->offset_ns[c] == arg->spec.ns)
                                continue;
                        (void) tns_offset_format(ns->offset_ns[c], a, sizeof(a));
                        (void) tns_offset_format(arg->spec.ns, b, sizeof(b));
                        return differs(err, tns_class_name(c), a, b);
                }
                if (date_reached(ns, arg->spec.ns, host_now_ns))
                        continue;
                (void) tns_offset_format(ns->offset_ns[c], a, sizeof(a));
                return differs(err, "realtime clock", a, "a date it has not been at");
        }
        /* Asking for clocks is asking for them at a rate: 1 unless said,
         * the same for every clock (faketime's for REALTIME alone with
         * faketime-dont-fake-monotonic). */
        for (int c = 0; any && c < TNS_CLASS_MAX; c++) {
                const uint64_t have = ns->rate_capable ? ns->rate_mult[c] : TNS_RATE_ONE;
                const uint64_t w = tns_oci_rate_classes(req) & (1U << c) ? want : TNS_RATE_ONE;
                char what[16];

                if (have == w)
                        continue;
                (void) tns_rate_format(have, a, sizeof(a));
                (void) tns_rate_format(w, b, sizeof(b));
                snprintf(what, sizeof(what), "%s rate", tns_class_name(c));
                return differs(err, what, a, b);
        }
        return 0;
}
