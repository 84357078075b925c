/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Processes named by pidfd, for the checks timensd makes of who asks:
 * a pid read once can be recycled, a pidfd cannot. Every answer here is
 * taken from a pidfd and is only good while that pidfd's process lives,
 * so a caller that acts on it checks tns_pidfd_alive() afterwards. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* A process's ids (PIDFD_GET_INFO, Linux 6.13; /proc/PID/status before,
 * checked against the pidfd after the read). */
struct tns_pidfd_info {
        pid_t pid; /* in our pid namespace */
        pid_t ppid; /* 0 if the parent is outside our pid namespace */
        uid_t ruid, euid, suid, fsuid;
        gid_t rgid, egid, sgid, fsgid;
};

/* A pidfd of pid (O_CLOEXEC is implied), or -errno (-ESRCH: no such pid). */
int tns_pidfd_open(pid_t pid);

/* Whether pid names a thread, its process's leader included: after
 * tns_pidfd_open(pid) failed, true tells a thread that does not lead its
 * process (pidfd_open refuses those without PIDFD_THREAD). */
bool tns_pidfd_is_thread(pid_t pid);

/* The pid behind a pidfd, from its fdinfo ("Pid:\t123"): 0 if gone or
 * not a pidfd. */
pid_t tns_pidfd_pid(int pidfd);

/* Whether the process of pidfd still runs (a zombie counts as gone). */
bool tns_pidfd_alive(int pidfd);

/* -ESRCH if the process is gone. */
int tns_pidfd_get_info(int pidfd, struct tns_pidfd_info *ret);

/* Whether every uid and gid of the process is uid / gid. */
bool tns_pidfd_info_owned_by(const struct tns_pidfd_info *info, uid_t uid, gid_t gid);

/* 1 if the process of pidfd is a descendant of process ancestor (not the
 * process itself), 0 if not, -errno (-ESRCH: it exited meanwhile). Each
 * link of the parent chain is read from a pidfd and checked again once
 * the parent's pidfd is open, so a parent that exits and whose pid is
 * reused during the walk is not mistaken for the old one; the caller
 * checks that ancestor is still the process it means (its own pidfd is
 * alive) after this returns. */
int tns_pidfd_is_descendant(int pidfd, pid_t ancestor);

/* The mount namespace of a process as an fd (PIDFD_GET_MNT_NAMESPACE,
 * Linux 6.11; /proc/PID/ns/mnt checked against the pidfd before). */
int tns_pidfd_mnt_ns(int pidfd);

/* The kernel time namespace the process is in, the same way (PIDFD_GET_TIME_NAMESPACE). */
int tns_pidfd_time_ns(int pidfd);

/* Whether two namespace fds name the same namespace: 1, 0 or -errno. */
int tns_ns_fd_same(int a, int b);

/* The user namespace thread tid is in, seen from ours: *ret_ours if it is
 * ours, else in *ret_owner the uid that made it (NS_GET_OWNER_UID, in our
 * namespace's ids). Read through /proc/TID/ns/user: a caller that means a
 * notification's thread checks ID_VALID after. */
int tns_userns_of(pid_t tid, bool *ret_ours, uid_t *ret_owner);

/* The uid that owns the user namespace owning namespace fd ns_fd
 * (NS_GET_USERNS, NS_GET_OWNER_UID: ioctl_ns(2)); 0 for the initial one. */
int tns_ns_fd_owner_uid(int ns_fd, uid_t *ret);
