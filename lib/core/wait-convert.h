/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Absolute waits: which calls carry a deadline the kernel would read on the
 * host's clock, where that deadline is, and its conversion from the
 * namespace's clock to the host's — the pure part of lib/supervisor/supervisor-wait.c.
 *
 * The kernel's own time namespaces convert the same deadlines with
 * timens_ktime_to_host() (kernel/time/namespace.c): a deadline before the
 * offset has already expired, one past KTIME_MAX saturates. We do the same
 * for MONOTONIC and BOOTTIME, and for REALTIME (which the kernel never
 * shifts) with the realtime offset. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "rate.h"
#include "syscall-table.h"

enum tns_wait_kind {
        TNS_WAIT_TIMESPEC, /* struct __kernel_timespec: 16 bytes */
        TNS_WAIT_ITIMERSPEC, /* struct __kernel_itimerspec: interval, then value */
        TNS_WAIT_TIMEVAL, /* struct __kernel_old_timeval: select */
        TNS_WAIT_ITIMERVAL, /* struct __kernel_old_itimerval: setitimer */
        TNS_WAIT_INT_MS, /* the argument itself, milliseconds: poll, epoll_wait */
        TNS_WAIT_INT_SEC, /* the argument itself, seconds: alarm */
        /* File times set to "now" (lib/core/file-times.h): */
        TNS_WAIT_UTIMENS, /* struct __kernel_timespec[2]: utimensat */
        TNS_WAIT_UTIMES, /* struct __kernel_old_timeval[2]: utimes, futimesat */
        TNS_WAIT_UTIMBUF, /* struct utimbuf (seconds): utime */
};

/* What the supervisor needs to convert one call. */
struct tns_wait_spec {
        unsigned arg; /* the argument (0..5) holding the pointer to the deadline */
        enum tns_wait_kind kind;
        int clock_class; /* enum tns_clock_class, or -1: the timer's clock (looked up) */
        bool via_fd; /* timerfd: the supervisor sets the target's own fd (pidfd_getfd) */
        bool relative; /* a duration (rated namespaces only), not a deadline */
        bool now; /* file times: each "now" becomes the namespace's realtime */
        bool writes_back; /* the kernel writes the time left there (select, pselect6, ppoll) */
        unsigned rem_arg; /* a relative sleep's rem argument (1..5), where the kernel writes the time left; 0: none */
        /* getitimer, timer_gettime: nothing to convert going in; what the
         * kernel writes at arg (kind's layout, host durations) is made the
         * namespace's when the call returns. */
        bool readback;
};

/* Whether call `sys` with these raw arguments waits for an absolute
 * deadline on a clock with an offset class: 0 and *ret, or -ENOENT when the
 * kernel may run it as it is (relative, no timeout, a clock we do not
 * shift, an op without a deadline: the kernel's own answer is right). Only
 * the low 32 bits of int arguments count, as the kernel reads them. */
int tns_wait_classify(enum tns_sys sys, const uint64_t args[6], struct tns_wait_spec *ret);

/* In a namespace whose clocks run at a rate: the relative waits (and
 * timers set relative, whose interval is a duration too) that the rate
 * changes, as tns_wait_classify() does the absolute ones; -ENOENT for
 * what runs as it is (no timeout, an infinite or zero one in a register,
 * an absolute wait: tns_wait_classify()'s). Timeouts of poll, select,
 * epoll and the rest run on CLOCK_MONOTONIC. */
int tns_wait_classify_rated(enum tns_sys sys, const uint64_t args[6], struct tns_wait_spec *ret);

/* The time left of a relative timeout the kernel would write back
 * (spec->writes_back: select, pselect6, ppoll): `host_left` host
 * nanoseconds (<= 0: none) as the namespace's duration (`mult`: the rate
 * the wait ran at, tns_wait_map()'s: 1 for a frozen clock), in the
 * spec's layout, in *out (tns_wait_size() bytes). -EINVAL for a spec that
 * writes nothing back. The kernel cannot write into our read-only slot:
 * the supervisor counts the time left itself. */
int tns_wait_time_left_rated(const struct tns_wait_spec *spec, uint64_t mult, int64_t host_left, void *out);

/* alarm(2) in a rated namespace runs as setitimer(ITIMER_REAL) with the
 * namespace's seconds as host time to the microsecond (alarm's own
 * whole seconds would make alarm(1) at x2 last a second). Its result is
 * what alarm returns: the previous alarm's time left, old_host (the old
 * it_value setitimer gave, host time), in the namespace's seconds rounded
 * as the kernel's alarm_setitimer() rounds (to the nearest, at least 1
 * while any is left). */
