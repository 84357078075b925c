/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>

#include "clocks.h"
#include "time-util.h"
#include "wait-convert.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#define TNS_TIMER_ABSTIME 1 /* TIMER_ABSTIME == TFD_TIMER_ABSTIME */
#define TNS_FUTEX_CMD_MASK (~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))

int tns_wait_clock_class(clockid_t clock) {
        switch (clock) {
        case CLOCK_REALTIME:
        case CLOCK_REALTIME_ALARM:
        case CLOCK_TAI:
                return TNS_CLASS_REALTIME;
        case CLOCK_MONOTONIC:
                return TNS_CLASS_MONOTONIC;
        case CLOCK_BOOTTIME:
        case CLOCK_BOOTTIME_ALARM:
                return TNS_CLASS_BOOTTIME;
        default:
                return -ENOENT;
        }
}

/* futex(2) as kernel/futex/syscalls.c reads it: futex_cmd_has_timeout()
 * and futex_init_timeout(). FUTEX_WAIT's timeout is relative; LOCK_PI's is
 * on CLOCK_REALTIME always; the others on MONOTONIC unless
 * FUTEX_CLOCK_REALTIME (which LOCK_PI refuses with ENOSYS: the kernel says
 * so itself). */
static int classify_futex(const uint64_t args[6], struct tns_wait_spec *ret) {
        int op = (int) args[1], cmd = op & TNS_FUTEX_CMD_MASK;
        bool rt = op & FUTEX_CLOCK_REALTIME;

        if (args[3] == 0)
                return -ENOENT;
        switch (cmd) {
        case FUTEX_WAIT_BITSET:
        case FUTEX_WAIT_REQUEUE_PI:
        case FUTEX_LOCK_PI2:
                break;
        case FUTEX_LOCK_PI:
                if (rt)
                        return -ENOENT;
                rt = true;
                break;
        default:
                return -ENOENT;
        }
        *ret = (struct tns_wait_spec){
                .arg = 3, .kind = TNS_WAIT_TIMESPEC, .clock_class = rt ? TNS_CLASS_REALTIME : TNS_CLASS_MONOTONIC};
        return 0;
}

/* futex_waitv(waiters, nr, flags, timeout, clockid) and futex_wait(uaddr,
 * val, mask, flags, timeout, clockid): an absolute timeout on MONOTONIC or
 * REALTIME (futex2_setup_timeout); any other clock is the kernel's EINVAL. */
static int classify_futex2(const uint64_t args[6], unsigned arg, struct tns_wait_spec *ret) {
        clockid_t clock = (clockid_t) args[arg + 1];

        if (args[arg] == 0 || (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME))
                return -ENOENT;
        *ret = (struct tns_wait_spec){
                .arg = arg, .kind = TNS_WAIT_TIMESPEC, .clock_class = tns_wait_clock_class(clock)};
        return 0;
}

int tns_wait_classify(enum tns_sys sys, const uint64_t args[6], struct tns_wait_spec *ret) {
        int flags = (int) args[1], c;

        switch (sys) {
        case TNS_SYS_CLOCK_NANOSLEEP:
                c = tns_wait_clock_class((clockid_t) args[0]);
                if (!(flags & TNS_TIMER_ABSTIME) || c < 0)
                        return -ENOENT;
                *ret = (struct tns_wait_spec){.arg = 2, .kind = TNS_WAIT_TIMESPEC, .clock_class = c};
                return 0;
        case TNS_SYS_TIMER_SETTIME:
        case TNS_SYS_TIMERFD_SETTIME:
                if (!(flags & TNS_TIMER_ABSTIME))
                        return -ENOENT;
                *ret = (struct tns_wait_spec){.arg = 2,
                                              .kind = TNS_WAIT_ITIMERSPEC,
                                              .clock_class = -1,
                                              .via_fd = sys == TNS_SYS_TIMERFD_SETTIME};
                return 0;
        case TNS_SYS_FUTEX:
                return classify_futex(args, ret);
        case TNS_SYS_FUTEX_WAITV:
                return classify_futex2(args, 3, ret);
        case TNS_SYS_FUTEX_WAIT:
                return classify_futex2(args, 4, ret);
        case TNS_SYS_MQ_TIMEDSEND:
        case TNS_SYS_MQ_TIMEDRECEIVE:
                if (args[4] == 0)
                        return -ENOENT;
                *ret = (struct tns_wait_spec){.arg = 4, .kind = TNS_WAIT_TIMESPEC, .clock_class = TNS_CLASS_REALTIME};
                return 0;
        default:
                return -ENOENT;
        }
}

int64_t tns_deadline_to_host(int64_t deadline, int64_t offset) {
        int64_t host;

        if (deadline < 0)
                deadline = 0;
        if (__builtin_sub_overflow(deadline, offset, &host))
                host = offset < 0 ? INT64_MAX : 0;
        return host < 1 ? 1 : host;
}

/* timespec64_to_ktime(): saturates at KTIME_MAX. */
static int64_t ts_to_ktime(const struct timespec *ts) {
        if (ts->tv_sec >= TNS_KTIME_SEC_MAX)
                return INT64_MAX;
        return ts->tv_sec * TNS_NSEC_PER_SEC + ts->tv_nsec;
}

int tns_wait_ts_to_host(const struct timespec *ts, int64_t offset, struct timespec *ret) {
        if (!tns_ts_valid(ts))
                return -EINVAL;
        *ret = tns_ns_to_ts(tns_deadline_to_host(ts_to_ktime(ts), offset));
        return 0;
}

int tns_wait_its_to_host(const struct itimerspec *its, int64_t offset, struct itimerspec *ret) {
        struct itimerspec out = *its;

        if (!tns_ts_valid(&its->it_value) || !tns_ts_valid(&its->it_interval))
                return -EINVAL;
        if (its->it_value.tv_sec != 0 || its->it_value.tv_nsec != 0)
                (void) tns_wait_ts_to_host(&its->it_value, offset, &out.it_value);
        *ret = out;
        return 0;
}

/* One "Key: value" line of a /proc text, as a number. */
static const char *field(const char *p, const char *key, long long *ret) {
        size_t n = strlen(key);

        for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, key, n) == 0 && sscanf(p + n, "%lld", ret) == 1)
                        return p + n;
        return NULL;
}

int tns_parse_proc_timers(const char *text, int id, clockid_t *ret) {
        const char *p = text;
        long long v, clock;

        /* show_timer() (fs/proc/base.c): ID, signal, notify, ClockID. */
        while ((p = field(p, "ID:", &v))) {
                const char *next = field(p, "ID:", &(long long){0});
                const char *c = field(p, "ClockID:", &clock);

                if (v != id)
                        continue;
                if (!c || (next && c > next))
                        return -EBADMSG;
                *ret = (clockid_t) clock;
                return 0;
        }
        return -ENOENT;
}

int tns_parse_timerfd_fdinfo(const char *text, clockid_t *ret) {
        long long clock;

        /* timerfd_show() (fs/timerfd.c) */
        if (!field(text, "clockid:", &clock))
                return -ENOENT;
        *ret = (clockid_t) clock;
        return 0;
}
