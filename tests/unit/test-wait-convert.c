/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which calls are absolute waits, and the deadline conversion, against the
 * kernel's timens_ktime_to_host() (kernel/time/namespace.c) and the futex
 * syscall's futex_init_timeout() (kernel/futex/syscalls.c). */
#include <errno.h>
#include <sys/timerfd.h>
#include <linux/futex.h>
#include <stdint.h>
#include <time.h>

#include "clocks.h"
#include "test.h"
#include "time-util.h"
#include "wait-convert.h"

#define NSEC TNS_NSEC_PER_SEC
#define TS(s, n) ((struct timespec){.tv_sec = (s), .tv_nsec = (n)})
#define DAY (86400 * NSEC)

static int classify(enum tns_sys sys, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5,
                    struct tns_wait_spec *ret) {
        const uint64_t args[6] = {a0, a1, a2, a3, a4, a5};

        return tns_wait_classify(sys, args, ret);
}

TEST(clock_nanosleep_absolute_only) {
        struct tns_wait_spec s;

        ASSERT_EQ(classify(TNS_SYS_CLOCK_NANOSLEEP, CLOCK_MONOTONIC, TIMER_ABSTIME, 0x1000, 0, 0, 0, &s), 0);
        EXPECT_EQ(s.arg, 2U);
        EXPECT_EQ(s.kind, TNS_WAIT_TIMESPEC);
        EXPECT_EQ(s.clock_class, TNS_CLASS_MONOTONIC);
        ASSERT_EQ(classify(TNS_SYS_CLOCK_NANOSLEEP, CLOCK_BOOTTIME_ALARM, TIMER_ABSTIME, 1, 0, 0, 0, &s), 0);
        EXPECT_EQ(s.clock_class, TNS_CLASS_BOOTTIME);
        ASSERT_EQ(classify(TNS_SYS_CLOCK_NANOSLEEP, CLOCK_TAI, TIMER_ABSTIME, 1, 0, 0, 0, &s), 0);
        EXPECT_EQ(s.clock_class, TNS_CLASS_REALTIME);
        /* The kernel reads int arguments on 32 bits. */
        ASSERT_EQ(classify(TNS_SYS_CLOCK_NANOSLEEP, UINT64_C(0xdead00000000) | CLOCK_REALTIME,
                           UINT64_C(0xbeef00000000) | TIMER_ABSTIME, 1, 0, 0, 0, &s),
                  0);
        EXPECT_EQ(s.clock_class, TNS_CLASS_REALTIME);
        /* Relative, CPU-time clocks, clocks without nsleep: the kernel's. */
        EXPECT_EQ(classify(TNS_SYS_CLOCK_NANOSLEEP, CLOCK_MONOTONIC, 0, 1, 0, 0, 0, &s), -ENOENT);
        EXPECT_EQ(classify(TNS_SYS_CLOCK_NANOSLEEP, CLOCK_PROCESS_CPUTIME_ID, TIMER_ABSTIME, 1, 0, 0, 0, &s), -ENOENT);
        EXPECT_EQ(classify(TNS_SYS_CLOCK_NANOSLEEP, CLOCK_MONOTONIC_RAW, TIMER_ABSTIME, 1, 0, 0, 0, &s), -ENOENT);
        EXPECT_EQ(classify(TNS_SYS_CLOCK_NANOSLEEP, CLOCK_MONOTONIC_COARSE, TIMER_ABSTIME, 1, 0, 0, 0, &s), -ENOENT);
}

TEST(timers_need_their_clock) {
        struct tns_wait_spec s;

        ASSERT_EQ(classify(TNS_SYS_TIMER_SETTIME, 0, TIMER_ABSTIME, 1, 0, 0, 0, &s), 0);
        EXPECT_EQ(s.kind, TNS_WAIT_ITIMERSPEC);
        EXPECT_EQ(s.clock_class, -1);
        EXPECT_FALSE(s.via_fd);
        ASSERT_EQ(classify(TNS_SYS_TIMERFD_SETTIME, 3, 1 /* TFD_TIMER_ABSTIME */ | 2, 1, 0, 0, 0, &s), 0);
        EXPECT_TRUE(s.via_fd);
        EXPECT_EQ(classify(TNS_SYS_TIMERFD_SETTIME, 3, 2, 1, 0, 0, 0, &s), -ENOENT);
        EXPECT_EQ(classify(TNS_SYS_TIMER_SETTIME, 0, 0, 1, 0, 0, 0, &s), -ENOENT);
}

