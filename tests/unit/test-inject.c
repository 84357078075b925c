/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inject.h"
#include "test.h"
#include "vdso-host.h"
#include "vvar-layout.h"

TEST(auxv_found_after_argv_and_envp) {
        /* argc=2, argv[2], NULL, envp[1], NULL, auxv... */
        const uint64_t w[] = {2, 0x1000, 0x1008, 0, 0x2000, 0, AT_PAGESZ, 4096, AT_SYSINFO_EHDR, 0x7f0000, AT_NULL, 0};
        size_t off;
        uint64_t v;

        ASSERT_EQ(tns_auxv_find_sysinfo(w, sizeof(w) / 8, &off, &v), 0);
        EXPECT_EQ(off, 9 * 8);
        EXPECT_EQ(v, 0x7f0000);
}

TEST(auxv_needs_more_words) {
        const uint64_t w[] = {2, 0x1000, 0x1008, 0, 0x2000, 0, AT_PAGESZ, 4096, AT_SYSINFO_EHDR, 0x7f0000};
        size_t off;
        uint64_t v;

        for (size_t n = 0; n < 9; n++)
                EXPECT_EQ(tns_auxv_find_sysinfo(w, n, &off, &v), -EAGAIN);
}

TEST(auxv_without_vdso_and_malformed) {
        const uint64_t none[] = {0, 0, 0, AT_PAGESZ, 4096, AT_NULL, 0};
        const uint64_t bad[] = {1, 0x1000, 0x5, 0, AT_NULL, 0};
        const uint64_t huge[] = {UINT64_MAX, 0};
        size_t off;
        uint64_t v;

        EXPECT_EQ(tns_auxv_find_sysinfo(none, 7, &off, &v), -ENOENT);
        EXPECT_EQ(tns_auxv_find_sysinfo(bad, 6, &off, &v), -EBADMSG);
        EXPECT_EQ(tns_auxv_find_sysinfo(huge, 2, &off, &v), -EBADMSG);
}

TEST(params_point_into_the_kernel_vdso) {
        struct tns_vdso_host h = {.kernel_size = 8192};
        struct tns_vdso_params p;

        h.fn[TNS_VDSO_CLOCK_GETTIME] = 0xb10;
        tns_vdso_params_fill(&h, 0x7f0000000000, &p);
        EXPECT_EQ(p.magic, TNS_PARAMS_MAGIC);
        EXPECT_EQ(p.version, TNS_PARAMS_VERSION);
        EXPECT_EQ(p.kernel_vdso_base, 0x7f0000000000);
        EXPECT_EQ(p.fn[TNS_VDSO_CLOCK_GETTIME], 0x7f0000000b10);
        EXPECT_EQ(p.fn[TNS_VDSO_GETRANDOM], 0); /* absent stays absent */
}

TEST(params_direct_fields_follow_the_member_base) {
        struct tns_vdso_host h = {.kernel_size = 8192};
        struct tns_vdso_params p;

        tns_vdso_params_fill(&h, 0x7f0000000000, &p);
        EXPECT_EQ(p.direct_mode, 0); /* not proven: call-through */
        EXPECT_EQ(p.direct_clocks, 0);
        EXPECT_EQ(p.direct_clock, 0);
        h.direct = (struct tns_vdso_direct){
                .mode = TNS_VCLOCK_MODE_PVCLOCK, .clocks = 0x8f3, .clock_delta = -0x6000, .pvclock_delta = -0x2000};
        tns_vdso_params_fill(&h, 0x7f0000010000, &p);
        EXPECT_EQ(p.direct_clock, 0x7f000000a000);
        EXPECT_EQ(p.direct_pvclock, 0x7f000000e000);
        EXPECT_EQ(p.direct_mode, TNS_VCLOCK_MODE_PVCLOCK);
        EXPECT_EQ(p.direct_clocks, 0x8f3);
        h.direct.mode = TNS_VCLOCK_MODE_TSC;
        h.direct.pvclock_delta = 0;
        tns_vdso_params_fill(&h, 0x7f0000010000, &p);
        EXPECT_EQ(p.direct_pvclock, 0);
}

