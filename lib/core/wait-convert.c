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

int tns_wait_classify_rated(enum tns_sys sys, const uint64_t args[6], struct tns_wait_spec *ret) {
        int flags = (int) args[1], c;
        struct tns_wait_spec s = {.relative = true, .kind = TNS_WAIT_TIMESPEC, .clock_class = TNS_CLASS_MONOTONIC};

        switch (sys) {
        case TNS_SYS_CLOCK_NANOSLEEP:
                c = tns_wait_clock_class((clockid_t) args[0]);
                if ((flags & TNS_TIMER_ABSTIME) || c < 0)
                        return -ENOENT;
                s.arg = 2;
                s.rem_arg = 3;
                s.clock_class = c;
                break;
        case TNS_SYS_TIMER_SETTIME:
        case TNS_SYS_TIMERFD_SETTIME:
                if (flags & TNS_TIMER_ABSTIME)
                        return -ENOENT;
                s = (struct tns_wait_spec){.arg = 2,
                                           .kind = TNS_WAIT_ITIMERSPEC,
                                           .clock_class = -1,
                                           .via_fd = sys == TNS_SYS_TIMERFD_SETTIME,
                                           .relative = true};
                break;
        case TNS_SYS_FUTEX:
                if ((flags & TNS_FUTEX_CMD_MASK) != FUTEX_WAIT || args[3] == 0)
                        return -ENOENT;
                s.arg = 3;
                s.clock_class = (flags & FUTEX_CLOCK_REALTIME) ? TNS_CLASS_REALTIME : TNS_CLASS_MONOTONIC;
                break;
        case TNS_SYS_NANOSLEEP:
                s.arg = 0;
                s.rem_arg = 1;
                break;
        case TNS_SYS_PPOLL:
                s.arg = 2;
                s.writes_back = true;
                break;
        case TNS_SYS_RT_SIGTIMEDWAIT:
                s.arg = 2;
                break;
        case TNS_SYS_PSELECT6:
                s.arg = 4;
                s.writes_back = true;
                break;
        case TNS_SYS_IO_GETEVENTS:
        case TNS_SYS_IO_PGETEVENTS:
                s.arg = 4;
                break;
        case TNS_SYS_EPOLL_PWAIT2:
        case TNS_SYS_SEMTIMEDOP:
                s.arg = 3;
                break;
        case TNS_SYS_SELECT:
                s.arg = 4;
                s.kind = TNS_WAIT_TIMEVAL;
                s.writes_back = true;
                break;
        case TNS_SYS_POLL:
                s.arg = 2;
                s.kind = TNS_WAIT_INT_MS;
                break;
        case TNS_SYS_EPOLL_WAIT:
        case TNS_SYS_EPOLL_PWAIT:
                s.arg = 3;
                s.kind = TNS_WAIT_INT_MS;
                break;
        case TNS_SYS_SETITIMER:
        case TNS_SYS_GETITIMER:
                if ((int) args[0] != 0 /* ITIMER_REAL */)
                        return -ENOENT;
                s.arg = 1;
                s.kind = TNS_WAIT_ITIMERVAL;
                s.readback = sys == TNS_SYS_GETITIMER;
                break;
        case TNS_SYS_ALARM:
                s.arg = 0;
                s.kind = TNS_WAIT_INT_SEC;
                break;
        case TNS_SYS_TIMER_GETTIME:
                s.arg = 1;
                s.kind = TNS_WAIT_ITIMERSPEC;
                s.clock_class = -1; /* the timer's */
                s.readback = true;
                break;
        default:
                return -ENOENT;
        }
        /* No timeout, an infinite one, or none at all: the kernel's. But
         * alarm(0), whose result is the time left of the alarm it
         * cancels: the namespace's seconds. */
        if (s.kind == TNS_WAIT_INT_MS ? (int) args[s.arg] <= 0 : (args[s.arg] == 0 && s.kind != TNS_WAIT_INT_SEC))
                return -ENOENT;
        if ((s.kind == TNS_WAIT_INT_MS || s.kind == TNS_WAIT_INT_SEC) &&
            (args[s.arg] & ~UINT64_C(0xffffffff)) == TNS_WAIT_REG_MARK)
                return -ENOENT; /* converted by us already */
        *ret = s;
        return 0;
}

size_t tns_wait_size(enum tns_wait_kind kind) {
        switch (kind) {
        case TNS_WAIT_TIMESPEC:
        case TNS_WAIT_TIMEVAL:
                return 16;
        case TNS_WAIT_UTIMBUF:
                return 16;
        case TNS_WAIT_ITIMERSPEC:
        case TNS_WAIT_ITIMERVAL:
        case TNS_WAIT_UTIMENS:
        case TNS_WAIT_UTIMES:
                return 32;
        default:
                return 0;
        }
}

