/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The supervisor engine against real targets: this program re-executes
 * itself as the target ("victim" mode) under the real filter, and the test
 * side runs the engine on a real sd-event loop. The victim checks its own
 * clocks twice — through the raw syscall (shifted) and through the vDSO
 * (the host's, as nothing patches it here) — and reports by exit status. */
#define TEST_HAVE_SETUP 1

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "clocks.h"
#include "filter.h"
#include "spawn.h"
#include "supervisor.h"
#include "test.h"

#define NS 1000000000LL
#define TOLERANCE_NS (200 * 1000000LL)

/* ---- victim side ---- */

static int64_t raw_ns(clockid_t c) {
        struct timespec ts;

        if (syscall(SYS_clock_gettime, c, &ts) < 0)
                return INT64_MIN;
        return ts.tv_sec * NS + ts.tv_nsec;
}

static int64_t vdso_ns(clockid_t c) {
        struct timespec ts;

        clock_gettime(c, &ts);
        return ts.tv_sec * NS + ts.tv_nsec;
}

/* Exit 0 if every virtual clock reads host + its class's offset, through
 * the raw syscall and through the vDSO (shifted too, or the host's when
 * the vDSO is not ours). refs: the host's reading of each clock id just
 * before the victim started, comma-separated. */
static int victim_offsets(int64_t mono, int64_t boot, int64_t real, const char *refs, bool vdso) {
        const int64_t off[TNS_CLASS_MAX] = {mono, boot, real};
        int64_t ref[16] = {};
        char *p = (char *) refs;

        for (int i = 0; i < 16 && *p; i++, p += *p == ',')
                ref[i] = strtoll(p, &p, 10);
        for (unsigned i = 0; i < tns_n_virtual_clocks; i++) {
                clockid_t c = tns_virtual_clocks[i];
                int64_t o = off[tns_clock_class(c)];
                int64_t d_raw, d_vdso;

                if (c == CLOCK_REALTIME_ALARM || c == CLOCK_BOOTTIME_ALARM)
                        continue; /* EINVAL without an RTC; the errno table covers them */
                d_raw = raw_ns(c) - o - ref[c];
                d_vdso = vdso_ns(c) - (vdso ? o : 0) - ref[c];
                if (d_raw < -TOLERANCE_NS || d_raw > 30 * NS || d_vdso < -TOLERANCE_NS || d_vdso > 30 * NS) {
                        fprintf(stderr, "victim: clock %d: raw off by %lld ns, vDSO by %lld ns\n", c, (long long) d_raw,
                                (long long) d_vdso);
                        return 1;
                }
        }
        return 0;
}

static int victim_bad_pointers(void) {
        void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, NULL) != -1 || errno != EFAULT)
                return 1;
        if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (void *) 1) != -1 || errno != EFAULT)
                return 2;
        if (syscall(SYS_clock_gettime, CLOCK_REALTIME, ro) != -1 || errno != EFAULT)
                return 3;
        if (syscall(SYS_gettimeofday, ro, NULL) != -1 || errno != EFAULT)
                return 4;
        if (syscall(SYS_time, ro) != -1 || errno != EFAULT)
                return 5;
        /* Kernel space is never ours to write. */
        if (syscall(SYS_clock_gettime, CLOCK_BOOTTIME, (void *) 0xffff880000000000ULL) != -1 || errno != EFAULT)
                return 6;
        return 0;
}

/* Waits until the monotonic clock jumps by more than `jump` seconds
 * between two raw reads: the test changes the offset while we loop. */
static int victim_live_change(int ready_fd, int64_t jump) {
        int64_t prev = raw_ns(CLOCK_MONOTONIC);

        (void) !write(ready_fd, "r", 1);
        for (long i = 0; i < 50 * 1000 * 1000; i++) {
                int64_t now = raw_ns(CLOCK_MONOTONIC);

                if (now - prev > jump * NS)
                        return 0;
                prev = now;
        }
        return 1;
}

static void *thread_reader(void *arg) {
        for (int i = 0; i < 500; i++)
                if (raw_ns(CLOCK_MONOTONIC) == INT64_MIN)
                        return (void *) 1;
        return NULL;
}

static int victim_threads(int n) {
        pthread_t t[16];
        int bad = 0;

        for (int i = 0; i < n; i++)
                pthread_create(&t[i], NULL, thread_reader, NULL);
        for (int i = 0; i < n; i++) {
                void *ret;
                pthread_join(t[i], &ret);
                bad += ret != NULL;
        }
        return bad;
}

