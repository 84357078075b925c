/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the pure part of the exec lookup
 * (lib/core/exec-lookup.c): any execveat arguments and path give a plan
 * whose rest lies inside the path and is never empty. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec-lookup.h"
#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint64_t args[6] = {0};
        struct tns_exec_lookup p;
        char *text;
        size_t n;

        n = size < sizeof(args) ? size : sizeof(args);
        memcpy(args, data, n);
        text = malloc(size - n + 1);
        if (!text)
                return 0;
        memcpy(text, data + n, size - n);
        text[size - n] = '\0';
        for (int at = 0; at < 2; at++) {
                tns_exec_lookup_plan(at, args, text, &p);
                if (p.base == TNS_EXEC_BASE_UNKNOWN)
                        continue;
                CHECK(p.rest && p.rest[0]);
                CHECK(strcmp(p.rest, ".") == 0 || (p.rest >= text && p.rest < text + strlen(text)));
                CHECK((p.base == TNS_EXEC_BASE_ROOT) == (text[0] == '/'));
                CHECK(p.base != TNS_EXEC_BASE_DIRFD || p.dirfd >= 0);
        }
        free(text);
        return 0;
}
