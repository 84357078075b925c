/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "vdso-stub.h"
#include "vdso-syscall-path.h"

int tns_vdso_syscall_path(const struct tns_vdso_host *h, int mem, uint64_t base) {
        unsigned char ehdr[sizeof(h->ehdr)];
        int n = 0;

        /* The program's own kernel vDSO, not a mapping it placed there. */
        if (pread(mem, ehdr, sizeof(ehdr), (off_t) base) != (ssize_t) sizeof(ehdr))
                return -EIO;
        if (memcmp(ehdr, h->ehdr, sizeof(ehdr)) != 0)
                return -ENOEXEC;
        for (int f = 0; f < _TNS_VDSO_FN_MAX; f++) {
                uint8_t stub[TNS_VDSO_STUB_SIZE], now[TNS_VDSO_STUB_SIZE];
                const off_t at = (off_t) (base + h->fn[f]);

                if (!(h->stubbable & (1U << f)) || tns_vdso_stub_bytes((enum tns_vdso_fn) f, stub) < 0)
                        continue;
                if (pread(mem, now, sizeof(now), at) != (ssize_t) sizeof(now))
                        return -EIO;
                if (memcmp(now, stub, sizeof(stub)) == 0)
                        continue;
                /* A private copy of the text page, made by the write
                 * (FOLL_FORCE): the host's vDSO pages stay as they are. */
                if (pwrite(mem, stub, sizeof(stub), at) != (ssize_t) sizeof(stub))
                        return -EIO;
                n++;
        }
        return n;
}
