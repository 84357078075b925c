/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operations of the control protocol: a request line in, a reply out.
 * Every failure becomes an error object with a stable code and a message
 * naming what failed; only running out of memory for the reply itself is
 * an error of this function. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "attach-creds.h"
#include "clocks.h"
#include "pidfd-util.h"
#include "time-util.h"
#include "timensd.h"

struct op_ctx {
        struct manager *m;
        struct request_wait *wait;
        struct peer *p;
        struct tns_request *req;
        int *fds;
        struct tns_proto_error err;
        json_object *result;
        bool deferred; /* the reply comes later (wait) */
};

_printf_(3, 4) static int fail(struct op_ctx *x, enum tns_err code, const char *fmt, ...) {
        va_list ap;

        x->err.code = code;
        va_start(ap, fmt);
        vsnprintf(x->err.message, sizeof(x->err.message), fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static int fail_errno(struct op_ctx *x, int r, const char *what) {
        if (r == -ENOSPC)
                return fail(x, TNS_ERR_LIMIT, "%s: limit reached (%d namespaces, %d listeners, %d per namespace)", what,
                            TNS_MAX_NAMESPACES, TNS_MAX_LISTENERS, TNS_MAX_LISTENERS_PER_NS);
        return fail(x, TNS_ERR_INTERNAL, "%s: %s", what, strerror(-r));
}

static const char *label(const struct tns_ns *ns, char *buf, size_t size) {
        if (ns->name)
                snprintf(buf, size, "'%s'", ns->name);
        else
                snprintf(buf, size, "%" PRIu64, ns->id);
        return buf;
}

static void log_ns(struct op_ctx *x, const struct tns_ns *ns, const char *fmt, ...) _printf_(3, 4);
static void log_ns(struct op_ctx *x, const struct tns_ns *ns, const char *fmt, ...) {
        char id[32], msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        snprintf(id, sizeof(id), "%" PRIu64, ns->id);
        tns_log_full(&x->m->log, LOG_INFO, 0, &(struct tns_log_ctx){.ns = ns->name ?: id, .pid = x->p->pid}, "%s", msg);
}

static int set_result(struct op_ctx *x, const char *key, json_object *v) {
        if (!v)
                return fail(x, TNS_ERR_INTERNAL, "out of memory");
        x->result = json_object_new_object();
        if (!x->result || json_object_object_add(x->result, key, v) < 0) {
                json_object_put(v);
                return fail(x, TNS_ERR_INTERNAL, "out of memory");
        }
        return 0;
}

static int find_target(struct op_ctx *x, struct tns_ns **ret) {
        struct tns_ns *ns;

        if (x->req->name)
                ns = tns_registry_find(x->m->registry, x->req->name);
        else
                ns = tns_registry_find_id(x->m->registry, x->req->ns_id);
        if (!ns && x->req->name)
                return fail(x, TNS_ERR_NOT_FOUND, "no namespace named '%s'", x->req->name);
        if (!ns)
                return fail(x, TNS_ERR_NOT_FOUND, "no namespace with id %" PRIu64, x->req->ns_id);
        *ret = ns;
        return 0;
}

/* The namespace a request names, for a change: the peer must own it. */
static int find_target_to_change(struct op_ctx *x, const char *what, struct tns_ns **ret) {
        char why[PEER_ERR_MAX];
        int r;

        r = find_target(x, ret);
        if (r < 0)
                return r;
        if (peer_may_change(x->m, x->p->uid, *ret, what, why) < 0)
                return fail(x, TNS_ERR_PERMISSION_DENIED, "%s", why);
        return 0;
}

/* The offsets a request gives, made effective now: a date becomes the
 * offset that makes the clock read it. Returns the mask of given clocks. */
static unsigned request_offsets_for(const struct tns_request *req, const struct tns_ns *ns,
                                    int64_t ret[TNS_CLASS_MAX]) {
        unsigned mask = 0;

        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                const struct tns_clock_arg *a = &req->clocks[c];
                struct timespec now;
                int64_t host;

                ret[c] = 0;
                if (!a->set)
                        continue;
                mask |= 1U << c;
                ret[c] = a->spec.ns;
                if (a->spec.kind == TNS_OFFSET_ABSOLUTE && clock_gettime(CLOCK_REALTIME, &now) == 0 &&
                    tns_ts_to_ns(&now, &host) == 0)
                        /* In a rated namespace, offsets add to the rated
                         * clock: the date is made against it. */
                        ret[c] = a->spec.ns - (ns ? tns_ns_base(ns, c, host) : host); /* both within 1970..2262 */
                /* An offset, too: the clock becomes the host's plus it
                 * now, however far a rate took it (helper-39: at x10,
                 * --realtime +0 changed nothing, '+0 x1' went back to
                 * the host's). Not rated, the base is the host's clock. */
                else if (a->spec.kind != TNS_OFFSET_ABSOLUTE && ns && clock_gettime(tns_class_clock(c), &now) == 0 &&
                         tns_ts_to_ns(&now, &host) == 0 &&
                         __builtin_add_overflow(a->spec.ns, host - tns_ns_base(ns, c, host), &ret[c]))
                        ret[c] = a->spec.ns;
        }
        return mask;
}

static unsigned request_offsets(const struct tns_request *req, int64_t ret[TNS_CLASS_MAX]) {
        return request_offsets_for(req, NULL, ret);
}

static bool request_rates(const struct tns_request *req) {
        return tns_request_has_rate(req);
}

/* The registry's freeze per class: 1, 0, or -1 to leave it. */
static const int *freeze_arg(const struct tns_request *req, int ret[TNS_CLASS_MAX]) {
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                ret[c] = req->freeze[c] == TNS_FREEZE_ON ? 1 : req->freeze[c] == TNS_FREEZE_OFF ? 0 : -1;
        return ret;
}

static int rate_error(struct op_ctx *x, int r, struct tns_ns *ns) {
        char l[TNS_NS_NAME_MAX + 8];

        label(ns, l, sizeof(l));
        if (r == -EOPNOTSUPP)
                return fail(x, TNS_ERR_UNSUPPORTED,
                            "namespace %s was made by unshare inside: it runs at the rate of the namespace it was "
                            "made in; set the rate there",
                            l);
        if (r == -EPERM)
                return fail(x, TNS_ERR_UNSUPPORTED,
                            "namespace %s has processes and was made without a rate: their filter does not trap "
                            "the waits a rate changes; create it with a rate (--rate 1; a container: "
                            "org.timens.faketime='+0 x1' or TIMENS_FAKETIME='+0 x1') to change it later",
                            l);
        return fail_errno(x, r, "setting the rate");
}

static int check_range(struct op_ctx *x, unsigned mask, const int64_t v[TNS_CLASS_MAX]) {
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                struct timespec now;

                if (!(mask & (1U << c)) || clock_gettime(tns_class_clock(c), &now) < 0)
                        continue;
                if (tns_offset_check(c, v[c], &now) < 0)
                        return fail(x, TNS_ERR_OUT_OF_RANGE,
                                    "offsets.%s would put %s %s: the kernel refuses such offsets for its own "
                                    "time namespaces too",
                                    tns_class_name(c), tns_clock_name(tns_class_clock(c)),
                                    c == TNS_CLASS_REALTIME ? "before 1970 or after 2262"
                                                            : "below zero or beyond 146 years");
        }
        return 0;
}

