/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int tns_logv(const struct tns_logger *l, int level, int error, const struct tns_log_ctx *ctx, const char *fmt,
             va_list ap) {
        int e = error < 0 ? -error : error;

        if (l && l->fn && level <= l->max_level) {
                /* %m in fmt must print the error we were given, not whatever
                 * errno happens to hold now. */
                int saved = errno;
                errno = e;
                l->fn(l->userdata, level, e, ctx, fmt, ap);
                errno = saved;
        }
        return error < 0 ? error : -e;
}

int tns_log_full(const struct tns_logger *l, int level, int error, const struct tns_log_ctx *ctx, const char *fmt,
                 ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = tns_logv(l, level, error, ctx, fmt, ap);
        va_end(ap);
        return r;
}

void tns_log_stderr(void *userdata, int level, int error, const struct tns_log_ctx *ctx, const char *fmt, va_list ap) {
        const char *prog = userdata ?: program_invocation_short_name;
        char buf[1024];

        (void) level;
        errno = error;
        vsnprintf(buf, sizeof(buf), fmt, ap);
        if (ctx && ctx->pid > 0)
                fprintf(stderr, "%s: [pid %d%s%s] %s\n", prog, ctx->pid, ctx->syscall ? " " : "", ctx->syscall ?: "",
                        buf);
        else
                fprintf(stderr, "%s: %s\n", prog, buf);
}
