/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the auxiliary vector walk over a new program's stack
 * words, which come from the target (hostile) process. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        size_t n = size / sizeof(uint64_t), off = 0;
        uint64_t *w = malloc((n ? n : 1) * sizeof(uint64_t)), v;
        int r;

        if (!w)
                return 0;
        memcpy(w, data, n * sizeof(uint64_t));
        r = tns_auxv_find_sysinfo(w, n, &off, &v);
        if (r == 0 && (off % 8 != 0 || off / 8 >= n || w[off / 8] != v))
                abort();
        if (r != 0 && r != -EAGAIN && r != -ENOENT && r != -EBADMSG)
                abort();
        free(w);
        return 0;
}
