/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ns.h"
#include "test.h"
#include "time-util.h"

#define NS 1000000000LL

TEST(root_offsets_are_published) {
        int64_t off[TNS_CLASS_MAX] = {1 * NS, 2 * NS, -3 * NS};
        struct tns_ns *ns;

        ASSERT_EQ(tns_ns_new(7, "a", NULL, off, NULL, &ns), 0);
        EXPECT_EQ(ns->page->magic, TNS_PAGE_MAGIC);
        EXPECT_EQ(ns->page->version, TNS_PAGE_VERSION);
        EXPECT_EQ(ns->page->ns_id, 7);
        EXPECT_EQ(ns->page->seq % 2, 0);
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                EXPECT_EQ(tns_ns_offset(ns, c), off[c]);
        EXPECT_TRUE(tns_ns_unref(ns));
}

TEST(child_composes_on_parent) {
        int64_t off[TNS_CLASS_MAX] = {10 * NS, 20 * NS, 30 * NS};
        struct tns_ns *root, *kid, *grandkid;

        ASSERT_EQ(tns_ns_new(1, NULL, NULL, off, NULL, &root), 0);
        ASSERT_EQ(tns_ns_new(2, NULL, root, NULL, NULL, &kid), 0);
        ASSERT_EQ(tns_ns_new(3, NULL, kid, NULL, NULL, &grandkid), 0);
        EXPECT_EQ(tns_ns_offset(kid, TNS_CLASS_MONOTONIC), 10 * NS);
        /* A child sets its own clock; the parent does not move. */
        ASSERT_EQ(tns_ns_set_offset(kid, TNS_CLASS_MONOTONIC, 100 * NS), 0);
        EXPECT_EQ(tns_ns_offset(kid, TNS_CLASS_MONOTONIC), 100 * NS);
        EXPECT_EQ(tns_ns_offset(grandkid, TNS_CLASS_MONOTONIC), 100 * NS);
        EXPECT_EQ(tns_ns_offset(root, TNS_CLASS_MONOTONIC), 10 * NS);
        /* The parent moves: its descendants move with it. */
        ASSERT_EQ(tns_ns_set_offset(root, TNS_CLASS_MONOTONIC, 15 * NS), 0);
        EXPECT_EQ(tns_ns_offset(kid, TNS_CLASS_MONOTONIC), 105 * NS);
        EXPECT_EQ(tns_ns_offset(grandkid, TNS_CLASS_MONOTONIC), 105 * NS);
        EXPECT_FALSE(tns_ns_unref(root));
        EXPECT_FALSE(tns_ns_unref(kid));
        EXPECT_TRUE(tns_ns_unref(grandkid)); /* frees the chain */
}

TEST(set_offset_overflow_changes_nothing) {
        int64_t off[TNS_CLASS_MAX] = {INT64_MAX / 2, 0, 0};
        struct tns_ns *root, *kid;

        ASSERT_EQ(tns_ns_new(1, NULL, NULL, off, NULL, &root), 0);
        ASSERT_EQ(tns_ns_new(2, NULL, root, NULL, NULL, &kid), 0);
        ASSERT_EQ(tns_ns_set_offset(kid, TNS_CLASS_MONOTONIC, INT64_MAX), 0);
        EXPECT_EQ(tns_ns_set_offset(root, TNS_CLASS_MONOTONIC, INT64_MAX), -ERANGE);
        EXPECT_EQ(tns_ns_offset(root, TNS_CLASS_MONOTONIC), INT64_MAX / 2);
        EXPECT_EQ(tns_ns_offset(kid, TNS_CLASS_MONOTONIC), INT64_MAX);
        tns_ns_unref(root);
        tns_ns_unref(kid);
}

TEST(tz_is_inherited) {
        struct tns_ns *root, *kid;
        struct timezone tz;

        ASSERT_EQ(tns_ns_new(1, NULL, NULL, NULL, NULL, &root), 0);
        ASSERT_EQ(tns_ns_new(2, NULL, root, NULL, NULL, &kid), 0);
        EXPECT_FALSE(tns_ns_tz(kid, &tz));
        root->tz_set = true;
        root->tz = (struct timezone){30, 0};
        ASSERT_TRUE(tns_ns_tz(kid, &tz));
        EXPECT_EQ(tz.tz_minuteswest, 30);
        tns_ns_unref(root);
        tns_ns_unref(kid);
}

TEST(page_memfd_is_sealed_against_resize) {
        struct tns_ns *ns;

        ASSERT_EQ(tns_ns_new(1, NULL, NULL, NULL, NULL, &ns), 0);
        EXPECT_EQ(ftruncate(ns->page_fd, 0), -1);
        EXPECT_EQ(errno, EPERM);
        EXPECT_EQ(ftruncate(ns->page_fd, 3 * TNS_PAGE_SIZE), -1);
        EXPECT_EQ(lseek(ns->page_fd, 0, SEEK_END), TNS_MEMFD_IMAGE);
        tns_ns_unref(ns);
}

TEST(offset_check_limits) {
        struct timespec now = {1000, 0};

        EXPECT_EQ(tns_offset_check(TNS_CLASS_MONOTONIC, -1000 * NS, &now), 0);
        EXPECT_EQ(tns_offset_check(TNS_CLASS_MONOTONIC, -1001 * NS, &now), -ERANGE);
        EXPECT_EQ(tns_offset_check(TNS_CLASS_BOOTTIME, (TNS_MONO_SEC_MAX - 1000) * NS, &now), 0);
        EXPECT_EQ(tns_offset_check(TNS_CLASS_BOOTTIME, (TNS_MONO_SEC_MAX - 999) * NS, &now), -ERANGE);
        EXPECT_EQ(tns_offset_check(TNS_CLASS_REALTIME, (TNS_KTIME_SEC_MAX - 1001) * NS, &now), 0);
        EXPECT_EQ(tns_offset_check(TNS_CLASS_REALTIME, INT64_MAX, &now), -ERANGE);
}
