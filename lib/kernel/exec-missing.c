/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/securebits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec-missing.h"
#include "proc-util.h"
#include "util.h"

/* More supplementary groups than this: not told here (0). */
#define MAX_GROUPS 256

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif

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
 * thread's root (RESOLVE_IN_ROOT), a relative one below its base.
 * RESOLVE_CACHED: only what the dentry cache holds, never a call into a
 * filesystem (a member's FUSE server under an overlay, a hung NFS mount,
 * an automount would hold timensd's loop) — a PATH directory's miss is
 * there as a negative dentry from the first exec that missed it. No
 * symlink at all: /proc/self, /dev/fd and an absolute target would
 * resolve for timensd, not for the thread, and chains of them cost. */
static int lookup(int base, const struct tns_exec_lookup *plan) {
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_CACHED |
                           (plan->base == TNS_EXEC_BASE_ROOT ? RESOLVE_IN_ROOT : RESOLVE_BENEATH),
        };
        int fd;

        fd = (int) syscall(SYS_openat2, base, plan->rest, &how, sizeof(how));
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        return errno == ENOENT || errno == ENOTDIR;
}

/* The lookup runs as a user with no groups, no capability and an id no
 * file has, and only so: what it does not find is missing in
 * directories every user may search, and the work done for an exec
 * depends on nothing else, so that neither its answer nor the time it
 * takes tells a member anything of a directory it may not search. The
 * switch is this thread's only (setfsuid, setfsgid, setgroups as raw
 * syscalls; glibc's setgroups() would change every thread); a change of
 * fsuid drops the filesystem capabilities from the effective set, unless
 * SECBIT_NO_SETUID_FIXUP says otherwise (then nothing is told). The
 * kernel's commit_creds() also resets the process's dumpable flag and
 * this thread's parent-death signal: both are put back. */
static int lookup_as_anyone(int base, const struct tns_exec_lookup *plan) {
        const uid_t anyone = (uid_t) -2; /* 4294967294: valid, and no file's owner */
        const gid_t our_gid = getegid(); /* the fsgid follows it */
        int n_ours, dumpable, pdeath = 0, r;
        gid_t ours[MAX_GROUPS];
        bool took;

        /* Not root (timensctl's own supervisor, run by a user, maybe with
         * file capabilities): not told. */
        if (geteuid() != 0)
                return 0;
        r = prctl(PR_GET_SECUREBITS);
        if (r < 0 || (r & (1 << SECURE_NO_SETUID_FIXUP)))
                return 0;
        dumpable = prctl(PR_GET_DUMPABLE);
        n_ours = (int) syscall(SYS_getgroups, MAX_GROUPS, ours);
        if (dumpable < 0 || n_ours < 0 || prctl(PR_GET_PDEATHSIG, &pdeath) < 0)
                return 0;
        /* Without CAP_SETGID (a timensd confined by its manager), nothing
         * changes and nothing is told. */
        if (n_ours > 0 && syscall(SYS_setgroups, 0, NULL) < 0)
                return 0;
        (void) syscall(SYS_setfsgid, (gid_t) anyone);
        (void) syscall(SYS_setfsuid, anyone);
        r = lookup(base, plan);
        /* Back to our own ids (which need no capability; each returns
         * the id it replaces: the lookup counts only if both had taken),
         * and groups (CAP_SETGID is no filesystem capability: the fsuid
         * did not take it away). A thread of timensd left without its
         * powers would fail everyone: rather die, the keeper or systemd
         * starts us again. */
        took = (uid_t) syscall(SYS_setfsuid, 0) == anyone;
        took = (gid_t) syscall(SYS_setfsgid, our_gid) == (gid_t) anyone && took;
        if ((n_ours > 0 && syscall(SYS_setgroups, n_ours, ours) < 0) || (uid_t) syscall(SYS_setfsuid, -1) != 0 ||
            (gid_t) syscall(SYS_setfsgid, -1) != our_gid)
                abort();
        (void) prctl(PR_SET_DUMPABLE, dumpable);
        if (pdeath)
                (void) prctl(PR_SET_PDEATHSIG, pdeath);
        return took ? r : 0;
}

/* Whether tgid has one thread: /proc/TGID/task links two more than its
 * threads. */
static bool single_threaded(pid_t tgid) {
        char path[64];
        struct stat st;

        snprintf(path, sizeof(path), "/proc/%d/task", tgid);
        return stat(path, &st) == 0 && st.st_nlink == 3;
}

int tns_exec_file_missing(pid_t tid, const struct tns_exec_lookup *plan) {
        _cleanup_close_ int base = -EBADF;

        if (plan->base == TNS_EXEC_BASE_UNKNOWN || !single_threaded(tid))
                return 0;
        base = open_base(tid, plan);
        if (base < 0)
                return 0; /* gone, or a dirfd closed or no directory: the usual way */
        return lookup_as_anyone(base, plan);
}
