/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timens' x86-64 vDSO image. The supervisor maps, at each exec of a member
 * process (lib/core/offsets-page.h has the layout):
 *
 *   base - 2 * 4096   struct tns_vdso_params   (this process's copy, RO)
 *   base - 1 * 4096   struct tns_offsets_page  (the namespace's memfd, RO)
 *   base              this image
 *
 * and points AT_SYSINFO_EHDR at base. A clock read either reads the
 * kernel's time data itself, for the clocks timensd proved that path on
 * (vdso-direct.h), or calls the kernel's own vDSO function (its address is
 * in the parameter page) and adds the namespace's offset, read under the
 * seqlock as the kernel reads its vvar page (lib/vdso/gettimeofday.c,
 * vdso_read_begin/retry). Everything else is forwarded unchanged.
 *
 * Built freestanding, linked at 0, with no relocations at all
 * (vdso-patch/arch/x86_64/vdso.lds, checked by vdso-patch/check-vdso.c):
 * no libc, no libgcc, no writable data, no GOT; the two pages are reached
 * RIP-relatively through hidden symbols that the linker script defines.
 *
 * Whenever the fast path cannot give the namespace's time (the kernel has
 * no such vDSO function, the offsets page is not one we understand, or its
 * writer looks stuck), we make the system call ourselves: the supervisor
 * intercepts it (seccomp user notification) and answers with shifted time,
 * so such a call is slower, never wrong. It follows that a syscall whose
 * result we shift must never be made from here, and that one we make must
 * never be shifted by us.
 *
 * Stack use is a few words (-Wframe-larger-than in vdso-patch/vdso.mk):
 * Go calls the vDSO on a small system stack.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offsets-page.h"

#define EXPORT __attribute__((visibility("default")))
#define ALIAS(name) __attribute__((weak, alias(#name), visibility("default")))
#define NOINLINE __attribute__((noinline))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define NSEC_PER_SEC 1000000000L
#define NSEC_PER_USEC 1000L

/* include/uapi/linux/time.h: no libc headers in a freestanding image. */
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define CLOCK_THREAD_CPUTIME_ID 3
#define CLOCK_MONOTONIC_RAW 4
#define CLOCK_REALTIME_COARSE 5
#define CLOCK_MONOTONIC_COARSE 6
#define CLOCK_BOOTTIME 7
#define CLOCK_REALTIME_ALARM 8
#define CLOCK_BOOTTIME_ALARM 9
#define CLOCK_TAI 11

/* arch/x86/entry/syscalls/syscall_64.tbl */
#define NR_gettimeofday 96
#define NR_time 201
#define NR_clock_gettime 228
#define NR_clock_getres 229
#define NR_getcpu 309

#define ENOSYS 38

/* The kernel's x86-64 types: struct __kernel_timespec, __kernel_old_timeval,
 * struct timezone (include/uapi/linux/time_types.h, time.h). */
struct vdso_timespec {
        long tv_sec;
        long tv_nsec;
};

struct vdso_timeval {
        long tv_sec;
        long tv_usec;
};

struct vdso_timezone {
        int tz_minuteswest;
        int tz_dsttime;
};

typedef int (*clock_gettime_fn)(int clock, struct vdso_timespec *ts);
typedef int (*gettimeofday_fn)(struct vdso_timeval *tv, struct vdso_timezone *tz);
typedef long (*time_fn)(long *t);
typedef int (*clock_getres_fn)(int clock, struct vdso_timespec *res);
typedef long (*getcpu_fn)(unsigned *cpu, unsigned *node, void *unused);
typedef long (*getrandom_fn)(void *buf, size_t len, unsigned flags, void *opaque_state, size_t opaque_len);

/* Defined by vdso.lds at fixed distances below the image: hidden, so every
 * access is RIP-relative and needs no GOT entry and no relocation. */
extern const struct tns_vdso_params tns_params_page __attribute__((visibility("hidden")));
extern const struct tns_offsets_page tns_offsets_page __attribute__((visibility("hidden")));

