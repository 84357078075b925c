/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "offset-parse.h"
#include "time-util.h"
#include "util.h"

#define NSEC ((uint64_t) TNS_NSEC_PER_SEC)
#define SEC_PER_DAY 86400

const char tns_offset_forms_relative[] = "seconds (86400, -3600, 0.5) or signed suffixed components "
                                         "(+10d, -3h30m, +1y, '1d 12h'; units ns us ms s m h d w y)";
const char tns_offset_forms_absolute[] = "a date (2030-01-01, 2030-01-01T12:00:00Z, 2030-01-01T12:00:00+02:00, "
                                         "'2030-01-01 12:00:00', @1893456000)";

static const struct unit {
        const char *name;
        uint64_t ns;
} units[] = {
        {"ns", 1},
        {"us", 1000},
        {"ms", 1000000},
        {"s", NSEC},
        {"sec", NSEC},
        {"m", 60 * NSEC},
        {"min", 60 * NSEC},
        {"h", 3600 * NSEC},
        {"d", SEC_PER_DAY *NSEC},
        {"w", 7 * SEC_PER_DAY *NSEC},
        {"y", 365 * SEC_PER_DAY *NSEC},
};

/* A calendar date and wall-clock time as written; zone_sec is east of UTC. */
struct civil {
        int year, mon, day, hour, min, sec;
        uint64_t frac9;
        bool has_zone;
        int zone_sec;
};

/* Not isdigit(): that one follows the locale and wants unsigned char. */
static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* Sums saturate instead of failing so that a value out of range is
 * reported as -ERANGE only once the whole text is known to be well formed. */
