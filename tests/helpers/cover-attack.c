/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A namespace member that points timensd at a file of its: one of its
 * /proc covers, which timensd itself serves (helper-43, F1: a FUSE request
 * from timensd would wait for timensd), or a file of a FUSE server of its
 * own (F2, under tests/helpers/fuse-stall.c): each way makes timensd touch
 * the file (tests/bats/security-fuse.bats).
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
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "timens-proto.h"

/* A hello request to timensd's control socket at path, fd with it (the
 * client library's call, as timensctl makes it): 1 if answered. */
static long send_hello(const char *path, int fd) {
        struct tns_request req = {.op = TNS_OP_HELLO};
        struct tns_client *c = NULL;
        json_object *result = NULL;
        struct tns_proto_error e;
        int r;

        r = tns_client_connect(path, &c);
        if (r >= 0)
                r = tns_client_call(c, &req, &fd, 1, &result, &e);
        json_object_put(result);
        tns_client_free(c);
        if (r < 0)
                errno = -r;
        return r < 0 ? -1 : 1;
}

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
                r = send_hello(argv[3], fd);
        } else
                return 2;
        e = r < 0 ? errno : 0;
        printf("%s result=%ld errno=%d\n", argv[1], r, e);
        return 0;
}
