/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "util.h"
#include "vdso-elf.h"
#include "inject.h"
#include "proc-util.h"
#include "vdso-host.h"
#include "vdso-stub.h"

#include "vdso-image.h"

static const char *const fn_names[_TNS_VDSO_FN_MAX] = {
        [TNS_VDSO_CLOCK_GETTIME] = "__vdso_clock_gettime",
        [TNS_VDSO_GETTIMEOFDAY] = "__vdso_gettimeofday",
        [TNS_VDSO_TIME] = "__vdso_time",
        [TNS_VDSO_CLOCK_GETRES] = "__vdso_clock_getres",
        [TNS_VDSO_GETCPU] = "__vdso_getcpu",
        [TNS_VDSO_GETRANDOM] = "__vdso_getrandom",
};

/* The size of this process's [vdso] mapping, which starts at base. */
static int kernel_vdso_size(uint64_t base, uint64_t *ret) {
        uint64_t start, end;
        int r = tns_proc_special_mapping(getpid(), "[vdso]", 0, &start, &end);

        if (r < 0)
                return r;
        if (start != base)
                return -ENOENT;
        *ret = end - start;
        return 0;
}

/* Every `syscall` instruction of the kernel's vDSO: the first is borrowed
 * to run syscalls in a target, the addresses after them are where the
 * kernel's fallbacks return. */
static void find_syscalls(const uint8_t *image, uint64_t size, struct tns_vdso_host *h) {
        uint64_t text = size;

        /* From the first function on: the same bytes occur in the hash
         * tables before it, which are data. */
        for (int i = 0; i < _TNS_VDSO_FN_MAX; i++)
                if (h->fn[i] && h->fn[i] < text)
                        text = h->fn[i];
        for (uint64_t i = text; i + 1 < size; i++) {
                if (image[i] != 0x0f || image[i + 1] != 0x05)
                        continue;
                if (!h->gadget)
                        h->gadget = i;
                if (h->n_sites < TNS_MAX_FALLBACK_SITES)
                        h->site[h->n_sites++] = i + 2;
        }
}

static int lookup_kernel(const uint8_t *kernel, uint64_t size, struct tns_vdso_host *h) {
        struct tns_vdso_elf e;
        int r;

        r = tns_vdso_elf_parse(kernel, size, &e);
        if (r < 0)
                return r;
        for (int i = 0; i < _TNS_VDSO_FN_MAX; i++) {
                r = tns_vdso_elf_lookup(&e, fn_names[i], TNS_VDSO_VERSION, &h->fn[i]);
                if (r == -ENOENT)
                        h->fn[i] = 0;
                else if (r < 0)
                        return r;
        }
        if (!h->fn[TNS_VDSO_CLOCK_GETTIME])
                return -ENOENT;
        /* A stub overwrites the function's first bytes: only where its
         * symbol says it is that long (its aliases have the same value). */
        for (uint32_t i = 0; i < e.n_syms; i++) {
                struct tns_vdso_sym sym;

                if (tns_vdso_elf_symbol(&e, i, &sym) < 0 || sym.size < TNS_VDSO_STUB_SIZE)
                        continue;
                for (int f = 0; f < _TNS_VDSO_FN_MAX; f++)
                        if (h->fn[f] && sym.offset == h->fn[f] && tns_vdso_stub_syscall((enum tns_vdso_fn) f) >= 0 &&
                            h->fn[f] + sym.size <= size) {
                                h->stubbable |= 1U << f;
                                h->head_len[f] = (uint32_t) (sym.size < TNS_VDSO_HEAD ? sym.size : TNS_VDSO_HEAD);
                                memcpy(h->head[f], kernel + h->fn[f], h->head_len[f]);
                        }
        }
        return 0;
}

/* Our image, less what this kernel's vDSO lacks: a program must not find a
 * getrandom in our image that has nothing to call through to. */
static int prepare_image(struct tns_vdso_host *h) {
        size_t size = (tns_vdso_image_size + TNS_PAGE_SIZE - 1) & ~(size_t) (TNS_PAGE_SIZE - 1);
        uint8_t *copy = calloc(1, size);

        if (!copy)
                return -ENOMEM;
        memcpy(copy, tns_vdso_image, tns_vdso_image_size);
        if (!h->fn[TNS_VDSO_GETRANDOM]) {
                (void) tns_vdso_elf_hide(copy, tns_vdso_image_size, "__vdso_getrandom");
                (void) tns_vdso_elf_hide(copy, tns_vdso_image_size, "getrandom");
        }
        h->image_buf = copy;
        h->image = (struct tns_image){copy, size};
        return 0;
}

/* The zero bytes after the last byte of the image: the kernel pads its
 * vDSO to whole pages. 16-byte aligned, room for the tail or nothing. */
static uint64_t find_tail(const uint8_t *image, uint64_t size) {
        uint64_t last = size;

        while (last > 0 && image[last - 1] == 0)
                last--;
        last = (last + 15) & ~(uint64_t) 15;
        return last > 0 && last + TNS_INJECT_TAIL_MAX <= size ? last : 0;
}

int tns_vdso_host_init_unproven(struct tns_vdso_host *ret) {
        struct tns_vdso_host h = {};
        uint64_t base = getauxval(AT_SYSINFO_EHDR);
        int r;

        if (!base || tns_vdso_image_size == 0)
                return -ENOENT;
        r = kernel_vdso_size(base, &h.kernel_size);
        if (r < 0)
                return r;
        r = lookup_kernel((const uint8_t *) (uintptr_t) base, h.kernel_size, &h);
        if (r < 0)
                return r;
        find_syscalls((const uint8_t *) (uintptr_t) base, h.kernel_size, &h);
        if (!h.gadget)
                return -ENOENT;
        memcpy(h.ehdr, (const void *) (uintptr_t) base, sizeof(h.ehdr));
        h.tail = find_tail((const uint8_t *) (uintptr_t) base, h.kernel_size);
        r = prepare_image(&h);
        if (r < 0)
                return r;
        snprintf(h.direct.why, sizeof(h.direct.why), "not proven");
        *ret = h;
        return 0;
}

int tns_vdso_host_init(struct tns_vdso_host *ret) {
        int r = tns_vdso_host_init_unproven(ret);

        if (r >= 0)
                tns_vdso_direct_probe(ret, &ret->direct);
        return r;
}

void tns_vdso_host_done(struct tns_vdso_host *h) {
        free(h->image_buf);
        *h = (struct tns_vdso_host){};
}

bool tns_vdso_host_site(const struct tns_vdso_host *h, uint64_t ip, uint64_t *ret_base) {
        for (unsigned i = 0; i < h->n_sites; i++) {
                uint64_t base = ip - h->site[i];

                if (ip >= h->site[i] && (base & (TNS_PAGE_SIZE - 1)) == 0) {
                        *ret_base = base;
                        return true;
                }
        }
        return false;
}

int tns_vdso_host_at(const struct tns_vdso_host *h, int mem, uint64_t base) {
        unsigned char ehdr[sizeof(h->ehdr)];

        if (pread(mem, ehdr, sizeof(ehdr), (off_t) base) != (ssize_t) sizeof(ehdr))
                return -EIO;
        return memcmp(ehdr, h->ehdr, sizeof(ehdr)) == 0 ? 0 : -ENOEXEC;
}
