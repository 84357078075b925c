/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the offset parser and the time arithmetic under it.
 * Parses the input as text, both with and without absolute dates, and
 * checks what any result must satisfy; then reads three int64 from the
 * input bytes and checks the time-util functions against exact 128-bit
 * arithmetic. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offset-parse.h"
#include "time-util.h"
#include "fuzz-check.h"

#define NSEC TNS_NSEC_PER_SEC


int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool fits_int64(__int128 v) {
        return v >= INT64_MIN && v <= INT64_MAX;
}

/* The floor second of v nanoseconds, exactly. */
static __int128 floor_sec(__int128 v) {
        __int128 s = v / NSEC;

        return v % NSEC < 0 ? s - 1 : s;
}

/* format() must give text that parses back to the same offset, and must
 * fit exactly a buffer of its own length plus one. */
static void check_format(int64_t ns) {
        struct tns_offset_spec spec = {};
        char buf[64], exact[64];
        size_t len;

        CHECK(tns_offset_format(ns, buf, sizeof(buf)) == 0);
        len = strlen(buf);
        CHECK(len > 0 && len <= 27);
        CHECK(tns_offset_format(ns, exact, (unsigned) len + 1) == 0);
        CHECK(strcmp(buf, exact) == 0);
        CHECK(tns_offset_format(ns, exact, (unsigned) len) == -ENOBUFS);
        CHECK(exact[0] == '\0');
        CHECK(tns_offset_parse(buf, false, &spec) == 0);
        CHECK(spec.kind == TNS_OFFSET_RELATIVE);
        CHECK(spec.ns == ns);
}

static void check_parse(const char *s) {
        struct tns_offset_spec rel = {.kind = 42, .ns = 42}, any = {.kind = 42, .ns = 42};
        int r_rel, r_any;

        r_rel = tns_offset_parse(s, false, &rel);
        r_any = tns_offset_parse(s, true, &any);
        CHECK(r_rel == 0 || r_rel == -EINVAL || r_rel == -ERANGE);
        CHECK(r_any == 0 || r_any == -EINVAL || r_any == -ERANGE);
        if (r_rel < 0)
                CHECK(rel.kind == 42 && rel.ns == 42);
        if (r_any < 0)
                CHECK(any.kind == 42 && any.ns == 42);

        /* Allowing dates changes nothing about text that is not one. */
        if (r_rel == 0 || r_rel == -ERANGE)
                CHECK(r_any == r_rel);
        if (r_rel == 0) {
                CHECK(rel.kind == TNS_OFFSET_RELATIVE);
                CHECK(any.kind == rel.kind && any.ns == rel.ns);
                check_format(rel.ns);
        }
        if (r_any == 0 && any.kind == TNS_OFFSET_RELATIVE)
                CHECK(r_rel == 0);
        if (r_any == 0 && any.kind == TNS_OFFSET_ABSOLUTE) {
                CHECK(r_rel == -EINVAL);
                CHECK(any.ns >= 0 && any.ns < TNS_KTIME_SEC_MAX * NSEC);
        }
}

static void check_ts_to_ns(const struct timespec *ts) {
        __int128 exact = (__int128) ts->tv_sec * NSEC + ts->tv_nsec;
        int64_t ns = 42;
        int r;

        r = tns_ts_to_ns(ts, &ns);
        if (ts->tv_nsec < 0 || ts->tv_nsec >= NSEC)
                CHECK(r == -EINVAL);
        else if (!fits_int64(exact))
                CHECK(r == -ERANGE);
        else
                CHECK(r == 0 && ns == exact);
        if (r < 0)
                CHECK(ns == 42);
        CHECK(tns_ts_valid(ts) == (ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < NSEC));
}

static void check_ns_to_ts(int64_t ns) {
        struct timespec ts = tns_ns_to_ts(ns);
        int64_t back;

        CHECK(ts.tv_nsec >= 0 && ts.tv_nsec < NSEC);
        CHECK(tns_ts_to_ns(&ts, &back) == 0 && back == ns);
}

/* ts must be normalised. */
static void check_add(const struct timespec *ts, int64_t ns) {
        __int128 exact = (__int128) ts->tv_sec * NSEC + ts->tv_nsec + ns;
        struct timespec sum = {42, 42};
        int64_t diff;
        int r;

        r = tns_ts_add_ns(ts, ns, &sum);
        if (!fits_int64(floor_sec(exact))) {
                CHECK(r == -EOVERFLOW);
                CHECK(sum.tv_sec == 42 && sum.tv_nsec == 42);
                return;
        }
        CHECK(r == 0);
        CHECK(sum.tv_nsec >= 0 && sum.tv_nsec < NSEC);
        CHECK((__int128) sum.tv_sec * NSEC + sum.tv_nsec == exact);
        /* What was added can be taken back out. */
        CHECK(tns_ts_diff_ns(&sum, ts, &diff) == 0 && diff == ns);
}

/* a and b may be anything, normalised or not. */
static void check_diff(const struct timespec *a, const struct timespec *b) {
        __int128 exact = ((__int128) a->tv_sec - b->tv_sec) * NSEC +
                         ((__int128) a->tv_nsec - b->tv_nsec);
        int64_t diff = 42;
        int r;

        r = tns_ts_diff_ns(a, b, &diff);
        if (fits_int64(exact))
                CHECK(r == 0 && diff == exact);
        else
                CHECK(r == -ERANGE && diff == 42);
}

static void check_ns_add(int64_t a, int64_t b) {
        __int128 exact = (__int128) a + b;
        int64_t sum = 42;
        int r;

        r = tns_ns_add(a, b, &sum);
        if (fits_int64(exact))
                CHECK(r == 0 && sum == exact);
        else
                CHECK(r == -ERANGE && sum == 42);
}

static void check_time_util(const uint8_t *data, size_t size) {
        int64_t v[3] = {};
        struct timespec norm, raw_a, raw_b;

        if (size > 0)
                memcpy(v, data, size < sizeof(v) ? size : sizeof(v));
        /* A normalised timespec with any tv_sec, and two raw ones. */
        norm = (struct timespec){.tv_sec = v[0], .tv_nsec = (long) ((v[2] % NSEC + NSEC) % NSEC)};
        raw_a = (struct timespec){.tv_sec = v[0], .tv_nsec = (long) v[2]};
        raw_b = (struct timespec){.tv_sec = v[1], .tv_nsec = (long) (v[0] ^ v[2])};

        check_ts_to_ns(&norm);
        check_ts_to_ns(&raw_a);
        check_ns_to_ts(v[1]);
        check_ns_to_ts(v[2]);
        check_add(&norm, v[1]);
        check_diff(&raw_a, &raw_b);
        check_diff(&norm, &raw_b);
        check_ns_add(v[1], v[2]);
        check_format(v[1]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc;
        (void) argv;
        /* Local dates depend on TZ: fix it, to one with DST gaps, so that
         * runs are reproducible and the gap check is exercised. */
        setenv("TZ", "Europe/Berlin", 1);
        tzset();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s;

        /* An exact-size copy, so that ASan sees any read past the NUL. */
        s = malloc(size + 1);
        if (!s)
                return 0;
        if (size > 0)
                memcpy(s, data, size);
        s[size] = '\0';
        check_parse(s);
        free(s);

        check_time_util(data, size);
        return 0;
}
