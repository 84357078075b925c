/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-scale: timensd under many namespaces and processes, as
 * tests/bench/scale.sh runs it.
 *
 *   bench-scale worker DIR PROCS HZ SECONDS
 *        run inside a namespace (timensctl run): PROCS processes (this one
 *        and PROCS - 1 children) each make a trapped clock_gettime
 *        (the raw syscall, which the filter sends to timensd) HZ times a
 *        second for SECONDS, once DIR/go exists, and write the latency of
 *        every call as a histogram to DIR/h.PID. The calls of the first
 *        WARMUP_MS are made, not counted (the start: every process wakes
 *        at once); after the last, a process waits for DIR/stop, so that
 *        the ends of the first do not fall in the window of the others
 *        (the end of a namespace is work for timensd; scale.sh measures
 *        it apart, in create/destroy cycles).
 *   bench-scale bare DIR NS PROCS HZ SECONDS
 *        the same load with no timensd, the floor of the machine: NS
 *        processes each install a filter that sends clock_gettime to a
 *        listener of their own, fork PROCS workers as above, and answer
 *        their calls as the least a supervisor can (a thread blocked in
 *        RECV with SYNC_WAKE_UP, as timensd's receive threads; reply
 *        CONTINUE). scale.sh prints timensd's figures against it.
 *   bench-scale report DIR
 *        adds the histograms up: `info KEY VALUE` lines with the calls,
 *        p50, p99, p99.9 and the longest, in microseconds.
 *
 * A latency is read with the vDSO clock around the syscall: in the
 * namespace that is our image, whose readings differ from the kernel's
 * by a constant offset, so differences are the host's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bare-filter.h"
#include "filter.h"
#include "util.h"

/* Log-linear buckets: 16 per power of two, from 1 ns to 2^40 ns. */
#define SUB_BITS 4
#define N_BUCKETS (41 << SUB_BITS)

static unsigned bucket_of(uint64_t ns) {
        unsigned msb, sub;

        if (ns < (1U << SUB_BITS))
                return (unsigned) ns;
        msb = 63U - (unsigned) __builtin_clzll(ns);
        sub = (unsigned) (ns >> (msb - SUB_BITS)) & ((1U << SUB_BITS) - 1);
        return ((msb - SUB_BITS + 1) << SUB_BITS) + sub < N_BUCKETS ? ((msb - SUB_BITS + 1) << SUB_BITS) + sub
                                                                    : N_BUCKETS - 1;
}

/* The upper bound of a bucket, for the percentiles (an overestimate by at
 * most 1/16). */
static uint64_t bucket_top(unsigned b) {
        unsigned e = b >> SUB_BITS, sub = b & ((1U << SUB_BITS) - 1);

        if (e == 0)
                return b;
        return ((uint64_t) ((1U << SUB_BITS) + sub + 1)) << (e - 1);
}

static uint64_t mono_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000U + (uint64_t) ts.tv_nsec;
}

static void sleep_until(uint64_t deadline) {
        uint64_t now = mono_ns();
        struct timespec ts;

        /* Relative sleeps: an absolute one would be a trapped, converted
         * wait and measure the wait machinery, not clock reads. */
        if (now >= deadline)
                return;
        ts.tv_sec = (time_t) ((deadline - now) / 1000000000U);
        ts.tv_nsec = (long) ((deadline - now) % 1000000000U);
        (void) nanosleep(&ts, NULL);
}

#define WARMUP_MS 1000

/* Until DIR/NAME.fifo has a writer (scale.sh opens it), blocked in
 * open(), not polling: ten thousand processes that poll every 10 ms take
 * a whole CPU of this machine before the load starts (and inotify
 * instances are 128 per user). Without the FIFO: DIR/NAME, polled. */
static void wait_file(const char *dir, const char *name) {
        char path[4096];
        int fd;

        snprintf(path, sizeof(path), "%s/%s.fifo", dir, name);
        while ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR)
                ;
        if (fd >= 0) {
                close(fd);
                return;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        while (access(path, F_OK) < 0)
                usleep(50000);
}

static int run_worker(const char *dir, unsigned hz, unsigned seconds) {
        _cleanup_free_ uint32_t *hist = calloc(N_BUCKETS, sizeof(*hist));
        char path[4096];
        uint64_t period, next, end, counted;
        struct timespec ts;
        FILE *f;

        if (!hist)
                return -ENOMEM;
        wait_file(dir, "go");
        period = 1000000000U / hz;
        /* Spread the processes' ticks across the period. */
        next = mono_ns() + (uint64_t) (getpid() * 7919U) % period;
        counted = next + (uint64_t) WARMUP_MS * 1000000U;
        end = counted + (uint64_t) seconds * 1000000000U;
        while (next < end) {
                uint64_t a, b;

                sleep_until(next);
                a = mono_ns();
                if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) < 0)
                        return -errno;
                b = mono_ns();
                if (a >= counted)
                        hist[bucket_of(b - a)]++;
                next += period;
        }
        snprintf(path, sizeof(path), "%s/h.%d", dir, getpid());
        f = fopen(path, "we");
        if (!f)
                return -errno;
        if (fwrite(hist, sizeof(*hist), N_BUCKETS, f) != N_BUCKETS) {
                fclose(f);
                return -EIO;
        }
        if (fclose(f) != 0)
                return -errno;
        wait_file(dir, "stop");
        return 0;
}

