/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns.h"
#include "page-store.h"
#include "test.h"
#include "time-util.h"

#define NS 1000000000LL

TEST(root_offsets_are_published) {
        int64_t off[TNS_CLASS_MAX] = {1 * NS, 2 * NS, -3 * NS};
        struct tns_ns *ns;

        ASSERT_EQ(tns_ns_new(7, "a", NULL, off, NULL, NULL, &ns), 0);
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

        ASSERT_EQ(tns_ns_new(1, NULL, NULL, off, NULL, NULL, &root), 0);
        ASSERT_EQ(tns_ns_new(2, NULL, root, NULL, NULL, NULL, &kid), 0);
        ASSERT_EQ(tns_ns_new(3, NULL, kid, NULL, NULL, NULL, &grandkid), 0);
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

        ASSERT_EQ(tns_ns_new(1, NULL, NULL, off, NULL, NULL, &root), 0);
        ASSERT_EQ(tns_ns_new(2, NULL, root, NULL, NULL, NULL, &kid), 0);
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

        ASSERT_EQ(tns_ns_new(1, NULL, NULL, NULL, NULL, NULL, &root), 0);
        ASSERT_EQ(tns_ns_new(2, NULL, root, NULL, NULL, NULL, &kid), 0);
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

        ASSERT_EQ(tns_ns_new(1, NULL, NULL, NULL, NULL, NULL, &ns), 0);
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

/* The page is mapped by members: the supervisor's copy and its own
 * sequence stand whatever the page says. */
TEST(writer_keeps_its_own_copy_and_sequence) {
        int64_t off[TNS_CLASS_MAX] = {1 * NS, 2 * NS, 3 * NS};
        struct tns_ns *ns;

        ASSERT_EQ(tns_ns_new(1, NULL, NULL, off, NULL, NULL, &ns), 0);
        /* What a member that could write the page would leave: an odd
         * sequence and other offsets. */
        ns->page->seq = 12345;
        ns->page->clocks[TNS_CLASS_REALTIME].offset_ns = 999 * NS;
        EXPECT_EQ(tns_ns_offset(ns, TNS_CLASS_REALTIME), 3 * NS);
        ASSERT_EQ(tns_ns_set_offset(ns, TNS_CLASS_MONOTONIC, 5 * NS), 0);
        EXPECT_EQ(ns->page->seq % 2, 0);
        EXPECT_EQ(ns->page->clocks[TNS_CLASS_REALTIME].offset_ns, 3 * NS);
        EXPECT_EQ(ns->page->clocks[TNS_CLASS_MONOTONIC].offset_ns, 5 * NS);
        tns_ns_unref(ns);
}

/* A page left with an odd sequence (a predecessor killed inside
 * publish()) is read with a bound, taken as it is and published whole
 * again: never a spin, never a dropped namespace. */
TEST(adopt_mends_a_page_left_mid_write) {
        int64_t off[TNS_CLASS_MAX] = {1 * NS, 2 * NS, 3 * NS}, got[TNS_CLASS_MAX];
        struct tns_ns *ns, *again;
        int fd;

        ASSERT_EQ(tns_ns_new(4, NULL, NULL, off, NULL, NULL, &ns), 0);
        EXPECT_EQ(tns_page_offsets_read(ns->page, got, 10), 0);
        EXPECT_EQ(got[TNS_CLASS_BOOTTIME], 2 * NS);
        fd = dup(ns->page_fd);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(tns_ns_adopt(4, NULL, NULL, fd, NULL, NULL, &again), 0);
        EXPECT_EQ(tns_ns_offset(again, TNS_CLASS_REALTIME), 3 * NS);
        tns_ns_unref(again);
        /* Killed between two classes: realtime new, the rest old. */
        ns->page->seq |= 1;
        ns->page->clocks[TNS_CLASS_REALTIME].offset_ns = 9 * NS;
        EXPECT_EQ(tns_page_offsets_read(ns->page, got, 10), -EBUSY);
        fd = dup(ns->page_fd);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(tns_ns_adopt(4, NULL, NULL, fd, NULL, NULL, &again), 0);
        EXPECT_EQ(tns_ns_offset(again, TNS_CLASS_REALTIME), 9 * NS);
        EXPECT_EQ(tns_ns_offset(again, TNS_CLASS_MONOTONIC), 1 * NS);
        EXPECT_EQ(again->page->seq % 2, 0);
        EXPECT_EQ(again->page->clocks[TNS_CLASS_REALTIME].offset_sec, 9);
        EXPECT_EQ(tns_page_offsets_read(again->page, got, 10), 0);
        tns_ns_unref(again);
        /* Another id's page is not this namespace's. */
        fd = dup(ns->page_fd);
        EXPECT_EQ(tns_ns_adopt(5, NULL, NULL, fd, NULL, NULL, &again), -EBADMSG);
        tns_ns_unref(ns);
}

/* The store (lib/kernel/page-store.h): members' descriptions are read-only for
 * everyone, root included; ours is writable; adoption checks the pair. */
TEST(page_store_hands_out_unwritable_descriptions) {
        struct tns_page_store ps = TNS_PAGE_STORE_NULL, again = TNS_PAGE_STORE_NULL;
        int64_t off[TNS_CLASS_MAX] = {0, 0, 7 * NS};
        char path[64];
        struct tns_ns *ns, *adopted;
        struct stat st;
        int ro, w, r;
        void *p;

        r = tns_page_store_new(&ps);
        if (r == -EPERM)
                SKIP("no mount namespace and tmpfs for an unprivileged user");
        ASSERT_EQ(r, 0);
        ASSERT_EQ(tns_ns_new(9, NULL, NULL, off, NULL, &ps, &ns), 0);
        EXPECT_TRUE(ns->store == &ps);
        EXPECT_EQ(ns->page_dev, ps.dev);
        ro = tns_ns_ro_fd(ns);
        ASSERT_GE(ro, 0);
        ASSERT_EQ(fstat(ro, &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0444);
        EXPECT_EQ(st.st_ino, ns->page_ino);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", ro);
        w = open(path, O_RDWR | O_CLOEXEC);
        EXPECT_EQ(w, -1);
        EXPECT_EQ(errno, EROFS);
        p = mmap(NULL, TNS_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, ro, TNS_MEMFD_OFFSETS_PAGE);
        EXPECT_TRUE(p == MAP_FAILED);
        p = mmap(NULL, TNS_PAGE_SIZE, PROT_READ, MAP_SHARED, ro, TNS_MEMFD_OFFSETS_PAGE);
        ASSERT_TRUE(p != MAP_FAILED);
        EXPECT_EQ(mprotect(p, TNS_PAGE_SIZE, PROT_READ | PROT_WRITE), -1);
        ASSERT_EQ(tns_ns_set_offset(ns, TNS_CLASS_REALTIME, 8 * NS), 0);
        EXPECT_EQ(((struct tns_offsets_page *) p)->clocks[TNS_CLASS_REALTIME].offset_ns, 8 * NS);
        munmap(p, TNS_PAGE_SIZE);
        /* A restart: the store's two fds and the namespace's file. */
        ASSERT_EQ(tns_page_store_adopt(dup(ps.rw_dir), dup(ps.ro_dir), &again), 0);
        EXPECT_EQ(again.dev, ps.dev);
        ASSERT_EQ(tns_ns_adopt(9, NULL, NULL, dup(ns->page_fd), NULL, &again, &adopted), 0);
        EXPECT_TRUE(adopted->store == &again);
        EXPECT_EQ(tns_ns_offset(adopted, TNS_CLASS_REALTIME), 8 * NS);
        /* The file of another id is refused. */
        EXPECT_EQ(tns_ns_adopt(10, NULL, NULL, dup(ns->page_fd), NULL, &again, &adopted), -EBADMSG);
        /* The two mounts swapped are no store. */
        {
                struct tns_page_store swapped = TNS_PAGE_STORE_NULL;

                EXPECT_EQ(tns_page_store_adopt(dup(ps.ro_dir), dup(ps.rw_dir), &swapped), -EBADMSG);
        }
        tns_ns_unref(ns);
        tns_ns_unref(adopted);
        tns_page_store_done(&again);
        tns_page_store_done(&ps);
}

/* Rates (issue 18): published in rates[], continuous at each change,
 * folded back to plain offsets at rate 1. */
TEST(rate_set_and_fold) {
        int64_t off[TNS_CLASS_MAX] = {10 * NS, 20 * NS, 30 * NS};
        struct tns_rate_map m;
        struct timespec now, v1, v2;
        struct tns_ns *ns, *child;

        ASSERT_EQ(tns_ns_new(9, "r", NULL, off, NULL, NULL, &ns), 0);
        EXPECT_FALSE(ns->page->flags & TNS_PAGE_F_RATED);
        ASSERT_EQ(clock_gettime(CLOCK_MONOTONIC, &now), 0);
        ASSERT_EQ(tns_ns_now(ns, TNS_CLASS_MONOTONIC, &now, &v1), 0);
        ASSERT_EQ(tns_ns_set_rate(ns, 7, 2 * TNS_RATE_ONE, -1), 0);
        EXPECT_TRUE(tns_ns_rated(ns));
        EXPECT_TRUE(ns->page->flags & TNS_PAGE_F_RATED);
        EXPECT_EQ(ns->page->rates[TNS_CLASS_MONOTONIC].mult, 2 * TNS_RATE_ONE);
        /* The page's map is the namespace's: R plus the offset. */
        tns_ns_rate_map(ns, TNS_CLASS_MONOTONIC, &m);
        EXPECT_EQ(ns->page->rates[TNS_CLASS_MONOTONIC].anchor_ns, m.anchor_ns);
        ASSERT_EQ(tns_ns_now(ns, TNS_CLASS_MONOTONIC, &now, &v2), 0);
        /* Re-anchored: no jump back (a faster rate is anchored 10 ms
         * back, so it may read up to ~10 ms ahead). */
        EXPECT_GE(v2.tv_sec * NS + v2.tv_nsec, v1.tv_sec * NS + v1.tv_nsec - 2000000);
        EXPECT_LE(v2.tv_sec * NS + v2.tv_nsec, v1.tv_sec * NS + v1.tv_nsec + 50000000);
        /* A child runs at its root's rate; setting it there is refused. */
        ASSERT_EQ(tns_ns_new(10, NULL, ns, NULL, NULL, NULL, &child), 0);
        EXPECT_TRUE(child->page->flags & TNS_PAGE_F_RATED);
        EXPECT_EQ(child->page->rates[TNS_CLASS_REALTIME].mult, 2 * TNS_RATE_ONE);
        EXPECT_EQ(tns_ns_set_rate(child, 7, TNS_RATE_ONE, -1), -EOPNOTSUPP);
        /* Frozen, then back to 1: folded into offsets, the page plain. */
        ASSERT_EQ(tns_ns_set_rate(ns, 7, 0, 1), 0);
        EXPECT_EQ(ns->page->rates[TNS_CLASS_REALTIME].mult, 0);
        EXPECT_EQ(ns->page->rates[TNS_CLASS_REALTIME].run_mult, 2 * TNS_RATE_ONE);
        EXPECT_EQ(tns_ns_mult(ns, TNS_CLASS_REALTIME), 0);
        ASSERT_EQ(tns_ns_set_rate(ns, 7, TNS_RATE_ONE, 0), 0);
        EXPECT_FALSE(tns_ns_rated(ns));
        EXPECT_FALSE(ns->page->flags & TNS_PAGE_F_RATED);
        EXPECT_FALSE(child->page->flags & TNS_PAGE_F_RATED);
        EXPECT_TRUE(tns_ns_unref(child));
        EXPECT_TRUE(tns_ns_unref(ns));
}

/* Rates per class: REALTIME frozen while MONOTONIC and
 * BOOTTIME run at x2; a class left out keeps its rate; the frozen class
 * alone back to 1 leaves the namespace rated by the other. */
TEST(rates_per_class) {
        int64_t off[TNS_CLASS_MAX] = {0, 0, 0};
        const uint64_t two = 2 * TNS_RATE_ONE;
        struct tns_ns *ns;

        ASSERT_EQ(tns_ns_new(11, "pc", NULL, off, NULL, NULL, &ns), 0);
        ASSERT_EQ(tns_ns_set_rates(ns, (uint64_t[]){two, two, 0}, (int[]){-1, -1, 1}), 0);
        EXPECT_EQ(tns_ns_mult(ns, TNS_CLASS_MONOTONIC), two);
        EXPECT_EQ(tns_ns_mult(ns, TNS_CLASS_BOOTTIME), two);
        EXPECT_EQ(tns_ns_mult(ns, TNS_CLASS_REALTIME), 0);
        EXPECT_EQ(tns_ns_run_mult(ns, TNS_CLASS_REALTIME), TNS_RATE_ONE);
        /* MONOTONIC alone changed: REALTIME stays frozen. */
        ASSERT_EQ(tns_ns_set_rates(ns, (uint64_t[]){TNS_RATE_ONE / 2, TNS_RATE_ONE / 2, 0}, (int[]){-1, -1, -1}), 0);
        EXPECT_EQ(tns_ns_mult(ns, TNS_CLASS_MONOTONIC), TNS_RATE_ONE / 2);
        EXPECT_EQ(tns_ns_mult(ns, TNS_CLASS_REALTIME), 0);
        /* REALTIME unfrozen at 1: still rated, by MONOTONIC. */
        ASSERT_EQ(tns_ns_set_rates(ns, (uint64_t[]){0, 0, TNS_RATE_ONE}, (int[]){-1, -1, 0}), 0);
        EXPECT_EQ(tns_ns_mult(ns, TNS_CLASS_REALTIME), TNS_RATE_ONE);
        EXPECT_TRUE(tns_ns_rated(ns));
        ASSERT_EQ(tns_ns_set_rates(ns, (uint64_t[]){TNS_RATE_ONE, TNS_RATE_ONE, 0}, (int[]){-1, -1, -1}), 0);
        EXPECT_FALSE(tns_ns_rated(ns));
        EXPECT_TRUE(tns_ns_unref(ns));
}

/* Every write of a page prepares the rate maps for the vDSO (struct
 * tns_rate_fast) and stamps them with the sequence it leaves, which the
 * image compares (a stale stamp declines to rates[]): at creation, a
 * rate, a freeze, an offset, in a child, across the sequence's wrap. And
 * the prepared form of a page reads as its rate map. */
static bool stamped(const struct tns_ns *ns) {
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (ns->page->fast[c].stamp != (TNS_RATE_FAST_STAMP | ns->page->seq))
                        return false;
        return true;
}

TEST(rate_maps_prepared_for_readers) {
        int64_t off[TNS_CLASS_MAX] = {10 * NS, 20, -30};
        struct tns_ns *ns, *kid;
        struct timespec now;

        ASSERT_EQ(tns_ns_new(9, "r", NULL, off, NULL, NULL, &ns), 0);
        EXPECT_TRUE(stamped(ns));
        ASSERT_EQ(tns_ns_new(10, NULL, ns, NULL, NULL, NULL, &kid), 0);
        EXPECT_TRUE(stamped(kid));
        ASSERT_EQ(tns_ns_set_rate(ns, 7, 2 * TNS_RATE_ONE, -1), 0);
        EXPECT_TRUE(stamped(ns) && stamped(kid));
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                static const clockid_t host[TNS_CLASS_MAX] = {
                        [TNS_CLASS_MONOTONIC] = CLOCK_MONOTONIC,
                        [TNS_CLASS_BOOTTIME] = CLOCK_BOOTTIME,
                        [TNS_CLASS_REALTIME] = CLOCK_REALTIME,
                };
                const struct tns_clock_rate *r = &kid->page->rates[c];
                int64_t sec = 0, nsec = 0;

                /* The class's host clock, later than its anchor. */
                ASSERT_EQ(clock_gettime(host[c], &now), 0);

                ASSERT_TRUE(tns_rate_fast_apply(&kid->page->fast[c], kid->page->seq, (uint64_t) now.tv_sec,
                                                (uint64_t) now.tv_nsec, &sec, &nsec));
                EXPECT_EQ(sec * NS + nsec,
                          tns_rate_apply(r->mult, r->anchor_host, r->anchor_ns, now.tv_sec * NS + now.tv_nsec));
                /* Another sequence's stamp: declined. */
                EXPECT_TRUE(!tns_rate_fast_apply(&kid->page->fast[c], kid->page->seq + 2, (uint64_t) now.tv_sec,
                                                 (uint64_t) now.tv_nsec, &sec, &nsec));
        }
        ASSERT_EQ(tns_ns_set_rate(ns, 7, 0, 1), 0); /* frozen */
        EXPECT_TRUE(stamped(ns) && stamped(kid));
        ASSERT_EQ(tns_ns_set_offset(kid, TNS_CLASS_REALTIME, 5), 0);
        EXPECT_TRUE(stamped(kid));
        ns->seq = 0xfffffffd;
        ASSERT_EQ(tns_ns_set_rate(ns, 7, 3 * TNS_RATE_ONE, 0), 0);
        EXPECT_TRUE(stamped(ns));
        tns_ns_unref(kid);
        tns_ns_unref(ns);
}

/* BOOTTIME = MONOTONIC + S (the time suspended). The two classes are
 * anchored at one instant, S taken as its lower bound when the clocks
 * speed up and its upper bound when they slow down: a change then only
 * widens BOOTTIME's lead, never puts it behind. Checked against bounds of
 * S this test reads itself: at x1000000, 30 ns read apart put BOOTTIME
 * 30 ms behind. */
static int64_t mono_boot_read(clockid_t c) {
        struct timespec ts;

        (void) clock_gettime(c, &ts);
        return ts.tv_sec * NS + ts.tv_nsec;
}

TEST(rate_keeps_boottime_ahead_of_monotonic) {
        int64_t s_lo = INT64_MIN, s_hi = INT64_MAX;
        struct tns_ns *ns;

        for (int i = 0; i < 50; i++) {
                int64_t m1 = mono_boot_read(CLOCK_MONOTONIC), b = mono_boot_read(CLOCK_BOOTTIME),
                        m2 = mono_boot_read(CLOCK_MONOTONIC);

                s_lo = b - m2 > s_lo ? b - m2 : s_lo;
                s_hi = b - m1 < s_hi ? b - m1 : s_hi;
        }
        ASSERT_EQ(tns_ns_new(11, "bm", NULL, NULL, NULL, NULL, &ns), 0);
        for (int i = 0; i < 20; i++) {
                int64_t d;

                /* Faster (x1 or x2 to x1000000): anchors S apart at most. */
                ASSERT_EQ(tns_ns_set_rate(ns, 7, 1000000 * TNS_RATE_ONE, -1), 0);
                d = ns->rate[TNS_CLASS_BOOTTIME].anchor_host - ns->rate[TNS_CLASS_MONOTONIC].anchor_host;
                EXPECT_LE(d, s_hi);
                /* Slower (to x2): S apart at least. */
                ASSERT_EQ(tns_ns_set_rate(ns, 7, 2 * TNS_RATE_ONE, -1), 0);
                d = ns->rate[TNS_CLASS_BOOTTIME].anchor_host - ns->rate[TNS_CLASS_MONOTONIC].anchor_host;
                EXPECT_GE(d, s_lo);
        }
        EXPECT_TRUE(tns_ns_unref(ns));
}
