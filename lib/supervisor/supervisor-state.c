/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Restarts: the engine's state as a record (lib/core/state.h) and the fds
 * it names, and the supervisor made again from them. A restarted daemon
 * gets back the very listener fds its predecessor served: the processes
 * under them never saw a listener go, and what they asked meanwhile is
 * still queued on those fds. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "proc-util.h"
#include "state.h"
#include "supervisor-internal.h"
#include "util.h"

struct foreach_ctx {
        struct listener *l;
        tns_supervisor_fd_fn fn;
        void *userdata;
};

static void procfs_fd(unsigned file, uint64_t serial, int fd, void *userdata) {
        struct foreach_ctx *c = userdata;
        char name[80];

        snprintf(name, sizeof(name), "p.%" PRIu64 ".%u.%" PRIu64, c->l->serial, file, serial);
        c->fn(name, fd, c->userdata);
}

void tns_supervisor_foreach_fd(struct tns_supervisor *s, tns_supervisor_fd_fn fn, void *userdata) {
        char name[32];

        if (tns_page_store_usable(&s->pages)) {
                fn("pages.rw", s->pages.rw_dir, userdata);
                fn("pages.ro", s->pages.ro_dir, userdata);
        }
        for (struct tns_ns *ns = s->namespaces; ns; ns = ns->next) {
                snprintf(name, sizeof(name), "ns.%" PRIu64, ns->id);
                fn(name, ns->page_fd, userdata);
        }
        for (struct listener *l = s->listeners; l; l = l->next) {
                snprintf(name, sizeof(name), "l.%" PRIu64, l->serial);
                fn(name, l->fd, userdata);
                supervisor_procfs_foreach(l, procfs_fd, &(struct foreach_ctx){l, fn, userdata});
        }
}

/* ------------------------------------------------------------------ save */

static int cmp_ns_id(const void *a, const void *b) {
        const struct tns_state_ns *x = a, *y = b;

        return x->id < y->id ? -1 : x->id > y->id;
}

int tns_supervisor_save_state(struct tns_supervisor *s, tns_supervisor_save_ns_fn fn, void *userdata,
                              struct tns_state *ret) {
        _cleanup_(tns_state_done) struct tns_state st = {.next_ns_id = s->next_ns_id,
                                                         .next_serial = s->next_serial,
                                                         .wait_slot_base = s->wait_slot_base,
                                                         .have_wait_slot_base = true};

        for (struct tns_ns *ns = s->namespaces; ns; ns = ns->next) {
                struct tns_state_ns *n = tns_state_add_ns(&st);

                if (!n)
                        return -ENOMEM;
                n->id = ns->id;
                n->parent = ns->parent ? ns->parent->id : 0;
                if (ns->name)
                        snprintf(n->name, sizeof(n->name), "%s", ns->name);
                n->flags = ns->memfd_size > TNS_MEMFD_IMAGE ? 0 : TNS_NS_NO_VDSO;
                n->owner = ns->owner;
                n->tz_set = ns->tz_set;
                n->tz_minuteswest = ns->tz.tz_minuteswest;
                n->tz_dsttime = ns->tz.tz_dsttime;
                if (fn)
                        fn(ns, n, userdata);
        }
        /* Parents before children: ids only grow. */
        qsort(st.ns, st.n_ns, sizeof(*st.ns), cmp_ns_id);
        for (struct listener *l = s->listeners; l; l = l->next) {
                struct tns_state_listener *x = tns_state_add_listener(&st);

                if (!x)
                        return -ENOMEM;
                *x = (struct tns_state_listener){.serial = l->serial,
                                                 .ns = l->ns->id,
                                                 .root_pid = l->root_pid,
                                                 .kernel_nested = l->kernel_nested};
                for (struct member *m = l->members; m; m = m->next) {
                        struct tns_state_member *y = tns_state_add_member(&st);
                        uint64_t start = 0;

                        if (!y)
                                return -ENOMEM;
                        /* 0 if it is exiting now: it is not restored then. */
                        (void) tns_proc_start_time(m->tgid, &start);
                        *y = (struct tns_state_member){
                                .listener = l->serial, .ns = m->ns->id, .tgid = m->tgid, .start_time = start};
                }
        }
        *ret = st;
        st = (struct tns_state){};
        return 0;
}

