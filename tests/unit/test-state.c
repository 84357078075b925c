/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "test.h"
#include "util.h"

static void sample(struct tns_state *st) {
        struct tns_state_ns *n;
        struct tns_state_listener *l;
        struct tns_state_member *m;

        *st = (struct tns_state){
                .next_ns_id = 7, .next_serial = 4, .wait_slot_base = 1265, .have_wait_slot_base = true};
        n = tns_state_add_ns(st);
        *n = (struct tns_state_ns){.id = 2,
                                   .held = true,
                                   .origin = 1,
                                   .grant = 2,
                                   .owner = 1000,
                                   .shared = true,
                                   .created_realtime_ns = -5,
                                   .sets = 3,
                                   .flags = 1};
        strcpy(n->name, "ci-2030");
        n = tns_state_add_ns(st);
        *n = (struct tns_state_ns){.id = 7, .parent = 2, .tz_set = true, .tz_minuteswest = -60, .tz_dsttime = 1};
        l = tns_state_add_listener(st);
        *l = (struct tns_state_listener){.serial = 3, .ns = 2, .root_pid = 4242, .kernel_nested = true};
        m = tns_state_add_member(st);
        *m = (struct tns_state_member){.listener = 3, .ns = 7, .tgid = 4243, .start_time = UINT64_MAX};
}

TEST(state_roundtrip) {
        _cleanup_(tns_state_done) struct tns_state st = {}, back = {};
        _cleanup_free_ char *text = NULL, *again = NULL;

        sample(&st);
        EXPECT_EQ(tns_state_format(&st, &text), 0);
        EXPECT_EQ(tns_state_parse(text, strlen(text), &back), 0);
        EXPECT_EQ(back.next_ns_id, 7u);
        EXPECT_EQ(back.next_serial, 4u);
        EXPECT_TRUE(back.have_wait_slot_base);
        EXPECT_EQ(back.wait_slot_base, 1265u);
        EXPECT_EQ(back.n_ns, 2u);
        EXPECT_STREQ(back.ns[0].name, "ci-2030");
        EXPECT_TRUE(back.ns[0].held);
        /* Who made it survives a restart (issue 14, item 6). */
        EXPECT_EQ(back.ns[0].owner, 1000u);
        EXPECT_TRUE(back.ns[0].shared);
        EXPECT_EQ(back.ns[1].owner, 0u);
        EXPECT_FALSE(back.ns[1].shared);
        EXPECT_EQ(back.ns[0].created_realtime_ns, -5);
        EXPECT_EQ(back.ns[0].flags, 1u);
        EXPECT_EQ(back.ns[1].parent, 2u);
        EXPECT_TRUE(back.ns[1].tz_set);
        EXPECT_EQ(back.ns[1].tz_minuteswest, -60);
        EXPECT_EQ(back.n_listeners, 1u);
        EXPECT_EQ(back.listeners[0].root_pid, 4242);
        EXPECT_TRUE(back.listeners[0].kernel_nested);
        EXPECT_EQ(back.n_members, 1u);
        EXPECT_EQ(back.members[0].start_time, UINT64_MAX);
        /* The same text again: nothing lost or added. */
        EXPECT_EQ(tns_state_format(&back, &again), 0);
        EXPECT_STREQ(again, text);
}

static int parse(const char *text) {
        _cleanup_(tns_state_done) struct tns_state st = {};

        return tns_state_parse(text, strlen(text), &st);
}

#define HEAD "{\"version\":1,\"next_ns_id\":9,\"next_serial\":9,"
#define NS(id, parent)                                                                                                 \
        "{\"id\":" #id ",\"parent\":" #parent                                                                          \
        ",\"name\":\"\",\"held\":false,\"origin\":0,\"grant\":0,\"created\":0,\"sets\":0,\"flags\":0}"

TEST(state_wait_slot_base_optional) {
        _cleanup_(tns_state_done) struct tns_state st = {};
        const char *old = HEAD "\"namespaces\":[],\"listeners\":[],\"members\":[]}";
        const char *neg = HEAD "\"wait_slot_base\":-1,\"namespaces\":[],\"listeners\":[],\"members\":[]}";

        /* An older timensd's record has none; a bad one is ignored. */
        EXPECT_EQ(tns_state_parse(old, strlen(old), &st), 0);
        EXPECT_FALSE(st.have_wait_slot_base);
        tns_state_done(&st);
        st = (struct tns_state){};
        EXPECT_EQ(tns_state_parse(neg, strlen(neg), &st), 0);
        EXPECT_FALSE(st.have_wait_slot_base);
}

