/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/timex.h>
#include <sys/uio.h>

#include "fd-check.h"
#include "emulate.h"
#include "filter.h"
#include "exec-missing.h"
#include "inject.h"
#include "kns.h"
#include "pidfd-util.h"
#include "proc-util.h"
#include "supervisor-internal.h"
#include "time-util.h"
#include "util.h"

/* One notification being served: what the emulation's callbacks need. */
struct call {
        struct listener *l;
        const struct seccomp_notif *req;
        const struct tns_ns *ns; /* the caller's, once resolved */
        bool gone; /* the id went stale: the caller died or was interrupted */
        bool have_caps;
        struct tns_proc_status status;
};

int supervisor_id_valid(int fd, uint64_t id) {
        int r;

        for (;;) {
                errno = 0;
                r = seccomp_notify_id_valid(fd, id);
                if (r >= 0 || errno != EINTR)
                        return r;
        }
}

static int call_status(struct call *c) {
        int r;

        if (c->have_caps)
                return 0;
        r = tns_proc_status(c->req->pid, &c->status);
        if (r < 0)
                return r;
        /* The pid may have been reused between the notification and the
         * read: only an id still valid afterwards makes the data ours. */
        if (supervisor_id_valid(c->l->fd, c->req->id) < 0) {
                c->gone = true;
                return -ESRCH;
        }
        c->have_caps = true;
        return 0;
}

static int env_clock_gettime(void *userdata, clockid_t id, struct timespec *ret) {
        return clock_gettime(id, ret) < 0 ? negative_errno() : 0;
}

static int env_adjtimex_read(void *userdata, struct timex *tx) {
        int r = adjtimex(tx);

        return r < 0 ? negative_errno() : r;
}

static void env_host_tz(void *userdata, struct timezone *ret) {
        struct timeval tv;

        if (gettimeofday(&tv, ret) < 0)
                *ret = (struct timezone){};
}

static int env_read_mem(void *userdata, uint64_t addr, void *buf, size_t len) {
        struct call *c = userdata;
        struct iovec local = {buf, len}, remote = {(void *) (uintptr_t) addr, len};
        ssize_t n;

        n = process_vm_readv(c->req->pid, &local, 1, &remote, 1, 0);
        if (supervisor_id_valid(c->l->fd, c->req->id) < 0) {
                c->gone = true;
                return -ESRCH;
        }
        return n == (ssize_t) len ? 0 : -EFAULT;
}

/* CAP_SYS_TIME counts for a namespace's clocks as the kernel counts it
 * for a time namespace its owner made: held in our user namespace (the
 * host's), or in one that root or the namespace's owner made (a
 * container's, the owner's `unshare -U -r`). Not in one a member made
 * itself: anyone gets every capability in a user namespace of its own,
 * and with this one a member set the clocks of every member, root's
 * processes too (helper-37's audit). */
static bool may_set_clocks(struct call *c) {
        bool ours = false;
        uid_t owner = 0;

        if (!c->ns || tns_userns_of(c->req->pid, &ours, &owner) < 0 || supervisor_id_valid(c->l->fd, c->req->id) < 0)
                return false;
        return ours || owner == 0 || owner == c->ns->owner;
}

static int env_capabilities(void *userdata, uint64_t *ret) {
        const uint64_t sys_time = UINT64_C(1) << TNS_CAP_SYS_TIME;
        struct call *c = userdata;
        int r;

        r = call_status(c);
        if (r < 0)
                return r;
        *ret = c->status.cap_eff;
        if ((*ret & sys_time) && !may_set_clocks(c))
                *ret &= ~sys_time;
        return 0;
}

static void id_slot_release(struct listener *l);
static void vdso_proven(struct tns_supervisor *s);
static void vdso_probe_sources_free(struct tns_supervisor *s);

static struct member *member_find(struct listener *l, pid_t tgid) {
        for (struct member *m = l->members; m; m = m->next)
                if (m->tgid == tgid)
                        return m;
        return NULL;
}

static void member_free(struct member *m) {
        struct listener *l = m->l;

        for (struct member **p = &l->members; *p; p = &(*p)->next)
                if (*p == m) {
                        *p = m->next;
                        break;
                }
        l->n_members--;
        sd_event_source_disable_unref(m->src);
        safe_close(m->pidfd);
        tns_ns_unref(m->ns);
        free(m);
        tns_supervisor_changed(l->s, NULL, -EBADF);
}

static int on_member_exit(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        member_free(userdata);
        return 0;
}

/* Pins tgid to ns. The pidfd makes the entry go when the process exits,
 * before its pid can be reused by someone else. */
static int member_add(struct listener *l, pid_t tgid, struct tns_ns *ns) {
        _cleanup_free_ struct member *m = NULL;
        int r;

        if (l->n_members >= TNS_MAX_MEMBERS_PER_LISTENER)
                return -ENOSPC;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->pidfd = (int) syscall(SYS_pidfd_open, tgid, 0);
        if (m->pidfd < 0)
                return negative_errno();
        r = sd_event_add_io(l->s->event, &m->src, m->pidfd, EPOLLIN, on_member_exit, m);
        if (r < 0) {
                safe_close(m->pidfd);
                return r;
        }
        (void) sd_event_source_set_description(m->src, "timens-member");
        m->l = l;
        m->tgid = tgid;
        m->ns = tns_ns_ref(ns);
        m->next = l->members;
        l->members = TAKE_PTR(m);
        l->n_members++;
        tns_supervisor_changed(l->s, NULL, -EBADF);
        return 0;
}

int supervisor_member_restore(struct listener *l, pid_t tgid, struct tns_ns *ns) {
        return member_add(l, tgid, ns);
}

int supervisor_member_set(struct listener *l, pid_t tgid, struct tns_ns *ns) {
        struct member *m = member_find(l, tgid);

        if (!m)
                return member_add(l, tgid, ns);
        if (m->ns != ns) {
                tns_ns_unref(m->ns);
                m->ns = tns_ns_ref(ns);
                tns_supervisor_changed(l->s, NULL, -EBADF);
        }
        return 0;
}

/* The namespace of a caller: its listener's, unless it or an ancestor
 * moved (unshare) — then the one its vDSO mapping names, or for a program
 * without our vDSO the nearest member entry up the parent chain. */
struct tns_ns *supervisor_resolve_ns(struct listener *l, pid_t tid) {
        struct tns_proc_status st;
        struct tns_ns *ns;
        struct member *m;
        pid_t tgid;

        if (l->n_members == 0)
                return l->ns;
        /* Its own entry first: an unshare or setns sets it, and a vfork
         * child that unshared before its exec shares its parent's mapping
         * (pidfd_open() takes only a leader: the usual caller, in ~1 us). */
        tgid = (int) syscall(SYS_pidfd_open, tid, 0);
        if (tgid >= 0) {
                close(tgid);
                m = member_find(l, tid);
                if (m)
                        return m->ns;
        }
        ns = supervisor_ns_by_mapping(l->s, tid, NULL);
        if (ns)
                return ns;
        if (tns_proc_status(tid, &st) < 0)
                return l->ns;
        tgid = st.tgid;
        m = member_find(l, tgid);
        if (m)
                return m->ns;
        for (pid_t p = st.ppid; p > 1; p = st.ppid) {
                m = member_find(l, p);
                if (m || tns_proc_status(p, &st) < 0)
                        break;
        }
        if (!m)
                return l->ns;
        /* Remember it, so that it stays put if its parent moves later. */
        (void) member_add(l, tgid, m->ns);
        return m->ns;
}