TEST(futex_ops) {
        struct tns_wait_spec s;

        /* FUTEX_WAIT: relative (ktime_add_safe(ktime_get(), t)). */
        EXPECT_EQ(classify(TNS_SYS_FUTEX, 0x1000, FUTEX_WAIT_PRIVATE, 0, 0x2000, 0, 0, &s), -ENOENT);
        /* No timeout, no deadline. */
        EXPECT_EQ(classify(TNS_SYS_FUTEX, 0x1000, FUTEX_WAIT_BITSET, 0, 0, 0, ~0U, &s), -ENOENT);
        EXPECT_EQ(classify(TNS_SYS_FUTEX, 0x1000, FUTEX_WAKE, 1, 0x2000, 0, 0, &s), -ENOENT);
        ASSERT_EQ(classify(TNS_SYS_FUTEX, 0x1000, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, 0x2000, 0, ~0U, &s), 0);
        EXPECT_EQ(s.arg, 3U);
        EXPECT_EQ(s.clock_class, TNS_CLASS_MONOTONIC);
        ASSERT_EQ(classify(TNS_SYS_FUTEX, 0x1000, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 0, 0x2000, 0, ~0U, &s), 0);
        EXPECT_EQ(s.clock_class, TNS_CLASS_REALTIME);
        ASSERT_EQ(classify(TNS_SYS_FUTEX, 0x1000, FUTEX_WAIT_REQUEUE_PI, 0, 0x2000, 0x3000, 0, &s), 0);
        EXPECT_EQ(s.clock_class, TNS_CLASS_MONOTONIC);
        /* LOCK_PI: CLOCK_REALTIME, always; with FUTEX_CLOCK_REALTIME ENOSYS. */
        ASSERT_EQ(classify(TNS_SYS_FUTEX, 0x1000, FUTEX_LOCK_PI_PRIVATE, 0, 0x2000, 0, 0, &s), 0);
        EXPECT_EQ(s.clock_class, TNS_CLASS_REALTIME);
        EXPECT_EQ(classify(TNS_SYS_FUTEX, 0x1000, FUTEX_LOCK_PI | FUTEX_CLOCK_REALTIME, 0, 0x2000, 0, 0, &s), -ENOENT);
        ASSERT_EQ(classify(TNS_SYS_FUTEX, 0x1000, 13 /* LOCK_PI2 */, 0, 0x2000, 0, 0, &s), 0);
        EXPECT_EQ(s.clock_class, TNS_CLASS_MONOTONIC);
        /* Unknown bits make an unknown op: the kernel's ENOSYS. */
        EXPECT_EQ(classify(TNS_SYS_FUTEX, 0x1000, FUTEX_WAIT_BITSET | 0x400, 0, 0x2000, 0, ~0U, &s), -ENOENT);
}

