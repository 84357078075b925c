/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/core/faketime.c: libfaketime's FAKETIME forms. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "faketime.h"
#include "rate.h"
#include "test.h"
#include "util.h"

#define SEC INT64_C(1000000000)

static void utc(void) {
        setenv("TZ", "UTC", 1);
        tzset();
}

TEST(relative) {
        struct tns_faketime f;
        const char *why = NULL;

        ASSERT_EQ(tns_faketime_parse("+2d", &f, &why), 0);
        EXPECT_TRUE(f.has_realtime);
        EXPECT_EQ(f.realtime.kind, TNS_OFFSET_RELATIVE);
        EXPECT_EQ(f.realtime.ns, 2 * 86400 * SEC);
        EXPECT_EQ(f.rate_mult, 0);
        EXPECT_FALSE(f.freeze);

        ASSERT_EQ(tns_faketime_parse("-3h x2", &f, &why), 0);
        EXPECT_EQ(f.realtime.ns, -3 * 3600 * SEC);
        EXPECT_EQ(f.rate_mult, 2 * TNS_RATE_ONE);

        ASSERT_EQ(tns_faketime_parse("+0 x10", &f, &why), 0);
        EXPECT_EQ(f.realtime.ns, 0);
        EXPECT_EQ(f.rate_mult, 10 * TNS_RATE_ONE);

        ASSERT_EQ(tns_faketime_parse("  -120  ", &f, &why), 0);
        EXPECT_EQ(f.realtime.ns, -120 * SEC);

        ASSERT_EQ(tns_faketime_parse("+1d x0.5", &f, &why), 0);
        EXPECT_EQ(f.rate_mult, TNS_RATE_ONE / 2);
}

TEST(dates) {
        struct tns_faketime f;
        const char *why = NULL;

        utc();
        ASSERT_EQ(tns_faketime_parse("@2030-01-01 12:00:00", &f, &why), 0);
        EXPECT_EQ(f.realtime.kind, TNS_OFFSET_ABSOLUTE);
        EXPECT_EQ(f.realtime.ns, (1893456000 + 12 * 3600) * SEC);
        EXPECT_FALSE(f.freeze);

        ASSERT_EQ(tns_faketime_parse("2030-01-01 12:00:00", &f, &why), 0);
        EXPECT_EQ(f.realtime.kind, TNS_OFFSET_ABSOLUTE);
        EXPECT_EQ(f.realtime.ns, (1893456000 + 12 * 3600) * SEC);
        EXPECT_TRUE(f.freeze);
        EXPECT_EQ(f.rate_mult, 0);

        ASSERT_EQ(tns_faketime_parse("@2030-01-01 00:00:00 x1/60", &f, &why), 0);
        EXPECT_EQ(f.realtime.ns, 1893456000 * SEC);
        EXPECT_EQ(f.rate_mult, (TNS_RATE_ONE + 30) / 60);
}

TEST(refused) {
        static const char *const bad[] = {
                "",
                "   ",
                "i2.0",
                "+1d i2.0",
                "2030-01-01 12:00:00 i2",
                "%/etc/passwd",
                "x2",
                "+2d x0",
                "+2d x-1",
                "+2d xnan",
                "+2d x1e30",
                "+2d x",
                "2030-01-01 12:00:00 x2", /* frozen takes no rate */
                "86400", /* libfaketime needs the sign */
                "@1893456000", /* not a date */
                "@@2030-01-01",
                "+2q",
                "tomorrow",
                "1969-01-01 00:00:00",
                "+2d x2 x3",
                /* Dates libfaketime's strptime("%Y-%m-%d %T") refuses
                 * (helper-39). */
                "@2030-01-01",
                "2030-01-01",
                "2030-01-01 12:00",
                "@2030-01-01T12:00:00Z",
                "2030-01-01 12:00:00.5",
        };

        utc();
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct tns_faketime f = {.rate_mult = 42};
                const char *why = NULL;
                int r = tns_faketime_parse(bad[i], &f, &why);

                if (r == 0)
                        printf("#   accepted '%s'\n", bad[i]);
                EXPECT_TRUE(r == -EINVAL || r == -ERANGE);
                EXPECT_TRUE(why != NULL && why[0] != 0);
                EXPECT_EQ(f.rate_mult, 42);
        }
        {
                const char *why = NULL;
                struct tns_faketime f;

                EXPECT_EQ(tns_faketime_parse(NULL, &f, &why), -EINVAL);
                EXPECT_EQ(tns_faketime_parse("i2.0", &f, &why), -EINVAL);
                EXPECT_TRUE(strstr(why, "increments") != NULL);
        }
}
