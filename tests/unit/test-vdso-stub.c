/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/core/vdso-stub.c: the stubs that stand in for the kernel vDSO's
 * clock functions, run here as functions called the way libc calls the
 * vDSO's: each must give the syscall's answer, and the kernel's raw
 * -errno on failure. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>

#include "test.h"
#include "vdso-stub.h"

typedef long (*gettime_fn)(long, struct timespec *);
typedef long (*gtod_fn)(struct timeval *, void *);
typedef long (*time_fn)(long *);

/* Where fn's stub is written in page (NULL if it has none). */
static void *code_of(void *page, enum tns_vdso_fn fn) {
        uint8_t *at = (uint8_t *) page + 64 * (unsigned) fn;

        return tns_vdso_stub_bytes(fn, at) == 0 ? at : NULL;
}

TEST(stubs_run_the_syscall) {
        void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        struct timespec a, b;
        struct timeval tv;
        gettime_fn gettime;
        gtod_fn gtod;
        time_fn tm;
        long t = 0;

        ASSERT_TRUE(page != MAP_FAILED);
        gettime = (gettime_fn) code_of(page, TNS_VDSO_CLOCK_GETTIME);
        gtod = (gtod_fn) code_of(page, TNS_VDSO_GETTIMEOFDAY);
        tm = (time_fn) code_of(page, TNS_VDSO_TIME);
        ASSERT_TRUE(gettime && gtod && tm);
        ASSERT_EQ(mprotect(page, 4096, PROT_READ | PROT_EXEC), 0);

        ASSERT_EQ(clock_gettime(CLOCK_MONOTONIC, &a), 0);
        EXPECT_EQ(gettime(CLOCK_MONOTONIC, &b), 0);
        EXPECT_TRUE(b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec));
        EXPECT_LT(b.tv_sec - a.tv_sec, 5);
        /* A bad clock id: the kernel's -EINVAL, raw, as the vDSO returns it. */
        EXPECT_EQ(gettime(-42, &b), -EINVAL);
        EXPECT_EQ(gtod(&tv, NULL), 0);
        EXPECT_LT(labs(tv.tv_sec - time(NULL)), 5);
        EXPECT_LT(labs(tm(&t) - time(NULL)), 5);
        EXPECT_LT(labs(t - time(NULL)), 5);
        EXPECT_LT(labs(tm(NULL) - time(NULL)), 5);
        munmap(page, 4096);
}

TEST(only_clock_functions_have_stubs) {
        uint8_t b[TNS_VDSO_STUB_SIZE];

        EXPECT_EQ(tns_vdso_stub_bytes(TNS_VDSO_GETCPU, b), -EINVAL);
        EXPECT_EQ(tns_vdso_stub_bytes(TNS_VDSO_CLOCK_GETRES, b), -EINVAL);
        EXPECT_EQ(tns_vdso_stub_bytes(TNS_VDSO_GETRANDOM, b), -EINVAL);
        EXPECT_EQ(tns_vdso_stub_syscall(TNS_VDSO_CLOCK_GETTIME), 228);
        EXPECT_EQ(tns_vdso_stub_syscall(TNS_VDSO_GETTIMEOFDAY), 96);
        EXPECT_EQ(tns_vdso_stub_syscall(TNS_VDSO_TIME), 201);
}
