/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Attach of a running process tree, the supervisor's side: the filter
 * (built once), the walk over the tree, and each listener handed on. */
#include <errno.h>
#include <string.h>

#include "attach.h"
#include "filter.h"
#include "supervisor-internal.h"
#include "util.h"

static int attach_filter(struct tns_supervisor *s, const struct sock_fprog **ret) {
        _cleanup_free_ struct tns_filter *f = NULL;
        int r;

        if (!s->attach_filter) {
                f = calloc(1, sizeof(*f));
                if (!f)
                        return -ENOMEM;
                /* The exec traps too: what the tree execs later gets our
                 * vDSO image, as under timensctl run. */
                r = tns_filter_build(f);
                if (r < 0)
                        return r;
                s->attach_filter = TAKE_PTR(f);
        }
        *ret = &s->attach_filter->prog;
        return 0;
}

void supervisor_attach_done(struct tns_supervisor *s) {
        if (s->attach_filter)
                tns_filter_done(s->attach_filter);
        free(s->attach_filter);
        s->attach_filter = NULL;
}

/* The processes still to attach: a queue in which children are added
 * while their parent is stopped (attach.h, tns_attach_child_fn). */
struct walk {
        pid_t queue[TNS_ATTACH_MAX_PROCESSES];
        size_t head, n;
        pid_t self;
        struct tns_attach_report *rep;
};

static void report_failure(struct tns_attach_report *rep, pid_t pid, int error) {
        if (rep->n_failed < ELEMENTSOF(rep->failed))
                rep->failed[rep->n_failed] = (struct tns_attach_failure){pid, error};
        rep->n_failed++;
}

static int queue_child(pid_t child, void *userdata) {
        struct walk *w = userdata;

        /* Never the supervisor itself: its own clock calls would wait for
         * itself. Its tree is not walked either. */
        if (child == w->self)
                return 0;
        for (size_t i = 0; i < w->n; i++)
                if (w->queue[i] == child)
                        return 0;
        if (w->n >= ELEMENTSOF(w->queue)) {
                report_failure(w->rep, child, -ENOSPC);
                return 0;
        }
        w->queue[w->n++] = child;
        return 0;
}

static int attach_one(struct tns_supervisor *s, const struct sock_fprog *prog, pid_t pid, struct walk *w,
                      unsigned flags, tns_attach_listener_fn fn, void *userdata, struct tns_attach_report *rep) {
        struct tns_attach_info info;
        int fd = -EBADF, r;

        r = tns_attach_process(pid, (flags & TNS_ATTACH_AT_EXEC) ? TNS_ATTACH_SWALLOW_SIGSTOP : 0, prog, s->vdso,
                               (flags & TNS_ATTACH_TREE) ? queue_child : NULL, w, &fd, &info);
        if (r < 0)
                return r;
        r = fn(fd, pid, userdata);
        if (r < 0)
                /* The filter is in and cannot be taken out: its calls now
                 * fail with ENOSYS. Only a cap can get here, checked first. */
                return tns_log_full(&s->log, LOG_ERR, r, &(struct tns_log_ctx){.pid = pid},
                                    "Failed to serve the listener of an attached process: %m");
        if (rep->n_attached == 0)
                rep->root_continued = info.continued;
        if (rep->n_attached < ELEMENTSOF(rep->attached))
                rep->attached[rep->n_attached] = pid;
        rep->n_attached++;
        return 0;
}

int tns_supervisor_attach(struct tns_supervisor *s, pid_t pid, unsigned flags, unsigned max_processes,
                          tns_attach_listener_fn fn, void *userdata, struct tns_attach_report *ret) {
        _cleanup_free_ struct walk *w = NULL;
        const struct sock_fprog *prog;
        int r;

        memset(ret, 0, sizeof(*ret));
        if (pid == getpid())
                return -EDEADLK;
        if (!s->vdso)
                return -EOPNOTSUPP;
        if (max_processes == 0)
                return -ENOSPC;
        r = attach_filter(s, &prog);
        if (r < 0)
                return r;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->self = getpid();
        w->rep = ret;
        w->queue[w->n++] = pid;
        /* The root decides: its failure is the request's. */
        r = attach_one(s, prog, pid, w, flags, fn, userdata, ret);
        if (r < 0)
                return r;
        for (w->head = 1; w->head < w->n; w->head++) {
                pid_t p = w->queue[w->head];

                if (ret->n_attached >= max_processes) {
                        report_failure(ret, p, -ENOSPC);
                        continue;
                }
                r = attach_one(s, prog, p, w, flags, fn, userdata, ret);
                /* One that exited meanwhile is no failure. */
                if (r < 0 && r != -ESRCH)
                        report_failure(ret, p, r);
        }
        return 0;
}