/* What to do with each clock id, 4 bits each for ids 0..15 (higher ids,
 * such as the dynamic CPU clocks and CLOCK_AUX, are forwarded):
 *   FWD      call the kernel's function and return its result unchanged;
 *   1 + c    call it and add the offset of class c (enum tns_clock_class);
 *   SYSCALL  make the system call ourselves: the ALARM clocks, which the
 *            kernel's vDSO never serves (lib/vdso/gettimeofday.c knows only
 *            VDSO_HRES, VDSO_COARSE, VDSO_RAW and VDSO_AUX) but passes on
 *            to the syscall from its own text. The supervisor shifts that
 *            syscall, so we must not call the kernel's vDSO for them and
 *            add the offset a second time: from here, the syscall is the
 *            path, and it is what the kernel's vDSO costs for them anyway.
 * The classes are lib/core/clocks.c's tns_clock_class(). */
#define HOW_FWD 0u
#define HOW_SYSCALL 0xfu
#define HOW(id, v) ((uint64_t) (v) << (4 * (id)))
#define CLOCK_HOW_MAP                                                                                                  \
        (HOW(CLOCK_REALTIME, 1 + TNS_CLASS_REALTIME) | HOW(CLOCK_MONOTONIC, 1 + TNS_CLASS_MONOTONIC) |                 \
         HOW(CLOCK_MONOTONIC_RAW, 1 + TNS_CLASS_MONOTONIC) | HOW(CLOCK_REALTIME_COARSE, 1 + TNS_CLASS_REALTIME) |      \
         HOW(CLOCK_MONOTONIC_COARSE, 1 + TNS_CLASS_MONOTONIC) | HOW(CLOCK_BOOTTIME, 1 + TNS_CLASS_BOOTTIME) |          \
         HOW(CLOCK_REALTIME_ALARM, HOW_SYSCALL) | HOW(CLOCK_BOOTTIME_ALARM, HOW_SYSCALL) |                             \
         HOW(CLOCK_TAI, 1 + TNS_CLASS_REALTIME))

_Static_assert(TNS_CLASS_MAX < HOW_SYSCALL - 1, "classes fit the 4-bit map");

/* A writer that leaves the sequence odd for this many polls (a few
 * milliseconds) is taken for stuck — a supervisor killed between
 * tns_page_write_begin() and _end() — and we fall back to the syscall
 * rather than spin forever in every member process. */
#define SEQ_SPIN_MAX 65536u

/* Exported, declared here for -Wmissing-prototypes. */
EXPORT int __vdso_clock_gettime(int clock, struct vdso_timespec *ts);
EXPORT int __vdso_gettimeofday(struct vdso_timeval *tv, struct vdso_timezone *tz);
EXPORT long __vdso_time(long *t);
EXPORT int __vdso_clock_getres(int clock, struct vdso_timespec *res);
EXPORT long __vdso_getcpu(unsigned *cpu, unsigned *node, void *unused);
EXPORT long __vdso_getrandom(void *buf, size_t len, unsigned flags, void *opaque_state, size_t opaque_len);

