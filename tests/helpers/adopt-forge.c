/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* adopt-forge SOCKET TARGET [NAME]: an attacker of timensd's control
 * socket (tests/bats/security-sockets.bats). It makes a seccomp listener
 * of its own (a filter that traps a syscall it never makes), then asks
 * timensd to adopt it for process TARGET: the listener with a pidfd of
 * TARGET, which anyone may open for any pid. With NAME, it joins that
 * namespace instead of making one. Prints timensd's reply line; exits 0
 * if it was a result, 1 if an error, 2 if it could not ask. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static int make_listener(void) {
        struct sock_filter code[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_vhangup, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -1;
        return (int) syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

int main(int argc, char *argv[]) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        int fds[2], s, n;
        char line[512], reply[4096];
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(fds))];
        } control = {};
        struct iovec iov;
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)};
        ssize_t k;

        if (argc < 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "usage: adopt-forge SOCKET TARGET [NAME]\n");
                return 2;
        }
        strcpy(sa.sun_path, argv[1]);
        fds[1] = (int) syscall(SYS_pidfd_open, atoi(argv[2]), 0);
        fds[0] = make_listener();
        if (fds[0] < 0 || fds[1] < 0) {
                perror("adopt-forge: listener or pidfd");
                return 2;
        }
        if (argc > 3)
                n = snprintf(line, sizeof(line),
                             "{\"version\":1,\"id\":1,\"op\":\"adopt\",\"params\":{\"name\":\"%s\",\"join\":true}}\n",
                             argv[3]);
        else
                n = snprintf(line, sizeof(line),
                             "{\"version\":1,\"id\":1,\"op\":\"adopt\",\"params\":{\"name\":\"forged%d\"}}\n",
                             (int) getpid());
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0 || connect(s, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                perror("adopt-forge: connect");
                return 2;
        }
        iov = (struct iovec){line, (size_t) n};
        control.h.cmsg_level = SOL_SOCKET;
        control.h.cmsg_type = SCM_RIGHTS;
        control.h.cmsg_len = CMSG_LEN(sizeof(fds));
        memcpy(CMSG_DATA(&control.h), fds, sizeof(fds));
        if (sendmsg(s, &mh, MSG_NOSIGNAL) != n) {
                perror("adopt-forge: sendmsg");
                return 2;
        }
        k = read(s, reply, sizeof(reply) - 1);
        if (k <= 0) {
                fprintf(stderr, "adopt-forge: no reply\n");
                return 2;
        }
        reply[k] = '\0';
        fputs(reply, stdout);
        return strstr(reply, "\"error\"") ? 1 : 0;
}
