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
        int release_fd; /* TNS_SPAWN_PRIVATE_PROC: tns_spawn_release() */
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

/* With TNS_SPAWN_PRIVATE_PROC the child makes a mount namespace of its
 * own where it may (root, or CAP_SYS_ADMIN in its user namespace; else it
 * goes on in ours), with /proc a slave mount there, so that the mounts the
 * supervisor puts over /proc/uptime and /proc/stat (supervisor-procfs.c)
 * stay in it; and it execs only once tns_spawn_release() says the
 * supervisor has set them up. */
#define TNS_SPAWN_PRIVATE_PROC 0x1U
/* With TNS_SPAWN_NEWTIME the child unshares a kernel time namespace (zero
 * offsets) where it may (CAP_SYS_ADMIN; else it goes on in ours), which
 * its exec enters: the namespace the supervisor serves then has an
 * identity of its own, the kernel's (lib/kernel/kns.h). */
#define TNS_SPAWN_NEWTIME 0x2U
int tns_spawn_flags(const struct tns_filter *f, char *const argv[], unsigned flags, struct tns_child *ret,
                    enum tns_spawn_stage *ret_stage);
/* The same, and with time_fd >= 0 (an fd of a kernel time namespace) the
 * child enters that namespace (setns) instead of making one: the command
 * of a namespace joined again shows the same /proc/PID/ns/time. Where it
 * may not, it goes on as TNS_SPAWN_NEWTIME would have it. */
int tns_spawn_flags_time(const struct tns_filter *f, char *const argv[], unsigned flags, int time_fd,
                         struct tns_child *ret, enum tns_spawn_stage *ret_stage);
/* Lets a child started with TNS_SPAWN_PRIVATE_PROC go on to its exec;
 * closes c->release_fd. Nothing for a child started without. */
void tns_spawn_release(struct tns_child *c);

/* Waits for the exec of a child from tns_spawn(): 0 once it happened, or
 * -errno with *ret_stage (the child has been reaped then). Closes
 * c->exec_fd either way. */
int tns_spawn_wait_exec(struct tns_child *c, enum tns_spawn_stage *ret_stage);
