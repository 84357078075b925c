/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whose processes an attach may take (lib/kernel/attach-creds.h): the rule as a
 * table, and the parser of /proc/PID/status's lines it reads. Reading a
 * live task's credentials is tests/bats/security-attach.bats's part. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "attach-creds.h"
#include "test.h"

#define U 1000
#define G 1000

/* uid, gid: real, effective, saved, fs; then /proc/PID/status's owner,
 * CapPrm, the user namespace. */
#define CREDS(u0, u1, u2, u3, g0, g1, g2, g3, du, dg, cap, ns)                                                         \
        {                                                                                                              \
                .uid = {u0, u1, u2, u3}, .gid = {g0, g1, g2, g3}, .dump_uid = du, .dump_gid = dg, .cap_prm = cap,      \
                .userns = ns                                                                                           \
        }

static const struct {
        const char *what;
        struct tns_task_creds c;
        const char *denied; /* a word of the reason; NULL: allowed */
} cases[] = {
        {"its own sleep", CREDS(U, U, U, U, G, G, G, G, U, G, 0, TNS_USERNS_OURS), NULL},
        {"setuid root", CREDS(U, 0, 0, 0, G, G, G, G, 0, G, 0x1ffffffffffULL, TNS_USERNS_OURS), "another user"},
        {"only the saved uid differs (seteuid back)", CREDS(U, U, 0, U, G, G, G, G, U, G, 0, TNS_USERNS_OURS),
         "another user"},
        {"only the fs uid differs", CREDS(U, U, U, 0, G, G, G, G, U, G, 0, TNS_USERNS_OURS), "another user"},
        {"another user's", CREDS(7, 7, 7, 7, G, G, G, G, 7, G, 0, TNS_USERNS_OURS), "another user"},
        {"setgid", CREDS(U, U, U, U, G, 5, 5, 5, U, G, 0, TNS_USERNS_OURS), "another group"},
        {"only the real gid differs", CREDS(U, U, U, U, 5, G, G, G, U, G, 0, TNS_USERNS_OURS), "another group"},
        {"not dumpable: /proc's files root's", CREDS(U, U, U, U, G, G, G, G, 0, 0, 0, TNS_USERNS_OURS), "not dumpable"},
        {"an ambient capability", CREDS(U, U, U, U, G, G, G, G, U, G, 1ULL << 25, TNS_USERNS_OURS), "capabilities"},
        {"capabilities in another's user namespace", CREDS(U, U, U, U, G, G, G, G, U, G, ~0ULL, TNS_USERNS_OTHER),
         "capabilities"},
        {"capabilities in a user namespace it owns (rootless container)",
         CREDS(U, U, U, U, G, G, G, G, U, G, ~0ULL, TNS_USERNS_OWNED), NULL},
};

TEST(denied_table) {
        const struct tns_attach_owner owner = {U, G};

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *why = tns_attach_denied(&cases[i].c, &owner);
                bool ok = cases[i].denied ? why && strstr(why, cases[i].denied) : !why;

                if (!ok)
                        printf("# %s: got %s\n", cases[i].what, why ?: "allowed");
                EXPECT_TRUE(ok);
        }
}

TEST(parse_status) {
        const char *text = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t42\n"
                           "Uid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\nGroups:\t1000 27\n"
                           "CapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\n";
        struct tns_task_creds c = {.dump_uid = 7};

        ASSERT_EQ(tns_task_creds_parse(text, &c), 0);
        EXPECT_EQ(c.uid[0], 1000U);
        EXPECT_EQ(c.uid[1], 0U);
        EXPECT_EQ(c.uid[3], 0U);
        EXPECT_EQ(c.gid[2], 1000U);
        EXPECT_EQ(c.cap_prm, 0x1ffffffffffULL);
        EXPECT_EQ(c.dump_uid, 7U); /* not the parser's */
}

TEST(parse_status_missing_line) {
        struct tns_task_creds c = {};

        EXPECT_EQ(tns_task_creds_parse("Uid:\t1 1 1 1\nGid:\t1 1 1 1\n", &c), -EBADMSG);
        EXPECT_EQ(tns_task_creds_parse("Uid:\t1 1 1\nGid:\t1 1 1 1\nCapPrm:\t0\n", &c), -EBADMSG);
        EXPECT_EQ(c.uid[0], 0U); /* untouched on error */
}
