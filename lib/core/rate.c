/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rate.h"

/* Digits into *ret, at most 18 of them (no overflow of uint64); the
 * number of digits read, 0 if none. */
static int digits(const char **p, unsigned max, uint64_t *ret, unsigned *ret_n) {
        uint64_t v = 0;
        unsigned n = 0;

        while (**p >= '0' && **p <= '9') {
                if (n >= max)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (**p - '0');
                n++;
                (*p)++;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* The rate num/den, exactly (before rounding: 1/1000001 rounds to what
 * 1/1000000 does, and is out of range all the same), then m, the
 * rounded multiplier. */
static int mult_check(unsigned __int128 num, unsigned __int128 den, unsigned __int128 m, uint64_t *ret) {
        if (num == 0)
                return -EINVAL; /* "0", "0.0": zero is no rate (freeze is) */
        if (num * 1000000 < den || num > den * 1000000 || m > TNS_RATE_MULT_MAX || m == 0)
                return -ERANGE;
        *ret = (uint64_t) m;
        return 0;
}

int tns_rate_parse(const char *s, uint64_t *ret_mult) {
        uint64_t ip = 0, fp = 0, den, scale = 1;
        unsigned ni = 0, nf = 0, nd;
        const char *p = s;
        int r;

        if (!s)
                return -EINVAL;
        r = digits(&p, 18, &ip, &ni);
        if (r < 0)
                return r;
        if (*p == '/') {
                p++;
                r = digits(&p, 18, &den, &nd);
                if (r < 0)
                        return r;
                if (ni == 0 || nd == 0 || *p || den == 0)
                        return -EINVAL;
                /* Rounded to nearest. */
                return mult_check(ip, den, (((unsigned __int128) ip << TNS_RATE_SHIFT) + den / 2) / den, ret_mult);
        }
        if (*p == '.') {
                p++;
                r = digits(&p, 18, &fp, &nf);
                if (r < 0)
                        return -EINVAL; /* more decimals than any rate needs */
        }
        if (*p || ni + nf == 0)
                return -EINVAL;
        if (ip > 1000000)
                return -ERANGE;
        for (unsigned i = 0; i < nf; i++)
                scale *= 10;
        return mult_check((unsigned __int128) ip * scale + fp, scale,
                          ((unsigned __int128) ip << TNS_RATE_SHIFT) +
                                  ((((unsigned __int128) fp << TNS_RATE_SHIFT) + scale / 2) / scale),
                          ret_mult);
}

int tns_rate_format(uint64_t mult, char *buf, unsigned size) {
        int n;

        if (mult == 0)
                n = snprintf(buf, size, "frozen");
        else
                n = snprintf(buf, size, "%.6g", (double) mult / (double) TNS_RATE_ONE);
        if (n < 0 || (unsigned) n >= size) {
                if (size)
                        buf[0] = 0;
                return -ENOBUFS;
        }
        return 0;
}

static int64_t saturate(__int128 v) {
        return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t) v;
}

/* ceil(a * 2^32 / mult) for mult > 0, any sign of a. */
static __int128 scale_up(__int128 a, uint64_t mult) {
        __int128 n = a * (__int128) TNS_RATE_ONE, q = n / (__int128) mult;

        if (n % (__int128) mult > 0)
                q++;
        return q;
}

int64_t tns_rate_map_to_host(const struct tns_rate_map *m, int64_t value) {
        if (m->mult == 0)
                return value <= m->anchor_ns ? INT64_MIN : INT64_MAX; /* reached already, or never */
        return saturate(scale_up((__int128) value - m->anchor_ns, m->mult) + m->anchor_host);
}

int64_t tns_rate_duration_to_host(uint64_t mult, int64_t ns) {
        if (mult == 0 || mult == TNS_RATE_ONE)
                return ns;
        return saturate(scale_up(ns, mult));
}

int64_t tns_rate_duration_from_host(uint64_t mult, int64_t host) {
        __int128 n;

        if (mult == 0 || mult == TNS_RATE_ONE)
                return host;
        n = (__int128) host * (__int128) mult;
        /* floor(n / 2^32), of either sign */
        return saturate(n >= 0 ? n >> TNS_RATE_SHIFT : -((-n + (__int128) TNS_RATE_ONE - 1) >> TNS_RATE_SHIFT));
}

void tns_rate_map_reanchor(struct tns_rate_map *m, int64_t host, uint64_t mult) {
        m->anchor_ns = tns_rate_map_apply(m, host);
        m->anchor_host = host;
        m->mult = mult;
}

bool tns_rate_fast_prepare(uint64_t mult, int64_t anchor_host, int64_t anchor_ns, struct tns_rate_fast *ret) {
        const int64_t nsec_per_sec = 1000000000;
        const __int128 bound = (__int128) 1 << 32;
        int64_t sec0 = anchor_host / nsec_per_sec, r = anchor_host % nsec_per_sec;
        __int128 c, ch, b, bs;

        *ret = (struct tns_rate_fast){};
        /* The bounds below assume a rate the parsers let through. */
        if (mult > TNS_RATE_MULT_MAX)
                return false;
        if (r < 0) {
                r += nsec_per_sec;
                sec0--;
        }
        /* -mult * r split at bit 32, floor: cl in [0, 2^32), ch into bs.bn. */
        c = -(__int128) mult * r;
        ch = c >> TNS_RATE_SHIFT;
        b = (__int128) anchor_ns + ch;
        bs = b / nsec_per_sec;
        if (b % nsec_per_sec < 0)
                bs--;
        /* Beyond it, a reading's seconds could near the int64
         * nanoseconds' ends, where tns_rate_apply() saturates. */
        if (bs > bound || bs < -bound)
                return false;
        ret->sec0 = (uint64_t) sec0;
        ret->d_max = mult ? (uint64_t) INT64_MAX / mult : UINT64_MAX;
        ret->mult = mult;
        ret->bs = (int64_t) bs;
        ret->bn = (uint64_t) (b - bs * nsec_per_sec);
        ret->cl = (uint64_t) (c - ch * ((__int128) 1 << TNS_RATE_SHIFT));
        return true;
}

int tns_rate_classes_parse(const char *name, size_t len, unsigned *ret_mask) {
        if (len == strlen("realtime") && memcmp(name, "realtime", len) == 0)
                *ret_mask = 1U << TNS_CLASS_REALTIME;
        else if (len == strlen("monotonic") && memcmp(name, "monotonic", len) == 0)
                *ret_mask = (1U << TNS_CLASS_MONOTONIC) | (1U << TNS_CLASS_BOOTTIME);
        else
                return -EINVAL;
        return 0;
}