static void view_fill(struct op_ctx *x, struct tns_ns *ns, bool processes, struct tns_ns_view *v) {
        struct tns_ns_info info;

        tns_registry_info(x->m->registry, ns, &info);
        *v = (struct tns_ns_view){
                .id = info.id,
                .parent_id = info.parent_id,
                .origin = info.origin,
                .grant = info.grant,
                .owner = info.owner,
                .shared = info.shared,
                .listeners = info.listeners,
                .pinned = info.pinned,
                .children = info.children,
                .live = info.live,
                .calls = info.calls,
                .failures = info.failures,
                .sets = info.sets,
                .created_realtime_ns = info.created_realtime_ns,
                .depth = info.depth,
                .kernel_ns = info.kernel_ns,
                .kernel_offsets_known = info.kernel_offsets_known,
        };
        snprintf(v->name, sizeof(v->name), "%s", info.name ?: "");
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                struct timespec now;
                int64_t host = 0;

                v->offset_ns[c] = info.offset[c];
                v->kernel_offset_ns[c] = info.kernel_offset[c];
                v->anchor_host_ns[c] = info.map[c].anchor_host;
                (void) tns_ns_add(info.map[c].anchor_ns, info.kernel_offset[c], &v->anchor_ns[c]);
                /* What its processes read: ours (through its rate) plus the
                 * kernel's part. */
                if (clock_gettime(tns_class_clock(c), &now) == 0 && tns_ts_to_ns(&now, &host) == 0) {
                        v->now_ns[c] = tns_rate_map_apply(&info.map[c], host);
                        (void) tns_ns_add(v->now_ns[c], info.kernel_offset[c], &v->now_ns[c]);
                }
        }
        memcpy(v->rate_mult, info.rate_mult, sizeof(v->rate_mult));
        memcpy(v->run_mult, info.run_mult, sizeof(v->run_mult));
        v->rate_capable = info.rate_capable;
        /* The scan of every process's maps (programs reparented out of
         * the trees) for root and the group only: its cost grows with what
         * any user runs, and it runs on the loop that serves clock calls,
         * which any reader's show could otherwise stall (issue 14, item
         * 7). Others get the trees timensd tracks. */
        if (processes) {
                int n = x->p->by_user >= TNS_ACCESS_WRITE
                                ? tns_registry_processes(x->m->registry, ns, v->processes, TNS_PROTO_MAX_PROCESSES)
                                : tns_registry_processes_tracked(x->m->registry, ns, v->processes,
                                                                 TNS_PROTO_MAX_PROCESSES);

                v->has_processes = true;
                v->n_processes = n > 0 ? (unsigned) n : 0;
        }
}

