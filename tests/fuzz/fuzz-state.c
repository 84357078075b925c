/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the state record a restarted timensd reads back:
 * whatever it accepts formats and parses again to the same text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "fuzz-check.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct tns_state st = {}, back = {};
        char *text = NULL, *again = NULL;
        uint64_t a, b, c;
        char *name = malloc(size + 1);

        if (name) {
                memcpy(name, data, size);
                name[size] = '\0';
                (void) tns_state_fd_kind(name, &a, &b, &c);
                free(name);
        }
        if (tns_state_parse((const char *) data, size, &st) < 0)
                return 0;
        CHECK(tns_state_format(&st, &text) == 0);
        CHECK(tns_state_parse(text, strlen(text), &back) == 0);
        CHECK(tns_state_format(&back, &again) == 0);
        CHECK(strcmp(text, again) == 0);
        free(text);
        free(again);
        tns_state_done(&st);
        tns_state_done(&back);
        return 0;
}
