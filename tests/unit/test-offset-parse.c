/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "offset-parse.h"
#include "test.h"
#include "time-util.h"
#include "util.h"

#define S(x) ((int64_t) (x) *TNS_NSEC_PER_SEC)
#define MIN_ S(60)
#define HOUR S(3600)
#define DAY S(86400)

struct parse_case {
        const char *input;
        int rc;
        int64_t ns;
};

static void set_tz(const char *tz) {
        setenv("TZ", tz, 1);
        tzset();
}

static bool have_zone(const char *tz) {
        char path[256];

        snprintf(path, sizeof(path), "/usr/share/zoneinfo/%s", tz);
        return access(path, R_OK) == 0;
}

/* Runs one table; on success the kind must be `kind`, on failure *ret must
 * be left alone. */
static void check_cases(const struct parse_case *cases, size_t n, bool allow_absolute, enum tns_offset_kind kind,
                        bool *_failed) {
        for (size_t i = 0; i < n; i++) {
                struct tns_offset_spec spec = {.kind = 42, .ns = 42};
                int rc = tns_offset_parse(cases[i].input, allow_absolute, &spec);

                if (rc != cases[i].rc) {
                        printf("# \"%s\" (allow_absolute=%d)\n", cases[i].input, allow_absolute);
                        EXPECT_EQ(rc, cases[i].rc);
                        continue;
                }
                if (rc != 0) {
                        EXPECT_EQ(spec.kind, 42);
                        EXPECT_EQ(spec.ns, 42);
                        continue;
                }
                if (spec.ns != cases[i].ns)
                        printf("# \"%s\"\n", cases[i].input);
                EXPECT_EQ(spec.kind, kind);
                EXPECT_EQ(spec.ns, cases[i].ns);
        }
}

static const struct parse_case relative_cases[] = {
        /* Plain seconds. */
        {"86400", 0, DAY},
        {"-3600", 0, -HOUR},
        {"+5", 0, S(5)},
        {"0", 0, 0},
        {"-0", 0, 0},
        {"+0", 0, 0},
        {"0.25", 0, 250000000},
        {"-1.5", 0, -1500000000},
        {"0.000000001", 0, 1},
        {"-0.999999999", 0, -999999999},
        {"1.000000000", 0, S(1)},
        {"007", 0, S(7)},
        {"2030", 0, S(2030)},
        /* Suffixed. */
        {"+10d", 0, 10 * DAY},
        {"-3h30m", 0, -(3 * HOUR + 30 * MIN_)},
        {"+1y", 0, 365 * DAY},
        {"1d 12h", 0, DAY + 12 * HOUR},
        {"1d   12h", 0, DAY + 12 * HOUR},
        {"90m", 0, 90 * MIN_},
        {"1.5h", 0, 90 * MIN_},
        {"2w", 0, 14 * DAY},
        {"1ns", 0, 1},
        {"1us", 0, 1000},
        {"1ms", 0, 1000000},
        {"1s", 0, S(1)},
        {"1sec", 0, S(1)},
        {"1min", 0, MIN_},
        {"1m1s1ms1us1ns", 0, MIN_ + S(1) + 1001001},
        {"-1d2h3m4.5s", 0, -(DAY + 2 * HOUR + 3 * MIN_ + S(4) + 500000000)},
        {"1h1h", 0, 2 * HOUR},
        {"30m 1d", 0, DAY + 30 * MIN_},
        {"0.5us", 0, 500},
        {"1.001ms", 0, 1001000},
        {"1.0ns", 0, 1},
        {"0.000000001h", 0, 3600},
        {"0.000000001y", 0, 31536000},
        {"0d", 0, 0},
        /* The limits of int64 nanoseconds, both ways. */
        {"9223372036.854775807", 0, INT64_MAX},
        {"-9223372036.854775808", 0, INT64_MIN},
        {"9223372036854775807ns", 0, INT64_MAX},
        {"-9223372036854775808ns", 0, INT64_MIN},
        {"-106751d23h47m16.854775808s", 0, INT64_MIN},
        {"292y", 0, 292 * 365 * DAY},
        {"9223372036.854775808", -ERANGE, 0},
        {"-9223372036.854775809", -ERANGE, 0},
        {"9223372036854775808ns", -ERANGE, 0},
        {"106752d", -ERANGE, 0},
        {"293y", -ERANGE, 0},
        {"-293y", -ERANGE, 0},
        {"292y 292y", -ERANGE, 0},
        {"99999999999999999999999999s", -ERANGE, 0},
        {"18446744073709551616ns", -ERANGE, 0},
        /* Malformed. */
        {"", -EINVAL, 0},
        {"+", -EINVAL, 0},
        {"-", -EINVAL, 0},
        {" ", -EINVAL, 0},
        {"+d", -EINVAL, 0},
        {"d", -EINVAL, 0},
        {"--5", -EINVAL, 0},
        {"+-5", -EINVAL, 0},
        {"-+5d", -EINVAL, 0},
        {"1d-3h", -EINVAL, 0},
        {"1d -3h", -EINVAL, 0},
        {"1d +3h", -EINVAL, 0},
        {"5x", -EINVAL, 0},
        {"5ss", -EINVAL, 0},
        {"5D", -EINVAL, 0},
        {"5 s", -EINVAL, 0},
        {"+ 5", -EINVAL, 0},
        {" 5", -EINVAL, 0},
        {"5 ", -EINVAL, 0},
        {"1d ", -EINVAL, 0},
        {"5\t", -EINVAL, 0},
        {"1d\t12h", -EINVAL, 0},
        {"1d 5", -EINVAL, 0},
        {"1d5", -EINVAL, 0},
        {"5 1d", -EINVAL, 0},
        {"5 5", -EINVAL, 0},
        {"nan", -EINVAL, 0},
        {"inf", -EINVAL, 0},
        {"-inf", -EINVAL, 0},
        {"NaN", -EINVAL, 0},
        {"0x10", -EINVAL, 0},
        {"0x10s", -EINVAL, 0},
        {"1e3", -EINVAL, 0},
        {"1e3s", -EINVAL, 0},
        {".5", -EINVAL, 0},
        {"5.", -EINVAL, 0},
        {"5.s", -EINVAL, 0},
        {"1..5", -EINVAL, 0},
        {"1.5.5", -EINVAL, 0},
        {"1,5", -EINVAL, 0},
        {"0.0000000001", -EINVAL, 0},
        {"1.5000000000s", -EINVAL, 0},
        {"1.5ns", -EINVAL, 0},
        {"0.0001us", -EINVAL, 0},
        {"0.0000001ms", -EINVAL, 0},
        {"1d\n", -EINVAL, 0},
        {"5sec5", -EINVAL, 0},
        {"1hour", -EINVAL, 0},
        {"1days", -EINVAL, 0},
        {"\xc2\xb5s", -EINVAL, 0},
        /* Syntax is judged before range. */
        {"99999999999999999999999999x", -EINVAL, 0},
        {"293y x", -EINVAL, 0},
        {"293y 1.5ns", -EINVAL, 0},
        {"2030-01-01x", -EINVAL, 0},
        {"203-01-01", -EINVAL, 0},
        {"20300-01-01", -EINVAL, 0},
};