static json_object *ns_json(struct op_ctx *x, struct tns_ns *ns, bool processes) {
        _cleanup_free_ struct tns_ns_view *v = malloc(sizeof(*v));
        json_object *o = NULL;

        if (!v)
                return NULL;
        view_fill(x, ns, processes, v);
        return tns_ns_view_to_json(v, &o) < 0 ? NULL : o;
}

static int op_hello(struct op_ctx *x) {
        struct tns_hello h = {
                .server = "timensd",
                .version = TNS_VERSION,
                .protocol = TNS_PROTO_VERSION,
                .access = x->p->access,
                .max_request = TNS_PROTO_MAX_REQUEST,
                .max_reply = TNS_PROTO_MAX_REPLY,
                .ops = (UINT64_C(1) << _TNS_OP_MAX) - 1,
        };

        return tns_hello_to_json(&h, &x->result) < 0 ? fail(x, TNS_ERR_INTERNAL, "out of memory") : 0;
}

static int create_error(struct op_ctx *x, int r, const char *name) {
        if (r == -EEXIST)
                return fail(x, TNS_ERR_EXISTS, "a namespace named '%s' exists already", name);
        if (r == -EINVAL)
                return fail(x, TNS_ERR_INVALID_PARAMS, "'%s' is not a valid namespace name", name ?: "");
        return fail_errno(x, r, "creating the namespace");
}

static int op_create(struct op_ctx *x) {
        int64_t v[TNS_CLASS_MAX];
        unsigned mask = request_offsets(x->req, v);
        struct tns_ns *ns;
        int r;

        r = check_range(x, mask, v);
        if (r < 0)
                return r;
        r = tns_registry_create(x->m->registry, x->req->name, v, TNS_ORIGIN_CREATE, x->req->grant, &ns);
        if (r < 0)
                return create_error(x, r, x->req->name);
        (void) tns_registry_set_owner(x->m->registry, ns, x->p->uid, x->req->shared);
        if (request_rates(x->req)) {
                r = tns_registry_init_rate(x->m->registry, ns, x->req->rate_mult,
                                           freeze_arg(x->req, (int[TNS_CLASS_MAX]){}), x->req->clocks);
                if (r < 0)
                        return rate_error(x, r, ns);
        }
        log_ns(x, ns, "Created namespace %" PRIu64, ns->id);
        return set_result(x, "namespace", ns_json(x, ns, false));
}

static int op_destroy(struct op_ctx *x) {
        struct tns_ns_info info;
        struct tns_ns *ns;
        char l[TNS_NS_NAME_MAX + 8];
        uint64_t id;
        int r;

        r = find_target_to_change(x, "destroy", &ns);
        if (r < 0)
                return r;
        tns_registry_info(x->m->registry, ns, &info);
        label(ns, l, sizeof(l));
        id = ns->id;
        r = tns_registry_destroy(x->m->registry, ns, x->req->force);
        if (r == -EBUSY)
                return fail(x, TNS_ERR_BUSY,
                            "namespace %s has processes; with force it is detached: it loses its name and its "
                            "processes keep their clocks until they exit",
                            l);
        if (r == -EPERM)
                return fail(x, TNS_ERR_UNSUPPORTED,
                            "namespace %s was made by unshare inside, or detached: it goes with its processes", l);
        if (r < 0)
                return fail_errno(x, r, "destroying the namespace");
        tns_log_full(&x->m->log, LOG_INFO, 0, &(struct tns_log_ctx){.pid = x->p->pid}, "Namespace %s %s", l,
                     info.live ? "detached" : "destroyed");
        x->result = json_object_new_object();
        if (!x->result || json_object_object_add(x->result, "id", json_object_new_uint64(id)) < 0 ||
            json_object_object_add(x->result, "detached", json_object_new_boolean(info.live)) < 0)
                return fail(x, TNS_ERR_INTERNAL, "out of memory");
        return 0;
}