static int test_setup(int argc, char *argv[]) {
        if (argc < 2 || strcmp(argv[1], "victim") != 0)
                return -1;
        if (argc == 8 && strcmp(argv[2], "offsets") == 0)
                return victim_offsets(atoll(argv[3]), atoll(argv[4]), atoll(argv[5]), argv[6],
                                      strcmp(argv[7], "vdso") == 0);
        if (argc == 3 && strcmp(argv[2], "bad-pointers") == 0)
                return victim_bad_pointers();
        if (argc == 5 && strcmp(argv[2], "live-change") == 0)
                return victim_live_change(atoi(argv[3]), atoll(argv[4]));
        if (argc == 4 && strcmp(argv[2], "threads") == 0)
                return victim_threads(atoi(argv[3]));
        if (argc == 3 && strcmp(argv[2], "block") == 0)
                return raw_ns(CLOCK_MONOTONIC) == INT64_MIN;
        return 99;
}

/* ---- supervisor side ---- */

struct harness {
        sd_event *e;
        struct tns_supervisor *s;
        struct tns_ns *ns;
        struct tns_child child;
        int status;
        bool exited, idle;
};

static void on_idle(struct tns_supervisor *s, void *userdata) {
        struct harness *h = userdata;

        h->idle = true;
        if (h->exited)
                sd_event_exit(h->e, 0);
}

static int on_exit_child(sd_event_source *src, const siginfo_t *si, void *userdata) {
        struct harness *h = userdata;

        h->exited = true;
        h->status = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
        if (h->idle)
                sd_event_exit(h->e, 0);
        return 0;
}

static int on_timeout(sd_event_source *src, uint64_t usec, void *userdata) {
        return sd_event_exit(((struct harness *) userdata)->e, -ETIMEDOUT);
}

static const struct tns_logger quiet = {tns_log_stderr, (void *) "test-supervisor", LOG_WARNING};

static int harness_start_flags(struct harness *h, const int64_t off[TNS_CLASS_MAX], unsigned flags,
                               const char *const argv[]) {
        struct tns_filter f = {};
        sigset_t m;
        int r;

        memset(h, 0, sizeof(*h));
        sigemptyset(&m);
        sigaddset(&m, SIGCHLD);
        sigprocmask(SIG_BLOCK, &m, NULL);
        if ((r = sd_event_new(&h->e)) < 0 || (r = tns_supervisor_new(h->e, &quiet, &h->s)) < 0 ||
            (r = tns_supervisor_create_ns(h->s, "live", off, &h->ns)) < 0 ||
            (r = tns_filter_build_flags(flags, &f)) < 0)
                return r;
        r = tns_spawn(&f, (char *const *) argv, &h->child, NULL);
        tns_filter_done(&f);
        if (r < 0)
                return r;
        tns_supervisor_set_idle_callback(h->s, on_idle, h);
        r = sd_event_add_child_pidfd(h->e, NULL, h->child.pidfd, WEXITED, on_exit_child, h);
        if (r < 0)
                return r;
        return sd_event_add_time_relative(h->e, NULL, CLOCK_MONOTONIC, 30 * 1000000ULL, 0, on_timeout, h);
}

static int harness_start(struct harness *h, const int64_t off[TNS_CLASS_MAX], const char *const argv[]) {
        return harness_start_flags(h, off, 0, argv);
}

static int harness_serve(struct harness *h) {
        int r = tns_supervisor_add_listener(h->s, h->ns, h->child.listener, h->child.pid);

        return r < 0 ? r : tns_supervisor_run(h->s);
}

static void harness_done(struct harness *h) {
        tns_supervisor_free(h->s);
        close(h->child.pidfd);
        if (h->child.exec_fd >= 0)
                close(h->child.exec_fd);
        sd_event_unref(h->e);
}

static char self[4096];

static void find_self(void) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

        self[n > 0 ? n : 0] = 0;
}

static void host_refs(char *buf, size_t size) {
        size_t n = 0;

        for (clockid_t c = 0; c < 12; c++) {
                struct timespec ts = {};

                clock_gettime(c, &ts);
                n += snprintf(buf + n, size - n, "%s%lld", c ? "," : "", (long long) (ts.tv_sec * NS + ts.tv_nsec));
        }
}