unsigned tns_wait_alarm_left(uint64_t mult, int64_t old_sec, int64_t old_usec);

/* A timer's value and interval as the kernel reports them (the old value
 * setitimer, timer_settime and timerfd_settime return: host durations),
 * made the namespace's at rate mult, in place: buf holds an itimerval
 * (TNS_WAIT_ITIMERVAL) or an itimerspec (TNS_WAIT_ITIMERSPEC). -EINVAL
 * for another kind or a value the kernel would not report. */
int tns_wait_timer_from_host(enum tns_wait_kind kind, uint64_t mult, void *buf);

/* The upper half of a timeout converted in its register (poll, epoll,
 * alarm: TNS_WAIT_INT_*), which the kernel does not read (an int
 * argument is its low 32 bits: SYSCALL_DEFINE's casts): a call that
 * carries it is one of ours already converted, run as it is — also by a
 * successor that finds it after our death (kill -9) between the rewrite
 * and the call, where it would otherwise convert it again.
 * tns_wait_classify_rated() says -ENOENT for it. */
#define TNS_WAIT_REG_MARK (UINT64_C(0x544e5377) << 32) /* "wSNT" */

/* The size of what the call's pointer points at; 0 for the kinds that
 * are the argument itself. */
size_t tns_wait_size(enum tns_wait_kind kind);

/* The map a wait uses: the clock's (struct tns_rate_map), or for a frozen
 * clock rate 1 from its frozen reading at host_now — libfaketime's
 * relative sleeps pass in host time, and an absolute deadline ahead of a
 * frozen clock is reached after as much host time, never a hang. */
void tns_wait_map(const struct tns_rate_map *clock, int64_t host_now, struct tns_rate_map *ret);

/* Converts one wait of a rated namespace with the wait map: `in` is what
 * the caller gave (tns_wait_size() bytes, or the argument in *reg for
 * the integer kinds), `out` gets what the kernel must wait for (or *reg).
 * Durations are scaled (rounded up: never early), deadlines mapped to the
 * host's clock, zeros (disarm, no wait) stay zero, the interval of a
 * timer is a duration. -EINVAL for what the kernel refuses (it then fails
 * the call itself), -ENOENT for nothing to convert. */
int tns_wait_convert_rated(const struct tns_wait_spec *spec, const struct tns_rate_map *map, const void *in, void *out,
                           uint64_t *reg);

/* The class of a timer's clock as a wait sees it (CLOCK_REALTIME,
 * _ALARM, TAI: realtime; MONOTONIC; BOOTTIME, _ALARM), -ENOENT otherwise
 * (CPU-time clocks, and clocks no timer or sleep accepts). */
int tns_wait_clock_class(clockid_t clock);

/* A namespace deadline (ns) as a host deadline, as timens_ktime_to_host():
 * before the offset, already expired; beyond KTIME_MAX, KTIME_MAX. Never
 * 0, which timer_settime and timerfd_settime would read as "disarm": 1 ns
 * is expired just the same. */
int64_t tns_deadline_to_host(int64_t deadline, int64_t offset);

/* The kernel's checks on what it reads (timespec64_valid,
 * itimerspec64_valid), then the conversion: -EINVAL if invalid (the caller
 * then lets the kernel fail the call itself). An itimerspec's it_value of
 * zero disarms and stays zero; it_interval is relative and stays. */
int tns_wait_ts_to_host(const struct timespec *ts, int64_t offset, struct timespec *ret);
int tns_wait_its_to_host(const struct itimerspec *its, int64_t offset, struct itimerspec *ret);

/* The clock of POSIX timer `id` in the text of /proc/PID/timers
 * ("ID: 3\n...ClockID: 1\n" per timer): 0, -ENOENT, or -EBADMSG. */
int tns_parse_proc_timers(const char *text, int id, clockid_t *ret);
/* The clock of a timerfd from the text of its /proc/PID/fdinfo entry
 * ("clockid: 1"), and (ret_flags, if not NULL) the flags it was last set
 * with ("settime flags: 01": TFD_TIMER_ABSTIME; 0 if absent): 0, -ENOENT
 * if it is no timerfd. */
int tns_parse_timerfd_fdinfo(const char *text, clockid_t *ret, int *ret_flags);
