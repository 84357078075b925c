/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A member that makes timensd's lookups of its mappings expensive: it maps
 * NMAPS separate areas (each its own line of /proc/PID/maps), then for
 * SECONDS calls in a loop what made timensd read those lines: from NPROC
 * forked children, arch_prctl(ARCH_SET_FS) (the first-call check), and
 * from a thread (not its group's leader) the raw clock_gettime syscall
 * (the namespace of a caller once a process of its tree moved: run it
 * under unshare -T). Prints its calls: timensd must answer others
 * meanwhile as fast as ever (tests/bats/security-memory.bats).
 *
 * With "churn", each of the NPROC loops forks children instead, each of
 * which makes one arch_prctl and one clock_gettime and exits: a new
 * process each time, which timensd has not read yet.
 *
 * Usage: maps-flood NMAPS NPROC SECONDS [churn]
 *        maps-flood victim SECONDS   (another namespace's caller: the mean
 *                                     and longest raw clock_gettime, us) */
#include <asm/prctl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long seconds;

static long loop_until(long end, int what) {
        unsigned long fs = 0;
        struct timespec ts;
        long n = 0;

        (void) syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
        while (syscall(SYS_time, NULL) < end) {
                if (what == 0)
                        (void) syscall(SYS_arch_prctl, ARCH_SET_FS, fs);
                else
                        (void) syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
                n++;
        }
        return n;
}

static void *thread_main(void *arg) {
        long n = loop_until(*(long *) arg, 1);

        printf("thread clock_gettime calls %ld\n", n);
        return NULL;
}

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static int victim(long secs) {
        uint64_t start = now_ns(), total = 0, longest = 0, n = 0;

        while (now_ns() - start < (uint64_t) secs * 1000000000u) {
                struct timespec ts;
                uint64_t t0 = now_ns(), d;

                if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) < 0) {
                        perror("clock_gettime");
                        return 1;
                }
                d = now_ns() - t0;
                total += d;
                longest = d > longest ? d : longest;
                n++;
                usleep(200);
        }
        printf("victim mean_us %" PRIu64 " max_us %" PRIu64 " calls %" PRIu64 "\n", total / (n ?: 1) / 1000,
               longest / 1000, n);
        return 0;
}

int main(int argc, char **argv) {
        long nmaps, nproc, end;
        pthread_t t;
        char *base;

        if (argc == 3 && strcmp(argv[1], "victim") == 0)
                return victim(atol(argv[2]));
        if (argc != 4 && !(argc == 5 && strcmp(argv[4], "churn") == 0)) {
                fprintf(stderr, "Usage: %s NMAPS NPROC SECONDS [churn]\n", argv[0]);
                return 2;
        }
        nmaps = atol(argv[1]), nproc = atol(argv[2]), seconds = atol(argv[3]);
        base = mmap(NULL, (size_t) nmaps * 2 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED) {
                perror("mmap");
                return 1;
        }
        /* Every other page readable: no two neighbours merge. */
        for (long i = 0; i < nmaps; i++)
                if (mprotect(base + (size_t) i * 2 * 4096, 4096, PROT_READ) < 0) {
                        perror("mprotect");
                        return 1;
                }
        setvbuf(stdout, NULL, _IOLBF, 0);
        end = syscall(SYS_time, NULL) + seconds;
        if (argc == 5) {
                for (long p = 0; p < nproc; p++)
                        if (fork() == 0) {
                                long n = 0;

                                while (syscall(SYS_time, NULL) < end) {
                                        pid_t c = fork();

                                        if (c == 0) {
                                                unsigned long fs = 0;
                                                struct timespec ts;

                                                (void) syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
                                                (void) syscall(SYS_arch_prctl, ARCH_SET_FS, fs);
                                                (void) syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
                                                _exit(0);
                                        }
                                        if (c > 0)
                                                (void) waitpid(c, NULL, 0);
                                        n++;
                                }
                                printf("churn children %ld\n", n);
                                _exit(0);
                        }
                while (wait(NULL) > 0)
                        ;
                return 0;
        }
        for (long p = 0; p < nproc; p++)
                if (fork() == 0) {
                        printf("child arch_prctl calls %ld\n", loop_until(end, 0));
                        _exit(0);
                }
        if (pthread_create(&t, NULL, thread_main, &end) != 0)
                return 1;
        pthread_join(t, NULL);
        while (wait(NULL) > 0)
                ;
        return 0;
}