/* The list holds no reference: a namespace unlinks itself when freed. */
static void ns_freed(struct tns_ns *ns, void *userdata) {
        struct tns_supervisor *s = userdata;
        char name[32];

        /* Not gone when we exit: a successor adopts it from the fd store,
         * by its name in the store's tmpfs, which goes with its last fd. */
        if (s->exiting)
                ns->store = NULL;

        supervisor_image_ns_gone(s, ns);
        snprintf(name, sizeof(name), "ns.%" PRIu64, ns->id);
        tns_supervisor_changed(userdata, name, -EBADF);
}

void supervisor_link_ns(struct tns_supervisor *s, struct tns_ns *ns) {
        char name[32];

        ns->next = s->namespaces;
        if (ns->next)
                ns->next->pprev = &ns->next;
        ns->pprev = &s->namespaces;
        s->namespaces = ns;
        ns->on_free = ns_freed;
        ns->on_free_userdata = s;
        snprintf(name, sizeof(name), "ns.%" PRIu64, ns->id);
        tns_supervisor_changed(s, name, ns->page_fd);
}

struct tns_ns *tns_supervisor_namespaces(struct tns_supervisor *s) {
        return s->namespaces;
}

unsigned tns_supervisor_count_namespaces(const struct tns_supervisor *s) {
        unsigned n = 0;

        for (const struct tns_ns *ns = s->namespaces; ns; ns = ns->next)
                n++;
        return n;
}

/* The namespaces made by unshare (children: a root is made by request). */
static unsigned count_unshared(const struct tns_supervisor *s) {
        unsigned n = 0;

        for (const struct tns_ns *ns = s->namespaces; ns; ns = ns->next)
                n += ns->parent != NULL;
        return n;
}

/* A namespace and its descendants. */
static unsigned count_tree(const struct tns_ns *ns) {
        unsigned n = 1;

        for (const struct tns_ns *k = ns->first_child; k; k = k->next_sibling)
                n += count_tree(k);
        return n;
}

struct pin_ctx {
        struct listener *l;
        struct tns_ns *ns;
};

static int pin_child(pid_t child, void *userdata) {
        struct pin_ctx *p = userdata;
        struct tns_proc_status st;

        /* Only processes: a thread of the caller moves with it. */
        if (tns_proc_status(child, &st) < 0 || st.tgid != child || member_find(p->l, child))
                return 0;
        return member_add(p->l, child, p->ns);
}

/* unshare(CLONE_NEWTIME): the kernel runs it (our reply is CONTINUE):
 * its children, and the caller after an exec, are in a new kernel time
 * namespace (time_for_children), whose offsets /proc/PID/timens_offsets
 * sets until a process is in it. Our side, RFC style: the caller's whole
 * thread group moves into a new child of its namespace now, paired with
 * that kernel namespace at its return (supervisor-kns.c); its existing
 * children stay where they are; later children follow it. A
 * clock_settime inside then moves the new namespace, as the RFC had it;
 * offsets written to timens_offsets are the kernel's, and reach the
 * caller's children (and its exec) only, as on the kernel. */
static int do_unshare(struct listener *l, const struct seccomp_notif *req, struct tns_ns *cur) {
        struct tns_supervisor *s = l->s;
        struct tns_proc_status st;
        struct pin_ctx pin = {l, cur};
        struct tns_ns *ns;
        int r;

        /* The kernel's unshare still runs: its children get its offsets only. */
        if (tns_supervisor_count_namespaces(s) >= TNS_MAX_NAMESPACES || count_unshared(s) >= TNS_MAX_UNSHARED ||
            count_tree(tns_ns_root(cur)) > TNS_MAX_NAMESPACES_PER_TREE)
                return -ENOSPC;
        r = tns_proc_status(req->pid, &st);
        if (r < 0)
                return r;
        l->kernel_nested = true;
        /* The namespace it leaves is paired with the kernel one it is in,
         * unless it is between an unshare and its exec (RFC-moved). */
        if (cur->kns_fd < 0) {
                uint64_t own, children;

                if (tns_kns_ino(req->pid, false, &own) >= 0 && tns_kns_ino(req->pid, true, &children) >= 0 &&
                    own == children)
                        supervisor_kns_pair(s, cur, req->pid, false);
        }
        r = tns_proc_for_each_child(st.tgid, pin_child, &pin);
        if (r < 0)
                return r;
        r = tns_ns_new(++s->next_ns_id, NULL, cur, NULL, s->image, supervisor_pages(s), &ns);
        if (r < 0)
                return r;
        /* Its maker's, as the kernel's is its maker's user namespace's. */
        ns->owner = st.euid != (uid_t) -1 ? st.euid : cur->owner;
        supervisor_link_ns(s, ns);
        r = supervisor_member_set(l, st.tgid, ns);
        tns_ns_unref(ns); /* the member holds it, and the trace below */
        if (r < 0)
                return r;
        /* Its vDSO must read the new namespace too. Where that cannot be
         * done (a debugger holds it), its vDSO reads stay in the old one:
         * logged, as the kernel cannot be asked to fail the unshare now. */
        r = supervisor_nsop_begin(l, req, ns, TNS_NSOP_UNSHARE);
        if (r < 0 && r != -ENOENT)
                tns_log_full(&s->log, LOG_WARNING, r, &(struct tns_log_ctx){.pid = req->pid, .syscall = "unshare"},
                             "Failed to move the vDSO to the new namespace, ignoring: %m");
        return 0;
}

static int apply_effects(struct listener *l, struct tns_ns *ns, const int64_t koff[TNS_CLASS_MAX],
                         const struct tns_emu_result *res) {
        int64_t v;
        int r;

        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (res->set_offset[c]) {
                        /* What the caller reads less its kernel namespace's
                         * part is ours to set. */
                        if (tns_ns_add(res->new_offset[c], -koff[c], &v) < 0)
                                return -EINVAL;
                        r = tns_ns_set_offset(ns, c, v);
                        if (r < 0)
                                return -EINVAL;
                        supervisor_wait_offsets_changed(l->s);
                }
        /* The same zone again is no change: not a save of the record per
         * call of a program that sets it in a loop. */
        if (res->set_tz && !(ns->tz_set && ns->tz.tz_minuteswest == res->new_tz.tz_minuteswest &&
                             ns->tz.tz_dsttime == res->new_tz.tz_dsttime)) {
                ns->tz_set = true;
                ns->tz = res->new_tz;
                tns_supervisor_changed(l->s, NULL, -EBADF);
        }
        return 0;
}

static int write_results(struct call *c, const struct tns_emu_result *res) {
        for (unsigned i = 0; i < res->n_writes; i++) {
                const struct tns_emu_write *w = &res->writes[i];
                struct iovec local = {(void *) w->data, w->len}, remote = {(void *) (uintptr_t) w->addr, w->len};

                /* Writing into a reused pid would corrupt a stranger. */
                if (supervisor_id_valid(c->l->fd, c->req->id) < 0) {
                        c->gone = true;
                        return -ESRCH;
                }
                if (process_vm_writev(c->req->pid, &local, 1, &remote, 1, 0) != (ssize_t) w->len)
                        return -EFAULT;
        }
        return 0;
}

/* A 32-bit call reaches us only from an OCI seccomp profile, whose rules
 * name syscalls for every architecture at once (lib/oci/oci-config.c): an
 * exec runs as our own filter leaves it (untrapped), anything else gets
 * the compat errno as our filter gives it. */
