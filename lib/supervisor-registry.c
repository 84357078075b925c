/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "proc-util.h"
#include "state.h"
#include "supervisor-internal.h"
#include "supervisor-registry.h"
#include "time-util.h"
#include "util.h"

/* What the registry keeps about a namespace it holds. */
struct tns_ns_record {
        struct tns_registry *r;
        struct tns_ns *ns; /* owns the supervisor's creation reference */
        enum tns_origin origin;
        enum tns_grant grant;
        uid_t owner; /* who made it; joining needs that uid or shared */
        bool shared;
        int64_t created_realtime_ns;
        uint64_t sets;
        struct tns_ns_record *next, **pprev;
};

struct tns_registry {
        struct tns_supervisor *s;
        struct tns_ns_record *records;
        tns_registry_gone_fn gone_fn;
        void *gone_userdata;
        tns_registry_adopted_fn adopted_fn;
        void *adopted_userdata;
};

static int64_t clock_now_ns(clockid_t id) {
        struct timespec ts;
        int64_t ns;

        if (clock_gettime(id, &ts) < 0 || tns_ts_to_ns(&ts, &ns) < 0)
                return 0;
        return ns;
}

int tns_registry_new(struct tns_supervisor *s, struct tns_registry **ret) {
        struct tns_registry *r;

        if (s->registry)
                return -EBUSY;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->s = s;
        s->registry = r;
        *ret = r;
        return 0;
}

struct tns_registry *tns_registry_free(struct tns_registry *r) {
        if (!r)
                return NULL;
        /* The creation references go back to the supervisor, which drops
         * them in tns_supervisor_free(). */
        while (r->records) {
                struct tns_ns_record *rec = r->records;

                r->records = rec->next;
                rec->ns->record = NULL;
                free(rec);
        }
        r->s->registry = NULL;
        free(r);
        return NULL;
}

void tns_registry_set_gone_callback(struct tns_registry *r, tns_registry_gone_fn fn, void *userdata) {
        r->gone_fn = fn;
        r->gone_userdata = userdata;
}

static bool name_char(char c, bool first) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
                return true;
        return !first && c != '\0' && strchr("_.:@+-", c);
}

void tns_registry_set_adopted_callback(struct tns_registry *r, tns_registry_adopted_fn fn, void *userdata) {
        r->adopted_fn = fn;
        r->adopted_userdata = userdata;
}

static void adopted(struct tns_registry *r, struct tns_ns *ns, pid_t pid) {
        if (r->adopted_fn && pid > 0)
                r->adopted_fn(r, ns, pid, r->adopted_userdata);
}

struct tns_supervisor *supervisor_registry_owner(struct tns_registry *r) {
        return r->s;
}

void supervisor_registry_adopted(struct tns_registry *r, struct tns_ns *ns, pid_t pid) {
        adopted(r, ns, pid);
}

bool tns_ns_name_valid(const char *name) {
        bool digits = true;
        size_t n;

        if (!name)
                return false;
        for (n = 0; name[n]; n++) {
                if (n >= TNS_NS_NAME_MAX || !name_char(name[n], n == 0))
                        return false;
                if (name[n] < '0' || name[n] > '9')
                        digits = false;
        }
        return n > 0 && !digits;
}

struct tns_ns *tns_registry_find(struct tns_registry *r, const char *name) {
        if (!name)
                return NULL;
        for (struct tns_ns_record *rec = r->records; rec; rec = rec->next)
                if (rec->ns->name && strcmp(rec->ns->name, name) == 0)
                        return rec->ns;
        return NULL;
}

struct tns_ns *tns_registry_find_id(struct tns_registry *r, uint64_t id) {
        for (struct tns_ns *ns = r->s->namespaces; ns; ns = ns->next)
                if (ns->id == id)
                        return ns;
        return NULL;
}

static int cmp_id(const void *a, const void *b) {
        const struct tns_ns *x = *(struct tns_ns *const *) a, *y = *(struct tns_ns *const *) b;

        return x->id < y->id ? -1 : x->id > y->id;
}