TEST(state_refused) {
        EXPECT_EQ(parse(HEAD "\"namespaces\":[],\"listeners\":[],\"members\":[]}"), 0);
        /* A record of before owners (NS() has none) is fine; a bad one is not. */
        EXPECT_EQ(parse(HEAD "\"namespaces\":[{\"id\":2,\"parent\":0,\"name\":\"\",\"held\":true,\"origin\":0,"
                             "\"grant\":0,\"owner\":-1,\"created\":0,\"sets\":0,\"flags\":0}],\"listeners\":[],"
                             "\"members\":[]}"),
                  -EBADMSG);
        EXPECT_EQ(parse(HEAD "\"namespaces\":[{\"id\":2,\"parent\":0,\"name\":\"\",\"held\":true,\"origin\":0,"
                             "\"grant\":0,\"shared\":1,\"created\":0,\"sets\":0,\"flags\":0}],\"listeners\":[],"
                             "\"members\":[]}"),
                  -EBADMSG);
        EXPECT_EQ(parse(""), -EBADMSG);
        EXPECT_EQ(parse("[]"), -EBADMSG);
        EXPECT_EQ(parse("{\"version\":2,\"next_ns_id\":9,\"next_serial\":9,\"namespaces\":[],\"listeners\":[],"
                        "\"members\":[]}"),
                  -EBADMSG);
        /* Trailing bytes, a missing array. */
        EXPECT_EQ(parse(HEAD "\"namespaces\":[],\"listeners\":[],\"members\":[]} x"), -EBADMSG);
        EXPECT_EQ(parse(HEAD "\"namespaces\":[],\"listeners\":[]}"), -EBADMSG);
        /* A child before its parent, a duplicate id, an id past next_ns_id. */
        EXPECT_EQ(parse(HEAD "\"namespaces\":[" NS(2, 0) "," NS(3, 2) "],\"listeners\":[],\"members\":[]}"), 0);
        EXPECT_EQ(parse(HEAD "\"namespaces\":[" NS(3, 2) "," NS(2, 0) "],\"listeners\":[],\"members\":[]}"), -EBADMSG);
        EXPECT_EQ(parse(HEAD "\"namespaces\":[" NS(2, 0) "," NS(2, 0) "],\"listeners\":[],\"members\":[]}"), -EBADMSG);
        EXPECT_EQ(parse(HEAD "\"namespaces\":[" NS(10, 0) "],\"listeners\":[],\"members\":[]}"), -EBADMSG);
        /* A listener of an unknown namespace, a member of an unknown listener. */
        EXPECT_EQ(parse(HEAD "\"namespaces\":[" NS(2, 0) "],\"listeners\":[{\"serial\":1,\"ns\":3,\"root_pid\":1}],"
                                                         "\"members\":[]}"),
                  -EBADMSG);
        EXPECT_EQ(parse(HEAD "\"namespaces\":[" NS(
                          2, 0) "],\"listeners\":[{\"serial\":1,\"ns\":2,\"root_pid\":1}],"
                                "\"members\":[{\"listener\":2,\"ns\":2,\"tgid\":5,\"start_time\":1}]}"),
                  -EBADMSG);
        EXPECT_EQ(parse(HEAD "\"namespaces\":[" NS(2, 0) "],\"listeners\":[{\"serial\":1,\"ns\":2,\"root_pid\":-1}],"
                                                         "\"members\":[]}"),
                  -EBADMSG);
        /* kernel_nested: a boolean when present; absent in older records. */
        EXPECT_EQ(parse(HEAD "\"namespaces\":[" NS(2, 0) "],\"listeners\":[{\"serial\":1,\"ns\":2,\"root_pid\":1,"
                                                         "\"kernel_nested\":1}],\"members\":[]}"),
                  -EBADMSG);
        EXPECT_EQ(parse(HEAD "\"namespaces\":[" NS(2, 0) "],\"listeners\":[{\"serial\":1,\"ns\":2,\"root_pid\":1}],"
                                                         "\"members\":[]}"),
                  0);
}

TEST(state_fd_names) {
        uint64_t a, b, c;

        EXPECT_EQ(tns_state_fd_kind("ns.12", &a, &b, &c), 'n');
        EXPECT_EQ(a, 12u);
        EXPECT_EQ(tns_state_fd_kind("l.0", &a, &b, &c), 'l');
        EXPECT_EQ(a, 0u);
        EXPECT_EQ(tns_state_fd_kind("p.3.1.7", &a, &b, &c), 'p');
        EXPECT_EQ(a, 3u);
        EXPECT_EQ(b, 1u);
        EXPECT_EQ(c, 7u);
        EXPECT_EQ(tns_state_fd_kind("control", &a, &b, &c), 0);
        EXPECT_EQ(tns_state_fd_kind("ns.", &a, &b, &c), 0);
        EXPECT_EQ(tns_state_fd_kind("ns.1x", &a, &b, &c), 0);
        EXPECT_EQ(tns_state_fd_kind("ns.01", &a, &b, &c), 0);
        EXPECT_EQ(tns_state_fd_kind("p.3.1", &a, &b, &c), 0);
        EXPECT_EQ(tns_state_fd_kind("l.99999999999999999999999", &a, &b, &c), 0);
}
