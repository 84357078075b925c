/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <string.h>

#include "exec-lookup.h"

uint64_t tns_exec_path_arg(bool at, const uint64_t args[6]) {
        return at ? args[1] : args[0];
}

void tns_exec_lookup_plan(bool at, const uint64_t args[6], const char *path, struct tns_exec_lookup *ret) {
        /* execveat's flags and dirfd are ints to the kernel: the low 32
         * bits of their registers. */
        const int flags = at ? (int) (uint32_t) args[4] : 0;
        const int dirfd = at ? (int) (uint32_t) args[0] : AT_FDCWD;

        *ret = (struct tns_exec_lookup){.base = TNS_EXEC_BASE_UNKNOWN};
        /* do_execveat_common(): any other flag is EINVAL; AT_EMPTY_PATH
         * execs dirfd itself, and an empty path is ENOENT without a
         * lookup (the usual way answers both the same). */
        if ((flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) || (flags & AT_EMPTY_PATH) || !path[0])
                return;
        /* No "..": a PATH lookup has none, and a chain of them is work
         * for nothing (the kernel's own lookup answers). */
        for (const char *p = path; (p = strstr(p, "..")); p += 2)
                if ((p == path || p[-1] == '/') && (p[2] == '/' || !p[2]))
                        return;
        ret->nofollow = flags & AT_SYMLINK_NOFOLLOW;
        if (path[0] == '/') {
                ret->base = TNS_EXEC_BASE_ROOT;
                ret->rest = path + strspn(path, "/");
                if (!ret->rest[0])
                        ret->rest = "."; /* "/": the root itself, a directory */
                return;
        }
        ret->rest = path;
        if (dirfd == AT_FDCWD)
                ret->base = TNS_EXEC_BASE_CWD;
        else if (dirfd >= 0) {
                ret->base = TNS_EXEC_BASE_DIRFD;
                ret->dirfd = dirfd;
        }
}