TEST(parse_relative) {
        check_cases(relative_cases, ELEMENTSOF(relative_cases), false, TNS_OFFSET_RELATIVE, _failed);
        check_cases(relative_cases, ELEMENTSOF(relative_cases), true, TNS_OFFSET_RELATIVE, _failed);
}

static const struct parse_case absolute_utc_cases[] = {
        {"2030-01-01", 0, S(1893456000)},
        {"2030-01-01T12:00:00Z", 0, S(1893499200)},
        {"2030-01-01t12:00:00z", 0, S(1893499200)},
        {"2030-01-01T12:00:00.123456789Z", 0, S(1893499200) + 123456789},
        {"2030-01-01T12:00:00.5Z", 0, S(1893499200) + 500000000},
        {"2030-01-01T12:00:00+02:00", 0, S(1893499200 - 7200)},
        {"2030-01-01T12:00:00+0200", 0, S(1893499200 - 7200)},
        {"2030-01-01T12:00:00-0530", 0, S(1893499200 + 19800)},
        {"2030-01-01T12:00:00-05:30", 0, S(1893499200 + 19800)},
        {"2030-01-01T12:00:00+00:00", 0, S(1893499200)},
        {"2030-01-01T12:00:00-00:00", 0, S(1893499200)},
        {"2030-01-01T12:00:00.25+01:00", 0, S(1893499200 - 3600) + 250000000},
        {"2030-01-01T12:00Z", 0, S(1893499200)},
        {"2030-01-01 12:00:00Z", 0, S(1893499200)},
        {"2030-01-01T12:00:00", 0, S(1893499200)},
        {"2030-01-01 12:00:00", 0, S(1893499200)},
        {"2030-01-01 12:00", 0, S(1893499200)},
        {"2030-01-01 12:00:00.5", 0, S(1893499200) + 500000000},
        {"@1893456000", 0, S(1893456000)},
        {"@1893456000.5", 0, S(1893456000) + 500000000},
        {"@+1893456000", 0, S(1893456000)},
        {"@0", 0, 0},
        {"@-0", 0, 0},
        {"@0.000000001", 0, 1},
        {"2024-02-29", 0, S(1709164800)},
        {"2000-02-29T12:34:56Z", 0, S(951827696)},
        {"2016-12-31T23:59:60Z", 0, S(1483228800)},
        {"2016-12-31 23:59:60", 0, S(1483228800)},
        {"1970-01-01T00:00:00Z", 0, 0},
        {"1970-01-01", 0, 0},
        {"1969-12-31T23:00:00-01:00", 0, 0},
        /* The last representable second, and one past it. */
        {"2262-04-11T23:47:15.999999999Z", 0, S(9223372035) + 999999999},
        {"@9223372035.999999999", 0, S(9223372035) + 999999999},
        {"2262-04-11T23:47:16Z", -ERANGE, 0},
        {"2262-04-11 23:47:16", -ERANGE, 0},
        {"@9223372036", -ERANGE, 0},
        {"@99999999999999999999999", -ERANGE, 0},
        {"9999-12-31T23:59:59Z", -ERANGE, 0},
        {"9999-12-31", -ERANGE, 0},
        {"1969-12-31T23:59:59Z", -ERANGE, 0},
        {"1969-12-31T23:59:59.999999999Z", -ERANGE, 0},
        {"1969-12-31 23:59:59", -ERANGE, 0},
        {"1970-01-01T00:00:00+00:01", -ERANGE, 0},
        {"1900-01-01", -ERANGE, 0},
        {"0000-01-01T00:00:00Z", -ERANGE, 0},
        {"0001-01-01", -ERANGE, 0},
        {"@-1", -ERANGE, 0},
        {"@-0.5", -ERANGE, 0},
        /* Out-of-range fields. */
        {"2030-13-01", -EINVAL, 0},
        {"2030-00-10", -EINVAL, 0},
        {"2030-01-00", -EINVAL, 0},
        {"2030-01-32", -EINVAL, 0},
        {"2030-04-31", -EINVAL, 0},
        {"2023-02-29", -EINVAL, 0},
        {"2100-02-29", -EINVAL, 0},
        {"2030-01-01T24:00:00Z", -EINVAL, 0},
        {"2030-01-01T12:60:00Z", -EINVAL, 0},
        {"2030-01-01T12:00:61Z", -EINVAL, 0},
        {"2030-01-01T12:00:00+24:00", -EINVAL, 0},
        {"2030-01-01T12:00:00+02:60", -EINVAL, 0},
        /* Malformed. */
        {"2030-1-1", -EINVAL, 0},
        {"2030-01-1", -EINVAL, 0},
        {"2030-01", -EINVAL, 0},
        {"2030-", -EINVAL, 0},
        {"2030-01-01T", -EINVAL, 0},
        {"2030-01-01 ", -EINVAL, 0},
        {"2030-01-01T12", -EINVAL, 0},
        {"2030-01-01T12:", -EINVAL, 0},
        {"2030-01-01T1:00", -EINVAL, 0},
        {"2030-01-01T12:00:0", -EINVAL, 0},
        {"2030-01-01T12:00.5", -EINVAL, 0},
        {"2030-01-01T12:00:00.Z", -EINVAL, 0},
        {"2030-01-01T12:00:00.1234567891Z", -EINVAL, 0},
        {"2030-01-01T12:00:00,5Z", -EINVAL, 0},
        {"2030-01-01T12:00:00ZZ", -EINVAL, 0},
        {"2030-01-01T12:00:00 Z", -EINVAL, 0},
        {"2030-01-01T12:00:00+02", -EINVAL, 0},
        {"2030-01-01T12:00:00+2:00", -EINVAL, 0},
        {"2030-01-01T12:00:00+02:0", -EINVAL, 0},
        {"2030-01-01T12:00:00+02:00x", -EINVAL, 0},
        {"2030-01-01T12:00:00UTC", -EINVAL, 0},
        {"2030-01-01Z", -EINVAL, 0},
        {"2030-01-01x", -EINVAL, 0},
        {"2030-01-01  12:00:00", -EINVAL, 0},
        {"2030/01/01", -EINVAL, 0},
        {"@", -EINVAL, 0},
        {"@ 5", -EINVAL, 0},
        {"@5 ", -EINVAL, 0},
        {"@5s", -EINVAL, 0},
        {"@0x10", -EINVAL, 0},
        {"@1e9", -EINVAL, 0},
        {"@1.", -EINVAL, 0},
        {"@.5", -EINVAL, 0},
        {"@--1", -EINVAL, 0},
        {"@1.0000000001", -EINVAL, 0},
        {"@@1", -EINVAL, 0},
        /* Syntax is judged before range. */
        {"9999-12-31T23:59:59", -ERANGE, 0},
        {"9999-13-31", -EINVAL, 0},
        {"@99999999999999999999999x", -EINVAL, 0},
};

