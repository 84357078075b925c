/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where the kernel looks up the file an execve or execveat names, so that
 * an exec certain to fail for want of its file (a PATH lookup tries one
 * directory after another: ENOENT in all but one) is let through at once,
 * without the seize, the hold and the fd handed and taken back that an
 * exec that may succeed needs (lib/supervisor/supervisor-exec.c). The
 * pure part: from the call's arguments and the path read from the
 * caller, the base of the lookup and the rest of the path. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum tns_exec_base {
        TNS_EXEC_BASE_UNKNOWN, /* not told here: the exec goes the usual way */
        TNS_EXEC_BASE_ROOT, /* an absolute path: from the caller's root */
        TNS_EXEC_BASE_CWD, /* relative to the caller's working directory */
        TNS_EXEC_BASE_DIRFD, /* relative to the caller's fd `dirfd` */
};

struct tns_exec_lookup {
        enum tns_exec_base base;
        int dirfd; /* TNS_EXEC_BASE_DIRFD */
        const char *rest; /* the path below the base, never empty */
        bool nofollow; /* execveat's AT_SYMLINK_NOFOLLOW */
};

/* The address of the path argument of execve (at false) or execveat. */
uint64_t tns_exec_path_arg(bool at, const uint64_t args[6]);

/* The lookup the kernel makes for execve (at false) or execveat (at
 * true) with these arguments and `path` (as read from the caller, with its
 * NUL). UNKNOWN where the call does not look a path up or fails on other
 * grounds (AT_EMPTY_PATH, an empty path, flags the kernel refuses, a
 * negative dirfd other than AT_FDCWD), or the path has a ".." component.
 * rest points into path. */
void tns_exec_lookup_plan(bool at, const uint64_t args[6], const char *path, struct tns_exec_lookup *ret);
