/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which processes are in a namespace: the trees under its listeners'
 * processes, the processes pinned to it after an unshare, and the
 * programs that map its offsets page. The engine owns the listeners and
 * members these walk; the registry and timensd ask through supervisor.h. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "proc-util.h"
#include "supervisor-internal.h"
#include "util.h"

static bool in_subtree(const struct tns_ns *x, const struct tns_ns *top) {
        for (; x; x = x->parent)
                if (x == top)
                        return true;
        return false;
}

/* Listeners feeding ns itself, and processes pinned into its subtree. */
void tns_supervisor_ns_counts(struct tns_supervisor *s, struct tns_ns *ns, unsigned *ret_listeners,
                              unsigned *ret_pinned, bool *ret_live) {
        unsigned listeners = 0, pinned = 0;
        bool live = false;

        for (struct listener *l = s->listeners; l; l = l->next) {
                if (l->ns == ns)
                        listeners++;
                if (in_subtree(l->ns, ns))
                        live = true;
                for (struct member *m = l->members; m; m = m->next) {
                        if (m->ns == ns)
                                pinned++;
                        if (in_subtree(m->ns, ns))
                                live = true;
                }
        }
        *ret_listeners = listeners;
        *ret_pinned = pinned;
        *ret_live = live;
}

static struct member *pinned_member(struct tns_supervisor *s, pid_t pid) {
        for (struct listener *l = s->listeners; l; l = l->next)
                for (struct member *m = l->members; m; m = m->next)
                        if (m->tgid == pid)
                                return m;
        return NULL;
}

/* A breadth-first walk of process trees that stops at processes pinned
 * to another namespace; pids[] doubles as the queue. */
struct walk {
        struct tns_supervisor *s;
        struct tns_ns *ns;
        pid_t *pids;
        size_t max, n;
};

static void walk_add(struct walk *w, pid_t pid) {
        if (w->n < w->max)
                w->pids[w->n] = pid;
        w->n++;
}

static int walk_child(pid_t child, void *userdata) {
        struct walk *w = userdata;
        struct tns_proc_status st;
        struct member *m;

        if (tns_proc_status(child, &st) < 0 || st.tgid != child)
                return 0;
        m = pinned_member(w->s, child);
        if (m && m->ns != w->ns)
                return 0;
        /* A listener's root was added as one (for its own namespace): its
         * subtree is walked once, from there (helper-40). */
        for (struct listener *l = w->s->listeners; l; l = l->next)
                if (l->root_pid == child)
                        return 0;
        if (!m)
                walk_add(w, child); /* pinned ones were added as roots */
        return 0;
}

static bool walk_has(const struct walk *w, pid_t pid) {
        for (size_t i = 0; i < w->n && i < w->max; i++)
                if (w->pids[i] == pid)
                        return true;
        return false;
}

/* Processes that map the namespace's offsets page: every program exec'd
 * in it with our vDSO, also once reparented out of the trees (a daemon
 * inside a container). */

/* The scan runs on the event loop that serves every clock call: it stops
 * at this budget, and the count is a lower bound then (as past max). A
 * host of processes with huge maps costs a show this much, not seconds. */
#define MAPPERS_SCAN_BUDGET_USEC (50 * 1000)

static void walk_mappers(struct walk *w) {
        _cleanup_(closedirp) DIR *d = opendir("/proc");
        const uint64_t deadline = supervisor_now_ns() / 1000 + MAPPERS_SCAN_BUDGET_USEC;
        struct dirent *de;

        while (d && (de = readdir(d))) {
                pid_t pid = (pid_t) atoi(de->d_name);

                if (pid > 0 && supervisor_now_ns() / 1000 > deadline) {
                        tns_log(&w->s->log, LOG_DEBUG,
                                "The scan for processes that map namespace %" PRIu64
                                " stopped at its budget: the list is partial",
                                w->ns->id);
                        break;
                }

                /* We map it ourselves, to write it. */
                if (pid > 0 && pid != getpid() && !walk_has(w, pid) &&
                    supervisor_ns_by_mapping_fresh(w->s, pid, NULL) == w->ns)
                        walk_add(w, pid);
        }
}

static int cmp_pid(const void *a, const void *b) {
        const pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;

        return (x > y) - (x < y);
}

/* Each process once: an attached one is both a listener's root and its
 * parent's child. The kept ones sorted and made unique; the count, a lower
 * bound past max, less the repeats found among them. */
static void walk_unique(struct walk *w) {
        size_t kept = w->n < w->max ? w->n : w->max, u = 0;

        if (kept == 0)
                return;
        qsort(w->pids, kept, sizeof(*w->pids), cmp_pid);
        for (size_t i = 1; i < kept; i++)
                if (w->pids[i] != w->pids[u])
                        w->pids[++u] = w->pids[i];
        w->n -= kept - (u + 1);
}

int tns_supervisor_processes(struct tns_supervisor *s, struct tns_ns *ns, pid_t *pids, size_t max, bool scan_maps) {
        struct walk w = {s, ns, pids, max, 0};

        for (struct listener *l = s->listeners; l; l = l->next) {
                struct member *m = l->root_pid > 0 ? pinned_member(s, l->root_pid) : NULL;

                if (l->ns == ns && l->root_pid > 0 && !m && kill(l->root_pid, 0) == 0)
                        walk_add(&w, l->root_pid);
                for (m = l->members; m; m = m->next)
                        if (m->ns == ns)
                                walk_add(&w, m->tgid);
        }
        /* Entries past max are counted, not kept: their children are not
         * walked, so the count is a lower bound then. */
        for (size_t i = 0; i < w.n && i < w.max; i++)
                (void) tns_proc_for_each_child(w.pids[i], walk_child, &w);
        if (scan_maps && w.n < w.max)
                walk_mappers(&w);
        walk_unique(&w);
        return (int) (w.n > INT32_MAX ? INT32_MAX : w.n);
}

static struct tns_ns *listener_root_ns(struct tns_supervisor *s, pid_t pid) {
        for (struct listener *l = s->listeners; l; l = l->next)
                if (l->root_pid == pid)
                        return l->ns;
        return NULL;
}

bool tns_supervisor_serves_processes(struct tns_supervisor *s) {
        return s->listeners != NULL;
}

struct tns_ns *tns_supervisor_find_process(struct tns_supervisor *s, pid_t pid) {
        struct tns_proc_status st;
        unsigned depth = 0;
        struct tns_ns *ns;

        if (!s->listeners)
                return NULL;
        /* Read to the end (once per process): who asks on the control
         * socket is never taken for an outsider for its many mappings. */
        ns = supervisor_ns_by_mapping_whole(s, pid);
        if (ns)
                return ns;
        /* A program without our vDSO: the nearest entry up the parent
         * chain decides, as for callers (supervisor.c, resolve_ns); the
         * chain is bounded by pid_max. */
        for (pid_t p = pid; p > 1 && depth < 4096; p = st.ppid, depth++) {
                struct member *m = pinned_member(s, p);

                ns = m ? m->ns : listener_root_ns(s, p);
                if (ns)
                        return ns;
                if (tns_proc_status(p, &st) < 0)
                        break;
        }
        return NULL;
}