/* --------------------------------------------------------------- restore */

static int take_fd(struct tns_named_fd *fds, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (fds[i].fd >= 0 && fds[i].name && strcmp(fds[i].name, name) == 0)
                        return TAKE_FD(fds[i].fd);
        return -ENOENT;
}

static struct tns_ns *ns_by_id(struct tns_supervisor *s, uint64_t id) {
        for (struct tns_ns *ns = s->namespaces; ns; ns = ns->next)
                if (ns->id == id)
                        return ns;
        return NULL;
}

static void log_dropped(struct tns_supervisor *s, int r, const char *what, uint64_t id) {
        tns_log_errno(&s->log, LOG_WARNING, r, "Not restoring %s %" PRIu64 ": %m", what, id);
}

/* The predecessor's store, before its files: namespaces made from now on
 * go to it too (one store, one device to know them by). */
static void restore_pages(struct tns_supervisor *s, struct tns_named_fd *fds, size_t n) {
        int rw = take_fd(fds, n, "pages.rw"), ro = take_fd(fds, n, "pages.ro"), k;

        if (rw < 0 && ro < 0)
                return;
        tns_page_store_done(&s->pages);
        k = tns_page_store_adopt(rw, ro, &s->pages);
        if (k < 0) {
                s->pages = TNS_PAGE_STORE_NULL;
                tns_log_errno(&s->log, LOG_WARNING, k, "Not restoring the namespace pages' tmpfs, making another: %m");
        }
}

static void restore_namespaces(struct tns_supervisor *s, const struct tns_state *st, struct tns_named_fd *fds, size_t n,
                               const struct tns_supervisor_restore_ops *ops, bool *held,
                               struct tns_restore_report *rep) {
        char name[32];
        int k;

        for (size_t i = 0; i < st->n_ns; i++) {
                const struct tns_state_ns *x = &st->ns[i];
                struct tns_ns *parent = x->parent ? ns_by_id(s, x->parent) : NULL, *ns;
                int fd;

                snprintf(name, sizeof(name), "ns.%" PRIu64, x->id);
                fd = take_fd(fds, n, name);
                k = fd < 0 ? fd : (x->parent && !parent) ? (safe_close(fd), -ENOENT) : 0;
                if (k >= 0)
                        k = tns_ns_adopt(x->id, x->name[0] ? x->name : NULL, parent, fd, s->image,
                                         tns_page_store_usable(&s->pages) ? &s->pages : NULL, &ns);
                if (k < 0) {
                        log_dropped(s, k, "namespace", x->id);
                        rep->dropped++;
                        continue;
                }
                if (ns->image_stale)
                        tns_log(&s->log, LOG_NOTICE,
                                "Namespace %" PRIu64
                                " has another vDSO image (an upgrade): programs started in it from "
                                "now on read clocks by syscall",
                                x->id);
                ns->owner = x->owner;
                ns->tz_set = x->tz_set;
                ns->tz = (struct timezone){x->tz_minuteswest, x->tz_dsttime};
                supervisor_link_ns(s, ns);
                rep->namespaces++;
                if (x->held && ops && ops->ns) {
                        k = ops->ns(ns, x, ops->userdata);
                        held[i] = k > 0;
                        if (k < 0) {
                                log_dropped(s, k, "the record of namespace", x->id);
                                rep->dropped++;
                        }
                }
        }
}

