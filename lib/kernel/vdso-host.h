/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the supervisor learns once, at start, about this host's vDSO and
 * prepares of ours: every process on the host has the same kernel vDSO
 * (at a different address), so symbol offsets, a `syscall` instruction to
 * borrow and the kernel's fallback call sites are found in our own. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ns.h"
#include "offsets-page.h"
#include "vdso-direct.h"

#define TNS_MAX_FALLBACK_SITES 16
#define TNS_VDSO_HEAD 64

struct tns_vdso_host {
        struct tns_image image; /* our image, prepared for this kernel */
        void *image_buf; /* owns image.data */
        uint64_t kernel_size; /* the kernel vDSO's text mapping */
        uint64_t fn[_TNS_VDSO_FN_MAX]; /* kernel function offsets from its base; 0: absent */
        uint64_t gadget; /* offset of a `syscall` instruction in the kernel's vDSO */
        /* Offsets of the address after each `syscall` instruction in the
         * kernel's vDSO: a notification whose instruction pointer is one of
         * them came from the kernel's own fallback path. */
        unsigned n_sites;
        uint64_t site[TNS_MAX_FALLBACK_SITES];
        unsigned char ehdr[64]; /* the kernel vDSO's ELF header, to recognise it */
        /* Offset of zero padding at the end of its text where the exec
         * tail fits (inject.h), 0 if there is none. */
        uint64_t tail;
        /* A bit per function (enum tns_vdso_fn) that a syscall stub may
         * replace (lib/core/vdso-stub.h): it has one, and is at least as
         * long by its symbol's size. */
        uint32_t stubbable;
        /* Their first bytes (at most TNS_VDSO_HEAD, the symbol's size), as
         * the host's vDSO has them: where a debugger's breakpoint in a
         * program's copy lies (tns_vdso_stub_place()). */
        uint8_t head[_TNS_VDSO_FN_MAX][TNS_VDSO_HEAD];
        uint32_t head_len[_TNS_VDSO_FN_MAX];
        struct tns_vdso_direct direct; /* the direct read path, as proven (call-through until then) */
};

/* -ENOENT if this process has no vDSO (vdso=0) or the image is unusable.
 * With the direct path proven (tns_vdso_direct_probe()), or _unproven:
 * the call-through until the caller proves it (a daemon, in the
 * background: tns_vdso_direct_probe_start()). */
int tns_vdso_host_init(struct tns_vdso_host *ret);
int tns_vdso_host_init_unproven(struct tns_vdso_host *ret);
void tns_vdso_host_done(struct tns_vdso_host *h);

/* Whether this host's kernel vDSO (its ELF header) lies at base in the
 * memory mem reads (tns_proc_open_mem()): 0, -ENOEXEC if something else
 * does (a mapping a program placed there), -EIO if it cannot be read. */
int tns_vdso_host_at(const struct tns_vdso_host *h, int mem, uint64_t base);

/* If ip could be the return address of a kernel vDSO fallback syscall,
 * returns true with the base the kernel vDSO would have. */
bool tns_vdso_host_site(const struct tns_vdso_host *h, uint64_t ip, uint64_t *ret_base);
