/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/core/fd-link.c: what an fd is, from its /proc link. */
#include "fd-link.h"
#include "test.h"

TEST(kinds) {
        EXPECT_EQ(tns_fd_kind_parse("anon_inode:[pidfd]"), TNS_FD_PIDFD);
        EXPECT_EQ(tns_fd_kind_parse("anon_inode:[timerfd]"), TNS_FD_TIMERFD);
        EXPECT_EQ(tns_fd_kind_parse("anon_inode:seccomp notify"), TNS_FD_SECCOMP);
        EXPECT_EQ(tns_fd_kind_parse("time:[4026531834]"), TNS_FD_NS);
        EXPECT_EQ(tns_fd_kind_parse("mnt:[4026531841]"), TNS_FD_NS);
        EXPECT_EQ(tns_fd_kind_parse("pid_for_children:[4026531836]"), TNS_FD_NS);
        EXPECT_EQ(tns_fd_kind_parse("user:[1]"), TNS_FD_NS);
}

/* Files, whatever their names, sockets, pipes, other anon inodes. */
TEST(others) {
        static const char *const other[] = {
                "/proc/uptime",
                "/tmp/time:[1]",
                "time:[1] (deleted)",
                "time:[]",
                "time:[12a]",
                "time:[1]]",
                "times:[1]",
                "socket:[12345]",
                "pipe:[12345]",
                "anon_inode:[eventfd]",
                "anon_inode:[pidfd",
                "anon_inode:seccomp",
                "",
                ":[1]",
                "time:",
                "/memfd:timens (deleted)",
        };

        for (unsigned i = 0; i < sizeof(other) / sizeof(other[0]); i++)
                EXPECT_EQ(tns_fd_kind_parse(other[i]), TNS_FD_OTHER);
}
