/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's vDSO time data, as our image reads it directly (issue 19):
 * what lib/vdso/gettimeofday.c and arch/x86/include/asm/vdso/gettimeofday.h
 * read, described from include/vdso/datapage.h and
 * arch/x86/include/asm/pvclock-abi.h, for the x86-64 kernels whose layout
 * we know. Nothing here is trusted on a version number alone: timensd
 * proves the layout at start against the kernel's own vDSO
 * (lib/kernel/vdso-direct.c) and uses it only where every read agreed.
 *
 * Included by the freestanding image (vdso-patch/): <stdint.h> only. */
#pragma once

#include <stdint.h>

/* include/vdso/clocksource.h, arch/x86/include/asm/vdso/clocksource.h:
 * how the kernel's vDSO reads the counter; TIMENS marks the page a task in
 * a kernel time namespace sees in place of the real one (seq 1, forever). */
#define TNS_VCLOCK_MODE_NONE 0
#define TNS_VCLOCK_MODE_TSC 1
#define TNS_VCLOCK_MODE_PVCLOCK 2
#define TNS_VCLOCK_MODE_HVCLOCK 3
#define TNS_VCLOCK_MODE_TIMENS INT32_MAX

/* include/vdso/datapage.h: one base time per clock id up to CLOCK_TAI;
 * clock_data[0] serves the high-resolution and coarse clocks, [1] the raw
 * one. */
#define TNS_KVDSO_BASES 12
#define TNS_KVDSO_CS_HRES_COARSE 0
#define TNS_KVDSO_CS_RAW 1

struct tns_kvdso_timestamp {
        uint64_t sec;
        uint64_t nsec; /* left-shifted by `shift` for the high-resolution clocks */
};

/* struct vdso_clock (called vdso_time_data/vdso_data before 6.15; the
 * same bytes on x86-64, whose arch data is empty), with max_cycles: x86
 * selects GENERIC_VDSO_OVERFLOW_PROTECT since 6.8. */
struct tns_kvdso_clock {
        uint32_t seq;
        int32_t clock_mode;
        uint64_t cycle_last;
        uint64_t max_cycles;
        uint64_t mask;
        uint32_t mult;
        uint32_t shift;
        struct tns_kvdso_timestamp basetime[TNS_KVDSO_BASES];
};

_Static_assert(sizeof(struct tns_kvdso_clock) == 232, "struct vdso_clock is 232 bytes on x86-64");
_Static_assert(__builtin_offsetof(struct tns_kvdso_clock, basetime) == 40, "basetime at 40");

/* struct pvclock_vcpu_time_info (arch/x86/include/asm/pvclock-abi.h), the
 * first bytes of the kvm-clock page the kernel maps for its vDSO. */
struct tns_pvclock_info {
        uint32_t version;
        uint32_t pad0;
        uint64_t tsc_timestamp;
        uint64_t system_time;
        uint32_t tsc_to_system_mul;
        int8_t tsc_shift;
        uint8_t flags;
        uint8_t pad[2];
};

#define TNS_PVCLOCK_TSC_STABLE_BIT 1u

_Static_assert(sizeof(struct tns_pvclock_info) == 32, "pvclock_vcpu_time_info is 32 bytes");

/* Where the data lives, relative to the mappings /proc/PID/maps names. */
enum tns_vvar_layout {
        TNS_VVAR_UNKNOWN = 0,
        /* 6.13+ (the generic vDSO data store): [vvar] page 0 is the time
         * data, clock_data[] at its start; [vvar_vclock] page 0 is the
         * pvclock page, page 1 Hyper-V's. */
        TNS_VVAR_DATASTORE = 1,
};

/* In a kernel time namespace the first [vvar] page is the namespace's
 * (clock_mode TIMENS, its offsets where the base times are) and the
 * kernel's own time data is mapped at VDSO_TIMENS_PAGE_OFFSET: one page
 * further in the data store (lib/vdso/datastore.c). timensd proves it in
 * a kernel time namespace of its own before an image relies on it. */
#define TNS_VVAR_DATASTORE_TIMENS_DELTA 4096

/* The layout to try for a kernel release string (uname -r: "6.18.44-...").
 * Pure; TNS_VVAR_UNKNOWN for anything it cannot parse or does not know. */
enum tns_vvar_layout tns_vvar_layout_for_release(const char *release);