static int64_t serve_compat(const struct seccomp_notif *req) {
        _cleanup_free_ char *name = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);

        if (name && (strcmp(name, "execve") == 0 || strcmp(name, "execveat") == 0))
                return TNS_REPLY_CONTINUE;
        /* A 32-bit program's waits run unconverted, as our own filter
         * leaves them: its futexes are its locks. */
        for (size_t i = 0; name && i < _TNS_SYS_MAX; i++)
                if (tns_syscalls[i].wait && strcmp(name, tns_syscalls[i].name) == 0)
                        return TNS_REPLY_CONTINUE;
        return -TNS_COMPAT_ERRNO;
}

/* The plain reads: the calls a receive thread answers outside the lock
 * (supervisor-threads.c), and the ones a kernel vDSO's fallback makes. */
static const enum tns_sys read_ids[TNS_PLAIN_READS] = {TNS_SYS_CLOCK_GETTIME, TNS_SYS_GETTIMEOFDAY, TNS_SYS_TIME};

/* id's index in read_ids (and struct listener's latency_unlocked), or -1. */
static int read_index(enum tns_sys id) {
        for (int i = 0; i < TNS_PLAIN_READS; i++)
                if (read_ids[i] == id)
                        return i;
        return -1;
}

/* What tns_emulate() needs of the engine for a caller in ns: its
 * offsets (with its kernel namespace's, koff), rate and time zone. */
static void emu_state(struct listener *l, pid_t pid, struct tns_ns *ns, struct tns_emu_state *st,
                      int64_t koff[TNS_CLASS_MAX]) {
        *st = (struct tns_emu_state){.rated = tns_ns_rated(ns)};
        (void) supervisor_kernel_offsets(l, pid, koff, NULL);
        for (int k = 0; k < TNS_CLASS_MAX; k++) {
                if (tns_ns_add(tns_ns_offset(ns, k), koff[k], &st->offset[k]) < 0)
                        st->offset[k] = tns_ns_offset(ns, k);
                if (st->rated)
                        st->base[k] = tns_ns_root(ns)->rate[k];
        }
        st->tz_set = tns_ns_tz(ns, &st->tz);
}

static int64_t serve(struct listener *l, const struct seccomp_notif *req, struct call *c) {
        const struct tns_syscall_desc *d = tns_syscall_by_nr(req->data.nr);
        struct tns_emu_env env = {env_clock_gettime, env_adjtimex_read, env_host_tz, env_read_mem, env_capabilities, c};
        struct tns_emu_state st;
        struct tns_emu_result res;
        int64_t koff[TNS_CLASS_MAX];
        struct tns_ns *ns;
        uint64_t args[6];
        int r;

        /* Our filter sends only x86-64 calls from the table. */
        if (req->data.arch != AUDIT_ARCH_X86_64)
                return serve_compat(req);
        if (!d)
                return -ENOSYS;
        l->s->stats.per_syscall[d->id]++;
        if (d->id == TNS_SYS_ARCH_PRCTL)
                return supervisor_first_call(l, req); /* supervisor-first-call.c */
        ns = supervisor_resolve_ns(l, req->pid);
        c->ns = ns;
        ns->n_calls++; /* for the control API (registry) */
        if (d->id == TNS_SYS_EXECVE || d->id == TNS_SYS_EXECVEAT) {
                /* The exec itself runs unchanged; where we cannot inject
                 * (a debugger holds the caller, no vDSO here), the new
                 * program uses the emulated syscalls. */
                (void) supervisor_exec_begin(l, req, ns);
                return TNS_REPLY_CONTINUE;
        }
        if (d->wait)
                return supervisor_wait(l, req, ns, d);
        if (d->id == TNS_SYS_TIMERFD_GETTIME)
                return supervisor_timerfd_gettime(l, req, ns); /* supervisor-wait.c */
        if (d->id == TNS_SYS_SYSINFO && req->data.args[0] == 0 && req->data.args[1] == TNS_EXEC_MARKER)
                return supervisor_exec_marker(l, req); /* supervisor-exec.c */
        if (d->id == TNS_SYS_SYSINFO)
                return supervisor_sysinfo(l, req, ns); /* supervisor-procfs.c */
        if (d->id == TNS_SYS_SETNS)
                return supervisor_setns(l, req, ns); /* supervisor-kns.c */
        if (read_index(d->id) >= 0 && supervisor_is_vdso_fallback(l, req)) {
                l->s->stats.vdso_fallbacks++;
                return TNS_REPLY_CONTINUE;
        }
        emu_state(l, req->pid, ns, &st, koff);
        for (int k = 0; k < 6; k++)
                args[k] = req->data.args[k];
        r = tns_emulate(d->id, args, &st, &env, &res);
        if (d->id == TNS_SYS_UNSHARE) {
                /* The kernel runs it, and answers (tns_emulate() only
                 * predicts it, for the RFC's move of the caller). */
                if (r >= 0 && !c->gone && res.unshare) {
                        r = do_unshare(l, req, ns);
                        if (r < 0)
                                tns_log_full(
                                        &l->s->log, l->unshare_warned ? LOG_DEBUG : LOG_WARNING, r,
                                        &(struct tns_log_ctx){.pid = req->pid, .syscall = "unshare"},
                                        "Failed to give the caller a namespace of its own, it stays in its own%s: %m",
                                        r == -ENOSPC ? " (too many namespaces made by unshare)" : "");
                        if (r < 0)
                                l->unshare_warned = true;
                }
                return TNS_REPLY_CONTINUE;
        }
        if (r < 0 || c->gone) {
                if (!c->gone)
                        l->s->stats.failures++, ns->n_failures++;
                return r < 0 ? r : -ESRCH;
        }
        if (res.ret >= 0) {
                r = apply_effects(l, ns, koff, &res);
                if (r < 0)
                        return r;
        }
        r = write_results(c, &res);
        return r < 0 ? r : res.ret;
}

static unsigned latency_bucket(uint64_t ns) {
        uint64_t us = ns / 1000;
        unsigned b = 0;

        while (us && b < TNS_LATENCY_BUCKETS - 1)
                us >>= 1, b++;
        return b;
}

/* The answers sent outside the lock, into the counts: only for a
 * listener whose thread counted since (the stats are asked for at every
 * save of the record, with thousands of listeners). A count made after
 * the flag is cleared is taken now or at the next fold. */
static void fold_unlocked_counts(struct listener *l) {
        struct tns_supervisor_stats *st = &l->s->stats;

        if (!__atomic_load_n(&l->counts_dirty, __ATOMIC_RELAXED) ||
            !__atomic_exchange_n(&l->counts_dirty, false, __ATOMIC_ACQ_REL))
                return;
        st->replied += __atomic_exchange_n(&l->replied_unlocked, 0, __ATOMIC_RELAXED);
        st->vanished += __atomic_exchange_n(&l->vanished_unlocked, 0, __ATOMIC_RELAXED);
        for (int i = 0; i < TNS_PLAIN_READS; i++)
                for (int b = 0; b < TNS_LATENCY_BUCKETS; b++)
                        if (__atomic_load_n(&l->latency_unlocked[i][b], __ATOMIC_RELAXED))
                                st->latency[read_ids[i]][b] +=
                                        __atomic_exchange_n(&l->latency_unlocked[i][b], 0, __ATOMIC_RELAXED);
}

