/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec-missing.h"
#include "proc-util.h"
#include "util.h"

/* More supplementary groups than this: not told here (0). */
#define MAX_GROUPS 256

static int open_base(pid_t tid, const struct tns_exec_lookup *plan) {
        char path[64];
        int fd;

        if (plan->base == TNS_EXEC_BASE_ROOT)
                snprintf(path, sizeof(path), "/proc/%d/root", tid);
        else if (plan->base == TNS_EXEC_BASE_CWD)
                snprintf(path, sizeof(path), "/proc/%d/cwd", tid);
        else
                snprintf(path, sizeof(path), "/proc/%d/fd/%d", tid, plan->dirfd);
        fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* 1 missing, 0 there or not told. An absolute path resolves inside the
 * thread's root as the kernel resolves it for the thread (symlinks and
 * ".." stay in it); a relative one must stay below its base and meet no
 * symlink, whose absolute target would resolve in our root, not the
 * thread's. */
static int lookup(int base, const struct tns_exec_lookup *plan) {
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC | (plan->nofollow ? O_NOFOLLOW : 0),
                .resolve = RESOLVE_NO_MAGICLINKS |
                           (plan->base == TNS_EXEC_BASE_ROOT ? RESOLVE_IN_ROOT : RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS),
        };
        int fd;

        fd = (int) syscall(SYS_openat2, base, plan->rest, &how, sizeof(how));
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        return errno == ENOENT || errno == ENOTDIR;
}

/* The lookup again as a user with no groups and an id no file has: what
 * it does not find is missing in directories every user may search, so
 * that telling it tells a member nothing it could not see itself. One
 * only root or a group may search (EACCES here) is not told. Cheaper
 * than taking the caller's own credentials, which a read of its status
 * gives (~20 µs). The switch is this thread's only: setfsuid, setfsgid
 * and setgroups as raw syscalls (glibc's setgroups() would change every
 * thread). */
static int lookup_as_anyone(int base, const struct tns_exec_lookup *plan) {
        const uid_t anyone = (uid_t) -2; /* 4294967294: valid, and no file's owner */
        const gid_t our_gid = getegid(); /* the fsgid follows it */
        gid_t ours[MAX_GROUPS];
        int n_ours, r;
        bool took;

        /* Not root (timensctl's own supervisor, run by a user): no other
         * credentials to take, and none to give away: the command is that
         * user's. */
        if (geteuid() != 0)
                return 1;
        n_ours = (int) syscall(SYS_getgroups, MAX_GROUPS, ours);
        /* Without CAP_SETGID (a timensd confined by its manager), nothing
         * changes and nothing is told. */
        if (n_ours < 0 || syscall(SYS_setgroups, 0, NULL) < 0)
                return 0;
        (void) syscall(SYS_setfsgid, (gid_t) anyone);
        (void) syscall(SYS_setfsuid, anyone);
        r = lookup(base, plan);
        /* Back to our own ids (which need no capability; each returns
         * the id it replaces: the lookup counts only if both had taken),
         * and its groups (CAP_SETGID is no filesystem capability: the
         * fsuid did not take it away). A thread of timensd left without
         * root's powers would fail everyone: rather die, the keeper or
         * systemd starts us again. */
        took = (uid_t) syscall(SYS_setfsuid, 0) == anyone;
        took = (gid_t) syscall(SYS_setfsgid, our_gid) == (gid_t) anyone && took;
        if (syscall(SYS_setgroups, n_ours, ours) < 0 || (uid_t) syscall(SYS_setfsuid, -1) != 0)
                abort();
        return took ? r : 0;
}

int tns_exec_file_missing(pid_t tid, const struct tns_exec_lookup *plan) {
        _cleanup_close_ int base = -EBADF;
        int r;

        if (plan->base == TNS_EXEC_BASE_UNKNOWN)
                return 0;
        base = open_base(tid, plan);
        if (base == -ENOENT)
                return -ESRCH;
        if (base < 0)
                return 0; /* e.g. ENOTDIR: a dirfd that is no directory */
        /* Root first: the file of an exec that may succeed is there, and
         * nothing more is read. */
        r = lookup(base, plan);
        if (r <= 0)
                return r;
        return lookup_as_anyone(base, plan);
}
