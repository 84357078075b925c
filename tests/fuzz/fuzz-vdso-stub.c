/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the placement of a syscall stub around a debugger's
 * breakpoints (lib/core/vdso-stub.c): the bytes a program's kernel vDSO
 * holds are the program's to change. Any input: an error, or a stub that
 * keeps every breakpoint byte it covers as it was (the debugger puts the
 * original back there) and that a second look takes for placed. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-check.h"
#include "vdso-stub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t orig[64], now[64], out[64], again[64];
        enum tns_vdso_fn fn;
        size_t n;
        int r;

        if (size < 1)
                return 0;
        fn = (enum tns_vdso_fn)(data[0] % _TNS_VDSO_FN_MAX);
        n = (size - 1) / 2;
        if (n > sizeof(orig))
                n = sizeof(orig);
        memcpy(orig, data + 1, n);
        memcpy(now, data + 1 + n, n);
        r = tns_vdso_stub_place(fn, orig, now, n, out);
        CHECK(r == -EINVAL || r == -EBUSY || r == -ENOSPC || (r >= 0 && (size_t) r <= n));
        if (r <= 0)
                return 0;
        for (int i = 0; i < r; i++)
                if (now[i] == 0xcc && orig[i] != 0xcc)
                        CHECK(out[i] == 0xcc);
        CHECK(tns_vdso_stub_place(fn, orig, out, n, again) == 0);
        return 0;
}
