/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the /proc text rewriting: the host's /proc/stat and
 * /proc/uptime are input the supervisor parses. The first 16 bytes give a
 * btime and a boottime; the rest is the text (also read as a
 * /proc/PID/timens_offsets). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "procfs-text.h"
#include "fuzz-check.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_stat(const char *text, size_t len, int64_t btime) {
        size_t size = len + 32;
        char *out = malloc(size), *small = malloc(len + 1);
        ssize_t n, m;

        if (!out || !small)
                goto done;
        n = tns_procfs_stat(text, len, btime, out, size);
        CHECK(n == -EINVAL || (n >= 0 && (size_t) n < size));
        if (n >= 0) {
                CHECK(strlen(out) <= (size_t) n);
                CHECK(memmem(out, (size_t) n, "btime ", 6));
                /* Putting the original value back gives the original. */
                m = tns_procfs_stat(out, (size_t) n, btime, small, len + 1);
                CHECK(m == n || m == -ENOBUFS);
        }
        /* A buffer too small is refused, never overrun (ASan watches). */
        n = tns_procfs_stat(text, len, btime, small, len / 2 + 1);
        CHECK(n == -EINVAL || n == -ENOBUFS || (n >= 0 && (size_t) n <= len / 2));
done:
        free(out);
        free(small);
}

static void check_uptime(const char *text, const struct timespec *bt) {
        char buf[TNS_UPTIME_MAX];
        ssize_t n;

        n = tns_procfs_uptime(bt, text, buf, sizeof(buf));
        CHECK(n == -EINVAL || n == -ENOBUFS || (n > 0 && (size_t) n < sizeof(buf)));
        if (n > 0)
                CHECK(buf[n - 1] == '\n' && (size_t) n == strlen(buf));
}

static void check_timens_offsets(const char *text, size_t len) {
        int64_t o[3] = {INT64_MIN, INT64_MIN, INT64_MIN};
        int r;

        r = tns_timens_offsets_parse(text, len, o);
        CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
        /* The kernel has no realtime offset: never one from us. */
        if (r == 0)
                CHECK(o[2] == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        int64_t v[2] = {};
        struct timespec bt;
        char *text;

        memcpy(v, data, size < sizeof(v) ? size : sizeof(v));
        data += size < sizeof(v) ? size : sizeof(v);
        size -= size < sizeof(v) ? size : sizeof(v);
        text = malloc(size + 1);
        if (!text)
                return 0;
        if (size > 0)
                memcpy(text, data, size);
        text[size] = '\0';
        check_stat(text, size, v[0]);
        bt = (struct timespec){.tv_sec = v[1], .tv_nsec = (long) ((uint64_t) v[0] % 1000000000u)};
        check_uptime(text, &bt);
        check_timens_offsets(text, size);
        free(text);
        return 0;
}
