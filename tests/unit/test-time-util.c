/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <time.h>

#include "test.h"
#include "time-util.h"
#include "util.h"

#define NSEC TNS_NSEC_PER_SEC
#define TS(s, n) ((struct timespec){.tv_sec = (s), .tv_nsec = (n)})

/* INT64_MIN and INT64_MAX as floor-normalised timespecs. */
#define TS_NS_MIN TS(-9223372037LL, 145224192L)
#define TS_NS_MAX TS(9223372036LL, 854775807L)

/* Says which row of a table failed, as the harness only prints the line. */
static void note_case(size_t i, bool failed) {
        if (failed)
                printf("# case %zu\n", i);
}

TEST(ts_valid) {
        static const struct {
                struct timespec ts;
                bool valid;
        } cases[] = {
                {TS(0, 0), true},          {TS(0, 999999999), true}, {TS(INT64_MAX, 999999999), true},
                {TS(1, NSEC), false},      {TS(1, -1), false},       {TS(-1, 0), false},
                {TS(INT64_MIN, 0), false}, {TS(0, LONG_MAX), false}, {TS(0, LONG_MIN), false},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                EXPECT_EQ(tns_ts_valid(&cases[i].ts), cases[i].valid);
}

TEST(ts_to_ns) {
        static const struct {
                struct timespec ts;
                int rc;
                int64_t ns;
        } cases[] = {
                {TS(0, 0), 0, 0},
                {TS(1, 1), 0, NSEC + 1},
                {TS(-1, 0), 0, -NSEC},
                {TS(-1, 999999999), 0, -1},
                {TS(-2, 500000000), 0, -1500000000},
                {TS_NS_MAX, 0, INT64_MAX},
                {TS_NS_MIN, 0, INT64_MIN},
                {TS(9223372036LL, 854775808L), -ERANGE, 0},
                {TS(-9223372037LL, 145224191L), -ERANGE, 0},
                {TS(9223372037LL, 0), -ERANGE, 0},
                {TS(INT64_MAX, 0), -ERANGE, 0},
                {TS(INT64_MIN, 0), -ERANGE, 0},
                {TS(INT64_MIN, 999999999), -ERANGE, 0},
                {TS(0, NSEC), -EINVAL, 0},
                {TS(0, -1), -EINVAL, 0},
                {TS(INT64_MAX, LONG_MAX), -EINVAL, 0},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int64_t ns = 42;

                int rc = tns_ts_to_ns(&cases[i].ts, &ns);

                note_case(i, rc != cases[i].rc || ns != (rc == 0 ? cases[i].ns : 42));
                EXPECT_EQ(rc, cases[i].rc);
                EXPECT_EQ(ns, cases[i].rc == 0 ? cases[i].ns : 42);
        }
}

TEST(ns_to_ts) {
        static const struct {
                int64_t ns;
                struct timespec ts;
        } cases[] = {
                {0, TS(0, 0)},          {1, TS(0, 1)},          {-1, TS(-1, 999999999)},
                {NSEC, TS(1, 0)},       {-NSEC, TS(-1, 0)},     {-NSEC - 1, TS(-2, 999999999)},
                {-NSEC + 1, TS(-1, 1)}, {INT64_MAX, TS_NS_MAX}, {INT64_MIN, TS_NS_MIN},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct timespec ts = tns_ns_to_ts(cases[i].ns);
                int64_t back;

                EXPECT_EQ(ts.tv_sec, cases[i].ts.tv_sec);
                EXPECT_EQ(ts.tv_nsec, cases[i].ts.tv_nsec);
                EXPECT_EQ(tns_ts_to_ns(&ts, &back), 0);
                EXPECT_EQ(back, cases[i].ns);
        }
}

TEST(ts_add_ns) {
        static const struct {
                struct timespec ts;
                int64_t ns;
                int rc;
                struct timespec sum;
        } cases[] = {
                {TS(0, 0), 0, 0, TS(0, 0)},
                {TS(10, 500000000), 500000000, 0, TS(11, 0)},
                {TS(10, 999999999), 1, 0, TS(11, 0)},
                {TS(10, 0), -1, 0, TS(9, 999999999)},
                {TS(10, 1), -2, 0, TS(9, 999999999)},
                {TS(0, 0), -1, 0, TS(-1, 999999999)},
                {TS(1, 999999999), 999999999, 0, TS(2, 999999998)},
                {TS(0, 0), INT64_MAX, 0, TS_NS_MAX},
                {TS(0, 0), INT64_MIN, 0, TS_NS_MIN},
                {TS(1000, 999999999), INT64_MIN, 0, TS(1000 - 9223372036LL, 145224191)},
                {TS(INT64_MAX, 0), 999999999, 0, TS(INT64_MAX, 999999999)},
                {TS(INT64_MAX, 1), 999999999, -EOVERFLOW, TS(0, 0)},
                {TS(INT64_MAX, 0), NSEC, -EOVERFLOW, TS(0, 0)},
                {TS(INT64_MAX - 9223372036LL, 145224193), INT64_MAX, -EOVERFLOW, TS(0, 0)},
                {TS(INT64_MAX - 9223372036LL, 145224192), INT64_MAX, 0, TS(INT64_MAX, 999999999)},
                {TS(INT64_MIN, 0), -1, -EOVERFLOW, TS(0, 0)},
                {TS(INT64_MIN, 1), -1, 0, TS(INT64_MIN, 0)},
                {TS(INT64_MIN + 9223372037LL, 0), INT64_MIN, 0, TS(INT64_MIN, 145224192)},
                {TS(INT64_MIN + 9223372036LL, 0), INT64_MIN, -EOVERFLOW, TS(0, 0)},
                {TS(0, NSEC), 0, -EINVAL, TS(0, 0)},
                {TS(0, -1), 0, -EINVAL, TS(0, 0)},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct timespec sum = TS(42, 42);
                int rc = tns_ts_add_ns(&cases[i].ts, cases[i].ns, &sum);

                note_case(i, rc != cases[i].rc || (rc == 0 && (sum.tv_sec != cases[i].sum.tv_sec ||
                                                               sum.tv_nsec != cases[i].sum.tv_nsec)));
                EXPECT_EQ(rc, cases[i].rc);
                if (cases[i].rc != 0) {
                        EXPECT_EQ(sum.tv_sec, 42);
                        EXPECT_EQ(sum.tv_nsec, 42);
                        continue;
                }
                EXPECT_EQ(sum.tv_sec, cases[i].sum.tv_sec);
                EXPECT_EQ(sum.tv_nsec, cases[i].sum.tv_nsec);
        }
}

TEST(ts_diff_ns) {
        static const struct {
                struct timespec a, b;
                int rc;
                int64_t diff;
        } cases[] = {
                {TS(0, 0), TS(0, 0), 0, 0},
                {TS(11, 0), TS(10, 999999999), 0, 1},
                {TS(10, 999999999), TS(11, 0), 0, -1},
                {TS(-1, 0), TS(1, 500000000), 0, -2500000000LL},
                {TS_NS_MAX, TS(0, 0), 0, INT64_MAX},
                {TS_NS_MIN, TS(0, 0), 0, INT64_MIN},
                {TS(0, 0), TS_NS_MAX, 0, -INT64_MAX},
                {TS(0, 0), TS_NS_MIN, -ERANGE, 0},
                {TS(9223372036LL, 854775808L), TS(0, 0), -ERANGE, 0},
                {TS(9223372036LL, 854775808L), TS(0, 1), 0, INT64_MAX},
                /* Far from zero, close to each other. */
                {TS(INT64_MAX, 0), TS(INT64_MAX - 5, 500000000), 0, 4500000000LL},
                {TS(INT64_MIN, 0), TS(INT64_MIN, 999999999), 0, -999999999},
                {TS(INT64_MAX, 0), TS(INT64_MIN, 0), -ERANGE, 0},
                {TS(INT64_MIN, 0), TS(INT64_MAX, 0), -ERANGE, 0},
                {TS(INT64_MIN, 0), TS(1, 0), -ERANGE, 0},
                /* Not normalised: still exact. */
                {TS(0, 1500000000), TS(0, 0), 0, 1500000000},
                {TS(0, -1), TS(0, 0), 0, -1},
                {TS(-9223372036LL, -854775808L), TS(0, 0), 0, INT64_MIN},
                {TS(0, LONG_MAX), TS(0, LONG_MIN), -ERANGE, 0},
                {TS(-1, LONG_MAX), TS(0, LONG_MAX), 0, -NSEC},
                {TS(INT64_MAX, 999999999), TS(0, -1), -ERANGE, 0},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int64_t diff = 42;
                int rc = tns_ts_diff_ns(&cases[i].a, &cases[i].b, &diff);

                note_case(i, rc != cases[i].rc || diff != (rc == 0 ? cases[i].diff : 42));
                EXPECT_EQ(rc, cases[i].rc);
                EXPECT_EQ(diff, cases[i].rc == 0 ? cases[i].diff : 42);
        }
}

TEST(ns_add) {
        static const struct {
                int64_t a, b;
                int rc;
                int64_t sum;
        } cases[] = {
                {0, 0, 0, 0},
                {1, -1, 0, 0},
                {INT64_MAX, 0, 0, INT64_MAX},
                {INT64_MAX, 1, -ERANGE, 0},
                {INT64_MAX, INT64_MIN, 0, -1},
                {INT64_MIN, -1, -ERANGE, 0},
                {INT64_MIN, INT64_MIN, -ERANGE, 0},
                {INT64_MAX, INT64_MAX, -ERANGE, 0},
                {-5, -6, 0, -11},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int64_t sum = 42;

                EXPECT_EQ(tns_ns_add(cases[i].a, cases[i].b, &sum), cases[i].rc);
                EXPECT_EQ(sum, cases[i].rc == 0 ? cases[i].sum : 42);
        }
}

TEST(add_then_diff_round_trips) {
        static const int64_t offsets[] = {
                0, 1, -1, NSEC - 1, -NSEC + 1, 86400 * NSEC, -86400 * NSEC, INT64_MAX, INT64_MIN,
        };
        static const struct timespec bases[] = {
                TS(0, 0),
                TS(1, 999999999),
                TS(1893456000, 123456789),
                TS(-5, 1),
        };

        for (size_t i = 0; i < ELEMENTSOF(bases); i++)
                for (size_t j = 0; j < ELEMENTSOF(offsets); j++) {
                        struct timespec sum;
                        int64_t diff;

                        ASSERT_EQ(tns_ts_add_ns(&bases[i], offsets[j], &sum), 0);
                        EXPECT_TRUE(sum.tv_nsec >= 0 && sum.tv_nsec < NSEC);
                        ASSERT_EQ(tns_ts_diff_ns(&sum, &bases[i], &diff), 0);
                        EXPECT_EQ(diff, offsets[j]);
                }
}

TEST(limits) {
        /* The kernel's values, as include/linux/time64.h derives them. */
        EXPECT_EQ(TNS_KTIME_SEC_MAX, 9223372036LL);
        EXPECT_EQ(TNS_MONO_SEC_MAX, 4611686018LL);
        EXPECT_EQ(TNS_SETTOD_SEC_MAX, 9223372036LL - 946080000LL);
}