static int set_error(struct op_ctx *x, int r, struct tns_ns *ns, enum tns_clock_class c, const int64_t v[]) {
        char l[TNS_NS_NAME_MAX + 8], from[40], to[40];

        label(ns, l, sizeof(l));
        if (r == -EDOM) {
                (void) tns_offset_format(tns_ns_offset(ns, c), from, sizeof(from));
                (void) tns_offset_format(v[c], to, sizeof(to));
                return fail(x, TNS_ERR_BACKWARDS,
                            "set would move the %s clock of namespace %s backwards (offset %s to %s) while it has "
                            "processes; pass allow_backwards to do it anyway",
                            tns_class_name(c), l, from, to);
        }
        if (r == -ERANGE)
                return fail(x, TNS_ERR_OUT_OF_RANGE,
                            "offsets.%s would put %s of namespace %s (or of a child) out of the range the kernel "
                            "allows",
                            tns_class_name(c), tns_clock_name(tns_class_clock(c)), l);
        return fail_errno(x, r, "setting the offsets");
}

static int op_set(struct op_ctx *x) {
        int64_t v[TNS_CLASS_MAX];
        unsigned mask;
        enum tns_clock_class bad = TNS_CLASS_MONOTONIC;
        char text[40];
        struct tns_ns *ns;
        int r;

        r = find_target_to_change(x, "set", &ns);
        if (r < 0)
                return r;
        /* The rate first, refused as a whole before any clock moves. */
        if (request_rates(x->req)) {
                r = tns_registry_set_rate(x->m->registry, ns, x->req->rate_mult,
                                          freeze_arg(x->req, (int[TNS_CLASS_MAX]){}));
                if (r < 0)
                        return rate_error(x, r, ns);
                for (int c = TNS_CLASS_MAX - 1; c >= 0; c--) {
                        /* REALTIME's, then MONOTONIC's (BOOTTIME's is it). */
                        if (c == TNS_CLASS_BOOTTIME || (!x->req->rate_mult[c] && x->req->freeze[c] == TNS_FREEZE_KEEP))
                                continue;
                        (void) tns_rate_format(tns_ns_mult(ns, c) ? tns_ns_run_mult(ns, c) : 0, text, sizeof(text));
                        log_ns(x, ns, "Set the %s rate to %s", tns_class_name(c), text);
                }
        }
        /* The offsets against the clocks as the rate left them: a return
         * to rate 1 folds the rate's drift into the offsets (helper-42:
         * made before it, '+0' at x10 read the host's less that drift). */
        mask = request_offsets_for(x->req, ns, v);
        r = mask ? tns_registry_set_offsets(x->m->registry, ns, mask, v, x->req->allow_backwards, &bad) : 0;
        if (r < 0)
                return set_error(x, r, ns, bad, v);
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (mask & (1U << c)) {
                        (void) tns_offset_format(v[c], text, sizeof(text));
                        log_ns(x, ns, "Set the %s offset to %s", tns_class_name(c), text);
                }
        return set_result(x, "namespace", ns_json(x, ns, false));
}

static int op_show(struct op_ctx *x) {
        struct tns_ns *ns;
        int r;

        r = find_target(x, &ns);
        return r < 0 ? r : set_result(x, "namespace", ns_json(x, ns, true));
}

static int op_list(struct op_ctx *x) {
        _cleanup_free_ struct tns_ns **all = NULL;
        json_object *a;
        size_t n;
        int r;

        r = tns_registry_list(x->m->registry, &all, &n);
        if (r < 0)
                return fail_errno(x, r, "listing");
        a = json_object_new_array_ext((int) n);
        for (size_t i = 0; a && i < n; i++) {
                json_object *v = ns_json(x, all[i], false);

                if (!v || json_object_array_add(a, v) < 0) {
                        json_object_put(v);
                        json_object_put(a);
                        a = NULL;
                }
        }
        return set_result(x, "namespaces", a);
}

static int op_export(struct op_ctx *x) {
        struct tns_clock_state st;
        struct tns_ns *ns;
        json_object *o;
        int r;

        r = find_target(x, &ns);
        if (r < 0)
                return r;
        r = tns_registry_export(x->m->registry, ns, &st);
        if (r < 0)
                return fail(x, TNS_ERR_OUT_OF_RANGE, "the clocks of this namespace are out of range");
        r = tns_clock_state_to_json(&st, &o);
        return r < 0 ? fail(x, TNS_ERR_INTERNAL, "out of memory") : set_result(x, "state", o);
}

