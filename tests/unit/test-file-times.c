/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File times set to "now": which calls, where their times are, and what
 * the kernel is given instead, against utimensat()'s own reading of its
 * arguments (fs/utimes.c: a NULL pointer or UTIME_NOW is now, UTIME_OMIT
 * leaves a time, any other tv_nsec outside [0, 1e9) is EINVAL). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clocks.h"
#include "file-times.h"
#include "test.h"

struct kts {
        int64_t sec, nsec;
};

static const struct timespec now = {.tv_sec = 1893456000, .tv_nsec = 123456789};

TEST(classify_every_call) {
        const uint64_t args[6] = {0};
        struct tns_wait_spec s;

        ASSERT_EQ(tns_file_times_classify(TNS_SYS_UTIMENSAT, args, &s), 0);
        EXPECT_EQ(s.arg, 2U);
        EXPECT_EQ(s.kind, TNS_WAIT_UTIMENS);
        EXPECT_EQ(s.clock_class, TNS_CLASS_REALTIME);
        EXPECT_TRUE(s.now);
        ASSERT_EQ(tns_file_times_classify(TNS_SYS_FUTIMESAT, args, &s), 0);
        EXPECT_EQ(s.arg, 2U);
        EXPECT_EQ(s.kind, TNS_WAIT_UTIMES);
        ASSERT_EQ(tns_file_times_classify(TNS_SYS_UTIMES, args, &s), 0);
        EXPECT_EQ(s.arg, 1U);
        EXPECT_EQ(s.kind, TNS_WAIT_UTIMES);
        ASSERT_EQ(tns_file_times_classify(TNS_SYS_UTIME, args, &s), 0);
        EXPECT_EQ(s.arg, 1U);
        EXPECT_EQ(s.kind, TNS_WAIT_UTIMBUF);
        EXPECT_EQ(tns_file_times_classify(TNS_SYS_CLOCK_NANOSLEEP, args, &s), -ENOENT);
        EXPECT_EQ(tns_wait_size(TNS_WAIT_UTIMENS), 32U);
        EXPECT_EQ(tns_wait_size(TNS_WAIT_UTIMES), 32U);
        EXPECT_EQ(tns_wait_size(TNS_WAIT_UTIMBUF), 16U);
}

TEST(utimensat_null_is_now_twice) {
        struct kts out[2];

        ASSERT_EQ(tns_file_times_now(TNS_WAIT_UTIMENS, NULL, &now, out), 0);
        EXPECT_EQ(out[0].sec, now.tv_sec);
        EXPECT_EQ(out[0].nsec, now.tv_nsec);
        EXPECT_EQ(out[1].sec, now.tv_sec);
        EXPECT_EQ(out[1].nsec, now.tv_nsec);
}

TEST(utimensat_now_and_omit) {
        struct kts in[2] = {{5, UTIME_NOW}, {7, UTIME_OMIT}}, out[2];

        ASSERT_EQ(tns_file_times_now(TNS_WAIT_UTIMENS, in, &now, out), 0);
        EXPECT_EQ(out[0].sec, now.tv_sec);
        EXPECT_EQ(out[0].nsec, now.tv_nsec);
        EXPECT_EQ(out[1].sec, 7); /* left as it is: the kernel ignores it */
        EXPECT_EQ(out[1].nsec, UTIME_OMIT);
        in[0] = (struct kts){1000, 5};
        in[1] = (struct kts){0, UTIME_NOW};
        ASSERT_EQ(tns_file_times_now(TNS_WAIT_UTIMENS, in, &now, out), 0);
        EXPECT_EQ(out[0].sec, 1000);
        EXPECT_EQ(out[0].nsec, 5);
        EXPECT_EQ(out[1].sec, now.tv_sec);
}

TEST(utimensat_explicit_or_invalid_runs_as_it_is) {
        struct kts in[2] = {{1000, 0}, {2000, 999999999}}, out[2] = {{-1, -1}, {-1, -1}};

        EXPECT_EQ(tns_file_times_now(TNS_WAIT_UTIMENS, in, &now, out), -ENOENT);
        in[1].nsec = UTIME_OMIT;
        in[0].nsec = UTIME_OMIT;
        EXPECT_EQ(tns_file_times_now(TNS_WAIT_UTIMENS, in, &now, out), -ENOENT);
        /* The kernel's EINVAL, also next to a UTIME_NOW. */
        in[0] = (struct kts){0, UTIME_NOW};
        in[1] = (struct kts){0, 1000000000};
        EXPECT_EQ(tns_file_times_now(TNS_WAIT_UTIMENS, in, &now, out), -EINVAL);
        in[1].nsec = -1;
        EXPECT_EQ(tns_file_times_now(TNS_WAIT_UTIMENS, in, &now, out), -EINVAL);
        EXPECT_EQ(out[0].sec, -1); /* nothing written */
}

