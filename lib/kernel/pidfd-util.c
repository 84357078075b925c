/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/nsfs.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "util.h"

/* The uapi of <linux/pidfd.h> in Linux 6.13, which this build's headers
 * may predate: the first version of struct pidfd_info (64 bytes; the
 * kernel takes a longer one and fills what it knows). */
struct kernel_pidfd_info {
        uint64_t mask;
        uint64_t cgroupid;
        uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
        int32_t exit_code;
};
_Static_assert(sizeof(struct kernel_pidfd_info) == 64, "PIDFD_INFO_SIZE_VER0");

#define KERNEL_PIDFD_INFO_PID (1ULL << 0)
#define KERNEL_PIDFD_INFO_CREDS (1ULL << 1)
#define KERNEL_PIDFD_GET_MNT_NAMESPACE _IO(0xFF, 3)
#define KERNEL_PIDFD_GET_TIME_NAMESPACE _IO(0xFF, 7)
#define KERNEL_PIDFD_GET_INFO _IOWR(0xFF, 11, struct kernel_pidfd_info)

/* A parent chain longer than this is not walked (pid_max is 4M, but no
 * real tree is this deep). */
#define DESCENDANT_MAX_DEPTH 4096

int tns_pidfd_open(pid_t pid) {
        int fd;

        if (pid <= 0)
                return -ESRCH;
        fd = (int) syscall(SYS_pidfd_open, pid, 0);
        return fd < 0 ? negative_errno() : fd;
}

bool tns_pidfd_is_thread(pid_t pid) {
        /* PIDFD_THREAD (Linux 6.9) is O_EXCL: a pidfd of any thread. */
        int fd = pid > 0 ? (int) syscall(SYS_pidfd_open, pid, O_EXCL) : -1;

        if (fd < 0)
                return false;
        safe_close(fd);
        return true;
}

bool tns_pidfd_alive(int pidfd) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int n;

        /* A pidfd polls readable once its process has exited, a zombie
         * included (signal 0 would still reach a zombie: its children are
         * then the reaper's already, which the checks of who asks must
         * not mistake for a live client's). */
        if (pidfd < 0)
                return false;
        do
                n = poll(&p, 1, 0);
        while (n < 0 && errno == EINTR);
        return n == 0;
}

pid_t tns_pidfd_pid(int pidfd) {
        char path[64], line[128];
        _cleanup_(fclosep) FILE *f = NULL;
        int pid;

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "Pid: %d", &pid) == 1)
                        return pid > 0 ? pid : 0;
        return 0;
}

/* Before Linux 6.13: /proc/PID/status, trusted only if the pidfd still
 * names a live process after the read (the pid was not reused). */
static int info_from_proc(int pidfd, struct tns_pidfd_info *ret) {
        struct tns_pidfd_info info = {.pid = tns_pidfd_pid(pidfd)};
        char path[64], line[256];
        _cleanup_(fclosep) FILE *f = NULL;
        unsigned u[4], g[4];
        int found = 0, ppid;

        if (info.pid <= 0)
                return -ESRCH;
        snprintf(path, sizeof(path), "/proc/%d/status", (int) info.pid);
        f = fopen(path, "re");
        if (!f)
                return -ESRCH;
        while (fgets(line, sizeof(line), f)) {
                if (sscanf(line, "PPid: %d", &ppid) == 1)
                        info.ppid = ppid, found |= 1;
                else if (sscanf(line, "Uid: %u %u %u %u", &u[0], &u[1], &u[2], &u[3]) == 4)
                        found |= 2;
                else if (sscanf(line, "Gid: %u %u %u %u", &g[0], &g[1], &g[2], &g[3]) == 4)
                        found |= 4;
        }
        if (found != 7 || !tns_pidfd_alive(pidfd))
                return -ESRCH;
        info.ruid = u[0], info.euid = u[1], info.suid = u[2], info.fsuid = u[3];
        info.rgid = g[0], info.egid = g[1], info.sgid = g[2], info.fsgid = g[3];
        *ret = info;
        return 0;
}

