/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Our vDSO image (vdso-patch/), run in this process without ptrace: the
 * test lays out what the injector will, in a mapping of its own,
 *
 *   area + 0      parameter page: this process's kernel vDSO functions
 *   area + 4096   offsets page: a namespace's memfd, mapped read-only
 *   area + 8192   the embedded image, read + exec
 *
 * and compares every clock read through the image with the kernel's vDSO
 * plus the namespace's offset. Nothing here is intercepted, so the
 * image's syscall paths (ALARM clocks, no kernel function, a page it does
 * not trust) return host time: that is what those cases expect. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ns.h"
#include "test.h"
#include "util.h"
#include "vdso-elf.h"
#include "vdso-host.h"
#include "vdso-image.h"
#include "vvar-layout.h"

#define PAGE 4096
#define NSEC 1000000000LL

typedef int (*cgt_fn)(clockid_t, struct timespec *);
typedef int (*gtod_fn)(struct timeval *, struct timezone *);
typedef long (*time_fn)(long *);
typedef int (*getres_fn)(clockid_t, struct timespec *);
typedef long (*getcpu_fn)(unsigned *, unsigned *, void *);
typedef long (*getrandom_fn)(void *, size_t, unsigned, void *, size_t);

static const char *const fn_names[_TNS_VDSO_FN_MAX] = {
        [TNS_VDSO_CLOCK_GETTIME] = "__vdso_clock_gettime",
        [TNS_VDSO_GETTIMEOFDAY] = "__vdso_gettimeofday",
        [TNS_VDSO_TIME] = "__vdso_time",
        [TNS_VDSO_CLOCK_GETRES] = "__vdso_clock_getres",
        [TNS_VDSO_GETCPU] = "__vdso_getcpu",
        [TNS_VDSO_GETRANDOM] = "__vdso_getrandom",
};

/* One setup for the whole program: the kernel's functions (k) and ours
 * (o), both as absolute addresses; 0 where absent. */
static struct {
        bool ready;
        uint8_t *area;
        size_t len;
        struct tns_ns *ns;
        uint64_t k[_TNS_VDSO_FN_MAX], o[_TNS_VDSO_FN_MAX];
        uint64_t kernel_base, kernel_size;
} M;

static struct tns_vdso_params *params(void) {
        return (struct tns_vdso_params *) M.area;
}

static int kernel_vdso(void) {
        unsigned long base = getauxval(AT_SYSINFO_EHDR), start, end;
        struct tns_vdso_elf e;
        char line[512];
        FILE *f;

        if (base == 0 || !(f = fopen("/proc/self/maps", "re")))
                return -ENOENT;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base)
                        M.kernel_size = end - start;
        fclose(f);
        if (M.kernel_size == 0 || tns_vdso_elf_parse((void *) base, M.kernel_size, &e) < 0)
                return -ENOENT;
        M.kernel_base = base;
        for (int i = 0; i < _TNS_VDSO_FN_MAX; i++) {
                uint64_t off;

                if (tns_vdso_elf_lookup(&e, fn_names[i], TNS_VDSO_VERSION, &off) == 0)
                        M.k[i] = base + off;
        }
        return M.k[TNS_VDSO_CLOCK_GETTIME] ? 0 : -ENOENT;
}

/* The parameter page as the injector fills it; slots may be cleared to
 * test the fallbacks. Read-only again afterwards, as in a target. */
static void fill_params(const uint64_t fn[_TNS_VDSO_FN_MAX]) {
        if (mprotect(M.area, PAGE, PROT_READ | PROT_WRITE) < 0)
                abort();
        memset(params(), 0, PAGE);
        params()->magic = TNS_PARAMS_MAGIC;
        params()->version = TNS_PARAMS_VERSION;
        params()->kernel_vdso_base = M.kernel_base;
        params()->kernel_vdso_size = M.kernel_size;
        memcpy(params()->fn, fn, sizeof(uint64_t) * _TNS_VDSO_FN_MAX);
        if (mprotect(M.area, PAGE, PROT_READ) < 0)
                abort();
}

