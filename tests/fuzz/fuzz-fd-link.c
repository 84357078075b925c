/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the /proc/PID/fd link parser (lib/core/fd-link.c):
 * any text is a kind, never read past its end; a namespace kind is
 * "TYPE:[DIGITS]" and nothing else. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fd-link.h"
#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        enum tns_fd_kind k;
        char *link = malloc(size + 1);

        if (!link)
                return 0;
        memcpy(link, data, size);
        link[size] = '\0';
        k = tns_fd_kind_parse(link);
        CHECK(k >= TNS_FD_OTHER && k <= TNS_FD_SECCOMP);
        if (k == TNS_FD_NS) {
                const char *b = strchr(link, '[');

                CHECK(link[0] != '/' && b && b[1] >= '0' && b[1] <= '9' && link[strlen(link) - 1] == ']');
        }
        free(link);
        return 0;
}
