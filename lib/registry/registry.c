/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fd-check.h"
#include "proc-util.h"
#include "state.h"
#include "registry-internal.h"
#include "time-util.h"
#include "util.h"

static int64_t clock_now_ns(clockid_t id) {
        struct timespec ts;
        int64_t ns;

        if (clock_gettime(id, &ts) < 0 || tns_ts_to_ns(&ts, &ns) < 0)
                return 0;
        return ns;
}

static void listener_gone(struct tns_supervisor *s, struct tns_ns *ns, void *userdata);

int tns_registry_new(struct tns_supervisor *s, struct tns_registry **ret) {
        struct tns_registry *r;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->s = s;
        tns_supervisor_set_listener_gone_callback(s, listener_gone, r);
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
        tns_supervisor_set_listener_gone_callback(r->s, NULL, NULL);
        free(r);
        return NULL;
}

void tns_registry_set_gone_callback(struct tns_registry *r, tns_registry_gone_fn fn, void *userdata) {
        r->gone_fn = fn;
        r->gone_userdata = userdata;
}

void tns_registry_set_adopted_callback(struct tns_registry *r, tns_registry_adopted_fn fn, void *userdata) {
        r->adopted_fn = fn;
        r->adopted_userdata = userdata;
}

static void adopted(struct tns_registry *r, struct tns_ns *ns, pid_t pid) {
        if (r->adopted_fn && pid > 0)
                r->adopted_fn(r, ns, pid, r->adopted_userdata);
}

void registry_adopted(struct tns_registry *r, struct tns_ns *ns, pid_t pid) {
        adopted(r, ns, pid);
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
        for (struct tns_ns *ns = tns_supervisor_namespaces(r->s); ns; ns = ns->next)
                if (ns->id == id)
                        return ns;
        return NULL;
}

static int cmp_id(const void *a, const void *b) {
        const struct tns_ns *x = *(struct tns_ns *const *) a, *y = *(struct tns_ns *const *) b;

        return x->id < y->id ? -1 : x->id > y->id;
}

int tns_registry_list(struct tns_registry *r, struct tns_ns ***ret, size_t *ret_n) {
        size_t n = tns_supervisor_count_namespaces(r->s), i = 0;
        struct tns_ns **v;

        v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (struct tns_ns *ns = tns_supervisor_namespaces(r->s); ns && i < n; ns = ns->next)
                v[i++] = ns;
        qsort(v, i, sizeof(*v), cmp_id);
        *ret = v;
        *ret_n = i;
        return 0;
}

int tns_registry_processes(struct tns_registry *r, struct tns_ns *ns, pid_t *pids, size_t max) {
        return tns_supervisor_processes(r->s, ns, pids, max, true);
}

int tns_registry_processes_tracked(struct tns_registry *r, struct tns_ns *ns, pid_t *pids, size_t max) {
        return tns_supervisor_processes(r->s, ns, pids, max, false);
}

bool tns_registry_serves_processes(struct tns_registry *r) {
        return tns_supervisor_serves_processes(r->s);
}

struct tns_ns *tns_registry_find_process(struct tns_registry *r, pid_t pid) {
        return tns_supervisor_find_process(r->s, pid);
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
                .owner = ns->owner,
                .shared = rec && rec->shared,
                .calls = ns->n_calls,
                .failures = ns->n_failures,
                .sets = rec ? rec->sets : 0,
                .created_realtime_ns = rec ? rec->created_realtime_ns : 0,
        };

        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                info.offset[c] = tns_ns_offset(ns, c);
                tns_ns_rate_map(ns, c, &info.map[c]);
        }
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                info.rate_mult[c] = tns_ns_mult(ns, c);
                info.run_mult[c] = tns_ns_run_mult(ns, c);
        }
        info.rate_capable = tns_ns_rate_capable(ns);
        for (struct tns_ns *k = ns->first_child; k; k = k->next_sibling)
                info.children++;
        for (struct tns_ns *p = ns->parent; p; p = p->parent)
                info.depth++;
        info.kernel_offsets_known = tns_supervisor_ns_kernel(r->s, ns, &info.kernel_ns, info.kernel_offset);
        tns_supervisor_ns_counts(r->s, ns, &info.listeners, &info.pinned, &info.live);
        *ret = info;
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
        tns_supervisor_changed(r->s, NULL, -EBADF);
        *ret = ns;
        return 0;
}

