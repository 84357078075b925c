/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one table of the syscalls timens intercepts: the seccomp filter is
 * built from it, the supervisor dispatches with it, the docs and the
 * errno-table test list what it lists. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum tns_sys {
        TNS_SYS_CLOCK_GETTIME,
        TNS_SYS_GETTIMEOFDAY,
        TNS_SYS_TIME,
        TNS_SYS_CLOCK_SETTIME,
        TNS_SYS_SETTIMEOFDAY,
        TNS_SYS_ADJTIMEX,
        TNS_SYS_CLOCK_ADJTIME,
        TNS_SYS_UNSHARE,
        TNS_SYS_EXECVE,
        TNS_SYS_EXECVEAT,
        TNS_SYS_CLOCK_NANOSLEEP,
        TNS_SYS_TIMER_SETTIME,
        TNS_SYS_TIMERFD_SETTIME,
        TNS_SYS_FUTEX,
        TNS_SYS_FUTEX_WAITV,
        TNS_SYS_FUTEX_WAIT,
        TNS_SYS_MQ_TIMEDSEND,
        TNS_SYS_MQ_TIMEDRECEIVE,
        TNS_SYS_SYSINFO,
        /* Relative waits: trapped only in rate-capable namespaces
         * (TNS_FILTER_RATED), converted only when a rate is set. */
        TNS_SYS_NANOSLEEP,
        TNS_SYS_POLL,
        TNS_SYS_PPOLL,
        TNS_SYS_SELECT,
        TNS_SYS_PSELECT6,
        TNS_SYS_EPOLL_WAIT,
        TNS_SYS_EPOLL_PWAIT,
        TNS_SYS_EPOLL_PWAIT2,
        TNS_SYS_RT_SIGTIMEDWAIT,
        TNS_SYS_SEMTIMEDOP,
        TNS_SYS_IO_GETEVENTS,
        TNS_SYS_IO_PGETEVENTS,
        TNS_SYS_SETITIMER,
        TNS_SYS_ALARM,
        TNS_SYS_TIMERFD_GETTIME,
        TNS_SYS_GETITIMER,
        TNS_SYS_TIMER_GETTIME,
        TNS_SYS_SETNS,
        TNS_SYS_ARCH_PRCTL,
        /* File times set to "now" (lib/core/file-times.h). */
        TNS_SYS_UTIMENSAT,
        TNS_SYS_UTIMES,
        TNS_SYS_FUTIMESAT,
        TNS_SYS_UTIME,
        _TNS_SYS_MAX,
};

/* When the filter sends a call to the supervisor. Anything it does not
 * send runs in the kernel unchanged, which is correct by construction for
 * those arguments (e.g. CPU-time clocks, invalid clock ids: the kernel's
 * own EINVAL is the namespace's EINVAL). */
enum tns_trap {
        TNS_TRAP_ALWAYS,
        TNS_TRAP_ARG0_VIRTUAL_CLOCK, /* arg0 is a clock id the namespace shifts */
        TNS_TRAP_ARG0_SETTABLE_CLOCK, /* arg0 is a clock id clock_settime may set here */
        TNS_TRAP_ARG0_EQ, /* arg0 == trap_value (all 64 bits) */
        TNS_TRAP_ARG0_EQ32, /* (u32) arg0 == trap_value: an int argument */
        TNS_TRAP_ARG0_HAS, /* arg0 has every bit of trap_value */
        /* Absolute waits (lib/core/wait-convert.h says which): */
        TNS_TRAP_ABS_SLEEP, /* arg0 a clock a sleep shifts, arg1 & TIMER_ABSTIME */
        TNS_TRAP_ARG1_ABSTIME, /* arg1 & TIMER_ABSTIME (the timer's clock is not an argument) */
        TNS_TRAP_FUTEX_ABS, /* an op with an absolute timeout, and a timeout */
        TNS_TRAP_TIMEOUT_CLOCK, /* arg[trap_value] != 0, arg[trap_value + 1] MONOTONIC or REALTIME */
        TNS_TRAP_TIMEOUT, /* arg[trap_value] != 0: an absolute CLOCK_REALTIME timeout */
        /* Relative waits of rate-capable namespaces only: */
        TNS_TRAP_RATED_ARG, /* arg[trap_value] != 0 (a timeout pointer, or a nonzero count) */
        TNS_TRAP_RATED_ARG0_EQ, /* (u32) arg0 == trap_value (setitimer: ITIMER_REAL) */
        TNS_TRAP_RATED_ALWAYS, /* every call (alarm: alarm(0) returns the time left, the namespace's) */
        TNS_TRAP_ARG1_HAS_OR_ZERO, /* (u32) arg1 has the bits of trap_value, or is 0 */
};

#define TNS_MAX_COMPAT_NAMES 3

struct tns_syscall_desc {
        enum tns_sys id;
        const char *name; /* as libseccomp and the x86-64 ABI name it */
        int nr; /* x86-64 number */
        enum tns_trap trap;
        uint64_t trap_value;
        /* i386 syscalls with the same meaning: the filter makes them fail
         * with TNS_COMPAT_ERRNO whatever their arguments, because 32-bit
         * programs are not emulated and must never read (or set) the
         * host's time silently. x32 uses the 64-bit names. */
        const char *i386_names[TNS_MAX_COMPAT_NAMES];
        /* Trapped only to inject our vDSO: left out of the filter with
         * TNS_FILTER_NO_VDSO. */
        bool vdso;
        /* An absolute wait, or a call that sets file times: served by
         * lib/supervisor/supervisor-wait.c. */
        bool wait;
        /* Trapped only in the filter of a rate-capable namespace
         * (TNS_FILTER_RATED): a relative wait that a rate changes. */
        bool rated;
};

extern const struct tns_syscall_desc tns_syscalls[_TNS_SYS_MAX];

/* The errno the filter gives the i386/x32 entries of these syscalls. */
#define TNS_COMPAT_ERRNO ENOSYS

/* Lookup by x86-64 syscall number; NULL if not intercepted. */
const struct tns_syscall_desc *tns_syscall_by_nr(int nr);