TEST(futex2) {
        struct tns_wait_spec s;

        ASSERT_EQ(classify(TNS_SYS_FUTEX_WAITV, 0x1000, 1, 0, 0x2000, CLOCK_MONOTONIC, 0, &s), 0);
        EXPECT_EQ(s.arg, 3U);
        EXPECT_EQ(s.clock_class, TNS_CLASS_MONOTONIC);
        ASSERT_EQ(classify(TNS_SYS_FUTEX_WAITV, 0x1000, 1, 0, 0x2000, CLOCK_REALTIME, 0, &s), 0);
        EXPECT_EQ(s.clock_class, TNS_CLASS_REALTIME);
        EXPECT_EQ(classify(TNS_SYS_FUTEX_WAITV, 0x1000, 1, 0, 0, CLOCK_MONOTONIC, 0, &s), -ENOENT);
        EXPECT_EQ(classify(TNS_SYS_FUTEX_WAITV, 0x1000, 1, 0, 0x2000, CLOCK_BOOTTIME, 0, &s), -ENOENT);
        ASSERT_EQ(classify(TNS_SYS_FUTEX_WAIT, 0x1000, 0, ~0U, 2, 0x2000, CLOCK_REALTIME, &s), 0);
        EXPECT_EQ(s.arg, 4U);
        EXPECT_EQ(classify(TNS_SYS_CLOCK_GETTIME, 0, 0, 0, 0, 0, 0, &s), -ENOENT);
}

/* mq_timedsend/receive: an absolute CLOCK_REALTIME timeout, or none. */
TEST(mqueue) {
        struct tns_wait_spec s;

        ASSERT_EQ(classify(TNS_SYS_MQ_TIMEDRECEIVE, 3, 0x1000, 64, 0, 0x2000, 0, &s), 0);
        EXPECT_EQ(s.arg, 4U);
        EXPECT_EQ(s.clock_class, TNS_CLASS_REALTIME);
        ASSERT_EQ(classify(TNS_SYS_MQ_TIMEDSEND, 3, 0x1000, 64, 1, 0x2000, 0, &s), 0);
        EXPECT_EQ(classify(TNS_SYS_MQ_TIMEDSEND, 3, 0x1000, 64, 1, 0, 0, &s), -ENOENT);
}

/* timens_ktime_to_host(): before the offset, expired; never 0 (disarm). */
TEST(deadline_to_host) {
        EXPECT_EQ(tns_deadline_to_host(11 * DAY, 10 * DAY), DAY);
        EXPECT_EQ(tns_deadline_to_host(5 * DAY, 10 * DAY), 1);
        EXPECT_EQ(tns_deadline_to_host(10 * DAY, 10 * DAY), 1);
        EXPECT_EQ(tns_deadline_to_host(0, 10 * DAY), 1);
        EXPECT_EQ(tns_deadline_to_host(DAY, -3600 * NSEC), DAY + 3600 * NSEC);
        EXPECT_EQ(tns_deadline_to_host(INT64_MAX, -1), INT64_MAX);
        EXPECT_EQ(tns_deadline_to_host(INT64_MAX - 5, INT64_MIN), INT64_MAX);
        EXPECT_EQ(tns_deadline_to_host(INT64_MAX, 10 * DAY), INT64_MAX - 10 * DAY);
        EXPECT_EQ(tns_deadline_to_host(1, INT64_MAX), 1);
}

TEST(timespec_conversion) {
        struct timespec out;

        ASSERT_EQ(tns_wait_ts_to_host(&TS(864100, 5), 864000 * NSEC, &out), 0);
        EXPECT_EQ(out.tv_sec, 100);
        EXPECT_EQ(out.tv_nsec, 5);
        ASSERT_EQ(tns_wait_ts_to_host(&TS(100, 999999999), -3600 * NSEC, &out), 0);
        EXPECT_EQ(out.tv_sec, 3700);
        EXPECT_EQ(out.tv_nsec, 999999999);
        /* timespec64_to_ktime() saturates: so do we, then convert. */
        ASSERT_EQ(tns_wait_ts_to_host(&TS(INT64_MAX, 0), NSEC, &out), 0);
        EXPECT_EQ(out.tv_sec, 9223372035);
        EXPECT_EQ(out.tv_nsec, 854775807);
        /* timespec64_valid(): the kernel's EINVAL, left to the kernel. */
        EXPECT_EQ(tns_wait_ts_to_host(&TS(-1, 0), 0, &out), -EINVAL);
        EXPECT_EQ(tns_wait_ts_to_host(&TS(0, NSEC), 0, &out), -EINVAL);
        EXPECT_EQ(tns_wait_ts_to_host(&TS(0, -1), 0, &out), -EINVAL);
}

