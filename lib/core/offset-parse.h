/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one parser for offsets and dates, shared by timensctl, the daemon's
 * API and the OCI hook, so that every interface accepts the same words.
 *
 * Relative offsets (any clock):
 *   86400        plain seconds, optionally signed and with a fraction
 *                (-3600, 0.25) — what util-linux unshare --monotonic takes
 *   +10d -3h30m  signed, suffixed components: ns us ms s sec m min h d w y
 *                (m = minutes, y = 365 days); components may repeat in any
 *                order and be separated by spaces ("1d 12h"); no
 *                fraction of a nanosecond
 * Absolute dates (realtime only):
 *   2030-01-01                  midnight, local time
 *   2030-01-01T12:00:00Z        ISO 8601 / RFC 3339; 'Z' or +HH:MM / -HHMM
 *                               zone, fraction of a second allowed
 *   2030-01-01 12:00:00         faketime style, local time (as date(1))
 *   @1893456000                 seconds since the epoch (UTC)
 * Local time is the TZ of the calling process, as with date(1).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum tns_offset_kind {
        TNS_OFFSET_RELATIVE, /* ns is a signed offset */
        TNS_OFFSET_ABSOLUTE, /* ns is a CLOCK_REALTIME value (ns since the epoch) */
};

struct tns_offset_spec {
        enum tns_offset_kind kind;
        int64_t ns;
};

/* Returns 0, -EINVAL for text that matches no form (or an absolute date
 * when !allow_absolute), -ERANGE for a value out of range: relative beyond
 * int64 nanoseconds, absolute before 1970-01-01T00:00:00Z or at/after
 * 2262-04-11T23:47:16Z (where 64-bit nanoseconds end). */
int tns_offset_parse(const char *s, bool allow_absolute, struct tns_offset_spec *ret);

/* One-line summaries of the accepted forms, for error messages and --help. */
extern const char tns_offset_forms_relative[];
extern const char tns_offset_forms_absolute[];

/* Formats a relative offset in its canonical form: days, hours, minutes
 * and seconds, largest first, with a fraction of a second if needed
 * ("+10d", "-3h30m", "+1.5s", "0"), such that tns_offset_parse() gives it
 * back. -ENOBUFS (and an empty string) if size is too small. */
int tns_offset_format(int64_t ns, char *buf, unsigned size);

/* One clock of "offsets": absent, a relative offset or a date. */
struct tns_clock_arg {
        bool set;
        struct tns_offset_spec spec;
};