static void listener_free(struct listener *l) {
        struct tns_supervisor *s = l->s;
        char name[32];

        supervisor_thread_stop(l); /* first: it serves l's calls */
        fold_unlocked_counts(l);
        snprintf(name, sizeof(name), "l.%" PRIu64, l->serial);
        tns_supervisor_changed(s, name, -EBADF);
        id_slot_release(l);
        while (l->members)
                member_free(l->members);
        supervisor_kns_unpin_tree(s, l->ns);
        supervisor_procfs_free(l); /* hook: supervisor-procfs.c */
        for (struct listener **p = &s->listeners; *p; p = &(*p)->next)
                if (*p == l) {
                        *p = l->next;
                        break;
                }
        s->stats.listeners--;
        sd_event_source_disable_unref(l->src);
        safe_close(l->fd);
        if (s->listener_gone_fn)
                s->listener_gone_fn(s, l->ns, s->listener_gone_userdata);
        tns_ns_unref(l->ns);
        free(l);
}

void tns_supervisor_set_change_callback(struct tns_supervisor *s, tns_supervisor_change_fn fn,
                                        tns_supervisor_flush_fn flush, void *userdata) {
        s->change_fn = fn;
        s->flush_fn = flush;
        s->change_userdata = userdata;
}

void supervisor_flush(struct tns_supervisor *s) {
        if (s->flush_fn)
                s->flush_fn(s, s->change_userdata);
}

void tns_supervisor_changed(struct tns_supervisor *s, const char *fd_name, int fd) {
        if (!s->change_fn || s->restoring)
                return;
        s->change_fn(s, fd_name, fd, s->change_userdata);
        if (s->serving)
                s->serve_changed = true;
}

void tns_supervisor_set_listener_gone_callback(struct tns_supervisor *s, tns_supervisor_listener_gone_fn fn,
                                               void *userdata) {
        s->listener_gone_fn = fn;
        s->listener_gone_userdata = userdata;
}

void tns_supervisor_offsets_changed(struct tns_supervisor *s) {
        supervisor_wait_offsets_changed(s);
}

int supervisor_receive_into(const struct listener *l, struct tns_inflight_recv *slot, struct seccomp_notif *req) {
        struct seccomp_notif *buf = slot ? &slot->req : req;

        if (slot) {
                /* The id first: a kill in the middle of what follows
                 * leaves "nothing received", not the last call with half
                 * its arguments or another listener's name. */
                __atomic_store_n(&slot->req.id, 0, __ATOMIC_RELAXED);
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                __atomic_store_n(&slot->listener_plus1, l->serial + 1, __ATOMIC_RELAXED);
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
        }
        memset(buf, 0, sizeof(*buf));
        /* libseccomp reports every failure as -ECANCELED: errno tells a
         * caller that vanished (ENOENT) or a signal (EINTR) from a real
         * error. */
        if (seccomp_notify_receive(l->fd, buf) < 0)
                return negative_errno();
        if (buf != req)
                memcpy(req, buf, sizeof(*req));
        return 0;
}

static int receive(struct listener *l) {
        struct tns_supervisor *s = l->s;
        /* Into the loop's slot where there is one (supervisor.h). */
        struct tns_inflight_recv *slot = s->recvs ? &s->recvs->slot[ELEMENTSOF(s->recvs->slot) - 1] : NULL;

        for (;;) {
                int r = supervisor_receive_into(l, slot, s->req);

                if (r >= 0)
                        return 1;
                if (r == -EINTR)
                        continue;
                if (r == -ENOENT)
                        return 0;
                return r;
        }
}

/* The answer to id: result's value or -errno, or the kernel runs the call
 * (TNS_REPLY_CONTINUE). */
static void fill_resp(struct seccomp_notif_resp *resp, uint64_t id, int64_t result) {
        memset(resp, 0, sizeof(*resp));
        resp->id = id;
        if (result == TNS_REPLY_CONTINUE)
                resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        else {
                resp->error = result < 0 ? (int32_t) result : 0;
                resp->val = result < 0 ? 0 : result;
        }
}

static void respond(struct listener *l, uint64_t id, int64_t result) {
        struct tns_supervisor *s = l->s;

        fill_resp(s->resp, id, result);
        if (seccomp_notify_respond(l->fd, s->resp) >= 0)
                s->stats.replied++;
        else if (errno == ENOENT)
                s->stats.vanished++; /* killed or interrupted meanwhile: normal */
        else
                tns_log_full(&s->log, LOG_WARNING, negative_errno(), &(struct tns_log_ctx){.pid = s->req->pid},
                             "Failed to reply to a notification, ignoring: %m");
}

static void maybe_idle(struct tns_supervisor *s) {
        if (!s->listeners && s->idle_fn)
                s->idle_fn(s, s->idle_userdata);
}

static void account_latency(struct tns_supervisor *s, int nr, uint64_t ns) {
        const struct tns_syscall_desc *d = tns_syscall_by_nr(nr);

        if (d)
                s->stats.latency[d->id][latency_bucket(ns)]++;
}

/* The in-flight page's last id of l: the newest id received, or just
 * below the oldest call its thread handed to the loop and not yet served.
 * A successor looks for lost calls past it (resend_lost()). */
static void note_newest(struct listener *l, uint64_t id) {
        /* Ids count up from a random start: compared as a difference. */
        if (l->newest_received == 0 || (int64_t) (id - l->newest_received) > 0)
                l->newest_received = id;
}

/* The in-flight page's last id of l, stored as it is: under the lock, or
 * by a receive thread that ends a call without it, which is the only one
 * to write l's entry meanwhile (it has no call handed to the loop, and
 * only it receives for l). The page is set before the threads start and
 * taken away after they stop. */
static void store_last_id(struct listener *l, uint64_t id) {
        struct tns_inflight *p = __atomic_load_n(&l->s->inflight, __ATOMIC_ACQUIRE);

        if (p && l->id_slot >= 0)
                __atomic_store_n(&p->ids[l->id_slot].last_id, id, __ATOMIC_RELEASE);
}

void supervisor_note_received(struct listener *l, uint64_t id) {
        note_newest(l, id);
        store_last_id(l, l->n_deferred ? l->oldest_deferred - 1 : l->newest_received);
}

/* Plain clock reads, the marker call that ends an exec's injection
 * (memory only: /proc/PID/mem, once the vDSO proof has answered, whose
 * end frees event sources) and a program's first arch_prctl (a lookup in
 * the ring of programs injected; else /proc files and /proc/PID/mem,
 * supervisor-first-call.c): no ptrace (a tracee is one thread's), no
 * event source, no change to the member list (resolve_ns() may add an
 * entry: a listener with members sends them all to the loop). The two
 * that every exec makes, served where they are received, cost it no
 * hand-over to the loop's thread and back. */
bool supervisor_off_loop(const struct listener *l, const struct seccomp_notif *req) {
        const struct tns_syscall_desc *d;

        if (req->data.arch != AUDIT_ARCH_X86_64 || l->n_members > 0)
                return false;
        d = tns_syscall_by_nr(req->data.nr);
        if (d && d->id == TNS_SYS_SYSINFO)
                return req->data.args[0] == 0 && req->data.args[1] == TNS_EXEC_MARKER && !l->s->vdso_probe;
        /* touch under a shifted clock needs the loop (a ptrace hold);
         * tar's and cp -p's explicit times run as they are. */
        return d && (d->id == TNS_SYS_ARCH_PRCTL || read_index(d->id) >= 0 || supervisor_file_times_as_is(l, req));
}

