/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whose processes an attach may take. timensd runs as root, and root may
 * ptrace anything; a member of its group is trusted to change clocks, not
 * to get root's powers over processes it does not own. So for a caller
 * that is not root, every thread of every process is checked as the
 * kernel's own ptrace access check (ptrace_may_access(),
 * PTRACE_MODE_ATTACH_REALCREDS) would check the caller, only stricter:
 *
 *   - every user and group id of the thread (real, effective, saved,
 *     filesystem) is the caller's: a setuid or setgid program is not;
 *   - the process is dumpable (/proc/PID is then owned by its euid/egid,
 *     otherwise by root: a program that ran setuid, or asked
 *     PR_SET_DUMPABLE 0, is not, until it drops its privileges for good);
 *   - it has no capability the caller's uid would not have: none in
 *     timensd's user namespace; in a user namespace the caller owns (a
 *     rootless container), any, as the caller has them all there too.
 *
 * attach.c reads these only while every thread of the process is in a
 * ptrace stop, and says there why that cannot race. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

struct tns_attach_owner {
        uid_t uid; /* the caller's (SO_PEERCRED): its effective ids */
        gid_t gid;
};

enum tns_userns {
        TNS_USERNS_OURS, /* timensd's own user namespace */
        TNS_USERNS_OWNED, /* one the owner created (directly below ours) */
        TNS_USERNS_OTHER, /* anyone else's */
};

struct tns_task_creds {
        uid_t uid[4]; /* real, effective, saved, filesystem */
        gid_t gid[4];
        uint64_t cap_prm; /* CapPrm: CapEff and CapAmb are within it */
        uid_t dump_uid; /* the owner of its /proc/PID (task_dump_owner()) */
        gid_t dump_gid;
        enum tns_userns userns;
};

/* Pure: NULL if owner may attach a thread with these credentials, else
 * why not, as a phrase for a message ("it runs as another user..."). */
const char *tns_attach_denied(const struct tns_task_creds *c, const struct tns_attach_owner *o);

/* Pure: the Uid:, Gid: and CapPrm: lines of a /proc/PID/status text;
 * -EBADMSG if one is missing. The other fields are left as they were. */
int tns_task_creds_parse(const char *status, struct tns_task_creds *c);

/* Reads the credentials of thread tid of the process whose /proc/PID
 * directory is procfd (opened with O_DIRECTORY), for owner_uid's check of
 * its user namespace. -ESRCH if it is gone. */
int tns_task_creds_read(int procfd, pid_t tid, uid_t owner_uid, struct tns_task_creds *ret);
