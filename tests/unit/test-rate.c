/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/core/rate.c and tns_rate_apply() (lib/core/offsets-page.h): the
 * parser's accepted and refused forms, the fixed-point map against exact
 * arithmetic, its inverse for waits, and re-anchoring. */
#include <errno.h>
#include <stdint.h>

#include "rate.h"
#include "test.h"
#include "util.h"

#define ONE TNS_RATE_ONE
#define SEC INT64_C(1000000000)

TEST(parse_accepts) {
        static const struct {
                const char *text;
                uint64_t mult;
        } cases[] = {
                {"1", ONE},
                {"2", 2 * ONE},
                {"0.5", ONE / 2},
                {".5", ONE / 2},
                {"1440", 1440 * ONE},
                {"1/60", (ONE + 30) / 60},
                {"3/2", ONE * 3 / 2},
                {"1.000", ONE},
                {"0.25", ONE / 4},
                {"1000000", 1000000 * ONE},
                {"0.000001", (ONE + 500000) / 1000000},
                {"1/1000000", (ONE + 500000) / 1000000},
                {"2000000/2", 1000000 * ONE},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t m = 0;

                EXPECT_EQ(tns_rate_parse(cases[i].text, &m), 0);
                EXPECT_EQ(m, cases[i].mult);
        }
}

TEST(parse_refuses) {
        static const char *const invalid[] = {"",     "0",   "0.0", "-1",  "+2",    "nan",  "NaN", "inf",
                                              "1e30", "1e3", "2x",  "x2",  "1/0",   "/2",   "1/",  " 2",
                                              "2 ",   "0/5", ".",   "1..", "1/2/3", "0x10", "1,5"};
        /* Out of range before rounding too: 1/1000001 and 0.00000099999
         * round to the multiplier of 1/1000000 (helper-39). */
        static const char *const range[] = {"1000001",       "2000000000",           "1/2000000",
                                            "0.0000001",     "99999999999999999999", "1/1000001",
                                            "0.00000099999", "1000000.0001",         "2000001/2"};

        for (size_t i = 0; i < ELEMENTSOF(invalid); i++) {
                uint64_t m = 42;

                EXPECT_EQ(tns_rate_parse(invalid[i], &m), -EINVAL);
                EXPECT_EQ(m, 42);
        }
        for (size_t i = 0; i < ELEMENTSOF(range); i++) {
                uint64_t m = 42;
                int r = tns_rate_parse(range[i], &m);

                EXPECT_TRUE(r == -ERANGE || r == -EINVAL);
                EXPECT_EQ(m, 42);
        }
        EXPECT_EQ(tns_rate_parse(NULL, NULL), -EINVAL);
}

TEST(format) {
        char buf[32];

        EXPECT_EQ(tns_rate_format(2 * ONE, buf, sizeof(buf)), 0);
        EXPECT_STREQ(buf, "2");
        EXPECT_EQ(tns_rate_format(ONE / 2, buf, sizeof(buf)), 0);
        EXPECT_STREQ(buf, "0.5");
        EXPECT_EQ(tns_rate_format(0, buf, sizeof(buf)), 0);
        EXPECT_STREQ(buf, "frozen");
        EXPECT_EQ(tns_rate_format(ONE, buf, 1), -ENOBUFS);
        EXPECT_EQ(buf[0], 0);
}

TEST(apply_exact) {
        /* x2 from an anchor: exact. */
        EXPECT_EQ(tns_rate_apply(2 * ONE, 100 * SEC, 5 * SEC, 103 * SEC), 11 * SEC);
        /* x0.5, and a host before the anchor: floor. */
        EXPECT_EQ(tns_rate_apply(ONE / 2, 100 * SEC, 5 * SEC, 98 * SEC), 4 * SEC);
        EXPECT_EQ(tns_rate_apply(ONE / 2, 0, 0, -1), -1);
        /* Frozen. */
        EXPECT_EQ(tns_rate_apply(0, 100 * SEC, 7 * SEC, 1000 * SEC), 7 * SEC);
        /* Rate 1 is the offset. */
        EXPECT_EQ(tns_rate_apply(ONE, 0, 42, 1000), 1042);
        /* Saturation. */
        EXPECT_EQ(tns_rate_apply(1000000 * ONE, 0, 0, INT64_MAX / 2), INT64_MAX);
        EXPECT_EQ(tns_rate_apply(1000000 * ONE, 0, 0, INT64_MIN / 2), INT64_MIN);
}

/* The vDSO's split form equals the joined one, split with floor. */
static bool split_agrees(uint64_t mult, int64_t ah, int64_t an, uint64_t sec, uint64_t ns) {
        int64_t s = 0, n = 0, v;

        if (!tns_rate_apply_split(mult, ah, an, sec, ns, &s, &n))
                return true;
        v = tns_rate_apply(mult, ah, an, (int64_t) (sec * (uint64_t) SEC + ns));
        return n >= 0 && n < SEC && s * SEC + n == v;
}

