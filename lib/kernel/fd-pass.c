/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "fd-pass.h"
#include "util.h"

int tns_send_fd(int sock, int fd) {
        char cbuf[CMSG_SPACE(sizeof(int))] = {};
        char byte = 0;
        struct iovec iov = {&byte, 1};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        return sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? negative_errno() : 0;
}

int tns_recv_fd(int sock) {
        char cbuf[CMSG_SPACE(sizeof(int))] = {};
        char byte;
        struct iovec iov = {&byte, 1};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *c;
        ssize_t n;
        int fd;

        do
                n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        c = CMSG_FIRSTHDR(&msg);
        if (n == 0 || !c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
                return -EBADMSG;
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
        return fd;
}

unsigned tns_cmsg_take_fds(struct msghdr *mh, int fds[], unsigned n, unsigned max) {
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
                size_t k;

                if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
                        continue;
                k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int fd;

                        /* CMSG_DATA need not be aligned for an int. */
                        memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
                        if (n < max)
                                fds[n++] = fd;
                        else
                                safe_close(fd);
                }
        }
        return n;
}
