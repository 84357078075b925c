/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether the file an exec names is missing, as the calling thread would
 * resolve it: from its root, working directory or fd. Told only where it
 * is certain and tells a member nothing: a caller with one thread (a
 * program let through that finds its file after all, because it appeared
 * or another process rewrote the path, must meet no other thread of its
 * own that could make timensd take it for the old program: its first
 * arch_prctl then puts it on the syscall path), a path with no symlink
 * and no "..", found missing in the dentry cache alone, by a user with no
 * groups, no capability and an id no file has (so in directories every
 * user may search, whatever the member may).
 *
 * That user is an io_uring personality (struct tns_anyone): its
 * credentials are registered once, by a short-lived thread that takes
 * them, and each lookup is an IORING_OP_OPENAT2 run with them, with no
 * change of ours (a switch of this thread's fsuid, fsgid and groups
 * around each lookup cost 8.7 µs: the kernel's commit_creds() four
 * times). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "exec-lookup.h"

struct tns_anyone;

/* The ring and its personality: 0, or -errno where they cannot be had
 * (not root, io_uring refused by a seccomp profile or by
 * kernel.io_uring_disabled, no RESOLVE_CACHED): nothing is told then. */
int tns_anyone_new(struct tns_anyone **ret);
struct tns_anyone *tns_anyone_free(struct tns_anyone *a);

/* Whether tid is its group's only thread: asked first, before the path
 * is read (the exec of a Go or Java program, never told, pays one stat),
 * and only a tid it said alone is asked about below. Alone it stays: its
 * one thread waits in its execve, and only a thread of a group makes
 * another in it. */
bool tns_exec_caller_alone(pid_t tid);

/* 1 if the file `plan` names is missing for thread tid, which
 * tns_exec_caller_alone() said alone (ENOENT: its exec is certain to
 * fail), 0 if it is there or that cannot be told here (no ring, a
 * symlink, a directory not every user may search, a name not in the
 * dentry cache, a path through a file). What /proc says is of tid only
 * while the caller knows tid is still its thread (a seccomp notification
 * still valid, checked after this). */
int tns_exec_file_missing(struct tns_anyone *a, pid_t tid, const struct tns_exec_lookup *plan);
