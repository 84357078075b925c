/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starting a program under the filter: fork, install the filter in the
 * child, hand its listener fd to the parent, exec. */
#pragma once

#include <sys/types.h>

#include "filter.h"

struct tns_child {
        pid_t pid;
        int pidfd;
        int listener; /* the seccomp listener fd, owned by the caller */
};

enum tns_spawn_stage {
        TNS_SPAWN_SETUP, /* the filter or the fd passing failed */
        TNS_SPAWN_EXEC, /* execvp() failed: errno says why (ENOENT: not found) */
};

/* On success the child has exec'd argv[0] (searched in PATH). On failure
 * returns -errno and, when the child got as far as reporting, sets
 * *ret_stage; the child has been reaped then. */
int tns_spawn(const struct tns_filter *f, char *const argv[], struct tns_child *ret, enum tns_spawn_stage *ret_stage);
