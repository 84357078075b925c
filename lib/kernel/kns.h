/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's own time namespaces (5.6), seen from outside: which one a
 * task is in (the inode /proc/TID/ns/time names), and its offsets.
 *
 * timens pairs each of its namespaces with a kernel time namespace of its
 * own (timensctl run, unshare inside): the kernel gives the identity
 * (readlink, stat, lsns, setns targets) and runs the 5.6 interface
 * (/proc/PID/timens_offsets, time_for_children); we add the kernel's
 * offsets of the caller's namespace where we answer for the kernel (the
 * emulated syscalls, /proc/uptime, a timer armed on the caller's behalf).
 * The kernel's vDSO, which our image calls, adds them itself. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* tid 0 is the caller itself (/proc/self) throughout. */

/* The inode of /proc/TID/ns/time (for_children: time_for_children). */
int tns_kns_ino(pid_t tid, bool for_children, uint64_t *ret);

/* An O_RDONLY fd of it (holds the namespace, and so its inode number). */
int tns_kns_open(pid_t tid, bool for_children);

/* The monotonic and boottime offsets (ns) of the kernel time namespace
 * nsfd (an fd of tid's /proc/TID/ns/time), in ret[TNS_CLASS_*]:
 * /proc/TID/timens_offsets shows time_for_children's, so it is read there
 * when both are the same namespace; otherwise a forked helper enters nsfd
 * (setns: CAP_SYS_ADMIN) and reads its own. */
int tns_kns_offsets(pid_t tid, int nsfd, int64_t ret[3]);

/* The offsets of the kernel time namespace tid's children are born in
 * (the one it is in, unless it unshared): /proc/TID/timens_offsets. */
int tns_kns_children_offsets(pid_t tid, int64_t ret[3]);

/* The offsets of the caller's own kernel time namespace: what every clock
 * it reads already includes (a supervisor started inside unshare -T). */
int tns_kns_self_offsets(int64_t ret[3]);