TEST(itimerspec_conversion) {
        struct itimerspec in = {.it_interval = TS(1, 0), .it_value = TS(864001, 0)}, out;

        ASSERT_EQ(tns_wait_its_to_host(&in, 864000 * NSEC, &out), 0);
        EXPECT_EQ(out.it_value.tv_sec, 1);
        EXPECT_EQ(out.it_interval.tv_sec, 1); /* relative: unchanged */
        /* Zero disarms, before any conversion (common_timer_set). */
        in.it_value = TS(0, 0);
        ASSERT_EQ(tns_wait_its_to_host(&in, 864000 * NSEC, &out), 0);
        EXPECT_EQ(out.it_value.tv_sec, 0);
        EXPECT_EQ(out.it_value.tv_nsec, 0);
        /* Expired, yet armed: 1 ns, not 0. */
        in.it_value = TS(5, 0);
        ASSERT_EQ(tns_wait_its_to_host(&in, 864000 * NSEC, &out), 0);
        EXPECT_EQ(out.it_value.tv_sec, 0);
        EXPECT_EQ(out.it_value.tv_nsec, 1);
        in.it_interval = TS(0, NSEC);
        EXPECT_EQ(tns_wait_its_to_host(&in, 0, &out), -EINVAL);
}

TEST(proc_timers) {
        static const char text[] = "ID: 0\nsignal: 34/0000000000000000\nnotify: signal/pid.7\nClockID: 1\n"
                                   "ID: 3\nsignal: 0/0000000000000000\nnotify: none/pid.7\nClockID: 7\n";
        clockid_t c;

        ASSERT_EQ(tns_parse_proc_timers(text, 3, &c), 0);
        EXPECT_EQ(c, CLOCK_BOOTTIME);
        ASSERT_EQ(tns_parse_proc_timers(text, 0, &c), 0);
        EXPECT_EQ(c, CLOCK_MONOTONIC);
        EXPECT_EQ(tns_parse_proc_timers(text, 1, &c), -ENOENT);
        EXPECT_EQ(tns_parse_proc_timers("", 0, &c), -ENOENT);
        EXPECT_EQ(tns_parse_proc_timers("ID: 0\nsignal: 1\nID: 1\nClockID: 1\n", 0, &c), -EBADMSG);
        EXPECT_EQ(tns_parse_proc_timers("ID: 0\nsignal: 1\n", 0, &c), -EBADMSG);
}

TEST(timerfd_fdinfo) {
        clockid_t c;

        int flags = -1;

        ASSERT_EQ(tns_parse_timerfd_fdinfo("pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nclockid: 7\n"
                                           "ticks: 0\nsettime flags: 01\n",
                                           &c, &flags),
                  0);
        EXPECT_EQ(c, CLOCK_BOOTTIME);
        EXPECT_EQ(flags, TFD_TIMER_ABSTIME);
        ASSERT_EQ(tns_parse_timerfd_fdinfo("clockid: 0\nticks: 0\nsettime flags: 00\n", &c, &flags), 0);
        EXPECT_EQ(flags, 0);
        ASSERT_EQ(tns_parse_timerfd_fdinfo("clockid: 0\n", &c, NULL), 0); /* an older kernel: none */
        EXPECT_EQ(tns_parse_timerfd_fdinfo("pos:\t0\nflags:\t02\n", &c, &flags), -ENOENT);
}

/* Rated namespaces (issue 18): relative waits, and what they become. */
static int classify_rated(enum tns_sys sys, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
                          struct tns_wait_spec *ret) {
        const uint64_t args[6] = {a0, a1, a2, a3, a4, 0};

        return tns_wait_classify_rated(sys, args, ret);
}

