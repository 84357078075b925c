/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for file times set to "now" (lib/core/file-times.c):
 * any times a caller can give, any kind, with or without a pointer. What
 * the kernel is given must hold no UTIME_NOW any more, keep every other
 * time as given, and never be produced from times the kernel refuses. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "file-times.h"
#include "fuzz-check.h"

#define UTIME_NOW_ ((1L << 30) - 1L)
#define UTIME_OMIT_ ((1L << 30) - 2L)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const enum tns_wait_kind kinds[] = {TNS_WAIT_UTIMENS, TNS_WAIT_UTIMES, TNS_WAIT_UTIMBUF,
                                                   TNS_WAIT_TIMESPEC};
        int64_t in[4] = {0}, out[4], before[4];
        struct timespec now = {0};
        enum tns_wait_kind kind;
        bool null;
        int r;

        if (size < 2)
                return 0;
        kind = kinds[data[0] % 4];
        null = data[1] & 1;
        data += 2, size -= 2;
        memcpy(in, data, size < sizeof(in) ? size : sizeof(in));
        if (size > sizeof(in)) {
                int64_t n[2] = {0};

                memcpy(n, data + sizeof(in), size - sizeof(in) < sizeof(n) ? size - sizeof(in) : sizeof(n));
                now.tv_sec = n[0];
                now.tv_nsec = (long) ((uint64_t) n[1] % 1000000000);
        }
        /* Any times read back as a predecessor's rewrite: "now" or
         * UTIME_OMIT only, from valid times alone, never all omitted. */
        {
                int64_t back[4];
                bool all = false;

                memset(back, 0x5a, sizeof(back));
                r = tns_file_times_recover(kind, in, &now, back, &all);
                CHECK(r == 0 || r == -ENOENT);
                if (r == 0 && kind == TNS_WAIT_UTIMENS) {
                        CHECK(back[1] == UTIME_NOW_ || back[3] == UTIME_NOW_);
                        for (int i = 0; i < 2; i++)
                                CHECK((back[2 * i + 1] == UTIME_NOW_ && in[2 * i + 1] >= 0 &&
                                       in[2 * i + 1] < 1000000000) ||
                                      (back[2 * i + 1] == UTIME_OMIT_ && in[2 * i + 1] == UTIME_OMIT_));
                        CHECK(all == (back[1] == UTIME_NOW_ && back[3] == UTIME_NOW_));
                } else if (r == 0) {
                        CHECK(kind != TNS_WAIT_TIMESPEC && all);
                }
        }
        memset(out, 0x5a, sizeof(out));
        memcpy(before, out, sizeof(out));
        r = tns_file_times_now(kind, null ? NULL : in, &now, out);
        CHECK(r == 0 || r == -ENOENT || r == -EINVAL);
        if (r != 0) {
                CHECK(memcmp(out, before, sizeof(out)) == 0); /* nothing written */
                return 0;
        }
        CHECK(kind != TNS_WAIT_TIMESPEC);
        if (kind == TNS_WAIT_UTIMENS) {
                bool any = null;

                for (int i = 0; i < 2; i++) {
                        int64_t s = in[2 * i], ns = in[2 * i + 1];

                        if (null || ns == UTIME_NOW_) {
                                CHECK(out[2 * i] == now.tv_sec && out[2 * i + 1] == now.tv_nsec);
                                any = true;
                        } else {
                                CHECK(ns == UTIME_OMIT_ || (ns >= 0 && ns < 1000000000));
                                CHECK(out[2 * i] == s && out[2 * i + 1] == ns);
                        }
                }
                CHECK(any);
                return 0;
        }
        /* A timeval or a utimbuf: only a NULL pointer means now. */
        CHECK(null);
        CHECK(out[0] == now.tv_sec);
        if (kind == TNS_WAIT_UTIMES)
                CHECK(out[1] == now.tv_nsec / 1000 && out[2] == now.tv_sec && out[3] == now.tv_nsec / 1000);
        else
                CHECK(out[1] == now.tv_sec);
        return 0;
}
