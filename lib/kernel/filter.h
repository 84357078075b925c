/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The seccomp filter, built with libseccomp from the syscall table, and
 * its installation in a child. */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>

#include "syscall-table.h"

struct tns_filter {
        struct sock_fprog prog; /* owns prog.filter */
};

/* Builds the filter from tns_syscalls[]: x86-64 entries notify the
 * supervisor under their argument conditions, i386 and x32 entries fail
 * with TNS_COMPAT_ERRNO, everything else is allowed. Done before fork, so
 * that the child only has to make one syscall. */
int tns_filter_build(struct tns_filter *ret);

/* Without the exec traps of the vDSO injection: the syscall path only. */
#define TNS_FILTER_NO_VDSO 0x1U
/* A rate-capable namespace's: relative waits (and every timer setting,
 * whose interval is a duration) are trapped too, so that a rate can make
 * them end when the namespace's clock says. Without it, a namespace
 * traps nothing more than absolute waits. */
#define TNS_FILTER_RATED 0x2U
int tns_filter_build_flags(unsigned flags, struct tns_filter *ret);
void tns_filter_done(struct tns_filter *f);

/* One rule of the native filter, as the table and the clock list make it:
 * syscall d notifies the supervisor when all its conditions hold (none:
 * always). A condition compares argument `arg`: == datum (EQ), (arg &
 * mask) == datum (MASKED_EQ), != datum (NE). The BPF builder and the OCI
 * seccomp profile (lib/oci/oci-config.c) both take their rules from here. */
enum tns_rule_cmp {
        TNS_RULE_EQ,
        TNS_RULE_MASKED_EQ,
        TNS_RULE_NE,
};

struct tns_filter_cond {
        unsigned arg;
        enum tns_rule_cmp cmp;
        uint64_t mask, datum;
};

#define TNS_RULE_MAX_CONDS 2

struct tns_filter_rule {
        const struct tns_syscall_desc *d;
        unsigned n_conds;
        struct tns_filter_cond conds[TNS_RULE_MAX_CONDS];
};

typedef int (*tns_filter_rule_fn)(const struct tns_filter_rule *rule, void *userdata);

/* Calls fn for each rule (flags as tns_filter_build_flags); stops at and
 * returns the first negative return of fn. */
int tns_filter_rules_foreach(unsigned flags, tns_filter_rule_fn fn, void *userdata);

/* Installs the filter in the calling thread and returns the listener fd.
 * Async-signal-safe (no allocation): meant for a child between fork and
 * exec. Sets no_new_privs only when the caller lacks CAP_SYS_ADMIN, so that
 * setuid programs inside keep working when root runs us.
 *
 * Flags: NEW_LISTENER, and WAIT_KILLABLE_RECV where the kernel has it
 * (5.19): once the supervisor has taken a call, a signal to the caller no
 * longer aborts it half-way, so an effect (a clock step, an unshare) is
 * never applied to a call that the kernel then restarts. */
int tns_filter_install(const struct tns_filter *f);

/* Sets SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP on a listener (6.6): the
 * supervisor and the caller then hand the CPU to each other directly.
 * Returns 1 if set, 0 if the kernel lacks it, -errno on other errors. */
int tns_listener_set_sync_wakeup(int fd);
