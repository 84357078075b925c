/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who may do what (proto/PROTOCOL.md, "Access"): root and members of the
 * daemon's group may change anything, other local users may read; a
 * process inside a supervised namespace may do only what that namespace
 * was granted. Peers are known by SO_PEERCRED and SO_PEERGROUPS, taken by
 * the kernel at connect(): a client cannot claim to be someone else; and
 * pinned by SO_PEERPIDFD: a client that is gone cannot lend its pid to
 * another. Processes a request names are checked against the peer here
 * too, through pidfds (docs/SECURITY.md, "timensd's sockets"). */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <sys/socket.h>

#include "pidfd-util.h"
#include "proc-util.h"
#include "timensd.h"

#define PEER_MAX_GROUPS 256

static bool in_group(const struct manager *m, gid_t gid, const gid_t *groups, int n) {
        if (!m->have_group)
                return false;
        if (gid == m->group)
                return true;
        for (int i = 0; i < n; i++)
                if (groups[i] == m->group)
                        return true;
        return false;
}

/* A peer with more groups than we read is judged by those we read (the
 * kernel fills the buffer and fails with ERANGE). */
static int peer_groups(int fd, gid_t *groups, int max) {
        socklen_t len = (socklen_t) (sizeof(gid_t) * (size_t) max);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0 && errno != ERANGE)
                return 0;
        return (int) (len / sizeof(gid_t));
}

static enum tns_access grant_limit(enum tns_access a, enum tns_grant g) {
        if (g == TNS_GRANT_FULL)
                return a;
        if (g == TNS_GRANT_READ)
                return a < TNS_ACCESS_READ ? a : TNS_ACCESS_READ;
        return TNS_ACCESS_NONE;
}

/* The grant of a namespace is its held ancestor's: a child made by
 * unshare inside has no record of its own. */
static enum tns_grant grant_of(struct manager *m, struct tns_ns *ns) {
        struct tns_ns_info info;

        for (; ns; ns = ns->parent) {
                tns_registry_info(m->registry, ns, &info);
                if (info.origin != TNS_ORIGIN_UNSHARE)
                        return info.grant;
        }
        return TNS_GRANT_NONE;
}

static enum tns_access access_min(enum tns_access a, enum tns_access b) {
        return a < b ? a : b;
}

/* A peer under a seccomp filter that timensd cannot place in a namespace:
 * a member can shed what places it (unmap its namespace's page, fork
 * twice so that init adopts it) but not the filter, which the kernel
 * does not say is ours. Fail closed: such a peer may read at most, while
 * timensd serves any namespace. (A sandboxed service with a filter of its
 * own is capped too: it runs timensctl outside its filter to write.) */
static bool filtered_stranger(struct manager *m, const struct peer *p) {
        struct tns_proc_status st;

        if (!tns_registry_serves_processes(m->registry))
                return false;
        /* Unreadable or gone: no access is decided here, the pidfd
         * check is (peer_refresh). Read by pid, then the pidfd alive
         * after: the status was the peer's. */
        if (tns_proc_status(p->pid, &st) < 0 || !tns_pidfd_alive(p->pidfd))
                return true;
        return st.seccomp_mode == 2 || st.seccomp_filters > 0;
}

void peer_refresh(struct manager *m, struct peer *p) {
        struct tns_ns *ns;

        if (p->gone || !tns_pidfd_alive(p->pidfd)) {
                /* Its pid may name another process by now: nothing read
                 * by pid can speak for it. */
                p->gone = true;
                p->access = TNS_ACCESS_NONE;
                return;
        }
        if (p->generation == m->generation)
                return;
        p->generation = m->generation;
        ns = tns_registry_find_process(m->registry, p->pid);
        if (!tns_pidfd_alive(p->pidfd)) {
                /* Gone during the lookup: its result may be another's. */
                p->gone = true;
                p->access = TNS_ACCESS_NONE;
                return;
        }
        p->inside_ns = ns ? ns->id : p->inside_ns;
        p->access = access_min(ns ? grant_limit(p->by_user, grant_of(m, ns)) : p->by_user, p->limit);
        p->filtered = !ns && p->access > TNS_ACCESS_READ && filtered_stranger(m, p);
        if (p->filtered)
                p->access = TNS_ACCESS_READ;
}

void peer_done(struct peer *p) {
        p->pidfd = safe_close(p->pidfd);
}

/* SO_PEERPIDFD (Linux 6.5) names the process that connected, race-free.
 * Before it, a pidfd of SO_PEERCRED's pid: if the peer exited and its pid
 * was reused between connect and here, that is another process, which is
 * why the kernel added SO_PEERPIDFD; we accept the window there. */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

static int peer_pidfd(int fd, pid_t pid) {
        int pidfd = -EBADF;
        socklen_t len = sizeof(pidfd);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 && pidfd >= 0)
                return pidfd;
        if (errno != ENOPROTOOPT && errno != EINVAL)
                return negative_errno();
        return tns_pidfd_open(pid);
}

