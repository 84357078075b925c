/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
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

/* One rule per allowed value of arg0: libseccomp ORs rules of one syscall.
 * An int argument is compared on its low 32 bits only, as the kernel
 * reads it: garbage in the upper half must not slip past the filter. */
static int clock_rules(const struct tns_syscall_desc *d, bool settable_only, tns_filter_rule_fn fn, void *userdata) {
        for (unsigned i = 0; i < tns_n_virtual_clocks; i++) {
                clockid_t c = tns_virtual_clocks[i];
                struct tns_filter_rule rule = {d, TNS_RULE_MASKED_EQ, UINT32_MAX, (uint64_t) c};
                int r;

                if (settable_only && !tns_clock_settable(c))
                        continue;
                r = fn(&rule, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int native_rules(const struct tns_syscall_desc *d, tns_filter_rule_fn fn, void *userdata) {
        switch (d->trap) {
        case TNS_TRAP_ALWAYS:
                return fn(&(struct tns_filter_rule){d, TNS_RULE_ALWAYS, 0, 0}, userdata);
        case TNS_TRAP_ARG0_VIRTUAL_CLOCK:
                return clock_rules(d, false, fn, userdata);
        case TNS_TRAP_ARG0_SETTABLE_CLOCK:
                return clock_rules(d, true, fn, userdata);
        case TNS_TRAP_ARG0_EQ:
                return fn(&(struct tns_filter_rule){d, TNS_RULE_EQ, UINT64_MAX, d->trap_value}, userdata);
        case TNS_TRAP_ARG0_EQ32:
                return fn(&(struct tns_filter_rule){d, TNS_RULE_MASKED_EQ, UINT32_MAX, d->trap_value}, userdata);
        }
        return -EINVAL;
}

int tns_filter_rules_foreach(unsigned flags, tns_filter_rule_fn fn, void *userdata) {
        for (size_t i = 0; i < _TNS_SYS_MAX; i++) {
                int r;

                if (tns_syscalls[i].vdso && (flags & TNS_FILTER_NO_VDSO))
                        continue;
                r = native_rules(&tns_syscalls[i], fn, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_native_rule(const struct tns_filter_rule *rule, void *userdata) {
        scmp_filter_ctx ctx = userdata;

        switch (rule->cmp) {
        case TNS_RULE_ALWAYS:
                return seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, rule->d->nr, 0);
        case TNS_RULE_EQ:
                return seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, rule->d->nr, 1, SCMP_A0(SCMP_CMP_EQ, rule->datum));
        case TNS_RULE_MASKED_EQ:
                return seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, rule->d->nr, 1,
                                        SCMP_A0(SCMP_CMP_MASKED_EQ, rule->mask, rule->datum));
        }
        return -EINVAL;
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