TEST(apply_split) {
        int64_t s = 0, n = 0;
        const uint64_t mults[] = {0, 1, ONE / 60, ONE / 2, ONE - 1, ONE, ONE + 1, 2 * ONE, 1440 * ONE, 1000000 * ONE};
        const int64_t anchors[] = {0, 1, -1, 123456789, -999999999, 5 * SEC, 100000 * SEC + 7};

        /* x2 from an anchor, ns beyond one second as the kernel hands it. */
        ASSERT_TRUE(tns_rate_apply_split(2 * ONE, 100 * SEC, 5 * SEC, 102, 1500000001, &s, &n));
        EXPECT_EQ(s, 12);
        EXPECT_EQ(n, 2);
        /* Before the epoch: floor. */
        ASSERT_TRUE(tns_rate_apply_split(ONE, 10 * SEC, -SEC / 2 - 20 * SEC, 10, 0, &s, &n));
        EXPECT_EQ(s, -21);
        EXPECT_EQ(n, SEC / 2);
        /* Near the ends: declined, the caller joins. */
        EXPECT_TRUE(!tns_rate_apply_split(1000000 * ONE, 0, 0, 1u << 30, 0, &s, &n));
        EXPECT_TRUE(!tns_rate_apply_split(ONE, 0, INT64_MAX - 1, 1, 0, &s, &n));
        EXPECT_TRUE(!tns_rate_apply_split(ONE, 0, 0, 1, UINT64_C(1) << 41, &s, &n));
        for (unsigned i = 0; i < sizeof(mults) / sizeof(mults[0]); i++)
                for (unsigned j = 0; j < sizeof(anchors) / sizeof(anchors[0]); j++)
                        for (unsigned k = 0; k < sizeof(anchors) / sizeof(anchors[0]); k++)
                                for (uint64_t sec = 0; sec < 200000; sec += 33333)
                                        for (uint64_t ns = 0; ns < 3 * (uint64_t) SEC; ns += 299999999)
                                                EXPECT_TRUE(split_agrees(mults[i], anchors[j], anchors[k], sec, ns));
        /* ns around 2^32 and up to the bound (a reader stalled for
         * seconds): the product of the ns part needs its 128 bits. */
        {
                const uint64_t edges[] = {
                        UINT32_MAX - 1,          UINT32_MAX,       (uint64_t) UINT32_MAX + 1, 5 * (uint64_t) SEC,
                        (UINT64_C(1) << 40) - 1, UINT64_C(1) << 40};

                for (unsigned i = 0; i < sizeof(mults) / sizeof(mults[0]); i++)
                        for (unsigned j = 0; j < sizeof(anchors) / sizeof(anchors[0]); j++)
                                for (unsigned e = 0; e < sizeof(edges) / sizeof(edges[0]); e++)
                                        EXPECT_TRUE(split_agrees(mults[i], anchors[j], 7, 100000, edges[e]));
        }
}

/* The vDSO's prepared form (struct tns_rate_fast) equals the joined
 * one wherever it answers; *answered counts where it did. */
static bool fast_agrees(uint64_t mult, int64_t ah, int64_t an, uint64_t sec, uint64_t ns, unsigned *answered) {
        struct tns_rate_fast f;
        int64_t s = 0, n = 0, v;

        if (!tns_rate_fast_prepare(mult, ah, an, &f))
                return true;
        f.stamp = TNS_RATE_FAST_STAMP | 42;
        if (!tns_rate_fast_apply(&f, 42, sec, ns, &s, &n))
                return true;
        (*answered)++;
        v = tns_rate_apply(mult, ah, an, (int64_t) (sec * (uint64_t) SEC + ns));
        return n >= 0 && n < SEC && (__int128) s * SEC + n == v;
}