static inline long syscall2(long nr, long a, long b) {
        long ret;

        __asm__ volatile("syscall" : "=a"(ret) : "0"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
        return ret;
}

static inline long syscall3(long nr, long a, long b, long c) {
        long ret;

        __asm__ volatile("syscall" : "=a"(ret) : "0"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
        return ret;
}

/* The kernel's function, or 0 if its vDSO lacks it. Written once by the
 * injector before the process ran its first instruction. */
static inline uint64_t kernel_fn(enum tns_vdso_fn f) {
        return __atomic_load_n(&tns_params_page.fn[f], __ATOMIC_RELAXED);
}

static inline unsigned clock_how(int clock) {
        return (unsigned) clock < 16 ? (unsigned) (CLOCK_HOW_MAP >> (4 * clock)) & 0xf : HOW_FWD;
}

/* The offset of class c, read as lib/core/offsets-page.h's tns_page_offset()
 * does, but with a bounded wait. False if the page is not one this image
 * understands (a supervisor with a newer ABI; nothing mapped there by
 * mistake would fault before) or the writer looks stuck: the caller then
 * makes the syscall. */
/* An offset split as a timespec: sec * 1e9 + nsec, 0 <= nsec < 1e9 (floor),
 * as the supervisor writes it next to offset_ns: no division here. */
struct split {
        long sec, nsec;
};

/* The offset of class c, read as lib/core/offsets-page.h's tns_page_offset()
 * does, but with a bounded wait. False if the page is not one this image
 * understands (a supervisor with a newer ABI; nothing mapped there by
 * mistake would fault before) or the writer looks stuck: the caller then
 * makes the syscall. */
/* A rated page (TNS_PAGE_F_RATED): read_split() says so, having read the
 * class's rate map under the same sequence instead of its offset, and the
 * caller applies it with rated_apply(). One test of the flags on the
 * sequence's cache line is all a namespace without a rate pays. */
#define SPLIT_FAIL 0
#define SPLIT_OK 1
#define SPLIT_RATED 2

struct rated {
        uint64_t mult;
        int64_t anchor_host, anchor_ns;
};

static inline int read_split(enum tns_clock_class c, struct split *ret, struct rated *ret_rated) {
        const struct tns_offsets_page *p = &tns_offsets_page;
        unsigned spins = 0;
        uint32_t seq;
        uint64_t flags, mult = 0;
        int64_t ah = 0, an = 0;
        long sec = 0, nsec = 0;

        if (unlikely(__atomic_load_n(&p->magic, __ATOMIC_RELAXED) != TNS_PAGE_MAGIC ||
                     __atomic_load_n(&p->version, __ATOMIC_RELAXED) != TNS_PAGE_VERSION))
                return SPLIT_FAIL;
        for (;;) {
                seq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
                if (likely(!(seq & 1))) {
                        flags = __atomic_load_n(&p->flags, __ATOMIC_RELAXED);
                        if (unlikely(flags & TNS_PAGE_F_RATED)) {
                                mult = __atomic_load_n(&p->rates[c].mult, __ATOMIC_RELAXED);
                                ah = __atomic_load_n(&p->rates[c].anchor_host, __ATOMIC_RELAXED);
                                an = __atomic_load_n(&p->rates[c].anchor_ns, __ATOMIC_RELAXED);
                        } else {
                                sec = __atomic_load_n(&p->clocks[c].offset_sec, __ATOMIC_RELAXED);
                                nsec = __atomic_load_n(&p->clocks[c].offset_nsec, __ATOMIC_RELAXED);
                        }
                        if (likely(!tns_page_read_retry(p, seq)))
                                break;
                } else
                        __builtin_ia32_pause();
                if (unlikely(++spins >= SEQ_SPIN_MAX))
                        return SPLIT_FAIL;
        }
        if (unlikely(flags & TNS_PAGE_F_RATED)) {
                *ret_rated = (struct rated){mult, ah, an};
                return SPLIT_RATED;
        }
        ret->sec = sec;
        ret->nsec = nsec;
        return SPLIT_OK;
}

/* The rated clock for the host reading in *ts, replacing it:
 * anchor_ns + mult * (host - anchor_host) (tns_rate_apply: a multiply
 * and a shift), split back by a division by a constant, which the
 * compiler makes a multiply. */
static inline void rated_apply(struct vdso_timespec *ts, const struct rated *r) {
        int64_t host = (int64_t) ((uint64_t) ts->tv_sec * (uint64_t) NSEC_PER_SEC + (uint64_t) ts->tv_nsec);
        int64_t v = tns_rate_apply(r->mult, r->anchor_host, r->anchor_ns, host);

        if (likely(v >= 0)) {
                ts->tv_sec = (long) ((uint64_t) v / (uint64_t) NSEC_PER_SEC);
                ts->tv_nsec = (long) ((uint64_t) v - (uint64_t) ts->tv_sec * (uint64_t) NSEC_PER_SEC);
        } else {
                /* Before the epoch: floor, as tns_ns_to_ts(). */
                ts->tv_sec = -(long) ((uint64_t) (-(v + 1)) / (uint64_t) NSEC_PER_SEC) - 1;
                ts->tv_nsec = (long) (v - (int64_t) ts->tv_sec * NSEC_PER_SEC);
        }
}

/* ts += off, for a normalised ts and any offset, negative ones included.
 * The seconds wrap rather than trap; the supervisor keeps offsets in the
 * kernel's range (lib/kernel/ns.c, tns_offset_check). */
static inline void timespec_add(struct vdso_timespec *ts, struct split off) {
        long sec = off.sec, nsec;

        /* Whole seconds (offsets like "+10d"): tv_nsec stays the kernel's,
         * so a caller that reads it next waits for the kernel's store only,
         * not for ours too: a store-to-load forwarding less, ~1 ns of the
         * ~3 this image adds (tests/bench/bench-vdso). */
        if (off.nsec == 0) {
                ts->tv_sec = (long) ((unsigned long) ts->tv_sec + (unsigned long) sec);
                return;
        }
        nsec = ts->tv_nsec + off.nsec; /* both in [0, 1e9) */
        if (nsec >= NSEC_PER_SEC) {
                nsec -= NSEC_PER_SEC;
                sec++;
        }
        ts->tv_sec = (long) ((unsigned long) ts->tv_sec + (unsigned long) sec);
        ts->tv_nsec = nsec;
}

#include "vdso-direct.h"

/* The kernel's clock_gettime() plus the offset of class c; false if only
 * the syscall can answer. The offset is read after the call: the kernel's
 * function orders its TSC read after everything before it
 * (rdtsc_ordered(), arch/x86/include/asm/msr.h), so a division made
 * before the call would wait for nothing and delay the read, while made
 * after it runs alongside the kernel's conversion of the TSC value
 * (tests/bench/bench-vdso measures ~0.5 ns less per call). */
static inline bool shifted_gettime(uint64_t fn, int clock, enum tns_clock_class c, struct vdso_timespec *ts, int *ret) {
        struct split off;
        int r;

        r = ((clock_gettime_fn) fn)(clock, ts);
        if (likely(r == 0)) {
                struct rated rated;
                int k = read_split(c, &off, &rated);

                if (unlikely(k == SPLIT_FAIL))
                        return false;
                if (unlikely(k == SPLIT_RATED))
                        rated_apply(ts, &rated);
                else
                        timespec_add(ts, off);
        }
        *ret = r;
        return true;
}

static NOINLINE int callthrough_clock_gettime(int clock, struct vdso_timespec *ts) {
        uint64_t fn = kernel_fn(TNS_VDSO_CLOCK_GETTIME);
        unsigned how = clock_how(clock);
        int r;

        if (likely(fn)) {
                if (how == HOW_FWD)
                        return ((clock_gettime_fn) fn)(clock, ts);
                if (how != HOW_SYSCALL && likely(shifted_gettime(fn, clock, how - 1, ts, &r)))
                        return r;
        }
        return (int) syscall2(NR_clock_gettime, clock, (long) ts);
}

/* The seconds and microseconds of CLOCK_REALTIME + offset, computed from
 * the kernel's clock_gettime(), not its gettimeofday(): this is how the
 * kernel's own gettimeofday works (lib/vdso/gettimeofday.c,
 * __cvdso_gettimeofday_data), and truncating to microseconds after adding
 * a sub-microsecond offset keeps gettimeofday() consistent with
 * clock_gettime(CLOCK_REALTIME) — adding it to an already truncated value
 * could read up to 1 us behind a clock_gettime() made just before. The
 * timezone is the kernel's, untouched. */
static inline int sys_gettimeofday(struct vdso_timeval *tv, struct vdso_timezone *tz) {
        return (int) syscall2(NR_gettimeofday, (long) tv, (long) tz);
}

static NOINLINE int callthrough_gettimeofday(struct vdso_timeval *tv, struct vdso_timezone *tz) {
        uint64_t cgt = kernel_fn(TNS_VDSO_CLOCK_GETTIME), gtod = kernel_fn(TNS_VDSO_GETTIMEOFDAY);
        struct vdso_timespec ts;
        int r;

        /* The timezone is the namespace's (settimeofday inside sets it),
         * which only the supervisor knows: a caller that asks for it (rare,
         * it is obsolete) takes the syscall. */
        (void) gtod;
        if (unlikely(!cgt || tz))
                return sys_gettimeofday(tv, tz);
        if (likely(tv)) {
                if (unlikely(!shifted_gettime(cgt, CLOCK_REALTIME, TNS_CLASS_REALTIME, &ts, &r)))
                        return sys_gettimeofday(tv, tz);
                if (unlikely(r != 0))
                        return r;
                tv->tv_sec = ts.tv_sec;
                tv->tv_usec = ts.tv_nsec / NSEC_PER_USEC;
        }
        return 0;
}

/* The kernel's time() is the seconds of CLOCK_REALTIME_COARSE (both read
 * vd->basetime[CLOCK_REALTIME], lib/vdso/gettimeofday.c), so the shifted
 * time() is floor(CLOCK_REALTIME_COARSE + offset): for an offset of whole
 * seconds, the kernel's time() plus those seconds; otherwise the carry
 * needs the nanoseconds, from the coarse clock. */
static NOINLINE long callthrough_time(long *t) {
        uint64_t cgt = kernel_fn(TNS_VDSO_CLOCK_GETTIME), kt = kernel_fn(TNS_VDSO_TIME);
        struct vdso_timespec ts;
        struct split off;
        long sec;
        int r;

        struct rated rated;
        int k = cgt ? read_split(TNS_CLASS_REALTIME, &off, &rated) : SPLIT_FAIL;

        if (unlikely(k == SPLIT_FAIL))
                return syscall2(NR_time, (long) t, 0);
        if (likely(k == SPLIT_OK && off.nsec == 0 && kt))
                sec = ((time_fn) kt)(NULL) + off.sec;
        else {
                r = ((clock_gettime_fn) cgt)(CLOCK_REALTIME_COARSE, &ts);
                if (unlikely(r != 0))
                        return syscall2(NR_time, (long) t, 0);
                if (unlikely(k == SPLIT_RATED))
                        rated_apply(&ts, &rated);
                else
                        timespec_add(&ts, off);
                sec = ts.tv_sec;
        }
        if (t)
                *t = sec;
        return sec;
}

/* The exported time functions: the direct path (vdso-direct.h) for the
 * clocks timensd proved it on, the call-through above for everything else
 * and whenever the direct path declines. Out of line, the call-through
 * costs the direct path no saved registers. */
static NOINLINE int hres_clock_gettime_slow(int clock, struct vdso_timespec *ts) {
        if (likely(direct_hres(clock, clock_how(clock) - 1, ts)))
                return 0;
        return callthrough_clock_gettime(clock, ts);
}

static NOINLINE int hres_clock_gettime(int clock, struct vdso_timespec *ts) {
        if (likely(direct_hres_fast(clock, clock_how(clock) - 1, ts)))
                return 0;
        return hres_clock_gettime_slow(clock, ts);
}

static NOINLINE int coarse_clock_gettime_slow(int clock, struct vdso_timespec *ts) {
        if (likely(direct_coarse(clock, clock_how(clock) - 1, ts)))
                return 0;
        return callthrough_clock_gettime(clock, ts);
}

/* A rated namespace's straight read, then (a tail call) the loop. */
static NOINLINE int coarse_clock_gettime(int clock, struct vdso_timespec *ts) {
        if (likely(direct_coarse_rated(clock, clock_how(clock) - 1, ts)))
                return 0;
        return coarse_clock_gettime_slow(clock, ts);
}

/* The straight coarse read inline, everything else behind a tail call:
 * the registers those need saved are not saved for a coarse read. */
int __vdso_clock_gettime(int clock, struct vdso_timespec *ts) {
        if (!direct_wanted(clock))
                return callthrough_clock_gettime(clock, ts);
        if (clock != CLOCK_REALTIME_COARSE && clock != CLOCK_MONOTONIC_COARSE)
                return hres_clock_gettime(clock, ts);
        if (likely(direct_coarse_fast(clock, clock_how(clock) - 1, ts)))
                return 0;
        return coarse_clock_gettime(clock, ts);
}

/* As the call-through, from CLOCK_REALTIME + offset (microseconds by a
 * constant division, which the compiler makes a multiplication). */
int __vdso_gettimeofday(struct vdso_timeval *tv, struct vdso_timezone *tz) {
        struct vdso_timespec ts;

        if (likely(tv && !tz) && direct_wanted(CLOCK_REALTIME) &&
            likely(direct_hres_fast(CLOCK_REALTIME, TNS_CLASS_REALTIME, &ts) ||
                   direct_hres(CLOCK_REALTIME, TNS_CLASS_REALTIME, &ts))) {
                tv->tv_sec = ts.tv_sec;
                tv->tv_usec = ts.tv_nsec / NSEC_PER_USEC;
                return 0;
        }
        return callthrough_gettimeofday(tv, tz);
}

static NOINLINE long time_slow(long *t) {
        struct vdso_timespec ts;
        long sec;

        /* A rated namespace: the seconds of its straight coarse read. */
        if (direct_wanted(CLOCK_REALTIME_COARSE) &&
            likely(direct_coarse_rated(CLOCK_REALTIME_COARSE, TNS_CLASS_REALTIME, &ts))) {
                if (t)
                        *t = ts.tv_sec;
                return ts.tv_sec;
        }
        if (direct_wanted(CLOCK_REALTIME_COARSE) && direct_time_slow(&sec)) {
                if (t)
                        *t = sec;
                return sec;
        }
        return callthrough_time(t);
}

/* The seconds of CLOCK_REALTIME_COARSE + offset, with no counter read. */
long __vdso_time(long *t) {
        long sec;

        if (direct_wanted(CLOCK_REALTIME_COARSE) && likely(direct_time(&sec))) {
                if (t)
                        *t = sec;
                return sec;
        }
        return time_slow(t);
}

/* Resolutions, CPU numbers and random bytes are the same in every
 * namespace: forwarded as they are, by a tail call. */
int __vdso_clock_getres(int clock, struct vdso_timespec *res) {
        uint64_t fn = kernel_fn(TNS_VDSO_CLOCK_GETRES);

        if (likely(fn))
                return ((clock_getres_fn) fn)(clock, res);
        return (int) syscall2(NR_clock_getres, clock, (long) res);
}

long __vdso_getcpu(unsigned *cpu, unsigned *node, void *unused) {
        uint64_t fn = kernel_fn(TNS_VDSO_GETCPU);

        if (likely(fn))
                return ((getcpu_fn) fn)(cpu, node, unused);
        return syscall3(NR_getcpu, (long) cpu, (long) node, (long) unused);
}

/* vgetrandom's opaque state is set up through the kernel's function
 * (arch/x86/entry/vdso/vgetrandom.c), so forwarding keeps it working. A
 * kernel without it (< 6.11) has no getrandom in its vDSO: the injector
 * then hides ours (tns_vdso_elf_hide) so that libc uses the syscall; this
 * -ENOSYS is only for a caller that looked it up anyway. */
long __vdso_getrandom(void *buf, size_t len, unsigned flags, void *opaque_state, size_t opaque_len) {
        uint64_t fn = kernel_fn(TNS_VDSO_GETRANDOM);

        if (likely(fn))
                return ((getrandom_fn) fn)(buf, len, flags, opaque_state, opaque_len);
        return -ENOSYS;
}

/* The unprefixed names, weak, as the kernel's vclock_gettime.c, vgetcpu.c
 * and vgetrandom.c define them. */
int clock_gettime(int clock, struct vdso_timespec *ts) ALIAS(__vdso_clock_gettime);
int gettimeofday(struct vdso_timeval *tv, struct vdso_timezone *tz) ALIAS(__vdso_gettimeofday);
long time(long *t) ALIAS(__vdso_time);
int clock_getres(int clock, struct vdso_timespec *res) ALIAS(__vdso_clock_getres);
long getcpu(unsigned *cpu, unsigned *node, void *unused) ALIAS(__vdso_getcpu);
long getrandom(void *buf, size_t len, unsigned flags, void *opaque_state, size_t opaque_len) ALIAS(__vdso_getrandom);