int tns_registry_set_owner(struct tns_registry *r, struct tns_ns *ns, uid_t owner, bool shared) {
        if (!ns->record)
                return -EPERM;
        ns->owner = owner;
        ns->record->shared = shared;
        tns_supervisor_changed(r->s, NULL, -EBADF);
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
        tns_supervisor_changed(r->s, NULL, -EBADF);
        if (r->gone_fn)
                r->gone_fn(r, ns->id, ns->name, r->gone_userdata);
        tns_ns_unref(ns);
}

/* A listener of ns hung up: a namespace made by adopt (`timensctl run`)
 * goes with its last one. */
static void listener_gone(struct tns_supervisor *s, struct tns_ns *ns, void *userdata) {
        struct tns_ns_record *rec = ns->record;
        unsigned listeners, pinned;
        bool live;

        if (!rec || rec->origin != TNS_ORIGIN_RUN)
                return;
        /* The listener going is no longer counted. */
        tns_supervisor_ns_counts(s, ns, &listeners, &pinned, &live);
        if (listeners == 0)
                record_drop(rec);
}

int tns_registry_destroy(struct tns_registry *r, struct tns_ns *ns, bool force) {
        unsigned listeners, pinned;
        bool live;

        if (!ns->record)
                return -EPERM;
        tns_supervisor_ns_counts(r->s, ns, &listeners, &pinned, &live);
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

        tns_supervisor_ns_counts(r->s, ns, &listeners, &pinned, &live);
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
                tns_supervisor_changed(r->s, NULL, -EBADF);
        }
        tns_supervisor_offsets_changed(r->s); /* absolute waits in flight */
        return 0;
}

int tns_registry_set_rate(struct tns_registry *r, struct tns_ns *ns, const uint64_t mult[TNS_CLASS_MAX],
                          const int freeze[TNS_CLASS_MAX]) {
        unsigned listeners, pinned;
        bool live;
        int k;

        /* They keep their relation: one rate for the two. */
        if (mult[TNS_CLASS_MONOTONIC] != mult[TNS_CLASS_BOOTTIME] ||
            freeze[TNS_CLASS_MONOTONIC] != freeze[TNS_CLASS_BOOTTIME])
                return -EINVAL;
        if (ns->parent)
                return -EOPNOTSUPP;
        tns_supervisor_ns_counts(r->s, ns, &listeners, &pinned, &live);
        if (live && !tns_ns_rate_capable(ns))
                return -EPERM;
        /* Members that join later get the filter of a rated namespace. */
        if (!tns_ns_rate_capable(ns))
                tns_ns_set_rate_capable(ns, true);
        k = tns_ns_set_rates(ns, mult, freeze);
        if (k < 0)
                return k;
        if (ns->record) {
                ns->record->sets++;
                tns_supervisor_changed(r->s, NULL, -EBADF);
        }
        tns_supervisor_offsets_changed(r->s); /* absolute waits in flight */
        return 0;
}

int tns_registry_init_rate(struct tns_registry *r, struct tns_ns *ns, const uint64_t mult[TNS_CLASS_MAX],
                           const int freeze[TNS_CLASS_MAX], const struct tns_clock_arg clocks[TNS_CLASS_MAX]) {
        int64_t v[TNS_CLASS_MAX] = {};
        unsigned dates = 0;
        struct timespec now;
        int64_t host;
        int k;

        tns_ns_set_rate_capable(ns, true);
        k = tns_registry_set_rate(r, ns, mult, freeze);
        if (k < 0 || !clocks || clock_gettime(CLOCK_REALTIME, &now) < 0 || tns_ts_to_ns(&now, &host) < 0)
                return k;
        /* A date is a value of the clock: made against the rated clock
         * (tns_ns_base()), as a later set makes it. */
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (clocks[c].set && clocks[c].spec.kind == TNS_OFFSET_ABSOLUTE &&
                    !__builtin_sub_overflow(clocks[c].spec.ns, tns_ns_base(ns, c, host), &v[c])) {
                        dates |= 1U << c;
                        if (clock_gettime(tns_class_clock(c), &now) < 0 || tns_offset_check(c, v[c], &now) < 0)
                                return -ERANGE;
                }
        return dates ? tns_ns_set_offsets(ns, dates, v) : 0;
}

/* A seccomp listener, by its /proc link (lib/core/fd-link.h: the kernel
 * names every listener's inode alike, anon_inode_getfile("seccomp
 * notify")). */
static int check_listener_fd(int fd) {
        int k = tns_fd_kind(0, fd);

        return k < 0 ? k : k == TNS_FD_SECCOMP ? 0 : -ENOTTY;
}