/* serve() with the counts, under the lock. */
static int64_t serve_counted(struct listener *l, const struct seccomp_notif *req) {
        struct tns_supervisor *s = l->s;
        struct call c = {.l = l, .req = req};
        int64_t result;
        uint64_t start;

        s->stats.notifications++;
        start = supervisor_now_ns();
        s->serving = true;
        s->serve_changed = false;
        result = serve(l, req, &c);
        s->serving = false;
        /* What the program is told is in the record first. */
        if (s->serve_changed)
                supervisor_flush(s);
        account_latency(s, req->data.nr, supervisor_now_ns() - start);
        return result;
}

/* Serves s->req, received on l. While it is served, a copy is in the
 * in-flight slot (supervisor.h): a successor serves it if we die first. */
static void serve_held(struct listener *l) {
        struct tns_supervisor *s = l->s;
        int64_t result;

        if (s->inflight) {
                s->inflight->listener = l->serial;
                memcpy(&s->inflight->req, s->req, sizeof(s->inflight->req));
                __atomic_store_n(&s->inflight->busy, 1, __ATOMIC_RELEASE);
        }
        result = serve_counted(l, s->req);
        respond(l, s->req->id, result);
        supervisor_exec_replied(s); /* supervisor-exec.c */
        if (s->inflight)
                __atomic_store_n(&s->inflight->busy, 0, __ATOMIC_RELEASE);
}

void supervisor_serve_received(struct listener *l) {
        supervisor_note_received(l, l->s->req->id);
        serve_held(l);
}

bool supervisor_plain_read(const struct seccomp_notif *req) {
        const struct tns_syscall_desc *d = tns_syscall_by_nr(req->data.nr);

        return req->data.arch == AUDIT_ARCH_X86_64 && d && read_index(d->id) >= 0;
}

void supervisor_read_begin(struct listener *l, const struct seccomp_notif *req, struct tns_read *rd) {
        struct tns_supervisor *s = l->s;
        const struct tns_syscall_desc *d = tns_syscall_by_nr(req->data.nr);
        struct call c = {.l = l, .req = req};
        struct tns_emu_env env = {env_clock_gettime, env_adjtimex_read, env_host_tz,
                                  env_read_mem,      env_capabilities,  &c};
        struct tns_emu_state st;
        int64_t koff[TNS_CLASS_MAX];
        uint64_t args[6], base;
        int r;

        note_newest(l, req->id);
        /* Unanswered until the answer is sent: the in-flight slot is the
         * next call's once the lock goes, so the last id stays below this
         * one, and a successor finds it and sends it back through the
         * filter (resend_lost()): a clock read runs again unchanged. */
        store_last_id(l, req->id - 1);
        /* A call from the kernel's vDSO (our image's fallback, answered
         * CONTINUE) reads the caller's memory and the image cache to
         * tell: served in full. (A listener with member entries never
         * gets here: supervisor_off_loop().) */
        rd->split = false;
        if (s->vdso && tns_vdso_host_site(s->vdso, req->data.instruction_pointer, &base)) {
                rd->result = serve_counted(l, req);
                return;
        }
        rd->start = supervisor_now_ns();
        s->stats.notifications++;
        s->stats.per_syscall[d->id]++;
        l->ns->n_calls++;
        /* The clock is read here too, with the namespace's state it is
         * shifted by: read after the lock, it could pair an old rate map
         * with a newer host time, and a namespace frozen meanwhile would
         * read a MONOTONIC past the frozen point, then the point again.
         * Reads only: no syscall (the vDSO), no effects. */
        emu_state(l, req->pid, l->ns, &st, koff);
        for (int k = 0; k < 6; k++)
                args[k] = req->data.args[k];
        r = tns_emulate(d->id, args, &st, &env, &rd->res);
        if (r < 0 || c.gone) {
                if (!c.gone)
                        s->stats.failures++, l->ns->n_failures++;
                rd->result = r < 0 ? r : -ESRCH;
                account_latency(s, req->data.nr, supervisor_now_ns() - rd->start);
                return;
        }
        rd->split = true;
        rd->id = d->id;
}

int64_t supervisor_read_end(struct listener *l, const struct seccomp_notif *req, struct tns_read *rd) {
        struct call c = {.l = l, .req = req};
        int64_t result;
        int r;

        if (!rd->split)
                return rd->result;
        r = write_results(&c, &rd->res);
        result = r < 0 ? r : rd->res.ret;
        __atomic_add_fetch(&l->latency_unlocked[read_index(rd->id)][latency_bucket(supervisor_now_ns() - rd->start)], 1,
                           __ATOMIC_RELAXED);
        __atomic_store_n(&l->counts_dirty, true, __ATOMIC_RELEASE);
        return result;
}

void supervisor_answer_read(struct listener *l, struct seccomp_notif_resp *resp, const struct seccomp_notif *req,
                            int64_t result) {
        int r;

        fill_resp(resp, req->id, result);
        /* EINTR: a signal while it waited for the listener's lock; the
         * answer is still owed. */
        do
                errno = 0;
        while ((r = seccomp_notify_respond(l->fd, resp)) < 0 && errno == EINTR);
        if (r >= 0)
                __atomic_add_fetch(&l->replied_unlocked, 1, __ATOMIC_RELAXED);
        else if (errno == ENOENT)
                __atomic_add_fetch(&l->vanished_unlocked, 1, __ATOMIC_RELAXED); /* as respond() */
        else
                tns_log_full(&l->s->log, LOG_WARNING, negative_errno(), &(struct tns_log_ctx){.pid = req->pid},
                             "Failed to reply to a notification, ignoring: %m");
        __atomic_store_n(&l->counts_dirty, true, __ATOMIC_RELEASE);
        store_last_id(l, req->id);
}

static int on_listener(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        struct listener *l = userdata;
        struct tns_supervisor *s = l->s;
        int r;

        if (!(revents & EPOLLIN) && (revents & (EPOLLHUP | EPOLLERR))) {
                /* No task carries the filter any more. */
                listener_free(l);
                maybe_idle(s);
                return 0;
        }
        r = receive(l);
        if (r <= 0) {
                if (r < 0)
                        tns_log_errno(&s->log, LOG_ERR, r, "Failed to receive a seccomp notification, ignoring: %m");
                return 0;
        }
        supervisor_serve_received(l);
        return 0;
}

void tns_supervisor_set_inflight(struct tns_supervisor *s, struct tns_inflight *slot) {
        struct tns_vdso_direct d;

        __atomic_store_n(&s->inflight, slot, __ATOMIC_RELEASE); /* store_last_id() */
        /* A predecessor's answer to the proof we are running (its sources
         * go before its fds); or ours, proven already, for a successor. */
        if (supervisor_proof_cached(s, &d)) {
                vdso_probe_sources_free(s);
                tns_vdso_direct_probe_abort(TAKE_PTR(s->vdso_probe));
                s->vdso->direct = d;
                tns_log(&s->log, LOG_DEBUG, "vDSO proof: the previous instance's answer, same kernel and build");
                vdso_proven(s);
        } else
                supervisor_proof_save(s);
}

struct listener *supervisor_listener_by_serial(struct tns_supervisor *s, uint64_t serial) {
        for (struct listener *l = s->listeners; l; l = l->next)
                if (l->serial == serial)
                        return l;
        return NULL;
}

void tns_supervisor_set_inflight_recvs(struct tns_supervisor *s, struct tns_inflight_recvs *recvs) {
        s->recvs = recvs;
}

