/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sched.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>

#include "syscall-table.h"
#include "util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

const struct tns_syscall_desc tns_syscalls[_TNS_SYS_MAX] = {
        [TNS_SYS_CLOCK_GETTIME] =
                {
                        TNS_SYS_CLOCK_GETTIME,
                        "clock_gettime",
                        SYS_clock_gettime,
                        TNS_TRAP_ARG0_VIRTUAL_CLOCK,
                        0,
                        {"clock_gettime", "clock_gettime64"},
                },
        [TNS_SYS_GETTIMEOFDAY] =
                {
                        TNS_SYS_GETTIMEOFDAY,
                        "gettimeofday",
                        SYS_gettimeofday,
                        TNS_TRAP_ALWAYS,
                        0,
                        {"gettimeofday"},
                },
        [TNS_SYS_TIME] =
                {
                        TNS_SYS_TIME,
                        "time",
                        SYS_time,
                        TNS_TRAP_ALWAYS,
                        0,
                        {"time"},
                },
        [TNS_SYS_CLOCK_SETTIME] =
                {
                        TNS_SYS_CLOCK_SETTIME,
                        "clock_settime",
                        SYS_clock_settime,
                        TNS_TRAP_ARG0_SETTABLE_CLOCK,
                        0,
                        {"clock_settime", "clock_settime64", "stime"},
                },
        /* Always: even a timezone-only call would change the host's sys_tz. */
        [TNS_SYS_SETTIMEOFDAY] =
                {
                        TNS_SYS_SETTIMEOFDAY,
                        "settimeofday",
                        SYS_settimeofday,
                        TNS_TRAP_ALWAYS,
                        0,
                        {"settimeofday"},
                },
        [TNS_SYS_ADJTIMEX] =
                {
                        TNS_SYS_ADJTIMEX,
                        "adjtimex",
                        SYS_adjtimex,
                        TNS_TRAP_ALWAYS,
                        0,
                        {"adjtimex"},
                },
        /* Only CLOCK_REALTIME has a clock_adj in the kernel; the others'
         * EOPNOTSUPP/EINVAL come from the kernel itself. */
        [TNS_SYS_CLOCK_ADJTIME] =
                {
                        TNS_SYS_CLOCK_ADJTIME,
                        "clock_adjtime",
                        SYS_clock_adjtime,
                        TNS_TRAP_ARG0_EQ32,
                        CLOCK_REALTIME,
                        {"clock_adjtime", "clock_adjtime64"},
                },
        /* Every flag word with CLONE_NEWTIME (unshare -U -r -T gives one
         * call): followed, the kernel runs it (supervisor.c). */
        [TNS_SYS_UNSHARE] =
                {
                        TNS_SYS_UNSHARE,
                        "unshare",
                        SYS_unshare,
                        TNS_TRAP_ARG0_HAS,
                        CLONE_NEWTIME,
                        {NULL},
                },
        /* Every exec: the new program gets our vDSO before it runs (inject.h).
         * An i386 execve (int $0x80 from a 64-bit program) is not trapped:
         * timens is no sandbox, and denying it would break every 32-bit
         * program's exec. */
        [TNS_SYS_EXECVE] =
                {.id = TNS_SYS_EXECVE, .name = "execve", .nr = SYS_execve, .trap = TNS_TRAP_ALWAYS, .vdso = true},
        [TNS_SYS_EXECVEAT] =
                {.id = TNS_SYS_EXECVEAT, .name = "execveat", .nr = SYS_execveat, .trap = TNS_TRAP_ALWAYS, .vdso = true},
        /* Absolute waits, converted by lib/supervisor/supervisor-wait.c. Relative
         * ones and waits without a timeout never reach the supervisor. No
         * i386 names: a 32-bit program's waits run unconverted rather than
         * fail (its futexes are its locks). */
        [TNS_SYS_CLOCK_NANOSLEEP] = {.id = TNS_SYS_CLOCK_NANOSLEEP,
                                     .name = "clock_nanosleep",
                                     .nr = SYS_clock_nanosleep,
                                     .trap = TNS_TRAP_ABS_SLEEP,
                                     .wait = true},
        [TNS_SYS_TIMER_SETTIME] = {.id = TNS_SYS_TIMER_SETTIME,
                                   .name = "timer_settime",
                                   .nr = SYS_timer_settime,
                                   .trap = TNS_TRAP_ARG1_ABSTIME,
                                   .wait = true},
        [TNS_SYS_TIMERFD_SETTIME] = {.id = TNS_SYS_TIMERFD_SETTIME,
                                     .name = "timerfd_settime",
                                     .nr = SYS_timerfd_settime,
                                     .trap = TNS_TRAP_ARG1_ABSTIME,
                                     .wait = true},
        [TNS_SYS_FUTEX] =
                {.id = TNS_SYS_FUTEX, .name = "futex", .nr = SYS_futex, .trap = TNS_TRAP_FUTEX_ABS, .wait = true},
        [TNS_SYS_FUTEX_WAITV] = {.id = TNS_SYS_FUTEX_WAITV,
                                 .name = "futex_waitv",
                                 .nr = 449, /* __NR_futex_waitv, newer than Debian 12's headers */
                                 .trap = TNS_TRAP_TIMEOUT_CLOCK,
                                 .trap_value = 3,
                                 .wait = true},
        [TNS_SYS_FUTEX_WAIT] = {.id = TNS_SYS_FUTEX_WAIT,
                                .name = "futex_wait",
                                .nr = 455, /* __NR_futex_wait (Linux 6.7) */
                                .trap = TNS_TRAP_TIMEOUT_CLOCK,
                                .trap_value = 4,
                                .wait = true},
        /* POSIX message queues: an absolute CLOCK_REALTIME timeout
         * (do_mq_timedsend, ipc/mqueue.c), which only the realtime offset
         * moves. */
        [TNS_SYS_MQ_TIMEDSEND] = {.id = TNS_SYS_MQ_TIMEDSEND,
                                  .name = "mq_timedsend",
                                  .nr = SYS_mq_timedsend,
                                  .trap = TNS_TRAP_TIMEOUT,
                                  .trap_value = 4,
                                  .wait = true},
        [TNS_SYS_MQ_TIMEDRECEIVE] = {.id = TNS_SYS_MQ_TIMEDRECEIVE,
                                     .name = "mq_timedreceive",
                                     .nr = SYS_mq_timedreceive,
                                     .trap = TNS_TRAP_TIMEOUT,
                                     .trap_value = 4,
                                     .wait = true},
        /* Its uptime is the namespace's boottime (kernel/sys.c do_sysinfo);
         * a rare call, trapped whole (lib/supervisor/supervisor-procfs.c). */
        [TNS_SYS_SYSINFO] = {.id = TNS_SYS_SYSINFO,
                             .name = "sysinfo",
                             .nr = SYS_sysinfo,
                             .trap = TNS_TRAP_ALWAYS,
                             .i386_names = {"sysinfo"}},
/* Relative waits (lib/core/wait-convert.h, tns_wait_classify_rated):
         * in a namespace whose clocks run at a rate, their timeouts are
         * durations of its clocks. Only where it is rate-capable. */
#define RATED(ID, NAME, NR, ARG)                                                                                       \
        [ID] = {.id = ID,                                                                                              \
                .name = NAME,                                                                                          \
                .nr = NR,                                                                                              \
                .trap = TNS_TRAP_RATED_ARG,                                                                            \
                .trap_value = ARG,                                                                                     \
                .wait = true,                                                                                          \
                .rated = true}
        RATED(TNS_SYS_NANOSLEEP, "nanosleep", SYS_nanosleep, 0),
        RATED(TNS_SYS_POLL, "poll", SYS_poll, 2),
        RATED(TNS_SYS_PPOLL, "ppoll", SYS_ppoll, 2),
        RATED(TNS_SYS_SELECT, "select", SYS_select, 4),
        RATED(TNS_SYS_PSELECT6, "pselect6", SYS_pselect6, 4),
        RATED(TNS_SYS_EPOLL_WAIT, "epoll_wait", SYS_epoll_wait, 3),
        RATED(TNS_SYS_EPOLL_PWAIT, "epoll_pwait", SYS_epoll_pwait, 3),
        RATED(TNS_SYS_EPOLL_PWAIT2, "epoll_pwait2", 441 /* newer than Debian 12's headers */, 3),
        RATED(TNS_SYS_RT_SIGTIMEDWAIT, "rt_sigtimedwait", SYS_rt_sigtimedwait, 2),
        RATED(TNS_SYS_SEMTIMEDOP, "semtimedop", SYS_semtimedop, 3),
        RATED(TNS_SYS_IO_GETEVENTS, "io_getevents", SYS_io_getevents, 4),
        RATED(TNS_SYS_IO_PGETEVENTS, "io_pgetevents", SYS_io_pgetevents, 4),
#undef RATED
        /* What a timerfd has left, a duration: the namespace's at a rate
         * (supervisor_timerfd_gettime()). */
        [TNS_SYS_TIMERFD_GETTIME] = {.id = TNS_SYS_TIMERFD_GETTIME,
                                     .name = "timerfd_gettime",
                                     .nr = SYS_timerfd_gettime,
                                     .trap = TNS_TRAP_RATED_ARG,
                                     .trap_value = 1,
                                     .rated = true},
        /* What an itimer or a POSIX timer has left, a duration: the
         * namespace's at a rate, read back from the call's own result
         * (supervisor-wait.c, a held call's exit: no other way reads
         * another process's timers). */
        [TNS_SYS_GETITIMER] = {.id = TNS_SYS_GETITIMER,
                               .name = "getitimer",
                               .nr = SYS_getitimer,
                               .trap = TNS_TRAP_RATED_ARG0_EQ,
                               .trap_value = 0 /* ITIMER_REAL */,
                               .wait = true,
                               .rated = true},
        [TNS_SYS_TIMER_GETTIME] = {.id = TNS_SYS_TIMER_GETTIME,
                                   .name = "timer_gettime",
                                   .nr = SYS_timer_gettime,
                                   .trap = TNS_TRAP_RATED_ARG,
                                   .trap_value = 1,
                                   .wait = true,
                                   .rated = true},
        [TNS_SYS_ALARM] = {.id = TNS_SYS_ALARM,
                           .name = "alarm",
                           .nr = SYS_alarm,
                           .trap = TNS_TRAP_RATED_ALWAYS,
                           .wait = true,
                           .rated = true},
        [TNS_SYS_SETITIMER] = {.id = TNS_SYS_SETITIMER,
                               .name = "setitimer",
                               .nr = SYS_setitimer,
                               .trap = TNS_TRAP_RATED_ARG0_EQ,
                               .trap_value = 0 /* ITIMER_REAL */,
                               .wait = true,
                               .rated = true},
        /* Only followed, never answered (supervisor-kns.c): the kernel
         * runs every setns; nstype 0 names any type, a pidfd's flags may
         * name several. */
        [TNS_SYS_SETNS] = {.id = TNS_SYS_SETNS,
                           .name = "setns",
                           .nr = SYS_setns,
                           .trap = TNS_TRAP_ARG1_HAS_OR_ZERO,
                           .trap_value = CLONE_NEWTIME},
        /* A new program's first steps set its thread pointer (glibc, musl
         * and Go alike, before any clock read): the one moment a program
         * that started without our image (a debugger traced its exec, or
         * the timensd that held it died) is stopped in a call of ours,
         * single-threaded. Its kernel vDSO's clock functions then become
         * syscalls (supervisor-first-call.c); any other program goes on at
         * once. */
        [TNS_SYS_ARCH_PRCTL] = {.id = TNS_SYS_ARCH_PRCTL,
                                .name = "arch_prctl",
                                .nr = SYS_arch_prctl,
                                .trap = TNS_TRAP_ARG0_EQ32,
                                .trap_value = 0x1002 /* ARCH_SET_FS */,
                                .vdso = true},
        /* File times set to "now" take the namespace's realtime, not the
         * host's (lib/core/file-times.h). Every call: whether its times say
         * UTIME_NOW is in memory, which a filter cannot read. No i386
         * names: a 32-bit program's touch stamps the host's time rather
         * than fail. */
        [TNS_SYS_UTIMENSAT] = {.id = TNS_SYS_UTIMENSAT,
                               .name = "utimensat",
                               .nr = SYS_utimensat,
                               .trap = TNS_TRAP_ALWAYS,
                               .wait = true},
        [TNS_SYS_UTIMES] =
                {.id = TNS_SYS_UTIMES, .name = "utimes", .nr = SYS_utimes, .trap = TNS_TRAP_ALWAYS, .wait = true},
        [TNS_SYS_FUTIMESAT] = {.id = TNS_SYS_FUTIMESAT,
                               .name = "futimesat",
                               .nr = SYS_futimesat,
                               .trap = TNS_TRAP_ALWAYS,
                               .wait = true},
        [TNS_SYS_UTIME] =
                {.id = TNS_SYS_UTIME, .name = "utime", .nr = SYS_utime, .trap = TNS_TRAP_ALWAYS, .wait = true},
};

const struct tns_syscall_desc *tns_syscall_by_nr(int nr) {
        for (size_t i = 0; i < ELEMENTSOF(tns_syscalls); i++)
                if (tns_syscalls[i].name && tns_syscalls[i].nr == nr)
                        return &tns_syscalls[i];
        return NULL;
}
