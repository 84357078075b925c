/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Clock rates: how a namespace's clock runs against the host's. A rate is
 * a fixed-point multiplier (TNS_RATE_ONE = 1, lib/core/offsets-page.h);
 * a rated clock reads anchor_ns + rate * (host - anchor_host), and a
 * frozen one reads anchor_ns. These are the pure parts: parsing and
 * printing a rate, the map and its inverse for waits. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offsets-page.h"

/* The fastest and slowest rates taken: 1/1000000 .. 1000000. Beyond
 * them a clock leaves the kernel's range within hours, or a wait of a
 * second takes days. */
#define TNS_RATE_MAX_TEXT "1000000"
#define TNS_RATE_MULT_MAX (UINT64_C(1000000) << TNS_RATE_SHIFT)
#define TNS_RATE_MULT_MIN (TNS_RATE_ONE / 1000000)

/* One clock class's map from host time to the namespace's. */
struct tns_rate_map {
        uint64_t mult; /* 0: frozen */
        int64_t anchor_host;
        int64_t anchor_ns;
};

/* Parses a rate: a positive decimal ("2", "0.5", "1440", ".25") or a
 * fraction of two positive integers ("1/60"). Returns 0 and the
 * multiplier (rounded to the nearest 2^-32), -EINVAL for anything else
 * (a sign, an exponent, "nan", zero), -ERANGE outside
 * [1/1000000, 1000000]. */
int tns_rate_parse(const char *s, uint64_t *ret_mult);

/* The classes a rate is given to by name (`--rate realtime=2`, the
 * protocol's {"rate": {"monotonic": "0.5"}}): "realtime" is REALTIME's
 * class; "monotonic" is MONOTONIC's and BOOTTIME's, which run at one rate
 * so that they keep their relation. The mask (bit 1 << class) of the
 * name's first len bytes; -EINVAL for anything else ("boottime" too: it
 * runs with MONOTONIC). */
#define TNS_RATE_CLASSES_ALL 7U
_Static_assert(TNS_RATE_CLASSES_ALL == (1U << TNS_CLASS_MAX) - 1, "every class");
int tns_rate_classes_parse(const char *name, size_t len, unsigned *ret_mask);

/* The rate as a short decimal ("2", "0.5", "0.0166667"); "frozen" for 0.
 * -ENOBUFS if size is too small. */
int tns_rate_format(uint64_t mult, char *buf, unsigned size);

/* The namespace's reading for a host reading. */
static inline int64_t tns_rate_map_apply(const struct tns_rate_map *m, int64_t host) {
        return tns_rate_apply(m->mult, m->anchor_host, m->anchor_ns, host);
}

/* The host time at which a running (mult > 0) clock reads `value`:
 * rounded up, so that a wait that ends then finds the namespace's clock
 * at or past value. Saturates at the int64 ends. */
int64_t tns_rate_map_to_host(const struct tns_rate_map *m, int64_t value);

/* A duration of the namespace's clock in host nanoseconds (rounded up,
 * saturating): what a relative wait of `ns` lasts on the host. A frozen
 * clock's (mult 0) relative waits pass in host time, as libfaketime's. */
int64_t tns_rate_duration_to_host(uint64_t mult, int64_t ns);

/* The other way: host nanoseconds as a duration of the namespace's clock
 * (rounded down, saturating; a frozen clock's: the same). What a wait's
 * time left, which the kernel counts in host time, is to the program. */
int64_t tns_rate_duration_from_host(uint64_t mult, int64_t host);

/* Re-anchors a map at host time `host` with a new multiplier: the clock
 * reads the same at `host` and runs on at the new rate, so a live change
 * never moves it back. */
void tns_rate_map_reanchor(struct tns_rate_map *m, int64_t host, uint64_t mult);

/* The map of a class prepared for the vDSO's readers (struct
 * tns_rate_fast, lib/core/offsets-page.h), all but the stamp, which the
 * writer sets: false (all zero) where its form cannot hold (an anchor
 * whose split seconds would leave ±2^32). */
bool tns_rate_fast_prepare(uint64_t mult, int64_t anchor_host, int64_t anchor_ns, struct tns_rate_fast *ret);
