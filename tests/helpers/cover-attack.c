/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A namespace member that points timensd at the member's own /proc
 * covers, which timensd itself serves (tests/bats/security-fuse.bats;
 * helper-43, F1): each way makes timensd touch the file, where a FUSE
 * request from timensd would wait for timensd.
 *
 *   cover-attack mmap FILE     FILE mapped MAP_PRIVATE, its first page
 *                              given as the deadline of an absolute
 *                              clock_nanosleep(CLOCK_REALTIME): timensd
 *                              reads the member's memory there
 *   cover-attack setns FILE    setns(fd of FILE, 0): timensd takes the fd
 *                              to see what it is
 *   cover-attack timerfd FILE  timerfd_settime(fd of FILE, ABSTIME, ...):
 *                              timensd takes the fd to see its clock
 *   cover-attack send FILE SOCKET
 *                              an fd of FILE sent with a hello request to
 *                              timensd's control socket
 *
 * Each opens FILE afresh and never closes it first (the kernel asks a
 * FUSE server for FLUSH once per connection, on its first close). Prints
 * "MODE result=R errno=E" and exits 0 once the call came back. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        long r = -1;
        int fd, e;

        if (argc < 3)
                return 2;
        fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                perror(argv[2]);
                return 2;
        }
        if (strcmp(argv[1], "mmap") == 0) {
                void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);

                if (p == MAP_FAILED) {
                        perror("mmap");
                        return 2;
                }
                r = syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, p, NULL);
        } else if (strcmp(argv[1], "setns") == 0) {
                r = syscall(SYS_setns, fd, 0);
        } else if (strcmp(argv[1], "timerfd") == 0) {
                struct itimerspec its = {.it_value = {1, 0}};

                r = syscall(SYS_timerfd_settime, fd, TFD_TIMER_ABSTIME, &its, NULL);
        } else if (strcmp(argv[1], "send") == 0 && argc == 4) {
                static const char hello[] = "{\"version\":1,\"id\":1,\"op\":\"hello\"}\n";
                struct sockaddr_un sa = {.sun_family = AF_UNIX};
                char cbuf[CMSG_SPACE(sizeof(int))] = {0}, reply[512];
                struct iovec iov = {(void *) hello, sizeof(hello) - 1};
                struct msghdr m = {
                        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
                struct cmsghdr *c = CMSG_FIRSTHDR(&m);
                int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[3]);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
                if (s < 0 || connect(s, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                        perror("connect");
                        return 2;
                }
                r = sendmsg(s, &m, 0);
                if (r >= 0)
                        r = read(s, reply, sizeof(reply));
        } else
                return 2;
        e = r < 0 ? errno : 0;
        printf("%s result=%ld errno=%d\n", argv[1], r, e);
        return 0;
}
