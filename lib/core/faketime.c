/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "faketime.h"
#include "rate.h"

#define SPEC_MAX 128

static int why(const char **ret_why, const char *text, int r) {
        *ret_why = text;
        return r;
}

/* "YYYY-MM-DD HH:MM:SS" and nothing else. */
static bool faketime_date(const char *s) {
        static const char pattern[] = "dddd-dd-dd dd:dd:dd";

        for (size_t i = 0; i < sizeof(pattern) - 1; i++)
                if (pattern[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pattern[i])
                        return false;
        return s[sizeof(pattern) - 1] == '\0';
}

int tns_faketime_parse(const char *s, struct tns_faketime *ret, const char **ret_why) {
        struct tns_faketime f = {};
        char buf[SPEC_MAX];
        char *last, *body;
        size_t n;
        int r;

        if (!s)
                return why(ret_why, "no specification", -EINVAL);
        n = strlen(s);
        if (n >= sizeof(buf))
                return why(ret_why, "longer than any FAKETIME specification", -EINVAL);
        memcpy(buf, s, n + 1);
        /* Trim the ends. */
        while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
                buf[--n] = 0;
        body = buf + strspn(buf, " \t");
        if (!*body)
                return why(ret_why, "empty", -EINVAL);
        if (body[0] == '%')
                return why(ret_why, "the file form ('%') reads a file's time: not supported", -EINVAL);

        /* A trailing "xR" or "iN" word. */
        last = strrchr(body, ' ');
        if (!last)
                last = strrchr(body, '\t');
        if ((last && last[1] == 'i') || body[0] == 'i')
                return why(ret_why,
                           "increments ('i2.0') advance the clock at each read in each process; timens' clocks are "
                           "one per namespace, read by every member without asking anyone, so they are not "
                           "supported (a rate, 'xR', makes a clock run fast or slow)",
                           -EINVAL);
        if (last && last[1] == 'x') {
                r = tns_rate_parse(last + 2, &f.rate_mult);
                if (r == -ERANGE)
                        return why(ret_why, "the rate after 'x' is out of range (1/1000000 to 1000000)", r);
                if (r < 0)
                        return why(ret_why,
                                   "the rate after 'x' is not a positive decimal or fraction (x2, x0.5, x1/60)",
                                   -EINVAL);
                *last = 0;
                n = strlen(body);
                while (n > 0 && (body[n - 1] == ' ' || body[n - 1] == '\t'))
                        body[--n] = 0;
        } else if (body[0] == 'x')
                return why(ret_why, "a rate needs a time before it ('+0 x2')", -EINVAL);

        if (body[0] == '+' || body[0] == '-') {
                r = tns_offset_parse(body, false, &f.realtime);
                if (r < 0)
                        return why(ret_why,
                                   r == -ERANGE ? "the offset is out of range"
                                                : "not an offset: a sign, then seconds or units (+2d, -3h, +90m, "
                                                  "-120)",
                                   r);
        } else {
                bool start_at = body[0] == '@';

                /* libfaketime reads a date as strptime("%Y-%m-%d %T")
                 * does: a date alone, ISO 8601 or seconds since the
                 * epoch are refused there, and here (--realtime takes
                 * them). */
                if (!faketime_date(body + start_at))
                        return why(ret_why,
                                   "a FAKETIME date is 'YYYY-MM-DD HH:MM:SS', as libfaketime reads it: "
                                   "'@2030-01-01 12:00:00' (starts there), '2030-01-01 12:00:00' (frozen)",
                                   -EINVAL);
                r = tns_offset_parse(body + start_at, true, &f.realtime);
                if (r == -ERANGE)
                        return why(ret_why, "the date is out of range (1970 to 2262)", r);
                if (r < 0 || f.realtime.kind != TNS_OFFSET_ABSOLUTE || body[start_at] == '@')
                        return why(ret_why,
                                   "not a FAKETIME specification: '+2d', '-3h x2', '@2030-01-01 12:00:00' (starts "
                                   "there), '2030-01-01 12:00:00' (frozen)",
                                   -EINVAL);
                if (!start_at && f.rate_mult)
                        return why(ret_why,
                                   "a date without '@' is a frozen clock, which takes no rate: '@DATE xR' starts at "
                                   "DATE and runs at R",
                                   -EINVAL);
                f.freeze = !start_at;
        }
        f.has_realtime = true;
        *ret = f;
        return 0;
}
