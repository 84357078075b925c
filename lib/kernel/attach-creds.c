/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whose processes an attach may take (attach-creds.h says what and why). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/nsfs.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach-creds.h"
#include "util.h"

/* Deeper than the kernel allows (32 levels of user namespaces). */
#define USERNS_MAX_DEPTH 33

const char *tns_attach_denied(const struct tns_task_creds *c, const struct tns_attach_owner *o) {
        for (size_t i = 0; i < 4; i++)
                if (c->uid[i] != o->uid)
                        return "it runs as another user (a setuid program, or not yours)";
        for (size_t i = 0; i < 4; i++)
                if (c->gid[i] != o->gid)
                        return "it runs with another group (a setgid program, or not yours)";
        if (c->dump_uid != o->uid || c->dump_gid != o->gid)
                return "it is not dumpable (it ran a setuid or privileged program, or asked not to be traced)";
        if (c->cap_prm != 0 && c->userns != TNS_USERNS_OWNED)
                return "it has capabilities you do not have";
        return NULL;
}

int tns_task_creds_parse(const char *status, struct tns_task_creds *c) {
        struct tns_task_creds n = *c;
        unsigned found = 0;

        for (const char *l = status; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
                if (strncmp(l, "Uid:", 4) == 0 &&
                    sscanf(l + 4, "%u %u %u %u", &n.uid[0], &n.uid[1], &n.uid[2], &n.uid[3]) == 4)
                        found |= 1;
                else if (strncmp(l, "Gid:", 4) == 0 &&
                         sscanf(l + 4, "%u %u %u %u", &n.gid[0], &n.gid[1], &n.gid[2], &n.gid[3]) == 4)
                        found |= 2;
                else if (strncmp(l, "CapPrm:", 7) == 0 && sscanf(l + 7, "%" SCNx64, &n.cap_prm) == 1)
                        found |= 4;
        }
        if (found != 7)
                return -EBADMSG;
        *c = n;
        return 0;
}

static bool same_file(int fd, const struct stat *st) {
        struct stat f;

        return fstat(fd, &f) >= 0 && f.st_dev == st->st_dev && f.st_ino == st->st_ino;
}

/* Which user namespace the thread is in, as seen from ours: the caller
 * has every capability in one directly below ours that its uid owns, and
 * in those below it (the kernel's cap_capable()). */
static int userns_of(int taskfd, uid_t owner_uid, enum tns_userns *ret) {
        _cleanup_close_ int fd = -EBADF;
        struct stat ours;

        if (stat("/proc/self/ns/user", &ours) < 0)
                return negative_errno();
        fd = openat(taskfd, "ns/user", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (same_file(fd, &ours)) {
                *ret = TNS_USERNS_OURS;
                return 0;
        }
        for (unsigned depth = 0; depth < USERNS_MAX_DEPTH; depth++) {
                _cleanup_close_ int parent = ioctl(fd, NS_GET_PARENT);
                uid_t uid;

                if (parent < 0)
                        break; /* EPERM: not below ours */
                if (same_file(parent, &ours)) {
                        if (ioctl(fd, NS_GET_OWNER_UID, &uid) < 0)
                                return negative_errno();
                        *ret = uid == owner_uid ? TNS_USERNS_OWNED : TNS_USERNS_OTHER;
                        return 0;
                }
                close(fd);
                fd = TAKE_FD(parent);
        }
        *ret = TNS_USERNS_OTHER;
        return 0;
}

int tns_task_creds_read(int procfd, pid_t tid, uid_t owner_uid, struct tns_task_creds *ret) {
        _cleanup_close_ int taskfd = -EBADF, fd = -EBADF;
        struct tns_task_creds c = {};
        char path[32], buf[4096];
        struct stat st;
        ssize_t n;
        int r;

        snprintf(path, sizeof(path), "task/%d", (int) tid);
        taskfd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (taskfd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        fd = openat(taskfd, "status", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        /* procfs sets a file's owner at each lookup (pid_revalidate(), as
         * this openat's): the task's euid/egid if its mm is dumpable, else
         * root of the mm's user namespace (task_dump_owner()). Not the
         * directory's: /proc/PID itself always shows the euid. */
        if (fstat(fd, &st) < 0)
                return negative_errno();
        c.dump_uid = st.st_uid;
        c.dump_gid = st.st_gid;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return n < 0 ? (errno == ESRCH ? -ESRCH : negative_errno()) : -ESRCH;
        buf[n] = '\0';
        r = tns_task_creds_parse(buf, &c);
        if (r < 0)
                return r;
        r = userns_of(taskfd, owner_uid, &c.userns);
        if (r < 0)
                return r;
        *ret = c;
        return 0;
}
