/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The offsets page: the ABI between the supervisor (writer) and every
 * reader of a namespace's clocks — the supervisor's own syscall emulation
 * today, our vDSO image (vdso-patch/) once it is injected. One 4 KiB page
 * per namespace, in a sealed memfd: the supervisor maps it read-write,
 * members read-only. Readers use the seqlock exactly as the kernel's vvar
 * page is read (lib/vdso/gettimeofday.c, vdso_read_begin/retry): a reader
 * that sees an odd sequence or a changed one retries.
 *
 * This header is the one source of truth for the layout: it is included by
 * freestanding code, so it uses nothing but <stdint.h>. */
#pragma once

#include <stdint.h>

#define TNS_PAGE_SIZE 4096
#define TNS_PAGE_MAGIC UINT64_C(0x31656761506e5354) /* "TSnPage1", little endian */
#define TNS_PAGE_VERSION 1

/* Which offset a clock id takes, as the kernel's time namespaces group
 * them (kernel/time/namespace.c, do_timens_ktime_to_host), plus realtime. */
enum tns_clock_class {
        TNS_CLASS_MONOTONIC = 0, /* MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE */
        TNS_CLASS_BOOTTIME = 1, /* BOOTTIME, BOOTTIME_ALARM */
        TNS_CLASS_REALTIME = 2, /* REALTIME, _COARSE, _ALARM, TAI, gettimeofday, time */
        TNS_CLASS_MAX = 3,
};

/* One clock's map from host time to namespace time. offset_sec and
 * offset_nsec are offset_ns split (floor: 0 <= offset_nsec < 1e9), written
 * under the same seqlock, so that the vDSO adds it with no division. The
 * last field is reserved (zero); a rate or a frozen point is in the
 * page's rates[] (struct tns_clock_rate). */
struct tns_clock_map {
        int64_t offset_ns;
        int64_t offset_sec;
        int64_t offset_nsec;
        int64_t reserved;
};

#define TNS_PAGE_MAX_CLOCKS 8

/* flags */
#define TNS_PAGE_F_ACTIVE UINT64_C(1) /* the namespace exists and is served */
/* Some class runs at a rate other than 1 (or stands frozen): readers use
 * rates[] instead of the offsets. Clear, the offsets alone are the map
 * and rates[] is not looked at: a namespace without a rate pays one
 * test of a word on the sequence's cache line. */
#define TNS_PAGE_F_RATED UINT64_C(2)
/* The namespace was made rate-capable (`--rate`, `--freeze`,
 * `--faketime`): its members' filter traps relative waits too, so that a
 * rate set later is honoured by them. Kept on the page so that a
 * restarted supervisor knows it. */
#define TNS_PAGE_F_RATE_CAPABLE UINT64_C(4)

/* A rate as a fixed-point multiplier, TNS_RATE_ONE = 1: 32 bits of
 * fraction (a resolution of 2.3e-10), so that a reader multiplies and
 * shifts, never divides. */
#define TNS_RATE_SHIFT 32
#define TNS_RATE_ONE (UINT64_C(1) << TNS_RATE_SHIFT)

/* A clock of a rated namespace, used when TNS_PAGE_F_RATED is set:
 * ns = anchor_ns + mult * (host - anchor_host), host being the class's
 * host clock in nanoseconds. mult 0 is a frozen clock. run_mult is the
 * rate the clock resumes with when it is unfrozen (the supervisor's
 * record of it, for a restarted supervisor). */
struct tns_clock_rate {
        uint64_t mult;
        int64_t anchor_host;
        int64_t anchor_ns;
        uint64_t run_mult;
};

/* A rated class's map prepared for readers by the writer
 * (tns_rate_fast_prepare(), lib/core/rate.h), so that the reading a
 * reader makes after its counter read is two independent 64-bit
 * multiplies and shifts, and what depends on the base time's seconds
 * alone is one more multiply, with no division and no 128-bit product:
 * the reader's cost of a rate (issue 18). With the anchor's host time
 * split at its whole second, anchor_host = sec0 * 1e9 + r, and mult =
 * mh * 2^32 + ml, for d = sec - sec0 and x = d * mult (below 2^63, by
 * d_max), the map
 *   anchor_ns + floor(mult * (sec * 1e9 + ns - anchor_host) / 2^32)
 * is exactly
 *   (bs + x / 2^32) * 1e9 + bn + mh * ns
 *     + floor(((x mod 2^32) * 1e9 + ml * ns + cl) / 2^32)
 * where cl and the part folded into bs.bn are -mult * r split at bit
 * 32 (floor). stamp is TNS_RATE_FAST_STAMP | the page's sequence as
 * the write that prepared it left it: anything else — a page of an older
 * writer, which leaves fast[] as it found it, a map out of the form's
 * range (0) — and readers apply rates[] (tns_rate_apply_split). */
