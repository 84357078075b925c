/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The direct read path of our image (issue 19): the kernel's time data
 * read here, as the kernel's own vDSO reads it (lib/vdso/gettimeofday.c,
 * do_hres/do_coarse; arch/x86/include/asm/vdso/gettimeofday.h), with the
 * namespace's offset read in the same retry loop, instead of calling the
 * kernel's function and adding the offset after it.
 *
 * Used only for the clocks whose bit the injector set in the parameter
 * page, which it sets only after timensd proved, at its start, that this
 * path and the kernel's agree on this kernel (lib/kernel/vdso-direct.c).
 * Any state the proof did not cover — another clock mode than the proven
 * one (a clocksource change, a kernel time namespace's TIMENS page), a
 * pvclock without its stable bit, a counter too far from the last update
 * for a 64-bit product, a writer that looks stuck — returns false, and
 * the caller takes today's call-through path, which is never wrong.
 *
 * No division: the seconds carry is at most a few subtractions, and the
 * only product wider than 64 bits (pvclock's scale) is one mulq.
 *
 * Included by vdso.c after its definitions (struct split, clocks, the two
 * pages, SEQ_SPIN_MAX); kept apart so that the offset arithmetic of the
 * call-through path and this one can change independently.
 */
#pragma once

#include "vvar-layout.h"

#define NSEC_PER_SEC_U 1000000000ULL
#define DIRECT_INLINE inline __attribute__((always_inline))

static DIRECT_INLINE bool direct_wanted(int clock) {
        return (unsigned) clock < 32 &&
               ((__atomic_load_n(&tns_params_page.direct_clocks, __ATOMIC_RELAXED) >> clock) & 1u);
}

/* rdtsc_ordered() (arch/x86/include/asm/msr.h): LFENCE keeps the counter
 * read after the loads of the sequence before it, on Intel and on AMD
 * (where the kernel makes LFENCE dispatch-serialising). */
static DIRECT_INLINE uint64_t direct_rdtsc_ordered(void) {
        uint32_t lo, hi;

        __asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
        return ((uint64_t) hi << 32) | lo;
}

/* vread_pvclock(): kvm-clock's nanoseconds, from vCPU 0's page (valid for
 * every vCPU only while the host sets the stable bit). */
static DIRECT_INLINE bool direct_pvclock(const struct tns_pvclock_info *p, uint64_t *ret) {
        unsigned spins = 0;

        for (;;) {
                uint32_t version = __atomic_load_n(&p->version, __ATOMIC_ACQUIRE) & ~1u;
                uint64_t delta, ns;
                int8_t shift;

                if (unlikely(!(__atomic_load_n(&p->flags, __ATOMIC_RELAXED) & TNS_PVCLOCK_TSC_STABLE_BIT)))
                        return false;
                delta = direct_rdtsc_ordered() - __atomic_load_n(&p->tsc_timestamp, __ATOMIC_RELAXED);
                /* A TSC read a little before the host's timestamp (another
                 * vCPU's): no time since it, as the kernel's read clamps. */
                if ((int64_t) delta < 0)
                        delta = 0;
                shift = __atomic_load_n(&p->tsc_shift, __ATOMIC_RELAXED);
                if (shift < 0)
                        delta >>= -shift;
                else
                        delta <<= shift;
                ns = __atomic_load_n(&p->system_time, __ATOMIC_RELAXED) +
                     (uint64_t) (((unsigned __int128) delta *
                                  __atomic_load_n(&p->tsc_to_system_mul, __ATOMIC_RELAXED)) >>
                                 32);
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (likely(__atomic_load_n(&p->version, __ATOMIC_RELAXED) == version)) {
                        *ret = ns & (uint64_t) INT64_MAX;
                        return true;
                }
                if (unlikely(++spins >= SEQ_SPIN_MAX))
                        return false;
        }
}

static DIRECT_INLINE const struct tns_kvdso_clock *direct_clock_data(int cs) {
        return (const struct tns_kvdso_clock *) (uintptr_t) __atomic_load_n(&tns_params_page.direct_clock,
                                                                            __ATOMIC_RELAXED) +
               cs;
}

/* A kernel time namespace underneath: the first [vvar] page is its page
 * (sequence 1 and clock_mode TIMENS for good), and the kernel's own
 * clock_data[] is direct_timens_delta further, as the kernel's
 * do_hres_timens() finds it. If *vc is such a page, *kns becomes it and
 * *vc the kernel's data; false if that is not proven by timensd (delta
 * 0): the call-through answers. The straight paths look first: the clock
 * mode is in the cache line of the sequence they load anyway. */
static DIRECT_INLINE bool direct_timens_pass(const struct tns_kvdso_clock **vc, const struct tns_kvdso_clock **kns) {
        int64_t d;

        if (likely(__atomic_load_n(&(*vc)->clock_mode, __ATOMIC_RELAXED) != TNS_VCLOCK_MODE_TIMENS))
                return true;
        d = __atomic_load_n(&tns_params_page.direct_timens_delta, __ATOMIC_RELAXED);
        if (!d)
                return false;
        *kns = *vc;
        *vc = (const struct tns_kvdso_clock *) (uintptr_t) ((uintptr_t) *vc + (uint64_t) d);
        return true;
}

/* Its offset for clock, kept where the base times are (struct
 * timens_offset: seconds, then nanoseconds below 1e9); fixed once a
 * process has entered the namespace, so read without a sequence. */
static DIRECT_INLINE void direct_timens_offset(const struct tns_kvdso_clock *kns, int clock, uint64_t *sec,
                                               uint64_t *ns) {
        *sec += __atomic_load_n(&kns->basetime[clock].sec, __ATOMIC_RELAXED);
        *ns += __atomic_load_n(&kns->basetime[clock].nsec, __ATOMIC_RELAXED);
}

/* The offsets page is one this image reads. Its version only, in the
 * cache line of the sequence: a newer timensd that adopts the namespace's
 * memfd at a restart may write another layout there, while the page's
 * magic is certain on this path (the parameter page that enabled it came
 * with the same memfd). read_split() checks both, for the call-through. */
static DIRECT_INLINE bool direct_page_ok(void) {
        return likely(__atomic_load_n(&tns_offsets_page.version, __ATOMIC_RELAXED) == TNS_PAGE_VERSION);
}

/* A namespace whose clocks run at a rate (issue 18): the class's map is
 * read instead of its offset, in the same retry, and applied to the host
 * reading in nanoseconds before it is split — one multiply to join the
 * kernel's seconds and nanoseconds, the rate's multiply and shift, and a
 * division by a constant (a multiply), where the call-through would read
 * the counter again through the kernel's function. The flag is read after
 * the page's sequence and checked by its retry: a rate set meanwhile is
 * never missed. */
static DIRECT_INLINE bool direct_rated(const struct tns_offsets_page *p) {
        return __atomic_load_n(&p->flags, __ATOMIC_RELAXED) & TNS_PAGE_F_RATED;
}

static DIRECT_INLINE void direct_rate_load(const struct tns_offsets_page *p, enum tns_clock_class c,
                                           struct rated *ret) {
        ret->mult = __atomic_load_n(&p->rates[c].mult, __ATOMIC_RELAXED);
        ret->anchor_host = __atomic_load_n(&p->rates[c].anchor_host, __ATOMIC_RELAXED);
        ret->anchor_ns = __atomic_load_n(&p->rates[c].anchor_ns, __ATOMIC_RELAXED);
}

/* The class's prepared map (struct tns_rate_fast), for the straight
 * paths: field by field, under the page's sequence. */
static DIRECT_INLINE void direct_fast_load(const struct tns_offsets_page *p, enum tns_clock_class c,
                                           struct tns_rate_fast *ret) {
        const struct tns_rate_fast *f = &p->fast[c];

        ret->stamp = __atomic_load_n(&f->stamp, __ATOMIC_RELAXED);
        ret->sec0 = __atomic_load_n(&f->sec0, __ATOMIC_RELAXED);
        ret->d_max = __atomic_load_n(&f->d_max, __ATOMIC_RELAXED);
        ret->mult = __atomic_load_n(&f->mult, __ATOMIC_RELAXED);
        ret->bs = __atomic_load_n(&f->bs, __ATOMIC_RELAXED);
        ret->bn = __atomic_load_n(&f->bn, __ATOMIC_RELAXED);
        ret->cl = __atomic_load_n(&f->cl, __ATOMIC_RELAXED);
}

/* The rated clock at the host time sec.ns from the prepared map read
 * under the page's sequence oseq; false (nothing written) where its form
 * does not hold, and the caller takes its loop, which applies rates[]. */
static DIRECT_INLINE bool direct_store_fast(struct vdso_timespec *ts, const struct tns_rate_fast *rf, uint32_t oseq,
                                            uint64_t sec, uint64_t ns) {
        int64_t s, n;

        if (unlikely(!tns_rate_fast_apply(rf, oseq, sec, ns, &s, &n)))
                return false;
        ts->tv_sec = (long) s;
        ts->tv_nsec = (long) n;
        return true;
}

/* The rated clock at the host time sec.ns (ns possibly above 1e9). */
static DIRECT_INLINE void direct_store_rated(struct vdso_timespec *ts, uint64_t sec, uint64_t ns,
                                             const struct rated *r) {
        int64_t s, n;

        if (likely(tns_rate_apply_split(r->mult, r->anchor_host, r->anchor_ns, sec, ns, &s, &n))) {
                ts->tv_sec = (long) s;
                ts->tv_nsec = (long) n;
                return;
        }
        /* Near the ends of int64: rated_apply() joins them in 64 bits
         * (nanoseconds above 1e9 too) and saturates. */
        ts->tv_sec = (long) sec;
        ts->tv_nsec = (long) ns;
        rated_apply(ts, r);
}

/* sec.ns + off, ns possibly above 1e9 (the kernel's too: the base time's
 * nanoseconds plus those since the last update): subtracted, not divided,
 * as the kernel's __iter_div_u64_rem does. */
static DIRECT_INLINE void direct_store(struct vdso_timespec *ts, uint64_t sec, uint64_t ns, struct split off) {
        ns += (uint64_t) off.nsec;
        sec += (uint64_t) off.sec;
        while (unlikely(ns >= NSEC_PER_SEC_U)) {
                ns -= NSEC_PER_SEC_U;
                sec++;
        }
        ts->tv_sec = (long) sec;
        ts->tv_nsec = (long) ns;
}

/* The counter in the proven mode, as __arch_get_hw_counter() reads it;
 * false: only the kernel's function can read this one. */
static DIRECT_INLINE bool direct_counter(int32_t mode, uint64_t *ret) {
        if (likely(mode == TNS_VCLOCK_MODE_TSC)) {
                *ret = direct_rdtsc_ordered() & (uint64_t) INT64_MAX;
                return true;
        }
        return direct_pvclock((const struct tns_pvclock_info *) (uintptr_t) __atomic_load_n(
                                      &tns_params_page.direct_pvclock, __ATOMIC_RELAXED),
                              ret);
}

/* vdso_calc_ns() of x86: the shifted nanoseconds since the base time. A
 * counter a little behind cycle_last (another CPU's) reads the base time,
 * as the kernel clamps; one too far ahead for a 64-bit product: false. */
static DIRECT_INLINE bool direct_calc_ns(const struct tns_kvdso_clock *vc, uint64_t cycles, uint64_t base,
                                         uint64_t *ret) {
        uint64_t delta = cycles - __atomic_load_n(&vc->cycle_last, __ATOMIC_RELAXED);
        uint32_t shift = __atomic_load_n(&vc->shift, __ATOMIC_RELAXED);

        if (likely(delta <= __atomic_load_n(&vc->max_cycles, __ATOMIC_RELAXED)))
                *ret = (delta * __atomic_load_n(&vc->mult, __ATOMIC_RELAXED) + base) >> shift;
        else if (delta & (1ULL << 62))
                *ret = base >> shift;
        else
                return false;
        return true;
}

static DIRECT_INLINE const struct tns_kvdso_clock *direct_hres_clock(int clock) {
        return direct_clock_data(clock == CLOCK_MONOTONIC_RAW ? TNS_KVDSO_CS_RAW : TNS_KVDSO_CS_HRES_COARSE);
}

/* A high-resolution clock (REALTIME, MONOTONIC, BOOTTIME, TAI, and
 * MONOTONIC_RAW from clock_data[1]) plus the offset of class c, straight:
 * false on anything but the common case, and the caller takes
 * direct_hres() (the loop), then the call-through. Before the counter
 * read, whose LFENCE waits for every load issued before it, only what
 * the kernel's own read loads there: the sequence and the mode; the
 * offsets page after it, alongside the conversion. */
static DIRECT_INLINE bool direct_hres_fast_at(const struct tns_kvdso_clock *vc, const struct tns_kvdso_clock *kns,
                                              int clock, enum tns_clock_class c, struct vdso_timespec *ts) {
        const struct tns_offsets_page *p = &tns_offsets_page;
        const int32_t mode = (int32_t) __atomic_load_n(&tns_params_page.direct_mode, __ATOMIC_RELAXED);
        uint32_t seq = __atomic_load_n(&vc->seq, __ATOMIC_ACQUIRE), oseq;
        uint64_t cycles, sec, ns;
        struct split off = {};
        struct tns_rate_fast rf;
        bool rated;

        if (unlikely((seq & 1) || __atomic_load_n(&vc->clock_mode, __ATOMIC_RELAXED) != mode) ||
            unlikely(!direct_counter(mode, &cycles)))
                return false;
        oseq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
        rated = direct_rated(p);
        if (unlikely(!direct_page_ok()) ||
            unlikely(!direct_calc_ns(vc, cycles, __atomic_load_n(&vc->basetime[clock].nsec, __ATOMIC_RELAXED), &ns)))
                return false;
        sec = __atomic_load_n(&vc->basetime[clock].sec, __ATOMIC_RELAXED);
        if (unlikely(rated))
                direct_fast_load(p, c, &rf);
        else {
                off.sec = __atomic_load_n(&p->clocks[c].offset_sec, __ATOMIC_RELAXED);
                off.nsec = __atomic_load_n(&p->clocks[c].offset_nsec, __ATOMIC_RELAXED);
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (unlikely((oseq & 1) || __atomic_load_n(&vc->seq, __ATOMIC_RELAXED) != seq ||
                     __atomic_load_n(&p->seq, __ATOMIC_RELAXED) != oseq))
                return false;
        if (kns) /* a constant NULL on the straight path: compiled out */
                direct_timens_offset(kns, clock, &sec, &ns);
        if (unlikely(rated)) /* out of the prepared form's range: direct_hres() */
                return direct_store_fast(ts, &rf, oseq, sec, ns);
        direct_store(ts, sec, ns, off);
        return true;
}

static DIRECT_INLINE bool direct_hres_fast(int clock, enum tns_clock_class c, struct vdso_timespec *ts) {
        const struct tns_kvdso_clock *vc = direct_hres_clock(clock), *kns = NULL;

        /* Every `timensctl run` command is under a kernel time namespace
         * of its own: its page is passed by here, where the sequence's
         * cache line is loaded anyway, not after a failed attempt. */
        if (unlikely(!direct_timens_pass(&vc, &kns)))
                return false;
        return direct_hres_fast_at(vc, kns, clock, c, ts);
}

/* The same with the retry loop, for a writer in progress on either page;
 * false when only the call-through can answer. Out of line. */
static __attribute__((noinline)) bool direct_hres(int clock, enum tns_clock_class c, struct vdso_timespec *ts) {
        const struct tns_kvdso_clock *vc = direct_hres_clock(clock), *kns = NULL;
        const struct tns_offsets_page *p = &tns_offsets_page;
        const int32_t mode = (int32_t) __atomic_load_n(&tns_params_page.direct_mode, __ATOMIC_RELAXED);
        unsigned spins = 0;
        struct split off = {};
        struct rated rm = {};
        bool rated = false;
        uint64_t sec, ns;

        if (unlikely(!direct_page_ok()) || !direct_timens_pass(&vc, &kns))
                return false;
        for (;;) {
                uint32_t seq = __atomic_load_n(&vc->seq, __ATOMIC_ACQUIRE), oseq;
                uint64_t cycles;

                if (unlikely(seq & 1)) {
                        /* A kernel time namespace's page stays odd. */
                        if (__atomic_load_n(&vc->clock_mode, __ATOMIC_RELAXED) == TNS_VCLOCK_MODE_TIMENS)
                                return false;
                        goto again;
                }
                if (unlikely(__atomic_load_n(&vc->clock_mode, __ATOMIC_RELAXED) != mode) ||
                    !direct_counter(mode, &cycles))
                        return false;
                oseq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
                if (unlikely(oseq & 1))
                        goto again;
                rated = direct_rated(p);
                if (!direct_calc_ns(vc, cycles, __atomic_load_n(&vc->basetime[clock].nsec, __ATOMIC_RELAXED), &ns))
                        return false;
                sec = __atomic_load_n(&vc->basetime[clock].sec, __ATOMIC_RELAXED);
                if (rated)
                        direct_rate_load(p, c, &rm);
                else {
                        off.sec = __atomic_load_n(&p->clocks[c].offset_sec, __ATOMIC_RELAXED);
                        off.nsec = __atomic_load_n(&p->clocks[c].offset_nsec, __ATOMIC_RELAXED);
                }
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (likely(__atomic_load_n(&vc->seq, __ATOMIC_RELAXED) == seq &&
                           __atomic_load_n(&p->seq, __ATOMIC_RELAXED) == oseq))
                        break;
        again:
                if (unlikely(++spins >= SEQ_SPIN_MAX))
                        return false;
                __builtin_ia32_pause();
        }
        /* The kernel's namespace first, as the call-through sees it. */
        if (kns)
                direct_timens_offset(kns, clock, &sec, &ns);
        if (rated)
                direct_store_rated(ts, sec, ns, &rm);
        else
                direct_store(ts, sec, ns, off);
        return true;
}

/* A coarse clock: the base time itself, no counter read. The loop, for a
 * writer in progress on either side, is out of line: the straight path
 * keeps to the registers a call may clobber, with nothing to save. */
static __attribute__((noinline)) bool direct_coarse_slow(int clock, enum tns_clock_class c, struct vdso_timespec *ts) {
        const struct tns_kvdso_clock *vc = direct_clock_data(TNS_KVDSO_CS_HRES_COARSE), *kns = NULL;
        const struct tns_kvdso_timestamp *bt;
        const struct tns_offsets_page *p = &tns_offsets_page;
        unsigned spins = 0;
        struct split off = {};
        struct rated rm = {};
        bool rated = false;
        uint64_t sec, ns;

        if (!direct_timens_pass(&vc, &kns))
                return false;
        bt = &vc->basetime[clock];
        for (;;) {
                uint32_t seq = __atomic_load_n(&vc->seq, __ATOMIC_ACQUIRE), oseq;

                if (unlikely(seq & 1)) {
                        if (__atomic_load_n(&vc->clock_mode, __ATOMIC_RELAXED) == TNS_VCLOCK_MODE_TIMENS)
                                return false;
                        goto again;
                }
                oseq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
                if (unlikely(oseq & 1))
                        goto again;
                rated = direct_rated(p);
                sec = __atomic_load_n(&bt->sec, __ATOMIC_RELAXED);
                ns = __atomic_load_n(&bt->nsec, __ATOMIC_RELAXED);
                if (rated)
                        direct_rate_load(p, c, &rm);
                else {
                        off.sec = __atomic_load_n(&p->clocks[c].offset_sec, __ATOMIC_RELAXED);
                        off.nsec = __atomic_load_n(&p->clocks[c].offset_nsec, __ATOMIC_RELAXED);
                }
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (likely(__atomic_load_n(&vc->seq, __ATOMIC_RELAXED) == seq &&
                           __atomic_load_n(&p->seq, __ATOMIC_RELAXED) == oseq))
                        break;
        again:
                if (unlikely(++spins >= SEQ_SPIN_MAX))
                        return false;
                __builtin_ia32_pause();
        }
        if (kns)
                direct_timens_offset(kns, clock, &sec, &ns);
        if (rated)
                direct_store_rated(ts, sec, ns, &rm);
        else
                direct_store(ts, sec, ns, off);
        return true;
}

/* The straight path: true if it read a consistent value, false if the
 * caller must take direct_coarse() — as a tail call, so that nothing is
 * saved here. A rated page is declined (direct_coarse_rated() is its
 * path), so that the inline read of a namespace without a rate keeps to
 * the registers a call may clobber. */
static DIRECT_INLINE bool direct_coarse_fast(int clock, enum tns_clock_class c, struct vdso_timespec *ts) {
        const struct tns_kvdso_clock *vc = direct_clock_data(TNS_KVDSO_CS_HRES_COARSE), *kns = NULL;
        const struct tns_offsets_page *p = &tns_offsets_page;
        uint32_t seq, oseq;
        uint64_t sec, ns;
        struct split off;

        /* A coarse read is a few loads: passing by a kernel time
         * namespace's page here (its clock_mode shares the sequence's
         * cache line) costs less than a second attempt. */
        if (unlikely(!direct_page_ok()) || unlikely(!direct_timens_pass(&vc, &kns)))
                return false;
        seq = __atomic_load_n(&vc->seq, __ATOMIC_ACQUIRE);
        oseq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
        if (unlikely(direct_rated(p)))
                return false;
        sec = __atomic_load_n(&vc->basetime[clock].sec, __ATOMIC_RELAXED);
        ns = __atomic_load_n(&vc->basetime[clock].nsec, __ATOMIC_RELAXED);
        off.sec = __atomic_load_n(&p->clocks[c].offset_sec, __ATOMIC_RELAXED);
        off.nsec = __atomic_load_n(&p->clocks[c].offset_nsec, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (unlikely(((seq | oseq) & 1) || __atomic_load_n(&vc->seq, __ATOMIC_RELAXED) != seq ||
                     __atomic_load_n(&p->seq, __ATOMIC_RELAXED) != oseq))
                return false;
        if (unlikely(kns != NULL))
                direct_timens_offset(kns, clock, &sec, &ns);
        direct_store(ts, sec, ns, off);
        return true;
}

/* A rated namespace's coarse clock, straight. The prepared map is
 * applied before the two sequences are checked again, as the kernel
 * converts its counter inside its retry loop: only the result is live
 * across the check, no part of the map is kept on the stack, and a
 * result computed from a torn read (a bounded computation: no loop, no
 * fault) is thrown away by the check. False: a writer in progress, a page
 * without a rate, a map out of its form's range; the caller then takes
 * direct_coarse() (the loop, which applies rates[]). */
static DIRECT_INLINE bool direct_coarse_rated(int clock, enum tns_clock_class c, struct vdso_timespec *ts) {
        const struct tns_kvdso_clock *vc = direct_clock_data(TNS_KVDSO_CS_HRES_COARSE), *kns = NULL;
        const struct tns_offsets_page *p = &tns_offsets_page;
        struct tns_rate_fast rf;
        uint32_t seq, oseq;
        uint64_t sec, ns;
        int64_t s = 0, n = 0;
        bool ok;

        if (unlikely(!direct_page_ok()) || unlikely(!direct_timens_pass(&vc, &kns)))
                return false;
        seq = __atomic_load_n(&vc->seq, __ATOMIC_ACQUIRE);
        oseq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
        sec = __atomic_load_n(&vc->basetime[clock].sec, __ATOMIC_RELAXED);
        ns = __atomic_load_n(&vc->basetime[clock].nsec, __ATOMIC_RELAXED);
        if (unlikely(kns != NULL)) /* fixed for good: no sequence needed */
                direct_timens_offset(kns, clock, &sec, &ns);
        direct_fast_load(p, c, &rf);
        ok = direct_rated(p) && tns_rate_fast_apply(&rf, oseq, sec, ns, &s, &n);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (unlikely(!ok || ((seq | oseq) & 1) || __atomic_load_n(&vc->seq, __ATOMIC_RELAXED) != seq ||
                     __atomic_load_n(&p->seq, __ATOMIC_RELAXED) != oseq))
                return false;
        ts->tv_sec = (long) s;
        ts->tv_nsec = (long) n;
        return true;
}

/* With the loop: false when only the call-through can answer. */
static DIRECT_INLINE bool direct_coarse(int clock, enum tns_clock_class c, struct vdso_timespec *ts) {
        return likely(direct_page_ok()) && direct_coarse_slow(clock, c, ts);
}

/* time(): floor(CLOCK_REALTIME_COARSE + offset). With an offset of whole
 * seconds, the base time's seconds alone, read without the kernel's
 * sequence as the kernel's time() reads them (one aligned load); with a
 * sub-second part, the carry needs its nanoseconds: the coarse read.
 * This is the loop, for writers in progress; direct_time() below is the
 * straight path. */
static __attribute__((noinline)) bool direct_time_slow(long *ret) {
        const struct tns_kvdso_clock *vc = direct_clock_data(TNS_KVDSO_CS_HRES_COARSE);
        const struct tns_offsets_page *p = &tns_offsets_page;
        unsigned spins = 0;
        struct split off;
        struct vdso_timespec ts;

        if (unlikely(!direct_page_ok()))
                return false;
        for (;;) {
                uint32_t oseq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);

                /* Rated: the seconds of the rated coarse clock, which
                 * direct_coarse_slow() reads under both sequences. */
                if (unlikely(direct_rated(p)))
                        goto coarse;
                if (likely(!(oseq & 1))) {
                        off.sec = __atomic_load_n(&p->clocks[TNS_CLASS_REALTIME].offset_sec, __ATOMIC_RELAXED);
                        off.nsec = __atomic_load_n(&p->clocks[TNS_CLASS_REALTIME].offset_nsec, __ATOMIC_RELAXED);
                        if (likely(!tns_page_read_retry(p, oseq)))
                                break;
                }
                if (unlikely(++spins >= SEQ_SPIN_MAX))
                        return false;
                __builtin_ia32_pause();
        }
        /* Under a kernel time namespace, the coarse read finds the
         * kernel's data (and REALTIME has no offset there). */
        if (off.nsec == 0 && likely(__atomic_load_n(&vc->clock_mode, __ATOMIC_RELAXED) != TNS_VCLOCK_MODE_TIMENS)) {
                *ret = (long) (__atomic_load_n(&vc->basetime[CLOCK_REALTIME].sec, __ATOMIC_RELAXED) +
                               (uint64_t) off.sec);
                return true;
        }
coarse:
        /* The straight rated read, then the coarse loop. */
        if (!direct_coarse_rated(CLOCK_REALTIME_COARSE, TNS_CLASS_REALTIME, &ts) &&
            !direct_coarse_slow(CLOCK_REALTIME_COARSE, TNS_CLASS_REALTIME, &ts))
                return false;
        *ret = ts.tv_sec;
        return true;
}

/* False: the caller takes direct_time_slow(), then the call-through. */
static DIRECT_INLINE bool direct_time(long *ret) {
        const struct tns_kvdso_clock *vc = direct_clock_data(TNS_KVDSO_CS_HRES_COARSE), *kns = NULL;
        const struct tns_offsets_page *p = &tns_offsets_page;
        uint32_t oseq, seq;
        int64_t osec, onsec;
        uint64_t sec, ns;

        /* Under a kernel time namespace, the kernel's own data further on
         * (REALTIME has no offset there: kns is not needed). */
        if (unlikely(!direct_page_ok()) || unlikely(!direct_timens_pass(&vc, &kns)))
                return false;
        oseq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
        if (unlikely(direct_rated(p)))
                return false; /* direct_time_slow() applies the rate */
        osec = __atomic_load_n(&p->clocks[TNS_CLASS_REALTIME].offset_sec, __ATOMIC_RELAXED);
        onsec = __atomic_load_n(&p->clocks[TNS_CLASS_REALTIME].offset_nsec, __ATOMIC_RELAXED);
        if (likely(onsec == 0)) {
                sec = __atomic_load_n(&vc->basetime[CLOCK_REALTIME].sec, __ATOMIC_RELAXED);
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (unlikely((oseq & 1) || __atomic_load_n(&p->seq, __ATOMIC_RELAXED) != oseq))
                        return false;
                *ret = (long) (sec + (uint64_t) osec);
                return true;
        }
        seq = __atomic_load_n(&vc->seq, __ATOMIC_ACQUIRE);
        sec = __atomic_load_n(&vc->basetime[CLOCK_REALTIME_COARSE].sec, __ATOMIC_RELAXED);
        ns = __atomic_load_n(&vc->basetime[CLOCK_REALTIME_COARSE].nsec, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (unlikely(((seq | oseq) & 1) || __atomic_load_n(&vc->seq, __ATOMIC_RELAXED) != seq ||
                     __atomic_load_n(&p->seq, __ATOMIC_RELAXED) != oseq))
                return false;
        /* Both nanosecond parts below 1e9: one carry at most. */
        *ret = (long) (sec + (uint64_t) osec + (ns + (uint64_t) onsec >= NSEC_PER_SEC_U));
        return true;
}
