/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "clocks.h"
#include "ns.h"
#include "offset-parse.h"
#include "timensctl.h"

static int resolve_one(enum tns_clock_class c, const char *text, int64_t *ret) {
        const char *opt = tns_class_name(c);
        struct tns_offset_spec spec;
        struct timespec now;
        int r;

        r = tns_offset_parse(text, c == TNS_CLASS_REALTIME, &spec);
        if (r < 0) {
                if (r == -ERANGE)
                        return tns_log_errno(&timensctl_log, LOG_ERR, r,
                                             "--%s '%s' is out of range: offsets must stay within +-292 years and "
                                             "dates between 1970-01-01 and 2262-04-11",
                                             opt, text);
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Invalid --%s '%s': expected %s%s%s", opt, text,
                                     tns_offset_forms_relative, c == TNS_CLASS_REALTIME ? ", or " : "",
                                     c == TNS_CLASS_REALTIME ? tns_offset_forms_absolute : "");
        }
        if (clock_gettime(tns_class_clock(c), &now) < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, errno, "Failed to read the host's %s clock: %m", opt);
        if (spec.kind == TNS_OFFSET_ABSOLUTE) {
                int64_t now_ns = (int64_t) now.tv_sec * 1000000000 + now.tv_nsec;

                spec.ns -= now_ns; /* both within 1970..2262: no overflow */
        }
        if (tns_offset_check(c, spec.ns, &now) < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, ERANGE,
                                     "--%s '%s' would put %s %s: the kernel refuses such offsets for its own "
                                     "time namespaces too",
                                     opt, text, tns_clock_name(tns_class_clock(c)),
                                     c == TNS_CLASS_REALTIME ? "before 1970 or after 2262"
                                                             : "below zero or beyond 146 years");
        *ret = spec.ns;
        return 0;
}

int offsets_resolve(const struct offset_args *a, int64_t ret[TNS_CLASS_MAX]) {
        int64_t v[TNS_CLASS_MAX] = {};
        int r;

        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                if (!a->text[c])
                        continue;
                r = resolve_one(c, a->text[c], &v[c]);
                if (r < 0)
                        return r;
        }
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                ret[c] = v[c];
        return 0;
}
