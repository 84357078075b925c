/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-pass.h"
#include "page-store.h"
#include "util.h"

#define FILE_FMT TNS_NS_FILE_NAME ".%" PRIu64

/* Any directory the child can mount over: in its private mount namespace
 * nothing it mounts is seen by anyone else, and the namespace dies with
 * it. */
static const char *const mount_points[] = {"/tmp", "/run", "/mnt", "/var/tmp", "/dev"};

/* The child, between fork and _exit: async-signal-safe calls only. */
static int child_mount(int sock) {
        const char *dir = NULL;
        int rw, ro;

        if (unshare(CLONE_NEWNS) < 0)
                return errno;
        /* Nothing we mount may propagate back to the parent's namespace. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return errno;
        for (size_t i = 0; i < ELEMENTSOF(mount_points) && !dir; i++)
                if (mount("timens", mount_points[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOATIME, "mode=0700") == 0)
                        dir = mount_points[i];
        if (!dir)
                return errno;
        rw = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rw < 0)
                return errno;
        /* A bind of it on top, made read-only: the path now leads there. */
        if (mount(dir, dir, NULL, MS_BIND, NULL) < 0 ||
            mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
                return errno;
        ro = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ro < 0)
                return errno;
        if (tns_send_fd(sock, rw) < 0 || tns_send_fd(sock, ro) < 0)
                return EPIPE;
        return 0;
}

static int check(int rw_dir, int ro_dir, dev_t *ret_dev) {
        struct stat a, b;
        struct statfs fs;
        struct statvfs va, vb;

        if (fstat(rw_dir, &a) < 0 || fstat(ro_dir, &b) < 0 || fstatfs(rw_dir, &fs) < 0 || fstatvfs(rw_dir, &va) < 0 ||
            fstatvfs(ro_dir, &vb) < 0)
                return negative_errno();
        if (!S_ISDIR(a.st_mode) || a.st_dev != b.st_dev || a.st_ino != b.st_ino || fs.f_type != TMPFS_MAGIC ||
            (va.f_flag & ST_RDONLY) || !(vb.f_flag & ST_RDONLY))
                return -EBADMSG;
        *ret_dev = a.st_dev;
        return 0;
}

int tns_page_store_new(struct tns_page_store *ret) {
        _cleanup_close_ int rw = -EBADF, ro = -EBADF;
        int sv[2], status, r;
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0) {
                r = negative_errno();
                safe_close(sv[0]);
                safe_close(sv[1]);
                return r;
        }
        if (pid == 0) {
                safe_close(sv[0]);
                _exit(child_mount(sv[1]));
        }
        safe_close(sv[1]);
        rw = tns_recv_fd(sv[0]);
        ro = rw >= 0 ? tns_recv_fd(sv[0]) : -EBADF;
        safe_close(sv[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return WIFEXITED(status) && WEXITSTATUS(status) != 0 ? -WEXITSTATUS(status) : -EPROTO;
        if (rw < 0 || ro < 0)
                return rw < 0 ? rw : ro;
        return tns_page_store_adopt(TAKE_FD(rw), TAKE_FD(ro), ret);
}

int tns_page_store_adopt(int rw_dir, int ro_dir, struct tns_page_store *ret) {
        _cleanup_close_ int rw = rw_dir, ro = ro_dir;
        int r;

        r = check(rw, ro, &ret->dev);
        if (r < 0)
                return r;
        ret->rw_dir = TAKE_FD(rw);
        ret->ro_dir = TAKE_FD(ro);
        return 0;
}

void tns_page_store_done(struct tns_page_store *ps) {
        ps->rw_dir = safe_close(ps->rw_dir);
        ps->ro_dir = safe_close(ps->ro_dir);
}

int tns_page_store_create(const struct tns_page_store *ps, uint64_t id, size_t size) {
        char name[64];
        int fd;

        snprintf(name, sizeof(name), FILE_FMT, id);
        /* No write permission bits: the mount is the guard, the mode says
         * it too. */
        fd = openat(ps->rw_dir, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
        if (fd < 0)
                return negative_errno();
        if (ftruncate(fd, (off_t) size) < 0) {
                int r = negative_errno();

                safe_close(fd);
                (void) unlinkat(ps->rw_dir, name, 0);
                return r;
        }
        return fd;
}

int tns_page_store_open_ro(const struct tns_page_store *ps, uint64_t id) {
        char name[64];
        int fd;

        snprintf(name, sizeof(name), FILE_FMT, id);
        fd = openat(ps->ro_dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? negative_errno() : fd;
}

int tns_page_store_owns(const struct tns_page_store *ps, int fd, uint64_t id) {
        struct stat a, b;
        char name[64];

        snprintf(name, sizeof(name), FILE_FMT, id);
        if (fstat(fd, &a) < 0 || fstatat(ps->rw_dir, name, &b, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        return a.st_dev == ps->dev && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void tns_page_store_remove(const struct tns_page_store *ps, uint64_t id) {
        char name[64];

        snprintf(name, sizeof(name), FILE_FMT, id);
        (void) unlinkat(ps->rw_dir, name, 0);
}