static int worker(const char *dir, unsigned procs, unsigned hz, unsigned seconds) {
        int r, status, failed = 0;

        for (unsigned i = 1; i < procs; i++) {
                pid_t pid = fork();

                if (pid < 0)
                        return -errno;
                if (pid == 0)
                        _exit(run_worker(dir, hz, seconds) < 0 ? 1 : 0);
        }
        r = run_worker(dir, hz, seconds);
        while (wait(&status) > 0)
                failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        return r < 0 ? r : failed ? -EIO : 0;
}

/* The bare supervisor's thread: RECV, reply CONTINUE, until the process
 * ends (its main thread exits once the workers are gone). */
static void *bare_serve(void *userdata) {
        int fd = (int) (intptr_t) userdata;
        struct seccomp_notif *req = NULL;
        struct seccomp_notif_resp *resp = NULL;

        if (seccomp_notify_alloc(&req, &resp) < 0)
                return NULL;
        for (;;) {
                memset(req, 0, sizeof(*req));
                if (seccomp_notify_receive(fd, req) < 0) {
                        if (errno == EINTR || errno == ENOENT)
                                continue;
                        fprintf(stderr, "bench-scale bare: RECV failed: %m\n");
                        return NULL;
                }
                memset(resp, 0, sizeof(*resp));
                resp->id = req->id;
                resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
                (void) seccomp_notify_respond(fd, resp);
        }
}

/* One bare "namespace": this process carries the filter too (it never
 * makes the call), its thread serves, its workers call. */
static int bare_ns(const char *dir, unsigned procs, unsigned hz, unsigned seconds) {
        int fd = bench_install_bare_filter(), r, status, failed = 0;
        pthread_t t;

        if (fd < 0)
                return fd;
        (void) tns_listener_set_sync_wakeup(fd);
        for (unsigned i = 0; i < procs; i++) {
                pid_t pid = fork();

                if (pid < 0)
                        return -errno;
                if (pid == 0) {
                        close(fd);
                        _exit(run_worker(dir, hz, seconds) < 0 ? 1 : 0);
                }
        }
        r = -pthread_create(&t, NULL, bare_serve, (void *) (intptr_t) fd);
        if (r < 0)
                return r;
        while (wait(&status) > 0)
                failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        return failed ? -EIO : 0;
}

static int bare(const char *dir, unsigned ns, unsigned procs, unsigned hz, unsigned seconds) {
        int status, failed = 0;

        for (unsigned i = 0; i < ns; i++) {
                pid_t pid = fork();

                if (pid < 0)
                        return -errno;
                if (pid == 0)
                        _exit(bare_ns(dir, procs, hz, seconds) < 0 ? 1 : 0);
        }
        while (wait(&status) > 0)
                failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        return failed ? -EIO : 0;
}

static uint64_t percentile(const uint64_t *sum, uint64_t total, double p) {
        uint64_t want = (uint64_t) ((double) total * p), seen = 0;

        for (unsigned b = 0; b < N_BUCKETS; b++) {
                seen += sum[b];
                if (seen > want || (seen == total && seen > 0))
                        return bucket_top(b);
        }
        return 0;
}

static int report(const char *dir) {
        _cleanup_(closedirp) DIR *d = opendir(dir);
        uint64_t sum[N_BUCKETS] = {}, total = 0, files = 0;
        uint32_t h[N_BUCKETS];
        struct dirent *de;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char path[4096];
                FILE *f;

                if (strncmp(de->d_name, "h.", 2) != 0)
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;
                if (fread(h, sizeof(*h), N_BUCKETS, f) == N_BUCKETS) {
                        for (unsigned b = 0; b < N_BUCKETS; b++)
                                sum[b] += h[b], total += h[b];
                        files++;
                }
                fclose(f);
        }
        printf("info processes %" PRIu64 "\n", files);
        printf("info calls %" PRIu64 "\n", total);
        if (!total)
                return -ENODATA;
        printf("info p50_us %.1f\n", (double) percentile(sum, total, 0.50) / 1000);
        printf("info p99_us %.1f\n", (double) percentile(sum, total, 0.99) / 1000);
        printf("info p999_us %.1f\n", (double) percentile(sum, total, 0.999) / 1000);
        printf("info max_us %.1f\n", (double) percentile(sum, total, 1.0) / 1000);
        return 0;
}

static unsigned arg_uint(const char *s) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);

        if (*end || v == 0 || v > 1000000) {
                fprintf(stderr, "bench-scale: bad number '%s'\n", s);
                exit(2);
        }
        return (unsigned) v;
}

int main(int argc, char **argv) {
        int r;

        if (argc == 6 && strcmp(argv[1], "worker") == 0)
                r = worker(argv[2], arg_uint(argv[3]), arg_uint(argv[4]), arg_uint(argv[5]));
        else if (argc == 7 && strcmp(argv[1], "bare") == 0)
                r = bare(argv[2], arg_uint(argv[3]), arg_uint(argv[4]), arg_uint(argv[5]), arg_uint(argv[6]));
        else if (argc == 3 && strcmp(argv[1], "report") == 0)
                r = report(argv[2]);
        else {
                fprintf(stderr,
                        "usage: bench-scale worker DIR PROCS HZ SECONDS | bare DIR NS PROCS HZ SECONDS | report DIR\n");
                return 2;
        }
        if (r < 0) {
                fprintf(stderr, "bench-scale %s: %s\n", argv[1], strerror(-r));
                return 1;
        }
        return 0;
}
