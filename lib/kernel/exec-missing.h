/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether the file an exec names is missing, as the calling thread would
 * resolve it: from its root, working directory or fd. timensd is root: a
 * lookup with root's powers alone would tell a member, by the time its
 * failed exec takes, whether a file exists in a directory it may not
 * search. So a file root does not find is looked up again as a user with
 * no groups and an id no file has (for this thread only), and called
 * missing only if that user does not find it either. */
#pragma once

#include <sys/types.h>

#include "exec-lookup.h"

/* 1 if the file `plan` names is missing for thread tid (ENOENT or
 * ENOTDIR: its exec is certain to fail), 0 if it is there or that cannot
 * be told here (a symlink in a relative path, a directory not every user
 * may search, a path that leaves its base), -errno (-ESRCH: gone). What /proc
 * says is of tid only while the caller knows tid is still its thread (a
 * seccomp notification still valid, checked after this). */
int tns_exec_file_missing(pid_t tid, const struct tns_exec_lookup *plan);
