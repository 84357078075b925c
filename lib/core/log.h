/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libtimens never writes to stderr or the journal itself: the program that
 * uses it sets a callback (as CRIU's compel_log_init does). The helpers
 * return the negative errno they were given so that one line both logs and
 * returns: `return tns_log_errno(log, LOG_ERR, r, "Failed to ...: %m");` */
#pragma once

#include <stdarg.h>
#include <syslog.h>

#include "util.h"

/* Structured context the daemon puts into journal fields (NS=, PID=,
 * SYSCALL=); any of them may be NULL/0. */
struct tns_log_ctx {
        const char *ns;
        int pid;
        const char *syscall;
};

typedef void (*tns_log_fn)(void *userdata, int level, int error, const struct tns_log_ctx *ctx, const char *fmt,
                           va_list ap);

struct tns_logger {
        tns_log_fn fn;
        void *userdata;
        int max_level;
};

int tns_logv(const struct tns_logger *l, int level, int error, const struct tns_log_ctx *ctx, const char *fmt,
             va_list ap);
_printf_(5, 6) int tns_log_full(const struct tns_logger *l, int level, int error, const struct tns_log_ctx *ctx,
                                const char *fmt, ...);

#define tns_log(l, level, ...) tns_log_full((l), (level), 0, NULL, __VA_ARGS__)
#define tns_log_errno(l, level, error, ...) tns_log_full((l), (level), (error), NULL, __VA_ARGS__)

/* A logger that prints "PROGRAM: message" to stderr; what the CLI uses. */
void tns_log_stderr(void *userdata, int level, int error, const struct tns_log_ctx *ctx, const char *fmt, va_list ap);