int tns_pidfd_get_info(int pidfd, struct tns_pidfd_info *ret) {
        struct kernel_pidfd_info k = {.mask = KERNEL_PIDFD_INFO_PID | KERNEL_PIDFD_INFO_CREDS};

        if (ioctl(pidfd, KERNEL_PIDFD_GET_INFO, &k) < 0) {
                if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP)
                        return info_from_proc(pidfd, ret);
                return negative_errno();
        }
        *ret = (struct tns_pidfd_info){
                .pid = (pid_t) k.pid,
                .ppid = (pid_t) k.ppid,
                .ruid = k.ruid,
                .euid = k.euid,
                .suid = k.suid,
                .fsuid = k.fsuid,
                .rgid = k.rgid,
                .egid = k.egid,
                .sgid = k.sgid,
                .fsgid = k.fsgid,
        };
        return 0;
}

bool tns_pidfd_info_owned_by(const struct tns_pidfd_info *i, uid_t uid, gid_t gid) {
        return i->ruid == uid && i->euid == uid && i->suid == uid && i->fsuid == uid && i->rgid == gid &&
               i->egid == gid && i->sgid == gid && i->fsgid == gid;
}

int tns_pidfd_is_descendant(int pidfd, pid_t ancestor) {
        _cleanup_close_ int cur = -EBADF;
        struct tns_pidfd_info info;
        int fd = pidfd, r;

        r = tns_pidfd_get_info(fd, &info);
        for (unsigned depth = 0; r >= 0 && depth < DESCENDANT_MAX_DEPTH; depth++) {
                _cleanup_close_ int parent = -EBADF;
                pid_t ppid = info.ppid;

                if (ppid == ancestor)
                        return 1;
                if (ppid <= 1)
                        return 0;
                parent = tns_pidfd_open(ppid);
                if (parent < 0)
                        return parent == -ESRCH ? -ESRCH : parent;
                /* The link again, now that the parent is pinned: the child
                 * still has that parent, so the pidfd is of it. */
                r = tns_pidfd_get_info(fd, &info);
                if (r >= 0 && info.ppid != ppid)
                        r = -ESRCH;
                if (r >= 0)
                        r = tns_pidfd_get_info(parent, &info);
                safe_close(cur);
                fd = cur = TAKE_FD(parent);
        }
        return r < 0 ? r : 0;
}

/* The namespace of a process by the pidfd ioctl (Linux 6.11), or before
 * by /proc/PID/ns/NAME, checked against the pidfd after the open: while
 * the pidfd's process lives its pid is not reused. */
static int pidfd_ns(int pidfd, unsigned long request, const char *name) {
        char path[64];
        pid_t pid;
        int fd;

        fd = ioctl(pidfd, request, 0);
        if (fd >= 0)
                return fd;
        if (errno != ENOTTY && errno != EINVAL && errno != EOPNOTSUPP)
                return negative_errno();
        pid = tns_pidfd_pid(pidfd);
        if (pid <= 0)
                return -ESRCH;
        snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int) pid, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (!tns_pidfd_alive(pidfd)) {
                safe_close(fd);
                return -ESRCH;
        }
        return fd;
}

int tns_pidfd_mnt_ns(int pidfd) {
        return pidfd_ns(pidfd, KERNEL_PIDFD_GET_MNT_NAMESPACE, "mnt");
}

int tns_pidfd_time_ns(int pidfd) {
        return pidfd_ns(pidfd, KERNEL_PIDFD_GET_TIME_NAMESPACE, "time");
}

int tns_ns_fd_same(int a, int b) {
        struct stat x, y;

        if (fstat(a, &x) < 0 || fstat(b, &y) < 0)
                return negative_errno();
        return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int tns_userns_of(pid_t tid, bool *ret_ours, uid_t *ret_owner) {
        _cleanup_close_ int fd = -EBADF, ours = -EBADF;
        char path[64];
        uid_t uid;
        int r;

        snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) tid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        ours = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        if (ours < 0)
                return negative_errno();
        r = tns_ns_fd_same(fd, ours);
        if (r < 0)
                return r;
        *ret_ours = r;
        *ret_owner = 0;
        if (r)
                return 0;
        if (ioctl(fd, NS_GET_OWNER_UID, &uid) < 0)
                return negative_errno();
        *ret_owner = uid;
        return 0;
}

int tns_ns_fd_owner_uid(int ns_fd, uid_t *ret) {
        _cleanup_close_ int userns = -EBADF;
        uid_t uid;

        userns = ioctl(ns_fd, NS_GET_USERNS);
        if (userns < 0)
                return negative_errno();
        if (ioctl(userns, NS_GET_OWNER_UID, &uid) < 0)
                return negative_errno();
        *ret = uid;
        return 0;
}