/* The listener's entry in the in-flight page: its own from before a
 * restart, else a free one. */
static void id_slot_take(struct listener *l) {
        struct tns_inflight *p = l->s->inflight;
        int free_slot = -1;

        l->id_slot = -1;
        if (!p)
                return;
        for (int i = 0; i < TNS_INFLIGHT_LISTENERS; i++) {
                if (p->ids[i].serial_plus1 == l->serial + 1) {
                        l->id_slot = i;
                        return;
                }
                if (free_slot < 0 && p->ids[i].serial_plus1 == 0)
                        free_slot = i;
        }
        if (free_slot >= 0) {
                p->ids[free_slot] = (struct tns_inflight_ids){.serial_plus1 = l->serial + 1};
                l->id_slot = free_slot;
        }
}

static void id_slot_release(struct listener *l) {
        if (l->s->inflight && l->id_slot >= 0)
                l->s->inflight->ids[l->id_slot] = (struct tns_inflight_ids){};
        l->id_slot = -1;
}

/* How many ids past the last one found a lost one is looked for: ids of
 * calls whose callers died meanwhile leave gaps. */
#define LOST_ID_SPAN 16

/* A waiter kicked: its thread and its process. */
struct kicked {
        pid_t tid, tgid;
};

/* Threads of our namespaces' processes that wait for a notification's
 * answer, seized and interrupted, into *ret (to free): the interrupt makes
 * a thread whose call we answer -ERESTARTNOINTR run it again, as a signal
 * would; one whose call was not received yet leaves its wait, and runs it
 * again too. Either way the call comes back through the filter. One that
 * cannot be seized (a debugger's tracee) is not kicked. */

static size_t kick_waiters(struct tns_supervisor *s, struct kicked **ret) {
        _cleanup_free_ struct kicked *list = NULL;
        size_t n = 0, size = 0;

        /* Every process of every namespace: a waiter missed here is
         * answered -ERESTARTNOINTR with nothing to make the kernel run
         * its call again (errno 513 for a clock read). */
        for (struct tns_ns *ns = s->namespaces; ns; ns = ns->next) {
                _cleanup_free_ pid_t *pids = NULL;
                int k = 1024, max = 0;

                while (k > max) {
                        pid_t *more = reallocarray(pids, (size_t) k + 64, sizeof(*pids));

                        if (!more)
                                break;
                        pids = more;
                        max = k + 64;
                        k = tns_supervisor_processes(s, ns, pids, (size_t) max, true);
                }
                for (int i = 0; pids && i < k && i < max; i++) {
                        _cleanup_(closedirp) DIR *d = NULL;
                        char path[64];
                        struct dirent *de;

                        snprintf(path, sizeof(path), "/proc/%d/task", pids[i]);
                        d = opendir(path);
                        while (d && (de = readdir(d))) {
                                char wchan[64] = "";
                                pid_t tid = (pid_t) atoi(de->d_name);
                                FILE *f;

                                if (tid <= 0)
                                        continue;
                                snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pids[i], tid);
                                f = fopen(path, "re");
                                if (f) {
                                        if (!fgets(wchan, sizeof(wchan), f))
                                                wchan[0] = '\0';
                                        fclose(f);
                                }
                                if (!strstr(wchan, "seccomp_do_user_notification"))
                                        continue;
                                if (n == size) {
                                        struct kicked *more = reallocarray(list, size * 2 + 64, sizeof(*list));

                                        if (!more)
                                                break;
                                        list = more;
                                        size = size * 2 + 64;
                                }
                                if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
                                        continue;
                                if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
                                        /* Killed since: not in a stop, so
                                         * not detachable, and ours to reap. */
                                        supervisor_trace_orphan(s, tid, pids[i]);
                                        continue;
                                }
                                list[n++] = (struct kicked){tid, pids[i]};
                        }
                }
        }
        *ret = TAKE_PTR(list);
        return n;
}

/* Each kicked thread at its stop, let go (a signal it stopped for is
 * delivered). Bounded, a second for all of them: every clock call waits
 * meanwhile. A thread that has not stopped by then (or cannot be detached)
 * cannot be let go yet (PTRACE_DETACH needs a stop): it is waited for as
 * a released trace (supervisor-exec.c), detached at its stop or reaped,
 * never left traced. */
static void release_waiters(struct tns_supervisor *s, const struct kicked *k, size_t n) {
        unsigned budget = 1000; /* ms */

        for (size_t i = 0; i < n; i++)
                for (;;) {
                        int status, sig = 0;
                        pid_t r = waitpid(k[i].tid, &status, __WALL | WNOHANG);

                        if (r < 0)
                                break;
                        if (r == 0 && budget > 0) {
                                (void) usleep(1000);
                                budget--;
                                continue;
                        }
                        if (r > 0 && tns_stop_decode(status, &sig) == TNS_STOP_EXITED)
                                break;
                        if (r == 0 || ptrace(PTRACE_DETACH, k[i].tid, 0, sig) < 0)
                                supervisor_trace_orphan(s, k[i].tid, k[i].tgid);
                        break;
                }
}

static unsigned resend_lost(struct tns_supervisor *s) {
        struct tns_inflight *p = s->inflight;
        struct {
                struct listener *l;
                uint64_t id;
        } lost[1024];
        unsigned n = 0;
        _cleanup_free_ struct kicked *kicked = NULL;
        size_t n_kicked;

        for (struct listener *l = s->listeners; l; l = l->next) {
                uint64_t last;
                unsigned misses = 0;

                if (l->id_slot < 0 || (last = p->ids[l->id_slot].last_id) == 0)
                        continue;
                /* Up to LOST_ID_SPAN ids past the last one found: calls a
                 * receive thread handed to the loop are a run of ids
                 * (supervisor-threads.c), longer than the span when the
                 * loop was busy. */
                for (uint64_t id = last + 1; misses < LOST_ID_SPAN && n < ELEMENTSOF(lost); id++)
                        if (supervisor_id_valid(l->fd, id) >= 0) {
                                lost[n].l = l, lost[n++].id = id;
                                misses = 0;
                        } else
                                misses++;
        }
        if (n == 0)
                return 0;
        n_kicked = kick_waiters(s, &kicked);
        for (unsigned i = 0; i < n; i++)
                respond(lost[i].l, lost[i].id, -ERESTARTNOINTR);
        release_waiters(s, kicked, n_kicked);
        return n;
}

/* Serves req, a predecessor's copy of a call received on the listener
 * of serial `serial`, if its caller still waits for it: 1 if it was
 * served. Not as a call received (no new last id): a call with a lower id
 * may be lost, which resend_lost() looks for from the last id on. */
static int serve_copy(struct tns_supervisor *s, uint64_t serial, const struct seccomp_notif *req) {
        struct listener *l = supervisor_listener_by_serial(s, serial);

        /* Answered after all, or its caller gone: nothing to do. */
        if (!l || req->id == 0 || supervisor_id_valid(l->fd, req->id) < 0)
                return 0;
        memset(s->req, 0, sizeof(*s->req));
        memcpy(s->req, req, sizeof(*req));
        serve_held(l);
        return 1;
}