static int setup(void) {
        size_t image_len = (tns_vdso_image_size + PAGE - 1) / PAGE * PAGE;
        _cleanup_close_ int ro = -EBADF;
        struct tns_vdso_elf e;
        char path[64];

        if (M.ready)
                return 0;
        if (kernel_vdso() < 0)
                return -ENOENT;
        M.len = 2 * PAGE + image_len;
        M.area = mmap(NULL, M.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (M.area == MAP_FAILED)
                return -errno;
        fill_params(M.k);
        if (tns_ns_new(1, "vdso-test", NULL, NULL, NULL, NULL, &M.ns) < 0)
                return -EIO;
        /* A member's view of the offsets page: the memfd opened read-only,
         * mapped shared. */
        snprintf(path, sizeof(path), "/proc/self/fd/%d", M.ns->page_fd);
        ro = open(path, O_RDONLY | O_CLOEXEC);
        if (ro < 0 ||
            mmap(M.area + PAGE, PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, ro, TNS_MEMFD_OFFSETS_PAGE) == MAP_FAILED)
                return -errno;
        memcpy(M.area + 2 * PAGE, tns_vdso_image, image_len);
        if (mprotect(M.area + 2 * PAGE, image_len, PROT_READ | PROT_EXEC) < 0)
                return -errno;
        if (tns_vdso_elf_parse(M.area + 2 * PAGE, tns_vdso_image_size, &e) < 0)
                return -EIO;
        for (int i = 0; i < _TNS_VDSO_FN_MAX; i++) {
                uint64_t off;

                if (tns_vdso_elf_lookup(&e, fn_names[i], TNS_VDSO_VERSION, &off) < 0)
                        return -EIO;
                M.o[i] = (uint64_t) (uintptr_t) (M.area + 2 * PAGE) + off;
        }
        M.ready = true;
        return 0;
}

#define SETUP()                                                                                                        \
        do {                                                                                                           \
                int _r = setup();                                                                                      \
                if (_r == -ENOENT)                                                                                     \
                        SKIP("no kernel vDSO with clock_gettime in this process");                                     \
                ASSERT_EQ(_r, 0);                                                                                      \
        } while (0)

static void set_offsets(int64_t mono, int64_t boot, int64_t real) {
        if (tns_ns_set_offset(M.ns, TNS_CLASS_MONOTONIC, mono) < 0 ||
            tns_ns_set_offset(M.ns, TNS_CLASS_BOOTTIME, boot) < 0 ||
            tns_ns_set_offset(M.ns, TNS_CLASS_REALTIME, real) < 0)
                abort();
}

static int64_t ts_ns(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * NSEC + ts->tv_nsec;
}

static int k_gettime(clockid_t c, struct timespec *ts) {
        return ((cgt_fn) M.k[TNS_VDSO_CLOCK_GETTIME])(c, ts);
}

static int o_gettime(clockid_t c, struct timespec *ts) {
        return ((cgt_fn) M.o[TNS_VDSO_CLOCK_GETTIME])(c, ts);
}

/* The raw syscall, as the vDSO returns errors: -errno. */
static int sys_gettime(clockid_t c, struct timespec *ts) {
        return syscall(SYS_clock_gettime, c, ts) == 0 ? 0 : -errno;
}

static int64_t class_offset(clockid_t c) {
        switch (c) {
        case CLOCK_MONOTONIC:
        case CLOCK_MONOTONIC_RAW:
        case CLOCK_MONOTONIC_COARSE:
                return tns_ns_offset(M.ns, TNS_CLASS_MONOTONIC);
        case CLOCK_BOOTTIME:
                return tns_ns_offset(M.ns, TNS_CLASS_BOOTTIME);
        case CLOCK_REALTIME:
        case CLOCK_REALTIME_COARSE:
        case CLOCK_TAI:
                return tns_ns_offset(M.ns, TNS_CLASS_REALTIME);
        default:
                return 0;
        }
}

/* ours must lie between two reads of `ref` taken around it, shifted by
 * off; normalised. Both paths of the same clock: exact bounds. */
static void check_bracket(clockid_t c, int (*ref)(clockid_t, struct timespec *), int64_t off, bool *_failed) {
        struct timespec a = {}, o = {}, b = {};
        int ra, ro, rb;

        ra = ref(c, &a);
        ro = o_gettime(c, &o);
        rb = ref(c, &b);
        EXPECT_EQ(ro, ra);
        EXPECT_EQ(rb, ra);
        if (ra != 0 || ro != 0)
                return;
        EXPECT_GE(o.tv_nsec, 0);
        EXPECT_LT(o.tv_nsec, NSEC);
        if (ts_ns(&o) < ts_ns(&a) + off || ts_ns(&o) > ts_ns(&b) + off)
                TEST_FAIL_(false, "clock %d: %lld not in [%lld, %lld] (offset %lld)", c, (long long) ts_ns(&o),
                           (long long) (ts_ns(&a) + off), (long long) (ts_ns(&b) + off), (long long) off);
}

/* Clock ids 0..11 and a few beyond, through the image. */
static void check_all_clocks(bool *_failed) {
        static const clockid_t extra[] = {-1, 12, 15, 16, 31, 1000};

        for (clockid_t c = 0; c <= CLOCK_TAI; c++) {
                if (c == CLOCK_REALTIME_ALARM || c == CLOCK_BOOTTIME_ALARM)
                        /* Never served by the kernel's vDSO: the image makes
                         * the syscall (the supervisor shifts it), here host time. */
                        check_bracket(c, sys_gettime, 0, _failed);
                else
                        check_bracket(c, k_gettime, class_offset(c), _failed);
        }
        for (size_t i = 0; i < ELEMENTSOF(extra); i++) {
                struct timespec a, o;

                EXPECT_EQ(o_gettime(extra[i], &o), k_gettime(extra[i], &a));
        }
}

TEST(offsets_page_is_read_only) {
        SETUP();
        /* The member's mapping comes from an O_RDONLY open of the memfd:
         * it cannot be made writable (mmap(2), EACCES for MAP_SHARED). */
        EXPECT_EQ(mprotect(M.area + PAGE, PAGE, PROT_READ | PROT_WRITE), -1);
        EXPECT_EQ(errno, EACCES);
}

TEST(zero_offsets_read_host_time) {
        SETUP();
        set_offsets(0, 0, 0);
        check_all_clocks(_failed);
}

TEST(positive_offsets) {
        SETUP();
        set_offsets(1000 * NSEC + 123456789, 86400 * NSEC + 7, 10LL * 365 * 86400 * NSEC + 999999999);
        check_all_clocks(_failed);
}

TEST(negative_offsets) {
        struct timespec now;

        SETUP();
        /* As far back as the clocks allow (no namespace clock below 0). */
        ASSERT_EQ(clock_gettime(CLOCK_MONOTONIC_RAW, &now), 0);
        set_offsets(-(now.tv_sec / 2) * NSEC - 987654321, -(now.tv_sec / 3) * NSEC - 1,
                    -20LL * 365 * 86400 * NSEC - 500000001);
        check_all_clocks(_failed);
}

TEST(sub_second_offsets) {
        static const int64_t offs[] = {1, -1, 999, -999, 999999999, -999999999, 500000000, -500000000};

        SETUP();
        for (size_t i = 0; i < ELEMENTSOF(offs); i++) {
                set_offsets(offs[i], -offs[i], offs[i]);
                check_all_clocks(_failed);
        }
}

/* time(): floor(CLOCK_REALTIME_COARSE + offset), as the kernel's time()
 * is the coarse clock's seconds. */
TEST(time_is_shifted_coarse_seconds) {
        static const int64_t offs[] = {0, 3600 * NSEC, -3600 * NSEC, 999999999, -999999999, 1, -1};
        time_fn t;

        SETUP();
        t = (time_fn) M.o[TNS_VDSO_TIME];
        for (size_t i = 0; i < ELEMENTSOF(offs); i++) {
                struct timespec a, b;
                long got, stored = 0;

                set_offsets(0, 0, offs[i]);
                ASSERT_EQ(k_gettime(CLOCK_REALTIME_COARSE, &a), 0);
                got = t(&stored);
                ASSERT_EQ(k_gettime(CLOCK_REALTIME_COARSE, &b), 0);
                EXPECT_EQ(got, stored);
                EXPECT_GE(got, (ts_ns(&a) + offs[i]) / NSEC);
                EXPECT_LE(got, (ts_ns(&b) + offs[i]) / NSEC);
                EXPECT_GT(t(NULL), 0);
        }
}

/* gettimeofday(): CLOCK_REALTIME + offset in microseconds, the timezone
 * as the kernel gives it. */
TEST(gettimeofday_is_shifted_realtime) {
        static const int64_t offs[] = {0, 7 * NSEC + 1500, -7 * NSEC - 1500, 999, -999};
        gtod_fn k, o;

        SETUP();
        k = (gtod_fn) M.k[TNS_VDSO_GETTIMEOFDAY];
        o = (gtod_fn) M.o[TNS_VDSO_GETTIMEOFDAY];
        for (size_t i = 0; i < ELEMENTSOF(offs); i++) {
                struct timezone ktz = {-1, -1}, otz = {-2, -2};
                struct timespec a, b;
                struct timeval tv;
                int64_t us;

                set_offsets(0, 0, offs[i]);
                ASSERT_EQ(k_gettime(CLOCK_REALTIME, &a), 0);
                ASSERT_EQ(o(&tv, NULL), 0);
                ASSERT_EQ(k_gettime(CLOCK_REALTIME, &b), 0);
                us = (int64_t) tv.tv_sec * 1000000 + tv.tv_usec;
                EXPECT_GE(tv.tv_usec, 0);
                EXPECT_LT(tv.tv_usec, 1000000);
                EXPECT_GE(us, (ts_ns(&a) + offs[i]) / 1000);
                EXPECT_LE(us, (ts_ns(&b) + offs[i]) / 1000);
                /* Asked for the timezone, the image makes the syscall (the
                 * namespace's timezone is the supervisor's to give; here,
                 * with no supervisor, the host's). */
                ASSERT_EQ(o(NULL, &otz), 0);
                if (k) {
                        ASSERT_EQ(k(NULL, &ktz), 0);
                        EXPECT_EQ(otz.tz_minuteswest, ktz.tz_minuteswest);
                        EXPECT_EQ(otz.tz_dsttime, ktz.tz_dsttime);
                }
                EXPECT_EQ(o(NULL, NULL), 0);
                otz = (struct timezone){-2, -2};
                EXPECT_EQ(o(NULL, &otz), 0);
                EXPECT_NE(otz.tz_dsttime, -2);
        }
}

/* gettimeofday() never reads behind a clock_gettime(CLOCK_REALTIME) made
 * before it, whatever the offset's sub-microsecond part. */
TEST(gettimeofday_after_clock_gettime) {
        gtod_fn o;

        SETUP();
        o = (gtod_fn) M.o[TNS_VDSO_GETTIMEOFDAY];
        set_offsets(0, 0, 777);
        for (int i = 0; i < 100000; i++) {
                struct timespec ts;
                struct timeval tv;

                ASSERT_EQ(o_gettime(CLOCK_REALTIME, &ts), 0);
                ASSERT_EQ(o(&tv, NULL), 0);
                if ((int64_t) tv.tv_sec * 1000000 + tv.tv_usec < ts_ns(&ts) / 1000)
                        TEST_FAIL_(true, "gettimeofday %ld.%06ld behind clock_gettime %ld.%09ld", tv.tv_sec, tv.tv_usec,
                                   ts.tv_sec, ts.tv_nsec);
        }
}

TEST(getres_getcpu_getrandom_forwarded) {
        cpu_set_t old, one;
        unsigned kc = 1u << 30, kn = 1u << 30, oc = 0, on = 0;
        int cpu;

        SETUP();
        for (clockid_t c = -1; c <= 16; c++) {
                struct timespec kr = {-1, -1}, orr = {-2, -2};
                int a = ((getres_fn) M.k[TNS_VDSO_CLOCK_GETRES])(c, &kr);
                int b = ((getres_fn) M.o[TNS_VDSO_CLOCK_GETRES])(c, &orr);

                EXPECT_EQ(b, a);
                if (a == 0) {
                        EXPECT_EQ(orr.tv_sec, kr.tv_sec);
                        EXPECT_EQ(orr.tv_nsec, kr.tv_nsec);
                }
        }

        /* Pinned, so that both calls see the same CPU. */
        ASSERT_EQ(sched_getaffinity(0, sizeof(old), &old), 0);
        cpu = sched_getcpu();
        ASSERT_GE(cpu, 0);
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
        if (M.k[TNS_VDSO_GETCPU])
                EXPECT_EQ(((getcpu_fn) M.k[TNS_VDSO_GETCPU])(&kc, &kn, NULL), 0);
        EXPECT_EQ(((getcpu_fn) M.o[TNS_VDSO_GETCPU])(&oc, &on, NULL), 0);
        ASSERT_EQ(sched_setaffinity(0, sizeof(old), &old), 0);
        EXPECT_EQ(oc, (unsigned) cpu);
        if (M.k[TNS_VDSO_GETCPU]) {
                EXPECT_EQ(oc, kc);
                EXPECT_EQ(on, kn);
        }

        /* The opaque-parameters query of vgetrandom (glibc's first call). */
        if (M.k[TNS_VDSO_GETRANDOM]) {
                uint32_t kp[16] = {}, op[16] = {};
                long a = ((getrandom_fn) M.k[TNS_VDSO_GETRANDOM])(NULL, 0, 0, kp, ~0UL);
                long b = ((getrandom_fn) M.o[TNS_VDSO_GETRANDOM])(NULL, 0, 0, op, ~0UL);

                EXPECT_EQ(b, a);
                EXPECT_EQ(memcmp(kp, op, sizeof(kp)), 0);
        } else
                EXPECT_EQ(((getrandom_fn) M.o[TNS_VDSO_GETRANDOM])(NULL, 0, 0, NULL, 0), -ENOSYS);
}

/* A kernel that reads whatever time we want: exact checks of the
 * normalisation for every edge of tv_nsec and of the offset. */
static struct timespec fake_now;
static int fake_result;

static int fake_gettime(clockid_t c, struct timespec *ts) {
        (void) c;
        if (fake_result == 0)
                *ts = fake_now;
        return fake_result;
}

static int fake_gettimeofday(struct timeval *tv, struct timezone *tz) {
        if (tv)
                *tv = (struct timeval){fake_now.tv_sec, fake_now.tv_nsec / 1000};
        if (tz)
                *tz = (struct timezone){-60, 0};
        return 0;
}

static long fake_time(long *t) {
        if (t)
                *t = fake_now.tv_sec;
        return fake_now.tv_sec;
}

static __int128 floor_div(__int128 a, int64_t b) {
        return a / b - (a % b < 0);
}

TEST(normalisation_is_exact) {
        static const int64_t nsecs[] = {0, 1, 5, 999, 1000, 499999999, 500000000, 999999000, 999999994, 999999999};
        static const int64_t offs[] = {0,
                                       1,
                                       -1,
                                       5,
                                       -5,
                                       999,
                                       -999,
                                       1000,
                                       -1000,
                                       999999999,
                                       -999999999,
                                       NSEC,
                                       -NSEC,
                                       NSEC + 1,
                                       -NSEC - 1,
                                       2 * NSEC - 1,
                                       -2 * NSEC + 1,
                                       123456789012345678LL,
                                       -123456789012345678LL};
        uint64_t fake[_TNS_VDSO_FN_MAX];

        SETUP();
        memcpy(fake, M.k, sizeof(fake));
        fake[TNS_VDSO_CLOCK_GETTIME] = (uint64_t) (uintptr_t) fake_gettime;
        fake[TNS_VDSO_GETTIMEOFDAY] = (uint64_t) (uintptr_t) fake_gettimeofday;
        fake[TNS_VDSO_TIME] = (uint64_t) (uintptr_t) fake_time;
        fill_params(fake);
        fake_result = 0;
        for (size_t n = 0; n < ELEMENTSOF(nsecs); n++)
                for (size_t o = 0; o < ELEMENTSOF(offs); o++) {
                        __int128 exact;
                        struct timespec ts;
                        struct timeval tv;
                        struct timezone tz;

                        fake_now = (struct timespec){1700000000, nsecs[n]};
                        exact = (__int128) fake_now.tv_sec * NSEC + fake_now.tv_nsec + offs[o];
                        set_offsets(offs[o], offs[o], offs[o]);
                        for (clockid_t c = 0; c <= CLOCK_TAI; c++) {
                                if (c == CLOCK_PROCESS_CPUTIME_ID || c == CLOCK_THREAD_CPUTIME_ID ||
                                    c == CLOCK_REALTIME_ALARM || c == CLOCK_BOOTTIME_ALARM || c == 10)
                                        continue;
                                ASSERT_EQ(o_gettime(c, &ts), 0);
                                EXPECT_EQ(ts.tv_sec, (int64_t) floor_div(exact, NSEC));
                                EXPECT_EQ(ts.tv_nsec, (int64_t) (exact - floor_div(exact, NSEC) * NSEC));
                        }
                        /* Forwarded clocks are left alone. */
                        ASSERT_EQ(o_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
                        EXPECT_EQ(ts.tv_nsec, fake_now.tv_nsec);
                        EXPECT_EQ(((time_fn) M.o[TNS_VDSO_TIME])(NULL), (int64_t) floor_div(exact, NSEC));
                        ASSERT_EQ(((gtod_fn) M.o[TNS_VDSO_GETTIMEOFDAY])(&tv, NULL), 0);
                        EXPECT_EQ((int64_t) tv.tv_sec * 1000000 + tv.tv_usec, (int64_t) floor_div(exact, 1000));
                        (void) tz;
                }
        /* An error of the kernel's function is returned as is, and the
         * result is not touched. */
        fake_result = -EINVAL;
        {
                struct timespec ts = {42, 42};
                struct timeval tv = {42, 42};

                set_offsets(NSEC, NSEC, NSEC);
                EXPECT_EQ(o_gettime(CLOCK_MONOTONIC, &ts), -EINVAL);
                EXPECT_EQ(ts.tv_sec, 42);
                EXPECT_EQ(ts.tv_nsec, 42);
                EXPECT_EQ(((gtod_fn) M.o[TNS_VDSO_GETTIMEOFDAY])(&tv, NULL), -EINVAL);
                EXPECT_EQ(tv.tv_sec, 42);
        }
        fake_result = 0;
        fill_params(M.k);
}

/* A change of offsets is seen by the very next call, in every class. */
TEST(live_offset_change) {
        SETUP();
        set_offsets(5 * NSEC, 6 * NSEC, 7 * NSEC);
        check_all_clocks(_failed);
        set_offsets(-5 * NSEC, -6 * NSEC, -7 * NSEC + 3);
        check_all_clocks(_failed);
        EXPECT_EQ(M.ns->page->seq % 2, 0);
}

struct flipper {
        int64_t a, b;
        volatile bool stop;
        unsigned writes;
};

/* Flips the monotonic offset, about once a microsecond: far more often
 * than any supervisor, not so often that readers only ever see a write
 * in progress. */
static void *flip(void *p) {
        struct flipper *f = p;
        struct timespec t0, t;

        while (!f->stop) {
                tns_ns_set_offset(M.ns, TNS_CLASS_MONOTONIC, f->writes % 2 ? f->b : f->a);
                f->writes++;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                do
                        clock_gettime(CLOCK_MONOTONIC, &t);
                while (ts_ns(&t) - ts_ns(&t0) < 1000);
        }
        return NULL;
}

/* A reader racing the writer sees one offset or the other, never a mix
 * and never a stall. A reader that gave up waiting (the writer thread
 * preempted inside its write, on a busy machine) made the syscall, which
 * is host time here: allowed, counted. */
static void race_writer(int64_t off_a, int64_t off_b, bool *_failed) {
        struct flipper f = {.a = off_a, .b = off_b};
        unsigned seen_a = 0, seen_b = 0, seen_syscall = 0;
        struct timespec start, now;
        pthread_t t;

        set_offsets(f.a, 0, 0);
        ASSERT_EQ(pthread_create(&t, NULL, flip, &f), 0);
        clock_gettime(CLOCK_MONOTONIC, &start);
        do {
                struct timespec a, o, b;
                int64_t lo, hi;

                k_gettime(CLOCK_MONOTONIC, &a);
                o_gettime(CLOCK_MONOTONIC, &o);
                k_gettime(CLOCK_MONOTONIC, &b);
                lo = ts_ns(&o) - ts_ns(&b);
                hi = ts_ns(&o) - ts_ns(&a);
                if (lo <= f.a && f.a <= hi)
                        seen_a++;
                else if (lo <= f.b && f.b <= hi)
                        seen_b++;
                else if (lo <= 0 && 0 <= hi)
                        seen_syscall++;
                else {
                        f.stop = true;
                        pthread_join(t, NULL);
                        TEST_FAIL_(true, "read an offset in [%lld, %lld], neither of the two", (long long) lo,
                                   (long long) hi);
                }
                clock_gettime(CLOCK_MONOTONIC, &now);
        } while (ts_ns(&now) - ts_ns(&start) < 300000000);
        f.stop = true;
        ASSERT_EQ(pthread_join(t, NULL), 0);
        printf("# %u writes; reads: %u of a, %u of b, %u through the syscall\n", f.writes, seen_a, seen_b,
               seen_syscall);
        EXPECT_GT(seen_a, 0);
        EXPECT_GT(seen_b, 0);
        EXPECT_GT(f.writes, 1000);
        EXPECT_EQ(M.ns->page->seq % 2, 0);
}

TEST(seqlock_under_concurrent_writes) {
        SETUP();
        race_writer(1000 * NSEC, -1000 * NSEC, _failed);
}

/* A writer that died between write_begin and write_end (the sequence
 * stays odd) costs readers a few milliseconds and the syscall, not a
 * hang. */
TEST(stuck_writer_falls_back_to_syscall) {
        struct timespec t0, t1;

        SETUP();
        set_offsets(100 * NSEC, 100 * NSEC, 100 * NSEC);
        tns_page_write_begin(M.ns->page, &M.ns->seq);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        check_bracket(CLOCK_MONOTONIC, sys_gettime, 0, _failed);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        tns_page_write_end(M.ns->page, &M.ns->seq);
        printf("# stuck read took %lld us\n", (long long) (ts_ns(&t1) - ts_ns(&t0)) / 1000);
        EXPECT_LT(ts_ns(&t1) - ts_ns(&t0), NSEC);
        check_bracket(CLOCK_MONOTONIC, k_gettime, 100 * NSEC, _failed);
}

/* A page this image does not understand (another ABI version) is not
 * read: the syscall answers. */
TEST(foreign_page_version_falls_back_to_syscall) {
        SETUP();
        set_offsets(100 * NSEC, 100 * NSEC, 100 * NSEC);
        M.ns->page->version = TNS_PAGE_VERSION + 1;
        check_bracket(CLOCK_MONOTONIC, sys_gettime, 0, _failed);
        check_bracket(CLOCK_REALTIME, sys_gettime, 0, _failed);
        M.ns->page->version = TNS_PAGE_VERSION;
        M.ns->page->magic = ~TNS_PAGE_MAGIC;
        check_bracket(CLOCK_BOOTTIME, sys_gettime, 0, _failed);
        M.ns->page->magic = TNS_PAGE_MAGIC;
        check_bracket(CLOCK_BOOTTIME, k_gettime, 100 * NSEC, _failed);
}

/* A kernel without a function (parameter slot 0): the image makes the
 * syscall, which the supervisor would shift; here it is host time. */
TEST(missing_kernel_functions_fall_back_to_syscalls) {
        static const uint64_t none[_TNS_VDSO_FN_MAX] = {};
        struct timespec a, b, res, kres;
        struct timeval tv;
        struct timezone tz;
        unsigned cpu = 1u << 30;
        long t, t2;

        SETUP();
        set_offsets(100 * NSEC, 100 * NSEC, 100 * NSEC);
        fill_params(none);
        for (clockid_t c = 0; c <= CLOCK_TAI; c++)
                check_bracket(c, sys_gettime, 0, _failed);

        ASSERT_EQ(sys_gettime(CLOCK_REALTIME, &a), 0);
        EXPECT_EQ(((gtod_fn) M.o[TNS_VDSO_GETTIMEOFDAY])(&tv, &tz), 0);
        ASSERT_EQ(sys_gettime(CLOCK_REALTIME, &b), 0);
        EXPECT_GE((int64_t) tv.tv_sec * 1000000 + tv.tv_usec, ts_ns(&a) / 1000);
        EXPECT_LE((int64_t) tv.tv_sec * 1000000 + tv.tv_usec, ts_ns(&b) / 1000);

        t = ((time_fn) M.o[TNS_VDSO_TIME])(&t2);
        EXPECT_EQ(t, t2);
        EXPECT_LE(t, time(NULL));
        EXPECT_GE(t, time(NULL) - 1);

        EXPECT_EQ(((getres_fn) M.o[TNS_VDSO_CLOCK_GETRES])(CLOCK_MONOTONIC, &res), 0);
        EXPECT_EQ(clock_getres(CLOCK_MONOTONIC, &kres), 0);
        EXPECT_EQ(res.tv_nsec, kres.tv_nsec);
        EXPECT_EQ(((getres_fn) M.o[TNS_VDSO_CLOCK_GETRES])(1000, &res), -EINVAL);
        EXPECT_EQ(((getcpu_fn) M.o[TNS_VDSO_GETCPU])(&cpu, NULL, NULL), 0);
        EXPECT_LT(cpu, (unsigned) CPU_SETSIZE);
        EXPECT_EQ(((getrandom_fn) M.o[TNS_VDSO_GETRANDOM])(&t, sizeof(t), 0, NULL, 0), -ENOSYS);

        /* Only clock_gettime present: time() and gettimeofday() use it. */
        {
                uint64_t only[_TNS_VDSO_FN_MAX] = {[TNS_VDSO_CLOCK_GETTIME] = M.k[TNS_VDSO_CLOCK_GETTIME]};

                fill_params(only);
                check_bracket(CLOCK_MONOTONIC, k_gettime, 100 * NSEC, _failed);
                ASSERT_EQ(k_gettime(CLOCK_REALTIME, &a), 0);
                EXPECT_EQ(((gtod_fn) M.o[TNS_VDSO_GETTIMEOFDAY])(&tv, NULL), 0);
                EXPECT_GE((int64_t) tv.tv_sec * 1000000 + tv.tv_usec, (ts_ns(&a) + 100 * NSEC) / 1000);
                EXPECT_GE(((time_fn) M.o[TNS_VDSO_TIME])(NULL), a.tv_sec + 99);
                /* The timezone needs the kernel's gettimeofday: the syscall
                 * answers all of it, host time here. */
                EXPECT_EQ(((gtod_fn) M.o[TNS_VDSO_GETTIMEOFDAY])(&tv, &tz), 0);
                EXPECT_LT((int64_t) tv.tv_sec * 1000000 + tv.tv_usec, (ts_ns(&a) + 50 * NSEC) / 1000);
        }
        fill_params(M.k);
        check_bracket(CLOCK_MONOTONIC, k_gettime, 100 * NSEC, _failed);
}

/* ---- The direct read path (issue 19) ----
 *
 * The image reads the kernel's time data itself for the clocks whose bit
 * the parameter page sets. With the kernel functions in the parameter page
 * replaced by counting ones, every test knows which path answered. */

static unsigned long through_calls;

static int counting_gettime(clockid_t c, struct timespec *ts) {
        through_calls++;
        return k_gettime(c, ts);
}

static int counting_gettimeofday(struct timeval *tv, struct timezone *tz) {
        through_calls++;
        return ((gtod_fn) M.k[TNS_VDSO_GETTIMEOFDAY])(tv, tz);
}

static long counting_time(long *t) {
        through_calls++;
        return ((time_fn) M.k[TNS_VDSO_TIME])(t);
}

/* The parameter page with the direct fields set; the call-through goes to
 * the counting functions. */
static void fill_params_direct(uint64_t clock_data, uint64_t pvclock, uint32_t mode, uint32_t clocks) {
        uint64_t fn[_TNS_VDSO_FN_MAX];

        memcpy(fn, M.k, sizeof(fn));
        fn[TNS_VDSO_CLOCK_GETTIME] = (uint64_t) (uintptr_t) counting_gettime;
        if (fn[TNS_VDSO_GETTIMEOFDAY])
                fn[TNS_VDSO_GETTIMEOFDAY] = (uint64_t) (uintptr_t) counting_gettimeofday;
        if (fn[TNS_VDSO_TIME])
                fn[TNS_VDSO_TIME] = (uint64_t) (uintptr_t) counting_time;
        fill_params(fn);
        if (mprotect(M.area, PAGE, PROT_READ | PROT_WRITE) < 0)
                abort();
        params()->direct_clock = clock_data;
        params()->direct_pvclock = pvclock;
        params()->direct_mode = mode;
        params()->direct_clocks = clocks;
        if (mprotect(M.area, PAGE, PROT_READ) < 0)
                abort();
}

/* This kernel's data, as timensd proves it at start; skips where it
 * proves nothing (another kernel, a clocksource without a vDSO mode). */
static bool host_direct(struct tns_vdso_direct *ret) {
        struct tns_vdso_host h;

        if (tns_vdso_host_init(&h) < 0)
                return false;
        *ret = h.direct;
        tns_vdso_host_done(&h);
        return ret->mode != 0;
}

static const clockid_t direct_clocks[] = {
        CLOCK_REALTIME,         CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE,
        CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME,  CLOCK_TAI,
};

TEST(direct_reads_every_clock_without_the_kernel_function) {
        static const int64_t offs[][3] = {
                {0, 0, 0},
                {1000 * NSEC + 123456789, 86400 * NSEC + 7, 10LL * 365 * 86400 * NSEC + 999999999},
                {-1000 * NSEC - 987654321, -1, -20LL * 365 * 86400 * NSEC - 500000001},
                {1, 999999999, -999999999},
                {-1, -999999999, 500000000},
        };
        struct tns_vdso_direct d;
        uint64_t base = M.kernel_base;

        SETUP();
        if (!host_direct(&d))
                SKIP("no direct path on this kernel: %s", d.why);
        printf("# this kernel: %s, clocks 0x%x %s\n", tns_vdso_direct_path(&d), d.clocks, d.why);
        fill_params_direct(base + (uint64_t) d.clock_delta, d.pvclock_delta ? base + (uint64_t) d.pvclock_delta : 0,
                           d.mode, d.clocks);
        through_calls = 0;
        for (size_t i = 0; i < ELEMENTSOF(offs); i++) {
                set_offsets(offs[i][0], offs[i][1], offs[i][2]);
                for (int round = 0; round < 200; round++)
                        for (size_t c = 0; c < ELEMENTSOF(direct_clocks); c++)
                                if (d.clocks & (1u << direct_clocks[c]))
                                        check_bracket(direct_clocks[c], k_gettime, class_offset(direct_clocks[c]),
                                                      _failed);
                if (d.clocks & (1u << CLOCK_REALTIME)) {
                        struct timespec a, b;
                        struct timeval tv;

                        ASSERT_EQ(k_gettime(CLOCK_REALTIME, &a), 0);
                        EXPECT_EQ(((gtod_fn) M.o[TNS_VDSO_GETTIMEOFDAY])(&tv, NULL), 0);
                        ASSERT_EQ(k_gettime(CLOCK_REALTIME, &b), 0);
                        EXPECT_GE((__int128) tv.tv_sec * 1000000 + tv.tv_usec,
                                  floor_div((__int128) ts_ns(&a) + offs[i][2], 1000));
                        EXPECT_LE((__int128) tv.tv_sec * 1000000 + tv.tv_usec,
                                  floor_div((__int128) ts_ns(&b) + offs[i][2], 1000));
                }
                if (d.clocks & (1u << CLOCK_REALTIME_COARSE)) {
                        struct timespec a, b;
                        long t, stored = 0;

                        ASSERT_EQ(k_gettime(CLOCK_REALTIME_COARSE, &a), 0);
                        t = ((time_fn) M.o[TNS_VDSO_TIME])(&stored);
                        ASSERT_EQ(k_gettime(CLOCK_REALTIME_COARSE, &b), 0);
                        EXPECT_EQ(t, stored);
                        EXPECT_GE(t, (int64_t) floor_div((__int128) ts_ns(&a) + offs[i][2], NSEC));
                        EXPECT_LE(t, (int64_t) floor_div((__int128) ts_ns(&b) + offs[i][2], NSEC));
                }
        }
        /* Not once through the kernel's function: the reads were ours. */
        EXPECT_EQ(through_calls, 0);
        /* An offsets page of another version (a newer timensd's, after a
         * restart) is not read directly: the call-through, which refuses
         * it too and makes the syscall (host time here). */
        M.ns->page->version = TNS_PAGE_VERSION + 1;
        check_bracket(CLOCK_MONOTONIC, sys_gettime, 0, _failed);
        check_bracket(CLOCK_MONOTONIC_COARSE, sys_gettime, 0, _failed);
        EXPECT_EQ(through_calls, 2);
        M.ns->page->version = TNS_PAGE_VERSION;
        fill_params(M.k);
}

/* A fake data page: clock_data[0] and [1] as the kernel lays them out. */
__attribute__((returns_nonnull)) static struct tns_kvdso_clock *fake_vvar(void) {
        struct tns_kvdso_clock *vc = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (vc == MAP_FAILED)
                abort();
        return vc;
}

static uint64_t rdtsc_now(void) {
        uint32_t lo, hi;

        __asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
        return ((uint64_t) hi << 32) | lo;
}

/* Both clock_data[] entries of a fake page in TSC mode, with an arithmetic
 * we choose: ns = (cycles * 3 + base) >> 1. */
static void fake_tsc_clocks(struct tns_kvdso_clock *vc) {
        for (int i = 0; i < 2; i++) {
                vc[i].seq = 4;
                vc[i].clock_mode = TNS_VCLOCK_MODE_TSC;
                vc[i].mask = UINT64_MAX;
                vc[i].max_cycles = UINT64_C(1) << 40;
                vc[i].mult = 3;
                vc[i].shift = 1;
        }
}

/* A MONOTONIC read through ours with the counter at cycle_last now: between
 * whole + the fake arithmetic on the counter read before and after, and
 * normalised. base_nsec: the base time's (shifted) nanoseconds. */
static void check_counter_read(struct tns_kvdso_clock *vc, __int128 whole, uint64_t base_nsec, bool *_failed) {
        struct timespec ts;
        uint64_t t0, t1;

        vc[0].cycle_last = vc[1].cycle_last = rdtsc_now();
        t0 = rdtsc_now() - vc[0].cycle_last;
        ASSERT_EQ(o_gettime(CLOCK_MONOTONIC, &ts), 0);
        t1 = rdtsc_now() - vc[0].cycle_last;
        {
                __int128 got = (__int128) ts.tv_sec * NSEC + ts.tv_nsec;

                EXPECT_TRUE(got >= whole + ((t0 * 3 + base_nsec) >> 1) && got <= whole + ((t1 * 3 + base_nsec) >> 1));
                EXPECT_LT(ts.tv_nsec, NSEC);
        }
}

/* A kernel time namespace's page (seq 1, TIMENS) or a mode the proof did
 * not cover: the call-through answers, at once. */
TEST(direct_falls_back_on_timens_page_and_other_modes) {
        static const int32_t modes[] = {TNS_VCLOCK_MODE_TIMENS, TNS_VCLOCK_MODE_NONE, TNS_VCLOCK_MODE_HVCLOCK,
                                        TNS_VCLOCK_MODE_PVCLOCK};
        struct tns_kvdso_clock *vc;

        SETUP();
        vc = fake_vvar();
        set_offsets(5 * NSEC, 6 * NSEC, 7 * NSEC + 1);
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                vc[0].seq = vc[1].seq = modes[i] == TNS_VCLOCK_MODE_TIMENS ? 1 : 2;
                vc[0].clock_mode = vc[1].clock_mode = modes[i];
                /* Proven with TSC: the fake page says otherwise. */
                fill_params_direct((uint64_t) (uintptr_t) vc, 0, TNS_VCLOCK_MODE_TSC, 0x8f3);
                for (size_t c = 0; c < ELEMENTSOF(direct_clocks); c++) {
                        bool coarse =
                                direct_clocks[c] == CLOCK_REALTIME_COARSE || direct_clocks[c] == CLOCK_MONOTONIC_COARSE;

                        /* The coarse clocks read no counter: any mode but
                         * TIMENS is the kernel's real page for them (the
                         * fake one says 0 s). */
                        if (coarse && modes[i] != TNS_VCLOCK_MODE_TIMENS)
                                continue;
                        through_calls = 0;
                        check_bracket(direct_clocks[c], k_gettime, class_offset(direct_clocks[c]), _failed);
                        EXPECT_EQ(through_calls, 1);
                }
        }
        fill_params(M.k);
        munmap(vc, PAGE);
}

/* The TSC mode's arithmetic on a page whose values we choose (this host
 * may read kvm-clock), and the coarse clocks exactly. */
TEST(direct_tsc_and_coarse_arithmetic_on_a_fake_page) {
        struct tns_kvdso_clock *vc;
        struct timespec ts;
        long t;

        SETUP();
        vc = fake_vvar();
        fake_tsc_clocks(vc);
        vc[0].basetime[CLOCK_MONOTONIC] = (struct tns_kvdso_timestamp){100, 2 * 999999990};
        vc[1].basetime[CLOCK_MONOTONIC_RAW] = (struct tns_kvdso_timestamp){200, 0};
        vc[0].basetime[CLOCK_REALTIME_COARSE] = (struct tns_kvdso_timestamp){1000, 999999999};
        /* The kernel's time() reads these seconds, the same as the coarse
         * ones (both xtime_sec at the last update). */
        vc[0].basetime[CLOCK_REALTIME].sec = 1000;
        vc[0].basetime[CLOCK_MONOTONIC_COARSE] = (struct tns_kvdso_timestamp){50, 0};
        fill_params_direct((uint64_t) (uintptr_t) vc, 0, TNS_VCLOCK_MODE_TSC, 0x8f3);
        through_calls = 0;

        /* A counter read: bracketed by ours, carried into the seconds. */
        set_offsets(NSEC + 20, 0, 1);
        check_counter_read(vc, (__int128) 101 * NSEC + 20, 2 * 999999990, _failed);
        ASSERT_EQ(o_gettime(CLOCK_MONOTONIC_RAW, &ts), 0);
        EXPECT_GE(ts.tv_sec, 201);

        /* The counter a little behind cycle_last (another CPU's): the
         * kernel clamps to the base time, so do we. */
        vc[0].cycle_last = rdtsc_now() + (UINT64_C(1) << 32);
        ASSERT_EQ(o_gettime(CLOCK_MONOTONIC, &ts), 0);
        EXPECT_EQ(ts.tv_sec, 102);
        EXPECT_EQ(ts.tv_nsec, 10);
        /* Too far ahead for a 64-bit product: the kernel's function. */
        vc[0].cycle_last = rdtsc_now() - (UINT64_C(1) << 41);
        EXPECT_EQ(through_calls, 0);
        check_bracket(CLOCK_MONOTONIC, k_gettime, class_offset(CLOCK_MONOTONIC), _failed);
        EXPECT_EQ(through_calls, 1);

        /* Coarse: the base time plus the offset, exactly. */
        through_calls = 0;
        set_offsets(-1, 0, 1);
        ASSERT_EQ(o_gettime(CLOCK_REALTIME_COARSE, &ts), 0);
        EXPECT_EQ(ts.tv_sec, 1001);
        EXPECT_EQ(ts.tv_nsec, 0);
        EXPECT_EQ(((time_fn) M.o[TNS_VDSO_TIME])(&t), 1001);
        EXPECT_EQ(t, 1001);
        ASSERT_EQ(o_gettime(CLOCK_MONOTONIC_COARSE, &ts), 0);
        EXPECT_EQ(ts.tv_sec, 49);
        EXPECT_EQ(ts.tv_nsec, NSEC - 1);
        set_offsets(0, 0, -NSEC);
        EXPECT_EQ(((time_fn) M.o[TNS_VDSO_TIME])(NULL), 999);
        EXPECT_EQ(through_calls, 0);

        /* A writer in progress that never ends: bounded, then the
         * call-through. */
        vc[0].seq = 5;
        check_bracket(CLOCK_MONOTONIC_COARSE, k_gettime, class_offset(CLOCK_MONOTONIC_COARSE), _failed);
        EXPECT_EQ(through_calls, 1);
        fill_params(M.k);
        munmap(vc, PAGE);
}

/* A member under a kernel time namespace: the namespace's page (TIMENS,
 * its offsets where the base times are) first, the kernel's data one page
 * further (direct_timens_delta). Read there, with the namespace's offsets
 * added before ours, as the kernel's do_hres_timens() and
 * do_coarse_timens() do; without a delta, the call-through. */
TEST(direct_reads_past_a_kernel_time_namespace_page) {
        struct tns_kvdso_clock *kns, *vc;
        struct timespec ts;

        SETUP();
        kns = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_TRUE(kns != MAP_FAILED);
        vc = (struct tns_kvdso_clock *) (uintptr_t) ((uintptr_t) kns + PAGE);
        for (int i = 0; i < 2; i++) {
                kns[i].seq = 1;
                kns[i].clock_mode = TNS_VCLOCK_MODE_TIMENS;
                /* struct timens_offset: seconds, nanoseconds (< 1e9). */
                kns[i].basetime[CLOCK_MONOTONIC] = (struct tns_kvdso_timestamp){3, 600000000};
                kns[i].basetime[CLOCK_MONOTONIC_RAW] = (struct tns_kvdso_timestamp){3, 600000000};
                kns[i].basetime[CLOCK_MONOTONIC_COARSE] = (struct tns_kvdso_timestamp){3, 600000000};
                kns[i].basetime[CLOCK_BOOTTIME] = (struct tns_kvdso_timestamp){7, 0};
        }
        fake_tsc_clocks(vc);
        vc[0].basetime[CLOCK_MONOTONIC] = (struct tns_kvdso_timestamp){100, 2 * 500000000};
        vc[0].basetime[CLOCK_BOOTTIME] = (struct tns_kvdso_timestamp){150, 0};
        vc[0].basetime[CLOCK_MONOTONIC_COARSE] = (struct tns_kvdso_timestamp){50, 500000000};
        vc[0].basetime[CLOCK_REALTIME_COARSE] = (struct tns_kvdso_timestamp){1000, 999999999};
        vc[0].basetime[CLOCK_REALTIME].sec = 1000;
        fill_params_direct((uint64_t) (uintptr_t) kns, 0, TNS_VCLOCK_MODE_TSC, 0x8f3);
        ASSERT_EQ(mprotect(M.area, PAGE, PROT_READ | PROT_WRITE), 0);
        params()->direct_timens_delta = PAGE;
        ASSERT_EQ(mprotect(M.area, PAGE, PROT_READ), 0);
        through_calls = 0;

        /* MONOTONIC: the kernel's 100.5 s + the namespace's 3.6 s + ours 1 s. */
        set_offsets(NSEC, 0, 0);
        check_counter_read(vc, (__int128) 104 * NSEC + 600000000, 2 * 500000000, _failed);
        /* BOOTTIME: 150 + 7, and our boottime offset 0. */
        ASSERT_EQ(o_gettime(CLOCK_BOOTTIME, &ts), 0);
        EXPECT_GE(ts.tv_sec, 157);
        EXPECT_LT(ts.tv_sec, 159);
        /* The coarse clocks exactly: MONOTONIC 50.5 + 3.6 + 1. */
        ASSERT_EQ(o_gettime(CLOCK_MONOTONIC_COARSE, &ts), 0);
        EXPECT_EQ(ts.tv_sec, 55);
        EXPECT_EQ(ts.tv_nsec, 100000000);
        /* REALTIME has no offset in a kernel time namespace: ours only. */
        set_offsets(0, 0, NSEC);
        ASSERT_EQ(o_gettime(CLOCK_REALTIME_COARSE, &ts), 0);
        EXPECT_EQ(ts.tv_sec, 1001);
        EXPECT_EQ(ts.tv_nsec, 999999999);
        EXPECT_EQ(((time_fn) M.o[TNS_VDSO_TIME])(NULL), 1001);
        /* A sub-second offset: time() carries from the coarse
         * nanoseconds, read past the namespace's page too. */
        set_offsets(0, 0, NSEC / 2);
        EXPECT_EQ(((time_fn) M.o[TNS_VDSO_TIME])(NULL), 1001);
        set_offsets(0, 0, -NSEC / 2);
        EXPECT_EQ(((time_fn) M.o[TNS_VDSO_TIME])(NULL), 1000);
        EXPECT_EQ(through_calls, 0);

        /* Not proven (no delta): the call-through, for every clock. */
        ASSERT_EQ(mprotect(M.area, PAGE, PROT_READ | PROT_WRITE), 0);
        params()->direct_timens_delta = 0;
        ASSERT_EQ(mprotect(M.area, PAGE, PROT_READ), 0);
        for (size_t c = 0; c < ELEMENTSOF(direct_clocks); c++) {
                through_calls = 0;
                check_bracket(direct_clocks[c], k_gettime, class_offset(direct_clocks[c]), _failed);
                EXPECT_EQ(through_calls, 1);
        }
        fill_params(M.k);
        munmap(kns, 2 * PAGE);
}

/* The direct path against a racing writer: the offset read in the same
 * retry loop as the kernel's data, one offset or the other, sub-second
 * parts included. */
TEST(direct_seqlock_under_concurrent_writes) {
        struct tns_vdso_direct d;
        uint64_t base = M.kernel_base;

        SETUP();
        if (!host_direct(&d) || !(d.clocks & (1u << CLOCK_MONOTONIC)))
                SKIP("no direct path for CLOCK_MONOTONIC on this kernel: %s", d.why);
        fill_params_direct(base + (uint64_t) d.clock_delta, d.pvclock_delta ? base + (uint64_t) d.pvclock_delta : 0,
                           d.mode, d.clocks);
        race_writer(1000 * NSEC + 1, -1000 * NSEC - 999999999, _failed);
        fill_params(M.k);
}

/* kvm-clock's read on a fake pvclock page: the scale, the clamp of a TSC
 * behind the host's timestamp (another vCPU's), the stable bit. */
TEST(direct_pvclock_arithmetic_on_a_fake_page) {
        struct tns_kvdso_clock *vc;
        struct tns_pvclock_info *pv;
        struct timespec ts;
        uint64_t t0, t1;

        SETUP();
        vc = fake_vvar();
        pv = (struct tns_pvclock_info *) fake_vvar();
        vc[0] = (struct tns_kvdso_clock){.seq = 2,
                                         .clock_mode = TNS_VCLOCK_MODE_PVCLOCK,
                                         .mask = UINT64_MAX,
                                         .max_cycles = UINT64_C(1) << 50,
                                         .mult = 1,
                                         .shift = 0};
        vc[0].basetime[CLOCK_MONOTONIC] = (struct tns_kvdso_timestamp){7, 0};
        *pv = (struct tns_pvclock_info){.version = 4,
                                        .system_time = UINT64_C(1) << 40,
                                        .tsc_to_system_mul = UINT32_C(1) << 31, /* x 0.5 */
                                        .tsc_shift = 0,
                                        .flags = TNS_PVCLOCK_TSC_STABLE_BIT};
        /* cycle_last 1000 ns of kvm-clock before its system_time. */
        vc[0].cycle_last = pv->system_time - 1000;
        fill_params_direct((uint64_t) (uintptr_t) vc, (uint64_t) (uintptr_t) pv, TNS_VCLOCK_MODE_PVCLOCK, 0x8f3);
        set_offsets(NSEC + 5, 0, 0);
        through_calls = 0;

        /* The host's timestamp in the future: no time since it. */
        pv->tsc_timestamp = rdtsc_now() + (UINT64_C(1) << 40);
        ASSERT_EQ(o_gettime(CLOCK_MONOTONIC, &ts), 0);
        EXPECT_EQ(ts.tv_sec, 8);
        EXPECT_EQ(ts.tv_nsec, 1005);

        /* In the past: half the TSC ticks since it (mul 2^31, shift 0). */
        pv->tsc_timestamp = rdtsc_now();
        t0 = rdtsc_now() - pv->tsc_timestamp;
        ASSERT_EQ(o_gettime(CLOCK_MONOTONIC, &ts), 0);
        t1 = rdtsc_now() - pv->tsc_timestamp;
        {
                int64_t got = (int64_t) (ts.tv_sec - 8) * NSEC + ts.tv_nsec - 1005;

                EXPECT_GE(got, (int64_t) (t0 / 2));
                EXPECT_LE(got, (int64_t) (t1 / 2));
        }
        /* A negative tsc_shift halves the delta first. */
        pv->tsc_shift = -1;
        pv->tsc_timestamp = rdtsc_now();
        t0 = rdtsc_now() - pv->tsc_timestamp;
        ASSERT_EQ(o_gettime(CLOCK_MONOTONIC, &ts), 0);
        t1 = rdtsc_now() - pv->tsc_timestamp;
        {
                int64_t got = (int64_t) (ts.tv_sec - 8) * NSEC + ts.tv_nsec - 1005;

                EXPECT_GE(got, (int64_t) (t0 / 4) - 1);
                EXPECT_LE(got, (int64_t) (t1 / 4) + 1);
        }
        EXPECT_EQ(through_calls, 0);

        /* Without the stable bit vCPU 0's page is not every vCPU's: the
         * kernel's function (here: the real kernel's time). */
        pv->flags = 0;
        check_bracket(CLOCK_MONOTONIC, k_gettime, class_offset(CLOCK_MONOTONIC), _failed);
        EXPECT_EQ(through_calls, 1);
        fill_params(M.k);
        munmap(vc, PAGE);
        munmap(pv, PAGE);
}