void tns_wait_map(const struct tns_rate_map *clock, int64_t host_now, struct tns_rate_map *ret) {
        if (clock->mult != 0) {
                *ret = *clock;
                return;
        }
        *ret = (struct tns_rate_map){.mult = TNS_RATE_ONE, .anchor_host = host_now, .anchor_ns = clock->anchor_ns};
}

/* A duration in the namespace's nanoseconds to the host's: never 0 for
 * a nonzero one (a timer's 0 disarms it). */
static int64_t scale(const struct tns_rate_map *m, int64_t ns) {
        int64_t h;

        if (ns <= 0)
                return 0;
        h = tns_rate_duration_to_host(m->mult, ns);
        return h < 1 ? 1 : h;
}

static int64_t deadline(const struct tns_rate_map *m, int64_t ns) {
        int64_t h = tns_rate_map_to_host(m, ns < 0 ? 0 : ns);

        return h < 1 ? 1 : h;
}

/* The kernel's timespec64_valid(), then nanoseconds (saturating). */
static int ts_in(const struct timespec *ts, int64_t *ret) {
        if (!tns_ts_valid(ts))
                return -EINVAL;
        *ret = ts_to_ktime(ts);
        return 0;
}

/* A timeval (select, setitimer): tv_usec in [0, 1e6), tv_sec >= 0. */
struct k_timeval {
        int64_t tv_sec, tv_usec;
};

static int tv_in(const struct k_timeval *tv, int64_t *ret) {
        if (tv->tv_sec < 0 || tv->tv_usec < 0 || tv->tv_usec >= TNS_USEC_PER_SEC)
                return -EINVAL;
        *ret = tv->tv_sec >= TNS_KTIME_SEC_MAX ? INT64_MAX
                                               : tv->tv_sec * TNS_NSEC_PER_SEC + tv->tv_usec * TNS_NSEC_PER_USEC;
        return 0;
}

static struct k_timeval tv_out(int64_t ns) {
        /* Rounded up to the microsecond: never early. */
        int64_t us = ns / TNS_NSEC_PER_USEC + (ns % TNS_NSEC_PER_USEC != 0);

        return (struct k_timeval){us / TNS_USEC_PER_SEC, us % TNS_USEC_PER_SEC};
}

int tns_wait_time_left_rated(const struct tns_wait_spec *spec, uint64_t mult, int64_t host_left, void *out) {
        int64_t v = host_left > 0 ? tns_rate_duration_from_host(mult, host_left) : 0;

        if (!spec->writes_back)
                return -EINVAL;
        if (spec->kind == TNS_WAIT_TIMESPEC) {
                struct timespec ts = tns_ns_to_ts(v);

                memcpy(out, &ts, sizeof(ts));
                return 0;
        }
        if (spec->kind == TNS_WAIT_TIMEVAL) {
                /* Rounded down, as the kernel rounds what it writes. */
                int64_t us = v / TNS_NSEC_PER_USEC;
                struct k_timeval tv = {us / TNS_USEC_PER_SEC, us % TNS_USEC_PER_SEC};

                memcpy(out, &tv, sizeof(tv));
                return 0;
        }
        return -EINVAL;
}