static void restore_listeners(struct tns_supervisor *s, const struct tns_state *st, struct tns_named_fd *fds, size_t n,
                              struct tns_restore_report *rep) {
        char prefix[32];
        int k;

        for (size_t i = 0; i < st->n_listeners; i++) {
                const struct tns_state_listener *x = &st->listeners[i];
                struct tns_ns *ns = ns_by_id(s, x->ns);
                struct listener *l;
                int fd;

                snprintf(prefix, sizeof(prefix), "l.%" PRIu64, x->serial);
                fd = take_fd(fds, n, prefix);
                k = fd < 0 ? fd : !ns ? (safe_close(fd), -ENOENT) : 0;
                if (k >= 0)
                        k = supervisor_listener_new(s, ns, fd, x->root_pid, x->serial, &l);
                if (k < 0) {
                        log_dropped(s, k, "listener", x->serial);
                        rep->dropped++;
                        continue;
                }
                rep->listeners++;
                l->kernel_nested = x->kernel_nested;
                /* Its /proc connections: "p.SERIAL.FILE.N". */
                for (size_t j = 0; j < n; j++) {
                        uint64_t a, file, conn;

                        if (fds[j].fd < 0 || !fds[j].name || tns_state_fd_kind(fds[j].name, &a, &file, &conn) != 'p' ||
                            a != x->serial)
                                continue;
                        k = supervisor_procfs_adopt(l, (unsigned) file, conn, TAKE_FD(fds[j].fd));
                        if (k < 0) {
                                log_dropped(s, k, "a /proc connection of listener", x->serial);
                                rep->dropped++;
                        } else
                                rep->procfs++;
                        if (conn >= s->next_serial)
                                s->next_serial = conn + 1;
                }
        }
}

static void restore_members(struct tns_supervisor *s, const struct tns_state *st, struct tns_restore_report *rep) {
        for (size_t i = 0; i < st->n_members; i++) {
                const struct tns_state_member *x = &st->members[i];
                struct listener *l = supervisor_listener_by_serial(s, x->listener);
                struct tns_ns *ns = ns_by_id(s, x->ns);
                uint64_t start = 0;
                int k;

                /* Gone, or its pid reused while no one watched. */
                k = !l || !ns                                  ? -ENOENT
                    : tns_proc_start_time(x->tgid, &start) < 0 ? -ESRCH
                    : start != x->start_time                   ? -ESRCH
                                                               : supervisor_member_restore(l, x->tgid, ns);
                if (k < 0) {
                        rep->dropped++;
                        continue;
                }
                rep->members++;
                /* The kernel namespaces its pairs were (not in the record:
                 * the fds of the kernel's namespaces are not kept), as far
                 * as its processes tell. */
                supervisor_kns_repair(s, x->tgid, ns);
        }
}

int tns_supervisor_restore_state(struct tns_supervisor *s, const struct tns_state *st, struct tns_named_fd *fds,
                                 size_t n, const struct tns_supervisor_restore_ops *ops,
                                 struct tns_restore_report *ret) {
        _cleanup_free_ bool *held = NULL;
        struct tns_restore_report rep = {};

        if (s->namespaces || s->listeners)
                return -EBUSY;
        held = calloc(st->n_ns ? st->n_ns : 1, sizeof(*held));
        if (!held)
                return -ENOMEM;
        s->restoring = true;
        if (st->next_ns_id > s->next_ns_id)
                s->next_ns_id = st->next_ns_id;
        if (st->next_serial > s->next_serial)
                s->next_serial = st->next_serial;
        /* Our wait slots start far from where the predecessor's threads
         * may still point, and from its predecessors' (a stride of the
         * golden ratio of the page: k restarts back stay hundreds of
         * slots away for small k). */
        if (st->have_wait_slot_base)
                s->wait_slot_base = (st->wait_slot_base + TNS_WAIT_SLOT_STRIDE) % TNS_WAIT_SLOTS;
        restore_pages(s, fds, n);
        restore_namespaces(s, st, fds, n, ops, held, &rep);
        restore_listeners(s, st, fds, n, &rep);
        restore_members(s, st, &rep);
        /* The creation reference of a namespace no layer above holds (a
         * child, a detached root) was its creator's: now its listeners,
         * members and children hold it, or nothing and it goes. */
        for (size_t i = 0; i < st->n_ns; i++) {
                struct tns_ns *ns = ns_by_id(s, st->ns[i].id);

                if (ns && !held[i])
                        tns_ns_unref(ns);
        }
        s->restoring = false;
        for (struct listener *l = s->listeners; l && ops && ops->listener; l = l->next)
                ops->listener(l->ns, l->root_pid, ops->userdata);
        if (ret)
                *ret = rep;
        return 0;
}
