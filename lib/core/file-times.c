/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "clocks.h"
#include "file-times.h"

/* include/uapi/linux/stat.h */
#define TNS_UTIME_NOW ((1L << 30) - 1L)
#define TNS_UTIME_OMIT ((1L << 30) - 2L)

/* The kernel's layouts on x86-64. */
struct k_timespec {
        int64_t tv_sec, tv_nsec;
};
struct k_timeval {
        int64_t tv_sec, tv_usec;
};
struct k_utimbuf {
        int64_t actime, modtime;
};

int tns_file_times_classify(enum tns_sys sys, const uint64_t args[6], struct tns_wait_spec *ret) {
        struct tns_wait_spec s = {.clock_class = TNS_CLASS_REALTIME, .now = true};

        (void) args;
        switch (sys) {
        case TNS_SYS_UTIMENSAT: /* (dirfd, path, times, flags) */
                s.arg = 2;
                s.kind = TNS_WAIT_UTIMENS;
                break;
        case TNS_SYS_FUTIMESAT: /* (dirfd, path, times) */
                s.arg = 2;
                s.kind = TNS_WAIT_UTIMES;
                break;
        case TNS_SYS_UTIMES: /* (path, times) */
                s.arg = 1;
                s.kind = TNS_WAIT_UTIMES;
                break;
        case TNS_SYS_UTIME: /* (path, times) */
                s.arg = 1;
                s.kind = TNS_WAIT_UTIMBUF;
                break;
        default:
                return -ENOENT;
        }
        *ret = s;
        return 0;
}

int tns_file_times_now(enum tns_wait_kind kind, const void *in, const struct timespec *now, void *out) {
        switch (kind) {
        case TNS_WAIT_UTIMENS: {
                struct k_timespec t[2];
                bool any = false;

                if (!in) {
                        t[0] = t[1] = (struct k_timespec){now->tv_sec, now->tv_nsec};
                        memcpy(out, t, sizeof(t));
                        return 0;
                }
                memcpy(t, in, sizeof(t));
                /* As utimensat() checks them (nsec_valid(), fs/utimes.c). */
                for (int i = 0; i < 2; i++) {
                        if (t[i].tv_nsec == TNS_UTIME_NOW) {
                                t[i] = (struct k_timespec){now->tv_sec, now->tv_nsec};
                                any = true;
                        } else if (t[i].tv_nsec != TNS_UTIME_OMIT && (t[i].tv_nsec < 0 || t[i].tv_nsec >= 1000000000))
                                return -EINVAL;
                }
                if (!any)
                        return -ENOENT;
                memcpy(out, t, sizeof(t));
                return 0;
        }
        case TNS_WAIT_UTIMES: {
                struct k_timeval t = {now->tv_sec, now->tv_nsec / 1000};

                if (in)
                        return -ENOENT; /* explicit times: no "now" in a timeval */
                memcpy(out, (struct k_timeval[2]){t, t}, 2 * sizeof(t));
                return 0;
        }
        case TNS_WAIT_UTIMBUF:
                if (in)
                        return -ENOENT;
                memcpy(out, &(struct k_utimbuf){now->tv_sec, now->tv_sec}, sizeof(struct k_utimbuf));
                return 0;
        default:
                return -EINVAL;
        }
}

/* Whether sec.nsec lies in [now - TNS_FILE_TIMES_RECOVER_NS, now + 1 s]. */
static bool near_now(int64_t sec, int64_t nsec, const struct timespec *now) {
        const int64_t nsec_per_sec = 1000000000;
        int64_t d;

        if (nsec < 0 || nsec >= nsec_per_sec || __builtin_sub_overflow(sec, (int64_t) now->tv_sec, &d) ||
            d < -TNS_FILE_TIMES_RECOVER_NS / nsec_per_sec - 1 || d > 1)
                return false;
        d = d * nsec_per_sec + nsec - now->tv_nsec;
        return d >= -TNS_FILE_TIMES_RECOVER_NS && d <= nsec_per_sec;
}

int tns_file_times_recover(enum tns_wait_kind kind, const void *times, const struct timespec *now, void *ret_in,
                           bool *ret_null) {
        switch (kind) {
        case TNS_WAIT_UTIMENS: {
                struct k_timespec t[2];
                bool omit = false;

                memcpy(t, times, sizeof(t));
                for (int i = 0; i < 2; i++) {
                        if (t[i].tv_nsec == TNS_UTIME_OMIT) {
                                omit = true;
                                continue;
                        }
                        if (!near_now(t[i].tv_sec, t[i].tv_nsec, now))
                                return -ENOENT;
                        t[i] = (struct k_timespec){0, TNS_UTIME_NOW};
                }
                if (omit && t[0].tv_nsec == TNS_UTIME_OMIT && t[1].tv_nsec == TNS_UTIME_OMIT)
                        return -ENOENT; /* nothing was "now" */
                memcpy(ret_in, t, sizeof(t));
                *ret_null = !omit;
                return 0;
        }
        case TNS_WAIT_UTIMES: {
                struct k_timeval t[2];

                memcpy(t, times, sizeof(t));
                for (int i = 0; i < 2; i++)
                        if (t[i].tv_usec < 0 || t[i].tv_usec >= 1000000 ||
                            !near_now(t[i].tv_sec, t[i].tv_usec * 1000, now))
                                return -ENOENT;
                *ret_null = true;
                return 0;
        }
        case TNS_WAIT_UTIMBUF: {
                struct k_utimbuf t;

                memcpy(&t, times, sizeof(t));
                /* Whole seconds: now's own second is near. */
                if (!near_now(t.actime, 0, now) || !near_now(t.modtime, 0, now))
                        return -ENOENT;
                *ret_null = true;
                return 0;
        }
        default:
                return -ENOENT;
        }
}