TEST(rated_classify) {
        struct tns_wait_spec s;

        ASSERT_EQ(classify_rated(TNS_SYS_CLOCK_NANOSLEEP, CLOCK_MONOTONIC, 0, 0x1000, 0, 0, &s), 0);
        EXPECT_TRUE(s.relative);
        EXPECT_EQ(s.arg, 2U);
        EXPECT_EQ(classify_rated(TNS_SYS_CLOCK_NANOSLEEP, CLOCK_MONOTONIC, TIMER_ABSTIME, 0x1000, 0, 0, &s), -ENOENT);
        EXPECT_EQ(classify_rated(TNS_SYS_CLOCK_NANOSLEEP, CLOCK_PROCESS_CPUTIME_ID, 0, 0x1000, 0, 0, &s), -ENOENT);
        ASSERT_EQ(classify_rated(TNS_SYS_NANOSLEEP, 0x1000, 0, 0, 0, 0, &s), 0);
        EXPECT_EQ(s.arg, 0U);
        EXPECT_EQ(s.kind, TNS_WAIT_TIMESPEC);
        /* poll: a positive timeout only; -1 (infinite) and 0 stay the kernel's. */
        ASSERT_EQ(classify_rated(TNS_SYS_POLL, 0, 0, 500, 0, 0, &s), 0);
        EXPECT_EQ(s.kind, TNS_WAIT_INT_MS);
        EXPECT_EQ(classify_rated(TNS_SYS_POLL, 0, 0, 0, 0, 0, &s), -ENOENT);
        EXPECT_EQ(classify_rated(TNS_SYS_POLL, 0, 0, UINT32_MAX, 0, 0, &s), -ENOENT);
        EXPECT_EQ(classify_rated(TNS_SYS_POLL, 0, 0, UINT64_MAX, 0, 0, &s), -ENOENT);
        /* Converted by us already (a successor finds it after our death). */
        EXPECT_EQ(classify_rated(TNS_SYS_POLL, 0, 0, TNS_WAIT_REG_MARK | 250, 0, 0, &s), -ENOENT);
        EXPECT_EQ(classify_rated(TNS_SYS_EPOLL_WAIT, 3, 0, 8, TNS_WAIT_REG_MARK | 250, 0, &s), -ENOENT);
        EXPECT_EQ(classify_rated(TNS_SYS_ALARM, TNS_WAIT_REG_MARK | 2, 0, 0, 0, 0, &s), -ENOENT);
        ASSERT_EQ(classify_rated(TNS_SYS_POLL, 0, 0, (UINT64_C(1) << 32) | 250, 0, 0, &s), 0); /* not the mark */
        ASSERT_EQ(classify_rated(TNS_SYS_SELECT, 1, 0, 0, 0, 0x2000, &s), 0);
        EXPECT_EQ(s.kind, TNS_WAIT_TIMEVAL);
        EXPECT_EQ(classify_rated(TNS_SYS_SELECT, 1, 0, 0, 0, 0, &s), -ENOENT); /* no timeout */
        ASSERT_EQ(classify_rated(TNS_SYS_FUTEX, 0x1000, FUTEX_WAIT_PRIVATE, 0, 0x2000, 0, &s), 0);
        EXPECT_EQ(s.arg, 3U);
        EXPECT_EQ(classify_rated(TNS_SYS_FUTEX, 0x1000, FUTEX_WAKE, 0, 0x2000, 0, &s), -ENOENT);
        ASSERT_EQ(classify_rated(TNS_SYS_SETITIMER, 0, 0x1000, 0, 0, 0, &s), 0);
        EXPECT_EQ(s.kind, TNS_WAIT_ITIMERVAL);
        EXPECT_EQ(classify_rated(TNS_SYS_SETITIMER, 1 /* ITIMER_VIRTUAL */, 0x1000, 0, 0, 0, &s), -ENOENT);
        ASSERT_EQ(classify_rated(TNS_SYS_ALARM, 3, 0, 0, 0, 0, &s), 0);
        EXPECT_EQ(s.kind, TNS_WAIT_INT_SEC);
        /* alarm(0) too: its result is the cancelled alarm's time left. */
        ASSERT_EQ(classify_rated(TNS_SYS_ALARM, 0, 0, 0, 0, 0, &s), 0);
        EXPECT_EQ(classify_rated(TNS_SYS_ALARM, TNS_WAIT_REG_MARK | 3, 0, 0, 0, 0, &s), -ENOENT);
        ASSERT_EQ(classify_rated(TNS_SYS_TIMERFD_SETTIME, 3, 0, 0x1000, 0, 0, &s), 0);
        EXPECT_TRUE(s.via_fd);
        EXPECT_EQ(classify_rated(TNS_SYS_TIMERFD_SETTIME, 3, TIMER_ABSTIME, 0x1000, 0, 0, &s), -ENOENT);
        EXPECT_EQ(classify_rated(TNS_SYS_MQ_TIMEDSEND, 0, 0, 0, 0, 0x1000, &s), -ENOENT); /* absolute */
        /* Read backs: the result at arg 1, converted at the call's end. */
        ASSERT_EQ(classify_rated(TNS_SYS_GETITIMER, 0, 0x1000, 0, 0, 0, &s), 0);
        EXPECT_TRUE(s.readback);
        EXPECT_EQ(s.arg, 1U);
        EXPECT_EQ(s.kind, TNS_WAIT_ITIMERVAL);
        EXPECT_EQ(classify_rated(TNS_SYS_GETITIMER, 2 /* ITIMER_PROF */, 0x1000, 0, 0, 0, &s), -ENOENT);
        EXPECT_EQ(classify_rated(TNS_SYS_GETITIMER, 0, 0, 0, 0, 0, &s), -ENOENT); /* the kernel's EFAULT */
        ASSERT_EQ(classify_rated(TNS_SYS_TIMER_GETTIME, 1, 0x1000, 0, 0, 0, &s), 0);
        EXPECT_TRUE(s.readback);
        EXPECT_EQ(s.kind, TNS_WAIT_ITIMERSPEC);
        EXPECT_EQ(s.clock_class, -1);
        ASSERT_EQ(classify_rated(TNS_SYS_SETITIMER, 0, 0x1000, 0, 0, 0, &s), 0);
        EXPECT_FALSE(s.readback);
}

