/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-procfs: what an open+read+close of a /proc file costs, for
 * tests/bench/procfs.sh.
 *
 *     bench-procfs PATH [-n ITERATIONS]
 *
 * Reads the file whole each time (as `cat` and procps do) and prints
 *
 *     read PATH P50_NS P99_NS ITERATIONS
 *
 * The interesting pairs: /proc/uptime (covered by our FUSE mount under
 * timensctl run) and /proc/loadavg (not covered: must cost what it costs
 * on the host, the proof that programs that never open the covered files
 * pay nothing). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

int main(int argc, char **argv) {
        long n = 2000;
        int64_t *t;
        char buf[4096];

        if (argc == 4 && strcmp(argv[2], "-n") == 0)
                n = strtol(argv[3], NULL, 10);
        else if (argc != 2) {
                fprintf(stderr, "Usage: bench-procfs PATH [-n ITERATIONS]\n");
                return 2;
        }
        if (n < 10 || n > 10000000) {
                fprintf(stderr, "bench-procfs: ITERATIONS must be 10..10000000\n");
                return 2;
        }
        t = calloc((size_t) n, sizeof(*t));
        if (!t)
                return 1;
        for (long i = 0; i < n; i++) {
                int64_t start = bench_now_ns();
                int fd = open(argv[1], O_RDONLY | O_CLOEXEC);

                if (fd < 0) {
                        perror(argv[1]);
                        return 1;
                }
                while (read(fd, buf, sizeof(buf)) > 0)
                        ;
                close(fd);
                t[i] = bench_now_ns() - start;
        }
        qsort(t, (size_t) n, sizeof(*t), bench_cmp_int64);
        printf("read %s %lld %lld %ld\n", argv[1], (long long) t[n / 2], (long long) t[n * 99 / 100], n);
        free(t);
        return 0;
}
