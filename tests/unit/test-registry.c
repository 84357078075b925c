/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/registry/registry.c on a supervisor without listeners: names,
 * life cycle, offsets, export and import. What needs processes (busy,
 * backwards, gone with the last process) is in tests/bats/daemon-*.bats. */
#include <string.h>
#include <time.h>

#include "registry.h"
#include "test.h"

#define NS 1000000000LL

struct fixture {
        sd_event *e;
        struct tns_supervisor *s;
        struct tns_registry *r;
        unsigned gone;
        uint64_t gone_id;
};

static void on_gone(struct tns_registry *r, uint64_t id, const char *name, void *userdata) {
        struct fixture *f = userdata;

        f->gone++;
        f->gone_id = id;
}

static int fixture_init(struct fixture *f) {
        *f = (struct fixture){};
        if (sd_event_new(&f->e) < 0 || tns_supervisor_new(f->e, NULL, &f->s) < 0 || tns_registry_new(f->s, &f->r) < 0)
                return -1;
        tns_registry_set_gone_callback(f->r, on_gone, f);
        return 0;
}

static void fixture_done(struct fixture *f) {
        tns_registry_free(f->r);
        tns_supervisor_free(f->s);
        sd_event_unref(f->e);
}

static int64_t now_ns(clockid_t id) {
        struct timespec ts;

        clock_gettime(id, &ts);
        return ts.tv_sec * NS + ts.tv_nsec;
}

TEST(create_find_destroy) {
        int64_t off[TNS_CLASS_MAX] = {NS, 2 * NS, 3 * NS};
        struct tns_ns *a, *b, *x;
        struct tns_ns_info info;
        struct fixture f;

        ASSERT_EQ(fixture_init(&f), 0);
        ASSERT_EQ(tns_registry_create(f.r, "a", off, TNS_ORIGIN_CREATE, TNS_GRANT_READ, &a), 0);
        EXPECT_EQ(tns_registry_create(f.r, "a", NULL, TNS_ORIGIN_CREATE, TNS_GRANT_NONE, &x), -EEXIST);
        EXPECT_EQ(tns_registry_create(f.r, "42", NULL, TNS_ORIGIN_CREATE, TNS_GRANT_NONE, &x), -EINVAL);
        ASSERT_EQ(tns_registry_create(f.r, NULL, NULL, TNS_ORIGIN_IMPORT, TNS_GRANT_NONE, &b), 0);
        EXPECT_TRUE(tns_registry_find(f.r, "a") == a);
        EXPECT_TRUE(tns_registry_find(f.r, "b") == NULL);
        EXPECT_TRUE(tns_registry_find_id(f.r, b->id) == b);
        tns_registry_info(f.r, a, &info);
        EXPECT_STREQ(info.name, "a");
        EXPECT_EQ(info.origin, TNS_ORIGIN_CREATE);
        EXPECT_EQ(info.grant, TNS_GRANT_READ);
        EXPECT_EQ(info.offset[TNS_CLASS_REALTIME], 3 * NS);
        EXPECT_FALSE(info.live);
        EXPECT_EQ(info.listeners, 0);
        EXPECT_GT(info.created_realtime_ns, 0);
        EXPECT_EQ(tns_registry_destroy(f.r, a, false), 0);
        EXPECT_EQ(f.gone, 1);
        EXPECT_TRUE(tns_registry_find(f.r, "a") == NULL);
        /* The name is free again. */
        EXPECT_EQ(tns_registry_create(f.r, "a", NULL, TNS_ORIGIN_CREATE, TNS_GRANT_NONE, &a), 0);
        fixture_done(&f);
}

TEST(list_oldest_first) {
        struct tns_ns *ns, **all = NULL;
        struct fixture f;
        size_t n;
        char name[8];

        ASSERT_EQ(fixture_init(&f), 0);
        for (int i = 0; i < 5; i++) {
                snprintf(name, sizeof(name), "n%d", i);
                ASSERT_EQ(tns_registry_create(f.r, name, NULL, TNS_ORIGIN_CREATE, TNS_GRANT_NONE, &ns), 0);
        }
        ASSERT_EQ(tns_registry_list(f.r, &all, &n), 0);
        ASSERT_EQ(n, 5);
        for (size_t i = 1; i < n; i++)
                EXPECT_LT(all[i - 1]->id, all[i]->id);
        free(all);
        fixture_done(&f);
}

