/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure part of attach: the stub a kernel vDSO entry becomes, checked
 * byte for byte and by running it (tests/bats/attach.bats attaches real
 * programs). */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include "attach.h"
#include "test.h"

TEST(stub_bytes) {
        uint8_t b[TNS_ATTACH_STUB_SIZE];
        const uint8_t want[] = {0xb8, 0xe4, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3}; /* mov $228,%eax; syscall; ret */

        tns_attach_stub(SYS_clock_gettime, b);
        EXPECT_EQ(memcmp(b, want, sizeof(want)), 0);
}

/* Called as the vDSO's clock_gettime is: the arguments in rdi and rsi. */
TEST(stub_runs_as_clock_gettime) {
        typedef long (*fn_t)(clockid_t, struct timespec *);
        struct timespec got = {}, before, after;
        void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        fn_t fn;

        ASSERT_TRUE(page != MAP_FAILED);
        tns_attach_stub(SYS_clock_gettime, page);
        ASSERT_EQ(mprotect(page, 4096, PROT_READ | PROT_EXEC), 0);
        fn = (fn_t) page;
        clock_gettime(CLOCK_MONOTONIC, &before);
        EXPECT_EQ(fn(CLOCK_MONOTONIC, &got), 0);
        clock_gettime(CLOCK_MONOTONIC, &after);
        EXPECT_TRUE(got.tv_sec >= before.tv_sec && got.tv_sec <= after.tv_sec);
        /* The raw syscall's error, as the vDSO returns it. */
        EXPECT_EQ(fn(-12345, &got), -22);
        munmap(page, 4096);
}