static int op_import(struct op_ctx *x) {
        enum tns_clock_class bad = TNS_CLASS_MONOTONIC;
        struct tns_ns *ns;
        int r;

        /* The state's grant, unless the request gives one. */
        enum tns_grant grant = x->req->grant != TNS_GRANT_NONE ? x->req->grant : x->req->state.grant;

        r = tns_registry_import(x->m->registry, &x->req->state, x->req->name, grant, &ns, &bad);
        if (r == -ERANGE)
                return fail(x, TNS_ERR_OUT_OF_RANGE,
                            "state.clocks.%s: this host's %s cannot give the exported value (it would need an "
                            "offset the kernel refuses)",
                            tns_class_name(bad), tns_clock_name(tns_class_clock(bad)));
        if (r < 0)
                return create_error(x, r, x->req->name ?: x->req->state.name);
        (void) tns_registry_set_owner(x->m->registry, ns, x->p->uid, x->req->shared);
        log_ns(x, ns, "Imported namespace %" PRIu64, ns->id);
        return set_result(x, "namespace", ns_json(x, ns, false));
}

static int op_stats(struct op_ctx *x) {
        struct tns_stats_view st = {.server = x->m->stats};

        /* The path images read through, as proven (a stats right after a
         * start waits for the proof's last milliseconds). */
        tns_supervisor_settle_vdso(x->m->supervisor);
        st.sup = *tns_supervisor_get_stats(x->m->supervisor);
        st.server.uptime_ns = (manager_now_usec() - x->m->start_usec) * 1000;
        return tns_stats_to_json(&st, &x->result) < 0 ? fail(x, TNS_ERR_INTERNAL, "out of memory") : 0;
}

/* Joining puts the caller's processes under a namespace's clocks, its
 * grant, and lets them change its clocks for every member (an emulated
 * clock_settime): a namespace belongs to whoever made it, and others join
 * only one made shared (issue 14, item 6). Root is no exception: the
 * runtimes run as root, and a container's annotations must not reach a
 * group member's namespace that was not shared. */
static int join_check(struct op_ctx *x, struct tns_ns *ns) {
        char why[PEER_ERR_MAX];

        if (peer_may_join(x->m, x->p->uid, ns, why) >= 0)
                return 0;
        return fail(x, TNS_ERR_PERMISSION_DENIED, "%s", why);
}

/* A process a request names, against the client: for adopt, its
 * descendant, owned by it (or the client is root) and in a mount
 * namespace it may mount in; for attach the last alone (lib/kernel/attach.c
 * checks ownership once the process is stopped). All through the pidfd,
 * which must still be alive once checked (a pid reused meanwhile would be
 * caught there). */
enum {
        CHECK_DESCENDANT = 1 << 0,
        CHECK_OWNER = 1 << 1,
        CHECK_MOUNT_NS = 1 << 2,
};

static int check_process(struct op_ctx *x, int pidfd, pid_t pid, unsigned checks) {
        char why[PEER_ERR_MAX];
        int r = 0;

        if (checks & CHECK_DESCENDANT)
                r = peer_check_descendant(x->p, pidfd, pid, why);
        if (r >= 0 && (checks & CHECK_OWNER))
                r = peer_check_owner(x->p, pidfd, pid, why);
        if (r >= 0 && (checks & CHECK_MOUNT_NS))
                r = peer_check_mount_ns(x->p, pidfd, pid, why);
        if (r >= 0 && !tns_pidfd_alive(pidfd))
                r = -ESRCH, snprintf(why, sizeof(why), "process %d exited", (int) pid);
        if (r == -ESRCH)
                return fail(x, TNS_ERR_NOT_FOUND, "%s", why);
        if (r < 0)
                return fail(x, TNS_ERR_PERMISSION_DENIED, "%s", why);
        return 0;
}

static int adopt_target(struct op_ctx *x, struct tns_ns **ret, bool *ret_created) {
        int64_t v[TNS_CLASS_MAX];
        unsigned mask = request_offsets(x->req, v);
        int r;

        *ret_created = false;
        if (x->req->join) {
                r = find_target(x, ret);
                return r < 0 ? r : join_check(x, *ret);
        }
        r = check_range(x, mask, v);
        if (r < 0)
                return r;
        r = tns_registry_create(x->m->registry, x->req->name, v, TNS_ORIGIN_RUN, x->req->grant, ret);
        if (r < 0)
                return create_error(x, r, x->req->name);
        (void) tns_registry_set_owner(x->m->registry, *ret, x->p->uid, x->req->shared);
        if (request_rates(x->req)) {
                r = tns_registry_init_rate(x->m->registry, *ret, x->req->rate_mult,
                                           freeze_arg(x->req, (int[TNS_CLASS_MAX]){}), x->req->clocks);
                if (r < 0)
                        return rate_error(x, r, *ret);
        }
        *ret_created = true;
        return 0;
}