TEST(set_offsets_all_or_nothing) {
        int64_t off[TNS_CLASS_MAX] = {}, v[TNS_CLASS_MAX] = {5 * NS, 6 * NS, INT64_MAX};
        enum tns_clock_class bad;
        struct tns_ns *ns;
        struct fixture f;
        uint32_t seq;

        ASSERT_EQ(fixture_init(&f), 0);
        ASSERT_EQ(tns_registry_create(f.r, "a", off, TNS_ORIGIN_CREATE, TNS_GRANT_NONE, &ns), 0);
        /* One bad clock: none changes. */
        EXPECT_EQ(tns_registry_set_offsets(f.r, ns, 7, v, false, &bad), -ERANGE);
        EXPECT_EQ(bad, TNS_CLASS_REALTIME);
        EXPECT_EQ(tns_ns_offset(ns, TNS_CLASS_MONOTONIC), 0);
        seq = ns->page->seq;
        EXPECT_EQ(tns_registry_set_offsets(f.r, ns, 3, v, false, &bad), 0);
        /* Both clocks in one seqlock write: the vDSO sees them change together. */
        EXPECT_EQ(ns->page->seq, seq + 2);
        EXPECT_EQ(tns_ns_offset(ns, TNS_CLASS_MONOTONIC), 5 * NS);
        EXPECT_EQ(tns_ns_offset(ns, TNS_CLASS_BOOTTIME), 6 * NS);
        EXPECT_EQ(tns_ns_offset(ns, TNS_CLASS_REALTIME), 0);
        /* Without processes nothing runs whose clock could go back. */
        v[TNS_CLASS_MONOTONIC] = 0;
        EXPECT_EQ(tns_registry_set_offsets(f.r, ns, 1, v, false, &bad), 0);
        v[TNS_CLASS_MONOTONIC] = -now_ns(CLOCK_MONOTONIC) - NS;
        EXPECT_EQ(tns_registry_set_offsets(f.r, ns, 1, v, true, &bad), -ERANGE);
        fixture_done(&f);
}

TEST(export_import_continues) {
        int64_t off[TNS_CLASS_MAX] = {86400 * NS, 2 * 86400 * NS, -3600 * NS};
        struct tns_clock_state st;
        enum tns_clock_class bad;
        struct tns_ns *a, *b;
        struct fixture f;
        int64_t before, mono;

        ASSERT_EQ(fixture_init(&f), 0);
        ASSERT_EQ(tns_registry_create(f.r, "a", off, TNS_ORIGIN_CREATE, TNS_GRANT_FULL, &a), 0);
        before = now_ns(CLOCK_MONOTONIC);
        ASSERT_EQ(tns_registry_export(f.r, a, &st), 0);
        EXPECT_STREQ(st.name, "a");
        EXPECT_EQ(st.grant, TNS_GRANT_FULL);
        EXPECT_EQ(st.offset_ns[TNS_CLASS_REALTIME], -3600 * NS);
        EXPECT_GE(st.value_ns[TNS_CLASS_MONOTONIC], before + 86400 * NS);
        /* As if checkpointed for an hour: MONOTONIC resumes where it was. */
        st.value_ns[TNS_CLASS_MONOTONIC] -= 3600 * NS;
        EXPECT_EQ(tns_registry_import(f.r, &st, NULL, st.grant, &b, &bad), -EEXIST);
        ASSERT_EQ(tns_registry_import(f.r, &st, "b", st.grant, &b, &bad), 0);
        mono = now_ns(CLOCK_MONOTONIC) + tns_ns_offset(b, TNS_CLASS_MONOTONIC);
        EXPECT_GE(mono, st.value_ns[TNS_CLASS_MONOTONIC]);
        EXPECT_LT(mono, st.value_ns[TNS_CLASS_MONOTONIC] + NS);
        EXPECT_EQ(tns_ns_offset(b, TNS_CLASS_REALTIME), -3600 * NS);
        /* A value this host cannot give. */
        st.value_ns[TNS_CLASS_BOOTTIME] = -NS;
        EXPECT_EQ(tns_registry_import(f.r, &st, "c", st.grant, &b, &bad), -ERANGE);
        EXPECT_EQ(bad, TNS_CLASS_BOOTTIME);
        fixture_done(&f);
}

TEST(adopt_refuses_other_fds) {
        struct tns_ns *ns;
        struct fixture f;
        int p[2];

        ASSERT_EQ(fixture_init(&f), 0);
        ASSERT_EQ(tns_registry_create(f.r, "a", NULL, TNS_ORIGIN_CREATE, TNS_GRANT_NONE, &ns), 0);
        ASSERT_EQ(pipe(p), 0);
        EXPECT_EQ(tns_registry_adopt(f.r, ns, p[0], 1), -ENOTTY);
        close(p[1]);
        EXPECT_TRUE(tns_registry_find_process(f.r, getpid()) == NULL);
        fixture_done(&f);
}