int tns_registry_list(struct tns_registry *r, struct tns_ns ***ret, size_t *ret_n) {
        size_t n = supervisor_count_namespaces(r->s), i = 0;
        struct tns_ns **v;

        v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (struct tns_ns *ns = r->s->namespaces; ns && i < n; ns = ns->next)
                v[i++] = ns;
        qsort(v, i, sizeof(*v), cmp_id);
        *ret = v;
        *ret_n = i;
        return 0;
}

static bool in_subtree(const struct tns_ns *x, const struct tns_ns *top) {
        for (; x; x = x->parent)
                if (x == top)
                        return true;
        return false;
}

/* Listeners feeding ns itself, and processes pinned into its subtree. */
static void count_processes(struct tns_registry *r, struct tns_ns *ns, unsigned *ret_listeners, unsigned *ret_pinned,
                            bool *ret_live) {
        unsigned listeners = 0, pinned = 0;
        bool live = false;

        for (struct listener *l = r->s->listeners; l; l = l->next) {
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

void tns_registry_info(struct tns_registry *r, struct tns_ns *ns, struct tns_ns_info *ret) {
        struct tns_ns_record *rec = ns->record;
        struct tns_ns_info info = {
                .id = ns->id,
                .parent_id = ns->parent ? ns->parent->id : 0,
                .name = ns->name,
                .origin = rec          ? rec->origin
                          : ns->parent ? TNS_ORIGIN_UNSHARE
                                       : TNS_ORIGIN_DETACHED,
                .grant = rec ? rec->grant : TNS_GRANT_NONE,
                .owner = rec ? rec->owner : 0,
                .shared = rec && rec->shared,
                .calls = ns->n_calls,
                .failures = ns->n_failures,
                .sets = rec ? rec->sets : 0,
                .created_realtime_ns = rec ? rec->created_realtime_ns : 0,
        };

        for (int c = 0; c < TNS_CLASS_MAX; c++)
                info.offset[c] = tns_ns_offset(ns, c);
        for (struct tns_ns *k = ns->first_child; k; k = k->next_sibling)
                info.children++;
        count_processes(r, ns, &info.listeners, &info.pinned, &info.live);
        *ret = info;
}

static struct member *pinned_member(struct tns_registry *r, pid_t pid) {
        for (struct listener *l = r->s->listeners; l; l = l->next)
                for (struct member *m = l->members; m; m = m->next)
                        if (m->tgid == pid)
                                return m;
        return NULL;
}

/* A breadth-first walk of process trees that stops at processes pinned
 * to another namespace; pids[] doubles as the queue. */
struct walk {
        struct tns_registry *r;
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
        m = pinned_member(w->r, child);
        if (m && m->ns != w->ns)
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
static uint64_t monotonic_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000U + (uint64_t) ts.tv_nsec / 1000U;
}

/* The scan runs on the event loop that serves every clock call: it stops
 * at this budget, and the count is a lower bound then (as past max). A
 * host of processes with huge maps costs a show this much, not seconds. */
#define MAPPERS_SCAN_BUDGET_USEC (50 * 1000)

static void walk_mappers(struct walk *w) {
        _cleanup_(closedirp) DIR *d = opendir("/proc");
        const uint64_t deadline = monotonic_usec() + MAPPERS_SCAN_BUDGET_USEC;
        struct dirent *de;

        while (d && (de = readdir(d))) {
                pid_t pid = (pid_t) atoi(de->d_name);

                if (pid > 0 && monotonic_usec() > deadline) {
                        tns_log(&w->r->s->log, LOG_DEBUG,
                                "The scan for processes that map namespace %" PRIu64
                                " stopped at its budget: the list is partial",
                                w->ns->id);
                        break;
                }

                /* We map it ourselves, to write it. */
                if (pid > 0 && pid != getpid() && !walk_has(w, pid) &&
                    supervisor_ns_by_mapping(w->r->s, pid, NULL) == w->ns)
                        walk_add(w, pid);
        }
}

static int processes(struct tns_registry *r, struct tns_ns *ns, pid_t *pids, size_t max, bool scan_maps) {
        struct walk w = {r, ns, pids, max, 0};

        for (struct listener *l = r->s->listeners; l; l = l->next) {
                struct member *m = l->root_pid > 0 ? pinned_member(r, l->root_pid) : NULL;

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
        return (int) (w.n > INT32_MAX ? INT32_MAX : w.n);
}

int tns_registry_processes(struct tns_registry *r, struct tns_ns *ns, pid_t *pids, size_t max) {
        return processes(r, ns, pids, max, true);
}

int tns_registry_processes_tracked(struct tns_registry *r, struct tns_ns *ns, pid_t *pids, size_t max) {
        return processes(r, ns, pids, max, false);
}

static struct tns_ns *listener_root_ns(struct tns_registry *r, pid_t pid) {
        for (struct listener *l = r->s->listeners; l; l = l->next)
                if (l->root_pid == pid)
                        return l->ns;
        return NULL;
}

bool tns_registry_serves_processes(struct tns_registry *r) {
        return r->s->listeners != NULL;
}

struct tns_ns *tns_registry_find_process(struct tns_registry *r, pid_t pid) {
        struct tns_proc_status st;
        unsigned depth = 0;
        struct tns_ns *ns;

        if (!r->s->listeners)
                return NULL;
        ns = supervisor_ns_by_mapping(r->s, pid, NULL);
        if (ns)
                return ns;
        /* A program without our vDSO: the nearest entry up the parent
         * chain decides, as for callers (supervisor.c, resolve_ns); the
         * chain is bounded by pid_max. */
        for (pid_t p = pid; p > 1 && depth < 4096; p = st.ppid, depth++) {
                struct member *m = pinned_member(r, p);

                ns = m ? m->ns : listener_root_ns(r, p);
                if (ns)
                        return ns;
                if (tns_proc_status(p, &st) < 0)
                        break;
        }
        return NULL;
}

int tns_registry_create(struct tns_registry *r, const char *name, const int64_t offsets[TNS_CLASS_MAX],
                        enum tns_origin origin, enum tns_grant grant, struct tns_ns **ret) {
        _cleanup_free_ struct tns_ns_record *rec = NULL;
        struct tns_ns *ns;
        int k;

        if (name && !tns_ns_name_valid(name))
                return -EINVAL;
        if (tns_registry_find(r, name))
                return -EEXIST;
        rec = calloc(1, sizeof(*rec));
        if (!rec)
                return -ENOMEM;
        k = tns_supervisor_create_ns(r->s, name, offsets, &ns);
        if (k < 0)
                return k;
        *rec = (struct tns_ns_record){.r = r, .ns = ns, .origin = origin, .grant = grant};
        rec->created_realtime_ns = clock_now_ns(CLOCK_REALTIME);
        rec->next = r->records;
        if (rec->next)
                rec->next->pprev = &rec->next;
        rec->pprev = &r->records;
        r->records = rec;
        ns->record = TAKE_PTR(rec);
        supervisor_changed(r->s, NULL, -EBADF);
        *ret = ns;
        return 0;
}

int tns_registry_set_owner(struct tns_registry *r, struct tns_ns *ns, uid_t owner, bool shared) {
        if (!ns->record)
                return -EPERM;
        ns->record->owner = owner;
        ns->record->shared = shared;
        supervisor_changed(r->s, NULL, -EBADF);
        return 0;
}

void supervisor_registry_save(struct tns_ns *ns, struct tns_state_ns *ret) {
        struct tns_ns_record *rec = ns->record;

        ret->held = rec != NULL;
        if (!rec)
                return;
        ret->origin = (int) rec->origin;
        ret->grant = (int) rec->grant;
        ret->owner = rec->owner;
        ret->shared = rec->shared;
        ret->created_realtime_ns = rec->created_realtime_ns;
        ret->sets = rec->sets;
}

int supervisor_registry_restore(struct tns_registry *r, struct tns_ns *ns, const struct tns_state_ns *st) {
        struct tns_ns_record *rec;

        if (st->origin < 0 || st->origin >= _TNS_ORIGIN_MAX || st->grant < 0 || st->grant >= _TNS_GRANT_MAX)
                return -EBADMSG;
        if (ns->name && tns_registry_find(r, ns->name))
                return -EEXIST;
        rec = calloc(1, sizeof(*rec));
        if (!rec)
                return -ENOMEM;
        *rec = (struct tns_ns_record){.r = r,
                                      .ns = ns,
                                      .origin = st->origin,
                                      .grant = st->grant,
                                      .owner = st->owner,
                                      .shared = st->shared,
                                      .created_realtime_ns = st->created_realtime_ns,
                                      .sets = st->sets};
        rec->next = r->records;
        if (rec->next)
                rec->next->pprev = &rec->next;
        rec->pprev = &r->records;
        r->records = rec;
        ns->record = rec;
        return 0;
}

/* Forgets the record and gives up the creation reference: the namespace
 * goes now, or with its last process. */
static void record_drop(struct tns_ns_record *rec) {
        struct tns_registry *r = rec->r;
        struct tns_ns *ns = rec->ns;

        *rec->pprev = rec->next;
        if (rec->next)
                rec->next->pprev = rec->pprev;
        ns->record = NULL;
        free(rec);
        supervisor_changed(r->s, NULL, -EBADF);
        if (r->gone_fn)
                r->gone_fn(r, ns->id, ns->name, r->gone_userdata);
        tns_ns_unref(ns);
}

int tns_registry_destroy(struct tns_registry *r, struct tns_ns *ns, bool force) {
        unsigned listeners, pinned;
        bool live;

        if (!ns->record)
                return -EPERM;
        count_processes(r, ns, &listeners, &pinned, &live);
        if (live && !force)
                return -EBUSY;
        if (live) {
                /* Detached: nameless, so the name can be used again. */
                free(ns->name);
                ns->name = NULL;
        }
        record_drop(ns->record);
        return 0;
}

/* Called by listener_free() before it drops its reference on ns. */
void supervisor_registry_listener_gone(struct tns_supervisor *s, struct tns_ns *ns) {
        struct tns_ns_record *rec = ns->record;

        if (!s->registry || !rec || rec->origin != TNS_ORIGIN_RUN)
                return;
        for (struct listener *l = s->listeners; l; l = l->next)
                if (l->ns == ns)
                        return;
        record_drop(rec);
}

static int check_offsets(struct tns_ns *ns, unsigned mask, const int64_t v[TNS_CLASS_MAX], bool live,
                         bool allow_backwards, enum tns_clock_class *ret_class) {
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                struct timespec now;

                if (!(mask & (1U << c)))
                        continue;
                *ret_class = c;
                if (clock_gettime(tns_class_clock(c), &now) < 0)
                        return negative_errno();
                if (tns_offset_check(c, v[c], &now) < 0)
                        return -ERANGE;
                /* Moving a running MONOTONIC or BOOTTIME backwards breaks
                 * what those clocks promise (clock_gettime(2)). */
                if (live && !allow_backwards && c != TNS_CLASS_REALTIME && v[c] < tns_ns_offset(ns, c))
                        return -EDOM;
        }
        return 0;
}

int tns_registry_set_offsets(struct tns_registry *r, struct tns_ns *ns, unsigned mask,
                             const int64_t offsets[TNS_CLASS_MAX], bool allow_backwards,
                             enum tns_clock_class *ret_class) {
        unsigned listeners, pinned;
        enum tns_clock_class bad = TNS_CLASS_MONOTONIC;
        bool live;
        int k;

        count_processes(r, ns, &listeners, &pinned, &live);
        k = check_offsets(ns, mask, offsets, live, allow_backwards, &bad);
        if (k < 0) {
                *ret_class = bad;
                return k;
        }
        /* One publication: the vDSO sees every clock change at once. */
        k = tns_ns_set_offsets(ns, mask, offsets);
        if (k < 0) {
                *ret_class = bad;
                return k;
        }
        if (ns->record) {
                ns->record->sets++;
                supervisor_changed(r->s, NULL, -EBADF);
        }
        supervisor_wait_offsets_changed(r->s); /* absolute waits in flight */
        return 0;
}

/* The kernel names the inode of every listener alike (seccomp.c,
 * init_listener: anon_inode_getfile("seccomp notify", ...)). */
static int check_listener_fd(int fd) {
        char path[64], target[64];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        n = readlink(path, target, sizeof(target) - 1);
        if (n < 0)
                return negative_errno();
        target[n] = '\0';
        return strcmp(target, "anon_inode:seccomp notify") == 0 ? 0 : -ENOTTY;
}

int tns_registry_adopt(struct tns_registry *r, struct tns_ns *ns, int fd, pid_t root_pid) {
        _cleanup_close_ int owned = fd;
        unsigned listeners, pinned;
        bool live;
        int k;

        k = check_listener_fd(fd);
        if (k < 0)
                return k;
        count_processes(r, ns, &listeners, &pinned, &live);
        if (listeners >= TNS_MAX_LISTENERS_PER_NS || r->s->stats.listeners >= TNS_MAX_LISTENERS)
                return -ENOSPC;
        k = tns_supervisor_add_listener(r->s, ns, TAKE_FD(owned), root_pid);
        if (k >= 0)
                adopted(r, ns, root_pid);
        return k;
}

struct attach_ctx {
        struct tns_registry *r;
        struct tns_ns *ns;
};

static int attach_listener(int fd, pid_t pid, void *userdata) {
        struct attach_ctx *c = userdata;
        int k;

        k = tns_supervisor_add_listener(c->r->s, c->ns, fd, pid);
        if (k >= 0)
                adopted(c->r, c->ns, pid);
        return k;
}

int tns_registry_attach(struct tns_registry *r, struct tns_ns *ns, pid_t pid, unsigned flags,
                        const struct tns_attach_owner *owner, struct tns_attach_report *ret) {
        unsigned listeners, pinned, room, total;
        bool live;

        count_processes(r, ns, &listeners, &pinned, &live);
        room = listeners < TNS_MAX_LISTENERS_PER_NS ? TNS_MAX_LISTENERS_PER_NS - listeners : 0;
        total = r->s->stats.listeners < TNS_MAX_LISTENERS ? TNS_MAX_LISTENERS - r->s->stats.listeners : 0;
        return tns_supervisor_attach(r->s, pid, flags, room < total ? room : total, owner, attach_listener,
                                     &(struct attach_ctx){r, ns}, ret);
}

int tns_registry_export(struct tns_registry *r, struct tns_ns *ns, struct tns_clock_state *ret) {
        struct tns_clock_state st = {.grant = ns->record ? ns->record->grant : TNS_GRANT_NONE};

        if (ns->name)
                snprintf(st.name, sizeof(st.name), "%s", ns->name);
        st.host_realtime_ns = clock_now_ns(CLOCK_REALTIME);
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                st.offset_ns[c] = tns_ns_offset(ns, c);
                if (tns_ns_add(clock_now_ns(tns_class_clock(c)), st.offset_ns[c], &st.value_ns[c]) < 0)
                        return -ERANGE;
        }
        *ret = st;
        return 0;
}

/* MONOTONIC and BOOTTIME continue from their exported values (as CRIU
 * restores a time namespace: offsets recomputed against this host's
 * clocks); REALTIME follows real time, which went on meanwhile. */
static int import_offsets(const struct tns_clock_state *st, int64_t ret[TNS_CLASS_MAX],
                          enum tns_clock_class *ret_class) {
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                struct timespec now;
                int64_t host;

                *ret_class = c;
                if (clock_gettime(tns_class_clock(c), &now) < 0 || tns_ts_to_ns(&now, &host) < 0)
                        return -ERANGE;
                if (c == TNS_CLASS_REALTIME)
                        ret[c] = st->offset_ns[c];
                else if (__builtin_sub_overflow(st->value_ns[c], host, &ret[c]))
                        return -ERANGE;
                if (tns_offset_check(c, ret[c], &now) < 0)
                        return -ERANGE;
        }
        return 0;
}

int tns_registry_import(struct tns_registry *r, const struct tns_clock_state *state, const char *name,
                        enum tns_grant grant, struct tns_ns **ret, enum tns_clock_class *ret_class) {
        int64_t offsets[TNS_CLASS_MAX];
        enum tns_clock_class bad = TNS_CLASS_MONOTONIC;
        int k;

        if (!name && state->name[0])
                name = state->name;
        k = import_offsets(state, offsets, &bad);
        if (k < 0) {
                *ret_class = bad;
                return k;
        }
        return tns_registry_create(r, name, offsets, TNS_ORIGIN_IMPORT, grant, ret);
}