#define TNS_RATE_FAST_STAMP (UINT64_C(0x74736146) << 32) /* "Fast" */

struct tns_rate_fast {
        uint64_t stamp;
        uint64_t sec0;
        uint64_t d_max;
        uint64_t mult;
        int64_t bs;
        uint64_t bn;
        uint64_t cl;
        uint64_t reserved;
};

struct tns_offsets_page {
        uint64_t magic; /* TNS_PAGE_MAGIC */
        uint32_t version; /* TNS_PAGE_VERSION */
        uint32_t seq; /* seqlock: odd while the supervisor writes */
        uint64_t flags;
        uint64_t ns_id; /* the namespace's id, for /proc/PID/maps readers and debugging */
        struct tns_clock_map clocks[TNS_PAGE_MAX_CLOCKS]; /* indexed by enum tns_clock_class */
        struct tns_clock_rate rates[TNS_PAGE_MAX_CLOCKS]; /* the same, when TNS_PAGE_F_RATED */
        uint8_t pad[32]; /* fast[] on cache lines of its own */
        struct tns_rate_fast fast[TNS_PAGE_MAX_CLOCKS]; /* rates[] prepared for readers */
        uint8_t reserved[TNS_PAGE_SIZE - 32 - TNS_PAGE_MAX_CLOCKS * sizeof(struct tns_clock_map) -
                         TNS_PAGE_MAX_CLOCKS * sizeof(struct tns_clock_rate) - 32 -
                         TNS_PAGE_MAX_CLOCKS * sizeof(struct tns_rate_fast)];
};

_Static_assert(sizeof(struct tns_clock_map) == 32, "clock map is 32 bytes");
_Static_assert(sizeof(struct tns_clock_rate) == 32, "clock rate is 32 bytes");
_Static_assert(sizeof(struct tns_offsets_page) == TNS_PAGE_SIZE, "offsets page is one page");
_Static_assert(__builtin_offsetof(struct tns_offsets_page, seq) == 12, "seq at 12");
_Static_assert(__builtin_offsetof(struct tns_offsets_page, clocks) == 32, "clocks at 32");
_Static_assert(__builtin_offsetof(struct tns_offsets_page, rates) == 288, "rates at 288");
_Static_assert(sizeof(struct tns_rate_fast) == 64, "a prepared rate is one cache line");
_Static_assert(__builtin_offsetof(struct tns_offsets_page, fast) == 576, "fast at 576");

/* A rated clock's reading for a host reading: one 64x64->128 multiply
 * and a shift. The result saturates at the int64 ends (a clock run fast
 * for long enough reaches year 2262 as the kernel's does, and stays). */
static inline int64_t tns_rate_apply(uint64_t mult, int64_t anchor_host, int64_t anchor_ns, int64_t host) {
        __int128 v = ((__int128) host - anchor_host) * (__int128) mult;

        /* An arithmetic shift: floor, also for hosts before the anchor. */
        v = (v >> TNS_RATE_SHIFT) + anchor_ns;
        if (__builtin_expect(v > INT64_MAX, 0))
                return INT64_MAX;
        if (__builtin_expect(v < INT64_MIN, 0))
                return INT64_MIN;
        return (int64_t) v;
}
/* The same for a host reading given as the kernel's vDSO has it, sec
 * and ns (the base time's seconds; ns since them, possibly above 1e9),
 * split into seconds and nanoseconds (0 <= *ret_nsec < 1e9, floor) for
 * a timespec. The part of the product that depends on sec alone is
 * computed and split apart from the part that depends on ns: a reader
 * has sec before its counter read completes, so that division runs while
 * it waits, and what is left after the counter is one multiply, a shift
 * and a carry. False (nothing written) where the fast form does not
 * hold (a result near the int64 ends, ns beyond 2^40): the caller joins
 * and uses tns_rate_apply(). Equal to tns_rate_apply() wherever true
 * (tests/unit/test-rate.c, fuzz-faketime). */
