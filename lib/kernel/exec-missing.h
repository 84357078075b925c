/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether the file an exec names is missing, as the calling thread would
 * resolve it: from its root, working directory or fd. Told only where it
 * is certain and tells a member nothing: a caller with one thread (a
 * program let through that finds its file after all, because it appeared
 * or another thread rewrote the path, must meet no other thread of its
 * own that could make timensd take it for the old program: its first
 * arch_prctl then puts it on the syscall path), a path with no symlink,
 * found missing in the dentry cache alone, by a user with no groups, no
 * capability and an id no file has (so in directories every user may
 * search). */
#pragma once

#include <sys/types.h>

#include "exec-lookup.h"

/* 1 if the file `plan` names is missing for thread tid (ENOENT or
 * ENOTDIR: its exec is certain to fail), 0 if it is there or that cannot
 * be told here (more threads, a symlink, a directory not every user may
 * search, a path that leaves its base, a name not in the dentry cache, a
 * timensd that is not root). What /proc says is of tid only while the
 * caller knows tid is still its thread (a seccomp notification still
 * valid, checked after this). tid must be its thread group's leader. */
int tns_exec_file_missing(pid_t tid, const struct tns_exec_lookup *plan);
