/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a namespace is, in the words every layer shares: its name, where it
 * came from, what its members may ask, its clocks as a checkpoint keeps
 * them, and the counters the engine reports. Pure: the wire protocol, the
 * OCI code and the client use these without the engine (lib/supervisor/)
 * or the registry (lib/registry/). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "offsets-page.h"
#include "syscall-table.h"

/* Names: 1..TNS_NS_NAME_MAX characters of [A-Za-z0-9_.:@+-], starting
 * with a letter or digit, not all digits (a number names an id).
 * TNS_NS_NAME_RULE says so in every message that refuses a name. */
#define TNS_NS_NAME_MAX 128
#define TNS_NS_NAME_RULE "1-128 characters of A-Z a-z 0-9 _ . : @ + -, starting with a letter or digit, not all digits"
_Static_assert(TNS_NS_NAME_MAX == 128, "TNS_NS_NAME_RULE names the limit");

bool tns_ns_name_valid(const char *name);

enum tns_origin {
        TNS_ORIGIN_CREATE, /* made empty by the API; lives until destroyed */
        TNS_ORIGIN_RUN, /* made by adopt; gone with its last process */
        TNS_ORIGIN_IMPORT, /* made from exported clock state; as create */
        TNS_ORIGIN_UNSHARE, /* a child made by unshare(CLONE_NEWTIME) inside */
        TNS_ORIGIN_DETACHED, /* destroyed while it had processes: nameless */
        _TNS_ORIGIN_MAX,
};

/* What processes inside a namespace may do through the control API. */
enum tns_grant {
        TNS_GRANT_NONE, /* nothing: every request is refused (the default) */
        TNS_GRANT_READ, /* the read-only operations */
        TNS_GRANT_FULL, /* whatever their user may do from outside */
        _TNS_GRANT_MAX,
};

/* A namespace's clocks as a checkpoint keeps them. */
struct tns_clock_state {
        char name[TNS_NS_NAME_MAX + 1]; /* "" if none */
        enum tns_grant grant;
        int64_t host_realtime_ns; /* the host's CLOCK_REALTIME at export */
        int64_t value_ns[TNS_CLASS_MAX]; /* the namespace's clocks at export */
        int64_t offset_ns[TNS_CLASS_MAX]; /* its offsets at export */
        /* Its rates (lib/core/rate.h): now (0 frozen) and when running;
         * run_mult 0: no rate (rate 1). */
        uint64_t rate_mult[TNS_CLASS_MAX];
        uint64_t run_mult[TNS_CLASS_MAX];
        bool rate_capable;
};

/* Latency histogram buckets: [0] < 1 us, [i] in [2^(i-1), 2^i) us, the
 * last one everything above. */
#define TNS_LATENCY_BUCKETS 16

struct tns_supervisor_stats {
        uint64_t notifications; /* calls received */
        uint64_t replied; /* replies the kernel accepted */
        uint64_t vanished; /* callers gone before the reply (killed, pid reused) */
        uint64_t failures; /* calls the emulation could not run (-errno returned) */
        uint64_t per_syscall[_TNS_SYS_MAX];
        /* Time from receiving a notification to replying, per syscall. */
        uint64_t latency[_TNS_SYS_MAX][TNS_LATENCY_BUCKETS];
        unsigned namespaces;
        unsigned listeners;
        bool sync_wakeup; /* the kernel has SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP */
        uint64_t vdso_injected; /* execs that got our vDSO */
        uint64_t vdso_failed; /* execs that fell back to the syscall path */
        uint64_t vdso_fallbacks; /* kernel vDSO fallback syscalls let through */
        uint64_t vdso_syscall_path; /* programs started without our image whose kernel vDSO became syscalls */
        uint64_t execs_missing; /* execs of a missing file (a PATH lookup) let through at once */
        /* How our image reads the clocks: "tsc", "pvclock" (directly, the
         * proven clocks) or "call-through"; "" without an image. */
        char vdso_reads[16];
        uint64_t waits_converted; /* absolute waits run with a converted deadline */
        uint64_t waits_unconverted; /* absolute waits that could not be held (a debugger...) */
        uint64_t wait_pages_tail; /* wait pages a held thread mapped itself (the wait tail) */
        uint64_t wait_pages_stepped; /* ...that we mapped by single steps (no room for the tail) */
        uint64_t file_times_ns; /* file times set to "now": the namespace's now */
        uint64_t file_times_host; /* ...the host's (explicit times refused, or not held) */
};