static void offsets_case(const int64_t off[TNS_CLASS_MAX], bool vdso, bool *_failed) {
        struct harness h;
        char a[3][32], refs[512];

        for (int c = 0; c < TNS_CLASS_MAX; c++)
                snprintf(a[c], sizeof(a[c]), "%lld", (long long) off[c]);
        host_refs(refs, sizeof(refs));
        ASSERT_EQ(harness_start_flags(&h, off, vdso ? 0 : TNS_FILTER_NO_VDSO,
                                      (const char *[]){self, "victim", "offsets", a[0], a[1], a[2], refs,
                                                       vdso ? "vdso" : "raw", NULL}),
                  0);
        EXPECT_EQ(harness_serve(&h), 0);
        EXPECT_EQ(h.status, 0);
        EXPECT_GE(tns_supervisor_get_stats(h.s)->notifications, 7);
        EXPECT_EQ(tns_supervisor_get_stats(h.s)->failures, 0);
        if (vdso)
                EXPECT_EQ(tns_supervisor_get_stats(h.s)->vdso_injected, 1);
        harness_done(&h);
}

/* Each clock twice (vDSO and raw syscall), as the kernel's timens.c. */
TEST(offsets_on_every_clock) {
        static const int64_t cases[][TNS_CLASS_MAX] = {
                {0, 0, 0},
                {86400 * NS, 2 * 86400 * NS, 3650LL * 86400 * NS},
                {-5 * NS, -7 * NS, -86400 * NS},
                {1, 999999999, -1},
        };

        find_self();
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                offsets_case(cases[i], true, _failed);
                offsets_case(cases[i], false, _failed);
        }
}

TEST(bad_pointers_get_efault) {
        struct harness h;
        int64_t off[TNS_CLASS_MAX] = {NS, NS, NS};

        ASSERT_EQ(harness_start(&h, off, (const char *[]){self, "victim", "bad-pointers", NULL}), 0);
        EXPECT_EQ(harness_serve(&h), 0);
        EXPECT_EQ(h.status, 0);
        harness_done(&h);
}

struct live {
        struct harness *h;
        int ready_fd;
};

static int on_ready(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        struct live *l = userdata;
        char c;

        (void) !read(fd, &c, 1);
        tns_ns_set_offset(l->h->ns, TNS_CLASS_MONOTONIC, 1000 * NS);
        return sd_event_source_set_enabled(src, SD_EVENT_OFF);
}

TEST(live_change_seen_by_next_read) {
        struct harness h;
        struct live l = {.h = &h};
        int fds[2];
        char wfd[16];

        ASSERT_EQ(pipe(fds), 0); /* inherited by the victim: no O_CLOEXEC */
        snprintf(wfd, sizeof(wfd), "%d", fds[1]);
        ASSERT_EQ(harness_start(&h, NULL, (const char *[]){self, "victim", "live-change", wfd, "500", NULL}), 0);
        close(fds[1]);
        ASSERT_GE(sd_event_add_io(h.e, NULL, fds[0], EPOLLIN, on_ready, &l), 0);
        EXPECT_EQ(harness_serve(&h), 0);
        EXPECT_EQ(h.status, 0);
        close(fds[0]);
        harness_done(&h);
}

TEST(threads_every_call_gets_one_reply) {
        struct harness h;
        const struct tns_supervisor_stats *st;

        ASSERT_EQ(harness_start(&h, NULL, (const char *[]){self, "victim", "threads", "8", NULL}), 0);
        EXPECT_EQ(harness_serve(&h), 0);
        EXPECT_EQ(h.status, 0);
        st = tns_supervisor_get_stats(h.s);
        EXPECT_GE(st->notifications, 8 * 500);
        EXPECT_EQ(st->notifications, st->replied + st->vanished);
        EXPECT_EQ(st->vanished, 0);
        /* Reads answered outside the lock are counted too: each in the
         * latency histogram of its syscall once. */
        for (int i = 0; i < _TNS_SYS_MAX; i++) {
                uint64_t sum = 0;

                for (int b = 0; b < TNS_LATENCY_BUCKETS; b++)
                        sum += st->latency[i][b];
                EXPECT_EQ(sum, st->per_syscall[i]);
        }
        EXPECT_GE(st->per_syscall[TNS_SYS_CLOCK_GETTIME], 8 * 500);
        harness_done(&h);
}

