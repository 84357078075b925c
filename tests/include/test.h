/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small TAP harness in the spirit of kselftest_harness.h: TEST(name)
 * defines a case, EXPECT_* records a failure and goes on, ASSERT_* ends the
 * case. Each test program prints TAP ("ok N name" / "not ok N name") and
 * exits non-zero if any case failed, so tests/run-all.sh can count. */
#pragma once

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
        const char *name;
        void (*fn)(bool *failed);
        struct test_case *next;
};

static struct test_case *test_list_head, **test_list_tail = &test_list_head;

#define TEST(name)                                                                                 \
        static void test_##name(bool *_failed);                                                    \
        static struct test_case test_case_##name = {#name, test_##name, NULL};                     \
        __attribute__((constructor)) static void test_register_##name(void) {                     \
                *test_list_tail = &test_case_##name;                                               \
                test_list_tail = &test_case_##name.next;                                           \
        }                                                                                          \
        static void test_##name(bool *_failed)

#define TEST_FAIL_(fatal, ...)                                                                     \
        do {                                                                                       \
                printf("#   %s:%d: ", __FILE__, __LINE__);                                         \
                printf(__VA_ARGS__);                                                               \
                printf("\n");                                                                      \
                *_failed = true;                                                                   \
                if (fatal)                                                                         \
                        return;                                                                    \
        } while (0)

#define CHECK_CMP_(fatal, a, op, b)                                                                \
        do {                                                                                       \
                long long _a = (long long) (a), _b = (long long) (b);                              \
                if (!(_a op _b))                                                                   \
                        TEST_FAIL_(fatal, "%s %s %s: %lld vs %lld", #a, #op, #b, _a, _b);          \
        } while (0)

#define EXPECT_EQ(a, b) CHECK_CMP_(false, a, ==, b)
#define EXPECT_NE(a, b) CHECK_CMP_(false, a, !=, b)
#define EXPECT_LT(a, b) CHECK_CMP_(false, a, <, b)
#define EXPECT_LE(a, b) CHECK_CMP_(false, a, <=, b)
#define EXPECT_GT(a, b) CHECK_CMP_(false, a, >, b)
#define EXPECT_GE(a, b) CHECK_CMP_(false, a, >=, b)
#define ASSERT_EQ(a, b) CHECK_CMP_(true, a, ==, b)
#define ASSERT_NE(a, b) CHECK_CMP_(true, a, !=, b)
#define ASSERT_LT(a, b) CHECK_CMP_(true, a, <, b)
#define ASSERT_LE(a, b) CHECK_CMP_(true, a, <=, b)
#define ASSERT_GT(a, b) CHECK_CMP_(true, a, >, b)
#define ASSERT_GE(a, b) CHECK_CMP_(true, a, >=, b)
#define EXPECT_TRUE(x) CHECK_CMP_(false, !!(x), ==, 1)
#define EXPECT_FALSE(x) CHECK_CMP_(false, !!(x), ==, 0)
#define ASSERT_TRUE(x) CHECK_CMP_(true, !!(x), ==, 1)
#define EXPECT_STREQ(a, b)                                                                         \
        do {                                                                                       \
                const char *_a = (a), *_b = (b);                                                   \
                if (!_a || !_b || strcmp(_a, _b) != 0)                                             \
                        TEST_FAIL_(false, "%s == %s: \"%s\" vs \"%s\"", #a, #b, _a ?: "(null)",    \
                                   _b ?: "(null)");                                                \
        } while (0)

/* A case that cannot run here says why and counts as skipped. */
#define SKIP(...)                                                                                  \
        do {                                                                                       \
                printf("# SKIP ");                                                                 \
                printf(__VA_ARGS__);                                                               \
                printf("\n");                                                                      \
                return;                                                                            \
        } while (0)

/* A program that is also its own target process (compel's spy/victim)
 * defines TEST_HAVE_SETUP and test_setup(): a return >= 0 ends the program
 * with that status before any test runs. */
#ifdef TEST_HAVE_SETUP
static int test_setup(int argc, char *argv[]);
#endif

int main(int argc, char *argv[]) {
        unsigned n = 0, failures = 0;

#ifdef TEST_HAVE_SETUP
        int r = test_setup(argc, argv);
        if (r >= 0)
                return r;
#else
        (void) argc;
        (void) argv;
#endif
        setvbuf(stdout, NULL, _IOLBF, 0);
        for (struct test_case *t = test_list_head; t; t = t->next)
                n++;
        printf("1..%u\n", n);
        n = 0;
        for (struct test_case *t = test_list_head; t; t = t->next) {
                bool failed = false;
                t->fn(&failed);
                printf("%sok %u %s\n", failed ? "not " : "", ++n, t->name);
                failures += failed;
        }
        return failures ? 1 : 0;
}
