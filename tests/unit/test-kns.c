/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/kernel/kns.c on the real kernel: a task's time namespace, its
 * children's, and their offsets, read the two ways kns.c reads them. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kns.h"
#include "test.h"
#include "util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

TEST(ino_of_self_and_gone) {
        struct stat st;
        uint64_t ino, children;

        if (stat("/proc/self/ns/time", &st) < 0)
                SKIP("no time namespaces on this kernel");
        ASSERT_EQ(tns_kns_ino(getpid(), false, &ino), 0);
        EXPECT_EQ(ino, (uint64_t) st.st_ino);
        ASSERT_EQ(tns_kns_ino(getpid(), true, &children), 0);
        EXPECT_EQ(tns_kns_ino(0x3fffffff, false, &ino), -ESRCH);
        EXPECT_EQ(tns_kns_open(0x3fffffff, false), -ESRCH);
}

/* A child that unshares a time namespace, writes its offsets and reports
 * how kns.c sees it from outside: through timens_offsets while the child
 * is between its unshare and any entry (the file shows its children's
 * namespace, not its own: the helper path), and once the child entered
 * it by setns (the file path). Needs CAP_SYS_ADMIN: skipped without. */
TEST(offsets_of_a_namespace_and_its_parent) {
        int go[2], ready[2], nsfd, r;
        int64_t off[3] = {1, 1, 1};
        char c = 0;
        pid_t pid;

        ASSERT_EQ(pipe(go), 0);
        ASSERT_EQ(pipe(ready), 0);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int fd;

                if (unshare(CLONE_NEWTIME) < 0)
                        _exit(77);
                fd = open("/proc/self/timens_offsets", O_WRONLY);
                if (fd < 0 || write(fd, "monotonic 5 0\nboottime -7 250", 30) != 30)
                        _exit(1);
                (void) !write(ready[1], "1", 1);
                (void) !read(go[0], &c, 1);
                fd = open("/proc/self/ns/time_for_children", O_RDONLY);
                if (fd < 0 || setns(fd, CLONE_NEWTIME) < 0)
                        _exit(1);
                /* Its own now: what every clock it reads includes. */
                if (tns_kns_self_offsets(off) < 0 || off[0] != INT64_C(5000000000) ||
                    off[1] != INT64_C(-7000000000) + 250 || off[2] != 0)
                        _exit(3);
                (void) !write(ready[1], "2", 1);
                (void) !read(go[0], &c, 1);
                _exit(0);
        }
        close(go[0]);
        close(ready[1]);
        if (read(ready[0], &c, 1) != 1) {
                int status;

                (void) waitpid(pid, &status, 0);
                if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
                        SKIP("no CAP_SYS_ADMIN for unshare(CLONE_NEWTIME)");
                ASSERT_TRUE(false);
        }
        /* Its own namespace is still ours (offsets 0), its children's has
         * the offsets: the file shows the latter, the helper the former. */
        nsfd = tns_kns_open(pid, false);
        ASSERT_TRUE(nsfd >= 0);
        r = tns_kns_offsets(pid, nsfd, off);
        /* In a user namespace the helper may not enter ours (EPERM). */
        EXPECT_TRUE(r == 0 || r == -EPERM);
        if (r == 0) {
                EXPECT_EQ(off[0], 0);
                EXPECT_EQ(off[1], 0);
        }
        {
                int64_t children[3] = {};

                EXPECT_EQ(tns_kns_children_offsets(pid, children), 0);
                EXPECT_EQ(children[0], INT64_C(5000000000));
                EXPECT_EQ(children[1], INT64_C(-7000000000) + 250);
        }
        close(nsfd);
        (void) !write(go[1], "x", 1);
        ASSERT_EQ(read(ready[0], &c, 1), 1);
        nsfd = tns_kns_open(pid, false);
        ASSERT_TRUE(nsfd >= 0);
        EXPECT_EQ(tns_kns_offsets(pid, nsfd, off), 0);
        EXPECT_EQ(off[0], INT64_C(5000000000));
        EXPECT_EQ(off[1], INT64_C(-7000000000) + 250);
        EXPECT_EQ(off[2], 0);
        close(nsfd);
        (void) !write(go[1], "x", 1);
        {
                int status = 0;

                ASSERT_EQ(waitpid(pid, &status, 0), pid);
                EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        close(go[1]);
        close(ready[0]);
}
