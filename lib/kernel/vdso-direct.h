/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The direct read path of our image (issue 19): where this kernel keeps
 * its vDSO time data, and the proof that our image reads it as the
 * kernel's vDSO does.
 *
 * Every process's [vvar] and [vvar_vclock] sit at the same distance from
 * its [vdso] (the kernel maps them together), so what the supervisor finds
 * in its own maps holds in every member, relative to the member's kernel
 * vDSO base. The layout is chosen by kernel release
 * (lib/core/vvar-layout.h), then proven in a child: the image is laid out
 * there as in a member, with its call-through functions replaced by ones
 * that fail, and every shifted clock, gettimeofday and time are read a few
 * hundred times through it between two reads of the kernel's vDSO. Only
 * the clocks whose every read fell between the kernel's are read
 * directly; the rest, and everything on an unknown kernel, a clock mode
 * without a vDSO read (NONE, Hyper-V), or under a kernel time namespace,
 * keep the call-through. */
#pragma once

#include <stdint.h>

struct tns_vdso_host;

struct tns_vdso_direct {
        uint32_t mode; /* TNS_VCLOCK_MODE_TSC or _PVCLOCK as proven; 0: call-through */
        uint32_t clocks; /* a bit per clock id proven */
        int64_t clock_delta; /* the kernel's clock_data[] minus its vDSO base */
        int64_t pvclock_delta; /* its pvclock page minus its vDSO base; 0: none */
        int64_t timens_delta; /* in a kernel time namespace, its real clock_data[] minus its page; 0: unproven */
        char why[112]; /* for call-through: the reason, for logs and stats */
};

/* Fills ret from this process's mappings and the proof; never fails: a
 * layout that cannot be used leaves mode 0 and the reason in why. h must
 * have its kernel functions and prepared image. */
void tns_vdso_direct_probe(const struct tns_vdso_host *h, struct tns_vdso_direct *ret);

/* The same in two steps, so that a daemon serves while the proof runs
 * (every restart would otherwise wait for it): _start fills ret with the
 * call-through and, where there is something to prove, starts the proof's
 * children and gives the probe (else NULL); its fds (1 or 2) turn
 * readable when each part has answered; _finish fills ret and frees the
 * probe, waiting for what has not answered yet up to
 * TNS_VDSO_PROOF_TIMEOUT_MS after the start in all (then the
 * call-through); _abort kills and reaps its children. -ENOMEM only. */
#define TNS_VDSO_PROOF_TIMEOUT_MS 3000
struct tns_vdso_probe;
int tns_vdso_direct_probe_start(const struct tns_vdso_host *h, struct tns_vdso_direct *ret,
                                struct tns_vdso_probe **ret_probe);
unsigned tns_vdso_direct_probe_fds(const struct tns_vdso_probe *p, int ret[2]);
void tns_vdso_direct_probe_finish(struct tns_vdso_probe *p, struct tns_vdso_direct *ret);
void tns_vdso_direct_probe_abort(struct tns_vdso_probe *p);

/* Whether d is a proven direct path as a proof leaves one (a mode, clocks
 * among the candidates, a reason that ends): for an answer read back from
 * memory (lib/supervisor/supervisor-proof-cache.c). */
bool tns_vdso_direct_valid(const struct tns_vdso_direct *d);

/* "tsc", "pvclock" or "call-through". */
const char *tns_vdso_direct_path(const struct tns_vdso_direct *d);