TEST(rated_time_left) {
        struct tns_wait_spec sel, ps, ns;
        const uint64_t args_sel[6] = {0, 0, 0, 0, 0x1000, 0}, args_ps[6] = {0, 0, 0, 0, 0x1000, 0},
                       args_ns[6] = {0x1000, 0x2000, 0, 0, 0, 0};
        struct timespec ts;
        int64_t tv[2];

        ASSERT_EQ(tns_wait_classify_rated(TNS_SYS_SELECT, args_sel, &sel), 0);
        EXPECT_TRUE(sel.writes_back);
        ASSERT_EQ(tns_wait_classify_rated(TNS_SYS_PSELECT6, args_ps, &ps), 0);
        EXPECT_TRUE(ps.writes_back);
        ASSERT_EQ(tns_wait_classify_rated(TNS_SYS_NANOSLEEP, args_ns, &ns), 0);
        EXPECT_FALSE(ns.writes_back);
        EXPECT_EQ(ns.rem_arg, 1U);
        /* 0.75 host seconds left at x2: 1.5 s of the namespace's. */
        ASSERT_EQ(tns_wait_time_left_rated(&sel, 2 * TNS_RATE_ONE, 750000000, tv), 0);
        EXPECT_EQ(tv[0], 1);
        EXPECT_EQ(tv[1], 500000);
        ASSERT_EQ(tns_wait_time_left_rated(&ps, TNS_RATE_ONE / 2, 750000000, &ts), 0);
        EXPECT_EQ(ts.tv_sec, 0);
        EXPECT_EQ(ts.tv_nsec, 375000000);
        /* Past its end: none left. Frozen (mult 0): host time. */
        ASSERT_EQ(tns_wait_time_left_rated(&ps, 2 * TNS_RATE_ONE, -5, &ts), 0);
        EXPECT_EQ(ts.tv_sec, 0);
        EXPECT_EQ(ts.tv_nsec, 0);
        ASSERT_EQ(tns_wait_time_left_rated(&ps, 0, 250, &ts), 0);
        EXPECT_EQ(ts.tv_nsec, 250);
        EXPECT_EQ(tns_wait_time_left_rated(&ns, 2 * TNS_RATE_ONE, 1, &ts), -EINVAL);
        /* The duration both ways: within a host nanosecond's worth. */
        EXPECT_EQ(tns_rate_duration_from_host(3 * TNS_RATE_ONE, tns_rate_duration_to_host(3 * TNS_RATE_ONE, 1000)),
                  1002); /* 334 host ns */
        EXPECT_EQ(tns_rate_duration_from_host(TNS_RATE_ONE / 4, 1000), 250);
        EXPECT_EQ(tns_rate_duration_from_host(2 * TNS_RATE_ONE, INT64_MAX), INT64_MAX);
}

