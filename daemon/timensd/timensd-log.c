/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensd's logger: the journal with structured fields (NS=, PID=,
 * SYSCALL=, ERRNO=) when journald runs, else one line on stderr, which
 * starts with the priority as "<N>" unless stderr is a terminal. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "timensd.h"

bool timensd_journal_available(void) {
        return access("/run/systemd/journal/socket", W_OK) == 0;
}

int timensd_parse_log_level(const char *s) {
        static const char *const names[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};
        char *end;
        long v;

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strcasecmp(s, names[i]) == 0)
                        return (int) i;
        if (strcasecmp(s, "error") == 0)
                return LOG_ERR;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || *s == '\0' || *end || v < LOG_EMERG || v > LOG_DEBUG)
                return -EINVAL;
        return (int) v;
}

/* Adds "KEY=value" to iov from a buffer of its own. */
static void field(struct iovec *iov, size_t *n, char *buf, size_t size, const char *fmt, ...) _printf_(5, 6);
static void field(struct iovec *iov, size_t *n, char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        int len;

        va_start(ap, fmt);
        len = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        if (len < 0)
                return;
        iov[(*n)++] = (struct iovec){buf, (size_t) len < size ? (size_t) len : size - 1};
}

static void log_journal(int level, int error, const struct tns_log_ctx *ctx, const char *message) {
        char prio[32], err[32], ns[64 + TNS_NS_NAME_MAX], pid[32], sys[64];
        _cleanup_free_ char *msg = NULL;
        struct iovec iov[8];
        size_t n = 0;

        if (asprintf(&msg, "MESSAGE=%s", message) < 0)
                return;
        iov[n++] = (struct iovec){msg, strlen(msg)};
        iov[n++] = (struct iovec){(char *) "SYSLOG_IDENTIFIER=timensd", strlen("SYSLOG_IDENTIFIER=timensd")};
        field(iov, &n, prio, sizeof(prio), "PRIORITY=%d", level);
        if (error)
                field(iov, &n, err, sizeof(err), "ERRNO=%d", error);
        if (ctx && ctx->ns)
                field(iov, &n, ns, sizeof(ns), "NS=%s", ctx->ns);
        if (ctx && ctx->pid > 0)
                field(iov, &n, pid, sizeof(pid), "PID=%d", ctx->pid);
        if (ctx && ctx->syscall)
                field(iov, &n, sys, sizeof(sys), "SYSCALL=%s", ctx->syscall);
        (void) sd_journal_sendv(iov, (int) n);
}

static void log_stderr(int level, bool prefix, const struct tns_log_ctx *ctx, const char *message) {
        char ns[16 + TNS_NS_NAME_MAX] = "", pid[96] = "", prio[8] = "";

        if (ctx && ctx->ns)
                snprintf(ns, sizeof(ns), "[ns %s] ", ctx->ns);
        if (ctx && ctx->pid > 0)
                snprintf(pid, sizeof(pid), "[pid %d%s%.48s] ", ctx->pid, ctx->syscall ? " " : "", ctx->syscall ?: "");
        if (prefix)
                snprintf(prio, sizeof(prio), "<%d>", level & LOG_PRIMASK);
        fprintf(stderr, "%stimensd: %s%s%s\n", prio, ns, pid, message);
}

void timensd_log(void *userdata, int level, int error, const struct tns_log_ctx *ctx, const char *fmt, va_list ap) {
        const struct log_target *t = userdata;
        char message[1024];

        errno = error;
        vsnprintf(message, sizeof(message), fmt, ap);
        if (t && t->journal)
                log_journal(level, error, ctx, message);
        else
                log_stderr(level, t && t->prefix, ctx, message);
}
