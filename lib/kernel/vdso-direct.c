/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ns.h"
#include "offsets-page.h"
#include "util.h"
#include "vdso-direct.h"
#include "vdso-elf.h"
#include "vdso-host.h"
#include "vvar-layout.h"

/* The clocks the image may read directly: every shifted clock the
 * kernel's vDSO serves (the ALARM ones it never does). */
#define DIRECT_CANDIDATES                                                                                              \
        ((1u << CLOCK_REALTIME) | (1u << CLOCK_MONOTONIC) | (1u << CLOCK_MONOTONIC_RAW) |                              \
         (1u << CLOCK_REALTIME_COARSE) | (1u << CLOCK_MONOTONIC_COARSE) | (1u << CLOCK_BOOTTIME) | (1u << CLOCK_TAI))

/* Reads per clock in one sweep, and the least time the sweeps cover: a few
 * of the kernel's updates of its data (one per tick) fall inside. */
#define PROOF_READS 300
#define PROOF_MIN_NS (30 * 1000 * 1000LL)

/* What the image's call-through gets in the proof: a failure it returns
 * as is, so that a read that did not take the direct path disagrees. */
#define REFUSED (-1000)

typedef int (*gettime_fn)(clockid_t, struct timespec *);
typedef int (*gtod_fn)(struct timeval *, void *);
typedef long (*time_fn)(long *);

static int refuse_gettime(clockid_t c, struct timespec *ts) {
        (void) c;
        (void) ts;
        return REFUSED;
}

static int refuse_gettimeofday(struct timeval *tv, void *tz) {
        (void) tv;
        (void) tz;
        return REFUSED;
}

static long refuse_time(long *t) {
        (void) t;
        return REFUSED;
}

struct maps {
        uint64_t vdso, vvar, vvar_end, vclock, vclock_end;
};

static int read_maps(struct maps *m) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/self/maps", "re");
        char line[512];

        if (!f)
                return negative_errno();
        while (fgets(line, sizeof(line), f)) {
                unsigned long lo, hi;

                if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
                        continue;
                if (strstr(line, "[vvar]")) {
                        m->vvar = lo;
                        m->vvar_end = hi;
                } else if (strstr(line, "[vvar_vclock]")) {
                        m->vclock = lo;
                        m->vclock_end = hi;
                }
        }
        return 0;
}

