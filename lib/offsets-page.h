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
 * last field is reserved (zero) so that a rate or a frozen point can be
 * added without changing the layout. */
struct tns_clock_map {
        int64_t offset_ns;
        int64_t offset_sec;
        int64_t offset_nsec;
        int64_t reserved;
};

#define TNS_PAGE_MAX_CLOCKS 8

/* flags */
#define TNS_PAGE_F_ACTIVE UINT64_C(1) /* the namespace exists and is served */

struct tns_offsets_page {
        uint64_t magic; /* TNS_PAGE_MAGIC */
        uint32_t version; /* TNS_PAGE_VERSION */
        uint32_t seq; /* seqlock: odd while the supervisor writes */
        uint64_t flags;
        uint64_t ns_id; /* the namespace's id, for /proc/PID/maps readers and debugging */
        struct tns_clock_map clocks[TNS_PAGE_MAX_CLOCKS]; /* indexed by enum tns_clock_class */
        uint8_t reserved[TNS_PAGE_SIZE - 32 - TNS_PAGE_MAX_CLOCKS * sizeof(struct tns_clock_map)];
};

_Static_assert(sizeof(struct tns_clock_map) == 32, "clock map is 32 bytes");
_Static_assert(sizeof(struct tns_offsets_page) == TNS_PAGE_SIZE, "offsets page is one page");
_Static_assert(__builtin_offsetof(struct tns_offsets_page, seq) == 12, "seq at 12");
_Static_assert(__builtin_offsetof(struct tns_offsets_page, clocks) == 32, "clocks at 32");
_Static_assert(TNS_CLASS_MAX <= TNS_PAGE_MAX_CLOCKS, "room for every class");

/* Reader side. Callers loop: do { s = begin(p); v = p->...; } while (retry(p, s)); */
static inline uint32_t tns_page_read_begin(const struct tns_offsets_page *p) {
        uint32_t s;

        while ((s = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE)) & 1)
                __builtin_ia32_pause();
        return s;
}

static inline int tns_page_read_retry(const struct tns_offsets_page *p, uint32_t start) {
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        return __atomic_load_n(&p->seq, __ATOMIC_RELAXED) != start;
}

static inline int64_t tns_page_offset(const struct tns_offsets_page *p, enum tns_clock_class c) {
        uint32_t s;
        int64_t v;

        do {
                s = tns_page_read_begin(p);
                v = __atomic_load_n(&p->clocks[c].offset_ns, __ATOMIC_RELAXED);
        } while (tns_page_read_retry(p, s));
        return v;
}

/* Writer side (one writer: the supervisor's event loop). */
static inline void tns_page_write_begin(struct tns_offsets_page *p) {
        __atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void tns_page_write_end(struct tns_offsets_page *p) {
        __atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELEASE);
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
        uint8_t reserved[TNS_PAGE_SIZE - 32 - TNS_VDSO_FN_SLOTS * 8];
};

_Static_assert(sizeof(struct tns_vdso_params) == TNS_PAGE_SIZE, "parameter page is one page");
_Static_assert(__builtin_offsetof(struct tns_vdso_params, fn) == 32, "fn at 32");
_Static_assert(_TNS_VDSO_FN_MAX <= TNS_VDSO_FN_SLOTS, "room for every function");