TEST(parse_absolute) {
        set_tz("UTC");
        check_cases(absolute_utc_cases, ELEMENTSOF(absolute_utc_cases), true, TNS_OFFSET_ABSOLUTE, _failed);
}

/* Without allow_absolute every date is malformed, even one out of range. */
TEST(parse_absolute_refused) {
        set_tz("UTC");
        for (size_t i = 0; i < ELEMENTSOF(absolute_utc_cases); i++) {
                struct tns_offset_spec spec = {.kind = 42, .ns = 42};

                EXPECT_EQ(tns_offset_parse(absolute_utc_cases[i].input, false, &spec), -EINVAL);
                EXPECT_EQ(spec.ns, 42);
        }
}

TEST(parse_absolute_kolkata) {
        /* +05:30 all year, no DST. */
        static const struct parse_case cases[] = {
                {"2030-01-01", 0, S(1893456000 - 19800)},
                {"2030-07-01 12:00:00", 0, S(1909137600 - 19800)},
                {"2030-01-01T12:00:00", 0, S(1893499200 - 19800)},
                {"2030-01-01T12:00:00Z", 0, S(1893499200)},
                {"2030-01-01T12:00:00+01:00", 0, S(1893499200 - 3600)},
                {"@1893456000", 0, S(1893456000)},
                {"1970-01-01 05:30:00", 0, 0},
                {"1970-01-01 05:29:59", -ERANGE, 0},
                {"1970-01-01", -ERANGE, 0},
        };

        if (!have_zone("Asia/Kolkata"))
                SKIP("no /usr/share/zoneinfo/Asia/Kolkata");
        set_tz("Asia/Kolkata");
        check_cases(cases, ELEMENTSOF(cases), true, TNS_OFFSET_ABSOLUTE, _failed);
        set_tz("UTC");
}

