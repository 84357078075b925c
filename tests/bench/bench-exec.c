/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fork + exec + exit of a program, N times: what a namespace's vDSO
 * injection adds to every exec. A PROG without a slash is looked up in
 * $PATH (execlp(), as a shell or env does: every directory before the
 * one that has it is a failed exec). Prints "bench exec NS_PER_EXEC N", then
 * "cpu exec NS_PER_EXEC N": the CPU time of this process and its
 * children per exec, which a loaded machine's waits for a CPU do not
 * inflate (a supervisor's own CPU time is not in it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
        struct timespec ts;

        /* Differences only: a shifted monotonic clock measures the same. */
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long tv_ns(struct timeval tv) {
        return tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
}

static long long cpu_ns(void) {
        struct rusage self, children;

        getrusage(RUSAGE_SELF, &self);
        getrusage(RUSAGE_CHILDREN, &children);
        return tv_ns(self.ru_utime) + tv_ns(self.ru_stime) + tv_ns(children.ru_utime) + tv_ns(children.ru_stime);
}

int main(int argc, char *argv[]) {
        const char *prog = argc > 2 ? argv[2] : "/bin/true";
        int n = argc > 1 ? atoi(argv[1]) : 300;
        long long start, cpu;

        if (n <= 0)
                return 2;
        start = now_ns();
        cpu = cpu_ns();
        for (int i = 0; i < n; i++) {
                pid_t pid = fork();
                int status;

                if (pid < 0)
                        return 1;
                if (pid == 0) {
                        if (strchr(prog, '/'))
                                execl(prog, prog, (char *) NULL);
                        else
                                execlp(prog, prog, (char *) NULL);
                        _exit(127);
                }
                if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        return 1;
        }
        printf("bench exec %lld %d\n", (now_ns() - start) / n, n);
        printf("cpu exec %lld %d\n", (cpu_ns() - cpu) / n, n);
        return 0;
}
