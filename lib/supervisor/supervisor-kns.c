/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Our namespaces and the kernel's own time namespaces (lib/kernel/kns.h).
 *
 * Each of our namespaces is paired with a kernel time namespace: the
 * command of `timensctl run` (as root) starts in a fresh one, and every
 * unshare(CLONE_NEWTIME) inside is run by the kernel. So /proc/PID/ns/time,
 * time_for_children, lsns and setns are the kernel's, with its rules and
 * errnos, and /proc/PID/timens_offsets writes reach the kernel, which
 * enforces when they may be made.
 *
 * What a process reads is the sum of two parts: our namespace's offsets
 * (the offsets page, the RFC's clock_settime inside, `timensctl set`) and
 * the kernel offsets of the kernel time namespace it is in. The kernel's
 * vDSO, which our image calls, adds the second part itself; where we
 * answer for the kernel (emulated syscalls, /proc/uptime, sysinfo, a timer
 * armed on the caller's behalf) we add it. The kernel's offsets of a
 * namespace cannot change once a process is in it, so they are cached by
 * its inode, with an fd that holds the namespace (an inode number is
 * reused only after its namespace is gone).
 *
 * unshare and setns with CLONE_NEWTIME are trapped only to follow them:
 * the kernel runs them (our reply is CONTINUE, so every decision is the
 * kernel's: EPERM, EUSERS, EINVAL), and at the caller's stop on its return
 * (ptrace, as for a remap) we read the result and place the caller in the
 * namespace paired with its new kernel one. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

#include "kns.h"
#include "log.h"
#include "fd-check.h"
#include "supervisor-internal.h"
#include "time-util.h"
#include "util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

struct tns_ns *supervisor_ns_by_kns(struct tns_supervisor *s, uint64_t ino) {
        if (ino == 0)
                return NULL;
        for (struct tns_ns *ns = s->namespaces; ns; ns = ns->next)
                if (ns->kns_ino == ino)
                        return ns;
        return NULL;
}

static struct tns_ns *root_of(struct tns_ns *ns) {
        while (ns->parent)
                ns = ns->parent;
        return ns;
}

static unsigned pinned_in_tree(struct tns_supervisor *s, struct tns_ns *ns) {
        struct tns_ns *root = root_of(ns);
        unsigned n = 0;

        for (struct tns_ns *k = s->namespaces; k; k = k->next)
                if (k->kns_pinned && root_of(k) == root)
                        n++;
        return n;
}

void supervisor_kns_pair(struct tns_supervisor *s, struct tns_ns *ns, pid_t tid, bool for_children) {
        struct stat st;
        int fd;

        if (ns->kns_fd >= 0)
                return;
        fd = tns_kns_open(tid, for_children);
        if (fd < 0)
                return;
        /* One of ours per kernel namespace: a second would make setns
         * into it ambiguous. */
        if (fstat(fd, &st) < 0 || supervisor_ns_by_kns(s, (uint64_t) st.st_ino)) {
                close(fd);
                return;
        }
        ns->kns_fd = fd;
        ns->kns_ino = (uint64_t) st.st_ino;
        /* A child namespace lives while its kernel pair may be entered
         * again (setns with an fd kept, nsenter), not only while a
         * process of ours names it: until its tree's listener goes.
         * Bounded per tree, so that one container's unshares in a loop
         * cannot keep the namespaces all others need: past the bound,
         * the pair goes with its members. */
        if (ns->parent && pinned_in_tree(s, ns) < TNS_MAX_PINNED_PER_TREE) {
                tns_ns_ref(ns);
                ns->kns_pinned = true;
        }
}

static int kns_lookup(struct tns_supervisor *s, pid_t tid, int64_t ret[TNS_CLASS_MAX], uint64_t *ret_ino);

/* Whether a process of ours is in ns: a listener's, or a member entry's
 * (a process that moved there). */
static bool ns_in_use(struct tns_supervisor *s, struct tns_ns *ns) {
        for (struct listener *l = s->listeners; l; l = l->next) {
                if (l->ns == ns)
                        return true;
                for (struct member *m = l->members; m; m = m->next)
                        if (m->ns == ns)
                                return true;
        }
        return false;
}

void supervisor_kns_pair_root(struct tns_supervisor *s, struct tns_ns *ns, pid_t root_pid) {
        int64_t off[TNS_CLASS_MAX];
        uint64_t mine, children, own;

        /* Where its programs run (its children's, which its exec enters),
         * unless that is ours: the host's namespace names no one. */
        if (tns_kns_ino(getpid(), false, &mine) < 0 || tns_kns_ino(root_pid, true, &children) < 0 || mine == children)
                return;
        /* A namespace that outlived its processes (timensctl create, a
         * container stopped and started again): its new first process is in
         * a kernel namespace of its own (the runtime shim's create made it),
         * and the old pair has none of ours left, so the pair follows. */
        if (ns->kns_fd >= 0 && ns->kns_ino != children && !ns->kns_pinned && !ns_in_use(s, ns) &&
            !supervisor_ns_by_kns(s, children)) {
                ns->kns_fd = safe_close(ns->kns_fd);
                ns->kns_ino = 0;
        }
        supervisor_kns_pair(s, ns, root_pid, true);
        /* Already in it (a container's init): its offsets are final, and
         * show can tell them before any call. */
        if (tns_kns_ino(root_pid, false, &own) >= 0 && own == children)
                (void) kns_lookup(s, root_pid, off, NULL);
}

void supervisor_kns_repair(struct tns_supervisor *s, pid_t tgid, struct tns_ns *ns) {
        uint64_t own, children;

        if (ns->kns_fd >= 0 || tns_kns_ino(tgid, false, &own) < 0 || tns_kns_ino(tgid, true, &children) < 0)
                return;
        /* Between an unshare and its exec, the RFC moved it into ns, whose
         * pair is its children's namespace; otherwise its own. */
        supervisor_kns_pair(s, ns, tgid, own != children);
}

void supervisor_kns_unpin_tree(struct tns_supervisor *s, struct tns_ns *root) {
        bool again = true;

        /* An unref may free a namespace, and with it unlink it: look again
         * from the start after each. */
        while (again) {
                again = false;
                for (struct tns_ns *ns = s->namespaces; ns; ns = ns->next)
                        if (ns->kns_pinned && root_of(ns) == root) {
                                ns->kns_pinned = false;
                                tns_ns_unref(ns);
                                again = true;
                                break;
                        }
        }
}

/* The cache: one entry per kernel namespace seen, the oldest evicted. */
static struct tns_kns_cache *cache_find(struct tns_supervisor *s, uint64_t ino) {
        for (unsigned i = 0; i < TNS_KNS_CACHE; i++)
                if (s->kns[i].fd >= 0 && s->kns[i].ino == ino)
                        return &s->kns[i];
        return NULL;
}

/* The kernel offsets of tid's own kernel time namespace relative to the
 * supervisor's, from the cache or read (and cached: they cannot change
 * once a process is in it). */
static int kns_lookup(struct tns_supervisor *s, pid_t tid, int64_t ret[TNS_CLASS_MAX], uint64_t *ret_ino) {
        struct tns_kns_cache *e;
        int64_t off[TNS_CLASS_MAX] = {};
        struct stat st;
        uint64_t ino;
        int fd, r;

        r = tns_kns_ino(tid, false, &ino);
        if (r < 0)
                return r;
        if (ret_ino)
                *ret_ino = ino;
        e = cache_find(s, ino);
        if (!e) {
                fd = tns_kns_open(tid, false);
                if (fd < 0)
                        return fd;
                if (fstat(fd, &st) < 0 || (uint64_t) st.st_ino != ino) {
                        close(fd);
                        return -EAGAIN; /* it moved meanwhile: 0 this time */
                }
                r = tns_kns_offsets(tid, fd, off);
                if (r < 0) {
                        close(fd);
                        return tns_log_full(&s->log, LOG_DEBUG, r, &(struct tns_log_ctx){.pid = tid},
                                            "Failed to read the offsets of kernel time namespace %" PRIu64 ": %m", ino);
                }
                e = &s->kns[s->kns_next++ % TNS_KNS_CACHE];
                safe_close(e->fd);
                *e = (struct tns_kns_cache){.ino = ino, .fd = fd};
                /* Both are within ±(KTIME_MAX/2) (the kernel's bound on
                 * timens_offsets): the difference cannot overflow. */
                for (int c = 0; c < TNS_CLASS_MAX; c++)
                        e->offset[c] = off[c] - s->kns_self[c];
        }
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                ret[c] = e->offset[c];
        return 0;
}

int supervisor_kernel_offsets(struct listener *l, pid_t tid, int64_t ret[TNS_CLASS_MAX], uint64_t *ret_ino) {
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                ret[c] = 0;
        if (ret_ino)
                *ret_ino = 0;
        /* Until a process of this listener made or entered a kernel time
         * namespace, all are in the one it started in, whose offsets are
         * 0 (timensctl run) or the host's. */
        if (!l->kernel_nested)
                return 0;
        return kns_lookup(l->s, tid, ret, ret_ino);
}

int64_t supervisor_offset(struct listener *l, pid_t tid, struct tns_ns *ns, enum tns_clock_class c) {
        int64_t k[TNS_CLASS_MAX], v;

        (void) supervisor_kernel_offsets(l, tid, k, NULL);
        if (tns_ns_add(tns_ns_offset(ns, c), k[c], &v) < 0)
                return tns_ns_offset(ns, c);
        return v;
}

bool tns_supervisor_ns_kernel(struct tns_supervisor *s, const struct tns_ns *ns, uint64_t *ret_ino,
                              int64_t ret_offset[TNS_CLASS_MAX]) {
        const struct tns_kns_cache *e = ns->kns_ino ? cache_find(s, ns->kns_ino) : NULL;

        *ret_ino = ns->kns_ino;
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                ret_offset[c] = e ? e->offset[c] : 0;
        return e != NULL;
}

void supervisor_kns_init(struct tns_supervisor *s) {
        int r;

        for (unsigned i = 0; i < TNS_KNS_CACHE; i++)
                s->kns[i].fd = -EBADF;
        /* No time namespaces (old kernel): nothing is added anywhere. */
        r = tns_kns_self_offsets(s->kns_self);
        if (r < 0 && r != -ENOENT && r != -ESRCH)
                tns_log_full(&s->log, LOG_WARNING, r, NULL,
                             "Failed to read the offsets of our own kernel time namespace, taking 0: %m");
        if (r < 0)
                for (int c = 0; c < TNS_CLASS_MAX; c++)
                        s->kns_self[c] = 0;
}

bool supervisor_kns_differs(struct tns_supervisor *s, pid_t tid) {
        int64_t off[TNS_CLASS_MAX] = {};

        if (tns_kns_children_offsets(tid, off) < 0)
                return false;
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (off[c] != s->kns_self[c])
                        return true;
        return false;
}

void supervisor_kns_done(struct tns_supervisor *s) {
        for (unsigned i = 0; i < TNS_KNS_CACHE; i++)
                s->kns[i].fd = safe_close(s->kns[i].fd);
}

/* The namespace an fd of the caller names, if it is one: its inode (nsfs)
 * and its type (NS_GET_NSTYPE); 0 and 0 for anything else (a pidfd, a bad
 * fd: the kernel decides). */
static uint64_t target_ns(struct listener *l, const struct seccomp_notif *req, int *ret_type) {
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, req->pid, PIDFD_THREAD);
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int type, k;

        *ret_type = 0;
        if (pidfd < 0)
                pidfd = (int) syscall(SYS_pidfd_open, req->pid, 0);
        if (pidfd < 0 || supervisor_id_valid(l->fd, req->id) < 0)
                return 0;
        /* What it is, before it is ours: an fstat or a close of any other
         * file may wait for ever on a FUSE server the member runs
         * (helper-43). Swapped in between (the post-check), it is closed
         * where that wait holds no one. */
        k = tns_fd_kind(req->pid, (int) req->data.args[0]);
        if (k != TNS_FD_NS && k != TNS_FD_PIDFD)
                return 0;
        fd = (int) syscall(SYS_pidfd_getfd, pidfd, (int) req->data.args[0], 0);
        if (fd < 0)
                return 0;
        k = tns_fd_kind(0, fd);
        if (k != TNS_FD_NS && k != TNS_FD_PIDFD) {
                (void) tns_supervisor_close_untrusted(l->s, TAKE_FD(fd));
                return 0;
        }
        if (fstat(fd, &st) < 0)
                return 0;
        type = ioctl(fd, NS_GET_NSTYPE);
        if (type <= 0)
                return 0;
        *ret_type = type;
        return (uint64_t) st.st_ino;
}

int64_t supervisor_setns(struct listener *l, const struct seccomp_notif *req, struct tns_ns *cur) {
        struct tns_ns *target;
        uint64_t ino;
        int type, r;

        /* Only a time namespace's change concerns us (nstype 0 names any
         * type; a pidfd with other flags too). */
        if (req->data.args[1] != 0 && !(req->data.args[1] & CLONE_NEWTIME))
                return TNS_REPLY_CONTINUE;
        ino = target_ns(l, req, &type);
        /* setns(fd, 0) into another type of namespace (ip netns, nsenter
         * of a mount namespace): nothing of ours changes. */
        if (type != 0 && type != CLONE_NEWTIME)
                return TNS_REPLY_CONTINUE;
        l->kernel_nested = true;
        /* The namespace it leaves is known by the one it is in now. */
        supervisor_kns_pair(l->s, cur, (pid_t) req->pid, false);
        target = supervisor_ns_by_kns(l->s, ino);
        r = supervisor_nsop_begin(l, req, target ?: cur, TNS_NSOP_SETNS);
        /* -ENOENT: the caller is gone already. */
        if (r < 0 && r != -ENOENT)
                tns_log_full(&l->s->log, LOG_WARNING, r, &(struct tns_log_ctx){.pid = req->pid, .syscall = "setns"},
                             "Failed to follow the caller into its new time namespace, ignoring: %m");
        return TNS_REPLY_CONTINUE;
}

bool supervisor_nsop_done(struct tns_supervisor *s, enum tns_nsop op, uint64_t serial, pid_t tid, pid_t tgid,
                          struct tns_ns *ns) {
        struct user_regs_struct regs;
        struct listener *l = supervisor_listener_by_serial(s, serial);
        struct tns_ns *now;
        uint64_t ino;
        int64_t rax;

        if (!l || ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
                return false;
        rax = (int64_t) regs.rax;
        if (op == TNS_NSOP_UNSHARE) {
                if (rax == 0) {
                        /* ns was made for it: the kernel's new namespace,
                         * its children's, is ns's pair. */
                        supervisor_kns_pair(s, ns, tid, true);
                        return true;
                }
                /* The kernel refused (ENOSPC past user.max_time_namespaces,
                 * ENOMEM): it stays where it was. */
                if (ns->parent)
                        (void) supervisor_member_set(l, tgid, ns->parent);
                return false;
        }
        if (rax != 0 || tns_kns_ino(tid, false, &ino) < 0)
                return false;
        now = supervisor_ns_by_kns(s, ino);
        if (!now)
                return false; /* a kernel namespace not made under us: our part stays */
        (void) supervisor_member_set(l, tgid, now);
        return now == ns;
}
