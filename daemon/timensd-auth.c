/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who may do what (proto/PROTOCOL.md, "Access"): root and members of the
 * daemon's group may change anything, other local users may read; a
 * process inside a supervised namespace may do only what that namespace
 * was granted. Peers are known by SO_PEERCRED and SO_PEERGROUPS, taken by
 * the kernel at connect(): a client cannot claim to be someone else. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

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

void peer_refresh(struct manager *m, struct peer *p) {
        struct tns_ns *ns;

        if (p->generation == m->generation)
                return;
        p->generation = m->generation;
        ns = p->pid > 0 ? tns_registry_find_process(m->registry, p->pid) : NULL;
        p->inside_ns = ns ? ns->id : 0;
        p->access = ns ? grant_limit(p->by_user, grant_of(m, ns)) : p->by_user;
}

int peer_from_socket(struct manager *m, int fd, struct peer *ret) {
        struct ucred cred;
        socklen_t len = sizeof(cred);
        gid_t groups[PEER_MAX_GROUPS];
        int n;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return negative_errno();
        n = peer_groups(fd, groups, PEER_MAX_GROUPS);
        *ret = (struct peer){.pid = cred.pid, .uid = cred.uid, .gid = cred.gid};
        if (cred.uid == 0 || in_group(m, cred.gid, groups, n))
                ret->by_user = TNS_ACCESS_WRITE;
        else
                ret->by_user = TNS_ACCESS_READ;
        peer_refresh(m, ret);
        return 0;
}