TEST(parse_absolute_dst) {
        /* 2030-03-31: clocks go from 02:00 CET to 03:00 CEST; 2030-10-27
         * from 03:00 CEST back to 02:00 CET. */
        static const struct parse_case cases[] = {
                {"2030-01-01", 0, S(1893456000 - 3600)},
                {"2030-07-01 12:00:00", 0, S(1909137600 - 7200)},
                {"2030-03-31 01:59:59", 0, S(1901149200 - 1)},
                {"2030-03-31 03:00:00", 0, S(1901149200)},
                {"2030-03-31 02:00:00", -EINVAL, 0},
                {"2030-03-31 02:30:00", -EINVAL, 0},
                {"2030-03-31T02:30:00Z", 0, S(1901149200 + 5400)},
        };

        if (!have_zone("Europe/Berlin"))
                SKIP("no /usr/share/zoneinfo/Europe/Berlin");
        set_tz("Europe/Berlin");
        check_cases(cases, ELEMENTSOF(cases), true, TNS_OFFSET_ABSOLUTE, _failed);
        set_tz("UTC");
}

TEST(parse_absolute_half_hour_dst) {
        /* Lord Howe Island skips 02:00-02:30 on 2030-10-06: the gap moves only
         * the minutes. */
        static const struct parse_case cases[] = {
                {"2030-10-06 01:59:59", 0, S(1917444599)},
                {"2030-10-06 02:30:00", 0, S(1917444600)},
                {"2030-10-06 02:00:00", -EINVAL, 0},
                {"2030-10-06 02:15", -EINVAL, 0},
        };

        if (!have_zone("Australia/Lord_Howe"))
                SKIP("no /usr/share/zoneinfo/Australia/Lord_Howe");
        set_tz("Australia/Lord_Howe");
        check_cases(cases, ELEMENTSOF(cases), true, TNS_OFFSET_ABSOLUTE, _failed);
        set_tz("UTC");
}

