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

/* tns_vdso_stub_place(): a function's first bytes (this kernel's
 * __vdso_clock_gettime and __vdso_time begin so), with gdb's breakpoints. */
static const uint8_t gettime_orig[32] = {0x55, 0x48, 0x89, 0xe5, 0x41, 0x56, 0x53, 0x48, 0x83, 0xe4,
                                         0xf0, 0x48, 0x83, 0xec, 0x10, 0x83, 0xff, 0x0f, 0x77, 0x40};
static const uint8_t time_orig[32] = {0x81, 0x3d, 0x1a, 0x95, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
                                      0x48, 0x8d, 0x05, 0x0f, 0xa5, 0xff, 0xff, 0x74, 0x06};

static bool is_stub_at(const uint8_t *b, size_t at, enum tns_vdso_fn fn) {
        uint8_t s[TNS_VDSO_STUB_SIZE];

        return tns_vdso_stub_bytes(fn, s) == 0 && memcmp(b + at, s, sizeof(s)) == 0;
}

TEST(stub_without_breakpoints_is_written_at_the_start) {
        uint8_t out[32];

        ASSERT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, gettime_orig, 32, out), 8);
        EXPECT_TRUE(is_stub_at(out, 0, TNS_VDSO_CLOCK_GETTIME));
        /* Once written, nothing more to do. */
        EXPECT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, out, 32, out), 0);
}

TEST(stub_jumps_over_a_breakpoint_after_the_prologue) {
        uint8_t now[32], out[32];

        memcpy(now, gettime_orig, 32);
        now[4] = 0xcc; /* gdb's `break clock_gettime`, past push/mov %rbp */
        ASSERT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, now, 32, out), 13);
        EXPECT_EQ(out[0], 0xeb);
        EXPECT_EQ(out[1], 3);
        EXPECT_EQ(out[4], 0xcc); /* left to the debugger, never run */
        EXPECT_TRUE(is_stub_at(out, 5, TNS_VDSO_CLOCK_GETTIME));
        EXPECT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, out, 32, out), 0);
        /* The breakpoint removed (the original byte back): still ours. */
        out[4] = gettime_orig[4];
        EXPECT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, out, 32, out), 0);
}

TEST(stub_keeps_a_harmless_first_instruction_under_a_breakpoint) {
        uint8_t now[32], out[32];

        memcpy(now, gettime_orig, 32);
        now[0] = 0xcc; /* `break *__vdso_clock_gettime` */
        ASSERT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, now, 32, out), 10);
        EXPECT_EQ(out[0], 0xcc); /* push %rbp when the debugger steps it */
        EXPECT_EQ(out[1], 0x5d); /* pop %rbp */
        EXPECT_TRUE(is_stub_at(out, 2, TNS_VDSO_CLOCK_GETTIME));
        EXPECT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, out, 32, out), 0);
        memcpy(now, time_orig, 32);
        now[0] = 0xcc; /* gdb's `break time`: no prologue to skip */
        ASSERT_EQ(tns_vdso_stub_place(TNS_VDSO_TIME, time_orig, now, 32, out), 18);
        EXPECT_EQ(memcmp(out + 1, time_orig + 1, 9), 0); /* the whole cmpl */
        EXPECT_TRUE(is_stub_at(out, 10, TNS_VDSO_TIME));
}

TEST(stub_refuses_what_it_cannot_place) {
        uint8_t now[32], out[32];

        memcpy(now, gettime_orig, 32);
        now[1] = 0xcc; /* where the jump goes, in the middle of push/mov */
        now[0] = 0xcc;
        EXPECT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, now, 32, out), -EBUSY);
        memcpy(now, gettime_orig, 32);
        now[0] = 0xe8; /* a call: not one to keep */
        {
                uint8_t orig[32];

                memcpy(orig, now, 32);
                now[0] = 0xcc;
                EXPECT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, orig, now, 32, out), -EBUSY);
        }
        memcpy(now, gettime_orig, 32);
        now[4] = 0xcc;
        EXPECT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, now, 12, out), -ENOSPC);
        EXPECT_EQ(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, gettime_orig, 7, out), -ENOSPC);
        EXPECT_EQ(tns_vdso_stub_place(TNS_VDSO_GETCPU, gettime_orig, gettime_orig, 32, out), -EINVAL);
}

/* What a debugger leaves after removing its breakpoints runs: the
 * original bytes back where its int3s were, the stub's answer returned. */
TEST(placed_stubs_run_once_breakpoints_are_removed) {
        uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        uint8_t now[32];
        struct timespec ts;
        gettime_fn a, b;
        time_fn t;

        ASSERT_TRUE(page != MAP_FAILED);
        memcpy(now, gettime_orig, 32);
        now[4] = 0xcc;
        ASSERT_GT(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, now, 32, page), 0);
        page[4] = gettime_orig[4];
        memcpy(now, gettime_orig, 32);
        now[0] = 0xcc;
        ASSERT_GT(tns_vdso_stub_place(TNS_VDSO_CLOCK_GETTIME, gettime_orig, now, 32, page + 64), 0);
        page[64] = gettime_orig[0];
        memcpy(now, time_orig, 32);
        now[0] = 0xcc;
        ASSERT_GT(tns_vdso_stub_place(TNS_VDSO_TIME, time_orig, now, 32, page + 128), 0);
        page[128] = time_orig[0];
        /* The cmpl reads memory at its rip-relative address: here, a
         * zero-filled page of ours. */
        memcpy(page + 130, &(int32_t){4096 - 128 - 10 - 64}, 4);
        ASSERT_EQ(mprotect(page, 4096, PROT_READ | PROT_EXEC), 0);
        a = (gettime_fn) (void *) page;
        b = (gettime_fn) (void *) (page + 64);
        t = (time_fn) (void *) (page + 128);
        EXPECT_EQ(a(CLOCK_REALTIME, &ts), 0);
        EXPECT_LT(labs(ts.tv_sec - time(NULL)), 5);
        EXPECT_EQ(b(CLOCK_REALTIME, &ts), 0);
        EXPECT_LT(labs(ts.tv_sec - time(NULL)), 5);
        EXPECT_EQ(b(-42, &ts), -EINVAL);
        EXPECT_LT(labs(t(NULL) - time(NULL)), 5);
        munmap(page, 4096);
}
