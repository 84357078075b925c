/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small helpers shared by every part: cleanup attributes and ownership
 * transfer, in the manner of systemd's src/basic/fd-util.h and alloc-util.h. */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _public_ __attribute__((visibility("default")))
#define _fallthrough_ __attribute__((fallthrough))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _warn_unused_result_ __attribute__((warn_unused_result))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Hand ownership on: returns the value and leaves the variable empty so
 * the cleanup handler does nothing. */
#define TAKE_GENERIC(var, type, nullvalue)                                                                             \
        ({                                                                                                             \
                type *_pvar_ = &(var);                                                                                 \
                type _var_ = *_pvar_;                                                                                  \
                *_pvar_ = (nullvalue);                                                                                 \
                _var_;                                                                                                 \
        })
#define TAKE_PTR(p) TAKE_GENERIC(p, __typeof__(p), NULL)
#define TAKE_FD(fd) TAKE_GENERIC(fd, int, -EBADF)

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -EBADF;
}
static inline void closep(int *fd) {
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

/* errno as a negative return value, never 0 even if errno was clobbered. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

static inline int RET_NERRNO(long r) {
        return r < 0 ? negative_errno() : (int) r;
}

#include <dirent.h>
static inline void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

#include <stdio.h>
static inline void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}