static __int128 ns_of(const struct timespec *ts) {
        return (__int128) ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* Our image's three time functions in the child's layout. */
struct ours {
        gettime_fn gettime;
        gtod_fn gettimeofday;
        time_fn time;
};

/* The child's layout, as the injector makes it in a member: parameter
 * page, offsets page (zero offsets), image. Written into a memfd and
 * mapped from it, the image read + exec from the start: timensd runs with
 * MemoryDenyWriteExecute= (systemd/timensd.service.in), which refuses to
 * make written memory executable. */
static int lay_out(const struct tns_vdso_host *h, const struct maps *m, uint32_t mode, int64_t timens_delta,
                   struct ours *ret) {
        size_t len = 2 * TNS_PAGE_SIZE + h->image.size;
        struct tns_vdso_params params = {
                .magic = TNS_PARAMS_MAGIC,
                .version = TNS_PARAMS_VERSION,
                .kernel_vdso_base = m->vdso,
                .kernel_vdso_size = h->kernel_size,
                .direct_clock = m->vvar,
                .direct_pvclock = mode == TNS_VCLOCK_MODE_PVCLOCK ? m->vclock : 0,
                .direct_mode = mode,
                .direct_clocks = DIRECT_CANDIDATES,
                .direct_timens_delta = timens_delta,
        };
        struct tns_offsets_page page = {
                .magic = TNS_PAGE_MAGIC,
                .version = TNS_PAGE_VERSION,
                .flags = TNS_PAGE_F_ACTIVE,
        };
        _cleanup_close_ int fd = -EBADF;
        struct tns_vdso_elf e;
        uint64_t off[3];
        uint8_t *area;

        for (int i = 0; i < _TNS_VDSO_FN_MAX; i++)
                params.fn[i] = h->fn[i] ? m->vdso + h->fn[i] : 0;
        params.fn[TNS_VDSO_CLOCK_GETTIME] = (uint64_t) (uintptr_t) refuse_gettime;
        params.fn[TNS_VDSO_GETTIMEOFDAY] = (uint64_t) (uintptr_t) refuse_gettimeofday;
        params.fn[TNS_VDSO_TIME] = (uint64_t) (uintptr_t) refuse_time;
        fd = memfd_create("timens-vdso-proof", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (pwrite(fd, &params, sizeof(params), 0) != sizeof(params) ||
            pwrite(fd, &page, sizeof(page), TNS_PAGE_SIZE) != sizeof(page) ||
            pwrite(fd, h->image.data, h->image.size, 2 * TNS_PAGE_SIZE) != (ssize_t) h->image.size)
                return -EIO;
        area = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
        if (area == MAP_FAILED || mmap(area + 2 * TNS_PAGE_SIZE, h->image.size, PROT_READ | PROT_EXEC,
                                       MAP_SHARED | MAP_FIXED, fd, 2 * TNS_PAGE_SIZE) == MAP_FAILED)
                return -errno;
        if (tns_vdso_elf_parse(area + 2 * TNS_PAGE_SIZE, h->image.size, &e) < 0 ||
            tns_vdso_elf_lookup(&e, "__vdso_clock_gettime", TNS_VDSO_VERSION, &off[0]) < 0 ||
            tns_vdso_elf_lookup(&e, "__vdso_gettimeofday", TNS_VDSO_VERSION, &off[1]) < 0 ||
            tns_vdso_elf_lookup(&e, "__vdso_time", TNS_VDSO_VERSION, &off[2]) < 0)
                return -EBADMSG;
        ret->gettime = (gettime_fn) (uintptr_t) (area + 2 * TNS_PAGE_SIZE + off[0]);
        ret->gettimeofday = (gtod_fn) (uintptr_t) (area + 2 * TNS_PAGE_SIZE + off[1]);
        ret->time = (time_fn) (uintptr_t) (area + 2 * TNS_PAGE_SIZE + off[2]);
        return 0;
}

/* One sweep: PROOF_READS reads per candidate through ours, each between
 * two of the kernel's; returns the candidates that never disagreed. */
static uint32_t sweep(const struct tns_vdso_host *h, const struct maps *m, const struct ours *o, uint32_t clocks) {
        gettime_fn kgettime = (gettime_fn) (uintptr_t) (m->vdso + h->fn[TNS_VDSO_CLOCK_GETTIME]);
        gtod_fn kgtod =
                h->fn[TNS_VDSO_GETTIMEOFDAY] ? (gtod_fn) (uintptr_t) (m->vdso + h->fn[TNS_VDSO_GETTIMEOFDAY]) : NULL;

        for (clockid_t c = 0; c < 32; c++) {
                if (!(clocks & (1u << c)))
                        continue;
                for (int i = 0; i < PROOF_READS; i++) {
                        struct timespec a, b, x;

                        if (kgettime(c, &a) != 0 || o->gettime(c, &x) != 0 || kgettime(c, &b) != 0 ||
                            ns_of(&x) < ns_of(&a) || ns_of(&x) > ns_of(&b) || x.tv_nsec < 0 ||
                            x.tv_nsec >= 1000000000) {
                                clocks &= ~(1u << c);
                                break;
                        }
                }
        }
        /* gettimeofday reads REALTIME, time the coarse REALTIME. */
        for (int i = 0; kgtod && (clocks & (1u << CLOCK_REALTIME)) && i < PROOF_READS; i++) {
                struct timeval a, b, x;

                if (kgtod(&a, NULL) != 0 || o->gettimeofday(&x, NULL) != 0 || kgtod(&b, NULL) != 0 ||
                    x.tv_sec * 1000000 + x.tv_usec < a.tv_sec * 1000000 + a.tv_usec ||
                    x.tv_sec * 1000000 + x.tv_usec > b.tv_sec * 1000000 + b.tv_usec)
                        clocks &= ~(1u << CLOCK_REALTIME);
        }
        for (int i = 0; (clocks & (1u << CLOCK_REALTIME_COARSE)) && i < PROOF_READS; i++) {
                struct timespec a, b;
                long x;

                if (kgettime(CLOCK_REALTIME_COARSE, &a) != 0 || (x = o->time(NULL)) == REFUSED ||
                    kgettime(CLOCK_REALTIME_COARSE, &b) != 0 || x < a.tv_sec || x > b.tv_sec)
                        clocks &= ~(1u << CLOCK_REALTIME_COARSE);
        }
        return clocks;
}

/* Puts the (single-threaded) caller in a new kernel time namespace with
 * offsets of its own, so that the proof checks they are added too. */
static int enter_kernel_timens(void) {
        static const char offsets[] = "monotonic 1000 500000000\nboottime 2000 250000000\n";
        _cleanup_close_ int wr = -EBADF, ns = -EBADF;

        if (unshare(CLONE_NEWTIME) < 0)
                return negative_errno();
        wr = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
        if (wr < 0 || write(wr, offsets, sizeof(offsets) - 1) != (ssize_t) sizeof(offsets) - 1)
                return -EIO;
        ns = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
        if (ns < 0 || setns(ns, CLONE_NEWTIME) < 0)
                return -EIO;
        return 0;
}

/* The child: lays the image out, sweeps until PROOF_MIN_NS have passed,
 * and writes the clocks that agreed. A wrong address kills only it. With
 * a timens_delta, the same in a kernel time namespace of its own (whose
 * page the image must pass by, and whose offsets it must add). */
__attribute__((noreturn)) static void prove_child(const struct tns_vdso_host *h, const struct maps *m, uint32_t mode,
                                                  int64_t timens_delta, int fd) {
        uint32_t clocks = DIRECT_CANDIDATES;
        struct timespec start, now;
        struct ours o = {};

        if (timens_delta && enter_kernel_timens() < 0)
                _exit(1);
        if (lay_out(h, m, mode, timens_delta, &o) < 0)
                _exit(1);
        clock_gettime(CLOCK_MONOTONIC, &start);
        do {
                clocks = sweep(h, m, &o, clocks);
                clock_gettime(CLOCK_MONOTONIC, &now);
        } while (clocks && ns_of(&now) - ns_of(&start) < PROOF_MIN_NS);
        _exit(write(fd, &clocks, sizeof(clocks)) == sizeof(clocks) ? 0 : 1);
}

/* A proof in flight: its child and the pipe it answers on. */
struct proof {
        pid_t pid;
        int rd;
};

static int proof_start(const struct tns_vdso_host *h, const struct maps *m, uint32_t mode, int64_t timens_delta,
                       struct proof *ret) {
        _cleanup_close_ int rd = -EBADF, wr = -EBADF;
        int fds[2];
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        rd = fds[0];
        wr = fds[1];
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0)
                prove_child(h, m, mode, timens_delta, wr);
        *ret = (struct proof){pid, TAKE_FD(rd)};
        return 0;
}

/* The clocks a proof agreed on, in *ret; its child reaped either way
 * (killed if it has not answered within timeout_ms). */
static int proof_finish(struct proof *pr, int timeout_ms, uint32_t *ret) {
        _cleanup_close_ int rd = pr->rd;
        struct pollfd p = {.fd = rd, .events = POLLIN};
        ssize_t n = -1;
        int status;

        if (poll(&p, 1, timeout_ms) > 0)
                n = read(rd, ret, sizeof(*ret));
        if (n != sizeof(*ret))
                (void) kill(pr->pid, SIGKILL);
        while (waitpid(pr->pid, &status, 0) < 0 && errno == EINTR)
                ;
        return n == sizeof(*ret) && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPROTO;
}

static void call_through(struct tns_vdso_direct *d, const char *why) {
        *d = (struct tns_vdso_direct){};
        snprintf(d->why, sizeof(d->why), "%s", why);
}

struct tns_vdso_probe {
        struct timespec started;
        struct maps m;
        int32_t mode;
        struct proof plain, timens;
        bool plain_started, timens_started;
};

int tns_vdso_direct_probe_start(const struct tns_vdso_host *h, struct tns_vdso_direct *ret,
                                struct tns_vdso_probe **ret_probe) {
        _cleanup_free_ struct tns_vdso_probe *p = calloc(1, sizeof(*p));
        const struct tns_kvdso_clock *vc;
        struct utsname u;
        char why[112];

        *ret_probe = NULL;
        if (!p) {
                call_through(ret, "out of memory for the proof");
                return -ENOMEM;
        }
        p->m.vdso = getauxval(AT_SYSINFO_EHDR);
        if (uname(&u) < 0 || tns_vvar_layout_for_release(u.release) != TNS_VVAR_DATASTORE) {
                snprintf(why, sizeof(why), "kernel %s: vvar layout unknown", u.release);
                call_through(ret, why);
                return 0;
        }
        if (!p->m.vdso || !h->image.data || read_maps(&p->m) < 0 || !p->m.vvar ||
            p->m.vvar_end - p->m.vvar < TNS_PAGE_SIZE) {
                call_through(ret, "no [vvar] mapping");
                return 0;
        }
        vc = (const struct tns_kvdso_clock *) (uintptr_t) p->m.vvar;
        p->mode = __atomic_load_n(&vc->clock_mode, __ATOMIC_RELAXED);
        switch (p->mode) {
        case TNS_VCLOCK_MODE_TSC:
                break;
        case TNS_VCLOCK_MODE_PVCLOCK:
                if (!p->m.vclock || p->m.vclock_end - p->m.vclock < TNS_PAGE_SIZE) {
                        call_through(ret, "kvm-clock without a [vvar_vclock] page");
                        return 0;
                }
                break;
        case TNS_VCLOCK_MODE_TIMENS:
                call_through(ret, "timensd runs in a kernel time namespace");
                return 0;
        case TNS_VCLOCK_MODE_NONE:
                call_through(ret, "the clocksource has no vDSO read");
                return 0;
        default:
                snprintf(why, sizeof(why), "clock mode %d not read directly", p->mode);
                call_through(ret, why);
                return 0;
        }
        /* Members under a kernel time namespace (timensctl run gives each
         * command one) are read directly only if the same clocks agree in
         * one, proven beside the plain proof (at once); otherwise they take
         * the call-through (needs CLONE_NEWTIME, which the unit allows:
         * RestrictNamespaces=). */
        p->timens_started = p->m.vvar_end - p->m.vvar > TNS_VVAR_DATASTORE_TIMENS_DELTA &&
                            proof_start(h, &p->m, (uint32_t) p->mode, TNS_VVAR_DATASTORE_TIMENS_DELTA, &p->timens) >= 0;
        p->plain_started = proof_start(h, &p->m, (uint32_t) p->mode, 0, &p->plain) >= 0;
        if (!p->plain_started) {
                tns_vdso_direct_probe_abort(TAKE_PTR(p));
                call_through(ret, "the proof against the kernel's vDSO could not start");
                return 0;
        }
        call_through(ret, "the proof against the kernel's vDSO is running");
        clock_gettime(CLOCK_MONOTONIC, &p->started);
        *ret_probe = TAKE_PTR(p);
        return 0;
}

unsigned tns_vdso_direct_probe_fds(const struct tns_vdso_probe *p, int ret[2]) {
        unsigned n = 0;

        ret[n++] = p->plain.rd;
        if (p->timens_started)
                ret[n++] = p->timens.rd;
        return n;
}

/* What is left of the proof's time: never more than
 * TNS_VDSO_PROOF_TIMEOUT_MS from its start in all. */
static int time_left_ms(const struct tns_vdso_probe *p) {
        struct timespec now;
        int64_t spent;

        clock_gettime(CLOCK_MONOTONIC, &now);
        spent = (ns_of(&now) - ns_of(&p->started)) / 1000000;
        return spent >= TNS_VDSO_PROOF_TIMEOUT_MS ? 0 : (int) (TNS_VDSO_PROOF_TIMEOUT_MS - spent);
}

void tns_vdso_direct_probe_finish(struct tns_vdso_probe *p, struct tns_vdso_direct *ret) {
        uint32_t clocks = 0, timens_clocks = 0;
        int64_t timens_delta = 0;
        int plain;

        plain = proof_finish(&p->plain, time_left_ms(p), &clocks);
        if (p->timens_started && proof_finish(&p->timens, time_left_ms(p), &timens_clocks) >= 0 && plain >= 0 &&
            clocks != 0 && timens_clocks == clocks)
                timens_delta = TNS_VVAR_DATASTORE_TIMENS_DELTA;
        if (plain < 0 || clocks == 0) {
                free(p);
                return call_through(ret, "the proof against the kernel's vDSO failed");
        }
        *ret = (struct tns_vdso_direct){
                .mode = (uint32_t) p->mode,
                .clocks = clocks,
                .clock_delta = (int64_t) (p->m.vvar - p->m.vdso),
                .pvclock_delta = p->mode == TNS_VCLOCK_MODE_PVCLOCK ? (int64_t) (p->m.vclock - p->m.vdso) : 0,
                .timens_delta = timens_delta,
        };
        free(p);
        if (!timens_delta)
                snprintf(ret->why, sizeof(ret->why), "not under a kernel time namespace (unproven there)");
        if (clocks != DIRECT_CANDIDATES)
                snprintf(ret->why, sizeof(ret->why), "clocks 0x%x disagreed: call-through for them",
                         DIRECT_CANDIDATES & ~clocks);
}

static void proof_abort(struct proof *pr) {
        (void) kill(pr->pid, SIGKILL);
        while (waitpid(pr->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        safe_close(pr->rd);
}

void tns_vdso_direct_probe_abort(struct tns_vdso_probe *p) {
        if (!p)
                return;
        if (p->plain_started)
                proof_abort(&p->plain);
        if (p->timens_started)
                proof_abort(&p->timens);
        free(p);
}

void tns_vdso_direct_probe(const struct tns_vdso_host *h, struct tns_vdso_direct *ret) {
        struct tns_vdso_probe *p;

        if (tns_vdso_direct_probe_start(h, ret, &p) >= 0 && p)
                tns_vdso_direct_probe_finish(p, ret);
}

bool tns_vdso_direct_valid(const struct tns_vdso_direct *d) {
        return (d->mode == TNS_VCLOCK_MODE_TSC || d->mode == TNS_VCLOCK_MODE_PVCLOCK) && d->clocks &&
               !(d->clocks & ~(uint32_t) (DIRECT_CANDIDATES)) && memchr(d->why, '\0', sizeof(d->why));
}

const char *tns_vdso_direct_path(const struct tns_vdso_direct *d) {
        switch (d->mode) {
        case TNS_VCLOCK_MODE_TSC:
                return "tsc";
        case TNS_VCLOCK_MODE_PVCLOCK:
                return "pvclock";
        default:
                return "call-through";
        }
}
