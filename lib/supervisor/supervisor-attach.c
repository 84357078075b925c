/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Attach of a running process tree, the supervisor's side: the filter
 * (built once), the walk over the tree, and each listener handed on. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "attach.h"
#include "filter.h"
#include "supervisor-internal.h"
#include "util.h"

static int attach_filter(struct tns_supervisor *s, bool rated, const struct sock_fprog **ret) {
        struct tns_filter **slot = rated ? &s->attach_filter_rated : &s->attach_filter;
        _cleanup_free_ struct tns_filter *f = NULL;
        int r;

        if (!*slot) {
                f = calloc(1, sizeof(*f));
                if (!f)
                        return -ENOMEM;
                /* The exec traps too: what the tree execs later gets our
                 * vDSO image, as under timensctl run. */
                r = tns_filter_build_flags(rated ? TNS_FILTER_RATED : 0, f);
                if (r < 0)
                        return r;
                *slot = TAKE_PTR(f);
        }
        *ret = &(*slot)->prog;
        return 0;
}

void supervisor_attach_done(struct tns_supervisor *s) {
        struct tns_filter **slots[] = {&s->attach_filter, &s->attach_filter_rated};

        for (size_t i = 0; i < ELEMENTSOF(slots); i++) {
                if (*slots[i])
                        tns_filter_done(*slots[i]);
                free(*slots[i]);
                *slots[i] = NULL;
        }
}

/* The processes still to attach: a queue in which children are added
 * while their parent is stopped (attach.h, tns_attach_child_fn). */
struct walk {
        pid_t queue[TNS_ATTACH_MAX_PROCESSES];
        size_t head, n;
        pid_t self;
        struct tns_supervisor *s;
        struct tns_attach_report *rep;
};

static void report_failure(struct tns_attach_report *rep, pid_t pid, int error) {
        if (rep->n_failed < ELEMENTSOF(rep->failed))
                rep->failed[rep->n_failed] = (struct tns_attach_failure){pid, error};
        rep->n_failed++;
}

static void report_skip(struct tns_attach_report *rep, pid_t pid, const char *reason) {
        if (rep->n_skipped < ELEMENTSOF(rep->skipped))
                rep->skipped[rep->n_skipped] = (struct tns_attach_skip){pid, reason};
        rep->n_skipped++;
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

static void orphan(pid_t tid, pid_t tgid, void *userdata) {
        struct walk *w = userdata;

        supervisor_trace_orphan(w->s, tid, tgid);
}

struct attach_req {
        const struct sock_fprog *prog;
        unsigned flags;
        const struct tns_attach_owner *owner;
        uint64_t deadline_ms;
        tns_attach_listener_fn fn;
        void *userdata;
};

static void attach_pause(const struct timespec *t, void *userdata) {
        supervisor_threads_sleep(userdata, t);
}

static int attach_one(struct tns_supervisor *s, const struct attach_req *q, pid_t pid, struct walk *w,
                      const char **ret_denied) {
        const bool root = pid == w->queue[0];
        const struct tns_attach_params p = {
                .flags = ((q->flags & TNS_ATTACH_AT_EXEC) ? TNS_ATTACH_SWALLOW_SIGSTOP : 0) |
                         (root && (q->flags & TNS_ATTACH_NEWTIME_ROOT) ? TNS_ATTACH_NEWTIME : 0),
                .prog = q->prog,
                .h = supervisor_vdso(s),
                .owner = q->owner,
                .deadline_ms = q->deadline_ms,
                .child_fn = (q->flags & TNS_ATTACH_TREE) ? queue_child : NULL,
                .orphan_fn = orphan,
                .userdata = w,
                .pause_fn = attach_pause,
                .pause_userdata = s,
        };
        struct tns_attach_report *rep = w->rep;
        struct tns_attach_info info = {};
        int fd = -EBADF, r;

        /* A member in its exec (so already in a namespace: the EBUSY of
         * a second filter): never seized then (supervisor_exec_in_flight()). */
        if (supervisor_exec_in_flight(s, pid))
                return -EBUSY;
        r = tns_attach_process(pid, &p, &fd, &info);
        /* Its mappings changed without an exec (our image, once
         * attached): what was read of them before is not so any more. */
        supervisor_image_forget(s, pid, pid);
        if (r == -EACCES)
                *ret_denied = info.denied;
        if (r < 0)
                return r;
        r = q->fn(fd, pid, q->userdata);
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
                          const struct tns_attach_owner *owner, tns_attach_listener_fn fn, void *userdata,
                          struct tns_attach_report *ret) {
        _cleanup_free_ struct walk *w = NULL;
        struct attach_req q = {.flags = flags, .owner = owner, .fn = fn, .userdata = userdata};
        const char *denied = NULL;
        int r;

        memset(ret, 0, sizeof(*ret));
        if (pid == getpid())
                return -EDEADLK;
        if (!s->vdso)
                return -EOPNOTSUPP;
        if (max_processes == 0)
                return -ENOSPC;
        r = attach_filter(s, flags & TNS_ATTACH_RATED, &q.prog);
        if (r < 0)
                return r;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->self = getpid();
        w->s = s;
        w->rep = ret;
        w->queue[w->n++] = pid;
        /* The whole request is bounded, not only each process: every
         * clock call of every namespace waits while we are here. */
        q.deadline_ms = supervisor_now_ns() / 1000000 + TNS_ATTACH_DEADLINE_MS;
        /* The root decides: its failure is the request's. */
        r = attach_one(s, &q, pid, w, &denied);
        if (r == -EACCES)
                ret->root_denied = denied;
        if (r < 0)
                return r;
        for (w->head = 1; w->head < w->n; w->head++) {
                pid_t p = w->queue[w->head];

                if (ret->n_attached >= max_processes) {
                        report_failure(ret, p, -ENOSPC);
                        continue;
                }
                if (supervisor_now_ns() / 1000000 >= q.deadline_ms) {
                        report_failure(ret, p, -ETIMEDOUT);
                        continue;
                }
                r = attach_one(s, &q, p, w, &denied);
                if (r == -EACCES)
                        report_skip(ret, p, denied);
                /* One that exited meanwhile is no failure. */
                else if (r < 0 && r != -ESRCH)
                        report_failure(ret, p, r);
        }
        return 0;
}
