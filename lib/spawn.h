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
        int exec_fd; /* reports the exec's outcome: tns_spawn_wait_exec() */
};

enum tns_spawn_stage {
        TNS_SPAWN_SETUP, /* the filter or the fd passing failed */
        TNS_SPAWN_EXEC, /* execvp() failed: errno says why (ENOENT: not found) */
};

/* Starts the child: on success it carries the filter and is about to exec
 * argv[0] (searched in PATH first, so that one exec is trapped, not one
 * per PATH entry). Its exec is trapped by the filter (vDSO injection), so
 * the caller must serve the listener before it calls tns_spawn_wait_exec()
 * for the outcome. On failure returns -errno with *ret_stage; the child
 * has been reaped then. */
int tns_spawn(const struct tns_filter *f, char *const argv[], struct tns_child *ret, enum tns_spawn_stage *ret_stage);

/* Waits for the exec of a child from tns_spawn(): 0 once it happened, or
 * -errno with *ret_stage (the child has been reaped then). Closes
 * c->exec_fd either way. */
int tns_spawn_wait_exec(struct tns_child *c, enum tns_spawn_stage *ret_stage);
