/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kns.h"
#include "proc-util.h"
#include "procfs-text.h"
#include "util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* tid 0: the caller itself (/proc/self: right whichever pid namespace
 * /proc was mounted for). */
static void proc_path(pid_t tid, const char *file, char *buf, size_t size) {
        if (tid == 0)
                snprintf(buf, size, "/proc/self/%s", file);
        else
                snprintf(buf, size, "/proc/%d/%s", tid, file);
}

static void kns_path(pid_t tid, bool for_children, char *buf, size_t size) {
        proc_path(tid, for_children ? "ns/time_for_children" : "ns/time", buf, size);
}

int tns_kns_ino(pid_t tid, bool for_children, uint64_t *ret) {
        char path[64];
        struct stat st;

        kns_path(tid, for_children, path, sizeof(path));
        if (stat(path, &st) < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        *ret = (uint64_t) st.st_ino;
        return 0;
}

int tns_kns_open(pid_t tid, bool for_children) {
        char path[64];
        int fd;

        kns_path(tid, for_children, path, sizeof(path));
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        return fd;
}

static int read_offsets_file(const char *path, int64_t ret[3]) {
        char buf[256];
        ssize_t n;

        n = tns_read_text(path, buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        return tns_timens_offsets_parse(buf, (size_t) n, ret);
}

/* A helper that enters nsfd: setns(CLONE_NEWTIME) sets both the task's
 * namespace and time_for_children, so its own file then shows nsfd's. */
static int offsets_by_helper(int nsfd, int64_t ret[3]) {
        int64_t v[3] = {};
        int p[2], status, r;
        ssize_t n;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0) {
                r = negative_errno();
                close(p[0]), close(p[1]);
                return r;
        }
        if (pid == 0) {
                r = setns(nsfd, CLONE_NEWTIME) < 0 ? negative_errno()
                                                   : read_offsets_file("/proc/self/timens_offsets", v);
                (void) !write(p[1], &r, sizeof(r));
                (void) !write(p[1], v, sizeof(v));
                _exit(0);
        }
        close(p[1]);
        n = read(p[0], &r, sizeof(r));
        if (n == (ssize_t) sizeof(r) && r == 0 && read(p[0], v, sizeof(v)) != (ssize_t) sizeof(v))
                r = -EIO;
        else if (n != (ssize_t) sizeof(r))
                r = -EIO;
        close(p[0]);
        (void) waitpid(pid, &status, 0);
        if (r < 0)
                return r;
        memcpy(ret, v, sizeof(v));
        return 0;
}

int tns_kns_offsets(pid_t tid, int nsfd, int64_t ret[3]) {
        struct stat own;
        uint64_t children;
        char path[64];
        int r;

        if (fstat(nsfd, &own) < 0)
                return negative_errno();
        r = tns_kns_ino(tid, true, &children);
        if (r < 0)
                return r;
        if (children == (uint64_t) own.st_ino) {
                proc_path(tid, "timens_offsets", path, sizeof(path));
                r = read_offsets_file(path, ret);
                /* The task may have unshared between the two looks: then
                 * the file shows another namespace; the helper is exact. */
                if (r == 0 && tns_kns_ino(tid, true, &children) == 0 && children == (uint64_t) own.st_ino)
                        return 0;
        }
        return offsets_by_helper(nsfd, ret);
}

int tns_kns_children_offsets(pid_t tid, int64_t ret[3]) {
        char path[64];

        proc_path(tid, "timens_offsets", path, sizeof(path));
        return read_offsets_file(path, ret);
}

int tns_kns_self_offsets(int64_t ret[3]) {
        _cleanup_close_ int fd = tns_kns_open(0, false);

        if (fd < 0)
                return fd;
        return tns_kns_offsets(0, fd, ret);
}