TEST(rated_convert) {
        struct tns_rate_map x2 = {2 * TNS_RATE_ONE, 100 * NSEC, 1000 * NSEC}, m;
        struct tns_wait_spec rel = {.kind = TNS_WAIT_TIMESPEC, .relative = true}, abs = {.kind = TNS_WAIT_TIMESPEC};
        struct timespec in = TS(1, 0), out;
        struct itimerspec its_in = {TS(2, 0), TS(4, 0)}, its_out;
        uint64_t reg;

        /* A second of the namespace is half a host second at x2. */
        ASSERT_EQ(tns_wait_convert_rated(&rel, &x2, &in, &out, NULL), 0);
        EXPECT_EQ(out.tv_sec, 0);
        EXPECT_EQ(out.tv_nsec, NSEC / 2);
        /* Zero stays zero. */
        in = TS(0, 0);
        ASSERT_EQ(tns_wait_convert_rated(&rel, &x2, &in, &out, NULL), 0);
        EXPECT_EQ(out.tv_sec, 0);
        EXPECT_EQ(out.tv_nsec, 0);
        /* A deadline: namespace 1010 s is host 105 s. */
        in = TS(1010, 0);
        ASSERT_EQ(tns_wait_convert_rated(&abs, &x2, &in, &out, NULL), 0);
        EXPECT_EQ(out.tv_sec, 105);
        EXPECT_EQ(out.tv_nsec, 0);
        /* Already past: 1 ns, never 0. */
        in = TS(10, 0);
        ASSERT_EQ(tns_wait_convert_rated(&abs, &x2, &in, &out, NULL), 0);
        EXPECT_EQ(out.tv_sec, 0);
        EXPECT_EQ(out.tv_nsec, 1);
        /* The kernel's EINVAL stays the kernel's. */
        in = TS(1, NSEC);
        EXPECT_EQ(tns_wait_convert_rated(&rel, &x2, &in, &out, NULL), -EINVAL);
        /* A timer: value and interval scaled. */
        rel.kind = TNS_WAIT_ITIMERSPEC;
        ASSERT_EQ(tns_wait_convert_rated(&rel, &x2, &its_in, &its_out, NULL), 0);
        EXPECT_EQ(its_out.it_interval.tv_sec, 1);
        EXPECT_EQ(its_out.it_value.tv_sec, 2);
        /* poll's milliseconds, rounded up; alarm's seconds. */
        rel.kind = TNS_WAIT_INT_MS;
        reg = 3;
        ASSERT_EQ(tns_wait_convert_rated(&rel, &x2, NULL, NULL, &reg), 0);
        EXPECT_EQ(reg, TNS_WAIT_REG_MARK | 2); /* the kernel reads the low half */
        rel.kind = TNS_WAIT_INT_SEC;
        reg = 1;
        ASSERT_EQ(tns_wait_convert_rated(&rel, &x2, NULL, NULL, &reg), 0);
        EXPECT_EQ(reg, TNS_WAIT_REG_MARK | 1); /* half a second is not an alarm: at least 1 */
        reg = 10;
        ASSERT_EQ(tns_wait_convert_rated(&rel, &x2, NULL, NULL, &reg), 0);
        EXPECT_EQ(reg, TNS_WAIT_REG_MARK | 5);
        /* Frozen: host time, from the frozen reading. */
        x2.mult = 0;
        tns_wait_map(&x2, 500 * NSEC, &m);
        EXPECT_EQ(m.mult, TNS_RATE_ONE);
        in = TS(1003, 0);
        ASSERT_EQ(tns_wait_convert_rated(&abs, &m, &in, &out, NULL), 0);
        EXPECT_EQ(out.tv_sec, 503);
}