TEST(target_killed_while_waiting) {
        struct harness h;
        const struct tns_supervisor_stats *st;

        ASSERT_EQ(harness_start(&h, NULL, (const char *[]){self, "victim", "block", NULL}), 0);
        /* Nobody serves yet: the victim blocks in its first clock read.
         * Wait until it is there (its state shows in /proc), then kill it. */
        for (int i = 0; i < 2000; i++) {
                char path[64], buf[256] = "";
                FILE *f;

                snprintf(path, sizeof(path), "/proc/%d/wchan", h.child.pid);
                f = fopen(path, "re");
                if (f) {
                        (void) !fgets(buf, sizeof(buf), f);
                        fclose(f);
                }
                if (strstr(buf, "seccomp"))
                        break;
                usleep(1000);
        }
        syscall(SYS_pidfd_send_signal, h.child.pidfd, SIGKILL, NULL, 0);
        EXPECT_EQ(harness_serve(&h), 0);
        EXPECT_EQ(h.status, 128 + SIGKILL);
        EXPECT_TRUE(h.idle);
        st = tns_supervisor_get_stats(h.s);
        /* SIGKILL is delivered asynchronously: the engine may still take
         * the call and reply before the victim dies. Either way the call
         * was answered once or found gone, and the engine survived. */
        EXPECT_LE(st->notifications, 1);
        EXPECT_EQ(st->notifications, st->replied + st->vanished);
        harness_done(&h);
}

/* The vDSO proof's answer, carried by the in-flight page
 * (supervisor-proof-cache.c): a second engine with the first's page takes
 * it at once, as the first proved it; with the key changed in the page
 * (another image, kernel or clocksource) it proves on its own. */
TEST(proof_carried_by_inflight_page) {
        _cleanup_free_ struct tns_inflight *page = calloc(1, sizeof(*page)), *bad = calloc(1, sizeof(*bad));
        struct tns_supervisor *s1 = NULL, *s2 = NULL, *s3 = NULL;
        sd_event *e = NULL;
        char path[sizeof(tns_supervisor_get_stats(s1)->vdso_reads)];

        ASSERT_TRUE(page && bad);
        ASSERT_EQ(sd_event_new(&e), 0);
        ASSERT_EQ(tns_supervisor_new(e, &quiet, &s1), 0);
        tns_supervisor_settle_vdso(s1);
        snprintf(path, sizeof(path), "%s", tns_supervisor_get_stats(s1)->vdso_reads);
        if (!path[0] || strcmp(path, "call-through") == 0) {
                tns_supervisor_free(s1);
                sd_event_unref(e);
                SKIP("no direct vDSO path to carry on this host (%s)", path[0] ? path : "no vDSO injection");
        }
        tns_supervisor_set_inflight(s1, page);
        EXPECT_TRUE(page->proof.key[0] || page->proof.key[1]);
        memcpy(bad, page, sizeof(*bad));
        bad->proof.key[2] ^= 1;

        /* Its own proof runs for 30 ms: right after the start, no answer. */
        ASSERT_EQ(tns_supervisor_new(e, &quiet, &s2), 0);
        EXPECT_STREQ(tns_supervisor_get_stats(s2)->vdso_reads, "");
        tns_supervisor_set_inflight(s2, page);
        EXPECT_STREQ(tns_supervisor_get_stats(s2)->vdso_reads, path);

        ASSERT_EQ(tns_supervisor_new(e, &quiet, &s3), 0);
        tns_supervisor_set_inflight(s3, bad);
        EXPECT_STREQ(tns_supervisor_get_stats(s3)->vdso_reads, "");
        tns_supervisor_settle_vdso(s3); /* proven here, and saved */
        EXPECT_STREQ(tns_supervisor_get_stats(s3)->vdso_reads, path);
        EXPECT_EQ(memcmp(bad->proof.key, page->proof.key, sizeof(page->proof.key)), 0);

        /* The right key over an answer no proof gives (a mode of none,
         * clocks the image never reads directly): proven again. */
        tns_supervisor_set_inflight(s3, NULL);
        tns_supervisor_free(s3);
        bad->proof.direct.mode = 7;
        ASSERT_EQ(tns_supervisor_new(e, &quiet, &s3), 0);
        tns_supervisor_set_inflight(s3, bad);
        EXPECT_STREQ(tns_supervisor_get_stats(s3)->vdso_reads, "");
        tns_supervisor_settle_vdso(s3);
        EXPECT_STREQ(tns_supervisor_get_stats(s3)->vdso_reads, path);

        tns_supervisor_set_inflight(s1, NULL);
        tns_supervisor_set_inflight(s2, NULL);
        tns_supervisor_set_inflight(s3, NULL);
        tns_supervisor_free(s3);
        tns_supervisor_free(s2);
        tns_supervisor_free(s1);
        sd_event_unref(e);
}
