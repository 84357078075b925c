/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the kernel release parser that picks the vDSO data
 * layout (lib/core/vvar-layout.c): uname's release is text the kernel's
 * builder chose. Any input: a known layout or UNKNOWN, never a read past
 * the string (ASan watches), and a known layout only for a release that
 * starts with digits, a dot and digits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-check.h"
#include "vvar-layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);
        enum tns_vvar_layout l;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        l = tns_vvar_layout_for_release(s);
        CHECK(l == TNS_VVAR_UNKNOWN || l == TNS_VVAR_DATASTORE);
        if (l != TNS_VVAR_UNKNOWN)
                CHECK(s[0] >= '0' && s[0] <= '9' && strchr(s, '.'));
        free(s);
        return 0;
}
