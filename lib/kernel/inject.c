/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "inject.h"
#include "vdso-host.h"

int tns_auxv_find_sysinfo(const uint64_t *words, size_t n, size_t *ret_offset, uint64_t *ret_value) {
        size_t i;

        /* argc, argv[argc], NULL, envp..., NULL, then (type, value) pairs up
         * to AT_NULL: the layout create_elf_tables() (fs/binfmt_elf.c)
         * leaves at the new stack pointer. */
        if (n < 1)
                return -EAGAIN;
        if (words[0] > (1U << 28))
                return -EBADMSG; /* more arguments than any stack could hold */
        i = 1 + words[0];
        if (i >= n)
                return -EAGAIN;
        if (words[i++] != 0)
                return -EBADMSG;
        for (; i < n && words[i] != 0; i++)
                ;
        if (i >= n)
                return -EAGAIN;
        for (i++; i + 1 < n; i += 2) {
                if (words[i] == AT_NULL)
                        return -ENOENT;
                if (words[i] == AT_SYSINFO_EHDR) {
                        *ret_offset = (i + 1) * sizeof(uint64_t);
                        *ret_value = words[i + 1];
                        return 0;
                }
        }
        return -EAGAIN;
}

void tns_vdso_params_fill(const struct tns_vdso_host *h, uint64_t kernel_base, struct tns_vdso_params *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->magic = TNS_PARAMS_MAGIC;
        ret->version = TNS_PARAMS_VERSION;
        ret->kernel_vdso_base = kernel_base;
        ret->kernel_vdso_size = h->kernel_size;
        for (int i = 0; i < _TNS_VDSO_FN_MAX; i++)
                ret->fn[i] = h->fn[i] ? kernel_base + h->fn[i] : 0;
        if (h->direct.mode) {
                ret->direct_clock = kernel_base + (uint64_t) h->direct.clock_delta;
                ret->direct_pvclock = h->direct.pvclock_delta ? kernel_base + (uint64_t) h->direct.pvclock_delta : 0;
                ret->direct_mode = h->direct.mode;
                ret->direct_clocks = h->direct.clocks;
                ret->direct_timens_delta = h->direct.timens_delta;
        }
}
