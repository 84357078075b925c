/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clocks.h"
#include "filter.h"
#include "syscall-table.h"
#include "util.h"

/* Newer than Debian 12's kernel headers. */
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static void seccomp_releasep(scmp_filter_ctx *ctx) {
        if (*ctx)
                seccomp_release(*ctx);
}
#define _cleanup_seccomp_ _cleanup_(seccomp_releasep)

/* The child decides about no_new_privs itself; the library must not. */
static int new_ctx(scmp_filter_ctx *ret) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        int r;

        if (!ctx)
                return -ENOMEM;
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0) {
                seccomp_release(ctx);
                return r;
        }
        *ret = ctx;
        return 0;
}

#define COND(a, c, m, v) ((struct tns_filter_cond){.arg = (a), .cmp = (c), .mask = (m), .datum = (v)})
#define RULE1(d, c0) ((struct tns_filter_rule){(d), 1, {c0}})
#define RULE2(d, c0, c1) ((struct tns_filter_rule){(d), 2, {c0, c1}})

/* One rule per allowed value of arg0: libseccomp ORs rules of one syscall.
 * An int argument is compared on its low 32 bits only, as the kernel
 * reads it: garbage in the upper half must not slip past the filter. */
static int clock_rules(const struct tns_syscall_desc *d, bool settable_only, tns_filter_rule_fn fn, void *userdata) {
        for (unsigned i = 0; i < tns_n_virtual_clocks; i++) {
                clockid_t c = tns_virtual_clocks[i];
                int r;

                if (settable_only && !tns_clock_settable(c))
                        continue;
                r = fn(&RULE1(d, COND(0, TNS_RULE_MASKED_EQ, UINT32_MAX, (uint64_t) c)), userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Absolute waits only (lib/core/wait-convert.h): relative sleeps and waits
 * without a timeout run in the kernel without a round trip. */
static const clockid_t wait_clocks[] = {CLOCK_REALTIME,       CLOCK_MONOTONIC,      CLOCK_BOOTTIME,
                                        CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM, CLOCK_TAI};
/* The futex ops with an absolute timeout (futex_init_timeout()); the
 * private and clock flags are the only bits the op may have besides. */
static const int futex_abs_cmds[] = {FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI, FUTEX_LOCK_PI, 13 /* LOCK_PI2 */};
#define ABSTIME_BIT 1 /* TIMER_ABSTIME, TFD_TIMER_ABSTIME */
#define FUTEX_CMD_MASK32 (UINT32_MAX & ~(uint64_t) (FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))

static int wait_rules(const struct tns_syscall_desc *d, tns_filter_rule_fn fn, void *userdata) {
        const struct tns_filter_cond abs = COND(1, TNS_RULE_MASKED_EQ, ABSTIME_BIT, ABSTIME_BIT);
        unsigned a = (unsigned) d->trap_value;
        int r = 0;

        switch (d->trap) {
        case TNS_TRAP_ABS_SLEEP:
                for (size_t i = 0; i < ELEMENTSOF(wait_clocks) && r >= 0; i++)
                        r = fn(&RULE2(d, COND(0, TNS_RULE_MASKED_EQ, UINT32_MAX, (uint64_t) wait_clocks[i]), abs),
                               userdata);
                return r;
        case TNS_TRAP_ARG1_ABSTIME:
                return fn(&RULE1(d, abs), userdata);
        case TNS_TRAP_FUTEX_ABS:
                for (size_t i = 0; i < ELEMENTSOF(futex_abs_cmds) && r >= 0; i++)
                        r = fn(&RULE2(d, COND(1, TNS_RULE_MASKED_EQ, FUTEX_CMD_MASK32, (uint64_t) futex_abs_cmds[i]),
                                      COND(3, TNS_RULE_NE, 0, 0)),
                               userdata);
                return r;
        case TNS_TRAP_TIMEOUT_CLOCK:
                for (clockid_t c = CLOCK_REALTIME; c <= CLOCK_MONOTONIC && r >= 0; c++)
                        r = fn(&RULE2(d, COND(a, TNS_RULE_NE, 0, 0),
                                      COND(a + 1, TNS_RULE_MASKED_EQ, UINT32_MAX, (uint64_t) c)),
                               userdata);
                return r;
        case TNS_TRAP_TIMEOUT:
                return fn(&RULE1(d, COND(a, TNS_RULE_NE, 0, 0)), userdata);
        case TNS_TRAP_RATED_ARG:
                return fn(&RULE1(d, COND(a, TNS_RULE_NE, 0, 0)), userdata);
        case TNS_TRAP_RATED_ARG0_EQ:
                return fn(&RULE1(d, COND(0, TNS_RULE_MASKED_EQ, UINT32_MAX, d->trap_value)), userdata);
        case TNS_TRAP_RATED_ALWAYS:
                return fn(&(struct tns_filter_rule){d, 0, {}}, userdata);
        default:
                return -EINVAL;
        }
}

/* A rate-capable namespace's extra rules on the absolute-wait syscalls:
 * their relative forms (a sleep without TIMER_ABSTIME, a timer set
 * relative, or any timer's interval) and FUTEX_WAIT's relative timeout. */
static int rated_rules(const struct tns_syscall_desc *d, tns_filter_rule_fn fn, void *userdata) {
        const struct tns_filter_cond rel = COND(1, TNS_RULE_MASKED_EQ, ABSTIME_BIT, 0);
        int r = 0;

        switch (d->id) {
        case TNS_SYS_CLOCK_NANOSLEEP:
                for (size_t i = 0; i < ELEMENTSOF(wait_clocks) && r >= 0; i++)
                        r = fn(&RULE2(d, COND(0, TNS_RULE_MASKED_EQ, UINT32_MAX, (uint64_t) wait_clocks[i]), rel),
                               userdata);
                return r;
        case TNS_SYS_TIMER_SETTIME:
        case TNS_SYS_TIMERFD_SETTIME:
                return fn(&RULE1(d, rel), userdata);
        case TNS_SYS_FUTEX:
                return fn(&RULE2(d, COND(1, TNS_RULE_MASKED_EQ, FUTEX_CMD_MASK32, FUTEX_WAIT),
                                 COND(3, TNS_RULE_NE, 0, 0)),
                          userdata);
        default:
                return 0;
        }
}

static int native_rules(const struct tns_syscall_desc *d, tns_filter_rule_fn fn, void *userdata) {
        switch (d->trap) {
        case TNS_TRAP_ALWAYS:
                return fn(&(struct tns_filter_rule){d, 0, {}}, userdata);
        case TNS_TRAP_ARG0_VIRTUAL_CLOCK:
                return clock_rules(d, false, fn, userdata);
        case TNS_TRAP_ARG0_SETTABLE_CLOCK:
                return clock_rules(d, true, fn, userdata);
        case TNS_TRAP_ARG0_EQ:
                return fn(&RULE1(d, COND(0, TNS_RULE_EQ, UINT64_MAX, d->trap_value)), userdata);
        case TNS_TRAP_ARG0_EQ32:
                return fn(&RULE1(d, COND(0, TNS_RULE_MASKED_EQ, UINT32_MAX, d->trap_value)), userdata);
        case TNS_TRAP_ARG0_HAS:
                return fn(&RULE1(d, COND(0, TNS_RULE_MASKED_EQ, d->trap_value, d->trap_value)), userdata);
        case TNS_TRAP_ARG1_HAS_OR_ZERO: {
                int r = fn(&RULE1(d, COND(1, TNS_RULE_MASKED_EQ, d->trap_value, d->trap_value)), userdata);

                return r < 0 ? r : fn(&RULE1(d, COND(1, TNS_RULE_MASKED_EQ, UINT32_MAX, 0)), userdata);
        }
        default:
                return wait_rules(d, fn, userdata);
        }
}

int tns_filter_rules_foreach(unsigned flags, tns_filter_rule_fn fn, void *userdata) {
        for (size_t i = 0; i < _TNS_SYS_MAX; i++) {
                int r;

                if (tns_syscalls[i].vdso && (flags & TNS_FILTER_NO_VDSO))
                        continue;
                if (tns_syscalls[i].rated && !(flags & TNS_FILTER_RATED))
                        continue;
                r = native_rules(&tns_syscalls[i], fn, userdata);
                if (r >= 0 && (flags & TNS_FILTER_RATED))
                        r = rated_rules(&tns_syscalls[i], fn, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

static struct scmp_arg_cmp scmp_cond(const struct tns_filter_cond *c) {
        switch (c->cmp) {
        case TNS_RULE_EQ:
                return SCMP_CMP(c->arg, SCMP_CMP_EQ, c->datum);
        case TNS_RULE_NE:
                return SCMP_CMP(c->arg, SCMP_CMP_NE, c->datum);
        default:
                return SCMP_CMP(c->arg, SCMP_CMP_MASKED_EQ, c->mask, c->datum);
        }
}

static int add_native_rule(const struct tns_filter_rule *rule, void *userdata) {
        struct scmp_arg_cmp cmps[TNS_RULE_MAX_CONDS];
        scmp_filter_ctx ctx = userdata;

        if (rule->n_conds > TNS_RULE_MAX_CONDS)
                return -EINVAL;
        for (unsigned i = 0; i < rule->n_conds; i++)
                cmps[i] = scmp_cond(&rule->conds[i]);
        return seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, rule->d->nr, rule->n_conds, cmps);
}

static int build_native(unsigned flags, scmp_filter_ctx *ret) {
        _cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
        int r;

        r = new_ctx(&ctx);
        if (r < 0)
                return r;
        r = tns_filter_rules_foreach(flags, add_native_rule, ctx);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(ctx);
        return 0;
}

/* i386 and x32: names are resolved per architecture by libseccomp; a name
 * an architecture lacks (clock_gettime64 on x32) is skipped by it. */
static int build_compat(scmp_filter_ctx *ret) {
        _cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
        int r;

        r = new_ctx(&ctx);
        if (r < 0)
                return r;
        if ((r = seccomp_arch_add(ctx, SCMP_ARCH_X86)) < 0 || (r = seccomp_arch_add(ctx, SCMP_ARCH_X32)) < 0 ||
            (r = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE)) < 0)
                return r;
        for (size_t i = 0; i < _TNS_SYS_MAX; i++)
                for (size_t j = 0; j < TNS_MAX_COMPAT_NAMES && tns_syscalls[i].i386_names[j]; j++) {
                        int nr = seccomp_syscall_resolve_name(tns_syscalls[i].i386_names[j]);

                        if (nr == __NR_SCMP_ERROR)
                                return -ENOENT;
                        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(TNS_COMPAT_ERRNO), nr, 0);
                        if (r < 0)
                                return r;
                }
        *ret = TAKE_PTR(ctx);
        return 0;
}

/* The BPF program, taken out of libseccomp once so that the child needs
 * neither allocation nor the library after fork. */
static int export_prog(scmp_filter_ctx ctx, struct tns_filter *ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ struct sock_filter *insns = NULL;
        off_t size;
        int r;

        fd = memfd_create("timens-filter", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        size = lseek(fd, 0, SEEK_END);
        if (size <= 0 || size % sizeof(struct sock_filter) != 0 || size / sizeof(struct sock_filter) > BPF_MAXINSNS)
                return -EINVAL;
        insns = malloc(size);
        if (!insns)
                return -ENOMEM;
        if (pread(fd, insns, size, 0) != size)
                return -EIO;
        ret->prog.len = size / sizeof(struct sock_filter);
        ret->prog.filter = TAKE_PTR(insns);
        return 0;
}

int tns_filter_build(struct tns_filter *ret) {
        return tns_filter_build_flags(0, ret);
}

int tns_filter_build_flags(unsigned flags, struct tns_filter *ret) {
        _cleanup_seccomp_ scmp_filter_ctx native = NULL, compat = NULL;
        int r;

        r = build_native(flags, &native);
        if (r < 0)
                return r;
        r = build_compat(&compat);
        if (r < 0)
                return r;
        r = seccomp_merge(native, compat);
        if (r < 0)
                return r;
        compat = NULL; /* seccomp_merge() consumed it */
        return export_prog(native, ret);
}

void tns_filter_done(struct tns_filter *f) {
        free(f->prog.filter);
        f->prog = (struct sock_fprog){};
}

static bool have_cap_sys_admin(void) {
        /* capget without libcap: version 3, two 32-bit words. */
        struct {
                uint32_t version;
                int pid;
        } hdr = {0x20080522, 0};
        struct {
                uint32_t effective, permitted, inheritable;
        } data[2] = {};

        if (syscall(SYS_capget, &hdr, data) < 0)
                return false;
        return data[0].effective & (1U << 21);
}

int tns_filter_install(const struct tns_filter *f) {
        unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
        long fd;

        if (!have_cap_sys_admin() && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &f->prog);
        if (fd < 0 && errno == EINVAL) {
                flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
                fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &f->prog);
        }
        return fd < 0 ? negative_errno() : (int) fd;
}

int tns_listener_set_sync_wakeup(int fd) {
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (uint64_t) SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) >= 0)
                return 1;
        if (errno == EINVAL || errno == ENOTTY)
                return 0;
        return negative_errno();
}