TEST(apply_fast) {
        const uint64_t mults[] = {0,       1,       ONE / 60,    ONE / 2,    ONE - 1,       ONE,
                                  ONE + 1, 2 * ONE, 3 * ONE + 7, 1440 * ONE, 1000000 * ONE, TNS_RATE_MULT_MIN};
        const int64_t anchors[] = {
                0, 1, -1, 123456789, -999999999, 5 * SEC, 100000 * SEC + 7, 1700000000 * SEC + 999999999, -3 * SEC - 1};
        const uint64_t nss[] = {0, 1, 999999999, SEC, 1500000001, INT32_MAX};
        struct tns_rate_fast f;
        unsigned answered = 0, tried = 0;
        int64_t s = 0, n = 0;

        /* x2 from an anchor, ns beyond one second as the kernel hands it. */
        ASSERT_TRUE(tns_rate_fast_prepare(2 * ONE, 100 * SEC, 5 * SEC, &f));
        f.stamp = TNS_RATE_FAST_STAMP | 8;
        ASSERT_TRUE(tns_rate_fast_apply(&f, 8, 102, 1500000001, &s, &n));
        EXPECT_EQ(s, 12);
        EXPECT_EQ(n, 2);
        /* Declined: another sequence's stamp (a writer that did not
         * prepare it), the page of an older writer (zero), sec before the
         * anchor's second, ns from 2^31 on, past d_max. */
        EXPECT_TRUE(!tns_rate_fast_apply(&f, 10, 102, 0, &s, &n));
        f.stamp = 0;
        EXPECT_TRUE(!tns_rate_fast_apply(&f, 0, 102, 0, &s, &n));
        f.stamp = TNS_RATE_FAST_STAMP | 8;
        EXPECT_TRUE(!tns_rate_fast_apply(&f, 8, 99, 0, &s, &n));
        EXPECT_TRUE(!tns_rate_fast_apply(&f, 8, 102, (uint64_t) INT32_MAX + 1, &s, &n));
        EXPECT_TRUE(!tns_rate_fast_apply(&f, 8, 100 + f.d_max + 1, 0, &s, &n));
        EXPECT_TRUE(tns_rate_fast_apply(&f, 8, 100 + f.d_max, 0, &s, &n));
        /* An anchor whose seconds leave the form's range. */
        EXPECT_TRUE(!tns_rate_fast_prepare(ONE, 0, INT64_MAX - 1, &f));
        for (unsigned i = 0; i < ELEMENTSOF(mults); i++)
                for (unsigned j = 0; j < ELEMENTSOF(anchors); j++)
                        for (unsigned k = 0; k < ELEMENTSOF(anchors); k++) {
                                uint64_t sec0 = (uint64_t) (anchors[j] < 0 ? 0 : anchors[j] / SEC);

                                for (uint64_t d = 0; d < 200000; d += d < 4 ? 1 : 33333)
                                        for (unsigned e = 0; e < ELEMENTSOF(nss); e++) {
                                                tried++;
                                                EXPECT_TRUE(fast_agrees(mults[i], anchors[j], anchors[k], sec0 + d,
                                                                        nss[e], &answered));
                                        }
                        }
        /* Not a test that passes by declining: most readings are answered. */
        EXPECT_GT(answered, tried / 2);
}

TEST(apply_accuracy) {
        /* 1/60 rounded to 2^-32: within 1e-7 relative over a day. */
        uint64_t m;
        int64_t day = 86400 * SEC, v;

        ASSERT_EQ(tns_rate_parse("1/60", &m), 0);
        v = tns_rate_apply(m, 0, 0, day);
        EXPECT_LE(v > day / 60 ? v - day / 60 : day / 60 - v, day / 60 / 10000000);
}

TEST(inverse) {
        struct tns_rate_map m = {2 * ONE, 100 * SEC, 5 * SEC};

        /* Reads 11 s at host 103 s. */
        EXPECT_EQ(tns_rate_map_to_host(&m, 11 * SEC), 103 * SEC);
        /* Rounded up: at the host time returned the clock has reached it. */
        for (int64_t v = 5 * SEC; v < 5 * SEC + 10; v++)
                EXPECT_GE(tns_rate_map_apply(&m, tns_rate_map_to_host(&m, v)), v);
        m.mult = ONE / 3;
        for (int64_t v = 5 * SEC; v < 5 * SEC + 10; v++) {
                int64_t h = tns_rate_map_to_host(&m, v);

                EXPECT_GE(tns_rate_map_apply(&m, h), v);
                EXPECT_LT(tns_rate_map_apply(&m, h - 1), v);
        }
        /* Frozen: now (past) or never. */
        m.mult = 0;
        EXPECT_EQ(tns_rate_map_to_host(&m, 4 * SEC), INT64_MIN);
        EXPECT_EQ(tns_rate_map_to_host(&m, 6 * SEC), INT64_MAX);
        /* Durations. */
        EXPECT_EQ(tns_rate_duration_to_host(2 * ONE, SEC), SEC / 2);
        EXPECT_EQ(tns_rate_duration_to_host(ONE / 2, SEC), 2 * SEC);
        EXPECT_EQ(tns_rate_duration_to_host(0, SEC), SEC); /* frozen: host time */
        EXPECT_EQ(tns_rate_duration_to_host(ONE, 0), 0);
        EXPECT_EQ(tns_rate_duration_to_host(2 * ONE, 0), 0); /* a zero timeout stays zero */
        EXPECT_EQ(tns_rate_duration_to_host(TNS_RATE_MULT_MIN, INT64_MAX), INT64_MAX);
}

TEST(reanchor_continuous) {
        struct tns_rate_map m = {3 * ONE, 0, 0};
        int64_t before;

        before = tns_rate_map_apply(&m, 10 * SEC);
        tns_rate_map_reanchor(&m, 10 * SEC, ONE / 2);
        EXPECT_EQ(tns_rate_map_apply(&m, 10 * SEC), before);
        EXPECT_EQ(tns_rate_map_apply(&m, 12 * SEC), before + SEC);
        tns_rate_map_reanchor(&m, 12 * SEC, 0);
        EXPECT_EQ(tns_rate_map_apply(&m, 100 * SEC), before + SEC);
}
