/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-api: timensd's control API, measured from a client over
 * lib/client/client.c, as tests/bench/api.sh runs it.
 *
 *   bench-api --socket PATH hello       round trip of hello
 *   bench-api --socket PATH set NAME    a live set (realtime, alternating
 *                                       +1d and +2d) on namespace NAME
 *   bench-api --socket PATH rss PID     timensd's (PID) VmRSS with 1, 100
 *                                       and 1000 namespaces more than now
 *   bench-api --socket PATH cycles PID N K
 *                                       creates and destroys N namespaces,
 *                                       K times: timensd's RSS and open
 *                                       fds after each cycle (growth)
 *
 * Output as bench-clock's: `bench NAME MEDIAN_NS MIN_NS CALLS BATCHES` (the
 * median and the fastest of the batches' mean per call) and `info KEY
 * VALUE`. -t MS and -b N set the batch length and count. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <dirent.h>

#include "client.h"

#define MAX_BATCHES 64

struct opts {
        const char *socket;
        unsigned batch_ms, batches;
};

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

static int call(struct tns_client *c, struct tns_request *req) {
        _cleanup_json_ json_object *res = NULL;
        struct tns_proto_error e;
        int r;

        r = tns_client_call(c, req, NULL, 0, &res, &e);
        if (r == 0) {
                fprintf(stderr, "bench-api: %s: %s (%s)\n", tns_op_name(req->op), e.message, tns_err_code(e.code));
                return -EPROTO;
        }
        return r < 0 ? r : 0;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

/* Batches of calls of about batch_ms each; prints the bench line. */
static int measure(const char *name, const struct opts *o, struct tns_client *c, struct tns_request *reqs,
                   unsigned n_reqs) {
        uint64_t per_call[MAX_BATCHES], calls = 0;
        unsigned b;
        int r;

        for (b = 0; b < o->batches; b++) {
                uint64_t start = now_ns(), end = start + (uint64_t) o->batch_ms * 1000000, n = 0, t;

                do {
                        r = call(c, &reqs[n % n_reqs]);
                        if (r < 0)
                                return r;
                        n++;
                } while ((t = now_ns()) < end);
                per_call[b] = (t - start) / n;
                calls += n;
        }
        qsort(per_call, b, sizeof(per_call[0]), cmp_u64);
        printf("bench %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n", name, per_call[b / 2], per_call[0], calls, b);
        return 0;
}

static int bench_hello(const struct opts *o, struct tns_client *c) {
        struct tns_request req = {.op = TNS_OP_HELLO};

        return measure("api_hello", o, c, &req, 1);
}

static int bench_set(const struct opts *o, struct tns_client *c, const char *name) {
        struct tns_request reqs[2] = {{.op = TNS_OP_SET, .name = name}, {.op = TNS_OP_SET, .name = name}};
        char label[64];

        for (int i = 0; i < 2; i++)
                reqs[i].clocks[TNS_CLASS_REALTIME] =
                        (struct tns_clock_arg){true, {TNS_OFFSET_RELATIVE, (i + 1) * 86400 * INT64_C(1000000000)}};
        snprintf(label, sizeof(label), "api_set_%s", name);
        return measure(label, o, c, reqs, 2);
}

static long status_kib(pid_t pid, const char *key) {
        char path[64], line[256];
        size_t len = strlen(key);
        long v = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, key, len) == 0 && line[len] == ':')
                        v = strtol(line + len + 1, NULL, 10);
        if (f)
                fclose(f);
        return v;
}

/* The namespaces' files the daemon holds (on its private tmpfs, or
 * memfds): shared memory outside its RSS (only the offsets page is mapped
 * in it). */
static uint64_t memfd_bytes(pid_t pid) {
        char path[64], file[384], target[128];
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        struct stat st;
        uint64_t sum = 0;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
        d = opendir(path);
        while (d && (de = readdir(d))) {
                snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
                n = readlink(file, target, sizeof(target) - 1);
                if (n <= 0)
                        continue;
                target[n] = '\0';
                if ((strncmp(target, "/memfd:timens", 13) == 0 || strncmp(target, "/timens-vdso.", 13) == 0) &&
                    stat(file, &st) == 0)
                        sum += (uint64_t) st.st_size;
        }
        return sum;
}

static int create_until(struct tns_client *c, unsigned *have, unsigned want) {
        char name[32];
        int r;

        for (; *have < want; (*have)++) {
                struct tns_request req = {.op = TNS_OP_CREATE, .name = name};

                snprintf(name, sizeof(name), "bench-rss-%u", *have);
                r = call(c, &req);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int destroy_all(struct tns_client *c, unsigned n) {
        char name[32];

        for (unsigned i = 0; i < n; i++) {
                struct tns_request req = {.op = TNS_OP_DESTROY, .name = name};

                snprintf(name, sizeof(name), "bench-rss-%u", i);
                (void) call(c, &req);
        }
        return 0;
}

static int bench_rss(struct tns_client *c, pid_t pid) {
        static const unsigned steps[] = {1, 100, 1000};
        struct tns_request hello = {.op = TNS_OP_HELLO};
        long base, rss = 0;
        unsigned have = 0;
        uint64_t memfd0;
        int r;

        r = call(c, &hello);
        if (r < 0)
                return r;
        base = status_kib(pid, "VmRSS");
        memfd0 = memfd_bytes(pid);
        printf("info rss_base_kib %ld\n", base);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                r = create_until(c, &have, steps[i]);
                if (r < 0)
                        break;
                rss = status_kib(pid, "VmRSS");
                printf("info rss_%u_kib %ld\n", steps[i], rss);
                printf("info rss_per_ns_%u_kib %.1f\n", steps[i], (double) (rss - base) / steps[i]);
                printf("info memfd_per_ns_%u_kib %.1f\n", steps[i],
                       (double) (memfd_bytes(pid) - memfd0) / 1024.0 / steps[i]);
        }
        destroy_all(c, have);
        return r;
}

static long count_fds(pid_t pid) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[64];
        long n = 0;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
        d = opendir(path);
        while (d && readdir(d))
                n++;
        return d ? n - 2 : -1;
}

static int bench_cycles(struct tns_client *c, pid_t pid, unsigned count, unsigned cycles) {
        struct tns_request hello = {.op = TNS_OP_HELLO};
        int r = call(c, &hello);

        if (r < 0)
                return r;
        printf("info cycle_0_rss_kib %ld\ninfo cycle_0_fds %ld\n", status_kib(pid, "VmRSS"), count_fds(pid));
        for (unsigned k = 1; k <= cycles; k++) {
                unsigned have = 0;

                r = create_until(c, &have, count);
                destroy_all(c, have);
                if (r < 0)
                        return r;
                printf("info cycle_%u_rss_kib %ld\ninfo cycle_%u_fds %ld\n", k, status_kib(pid, "VmRSS"), k,
                       count_fds(pid));
                fflush(stdout);
        }
        return 0;
}

int main(int argc, char *argv[]) {
        struct opts o = {.batch_ms = 100, .batches = 7};
        static const struct option options[] = {{"socket", required_argument, NULL, 's'}, {}};
        _cleanup_client_ struct tns_client *c = NULL;
        int ch, r;

        while ((ch = getopt_long(argc, argv, "t:b:", options, NULL)) >= 0) {
                if (ch == 's')
                        o.socket = optarg;
                else if (ch == 't')
                        o.batch_ms = (unsigned) atoi(optarg);
                else if (ch == 'b')
                        o.batches = (unsigned) atoi(optarg);
                else
                        return 2;
        }
        if (optind >= argc || o.batches == 0 || o.batches > MAX_BATCHES) {
                fprintf(stderr, "Usage: bench-api [--socket PATH] [-t MS] [-b N] hello | set NAME | rss PID | cycles PID N K\n");
                return 2;
        }
        r = tns_client_connect(o.socket, &c);
        if (r < 0) {
                fprintf(stderr, "bench-api: cannot connect to timensd: %s\n", strerror(-r));
                return 1;
        }
        if (strcmp(argv[optind], "hello") == 0)
                r = bench_hello(&o, c);
        else if (strcmp(argv[optind], "set") == 0 && optind + 1 < argc)
                r = bench_set(&o, c, argv[optind + 1]);
        else if (strcmp(argv[optind], "rss") == 0 && optind + 1 < argc)
                r = bench_rss(c, (pid_t) atoi(argv[optind + 1]));
        else if (strcmp(argv[optind], "cycles") == 0 && optind + 3 < argc)
                r = bench_cycles(c, (pid_t) atoi(argv[optind + 1]), (unsigned) atoi(argv[optind + 2]),
                                 (unsigned) atoi(argv[optind + 3]));
        else
                r = -EINVAL;
        return r < 0 ? 1 : 0;
}
