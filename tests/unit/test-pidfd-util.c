/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "test.h"
#include "util.h"

/* A child that waits on a pipe, and its grandchild. */
static pid_t spawn_waiting(int fds[2]) {
        pid_t pid = fork();
        char c;

        if (pid == 0) {
                close(fds[1]);
                (void) !read(fds[0], &c, 1);
                _exit(0);
        }
        return pid;
}

TEST(info_of_self) {
        _cleanup_close_ int fd = tns_pidfd_open(getpid());
        struct tns_pidfd_info info;

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(tns_pidfd_get_info(fd, &info), 0);
        EXPECT_EQ(info.pid, getpid());
        EXPECT_EQ(info.ppid, getppid());
        EXPECT_EQ(info.euid, geteuid());
        EXPECT_TRUE(tns_pidfd_info_owned_by(&info, getuid(), getgid()) == (getuid() == geteuid()));
        EXPECT_TRUE(!tns_pidfd_info_owned_by(&info, getuid() + 1, getgid()));
        EXPECT_TRUE(tns_pidfd_alive(fd));
        EXPECT_EQ(tns_pidfd_open(0), -ESRCH);
}

TEST(descendants_and_death) {
        int fds[2];
        _cleanup_close_ int child_fd = -EBADF, self = tns_pidfd_open(getpid());
        pid_t child;

        ASSERT_EQ(pipe(fds), 0);
        child = spawn_waiting(fds);
        ASSERT_TRUE(child > 0);
        child_fd = tns_pidfd_open(child);
        ASSERT_TRUE(child_fd >= 0);
        EXPECT_EQ(tns_pidfd_is_descendant(child_fd, getpid()), 1);
        EXPECT_EQ(tns_pidfd_is_descendant(child_fd, child), 0); /* not itself */
        EXPECT_EQ(tns_pidfd_is_descendant(self, child), 0); /* not the other way */
        EXPECT_TRUE(tns_pidfd_is_thread(getpid()));
        EXPECT_TRUE(!tns_pidfd_is_thread(1 << 30));
        close(fds[1]);
        close(fds[0]);
        /* A zombie (exited, not yet reaped) is gone already: its children
         * are the reaper's, though signal 0 would still reach it. */
        {
                siginfo_t si = {};

                ASSERT_EQ(waitid(P_PID, (id_t) child, &si, WEXITED | WNOWAIT), 0);
                EXPECT_TRUE(!tns_pidfd_alive(child_fd));
        }
        ASSERT_EQ(waitpid(child, NULL, 0), child);
        /* Gone: no answer can stand for it any more. */
        EXPECT_TRUE(!tns_pidfd_alive(child_fd));
        EXPECT_TRUE(tns_pidfd_is_descendant(child_fd, getpid()) < 0);
}

TEST(mount_namespace) {
        _cleanup_close_ int fd = tns_pidfd_open(getpid()), a = -EBADF, b = -EBADF;
        uid_t owner = 1;

        ASSERT_TRUE(fd >= 0);
        a = tns_pidfd_mnt_ns(fd);
        b = tns_pidfd_mnt_ns(fd);
        ASSERT_TRUE(a >= 0 && b >= 0);
        EXPECT_EQ(tns_ns_fd_same(a, b), 1);
        /* Ours is the host's in the test environment, or one of a user
         * namespace of some uid: either way the call answers. */
        EXPECT_EQ(tns_ns_fd_owner_uid(a, &owner), 0);
}

TEST(time_namespace) {
        int fds[2];
        _cleanup_close_ int fd = tns_pidfd_open(getpid()), own = -EBADF, a = -EBADF, b = -EBADF, other = -EBADF;
        pid_t child;

        ASSERT_TRUE(fd >= 0);
        own = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
        if (own < 0) {
                /* A kernel without CONFIG_TIME_NS has no such file. */
                EXPECT_TRUE(tns_pidfd_time_ns(fd) < 0);
                return;
        }
        a = tns_pidfd_time_ns(fd);
        ASSERT_TRUE(a >= 0);
        EXPECT_EQ(tns_ns_fd_same(a, own), 1);
        /* Another process's, and not after it is gone. */
        ASSERT_EQ(pipe(fds), 0);
        child = spawn_waiting(fds);
        ASSERT_TRUE(child > 0);
        other = tns_pidfd_open(child);
        ASSERT_TRUE(other >= 0);
        b = tns_pidfd_time_ns(other);
        ASSERT_TRUE(b >= 0);
        EXPECT_EQ(tns_ns_fd_same(a, b), 1);
        close(fds[1]);
        close(fds[0]);
        ASSERT_EQ(waitpid(child, NULL, 0), child);
        EXPECT_TRUE(tns_pidfd_time_ns(other) < 0);
}
