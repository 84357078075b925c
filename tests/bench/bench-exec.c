/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fork + exec + exit of a program, N times: what a namespace's vDSO
 * injection adds to every exec. Prints "bench exec NS_PER_EXEC N". */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
        struct timespec ts;

        /* Differences only: a shifted monotonic clock measures the same. */
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char *argv[]) {
        const char *prog = argc > 2 ? argv[2] : "/bin/true";
        int n = argc > 1 ? atoi(argv[1]) : 300;
        long long start;

        if (n <= 0)
                return 2;
        start = now_ns();
        for (int i = 0; i < n; i++) {
                pid_t pid = fork();
                int status;

                if (pid < 0)
                        return 1;
                if (pid == 0) {
                        execl(prog, prog, (char *) NULL);
                        _exit(127);
                }
                if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        return 1;
        }
        printf("bench exec %lld %d\n", (now_ns() - start) / n, n);
        return 0;
}