int tns_registry_adopt(struct tns_registry *r, struct tns_ns *ns, int fd, pid_t root_pid) {
        _cleanup_close_ int owned = fd;
        unsigned listeners, pinned;
        bool live;
        int k;

        k = check_listener_fd(fd);
        if (k < 0)
                return k;
        tns_supervisor_ns_counts(r->s, ns, &listeners, &pinned, &live);
        if (listeners >= TNS_MAX_LISTENERS_PER_NS || tns_supervisor_get_stats(r->s)->listeners >= TNS_MAX_LISTENERS)
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
        unsigned listeners, pinned, room, total, in_use;
        bool live;

        tns_supervisor_ns_counts(r->s, ns, &listeners, &pinned, &live);
        room = listeners < TNS_MAX_LISTENERS_PER_NS ? TNS_MAX_LISTENERS_PER_NS - listeners : 0;
        in_use = tns_supervisor_get_stats(r->s)->listeners;
        total = in_use < TNS_MAX_LISTENERS ? TNS_MAX_LISTENERS - in_use : 0;
        if (tns_ns_rate_capable(ns))
                flags |= TNS_ATTACH_RATED;
        /* A namespace paired already keeps its kernel time namespace: a
         * new one would split its processes' identity. */
        if (ns->kns_fd >= 0)
                flags &= ~TNS_ATTACH_NEWTIME_ROOT;
        return tns_supervisor_attach(r->s, pid, flags, room < total ? room : total, owner, attach_listener,
                                     &(struct attach_ctx){r, ns}, ret);
}

int tns_registry_export(struct tns_registry *r, struct tns_ns *ns, struct tns_clock_state *ret) {
        struct tns_clock_state st = {.grant = ns->record ? ns->record->grant : TNS_GRANT_NONE};

        if (ns->name)
                snprintf(st.name, sizeof(st.name), "%s", ns->name);
        st.host_realtime_ns = clock_now_ns(CLOCK_REALTIME);
        st.rate_capable = tns_ns_rate_capable(ns);
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                struct tns_rate_map m;

                st.offset_ns[c] = tns_ns_offset(ns, c);
                st.rate_mult[c] = tns_ns_mult(ns, c);
                st.run_mult[c] = tns_ns_run_mult(ns, c);
                tns_ns_rate_map(ns, c, &m);
                st.value_ns[c] = tns_rate_map_apply(&m, clock_now_ns(tns_class_clock(c)));
                if (st.value_ns[c] == INT64_MAX || st.value_ns[c] == INT64_MIN)
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
                if (c == TNS_CLASS_REALTIME && st->run_mult[c] && st->rate_mult[c] != TNS_RATE_ONE) {
                        /* A rated REALTIME went on at its rate meanwhile
                         * (a frozen one stood still). */
                        struct tns_rate_map m = {st->rate_mult[c], st->host_realtime_ns, st->value_ns[c]};

                        if (__builtin_sub_overflow(tns_rate_map_apply(&m, host), host, &ret[c]))
                                return -ERANGE;
                } else if (c == TNS_CLASS_REALTIME)
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
        k = tns_registry_create(r, name, offsets, TNS_ORIGIN_IMPORT, grant, ret);
        if (k < 0 || !state->rate_capable)
                return k;
        /* The rates go on from the values just set (the anchors are now). */
        tns_ns_set_rate_capable(*ret, true);
        {
                uint64_t mult[TNS_CLASS_MAX] = {};
                int freeze[TNS_CLASS_MAX] = {-1, -1, -1};
                bool any = false;

                for (int c = 0; c < TNS_CLASS_MAX; c++)
                        if (state->run_mult[c] &&
                            (state->rate_mult[c] != TNS_RATE_ONE || state->run_mult[c] != TNS_RATE_ONE)) {
                                mult[c] = state->run_mult[c];
                                freeze[c] = state->rate_mult[c] == 0;
                                any = true;
                        }
                if (any)
                        (void) tns_ns_set_rates(*ret, mult, freeze);
        }
        /* A frozen clock stands at its exported value exactly, not where
         * it was frozen again a moment after its offset was made. */
        {
                int64_t v[TNS_CLASS_MAX] = {};
                unsigned frozen = 0;

                for (int c = 0; c < TNS_CLASS_MAX; c++)
                        if (state->run_mult[c] && state->rate_mult[c] == 0 && tns_ns_mult(*ret, c) == 0 &&
                            !__builtin_sub_overflow(state->value_ns[c], tns_ns_base(*ret, c, 0), &v[c]))
                                frozen |= 1U << c;
                if (frozen)
                        (void) tns_ns_set_offsets(*ret, frozen, v);
        }
        return 0;
}
