/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The syscall emulation: pure functions from (syscall, arguments,
 * namespace state, host clock, the target's input memory) to (return
 * value or errno, the bytes to write into the target, the change to make
 * to the namespace). Nothing here touches a process: the supervisor reads
 * and writes target memory and applies the effect; unit tests and the
 * fuzz target drive it with plain buffers.
 *
 * Each handler follows the kernel's own order of checks (EFAULT before
 * EINVAL before EPERM, as kernel/time/posix-timers.c, time.c and
 * timekeeping.c do them), so a program sees the errno it would see on a
 * bare kernel. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/timex.h>

#include "offsets-page.h"
#include "rate.h"
#include "syscall-table.h"

_Static_assert(sizeof(struct timex) == 208, "struct timex is the kernel's __kernel_timex on x86-64");

/* What the emulation may ask of the world, each returning 0 or -errno. */
struct tns_emu_env {
        /* The host's clock (the supervisor: clock_gettime). */
        int (*clock_gettime)(void *userdata, clockid_t id, struct timespec *ret);
        /* A read-only adjtimex on the host (modes 0 or ADJ_OFFSET_SS_READ):
         * returns the clock state (TIME_OK, ...) and fills *tx. */
        int (*adjtimex_read)(void *userdata, struct timex *tx);
        /* The host's timezone (sys_tz). */
        void (*host_tz)(void *userdata, struct timezone *ret);
        /* Reads len bytes of the target at addr: -EFAULT for a bad address. */
        int (*read_mem)(void *userdata, uint64_t addr, void *buf, size_t len);
        /* The target's effective capabilities (CapEff), in its own user
         * namespace. */
        int (*capabilities)(void *userdata, uint64_t *ret);
        void *userdata;
};

/* The namespace as a syscall in it sees it. */
struct tns_emu_state {
        /* Rated: the namespace clock is base[c](host) + offset, base being
         * its root's rate map (lib/kernel/ns.h); else host + offset. A set
         * clock keeps the rate: only the offset changes. */
        bool rated;
        struct tns_rate_map base[TNS_CLASS_MAX];
        int64_t offset[TNS_CLASS_MAX]; /* effective: base(host) + offset = namespace clock */
        bool tz_set; /* settimeofday() gave the namespace a timezone */
        struct timezone tz;
};

#define TNS_EMU_MAX_WRITES 2
#define TNS_EMU_MAX_WRITE_SIZE sizeof(struct timex)

struct tns_emu_write {
        uint64_t addr;
        uint32_t len;
        unsigned char data[TNS_EMU_MAX_WRITE_SIZE];
};

struct tns_emu_result {
        int64_t ret; /* the syscall's return value, or -errno */
        /* Writes into the target, in order; the first that fails ends the
         * call with -EFAULT, as copy_to_user would (later ones are not done). */
        unsigned n_writes;
        struct tns_emu_write writes[TNS_EMU_MAX_WRITES];
        /* The change to the namespace, applied before the writes (the
         * kernel, too, changes the clock before it copies results out). */
        bool set_offset[TNS_CLASS_MAX];
        int64_t new_offset[TNS_CLASS_MAX]; /* effective offset to set */
        bool set_tz;
        struct timezone new_tz;
        bool unshare; /* move the caller into a new child namespace */
};

/* Capability bits, from <linux/capability.h>. */
#define TNS_CAP_SYS_ADMIN 21
#define TNS_CAP_SYS_TIME 25

/* Emulates one call. Returns 0 when *ret describes the outcome (including
 * a syscall error in ret->ret), or -errno if the emulation itself could
 * not run (a host clock read failed unexpectedly): the supervisor then
 * fails the call with that errno. */
int tns_emulate(enum tns_sys sys, const uint64_t args[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                struct tns_emu_result *ret);