int tns_supervisor_resume_inflight(struct tns_supervisor *s) {
        struct tns_inflight *slot = s->inflight;
        struct tns_inflight_recvs *rv = s->recvs;
        int served = 0;

        if (!slot)
                return 0;
        /* Entries of listeners that are gone. */
        for (int i = 0; i < TNS_INFLIGHT_LISTENERS; i++) {
                bool used = false;

                for (struct listener *l = s->listeners; l && !used; l = l->next)
                        used = l->id_slot == i;
                if (!used)
                        slot->ids[i] = (struct tns_inflight_ids){};
        }
        if (__atomic_load_n(&slot->busy, __ATOMIC_ACQUIRE)) {
                struct seccomp_notif req = slot->req;

                served += serve_copy(s, slot->listener, &req);
        }
        __atomic_store_n(&slot->busy, 0, __ATOMIC_RELEASE);
        /* Then what the receive threads had taken (the same call as the
         * slot's is answered by now). No thread of ours has a slot yet:
         * they start with the loop. */
        for (size_t i = 0; rv && i < ELEMENTSOF(rv->slot); i++) {
                uint64_t serial_plus1 = __atomic_load_n(&rv->slot[i].listener_plus1, __ATOMIC_ACQUIRE);

                if (serial_plus1 != 0) {
                        struct seccomp_notif req = rv->slot[i].req;

                        served += serve_copy(s, serial_plus1 - 1, &req);
                }
                rv->slot[i] = (struct tns_inflight_recv){};
        }
        if (resend_lost(s) > 0)
                tns_log(&s->log, LOG_INFO, "Sent calls lost in a receive back through the filter");
        supervisor_exec_adopt(s);
        return served;
}

/* Without a usable vDSO here, namespaces get no image and members use the
 * emulated syscalls: slower, never wrong. */
static void vdso_proven(struct tns_supervisor *s) {
        const struct tns_vdso_host *h = s->vdso;

        supervisor_proof_save(s); /* supervisor-proof-cache.c */

        /* Which path every image reads its clocks through (issue 19);
         * `timensctl stats` shows it too. */
        tns_log(&s->log, LOG_DEBUG, "vDSO reads: %s%s%s", tns_vdso_direct_path(&h->direct),
                h->direct.why[0] ? ", " : "", h->direct.why);
        snprintf(s->stats.vdso_reads, sizeof(s->stats.vdso_reads), "%s", tns_vdso_direct_path(&h->direct));
}

static void vdso_probe_sources_free(struct tns_supervisor *s) {
        for (size_t i = 0; i < ELEMENTSOF(s->vdso_probe_src); i++)
                s->vdso_probe_src[i] = sd_event_source_disable_unref(s->vdso_probe_src[i]);
        s->vdso_probe_timer = sd_event_source_disable_unref(s->vdso_probe_timer);
}

/* The proof's answer: at once when it has answered, else waited for (an
 * exec's parameter page needs it), at most until the proof's deadline. */
const struct tns_vdso_host *supervisor_vdso(struct tns_supervisor *s) {
        if (s->vdso_probe) {
                vdso_probe_sources_free(s);
                tns_vdso_direct_probe_finish(TAKE_PTR(s->vdso_probe), &s->vdso->direct);
                vdso_proven(s);
        }
        return s->vdso;
}

void tns_supervisor_settle_vdso(struct tns_supervisor *s) {
        (void) supervisor_vdso(s);
}

/* One part of the proof answered (or its child died): once every part
 * has, the answer is read without a wait. */
static int on_vdso_proof(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        struct tns_supervisor *s = userdata;
        bool waiting = false;

        for (size_t i = 0; i < ELEMENTSOF(s->vdso_probe_src); i++) {
                if (s->vdso_probe_src[i] == src)
                        (void) sd_event_source_set_enabled(src, SD_EVENT_OFF);
                else if (s->vdso_probe_src[i])
                        waiting = waiting || sd_event_source_get_enabled(s->vdso_probe_src[i], NULL) > 0;
        }
        if (!waiting)
                (void) supervisor_vdso(s);
        return 0;
}

/* A child that never answers: killed at the deadline, the call-through. */
static int on_vdso_proof_timeout(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) supervisor_vdso(userdata);
        return 0;
}

/* Our image for this host. The proof of its direct path takes tens of
 * milliseconds, which every restart would wait for before its first
 * answer: its children run while timensd serves. Whatever fills a
 * parameter page (an exec's marker call, the blob, an attach) takes
 * supervisor_vdso() and so waits for the answer first: no image is ever
 * set up from a proof not finished. */
static void setup_vdso(struct tns_supervisor *s) {
        _cleanup_free_ struct tns_vdso_host *h = calloc(1, sizeof(*h));
        int fds[2], r;
        unsigned n;

        if (!h)
                return;
        r = tns_vdso_host_init_unproven(h);
        if (r < 0) {
                tns_log_errno(&s->log, LOG_DEBUG, r, "No vDSO injection on this host, syscall path only: %m");
                return;
        }
        s->vdso = TAKE_PTR(h);
        s->image = &s->vdso->image;
        supervisor_proof_key(s); /* before the proof: the image as prepared */
        (void) tns_vdso_direct_probe_start(s->vdso, &s->vdso->direct, &s->vdso_probe);
        if (!s->vdso_probe) {
                vdso_proven(s);
                return;
        }
        n = tns_vdso_direct_probe_fds(s->vdso_probe, fds);
        r = sd_event_add_time_relative(s->event, &s->vdso_probe_timer, CLOCK_MONOTONIC,
                                       TNS_VDSO_PROOF_TIMEOUT_MS * UINT64_C(1000), 0, on_vdso_proof_timeout, s);
        for (unsigned i = 0; r >= 0 && i < n; i++)
                r = sd_event_add_io(s->event, &s->vdso_probe_src[i], fds[i], EPOLLIN, on_vdso_proof, s);
        if (r < 0)
                (void) supervisor_vdso(s); /* no sources: now, then */
}

const struct tns_page_store *supervisor_pages(struct tns_supervisor *s) {
        int r;

        if (tns_page_store_usable(&s->pages))
                return &s->pages;
        if (s->pages_failed)
                return NULL;
        r = tns_page_store_new(&s->pages);
        if (r < 0) {
                s->pages_failed = true;
                s->pages = TNS_PAGE_STORE_NULL;
                /* Root without a store would hand members memfds they can
                 * reopen for writing: say so. An unprivileged supervisor
                 * serves its own user only, where that crosses nothing. */
                tns_log_errno(&s->log, geteuid() == 0 ? LOG_WARNING : LOG_DEBUG, r,
                              "Failed to make the private tmpfs for namespace pages, using memfds (a member that "
                              "takes their fd can reopen it for writing): %m");
                return NULL;
        }
        tns_supervisor_changed(s, "pages.rw", s->pages.rw_dir);
        tns_supervisor_changed(s, "pages.ro", s->pages.ro_dir);
        return &s->pages;
}

int tns_supervisor_new(sd_event *event, const struct tns_logger *log, struct tns_supervisor **ret) {
        _cleanup_free_ struct tns_supervisor *s = NULL;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        r = seccomp_notify_alloc(&s->req, &s->resp);
        if (r < 0)
                return r;
        s->event = sd_event_ref(event);
        s->wait_memfd = -EBADF;
        s->closer_fd = -EBADF;
        /* Not where a predecessor's threads may still point (their slots
         * are unknown to us): a restarted clock_nanosleep(TIMER_ABSTIME)
         * reads its slot again. */
        if (getrandom(&s->wait_slot_base, sizeof(s->wait_slot_base), GRND_NONBLOCK) != sizeof(s->wait_slot_base))
                s->wait_slot_base = (unsigned) getpid() * 2654435761u;
        s->pages = TNS_PAGE_STORE_NULL;
        if (log)
                s->log = *log;
        /* After the logger: it says when there are no threads. */
        r = supervisor_threads_init(s);
        if (r < 0) {
                sd_event_unref(s->event);
                seccomp_notify_free(s->req, s->resp);
                return r;
        }
        supervisor_kns_init(s);
        supervisor_image_cache_init(s);
        setup_vdso(s);
        r = tns_anyone_new(&s->anyone);
        if (r < 0 && r != -EPERM)
                tns_log_errno(&s->log, LOG_DEBUG, r,
                              "No io_uring for lookups as anyone, every exec is seized (a PATH lookup's "
                              "misses too): %m");
        *ret = TAKE_PTR(s);
        return 0;
}