TEST(parse_null) {
        struct tns_offset_spec spec;

        EXPECT_EQ(tns_offset_parse(NULL, true, &spec), -EINVAL);
        /* ret may be NULL to only validate. */
        EXPECT_EQ(tns_offset_parse("+10d", false, NULL), 0);
        EXPECT_EQ(tns_offset_parse("+10x", false, NULL), -EINVAL);
}

TEST(format) {
        static const struct {
                int64_t ns;
                const char *text;
        } cases[] = {
                {0, "0"},
                {1, "+0.000000001s"},
                {-1, "-0.000000001s"},
                {500000000, "+0.5s"},
                {S(1), "+1s"},
                {-S(1) - 500000000, "-1.5s"},
                {S(59), "+59s"},
                {MIN_, "+1m"},
                {90 * MIN_, "+1h30m"},
                {-(3 * HOUR + 30 * MIN_), "-3h30m"},
                {10 * DAY, "+10d"},
                {365 * DAY, "+365d"},
                {DAY + 2 * HOUR + 3 * MIN_ + S(4) + 500000000, "+1d2h3m4.5s"},
                {DAY + 1, "+1d0.000000001s"},
                {DAY + 123456789, "+1d0.123456789s"},
                {HOUR + S(1), "+1h1s"},
                {INT64_MAX, "+106751d23h47m16.854775807s"},
                {INT64_MIN, "-106751d23h47m16.854775808s"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char buf[64];

                EXPECT_EQ(tns_offset_format(cases[i].ns, buf, sizeof(buf)), 0);
                EXPECT_STREQ(buf, cases[i].text);
        }
}

TEST(format_round_trips) {
        static const int64_t values[] = {
                0,
                1,
                -1,
                999999999,
                -999999999,
                S(1),
                -S(1),
                MIN_ - 1,
                HOUR + 1,
                DAY - 1,
                -DAY + 1,
                123456789012345678,
                INT64_MAX,
                INT64_MIN,
                INT64_MAX - 1,
                INT64_MIN + 1,
                365 * DAY,
                S(1893456000),
        };

        for (size_t i = 0; i < ELEMENTSOF(values); i++) {
                struct tns_offset_spec spec;
                char buf[64];

                ASSERT_EQ(tns_offset_format(values[i], buf, sizeof(buf)), 0);
                EXPECT_EQ(tns_offset_parse(buf, false, &spec), 0);
                EXPECT_EQ(spec.kind, TNS_OFFSET_RELATIVE);
                EXPECT_EQ(spec.ns, values[i]);
        }
}

TEST(format_buffer_size) {
        char buf[8];

        EXPECT_EQ(tns_offset_format(10 * DAY, buf, 5), 0);
        EXPECT_STREQ(buf, "+10d");
        memset(buf, 'x', sizeof(buf));
        EXPECT_EQ(tns_offset_format(10 * DAY, buf, 4), -ENOBUFS);
        EXPECT_STREQ(buf, "");
        EXPECT_EQ(tns_offset_format(0, buf, 2), 0);
        EXPECT_STREQ(buf, "0");
        memset(buf, 'x', sizeof(buf));
        EXPECT_EQ(tns_offset_format(0, buf, 1), -ENOBUFS);
        EXPECT_EQ(buf[0], '\0');
        EXPECT_EQ(buf[1], 'x');
        EXPECT_EQ(tns_offset_format(0, buf, 0), -ENOBUFS);
        EXPECT_EQ(tns_offset_format(0, NULL, 0), -ENOBUFS);
}

TEST(forms) {
        /* They end up inside error messages: one line, and the examples they
         * give must themselves parse. */
        static const char *const relative[] = {"86400", "-3600", "0.5", "+10d", "-3h30m", "+1y", "1d 12h"};
        static const char *const absolute[] = {"2030-01-01", "2030-01-01T12:00:00Z", "2030-01-01T12:00:00+02:00",
                                               "2030-01-01 12:00:00", "@1893456000"};

        EXPECT_TRUE(strchr(tns_offset_forms_relative, '\n') == NULL);
        EXPECT_TRUE(strchr(tns_offset_forms_absolute, '\n') == NULL);
        for (size_t i = 0; i < ELEMENTSOF(relative); i++) {
                EXPECT_TRUE(strstr(tns_offset_forms_relative, relative[i]) != NULL);
                EXPECT_EQ(tns_offset_parse(relative[i], false, NULL), 0);
        }
        for (size_t i = 0; i < ELEMENTSOF(absolute); i++) {
                EXPECT_TRUE(strstr(tns_offset_forms_absolute, absolute[i]) != NULL);
                EXPECT_EQ(tns_offset_parse(absolute[i], true, NULL), 0);
        }
}
