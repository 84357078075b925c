/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-pass.h"
#include "test.h"
#include "util.h"

static unsigned count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        if (!d)
                return 0;
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

/* Sends n copies of fd with one byte, in one message. */
static int send_fds(int sock, int fd, unsigned n) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 8)];
        } control = {};
        int fds[8];
        char byte = 'x';
        struct iovec iov = {&byte, 1};
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = &control,
                            .msg_controllen = CMSG_SPACE(sizeof(int) * n)};

        for (unsigned i = 0; i < n; i++)
                fds[i] = fd;
        control.h.cmsg_level = SOL_SOCKET;
        control.h.cmsg_type = SCM_RIGHTS;
        control.h.cmsg_len = CMSG_LEN(sizeof(int) * n);
        memcpy(CMSG_DATA(&control.h), fds, sizeof(int) * n);
        return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

/* Receives one message and takes at most max of its fds into fds[n..]. */
static unsigned recv_take(int sock, int fds[], unsigned n, unsigned max) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 8)];
        } control;
        char byte;
        struct iovec iov = {&byte, 1};
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)};

        if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
                return UINT32_MAX;
        return tns_cmsg_take_fds(&mh, fds, n, max);
}

TEST(one_fd_round_trip) {
        int sv[2], fd;
        struct stat a, b;

        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        ASSERT_EQ(tns_send_fd(sv[0], STDERR_FILENO), 0);
        fd = tns_recv_fd(sv[1]);
        ASSERT_GE(fd, 0);
        EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        ASSERT_EQ(fstat(fd, &a), 0);
        ASSERT_EQ(fstat(STDERR_FILENO, &b), 0);
        EXPECT_TRUE(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
        close(fd);
        /* A byte without an fd is not a handed listener. */
        ASSERT_EQ(write(sv[0], "x", 1), 1);
        EXPECT_EQ(tns_recv_fd(sv[1]), -EBADMSG);
        close(sv[0]);
        close(sv[1]);
}

/* fds up to max are kept, in order after those already held; the rest
 * are closed here, not leaked. */
TEST(take_fds_keeps_up_to_max) {
        int sv[2], fds[4] = {-EBADF, -EBADF, -EBADF, -EBADF};
        unsigned before, n;

        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        before = count_fds();
        ASSERT_EQ(send_fds(sv[0], STDERR_FILENO, 2), 0);
        n = recv_take(sv[1], fds, 0, 3);
        ASSERT_EQ(n, 2U);
        ASSERT_EQ(send_fds(sv[0], STDERR_FILENO, 5), 0);
        n = recv_take(sv[1], fds, n, 3);
        ASSERT_EQ(n, 3U);
        for (unsigned i = 0; i < n; i++)
                EXPECT_TRUE(fcntl(fds[i], F_GETFD) & FD_CLOEXEC);
        EXPECT_EQ(count_fds(), before + 3);
        for (unsigned i = 0; i < n; i++)
                close(fds[i]);
        EXPECT_EQ(count_fds(), before);
        /* A message without fds takes none. */
        ASSERT_EQ(write(sv[0], "x", 1), 1);
        EXPECT_EQ(recv_take(sv[1], fds, 0, 3), 0U);
        close(sv[0]);
        close(sv[1]);
}