/* The one SIGCHLD source of the engine: the ptrace stops of exec traces
 * (supervisor-exec.c) and wait traces (supervisor-wait.c). Execs look
 * first: a thread that exec'd took its group's id, which a wait trace of
 * the old leader must then leave to the exec trace. */
static int on_sigchld(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata) {
        struct tns_supervisor *s = userdata;

        supervisor_exec_on_sigchld(s);
        supervisor_wait_on_sigchld(s);
        return 0;
}

int supervisor_ensure_sigchld(struct tns_supervisor *s) {
        int r;

        if (s->sigchld)
                return 0;
        r = sd_event_add_signal(s->event, &s->sigchld, SIGCHLD, on_sigchld, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(s->sigchld, "timens-sigchld");
        return 0;
}

int tns_supervisor_close_untrusted(struct tns_supervisor *s, int fd) {
        int r;

        if (fd < 0)
                return 0;
        if (s->closer_fd < 0) {
                r = tns_fd_closer_start(&s->closer_fd);
                if (r < 0)
                        s->closer_fd = -EBADF;
        }
        r = tns_fd_closer_close(s->closer_fd, fd);
        /* Its closer is stuck (or none could start): kept open rather
         * than this thread stuck in its close. */
        if (r < 0 && !s->closer_stuck_logged) {
                s->closer_stuck_logged = true;
                tns_log_full(&s->log, LOG_WARNING, r, NULL,
                             "An fd a member or client gave cannot be closed without waiting (a FUSE server that "
                             "does not answer?): keeping it and those that follow open");
        }
        return r;
}

struct tns_supervisor *tns_supervisor_free(struct tns_supervisor *s) {
        if (!s)
                return NULL;
        s->exiting = true;
        supervisor_threads_done(s); /* first: they serve calls */
        supervisor_wait_done(s);
        supervisor_exec_done(s);
        s->sigchld = sd_event_source_disable_unref(s->sigchld);
        supervisor_attach_done(s);
        supervisor_kns_done(s);
        supervisor_image_cache_done(s);
        s->anyone = tns_anyone_free(s->anyone);
        while (s->listeners)
                listener_free(s->listeners);
        supervisor_procfs_server_done(s); /* after the connections: they were its */
        s->closer_fd = safe_close(s->closer_fd); /* its thread ends once it closed what it has */
        /* Namespaces still referenced only by the supervisor's list. */
        while (s->namespaces) {
                struct tns_ns *ns = s->namespaces;

                s->namespaces = ns->next;
                ns->pprev = NULL;
                if (s->namespaces)
                        s->namespaces->pprev = &s->namespaces;
                tns_ns_unref(ns);
        }
        /* After the namespaces, whose files it holds. */
        tns_page_store_done(&s->pages);
        seccomp_notify_free(s->req, s->resp);
        vdso_probe_sources_free(s);
        tns_vdso_direct_probe_abort(TAKE_PTR(s->vdso_probe));
        if (s->vdso) {
                tns_vdso_host_done(s->vdso);
                free(s->vdso);
        }
        sd_event_unref(s->event);
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return NULL;
}

int tns_supervisor_create_ns_flags(struct tns_supervisor *s, const char *name, const int64_t offsets[TNS_CLASS_MAX],
                                   unsigned flags, struct tns_ns **ret) {
        struct tns_ns *ns;
        int r;

        if (tns_supervisor_count_namespaces(s) >= TNS_MAX_NAMESPACES)
                return -ENOSPC;
        r = tns_ns_new(++s->next_ns_id, name, NULL, offsets, (flags & TNS_NS_NO_VDSO) ? NULL : s->image,
                       supervisor_pages(s), &ns);
        if (r < 0)
                return r;
        /* The supervisor keeps the creation reference of a root: it lives
         * until tns_supervisor_free(). */
        supervisor_link_ns(s, ns);
        *ret = ns;
        return 0;
}

int tns_supervisor_create_ns(struct tns_supervisor *s, const char *name, const int64_t offsets[TNS_CLASS_MAX],
                             struct tns_ns **ret) {
        return tns_supervisor_create_ns_flags(s, name, offsets, 0, ret);
}

int supervisor_listener_new(struct tns_supervisor *s, struct tns_ns *ns, int fd, pid_t root_pid, uint64_t serial,
                            struct listener **ret) {
        _cleanup_close_ int owned = fd;
        _cleanup_free_ struct listener *l = NULL;
        int r;

        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        r = tns_listener_set_sync_wakeup(fd);
        if (r < 0)
                return r;
        s->stats.sync_wakeup = r > 0;
        r = sd_event_add_io(s->event, &l->src, fd, EPOLLIN, on_listener, l);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(l->src, "timens-listener");
        l->s = s;
        l->serial = serial;
        id_slot_take(l);
        l->fd = TAKE_FD(owned);
        l->root_pid = root_pid;
        /* A container may come in a kernel time namespace with offsets of
         * its own (linux.timeOffsets): the kernel's vDSO adds them, so our
         * syscalls must too. timensctl run's has ours (a fresh one inherits
         * its parent's): nothing to add. */
        l->kernel_nested = root_pid > 0 && supervisor_kns_differs(s, root_pid);
        if (root_pid > 0)
                supervisor_kns_pair_root(s, ns, root_pid);
        supervisor_procfs_listener_mnt(l); /* hook: supervisor-procfs.c */
        l->ns = tns_ns_ref(ns);
        l->next = s->listeners;
        s->listeners = l;
        s->stats.listeners++;
        (void) supervisor_thread_start(l); /* once the loop runs */
        *ret = TAKE_PTR(l);
        return 0;
}

int tns_supervisor_add_listener(struct tns_supervisor *s, struct tns_ns *ns, int fd, pid_t root_pid) {
        struct listener *l;
        char name[32];
        int r;

        r = supervisor_listener_new(s, ns, fd, root_pid, s->next_serial++, &l);
        if (r < 0)
                return r;
        snprintf(name, sizeof(name), "l.%" PRIu64, l->serial);
        tns_supervisor_changed(s, name, l->fd);
        /* Before any call is served: the root may be held at its exec. */
        supervisor_procfs_listener_added(l); /* hook: supervisor-procfs.c */
        return 0;
}

void tns_supervisor_set_idle_callback(struct tns_supervisor *s, tns_supervisor_idle_fn fn, void *userdata) {
        s->idle_fn = fn;
        s->idle_userdata = userdata;
}

const struct tns_supervisor_stats *tns_supervisor_get_stats(struct tns_supervisor *s) {
        s->stats.namespaces = tns_supervisor_count_namespaces(s);
        for (struct listener *l = s->listeners; l; l = l->next)
                fold_unlocked_counts(l);
        return &s->stats;
}