/* What alarm returns, from setitimer's old value (host time): the
 * namespace's seconds, rounded as the kernel's alarm_setitimer(). */
TEST(alarm_left) {
        const uint64_t one = TNS_RATE_ONE;

        EXPECT_EQ(tns_wait_alarm_left(2 * one, 5, 0), 10U);
        EXPECT_EQ(tns_wait_alarm_left(one / 2, 20, 0), 10U);
        EXPECT_EQ(tns_wait_alarm_left(one, 0, 0), 0U); /* none left */
        EXPECT_EQ(tns_wait_alarm_left(one, 0, 1), 1U); /* any left: at least 1 */
        EXPECT_EQ(tns_wait_alarm_left(one, 2, 499999), 2U);
        EXPECT_EQ(tns_wait_alarm_left(one, 2, 500000), 3U);
        EXPECT_EQ(tns_wait_alarm_left(4 * one, 2, 400000), 10U); /* 9.6 s */
        EXPECT_EQ(tns_wait_alarm_left(one, -1, 0), 0U);
        EXPECT_EQ(tns_wait_alarm_left(one, 1, 1000000), 0U);
        EXPECT_EQ(tns_wait_alarm_left(1000000 * one, 100000, 0), UINT32_MAX);
        /* 4296 s at 1/1000000: more than 2^32 s of host time. */
        EXPECT_EQ(tns_wait_alarm_left((one + 500000) / 1000000, INT64_C(4296000000), 0), 4296U);
}

/* A timer's old value as the kernel wrote it (host time), made the
 * namespace's: value and interval scaled, each rounded down. */
TEST(timer_from_host) {
        struct itimerspec its = {.it_interval = {1, 500000000}, .it_value = {5, 0}};
        struct {
                int64_t sec, usec;
        } itv[2] = {{1, 500000}, {5, 1}};

        ASSERT_EQ(tns_wait_timer_from_host(TNS_WAIT_ITIMERSPEC, 2 * TNS_RATE_ONE, &its), 0);
        EXPECT_EQ(its.it_interval.tv_sec, 3);
        EXPECT_EQ(its.it_interval.tv_nsec, 0);
        EXPECT_EQ(its.it_value.tv_sec, 10);
        ASSERT_EQ(tns_wait_timer_from_host(TNS_WAIT_ITIMERVAL, TNS_RATE_ONE / 2, itv), 0);
        EXPECT_EQ(itv[0].sec, 0);
        EXPECT_EQ(itv[0].usec, 750000);
        EXPECT_EQ(itv[1].sec, 2);
        EXPECT_EQ(itv[1].usec, 500000); /* 2.5000005 s, rounded down */
        /* Disarmed stays disarmed; what the kernel never writes is refused. */
        its = (struct itimerspec){};
        ASSERT_EQ(tns_wait_timer_from_host(TNS_WAIT_ITIMERSPEC, 3 * TNS_RATE_ONE, &its), 0);
        EXPECT_EQ(its.it_value.tv_sec, 0);
        EXPECT_EQ(its.it_value.tv_nsec, 0);
        its.it_value.tv_nsec = 2000000000;
        EXPECT_EQ(tns_wait_timer_from_host(TNS_WAIT_ITIMERSPEC, TNS_RATE_ONE, &its), -EINVAL);
        EXPECT_EQ(tns_wait_timer_from_host(TNS_WAIT_TIMESPEC, TNS_RATE_ONE, &its), -EINVAL);
}
