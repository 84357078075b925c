/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The real runtime, by exec: same pid, stdio, signal dispositions and
 * mask, so that the engine's signals, exit codes and pipes are runc's own
 * as if we were not there. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "timens-runtime.h"

/* Where runc and crun are when PATH does not say (containerd's shims
 * run with the PATH they were given, which may lack /usr/sbin): a search
 * path, as a shell's default. */
#define RUNTIME_FALLBACK_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static bool executable(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static int find_in(const char *search, const char *name, char *ret, size_t size) {
        _cleanup_free_ char *path = strdup(search);
        char *save = NULL;

        if (!path)
                return -ENOMEM;
        for (char *dir = strtok_r(path, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
                if (*dir == '/' && snprintf(ret, size, "%s/%s", dir, name) < (int) size && executable(ret))
                        return 0;
        return -ENOENT;
}

/* The name in PATH, then in the usual directories. */
static int find(const char *name, char *ret, size_t size) {
        int r = find_in(getenv("PATH") ?: "", name, ret, size);

        return r == -ENOENT ? find_in(RUNTIME_FALLBACK_PATH, name, ret, size) : r;
}

/* The same file as this program: a runtime.conf that names us would exec
 * us forever. */
static bool is_self(const char *path) {
        struct stat a, b;

        return stat(path, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int runtime_find(const struct runtime_conf *c, const struct runtime_args *a, char *path, const struct tns_logger *log) {
        const char *want = a->runtime ?: c->runtime;

        if (strchr(want, '/')) {
                snprintf(path, PATH_MAX, "%s", want);
        } else if (find(want, path, PATH_MAX) < 0) {
                return tns_log_errno(log, LOG_ERR, ENOENT,
                                     "The runtime '%s' is not in PATH nor in /usr/sbin, /usr/bin: install it or set "
                                     "runtime= in runtime.conf to its path",
                                     want);
        }
        if (is_self(path))
                return tns_log_errno(log, LOG_ERR, ELOOP,
                                     "The runtime to run is %s, which is timens-runtime itself: set runtime= to runc "
                                     "or crun",
                                     path);
        return 0;
}

int runtime_exec(const char *path, struct runtime_args *a, const struct tns_logger *log) {
        char copy[PATH_MAX];

        /* argv[0] as the runtime's own name: runc's messages start with it. */
        snprintf(copy, sizeof(copy), "%s", path);
        a->argv[0] = basename(copy);
        execv(path, a->argv);
        return tns_log_errno(log, LOG_ERR, errno, "Failed to run %s: %m", path);
}