static inline int tns_rate_apply_split(uint64_t mult, int64_t anchor_host, int64_t anchor_ns, uint64_t sec, uint64_t ns,
                                       int64_t *ret_sec, int64_t *ret_nsec) {
        const int64_t nsec_per_sec = 1000000000;
        const int64_t bound = INT64_C(1) << 61; /* b within ±2^62: no int64 end in reach */
        __int128 p, ph;
        int64_t b, bs, bn;
        uint64_t dn, n;

        if (__builtin_expect(sec > (UINT64_C(1) << 33) || ns > (UINT64_C(1) << 40), 0))
                return 0;
        /* The sec part: mult * (sec * 1e9 - anchor_host), split at bit 32
         * (floor) into b's part and the fraction that carries into ns's. */
        p = ((__int128) (int64_t) (sec * (uint64_t) nsec_per_sec) - anchor_host) * (__int128) mult;
        ph = p >> TNS_RATE_SHIFT;
        if (__builtin_expect(ph > bound || ph < -bound || anchor_ns > bound || anchor_ns < -bound, 0))
                return 0;
        b = (int64_t) ph + anchor_ns;
        if (__builtin_expect(b >= 0, 1)) {
                bs = (int64_t) ((uint64_t) b / (uint64_t) nsec_per_sec);
                bn = b - bs * nsec_per_sec;
        } else {
                bs = -((-(b + 1)) / nsec_per_sec) - 1;
                bn = b - bs * nsec_per_sec;
        }
        /* The ns part, with the fraction: < 2^40 * 2^52 >> 32 = 2^60. */
        dn = (uint64_t) (((unsigned __int128) ns * mult + (uint64_t) (p & 0xffffffff)) >> TNS_RATE_SHIFT);
        n = (uint64_t) bn + dn;
        if (__builtin_expect(n >= (uint64_t) nsec_per_sec, 0)) {
                if (n < 4 * (uint64_t) nsec_per_sec) {
                        do {
                                n -= (uint64_t) nsec_per_sec;
                                bs++;
                        } while (n >= (uint64_t) nsec_per_sec);
                } else {
                        bs += (int64_t) (n / (uint64_t) nsec_per_sec);
                        n %= (uint64_t) nsec_per_sec;
                }
        }
        *ret_sec = bs;
        *ret_nsec = (int64_t) n;
        return 1;
}

/* The rated clock at the host time sec.ns from a prepared map (struct
 * tns_rate_fast, read by the caller under the page's sequence seq): false
 * (nothing written) where the form does not hold — another stamp, sec before the
 * anchor's second or d_max seconds past it, ns from 2^31 on (a reader
 * held seconds between its loads) — and the caller uses
 * tns_rate_apply_split(). Equal to tns_rate_apply() wherever true
 * (tests/unit/test-rate.c, fuzz-faketime). Ranges: (x mod 2^32) * 1e9 <
 * 2^62, ml * ns < 2^63, cl < 2^32, so their sum fits 64 bits; mh * ns <
 * 2^51; the seconds stay within 2^32 + 2^31 + 2^21 of 0 (bs is bounded
 * by the writer), far from the int64 nanoseconds' ends (9.2e9 s). */
static inline int tns_rate_fast_apply(const struct tns_rate_fast *f, uint32_t seq, uint64_t sec, uint64_t ns,
                                      int64_t *ret_sec, int64_t *ret_nsec) {
        const uint64_t nsec_per_sec = 1000000000;
        uint64_t d = sec - f->sec0, x, n;
        int64_t s;

        if (__builtin_expect(f->stamp != (TNS_RATE_FAST_STAMP | seq) || d > f->d_max || ns > INT32_MAX, 0))
                return 0;
        x = d * f->mult;
        s = f->bs + (int64_t) (x >> TNS_RATE_SHIFT);
        n = f->bn + ns * (f->mult >> TNS_RATE_SHIFT) +
            (((x & 0xffffffff) * nsec_per_sec + ns * (f->mult & 0xffffffff) + f->cl) >> TNS_RATE_SHIFT);
        if (__builtin_expect(n >= nsec_per_sec, 0)) {
                if (n < 4 * nsec_per_sec) {
                        do {
                                n -= nsec_per_sec;
                                s++;
                        } while (n >= nsec_per_sec);
                } else {
                        s += (int64_t) (n / nsec_per_sec);
                        n %= nsec_per_sec;
                }
        }
        *ret_sec = s;
        *ret_nsec = (int64_t) n;
        return 1;
}

_Static_assert(TNS_CLASS_MAX <= TNS_PAGE_MAX_CLOCKS, "room for every class");

/* Reader side, for our vDSO image (vdso-patch/): callers loop,
 * do { s = begin(p); v = p->...; } while (retry(p, s)); bounding the
 * retries themselves. The supervisor never reads a page to learn offsets
 * (it keeps its own copy, lib/kernel/ns.c), except once when it adopts a
 * namespace at a restart, with tns_page_offsets_read()'s bound. */