static int op_adopt(struct op_ctx *x) {
        struct tns_ns *ns;
        bool created;
        pid_t root;
        int r;

        if (!x->fds || x->fds[0] < 0)
                return fail(x, TNS_ERR_BAD_FD,
                            "adopt needs the seccomp listener fd, sent with the request "
                            "(SCM_RIGHTS)");
        root = x->fds[1] >= 0 ? tns_pidfd_pid(x->fds[1]) : 0;
        if (x->fds[1] >= 0 && root <= 0)
                return fail(x, TNS_ERR_BAD_FD, "the second fd sent is not a pidfd of a running process");
        r = root > 0 ? check_process(x, x->fds[1], root, CHECK_DESCENDANT | CHECK_OWNER | CHECK_MOUNT_NS) : 0;
        if (r < 0)
                return r;
        r = adopt_target(x, &ns, &created);
        if (r < 0)
                return r;
        r = tns_registry_adopt(x->m->registry, ns, TAKE_FD(x->fds[0]), root);
        if (r < 0) {
                if (created)
                        (void) tns_registry_destroy(x->m->registry, ns, true);
                if (r == -ENOTTY || r == -EBADF)
                        return fail(x, TNS_ERR_BAD_FD, "the fd sent is not a seccomp listener");
                return fail_errno(x, r, "serving the listener");
        }
        /* A process may now be inside: access is computed afresh. */
        x->m->generation++;
        log_ns(x, ns, "Serving namespace %" PRIu64 " for process %d", ns->id, (int) root);
        return set_result(x, "namespace", ns_json(x, ns, false));
}

static int attach_error(struct op_ctx *x, int r, pid_t pid, const struct tns_attach_report *rep);

/* Which pids are never attached. Whose processes may be is not decided
 * here: a look at /proc now would race with a setuid exec before the
 * process is stopped. lib/kernel/attach.c checks every process of the tree once
 * it is stopped, against the caller's SO_PEERCRED credentials (x->p).
 * Where timensd would mount is checked here, through a pidfd: its /proc
 * covers go into the attached process's mount namespace, which a caller
 * other than root must own (docs/SECURITY.md, "timensd's sockets"). */
static int attach_check(struct op_ctx *x, pid_t pid) {
        _cleanup_close_ int pidfd = -EBADF;

        if (pid == 1)
                return fail(x, TNS_ERR_INVALID_PARAMS,
                            "process 1 is the init of timensd's pid namespace: attaching it would put every "
                            "process of the host under the namespace");
        if (pid == getpid())
                return fail(x, TNS_ERR_INVALID_PARAMS, "process %d is timensd itself", (int) pid);
        pidfd = tns_pidfd_open(pid);
        if (pidfd < 0 && tns_pidfd_is_thread(pid))
                return attach_error(x, -EINVAL, pid, NULL);
        if (pidfd < 0)
                return fail(x, TNS_ERR_NOT_FOUND, "no process %d (pids are timensd's, the host's)", (int) pid);
        return check_process(x, pidfd, pid, CHECK_MOUNT_NS);
}

static pid_t tracer_of(pid_t pid) {
        char path[64], line[128];
        _cleanup_(fclosep) FILE *f = NULL;
        int tracer = 0;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "TracerPid: %d", &tracer) == 1)
                        break;
        return tracer;
}

static int attach_error(struct op_ctx *x, int r, pid_t pid, const struct tns_attach_report *rep) {
        struct tns_ns *in;
        char l[TNS_NS_NAME_MAX + 8];
        pid_t tracer;

        switch (r) {
        case -EACCES:
                return fail(x, TNS_ERR_PERMISSION_DENIED,
                            "process %d is not yours to attach: %s; only root may attach processes that are not "
                            "the caller's",
                            (int) pid, rep->root_denied ?: "not yours");
        case -ESRCH:
                return fail(x, TNS_ERR_NOT_FOUND, "process %d exited", (int) pid);
        case -EINVAL:
                return fail(x, TNS_ERR_INVALID_PARAMS, "%d is a thread, not a process: give its process id (Tgid)",
                            (int) pid);
        case -EPERM:
                tracer = tracer_of(pid);
                if (tracer > 0)
                        return fail(x, TNS_ERR_BUSY,
                                    "process %d is traced by process %d (a debugger?): detach it first", (int) pid,
                                    (int) tracer);
                return fail(x, TNS_ERR_PERMISSION_DENIED, "process %d cannot be traced (a kernel thread?)", (int) pid);
        case -ETIMEDOUT:
                return fail(x, TNS_ERR_TIMEOUT,
                            "a thread of process %d did not stop within %d ms (uninterruptible sleep, or a vfork "
                            "parent): try again",
                            (int) pid, TNS_ATTACH_STOP_TIMEOUT_MS);
        case -EPROTOTYPE:
                return fail(x, TNS_ERR_UNSUPPORTED, "process %d is a 32-bit program: attach serves x86-64 ones",
                            (int) pid);
        case -EOPNOTSUPP:
                return fail(x, TNS_ERR_UNSUPPORTED,
                            "process %d has no vDSO of this kernel (or this host has none): nothing to run the "
                            "attach with",
                            (int) pid);
        case -EBUSY:
                in = tns_registry_find_process(x->m->registry, pid);
                if (in)
                        return fail(x, TNS_ERR_BUSY, "process %d is already in namespace %s", (int) pid,
                                    label(in, l, sizeof(l)));
                return fail(x, TNS_ERR_BUSY,
                            "process %d already has a seccomp filter with a listener (another supervisor, or a "
                            "container runtime's seccomp agent): the kernel allows one",
                            (int) pid);
        case -EXDEV:
                return fail(x, TNS_ERR_UNSUPPORTED,
                            "the threads of process %d have different seccomp filters: they cannot be given one "
                            "together",
                            (int) pid);
        case -E2BIG:
                return fail(x, TNS_ERR_LIMIT, "process %d has more than %d threads", (int) pid, TNS_ATTACH_MAX_THREADS);
        default:
                return fail_errno(x, r, "attaching the process");
        }
}