TEST(vvar_layout_by_release) {
        EXPECT_EQ(tns_vvar_layout_for_release("6.18.44-fc-v1272"), TNS_VVAR_DATASTORE);
        EXPECT_EQ(tns_vvar_layout_for_release("6.13.0"), TNS_VVAR_DATASTORE);
        EXPECT_EQ(tns_vvar_layout_for_release("6.13"), TNS_VVAR_DATASTORE);
        EXPECT_EQ(tns_vvar_layout_for_release("7.0.0-rc1"), TNS_VVAR_DATASTORE);
        EXPECT_EQ(tns_vvar_layout_for_release("6.12.9-amd64"), TNS_VVAR_UNKNOWN);
        EXPECT_EQ(tns_vvar_layout_for_release("5.15.0-91-generic"), TNS_VVAR_UNKNOWN);
        EXPECT_EQ(tns_vvar_layout_for_release("6.1"), TNS_VVAR_UNKNOWN);
        EXPECT_EQ(tns_vvar_layout_for_release(""), TNS_VVAR_UNKNOWN);
        EXPECT_EQ(tns_vvar_layout_for_release("6"), TNS_VVAR_UNKNOWN);
        EXPECT_EQ(tns_vvar_layout_for_release("6."), TNS_VVAR_UNKNOWN);
        EXPECT_EQ(tns_vvar_layout_for_release("6.x"), TNS_VVAR_UNKNOWN);
        EXPECT_EQ(tns_vvar_layout_for_release("6.13x"), TNS_VVAR_UNKNOWN);
        EXPECT_EQ(tns_vvar_layout_for_release("v6.13"), TNS_VVAR_UNKNOWN);
        EXPECT_EQ(tns_vvar_layout_for_release(NULL), TNS_VVAR_UNKNOWN);
}

TEST(fallback_sites) {
        struct tns_vdso_host h = {.n_sites = 2, .site = {0x95a, 0x1234}};
        uint64_t base;

        EXPECT_TRUE(tns_vdso_host_site(&h, 0x7f0000000000 + 0x95a, &base));
        EXPECT_EQ(base, 0x7f0000000000);
        EXPECT_TRUE(tns_vdso_host_site(&h, 0x7f0000001000 + 0x1234 - 0x1000, &base));
        EXPECT_FALSE(tns_vdso_host_site(&h, 0x7f000000095b, &base));
        EXPECT_FALSE(tns_vdso_host_site(&h, 0x10, &base));
}

TEST(host_vdso_is_usable) {
        struct tns_vdso_host h;
        int r = tns_vdso_host_init(&h);

        if (r == -ENOENT)
                SKIP("no vDSO in this process (vdso=0?)");
        ASSERT_EQ(r, 0);
        EXPECT_GT(h.fn[TNS_VDSO_CLOCK_GETTIME], 0);
        EXPECT_GT(h.gadget, 0);
        EXPECT_GE(h.n_sites, 1);
        EXPECT_EQ(h.image.size % TNS_PAGE_SIZE, 0);
        /* Either proven (some clock) or a reason for the call-through. */
        printf("# vDSO reads: %s %s\n", tns_vdso_direct_path(&h.direct), h.direct.why);
        EXPECT_TRUE(h.direct.mode ? h.direct.clocks != 0 : h.direct.why[0] != 0);
        tns_vdso_host_done(&h);
}

/* timensd runs with MemoryDenyWriteExecute= (systemd/timensd.service.in):
 * the proof of the direct path maps the image without ever making written
 * memory executable, so that it proves the same there. PR_SET_MDWE is the
 * kernel's form of that rule (6.3+). */
TEST(direct_proof_under_memory_deny_write_execute) {
        struct tns_vdso_host h;
        uint32_t want, got = 0;
        int fds[2], status;
        pid_t pid;

        if (tns_vdso_host_init(&h) < 0)
                SKIP("no vDSO in this process");
        want = h.direct.mode;
        tns_vdso_host_done(&h);
        if (!want)
                SKIP("no direct path on this kernel");
        ASSERT_EQ(pipe(fds), 0);
        pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
                uint32_t mode = 0;

                if (prctl(65 /* PR_SET_MDWE */, 1 /* PR_MDWE_REFUSE_EXEC_GAIN */, 0, 0, 0) < 0)
                        _exit(77);
                if (tns_vdso_host_init(&h) == 0)
                        mode = h.direct.mode;
                _exit(write(fds[1], &mode, sizeof(mode)) == sizeof(mode) ? 0 : 1);
        }
        close(fds[1]);
        EXPECT_EQ(read(fds[0], &got, sizeof(got)) >= 0, true);
        close(fds[0]);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
                SKIP("this kernel has no PR_SET_MDWE");
        EXPECT_EQ(status, 0);
        EXPECT_EQ(got, want);
}
