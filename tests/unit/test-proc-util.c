/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <unistd.h>

#include "proc-util.h"
#include "test.h"

TEST(parse_status_text) {
        struct tns_proc_status st;

        ASSERT_EQ(tns_proc_status_parse("Name:\tx\nTgid:\t42\nPid:\t43\nPPid:\t1\nCapEff:\t0000000002000000\n", &st),
                  0);
        EXPECT_EQ(st.tgid, 42);
        EXPECT_EQ(st.ppid, 1);
        EXPECT_EQ(st.cap_eff, 1ULL << 25);
        EXPECT_EQ(tns_proc_status_parse("Tgid:\t42\nPPid:\t1\n", &st), -EBADMSG);
        EXPECT_EQ(tns_proc_status_parse("", &st), -EBADMSG);
        EXPECT_EQ(tns_proc_status_parse("Tgid:x\nPPid:\t1\nCapEff:\t0\n", &st), -EBADMSG);
}

TEST(status_of_self_and_gone) {
        struct tns_proc_status st;

        ASSERT_EQ(tns_proc_status(getpid(), &st), 0);
        EXPECT_EQ(st.tgid, getpid());
        EXPECT_EQ(st.ppid, getppid());
        EXPECT_EQ(tns_proc_status(0x3fffffff, &st), -ESRCH);
}

static int count(pid_t child, void *userdata) {
        (*(int *) userdata)++;
        return 0;
}

TEST(children_of_self) {
        int n = 0, fds[2];
        pid_t pid;

        ASSERT_EQ(pipe(fds), 0);
        pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
                char c;
                close(fds[1]);
                (void) !read(fds[0], &c, 1);
                _exit(0);
        }
        close(fds[0]);
        EXPECT_EQ(tns_proc_for_each_child(getpid(), count, &n), 0);
        EXPECT_EQ(n, 1);
        close(fds[1]);
        EXPECT_EQ(tns_proc_for_each_child(0x3fffffff, count, &n), -ESRCH);
}

TEST(start_time_of_self) {
        uint64_t t, ticks;
        FILE *f = fopen("/proc/self/stat", "re");
        char buf[1024], *p;

        ASSERT_TRUE(f != NULL);
        ASSERT_TRUE(fgets(buf, sizeof(buf), f) != NULL);
        fclose(f);
        p = strrchr(buf, ')');
        for (int i = 0; i < 20; i++)
                p = strchr(p + 1, ' ');
        ticks = strtoull(p + 1, NULL, 10);
        ASSERT_EQ(tns_proc_start_time(getpid(), &t), 0);
        EXPECT_EQ(t, ticks);
        EXPECT_EQ(tns_proc_start_time(1 << 30, &t), -ESRCH);
}
