/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The filter of the bare supervisors the benchmarks set timens against
 * (bench-unotify, bench-scale bare): clock_gettime sent to a listener,
 * every other call allowed. */
#pragma once

#include <errno.h>
#include <seccomp.h>

/* seccomp_load() adds SECCOMP_FILTER_FLAG_NEW_LISTENER itself when the
 * filter has a NOTIFY rule (libseccomp >= 2.5) and sets no_new_privs.
 * The listener's fd, or -errno. */
static inline int bench_install_bare_filter(void) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        int r;

        if (!ctx)
                return -ENOMEM;
        r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(clock_gettime), 0);
        if (r >= 0)
                r = seccomp_load(ctx);
        if (r >= 0)
                r = seccomp_notify_fd(ctx);
        seccomp_release(ctx);
        return r;
}
