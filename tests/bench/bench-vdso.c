/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-vdso: what our vDSO image costs over the kernel's.
 *
 *   bench-vdso [-b BATCHES] [-t BATCH_MS]
 *
 * Lays out in this process what the injector lays out in a target (the
 * parameter page, a namespace's offsets page mapped read-only from its
 * memfd, our image; see tests/unit/test-vdso-image.c) and times each call
 * through the kernel's vDSO and through ours, both by function pointer,
 * batch after batch in alternation so that both see the same machine;
 * once with offsets of whole seconds, once with a sub-second part (the
 * image's two ways of adding them). Goal: ours within 1.05x of the
 * kernel's.
 *
 * Output: a table for people, then one line per fact for awk:
 *   bench NAME MEDIAN_NS MIN_NS CALLS_PER_BATCH BATCHES
 *   ratio NAME MEDIAN_RATIO
 * (the format of tests/bench/bench-clock.c; the timing is
 * tests/include/bench.h's). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "ns.h"
#include "util.h"
#include "vdso-host.h"
#include "vdso-elf.h"
#include "vdso-image.h"

#define PAGE 4096

typedef int (*cgt_fn)(clockid_t, struct timespec *);
typedef int (*gtod_fn)(struct timeval *, struct timezone *);
typedef long (*time_fn)(long *);

static const char *const fn_names[_TNS_VDSO_FN_MAX] = {
        [TNS_VDSO_CLOCK_GETTIME] = "__vdso_clock_gettime",
        [TNS_VDSO_GETTIMEOFDAY] = "__vdso_gettimeofday",
        [TNS_VDSO_TIME] = "__vdso_time",
        [TNS_VDSO_CLOCK_GETRES] = "__vdso_clock_getres",
        [TNS_VDSO_GETCPU] = "__vdso_getcpu",
        [TNS_VDSO_GETRANDOM] = "__vdso_getrandom",
};

/* The function under test, set before each batch: loops call through it. */
static uint64_t target;
static volatile int64_t sink;

/* The clock of the clock_gettime loop, set with target. */
static clockid_t target_clock;

static void loop_cgt(uint64_t n) {
        cgt_fn f = (cgt_fn) target;
        clockid_t c = target_clock;
        struct timespec ts;
        int64_t acc = 0;

        for (uint64_t i = 0; i < n; i++) {
                f(c, &ts);
                acc += ts.tv_nsec;
        }
        sink = acc;
}

static void loop_time(uint64_t n) {
        time_fn f = (time_fn) target;
        int64_t acc = 0;

        for (uint64_t i = 0; i < n; i++)
                acc += f(NULL);
        sink = acc;
}

static void loop_gtod(uint64_t n) {
        gtod_fn f = (gtod_fn) target;
        struct timeval tv;
        int64_t acc = 0;

        for (uint64_t i = 0; i < n; i++) {
                f(&tv, NULL);
                acc += tv.tv_usec;
        }
        sink = acc;
}

struct bench {
        const char *name, *label;
        enum tns_vdso_fn fn;
        void (*loop)(uint64_t n);
        clockid_t clock;
};

struct setup {
        uint64_t host[_TNS_VDSO_FN_MAX], ours[_TNS_VDSO_FN_MAX];
        struct tns_ns *ns;
        struct tns_vdso_direct direct; /* the read path a member gets, as timensd proves it */
};

static int kernel_functions(uint64_t ret[_TNS_VDSO_FN_MAX], uint64_t *ret_base, uint64_t *ret_size) {
        unsigned long base = getauxval(AT_SYSINFO_EHDR), start, end, size = 0;
        struct tns_vdso_elf e;
        char line[512];
        FILE *f;

        if (base == 0 || !(f = fopen("/proc/self/maps", "re")))
                return -ENOENT;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base)
                        size = end - start;
        fclose(f);
        if (size == 0 || tns_vdso_elf_parse((void *) base, size, &e) < 0)
                return -ENOENT;
        for (int i = 0; i < _TNS_VDSO_FN_MAX; i++) {
                uint64_t off;

                ret[i] = tns_vdso_elf_lookup(&e, fn_names[i], TNS_VDSO_VERSION, &off) == 0 ? base + off : 0;
        }
        *ret_base = base;
        *ret_size = size;
        return 0;
}

/* [params][offsets page, read-only from the memfd][image], as injected. */
static int setup(struct setup *s) {
        const int64_t offsets[TNS_CLASS_MAX] = {86400 * NSEC_PER_SEC, 3600 * NSEC_PER_SEC, -365 * 86400 * NSEC_PER_SEC};
        size_t image_len = (tns_vdso_image_size + PAGE - 1) / PAGE * PAGE;
        _cleanup_close_ int ro = -EBADF;
        struct tns_vdso_params *p;
        uint64_t base, size;
        struct tns_vdso_elf e;
        uint8_t *area;
        char path[64];
        int r;

        r = kernel_functions(s->host, &base, &size);
        if (r < 0)
                return r;
        area = mmap(NULL, 2 * PAGE + image_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (area == MAP_FAILED)
                return -errno;
        p = (struct tns_vdso_params *) area;
        *p = (struct tns_vdso_params){.magic = TNS_PARAMS_MAGIC,
                                      .version = TNS_PARAMS_VERSION,
                                      .kernel_vdso_base = base,
                                      .kernel_vdso_size = size};
        memcpy(p->fn, s->host, sizeof(s->host));
        {
                /* The direct read path, as tns_vdso_params_fill() sets it
                 * for a member whose kernel vDSO is at base. */
                struct tns_vdso_host h;

                if (tns_vdso_host_init(&h) == 0) {
                        s->direct = h.direct;
                        tns_vdso_host_done(&h);
                }
                if (s->direct.mode) {
                        p->direct_clock = base + (uint64_t) s->direct.clock_delta;
                        p->direct_pvclock = s->direct.pvclock_delta ? base + (uint64_t) s->direct.pvclock_delta : 0;
                        p->direct_mode = s->direct.mode;
                        p->direct_clocks = s->direct.clocks;
                }
        }
        r = tns_ns_new(1, "bench", NULL, offsets, NULL, NULL, &s->ns);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", s->ns->page_fd);
        ro = open(path, O_RDONLY | O_CLOEXEC);
        if (ro < 0 ||
            mmap(area + PAGE, PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, ro, TNS_MEMFD_OFFSETS_PAGE) == MAP_FAILED)
                return -errno;
        memcpy(area + 2 * PAGE, tns_vdso_image, image_len);
        if (mprotect(area, PAGE, PROT_READ) < 0 || mprotect(area + 2 * PAGE, image_len, PROT_READ | PROT_EXEC) < 0)
                return -errno;
        r = tns_vdso_elf_parse(area + 2 * PAGE, tns_vdso_image_size, &e);
        if (r < 0)
                return r;
        for (int i = 0; i < _TNS_VDSO_FN_MAX; i++) {
                uint64_t off;

                r = tns_vdso_elf_lookup(&e, fn_names[i], TNS_VDSO_VERSION, &off);
                if (r < 0)
                        return r;
                s->ours[i] = (uint64_t) (uintptr_t) (area + 2 * PAGE) + off;
        }
        return 0;
}

/* A batch's ctx: a loop, and the function it calls through. */
struct call {
        void (*loop)(uint64_t n);
        uint64_t fn;
        clockid_t clock;
};

static int64_t time_batch(void *ctx, uint64_t n) {
        const struct call *c = ctx;
        int64_t start;

        target = c->fn;
        target_clock = c->clock;
        start = bench_now_ns();
        c->loop(n);
        return bench_now_ns() - start;
}

/* Host and ours, batch after batch in alternation. */
static void run_bench(const struct bench *b, const char *variant, const struct setup *s,
                      const struct bench_options *o) {
        double host[BENCH_MAX_BATCHES] = {0}, ours[BENCH_MAX_BATCHES] = {0}, ratio[BENCH_MAX_BATCHES] = {0};
        struct call host_call = {b->loop, s->host[b->fn], b->clock}, ours_call = {b->loop, s->ours[b->fn], b->clock};
        uint64_t n = bench_calibrate(time_batch, &host_call, o->batch_ns);
        struct bench_result h, t, r;

        (void) bench_calibrate(time_batch, &ours_call, o->batch_ns / 4);
        for (unsigned i = 0; i < o->batches; i++) {
                host[i] = (double) time_batch(&host_call, n) / (double) n;
                ours[i] = (double) time_batch(&ours_call, n) / (double) n;
                ratio[i] = ours[i] / host[i];
        }
        h = bench_summarise(host, o->batches);
        t = bench_summarise(ours, o->batches);
        r = bench_summarise(ratio, o->batches);
        printf("%-38s %8.2f %8.2f %8.2f %8.2f   %5.3fx\n", b->label, h.median, h.min, t.median, t.min, r.median);
        printf("bench vdso_host%s_%s %.2f %.2f %llu %u\n", variant, b->name, h.median, h.min, (unsigned long long) n,
               o->batches);
        printf("bench vdso_timens%s_%s %.2f %.2f %llu %u\n", variant, b->name, t.median, t.min, (unsigned long long) n,
               o->batches);
        printf("ratio%s %s %.3f\n", variant, b->name, r.median);
        fflush(stdout);
}

int main(int argc, char *argv[]) {
        static const struct bench benches[] = {
                {"clock_gettime_monotonic", "clock_gettime(CLOCK_MONOTONIC)", TNS_VDSO_CLOCK_GETTIME, loop_cgt,
                 CLOCK_MONOTONIC},
                {"clock_gettime_realtime", "clock_gettime(CLOCK_REALTIME)", TNS_VDSO_CLOCK_GETTIME, loop_cgt,
                 CLOCK_REALTIME},
                {"clock_gettime_boottime", "clock_gettime(CLOCK_BOOTTIME)", TNS_VDSO_CLOCK_GETTIME, loop_cgt,
                 CLOCK_BOOTTIME},
                {"clock_gettime_tai", "clock_gettime(CLOCK_TAI)", TNS_VDSO_CLOCK_GETTIME, loop_cgt, CLOCK_TAI},
                {"clock_gettime_monotonic_raw", "clock_gettime(CLOCK_MONOTONIC_RAW)", TNS_VDSO_CLOCK_GETTIME, loop_cgt,
                 CLOCK_MONOTONIC_RAW},
                {"clock_gettime_monotonic_coarse", "clock_gettime(CLOCK_MONOTONIC_COARSE)", TNS_VDSO_CLOCK_GETTIME,
                 loop_cgt, CLOCK_MONOTONIC_COARSE},
                {"clock_gettime_realtime_coarse", "clock_gettime(CLOCK_REALTIME_COARSE)", TNS_VDSO_CLOCK_GETTIME,
                 loop_cgt, CLOCK_REALTIME_COARSE},
                {"time", "time(NULL)", TNS_VDSO_TIME, loop_time, 0},
                {"gettimeofday", "gettimeofday(&tv, NULL)", TNS_VDSO_GETTIMEOFDAY, loop_gtod, 0},
        };
        struct bench_options o = {.batches = 9, .batch_ns = 100 * NSEC_PER_MSEC};
        struct setup s = {};
        int r;

        if (bench_parse_options(argc, argv, &o, NULL, NULL, NULL) < 0) {
                fprintf(stderr, "Usage: %s [-b BATCHES (1-%d, default 9)] [-t BATCH_MS (default 100)]\n", argv[0],
                        BENCH_MAX_BATCHES);
                return EXIT_FAILURE;
        }
        r = setup(&s);
        if (r < 0) {
                fprintf(stderr, "bench-vdso: cannot set up the image: %s\n", strerror(-r));
                return r == -ENOENT ? 77 : EXIT_FAILURE; /* 77: skipped, as automake's harness counts it */
        }
        printf("# our image reads: %s%s%s\n", tns_vdso_direct_path(&s.direct), s.direct.why[0] ? ", " : "",
               s.direct.why);
        printf("# ns per call: median and minimum of %u batches of ~%lld ms; ratio = median of per-batch ratios\n",
               o.batches, (long long) (o.batch_ns / NSEC_PER_MSEC));
        /* Offsets of whole seconds ("+1d") first, then with a sub-second
         * part (absolute dates, imported clocks): the image's two paths. */
        for (int round = 0; round < 2; round++) {
                if (round == 1)
                        for (int c = 0; c < TNS_CLASS_MAX; c++)
                                if (tns_ns_set_offset(s.ns, c, tns_ns_offset(s.ns, c) + 123456789) < 0)
                                        return EXIT_FAILURE;
                printf("# offsets %s\n", round == 0 ? "of whole seconds" : "with a sub-second part");
                printf("# %-36s %8s %8s %8s %8s   %6s\n", "call", "host", "(min)", "timens", "(min)", "ratio");
                for (size_t i = 0; i < ELEMENTSOF(benches); i++) {
                        if (!s.host[benches[i].fn]) {
                                printf("# %s: the kernel's vDSO lacks it, skipped\n", benches[i].label);
                                continue;
                        }
                        run_bench(&benches[i], round == 0 ? "" : "_subsec", &s, &o);
                }
        }
        return EXIT_SUCCESS;
}