static uint64_t sat_add(uint64_t a, uint64_t b) {
        uint64_t r;

        return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t sat_mul(uint64_t a, uint64_t b) {
        uint64_t r;

        return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* ".DDD" with 1 to 9 digits, as billionths; nothing at all is 0. */
static int parse_fraction(const char **p, uint64_t *ret_frac9) {
        const char *q = *p;
        uint64_t f = 0;
        unsigned n = 0;

        if (*q == '.') {
                for (q++; is_digit(*q); q++, n++) {
                        if (n >= 9)
                                return -EINVAL;
                        f = f * 10 + (uint64_t) (*q - '0');
                }
                if (n == 0)
                        return -EINVAL;
                for (; n < 9; n++)
                        f *= 10;
        }
        *p = q;
        *ret_frac9 = f;
        return 0;
}

/* DIGITS[.FRACTION]: no sign, no exponent, no hex, no leading '.'. */
static int parse_number(const char **p, uint64_t *ret_int, uint64_t *ret_frac9) {
        const char *q = *p;
        uint64_t n = 0;
        int r;

        if (!is_digit(*q))
                return -EINVAL;
        for (; is_digit(*q); q++)
                n = sat_add(sat_mul(n, 10), (uint64_t) (*q - '0'));
        r = parse_fraction(&q, ret_frac9);
        if (r < 0)
                return r;
        *p = q;
        *ret_int = n;
        return 0;
}

static const struct unit *find_unit(const char *name, size_t len) {
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (strlen(units[i].name) == len && memcmp(units[i].name, name, len) == 0)
                        return &units[i];
        return NULL;
}

/* n.frac9 units in nanoseconds. The fraction is split at whole seconds so
 * that neither product can overflow (frac9 < 1e9, a year is 3.2e7 s). */
static int scale(uint64_t n, uint64_t frac9, uint64_t unit, uint64_t *ret) {
        uint64_t sub = frac9 * (unit % NSEC);

        /* "1.5ns" or "0.0001us" name a fraction of a nanosecond: refuse
         * rather than round, so that what was written is what applies. */
        if (sub % NSEC != 0)
                return -EINVAL;
        *ret = sat_add(sat_mul(n, unit), frac9 * (unit / NSEC) + sub / NSEC);
        return 0;
}

/* NUMBER[UNIT]; a missing unit means seconds and is flagged in ret_bare. */
static int parse_component(const char **p, bool *ret_bare, uint64_t *ret_ns) {
        const struct unit *u = NULL;
        const char *q = *p, *name;
        uint64_t n, frac9;
        int r;

        r = parse_number(&q, &n, &frac9);
        if (r < 0)
                return r;
        for (name = q; *q >= 'a' && *q <= 'z'; q++)
                ;
        if (q > name) {
                u = find_unit(name, (size_t) (q - name));
                if (!u)
                        return -EINVAL;
        }
        r = scale(n, frac9, u ? u->ns : NSEC, ret_ns);
        if (r < 0)
                return r;
        *p = q;
        *ret_bare = !u;
        return 0;
}

/* A magnitude with a sign, allowing INT64_MIN whose magnitude is 2^63. */
static int apply_sign(uint64_t mag, bool neg, int64_t *ret) {
        if (mag > (uint64_t) INT64_MAX + neg)
                return -ERANGE;
        *ret = !neg || mag == 0 ? (int64_t) mag : -(int64_t) (mag - 1) - 1;
        return 0;
}

static int parse_relative(const char *s, int64_t *ret) {
        uint64_t total = 0, ns;
        bool neg = false, bare;
        unsigned n;
        int r;

        if (*s == '+' || *s == '-')
                neg = *s++ == '-';
        for (n = 1;; n++) {
                r = parse_component(&s, &bare, &ns);
                if (r < 0)
                        return r;
                /* Plain seconds stand alone: "1d 5" is more likely a typo
                 * than five seconds. */
                if (bare && (n > 1 || *s != '\0'))
                        return -EINVAL;
                total = sat_add(total, ns);
                if (*s == '\0')
                        break;
                s += strspn(s, " ");
        }
        return apply_sign(total, neg, ret);
}

/* Only values whose whole seconds are in [0, KTIME_SEC_MAX) are dates. */
static int epoch_to_ns(int64_t sec, uint64_t frac9, int64_t *ret) {
        if (sec < 0 || sec >= TNS_KTIME_SEC_MAX)
                return -ERANGE;
        *ret = sec * TNS_NSEC_PER_SEC + (int64_t) frac9;
        return 0;
}

/* "@SECONDS[.FRACTION]"; a sign is accepted so that "@-1" is out of range
 * rather than malformed. */
static int parse_epoch(const char *s, int64_t *ret) {
        uint64_t n, frac9;
        bool neg = false;
        int r;

        if (*s == '+' || *s == '-')
                neg = *s++ == '-';
        r = parse_number(&s, &n, &frac9);
        if (r < 0)
                return r;
        if (*s != '\0')
                return -EINVAL;
        if (neg && (n > 0 || frac9 > 0))
                return -ERANGE;
        return epoch_to_ns(n < (uint64_t) INT64_MAX ? (int64_t) n : INT64_MAX, frac9, ret);
}

/* Exactly `width` digits: ISO 8601 fields are fixed width. */
static int parse_fixed(const char **p, unsigned width, int *ret) {
        int v = 0;

        for (unsigned i = 0; i < width; i++) {
                if (!is_digit((*p)[i]))
                        return -EINVAL;
                v = v * 10 + ((*p)[i] - '0');
        }
        *p += width;
        *ret = v;
        return 0;
}

/* A fixed-width field followed by a separator, or by nothing if sep is 0. */
static int parse_field(const char **p, unsigned width, char sep, int *ret) {
        int r;

        r = parse_fixed(p, width, ret);
        if (r < 0)
                return r;
        if (sep != '\0') {
                if (**p != sep)
                        return -EINVAL;
                (*p)++;
        }
        return 0;
}

static bool is_leap_year(int y) {
        return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static int days_in_month(int y, int m) {
        static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

        return days[m - 1] + (m == 2 && is_leap_year(y));
}

/* YYYY-MM-DD of the proleptic Gregorian calendar. */
static int parse_date(const char **p, struct civil *c) {
        int r;

        r = parse_field(p, 4, '-', &c->year);
        if (r >= 0)
                r = parse_field(p, 2, '-', &c->mon);
        if (r >= 0)
                r = parse_field(p, 2, '\0', &c->day);
        if (r < 0)
                return r;
        if (c->mon < 1 || c->mon > 12 || c->day < 1 || c->day > days_in_month(c->year, c->mon))
                return -EINVAL;
        return 0;
}

/* HH:MM[:SS[.FRACTION]]; second 60 is a leap second as in RFC 3339. */
static int parse_clock(const char **p, struct civil *c) {
        int r;

        r = parse_field(p, 2, ':', &c->hour);
        if (r >= 0)
                r = parse_field(p, 2, '\0', &c->min);
        if (r >= 0 && **p == ':') {
                (*p)++;
                r = parse_field(p, 2, '\0', &c->sec);
                if (r >= 0)
                        r = parse_fraction(p, &c->frac9);
        }
        if (r < 0)
                return r;
        if (c->hour > 23 || c->min > 59 || c->sec > 60)
                return -EINVAL;
        return 0;
}

/* Z, +HH:MM or -HHMM; none leaves the time local. */
static int parse_zone(const char **p, struct civil *c) {
        int sign, hh, mm, r;

        if (**p == 'Z' || **p == 'z') {
                (*p)++;
                c->has_zone = true;
                return 0;
        }
        if (**p != '+' && **p != '-')
                return 0;
        sign = *(*p)++ == '-' ? -1 : 1;
        r = parse_fixed(p, 2, &hh);
        if (r < 0)
                return r;
        if (**p == ':')
                (*p)++;
        r = parse_fixed(p, 2, &mm);
        if (r < 0)
                return r;
        if (hh > 23 || mm > 59)
                return -EINVAL;
        c->has_zone = true;
        c->zone_sec = sign * (hh * 3600 + mm * 60);
        return 0;
}

/* Days since 1970-01-01, after Howard Hinnant's days_from_civil(): exact
 * for any Gregorian date, with no dependency on TZ or timegm(). */
static int64_t days_from_civil(int y, int m, int d) {
        int64_t era, yoe, doy, doe;

        y -= m <= 2;
        era = (y >= 0 ? y : y - 399) / 400;
        yoe = y - era * 400;
        doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
        doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

static int64_t civil_to_utc(const struct civil *c) {
        return days_from_civil(c->year, c->mon, c->day) * SEC_PER_DAY + c->hour * 3600 + c->min * 60 + c->sec -
               c->zone_sec;
}

static int civil_to_local(const struct civil *c, int64_t *ret) {
        struct tm tm = {
                .tm_year = c->year - 1900,
                .tm_mon = c->mon - 1,
                .tm_mday = c->day,
                .tm_hour = c->hour,
                .tm_min = c->min,
                /* A leap second is added afterwards: mktime() would roll it
                 * into the next minute, which the check below would refuse. */
                .tm_sec = c->sec == 60 ? 59 : c->sec,
                .tm_isdst = -1,
        };
        time_t t;

        t = mktime(&tm);
        /* (time_t) -1 is also 1969-12-31T23:59:59Z: out of range either way. */
        if (t == (time_t) -1)
                return -ERANGE;
        /* mktime() moves a wall time that the zone skips (a DST gap) instead
         * of failing; date(1) calls such a time invalid, and so do we. */
        if (tm.tm_year != c->year - 1900 || tm.tm_mon != c->mon - 1 || tm.tm_mday != c->day || tm.tm_hour != c->hour ||
            tm.tm_min != c->min)
                return -EINVAL;
        *ret = (int64_t) t + (c->sec == 60);
        return 0;
}

static int parse_date_time(const char *s, int64_t *ret) {
        struct civil c = {};
        int64_t sec;
        int r;

        r = parse_date(&s, &c);
        if (r >= 0 && (*s == 'T' || *s == 't' || *s == ' ')) {
                s++;
                r = parse_clock(&s, &c);
                if (r >= 0)
                        r = parse_zone(&s, &c);
        }
        if (r < 0)
                return r;
        if (*s != '\0')
                return -EINVAL;
        if (c.has_zone)
                sec = civil_to_utc(&c);
        else {
                r = civil_to_local(&c, &sec);
                if (r < 0)
                        return r;
        }
        return epoch_to_ns(sec, c.frac9, ret);
}

/* No relative form starts with '@' or "YYYY-", so the first characters
 * decide, and an absolute date refused by !allow_absolute is never
 * misread as something else. */
static bool looks_absolute(const char *s) {
        if (s[0] == '@')
                return true;
        for (unsigned i = 0; i < 4; i++)
                if (!is_digit(s[i]))
                        return false;
        return s[4] == '-';
}

int tns_offset_parse(const char *s, bool allow_absolute, struct tns_offset_spec *ret) {
        struct tns_offset_spec spec;
        int r;

        if (!s)
                return -EINVAL;
        if (!looks_absolute(s)) {
                spec.kind = TNS_OFFSET_RELATIVE;
                r = parse_relative(s, &spec.ns);
        } else if (!allow_absolute)
                return -EINVAL;
        else {
                spec.kind = TNS_OFFSET_ABSOLUTE;
                r = s[0] == '@' ? parse_epoch(s + 1, &spec.ns) : parse_date_time(s, &spec.ns);
        }
        if (r < 0)
                return r;
        if (ret)
                *ret = spec;
        return 0;
}

/* Whole seconds and the fraction without trailing zeros, then 's'. */
static int format_seconds(uint64_t ns, char *buf, size_t size) {
        char frac[16];
        size_t len;

        if (ns % NSEC == 0)
                return snprintf(buf, size, "%" PRIu64 "s", ns / NSEC);
        len = (size_t) snprintf(frac, sizeof(frac), "%09" PRIu64, ns % NSEC);
        while (len > 0 && frac[len - 1] == '0')
                len--;
        return snprintf(buf, size, "%" PRIu64 ".%.*ss", ns / NSEC, (int) len, frac);
}

/* Largest unit first, d h m s; w and y are left out because "+13d" reads
 * more plainly than "+1w6d" and a year of 365 days surprises people. */
static void format_magnitude(uint64_t mag, char *buf, size_t size) {
        static const struct {
                uint64_t ns;
                char unit;
        } parts[] = {
                {SEC_PER_DAY * NSEC, 'd'},
                {3600 * NSEC, 'h'},
                {60 * NSEC, 'm'},
        };
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(parts); i++)
                if (mag >= parts[i].ns) {
                        n += (size_t) snprintf(buf + n, size - n, "%" PRIu64 "%c", mag / parts[i].ns, parts[i].unit);
                        mag %= parts[i].ns;
                }
        if (mag > 0)
                format_seconds(mag, buf + n, size - n);
}

int tns_offset_format(int64_t ns, char *buf, unsigned size) {
        /* The longest is "-106751d23h47m16.854775808s", 27 characters. */
        char tmp[64];
        size_t len;

        if (ns == 0)
                strcpy(tmp, "0");
        else {
                tmp[0] = ns < 0 ? '-' : '+';
                /* Unsigned negation, so that INT64_MIN has a magnitude too. */
                format_magnitude(ns < 0 ? 0 - (uint64_t) ns : (uint64_t) ns, tmp + 1, sizeof(tmp) - 1);
        }
        len = strlen(tmp);
        if (len >= size) {
                if (size > 0)
                        buf[0] = '\0';
                return -ENOBUFS;
        }
        memcpy(buf, tmp, len + 1);
        return 0;
}