static const char *attach_failure_text(int error) {
        if (error == -ETIMEDOUT)
                return "did not stop in time, or the request's time ran out first: attach it on its own";
        if (error == -ENOSPC)
                return "over the limit of processes attached";
        return strerror(-error);
}

static int add_pid_entry(json_object *array, pid_t pid, const char *key, const char *text) {
        json_object *e = json_object_new_object();

        if (!e || json_object_array_add(array, e) < 0) {
                json_object_put(e);
                return -ENOMEM;
        }
        if (json_object_object_add(e, "pid", json_object_new_int(pid)) < 0 ||
            json_object_object_add(e, key, json_object_new_string(text)) < 0)
                return -ENOMEM;
        return 0;
}

/* attached: pids; failed: {pid, message}; skipped: {pid, reason}, the
 * processes that are not the caller's (attach-creds.h), let go untouched. */
static json_object *attach_json(const struct tns_attach_report *rep) {
        _cleanup_json_ json_object *a = json_object_new_array(), *f = json_object_new_array(),
                                   *k = json_object_new_array(), *o = json_object_new_object();

        if (!a || !f || !k || !o)
                return NULL;
        for (unsigned i = 0; i < rep->n_attached && i < TNS_ATTACH_MAX_PROCESSES; i++)
                if (json_object_array_add(a, json_object_new_int(rep->attached[i])) < 0)
                        return NULL;
        for (unsigned i = 0; i < rep->n_failed && i < TNS_ATTACH_MAX_PROCESSES; i++)
                if (add_pid_entry(f, rep->failed[i].pid, "message", attach_failure_text(rep->failed[i].error)) < 0)
                        return NULL;
        for (unsigned i = 0; i < rep->n_skipped && i < TNS_ATTACH_MAX_PROCESSES; i++)
                if (add_pid_entry(k, rep->skipped[i].pid, "reason", rep->skipped[i].reason) < 0)
                        return NULL;
        if (json_object_object_add(o, "attached", TAKE_PTR(a)) < 0 ||
            json_object_object_add(o, "failed", TAKE_PTR(f)) < 0 ||
            json_object_object_add(o, "skipped", TAKE_PTR(k)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

#define ATTACH_SKIPS_LOGGED 16

static int op_attach(struct op_ctx *x) {
        _cleanup_free_ struct tns_attach_report *rep = calloc(1, sizeof(*rep));
        /* Who asks is who connected (SO_PEERCRED): root may attach
         * anything, anyone else (a member of the group) its own. */
        const struct tns_attach_owner owner = {.uid = x->p->uid, .gid = x->p->gid};
        pid_t pid = (pid_t) x->req->pid;
        json_object *ns_obj, *res;
        struct tns_ns *ns;
        bool created;
        int r;

        if (!rep)
                return fail(x, TNS_ERR_INTERNAL, "out of memory");
        r = attach_check(x, pid);
        if (r < 0)
                return r;
        r = adopt_target(x, &ns, &created);
        if (r < 0)
                return r;
        /* The namespace's first process by attach (the OCI hook's
         * container init, `timensctl attach`) gives it a kernel time
         * namespace of its own, for what it starts (not an entrant's: it
         * joins a container that has one). */
        r = tns_registry_attach(x->m->registry, ns, pid,
                                (x->req->no_tree ? 0 : TNS_ATTACH_TREE) | TNS_ATTACH_NEWTIME_ROOT,
                                x->p->uid == 0 ? NULL : &owner, rep);
        if (r < 0) {
                if (created)
                        (void) tns_registry_destroy(x->m->registry, ns, true);
                return r == -ENOSPC ? fail_errno(x, r, "attaching") : attach_error(x, r, pid, rep);
        }
        x->m->generation++;
        log_ns(x, ns,
               "Attached process %d (%u processes, %u failed, %u skipped: not the caller's) to namespace %" PRIu64,
               (int) pid, rep->n_attached, rep->n_failed, rep->n_skipped, ns->id);
        /* Who tried to attach what was not theirs is for the operator to
         * know; a few lines per request, not one per process of a tree. */
        for (unsigned i = 0; i < rep->n_skipped && i < ATTACH_SKIPS_LOGGED; i++)
                log_ns(x, ns, "Skipped process %d of the tree of %d, asked by uid %u: %s", (int) rep->skipped[i].pid,
                       (int) pid, (unsigned) x->p->uid, rep->skipped[i].reason);
        res = attach_json(rep);
        ns_obj = ns_json(x, ns, false);
        if (!res || !ns_obj || json_object_object_add(res, "namespace", ns_obj) < 0) {
                json_object_put(res);
                json_object_put(ns_obj);
                return fail(x, TNS_ERR_INTERNAL, "out of memory");
        }
        x->result = res;
        return 0;
}

static int op_wait(struct op_ctx *x) {
        struct tns_ns_info info;
        struct tns_ns *ns;
        int r;

        r = find_target(x, &ns);
        if (r < 0)
                return r;
        tns_registry_info(x->m->registry, ns, &info);
        if (info.origin == TNS_ORIGIN_UNSHARE || info.origin == TNS_ORIGIN_DETACHED || !x->wait)
                return fail(x, TNS_ERR_UNSUPPORTED,
                            "wait works on namespaces made by create, import or run, over a connection");
        /* The reply comes from whoever holds the wait (timensd-server.c). */
        *x->wait = (struct request_wait){
                .pending = true, .id = x->req->id, .ns = ns->id, .timeout_ms = x->req->timeout_ms};
        x->deferred = true;
        return 0;
}

static int (*const ops[_TNS_OP_MAX])(struct op_ctx *x) = {
        [TNS_OP_HELLO] = op_hello,   [TNS_OP_CREATE] = op_create, [TNS_OP_DESTROY] = op_destroy,
        [TNS_OP_SET] = op_set,       [TNS_OP_SHOW] = op_show,     [TNS_OP_LIST] = op_list,
        [TNS_OP_EXPORT] = op_export, [TNS_OP_IMPORT] = op_import, [TNS_OP_STATS] = op_stats,
        [TNS_OP_ADOPT] = op_adopt,   [TNS_OP_ATTACH] = op_attach, [TNS_OP_WAIT] = op_wait,
};

static int authorize(struct op_ctx *x) {
        enum tns_access need = tns_op_writes(x->req->op) ? TNS_ACCESS_WRITE : TNS_ACCESS_READ;
        struct peer *p = x->p;

        peer_refresh(x->m, p);
        if (p->access >= need)
                return 0;
        if (p->gone)
                return fail(x, TNS_ERR_PERMISSION_DENIED,
                            "process %d, which opened this connection, has exited: a connection is good only "
                            "while the process that made it runs (open a new one)",
                            (int) p->pid);
        if (p->inside_ns)
                return fail(x, TNS_ERR_PERMISSION_DENIED,
                            "process %d is inside time namespace %" PRIu64 ", which was not granted %s access",
                            (int) p->pid, p->inside_ns, need == TNS_ACCESS_WRITE ? "write" : "read");
        if (p->filtered)
                return fail(x, TNS_ERR_PERMISSION_DENIED,
                            "process %d runs under a seccomp filter and is in no time namespace timensd can "
                            "place it in: it may only read (run timensctl outside the filter to change state)",
                            (int) p->pid);
        return fail(x, TNS_ERR_PERMISSION_DENIED, "%s changes state: only root and group '%s' may do it (uid %u)",
                    tns_op_name(x->req->op), x->m->group_name, (unsigned) p->uid);
}

int manager_handle_line(struct manager *m, struct request_wait *wait, struct peer *p, const char *line, size_t len,
                        int fds[TNS_PROTO_MAX_FDS], json_object **ret_reply) {
        struct tns_request req;
        struct op_ctx x = {.m = m, .wait = wait, .p = p, .req = &req, .fds = fds};
        int r;

        m->stats.requests++;
        r = tns_request_parse(line, len, &req, &x.err);
        if (r >= 0)
                r = authorize(&x);
        if (r >= 0)
                r = ops[req.op](&x);
        if (r >= 0 && x.deferred) {
                *ret_reply = NULL;
                r = 0;
        } else if (r >= 0) {
                r = tns_reply_result(req.id, TAKE_PTR(x.result), ret_reply);
        } else {
                json_object_put(TAKE_PTR(x.result));
                m->stats.errors++;
                r = tns_reply_error(req.id, &x.err, ret_reply);
        }
        tns_request_done(&req);
        return r;
}
