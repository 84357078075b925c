/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table is the one source of truth: check it against libseccomp's own
 * idea of the x86-64 and i386 ABIs, and check the filter built from it. */
#include <seccomp.h>
#include <string.h>

#include "clocks.h"
#include "filter.h"
#include "syscall-table.h"
#include "test.h"

TEST(entries_are_indexed_by_id) {
        for (int i = 0; i < _TNS_SYS_MAX; i++) {
                EXPECT_EQ(tns_syscalls[i].id, i);
                ASSERT_TRUE(tns_syscalls[i].name != NULL);
        }
}

TEST(numbers_match_libseccomp) {
        for (int i = 0; i < _TNS_SYS_MAX; i++) {
                const struct tns_syscall_desc *d = &tns_syscalls[i];

                EXPECT_EQ(seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, d->name), d->nr);
                EXPECT_TRUE(tns_syscall_by_nr(d->nr) == d);
        }
        EXPECT_TRUE(tns_syscall_by_nr(0) == NULL); /* read */
}

TEST(i386_names_exist) {
        for (int i = 0; i < _TNS_SYS_MAX; i++)
                for (int j = 0; j < TNS_MAX_COMPAT_NAMES && tns_syscalls[i].i386_names[j]; j++)
                        EXPECT_GT(seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, tns_syscalls[i].i386_names[j]), 0);
}

TEST(clock_classes) {
        EXPECT_EQ(tns_clock_class(CLOCK_MONOTONIC_RAW), TNS_CLASS_MONOTONIC);
        EXPECT_EQ(tns_clock_class(CLOCK_BOOTTIME_ALARM), TNS_CLASS_BOOTTIME);
        EXPECT_EQ(tns_clock_class(CLOCK_TAI), TNS_CLASS_REALTIME);
        EXPECT_EQ(tns_clock_class(CLOCK_PROCESS_CPUTIME_ID), -EINVAL);
        EXPECT_EQ(tns_clock_class(10), -EINVAL);
        EXPECT_EQ(tns_clock_class(-6), -EINVAL);
        for (unsigned i = 0; i < tns_n_virtual_clocks; i++) {
                EXPECT_GE(tns_clock_class(tns_virtual_clocks[i]), 0);
                EXPECT_TRUE(tns_clock_name(tns_virtual_clocks[i]) != NULL);
        }
        EXPECT_TRUE(tns_clock_settable(CLOCK_MONOTONIC_COARSE));
        EXPECT_FALSE(tns_clock_settable(CLOCK_TAI));
        EXPECT_FALSE(tns_clock_settable(CLOCK_REALTIME_COARSE));
}

TEST(filter_builds) {
        struct tns_filter f = {};

        ASSERT_EQ(tns_filter_build(&f), 0);
        EXPECT_GT(f.prog.len, 10);
        EXPECT_TRUE(f.prog.filter != NULL);
        tns_filter_done(&f);
        EXPECT_TRUE(f.prog.filter == NULL);
}

/* A rate-capable namespace's filter traps more; a plain one nothing of it. */
static int count_rated(const struct tns_filter_rule *rule, void *userdata) {
        if (rule->d->rated || (rule->d->id == TNS_SYS_FUTEX && rule->n_conds == 2 && rule->conds[0].datum == 0))
                ++*(unsigned *) userdata;
        return 0;
}

TEST(rated_filter_only_when_asked) {
        struct tns_filter plain = {}, rated = {};
        unsigned n_plain = 0, n_rated = 0;

        ASSERT_EQ(tns_filter_build(&plain), 0);
        ASSERT_EQ(tns_filter_build_flags(TNS_FILTER_RATED, &rated), 0);
        EXPECT_GT(rated.prog.len, plain.prog.len);
        ASSERT_EQ(tns_filter_rules_foreach(0, count_rated, &n_plain), 0);
        ASSERT_EQ(tns_filter_rules_foreach(TNS_FILTER_RATED, count_rated, &n_rated), 0);
        EXPECT_EQ(n_plain, 0);
        EXPECT_GT(n_rated, 13);
        tns_filter_done(&plain);
        tns_filter_done(&rated);
}
