/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "vdso-stub.h"
#include "vdso-syscall-path.h"

int tns_vdso_syscall_path(const struct tns_vdso_host *h, int mem, uint64_t base) {
        int n = 0, r;

        /* The program's own kernel vDSO, not a mapping it placed there. */
        r = tns_vdso_host_at(h, mem, base);
        if (r < 0)
                return r;
        for (int f = 0; f < _TNS_VDSO_FN_MAX; f++) {
                uint8_t now[TNS_VDSO_HEAD], stub[TNS_VDSO_HEAD];
                const size_t len = h->head_len[f];
                const off_t at = (off_t) (base + h->fn[f]);
                int k;

                if (!(h->stubbable & (1U << f)))
                        continue;
                if (pread(mem, now, len, at) != (ssize_t) len)
                        return -EIO;
                /* Around a debugger's breakpoints; one in the first two
                 * bytes gets the stub over it (its removal then breaks
                 * the call: a limit, timensctl(1)). */
                k = tns_vdso_stub_place((enum tns_vdso_fn) f, h->head[f], now, len, stub);
                /* Its syscall must not return where the kernel's own
                 * fallback does: those calls get the host's answer. */
                if (k > 0 && tns_vdso_host_site(h, base + h->fn[f] + (uint64_t) k - 1, &(uint64_t){0}))
                        k = -ENOSPC;
                if (k == -EBUSY || k == -ENOSPC)
                        k = tns_vdso_stub_bytes((enum tns_vdso_fn) f, stub) < 0 ? -EINVAL : TNS_VDSO_STUB_SIZE;
                if (k <= 0)
                        continue;
                /* A private copy of the text page, made by the write
                 * (FOLL_FORCE): the host's vDSO pages stay as they are. */
                if (pwrite(mem, stub, (size_t) k, at) != (ssize_t) k)
                        return -EIO;
                n++;
        }
        return n;
}
