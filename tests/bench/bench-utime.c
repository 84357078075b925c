/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-utime: the cost of setting a file's times, for
 * tests/bench/file-times.sh.
 *
 *     bench-utime KIND FILE [-n ITERATIONS]
 *
 * KIND: now (utimensat(fd, NULL, NULL, 0): futimens, touch; held under a
 * shifted realtime), explicit (fixed times: tar, cp -p; decided on a
 * receive thread). Prints
 *
 *     utime KIND P50_NS P99_NS ITERATIONS */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

int main(int argc, char **argv) {
        static const struct timespec fixed[2] = {{1000, 0}, {2000, 0}};
        const struct timespec *times;
        long n = 2000;
        int64_t *t;
        int fd;

        if (argc == 5 && strcmp(argv[3], "-n") == 0)
                n = strtol(argv[4], NULL, 10);
        else if (argc != 3) {
                fprintf(stderr, "Usage: bench-utime now|explicit FILE [-n ITERATIONS]\n");
                return 2;
        }
        if (strcmp(argv[1], "now") == 0)
                times = NULL;
        else if (strcmp(argv[1], "explicit") == 0)
                times = fixed;
        else {
                fprintf(stderr, "bench-utime: KIND is now or explicit, not '%s'\n", argv[1]);
                return 2;
        }
        if (n < 10 || n > 10000000) {
                fprintf(stderr, "bench-utime: ITERATIONS must be 10..10000000\n");
                return 2;
        }
        fd = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        t = calloc((size_t) n, sizeof(*t));
        if (fd < 0 || !t) {
                perror(argv[2]);
                return 1;
        }
        for (long i = 0; i < n; i++) {
                int64_t start = bench_now_ns();

                /* The raw call: libc's futimens is this one. */
                if (syscall(SYS_utimensat, fd, NULL, times, 0) < 0) {
                        perror("utimensat");
                        return 1;
                }
                t[i] = bench_now_ns() - start;
        }
        qsort(t, (size_t) n, sizeof(*t), bench_cmp_int64);
        printf("utime %s %lld %lld %ld\n", argv[1], (long long) t[n / 2], (long long) t[n * 99 / 100], n);
        free(t);
        close(fd);
        return 0;
}