static inline int tns_page_read_retry(const struct tns_offsets_page *p, uint32_t start) {
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        return __atomic_load_n(&p->seq, __ATOMIC_RELAXED) != start;
}

/* Every class's offset_ns in one consistent read, or -EBUSY after
 * `tries` attempts that found the page being written (or a sequence
 * left odd): never an unbounded spin on memory someone else writes. */
static inline int tns_page_offsets_read(const struct tns_offsets_page *p, int64_t ret[TNS_CLASS_MAX], unsigned tries) {
        for (unsigned i = 0; i < tries; i++) {
                uint32_t s = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);

                if (s & 1) {
                        __builtin_ia32_pause();
                        continue;
                }
                for (int c = 0; c < TNS_CLASS_MAX; c++)
                        ret[c] = __atomic_load_n(&p->clocks[c].offset_ns, __ATOMIC_RELAXED);
                if (!tns_page_read_retry(p, s))
                        return 0;
        }
        return -16; /* -EBUSY: this header includes nothing but <stdint.h> */
}

/* Writer side (one writer: the supervisor's event loop). The sequence
 * comes from the writer's own counter, never from the page: a page
 * someone else wrote (an odd value left behind) cannot make it stick. */
static inline void tns_page_write_begin(struct tns_offsets_page *p, uint32_t *seq) {
        *seq = (*seq + 1) | 1U;
        __atomic_store_n(&p->seq, *seq, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void tns_page_write_end(struct tns_offsets_page *p, uint32_t *seq) {
        *seq += 1;
        __atomic_store_n(&p->seq, *seq, __ATOMIC_RELEASE);
}

/* The per-process parameter page, mapped read-only just below the offsets
 * page, which is just below our vDSO image:
 *
 *   image_base - 2 * TNS_PAGE_SIZE   struct tns_vdso_params (private copy)
 *   image_base - 1 * TNS_PAGE_SIZE   struct tns_offsets_page (the namespace's memfd)
 *   image_base                       our vDSO image (ELF, linked at 0)
 *
 * The image finds both RIP-relatively, as the kernel's vDSO finds its vvar
 * pages; it calls the kernel's own vDSO functions, whose addresses the
 * injector writes here. */
#define TNS_PARAMS_MAGIC UINT64_C(0x31736d7261506e54) /* "TnParms1" */
#define TNS_PARAMS_VERSION 1

enum tns_vdso_fn {
        TNS_VDSO_CLOCK_GETTIME,
        TNS_VDSO_GETTIMEOFDAY,
        TNS_VDSO_TIME,
        TNS_VDSO_CLOCK_GETRES,
        TNS_VDSO_GETCPU,
        TNS_VDSO_GETRANDOM,
        _TNS_VDSO_FN_MAX,
        TNS_VDSO_FN_SLOTS = 16,
};

struct tns_vdso_params {
        uint64_t magic; /* TNS_PARAMS_MAGIC */
        uint32_t version; /* TNS_PARAMS_VERSION */
        uint32_t flags;
        uint64_t kernel_vdso_base; /* the kernel's vDSO (the original AT_SYSINFO_EHDR) */
        uint64_t kernel_vdso_size;
        uint64_t fn[TNS_VDSO_FN_SLOTS]; /* the kernel's functions, absolute; 0: absent */
        /* Direct reads (issue 19, lib/core/vvar-layout.h): the kernel's
         * clock_data[] and pvclock page in this process, the clock mode
         * the proof ran with (TNS_VCLOCK_MODE_*; any other mode found at a
         * read means the call-through) and a bit per clock id the proof
         * agreed on. All 0: every read calls the kernel's function. */
        uint64_t direct_clock;
        uint64_t direct_pvclock;
        uint32_t direct_mode;
        uint32_t direct_clocks;
        /* A kernel time namespace underneath (the first [vvar] page then
         * is its page, clock_mode TIMENS): how much further the kernel's
         * own clock_data[] is mapped, as proven by timensd in a kernel
         * time namespace of its own; 0: the call-through then. */
        int64_t direct_timens_delta;
        uint8_t reserved[TNS_PAGE_SIZE - 32 - TNS_VDSO_FN_SLOTS * 8 - 32];
};

_Static_assert(sizeof(struct tns_vdso_params) == TNS_PAGE_SIZE, "parameter page is one page");
_Static_assert(__builtin_offsetof(struct tns_vdso_params, fn) == 32, "fn at 32");
_Static_assert(_TNS_VDSO_FN_MAX <= TNS_VDSO_FN_SLOTS, "room for every function");
_Static_assert(__builtin_offsetof(struct tns_vdso_params, direct_clock) == 160, "direct_clock at 160");