int peer_from_socket(struct manager *m, int fd, struct peer *ret) {
        struct ucred cred;
        socklen_t len = sizeof(cred);
        gid_t groups[PEER_MAX_GROUPS];
        int n;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return negative_errno();
        n = peer_groups(fd, groups, PEER_MAX_GROUPS);
        *ret = (struct peer){.pid = cred.pid, .uid = cred.uid, .gid = cred.gid, .limit = TNS_ACCESS_WRITE};
        /* A peer already gone is kept, with no access: its requests get
         * a clear refusal rather than a hang-up. */
        ret->pidfd = peer_pidfd(fd, cred.pid);
        if (cred.uid == 0 || in_group(m, cred.gid, groups, n))
                ret->by_user = TNS_ACCESS_WRITE;
        else
                ret->by_user = TNS_ACCESS_READ;
        ret->generation = m->generation - 1;
        peer_refresh(m, ret);
        /* What it may do now is the most it ever may: a process that was
         * inside a namespace stays as limited when the namespace goes. */
        ret->limit = ret->access;
        return 0;
}

int peer_check_descendant(struct peer *p, int pidfd, pid_t pid, char err[PEER_ERR_MAX]) {
        int r = tns_pidfd_is_descendant(pidfd, p->pid);

        if (r >= 0 && !tns_pidfd_alive(p->pidfd))
                r = -ESRCH; /* the ancestor found may be its pid's next owner */
        if (r == -ESRCH) {
                snprintf(err, PEER_ERR_MAX, "process %d or the client (process %d) exited during the check", (int) pid,
                         (int) p->pid);
                return -ESRCH;
        }
        if (r <= 0) {
                struct tns_pidfd_info info = {};

                (void) tns_pidfd_get_info(pidfd, &info);
                snprintf(err, PEER_ERR_MAX,
                         "process %d (parent %d) is not a descendant of the client (process %d): a client may "
                         "name only processes it started",
                         (int) pid, (int) info.ppid, (int) p->pid);
                return -EPERM;
        }
        return 0;
}

int peer_check_owner(struct peer *p, int pidfd, pid_t pid, char err[PEER_ERR_MAX]) {
        struct tns_pidfd_info info;
        int r;

        if (p->uid == 0)
                return 0;
        r = tns_pidfd_get_info(pidfd, &info);
        if (r < 0) {
                snprintf(err, PEER_ERR_MAX, "process %d exited", (int) pid);
                return -ESRCH;
        }
        /* All of them, as ptrace's own check asks (ptrace_may_access):
         * a set-uid program run by the client is not the client's. */
        if (!tns_pidfd_info_owned_by(&info, p->uid, p->gid)) {
                snprintf(err, PEER_ERR_MAX,
                         "process %d does not run with uid %u and gid %u alone (real, effective, saved, fs): "
                         "only root may name processes of other users or set-id programs",
                         (int) pid, (unsigned) p->uid, (unsigned) p->gid);
                return -EPERM;
        }
        return 0;
}

/* timensd mounts its /proc covers in the mount namespace of a process it
 * serves (lib/supervisor/supervisor-procfs.c). A non-root client may have that done
 * only where it could mount itself: in a mount namespace owned by a user
 * namespace of its uid, or in its own. */
int peer_check_mount_ns(struct peer *p, int pidfd, pid_t pid, char err[PEER_ERR_MAX]) {
        _cleanup_close_ int target = -EBADF, own = -EBADF;
        uid_t owner = 0;
        int r;

        if (p->uid == 0)
                return 0;
        target = tns_pidfd_mnt_ns(pidfd);
        own = tns_pidfd_mnt_ns(p->pidfd);
        if (target < 0 || own < 0) {
                snprintf(err, PEER_ERR_MAX, "process %d or the client (process %d) exited", (int) pid, (int) p->pid);
                return -ESRCH;
        }
        r = tns_ns_fd_same(target, own);
        if (r == 0)
                r = tns_ns_fd_owner_uid(target, &owner) < 0 ? 0 : owner == p->uid;
        if (r <= 0) {
                snprintf(err, PEER_ERR_MAX,
                         "process %d is in a mount namespace that uid %u does not own (its user namespace's owner "
                         "is uid %u): timensd mounts its /proc covers only where the client could",
                         (int) pid, (unsigned) p->uid, (unsigned) owner);
                return -EPERM;
        }
        return 0;
}

/* A group member is trusted with clocks, its own: the clocks of another's
 * namespace are that uid's processes' clocks (docs/SECURITY.md). Shared
 * lets others join, not take it over. */
int peer_may_change(struct manager *m, uid_t uid, struct tns_ns *ns, const char *what, char err[PEER_ERR_MAX]) {
        struct tns_ns_info info;

        tns_registry_info(m->registry, ns, &info);
        if (uid == 0 || info.owner == uid)
                return 0;
        snprintf(err, PEER_ERR_MAX,
                 "namespace '%s' belongs to uid %u: only uid %u and root may %s it (its processes' clocks are "
                 "theirs)",
                 info.name ?: "", (unsigned) info.owner, (unsigned) info.owner, what);
        return -EPERM;
}

int peer_may_join(struct manager *m, uid_t uid, struct tns_ns *ns, char err[PEER_ERR_MAX]) {
        struct tns_ns_info info;

        tns_registry_info(m->registry, ns, &info);
        if (info.shared || info.owner == uid)
                return 0;
        snprintf(err, PEER_ERR_MAX,
                 "namespace '%s' belongs to uid %u and is not shared: only uid %u may join it, others once it "
                 "is made with --shared (params.shared)",
                 info.name ?: "", (unsigned) info.owner, (unsigned) info.owner);
        return -EPERM;
}