int tns_wait_convert_rated(const struct tns_wait_spec *spec, const struct tns_rate_map *map, const void *in, void *out,
                           uint64_t *reg) {
        int64_t v, w;
        int r;

        switch (spec->kind) {
        case TNS_WAIT_TIMESPEC: {
                struct timespec ts;

                memcpy(&ts, in, sizeof(ts));
                r = ts_in(&ts, &v);
                if (r < 0)
                        return r;
                ts = tns_ns_to_ts(spec->relative ? scale(map, v) : deadline(map, v));
                memcpy(out, &ts, sizeof(ts));
                return 0;
        }
        case TNS_WAIT_ITIMERSPEC: {
                struct itimerspec its;

                memcpy(&its, in, sizeof(its));
                if (ts_in(&its.it_interval, &w) < 0 || ts_in(&its.it_value, &v) < 0)
                        return -EINVAL;
                its.it_interval = tns_ns_to_ts(scale(map, w));
                if (v != 0)
                        its.it_value = tns_ns_to_ts(spec->relative ? scale(map, v) : deadline(map, v));
                memcpy(out, &its, sizeof(its));
                return 0;
        }
        case TNS_WAIT_TIMEVAL: {
                struct k_timeval tv;

                memcpy(&tv, in, sizeof(tv));
                r = tv_in(&tv, &v);
                if (r < 0)
                        return r;
                tv = tv_out(scale(map, v));
                memcpy(out, &tv, sizeof(tv));
                return 0;
        }
        case TNS_WAIT_ITIMERVAL: {
                struct k_timeval tv[2];

                memcpy(tv, in, sizeof(tv));
                if (tv_in(&tv[0], &w) < 0 || tv_in(&tv[1], &v) < 0)
                        return -EINVAL;
                tv[0] = tv_out(scale(map, w));
                tv[1] = tv_out(scale(map, v));
                memcpy(out, tv, sizeof(tv));
                return 0;
        }
        case TNS_WAIT_INT_MS:
        case TNS_WAIT_INT_SEC: {
                int64_t unit = spec->kind == TNS_WAIT_INT_MS ? 1000000 : TNS_NSEC_PER_SEC;
                int64_t lim = spec->kind == TNS_WAIT_INT_MS ? INT32_MAX : UINT32_MAX;

                v = spec->kind == TNS_WAIT_INT_MS ? (int) *reg : (int64_t) (uint32_t) *reg;
                if (v <= 0)
                        return -ENOENT;
                w = scale(map, v * unit);
                w = w / unit + (w % unit != 0);
                *reg = TNS_WAIT_REG_MARK | (uint64_t) (w > lim ? lim : w < 1 ? 1 : w);
                return 0;
        }
        case TNS_WAIT_UTIMENS:
        case TNS_WAIT_UTIMES:
        case TNS_WAIT_UTIMBUF:
                break; /* no wait: lib/core/file-times.c */
        }
        return -EINVAL;
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

int tns_parse_timerfd_fdinfo(const char *text, clockid_t *ret, int *ret_flags) {
        const char *f = strstr(text, "\nsettime flags:");
        long long clock;
        unsigned flags = 0;

        /* timerfd_show() (fs/timerfd.c): "settime flags: 0%o". */
        if (!field(text, "clockid:", &clock))
                return -ENOENT;
        if (f && sscanf(f + strlen("\nsettime flags:"), " %o", &flags) != 1)
                flags = 0;
        *ret = (clockid_t) clock;
        if (ret_flags)
                *ret_flags = (int) (flags & 0xffff);
        return 0;
}

unsigned tns_wait_alarm_left(uint64_t mult, int64_t old_sec, int64_t old_usec) {
        int64_t ns, sec, usec;

        if (old_sec < 0 || old_usec < 0 || old_usec >= 1000000)
                return 0;
        /* A slow rate makes a host duration of more than 2^32 s of a
         * short alarm (helper-42: alarm(4296) at 1/1000000 told 0). */
        ns = tns_rate_duration_from_host(
                mult, old_sec >= TNS_KTIME_SEC_MAX ? INT64_MAX : old_sec * TNS_NSEC_PER_SEC + old_usec * 1000);
        sec = ns / TNS_NSEC_PER_SEC;
        usec = ns % TNS_NSEC_PER_SEC / 1000;
        if ((sec == 0 && usec) || usec >= 500000)
                sec++;
        return sec > UINT32_MAX ? UINT32_MAX : (unsigned) sec;
}

static int64_t duration_from_host(uint64_t mult, int64_t host) {
        return host <= 0 ? host : tns_rate_duration_from_host(mult, host);
}

int tns_wait_timer_from_host(enum tns_wait_kind kind, uint64_t mult, void *buf) {
        if (kind == TNS_WAIT_ITIMERSPEC) {
                struct timespec t[2];
                int64_t v;

                memcpy(t, buf, sizeof(t));
                for (unsigned i = 0; i < 2; i++) {
                        if (ts_in(&t[i], &v) < 0)
                                return -EINVAL;
                        t[i] = tns_ns_to_ts(duration_from_host(mult, v));
                }
                memcpy(buf, t, sizeof(t));
                return 0;
        }
        if (kind == TNS_WAIT_ITIMERVAL) {
                struct k_timeval t[2];
                int64_t v;

                memcpy(t, buf, sizeof(t));
                for (unsigned i = 0; i < 2; i++) {
                        if (tv_in(&t[i], &v) < 0)
                                return -EINVAL;
                        /* Rounded down to the microsecond, as the kernel
                         * rounds what it writes. */
                        v = duration_from_host(mult, v) / 1000;
                        t[i] = (struct k_timeval){v / 1000000, v % 1000000};
                }
                memcpy(buf, t, sizeof(t));
                return 0;
        }
        return -EINVAL;
}
