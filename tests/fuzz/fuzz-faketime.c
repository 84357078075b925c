/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the FAKETIME parser (lib/core/faketime.c) and the
 * rate parser and map under it (lib/core/rate.c): whatever the text, a
 * result is in range or refused with a reason, and the map agrees with
 * exact arithmetic. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "faketime.h"
#include "rate.h"
#include "fuzz-check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_faketime(const char *s) {
        struct tns_faketime f = {.rate_mult = 42};
        const char *why = NULL;
        int r;

        r = tns_faketime_parse(s, &f, &why);
        CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0) {
                CHECK(why && why[0]);
                CHECK(f.rate_mult == 42);
                return;
        }
        CHECK(f.has_realtime);
        CHECK(f.rate_mult == 0 || (f.rate_mult >= TNS_RATE_MULT_MIN && f.rate_mult <= TNS_RATE_MULT_MAX));
        /* Frozen is a date, and takes no rate. */
        if (f.freeze)
                CHECK(f.realtime.kind == TNS_OFFSET_ABSOLUTE && f.rate_mult == 0);
}

static void check_rate(const char *s) {
        uint64_t m = 42;
        int r = tns_rate_parse(s, &m);

        CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0)
                CHECK(m == 42);
        else
                CHECK(m >= TNS_RATE_MULT_MIN && m <= TNS_RATE_MULT_MAX);
}

static void check_map(const uint8_t *data, size_t size) {
        int64_t v[4] = {};
        struct tns_rate_map m;
        __int128 exact;
        int64_t got, h;

        if (size > 0)
                memcpy(v, data, size < sizeof(v) ? size : sizeof(v));
        m = (struct tns_rate_map){(uint64_t) v[0] % (TNS_RATE_MULT_MAX + 1), v[1], v[2]};
        exact = ((((__int128) v[3] - v[1]) * (__int128) m.mult) >> TNS_RATE_SHIFT) + v[2];
        got = tns_rate_map_apply(&m, v[3]);
        if (exact > INT64_MAX)
                CHECK(got == INT64_MAX);
        else if (exact < INT64_MIN)
                CHECK(got == INT64_MIN);
        else
                CHECK(got == (int64_t) exact);
        /* The vDSO's split form agrees with the joined one wherever it
         * answers (v[3] read as the base time's seconds and ns). */
        {
                uint64_t sec = (uint64_t) v[3] >> 30, ns = (uint64_t) v[3] & ((UINT64_C(1) << 34) - 1);
                int64_t s = 0, n = 0;

                if (tns_rate_apply_split(m.mult, m.anchor_host, m.anchor_ns, sec, ns, &s, &n)) {
                        CHECK(n >= 0 && n < 1000000000);
                        CHECK((__int128) s * 1000000000 + n ==
                              tns_rate_apply(m.mult, m.anchor_host, m.anchor_ns,
                                             (int64_t) (sec * UINT64_C(1000000000) + ns)));
                }
        }
        /* The vDSO's prepared form too (ns below 2^31, sec from the
         * anchor's second on: where it answers). */
        {
                uint64_t ns = (uint64_t) v[3] & INT32_MAX, sec;
                struct tns_rate_fast f;
                int64_t s = 0, n = 0;

                if (tns_rate_fast_prepare(m.mult, m.anchor_host, m.anchor_ns, &f)) {
                        sec = f.sec0 + (((uint64_t) v[3] >> 31) & ((UINT64_C(1) << 32) - 1));
                        f.stamp = TNS_RATE_FAST_STAMP | 2;
                        if (sec < (UINT64_C(1) << 33) && tns_rate_fast_apply(&f, 2, sec, ns, &s, &n)) {
                                CHECK(n >= 0 && n < 1000000000);
                                CHECK((__int128) s * 1000000000 + n ==
                                      tns_rate_apply(m.mult, m.anchor_host, m.anchor_ns,
                                                     (int64_t) (sec * UINT64_C(1000000000) + ns)));
                        }
                }
        }
        /* The inverse lands at or past the value, and not a nanosecond
         * late, where nothing saturates. */
        if (m.mult >= TNS_RATE_MULT_MIN) {
                h = tns_rate_map_to_host(&m, v[3]);
                if (h != INT64_MAX && h != INT64_MIN && tns_rate_map_apply(&m, h) != INT64_MAX) {
                        CHECK(tns_rate_map_apply(&m, h) >= v[3]);
                        /* Unless the value is INT64_MIN itself, which
                         * everything before it saturates to. */
                        if (h != INT64_MIN + 1 && v[3] != INT64_MIN)
                                CHECK(tns_rate_map_apply(&m, h - 1) < v[3] || m.mult > TNS_RATE_ONE);
                }
        }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc;
        (void) argv;
        setenv("TZ", "Europe/Berlin", 1);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                return 0;
        if (size > 0)
                memcpy(s, data, size);
        s[size] = '\0';
        check_faketime(s);
        check_rate(s);
        free(s);
        check_map(data, size);
        return 0;
}
