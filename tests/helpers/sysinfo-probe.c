/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Prints sysinfo()'s uptime ("uptime N"), or with --fault the errno of a
 * call with a bad pointer ("fault ERRNO"), for tests/bats/procfs.bats. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        struct sysinfo si;

        if (argc > 1 && strcmp(argv[1], "--fault") == 0) {
                long r = syscall(SYS_sysinfo, (void *) 8);

                printf("fault %s\n", r < 0 ? strerrorname_np(errno) : "none");
                return 0;
        }
        if (sysinfo(&si) < 0) {
                perror("sysinfo");
                return 1;
        }
        printf("uptime %ld\n", si.uptime);
        return 0;
}