TEST(utimes_and_utime_null_only) {
        int64_t out[4];
        const int64_t in[4] = {1, 2, 3, 4};

        ASSERT_EQ(tns_file_times_now(TNS_WAIT_UTIMES, NULL, &now, out), 0);
        EXPECT_EQ(out[0], now.tv_sec);
        EXPECT_EQ(out[1], now.tv_nsec / 1000);
        EXPECT_EQ(out[2], now.tv_sec);
        EXPECT_EQ(out[3], now.tv_nsec / 1000);
        EXPECT_EQ(tns_file_times_now(TNS_WAIT_UTIMES, in, &now, out), -ENOENT);
        ASSERT_EQ(tns_file_times_now(TNS_WAIT_UTIMBUF, NULL, &now, out), 0);
        EXPECT_EQ(out[0], now.tv_sec);
        EXPECT_EQ(out[1], now.tv_sec);
        EXPECT_EQ(tns_file_times_now(TNS_WAIT_UTIMBUF, in, &now, out), -ENOENT);
        EXPECT_EQ(tns_file_times_now(TNS_WAIT_TIMESPEC, NULL, &now, out), -EINVAL);
}

/* A predecessor's rewrite read back: what tns_file_times_now() wrote, a
 * little before now, is "now" again; the program's own times are not. */
TEST(recover_what_we_wrote) {
        const struct timespec then = {.tv_sec = now.tv_sec - 2, .tv_nsec = 999999999};
        struct kts in[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}}, out[2], back[2];
        int64_t tv[4], ub[2];
        bool null = false;

        /* Both "now" (a NULL pointer): NULL again. */
        ASSERT_EQ(tns_file_times_now(TNS_WAIT_UTIMENS, NULL, &then, out), 0);
        ASSERT_EQ(tns_file_times_recover(TNS_WAIT_UTIMENS, out, &now, back, &null), 0);
        EXPECT_TRUE(null);
        EXPECT_EQ(back[0].nsec, UTIME_NOW);
        EXPECT_EQ(back[1].nsec, UTIME_NOW);
        /* UTIME_NOW next to UTIME_OMIT: that pattern, no NULL. */
        ASSERT_EQ(tns_file_times_now(TNS_WAIT_UTIMENS, in, &then, out), 0);
        ASSERT_EQ(tns_file_times_recover(TNS_WAIT_UTIMENS, out, &now, back, &null), 0);
        EXPECT_FALSE(null);
        EXPECT_EQ(back[0].nsec, UTIME_NOW);
        EXPECT_EQ(back[1].nsec, UTIME_OMIT);
        /* utimes and utime: NULL. */
        ASSERT_EQ(tns_file_times_now(TNS_WAIT_UTIMES, NULL, &then, tv), 0);
        null = false;
        ASSERT_EQ(tns_file_times_recover(TNS_WAIT_UTIMES, tv, &now, back, &null), 0);
        EXPECT_TRUE(null);
        ASSERT_EQ(tns_file_times_now(TNS_WAIT_UTIMBUF, NULL, &now, ub), 0);
        null = false;
        ASSERT_EQ(tns_file_times_recover(TNS_WAIT_UTIMBUF, ub, &now, back, &null), 0);
        EXPECT_TRUE(null);
}

TEST(recover_not_the_programs_own_times) {
        struct kts t[2] = {{now.tv_sec - 3600, 0}, {now.tv_sec, 0}}, back[2] = {{-1, -1}, {-1, -1}};
        int64_t tv[4] = {now.tv_sec, 0, now.tv_sec + 5, 0}, ub[2] = {now.tv_sec - 61, now.tv_sec};
        bool null = false;

        /* An hour ago (tar, cp -p), the future, both omitted, invalid. */
        EXPECT_EQ(tns_file_times_recover(TNS_WAIT_UTIMENS, t, &now, back, &null), -ENOENT);
        t[0] = (struct kts){now.tv_sec + 2, 0};
        EXPECT_EQ(tns_file_times_recover(TNS_WAIT_UTIMENS, t, &now, back, &null), -ENOENT);
        t[0] = t[1] = (struct kts){0, UTIME_OMIT};
        EXPECT_EQ(tns_file_times_recover(TNS_WAIT_UTIMENS, t, &now, back, &null), -ENOENT);
        t[0] = (struct kts){now.tv_sec, 1000000000};
        EXPECT_EQ(tns_file_times_recover(TNS_WAIT_UTIMENS, t, &now, back, &null), -ENOENT);
        EXPECT_EQ(back[0].sec, -1); /* nothing written */
        EXPECT_EQ(tns_file_times_recover(TNS_WAIT_UTIMES, tv, &now, back, &null), -ENOENT);
        tv[1] = 1000000; /* microseconds out of range */
        tv[2] = now.tv_sec;
        EXPECT_EQ(tns_file_times_recover(TNS_WAIT_UTIMES, tv, &now, back, &null), -ENOENT);
        EXPECT_EQ(tns_file_times_recover(TNS_WAIT_UTIMBUF, ub, &now, back, &null), -ENOENT);
        EXPECT_FALSE(null);
        /* Far from now's int64 ends: no overflow. */
        t[0] = (struct kts){INT64_MIN, 0};
        t[1] = (struct kts){INT64_MAX, 0};
        EXPECT_EQ(tns_file_times_recover(TNS_WAIT_UTIMENS, t, &now, back, &null), -ENOENT);
        EXPECT_EQ(tns_file_times_recover(TNS_WAIT_TIMESPEC, t, &now, back, &null), -ENOENT);
}
