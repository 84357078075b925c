/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <sys/time.h>
#include <sys/timex.h>

#include "clocks.h"
#include "emulate.h"
#include "time-util.h"
#include "util.h"

/* The kernel's timeval for gettimeofday/settimeofday on x86-64 */
struct k_timeval {
        int64_t tv_sec;
        int64_t tv_usec;
};

struct k_timespec {
        int64_t tv_sec;
        int64_t tv_nsec;
};

static void add_write(struct tns_emu_result *r, uint64_t addr, const void *data, size_t len) {
        struct tns_emu_write *w = &r->writes[r->n_writes++];

        w->addr = addr;
        w->len = (uint32_t) len;
        memcpy(w->data, data, len);
}

static int has_cap(const struct tns_emu_env *env, int cap) {
        uint64_t caps;
        int r;

        r = env->capabilities(env->userdata, &caps);
        if (r < 0)
                return r;
        return !!(caps & (UINT64_C(1) << cap));
}

/* A host reading through the rate of class c (unchanged when not rated). */
static int rated_base(const struct tns_emu_state *st, int class, struct timespec *host) {
        int64_t h;

        if (!st->rated)
                return 0;
        if (tns_ts_to_ns(host, &h) < 0)
                return -EOVERFLOW;
        *host = tns_ns_to_ts(tns_rate_map_apply(&st->base[class], h));
        return 0;
}

/* The namespace's reading of clock `id`: host reading (through the rate)
 * plus the class offset. */
static int ns_clock(const struct tns_emu_env *env, const struct tns_emu_state *st, clockid_t id, struct timespec *ret) {
        struct timespec host;
        int class, r;

        class = tns_clock_class(id);
        if (class < 0)
                return class;
        r = env->clock_gettime(env->userdata, id, &host);
        if (r < 0)
                return r;
        r = rated_base(st, class, &host);
        if (r < 0)
                return r;
        return tns_ts_add_ns(&host, st->offset[class], ret);
}

/* The effective offset that makes clock `id` read `value` now: in a rated
 * namespace it then runs on at its rate from value. */
static int offset_for_value(const struct tns_emu_env *env, const struct tns_emu_state *st, clockid_t id,
                            const struct timespec *value, int64_t *ret) {
        struct timespec host;
        int r;

        r = env->clock_gettime(env->userdata, id, &host);
        if (r < 0)
                return r;
        r = rated_base(st, tns_clock_class(id), &host);
        if (r < 0)
                return r;
        /* An offset beyond int64 nanoseconds is a value the kernel's
         * range checks would refuse as well. */
        return tns_ts_diff_ns(value, &host, ret) < 0 ? -EINVAL : 0;
}

static int emu_clock_gettime(const uint64_t a[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                             struct tns_emu_result *res) {
        struct timespec ts;
        struct k_timespec kts;
        int r;

        /* posix-timers.c: an unknown clock is EINVAL before the pointer is
         * looked at; a clock whose getter fails (alarm clocks without an
         * RTC) returns that error and writes nothing. */
        r = ns_clock(env, st, (clockid_t) a[0], &ts);
        if (r < 0) {
                res->ret = r;
                return 0;
        }
        kts = (struct k_timespec){ts.tv_sec, ts.tv_nsec};
        add_write(res, a[1], &kts, sizeof(kts));
        res->ret = 0;
        return 0;
}

static int emu_gettimeofday(const uint64_t a[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                            struct tns_emu_result *res) {
        int r;

        if (a[0]) {
                struct timespec ts;
                struct k_timeval tv;

                r = ns_clock(env, st, CLOCK_REALTIME, &ts);
                if (r < 0)
                        return r;
                tv = (struct k_timeval){ts.tv_sec, ts.tv_nsec / TNS_NSEC_PER_USEC};
                add_write(res, a[0], &tv, sizeof(tv));
        }
        if (a[1]) {
                struct timezone tz;

                if (st->tz_set)
                        tz = st->tz;
                else
                        env->host_tz(env->userdata, &tz);
                add_write(res, a[1], &tz, sizeof(tz));
        }
        res->ret = 0;
        return 0;
}

static int emu_time(const uint64_t a[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                    struct tns_emu_result *res) {
        struct timespec ts;
        int64_t t;
        int r;

        /* time() is the coarse second (ktime_get_real_seconds, the vDSO's
         * __vdso_time): reading the fine clock would be a second ahead of
         * the kernel's answer right after each tick boundary. */
        r = ns_clock(env, st, CLOCK_REALTIME_COARSE, &ts);
        if (r < 0)
                return r;
        t = ts.tv_sec;
        if (a[0])
                add_write(res, a[0], &t, sizeof(t));
        res->ret = t;
        return 0;
}

/* Validation and permission of a new value for a clock, in the kernel's
 * order: do_sys_settimeofday64 checks the value, then security_settime64
 * the capability. Monotonic and boottime values follow the limits the
 * kernel puts on its own time namespaces. */
static int check_settime(const struct tns_emu_env *env, clockid_t id, const struct timespec *ts) {
        int r;

        if (!tns_ts_valid(ts))
                return -EINVAL;
        if (tns_clock_class(id) == TNS_CLASS_REALTIME ? ts->tv_sec >= TNS_SETTOD_SEC_MAX
                                                      : ts->tv_sec > TNS_MONO_SEC_MAX)
                return -EINVAL;
        r = has_cap(env, TNS_CAP_SYS_TIME);
        if (r < 0)
                return r;
        return r ? 0 : -EPERM;
}

/* do_settimeofday64 and timekeeping_inject_offset refuse a wall time
 * before the monotonic clock's reading (a wall clock before boot), after
 * the permission check; in a namespace, its own monotonic clock counts. */
static int check_after_boot(const struct tns_emu_env *env, const struct tns_emu_state *st,
                            const struct timespec *real) {
        struct timespec mono;
        int r;

        r = ns_clock(env, st, CLOCK_MONOTONIC, &mono);
        if (r < 0)
                return r;
        if (real->tv_sec < mono.tv_sec || (real->tv_sec == mono.tv_sec && real->tv_nsec < mono.tv_nsec))
                return -EINVAL;
        return 0;
}

static int set_clock(const struct tns_emu_env *env, const struct tns_emu_state *st, clockid_t id,
                     const struct timespec *ts, struct tns_emu_result *res) {
        int class = tns_clock_class(id), r;
        int64_t off;

        r = check_settime(env, id, ts);
        if (r < 0)
                return r;
        if (class == TNS_CLASS_REALTIME) {
                r = check_after_boot(env, st, ts);
                if (r < 0)
                        return r;
        }
        r = offset_for_value(env, st, id, ts, &off);
        if (r < 0)
                return r;
        res->set_offset[class] = true;
        res->new_offset[class] = off;
        return 0;
}

static int emu_clock_settime(const uint64_t a[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                             struct tns_emu_result *res) {
        clockid_t id = (clockid_t) a[0];
        struct k_timespec kts;
        struct timespec ts;
        int r;

        if (!tns_clock_settable(id)) {
                res->ret = -EINVAL;
                return 0;
        }
        r = env->read_mem(env->userdata, a[1], &kts, sizeof(kts));
        if (r < 0) {
                res->ret = r;
                return 0;
        }
        ts = (struct timespec){kts.tv_sec, kts.tv_nsec};
        res->ret = set_clock(env, st, id, &ts, res);
        return 0;
}

static int emu_settimeofday(const uint64_t a[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                            struct tns_emu_result *res) {
        struct k_timeval tv;
        struct timezone tz;
        struct timespec ts = {};
        int r;

        /* kernel/time/time.c: read and range-check tv, read tz, then
         * do_sys_settimeofday64: value, permission, tz range, apply. */
        if (a[0]) {
                r = env->read_mem(env->userdata, a[0], &tv, sizeof(tv));
                if (r < 0)
                        return res->ret = r, 0;
                if (tv.tv_usec > TNS_USEC_PER_SEC || tv.tv_usec < 0)
                        return res->ret = -EINVAL, 0;
                ts = (struct timespec){tv.tv_sec, tv.tv_usec * TNS_NSEC_PER_USEC};
        }
        if (a[1]) {
                r = env->read_mem(env->userdata, a[1], &tz, sizeof(tz));
                if (r < 0)
                        return res->ret = r, 0;
        }
        if (a[0]) {
                r = set_clock(env, st, CLOCK_REALTIME, &ts, res);
                if (r < 0)
                        return res->ret = r, 0;
        } else {
                r = has_cap(env, TNS_CAP_SYS_TIME);
                if (r <= 0)
                        return res->ret = r < 0 ? r : -EPERM, 0;
        }
        if (a[1]) {
                if (tz.tz_minuteswest > 15 * 60 || tz.tz_minuteswest < -15 * 60) {
                        res->set_offset[TNS_CLASS_REALTIME] = false;
                        return res->ret = -EINVAL, 0;
                }
                res->set_tz = true;
                res->new_tz = tz;
        }
        res->ret = 0;
        return 0;
}

/* The kernel's own view of the adjtime-style mode bits
 * (include/linux/timex.h); userspace's ADJ_OFFSET_SINGLESHOT (0x8001) and
 * ADJ_OFFSET_SS_READ (0xa001) are combinations of them. */
#define K_ADJ_ADJTIME 0x8000
#define K_ADJ_OFFSET_SINGLESHOT 0x0001
#define K_ADJ_OFFSET_READONLY 0x2000

/* timekeeping_validate_timex() (kernel/time/timekeeping.c). The
 * capability is looked up only for modes that need it: reading the clock
 * state is the common call and must stay cheap. */
static int validate_timex(const struct tns_emu_env *env, const struct timex *tx) {
        bool needs_cap = (tx->modes & K_ADJ_ADJTIME) ? !(tx->modes & K_ADJ_OFFSET_READONLY) : tx->modes != 0;
        int cap = 0;

        if (needs_cap || (tx->modes & ADJ_SETOFFSET)) {
                cap = has_cap(env, TNS_CAP_SYS_TIME);
                if (cap < 0)
                        return cap;
        }
        if (tx->modes & K_ADJ_ADJTIME) {
                if (!(tx->modes & K_ADJ_OFFSET_SINGLESHOT))
                        return -EINVAL;
                if (needs_cap && !cap)
                        return -EPERM;
        } else {
                if (needs_cap && !cap)
                        return -EPERM;
                /* USER_HZ is 100 on x86-64. */
                if (tx->modes & ADJ_TICK && (tx->tick < 900000 / 100 || tx->tick > 1100000 / 100))
                        return -EINVAL;
        }
        if (tx->modes & ADJ_SETOFFSET) {
                if (!cap)
                        return -EPERM;
                if (tx->time.tv_usec < 0)
                        return -EINVAL;
                if (tx->time.tv_usec >= ((tx->modes & ADJ_NANO) ? TNS_NSEC_PER_SEC : TNS_USEC_PER_SEC))
                        return -EINVAL;
        }
        /* PPM_SCALE is 65536: the kernel refuses freq that would overflow. */
        if ((tx->modes & ADJ_FREQUENCY) && (tx->freq < INT64_MIN / 65536 || tx->freq > INT64_MAX / 65536))
                return -EINVAL;
        return 0;
}

/* Modes that read, or step the namespace's clock: anything else would
 * discipline the host's clock (frequency, PLL, status, leap seconds), which
 * a namespace may not do. */
#define TNS_ADJ_ALLOWED (ADJ_SETOFFSET | ADJ_NANO | ADJ_MICRO)

static bool timex_readonly(int modes) {
        return modes == 0 || modes == ADJ_OFFSET_SS_READ;
}

static int step_realtime(const struct tns_emu_env *env, const struct tns_emu_state *st, const struct timex *tx,
                         struct tns_emu_result *res) {
        struct timespec now, target;
        int64_t delta, off;
        int r;

        /* ADJ_NANO/ADJ_MICRO alone switch the host's STA_NANO: refused like
         * the other disciplining modes; with ADJ_SETOFFSET they only say
         * in which unit the step is given. */
        if ((tx->modes & ~TNS_ADJ_ALLOWED) != 0 || !(tx->modes & ADJ_SETOFFSET))
                return -EPERM;
        delta = (int64_t) tx->time.tv_usec * ((tx->modes & ADJ_NANO) ? 1 : TNS_NSEC_PER_USEC);
        if (__builtin_mul_overflow((int64_t) tx->time.tv_sec, TNS_NSEC_PER_SEC, &off) ||
            __builtin_add_overflow(off, delta, &delta))
                return -EINVAL;
        r = ns_clock(env, st, CLOCK_REALTIME, &now);
        if (r < 0)
                return r;
        /* timekeeping_inject_offset: the stepped time must be a valid wall time. */
        if (tns_ts_add_ns(&now, delta, &target) < 0 || !tns_ts_valid(&target) || target.tv_sec >= TNS_SETTOD_SEC_MAX)
                return -EINVAL;
        r = check_after_boot(env, st, &target);
        if (r < 0)
                return r;
        if (tns_ns_add(st->offset[TNS_CLASS_REALTIME], delta, &off) < 0)
                return -EINVAL;
        res->set_offset[TNS_CLASS_REALTIME] = true;
        res->new_offset[TNS_CLASS_REALTIME] = off;
        return 0;
}

/* The state as the kernel reports it after the call, with the
 * namespace's wall time in tx->time (microseconds unless STA_NANO). */
static int report_timex(const struct tns_emu_env *env, const struct tns_emu_state *st, int modes,
                        const struct tns_emu_result *res, struct timex *tx) {
        int64_t off = res->set_offset[TNS_CLASS_REALTIME] ? res->new_offset[TNS_CLASS_REALTIME]
                                                          : st->offset[TNS_CLASS_REALTIME];
        struct timespec host, ns;
        int state, r;

        memset(tx, 0, sizeof(*tx));
        tx->modes = timex_readonly(modes) ? modes : 0;
        state = env->adjtimex_read(env->userdata, tx);
        if (state < 0)
                return state;
        host = (struct timespec){tx->time.tv_sec, tx->time.tv_usec * ((tx->status & STA_NANO) ? 1 : 1000)};
        r = rated_base(st, TNS_CLASS_REALTIME, &host);
        if (r < 0)
                return r;
        r = tns_ts_add_ns(&host, off, &ns);
        if (r < 0)
                return r;
        tx->time.tv_sec = ns.tv_sec;
        tx->time.tv_usec = (tx->status & STA_NANO) ? ns.tv_nsec : ns.tv_nsec / TNS_NSEC_PER_USEC;
        tx->modes = modes;
        return state;
}

/* sys_adjtimex copies the struct back even when the call failed (so a
 * read-only buffer makes any error EFAULT); clock_adjtime only on success. */
static int adjtimex_failed(uint64_t addr, const struct timex *tx, bool copy_back, int error,
                           struct tns_emu_result *res) {
        res->ret = error;
        if (copy_back)
                add_write(res, addr, tx, sizeof(*tx));
        return 0;
}

static int emu_adjtimex_at(uint64_t addr, bool copy_back_on_error, const struct tns_emu_state *st,
                           const struct tns_emu_env *env, struct tns_emu_result *res) {
        struct timex tx, out;
        int r;

        r = env->read_mem(env->userdata, addr, &tx, sizeof(tx));
        if (r < 0)
                return res->ret = r, 0;
        r = validate_timex(env, &tx);
        if (r < 0)
                return adjtimex_failed(addr, &tx, copy_back_on_error, r, res);
        if (!timex_readonly(tx.modes)) {
                r = step_realtime(env, st, &tx, res);
                if (r < 0)
                        return adjtimex_failed(addr, &tx, copy_back_on_error, r, res);
        }
        r = report_timex(env, st, tx.modes, res, &out);
        if (r < 0)
                return r;
        add_write(res, addr, &out, sizeof(out));
        res->ret = r;
        return 0;
}

static int emu_adjtimex(const uint64_t a[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                        struct tns_emu_result *res) {
        return emu_adjtimex_at(a[0], true, st, env, res);
}

static int emu_clock_adjtime(const uint64_t a[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                             struct tns_emu_result *res) {
        /* The filter sends only CLOCK_REALTIME, whose clock_adj is do_adjtimex. */
        if ((clockid_t) a[0] != CLOCK_REALTIME)
                return res->ret = -EOPNOTSUPP, 0;
        return emu_adjtimex_at(a[1], false, st, env, res);
}

#define TNS_CLONE_NEWUSER 0x10000000ULL

/* The kernel runs the unshare (supervisor.c replies CONTINUE): this only
 * predicts whether it succeeds, for the RFC's move of the caller, which
 * the supervisor takes back if the kernel says otherwise. */
static int emu_unshare(const uint64_t a[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                       struct tns_emu_result *res) {
        int r;

        /* unshare's flags are an int: higher bits are the kernel's EINVAL. */
        if (a[0] >> 32)
                return res->ret = -EINVAL, 0;
        /* copy_time_ns() needs CAP_SYS_ADMIN in the caller's user namespace,
         * or in the one the same call makes (CLONE_NEWUSER comes first). */
        r = has_cap(env, TNS_CAP_SYS_ADMIN);
        if (r < 0)
                return r;
        if (!r && !(a[0] & TNS_CLONE_NEWUSER))
                return res->ret = -EPERM, 0;
        res->unshare = true;
        res->ret = 0;
        return 0;
}

typedef int (*emu_fn)(const uint64_t a[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                      struct tns_emu_result *res);

static const emu_fn handlers[_TNS_SYS_MAX] = {
        [TNS_SYS_CLOCK_GETTIME] = emu_clock_gettime,
        [TNS_SYS_GETTIMEOFDAY] = emu_gettimeofday,
        [TNS_SYS_TIME] = emu_time,
        [TNS_SYS_CLOCK_SETTIME] = emu_clock_settime,
        [TNS_SYS_SETTIMEOFDAY] = emu_settimeofday,
        [TNS_SYS_ADJTIMEX] = emu_adjtimex,
        [TNS_SYS_CLOCK_ADJTIME] = emu_clock_adjtime,
        [TNS_SYS_UNSHARE] = emu_unshare,
};

int tns_emulate(enum tns_sys sys, const uint64_t args[6], const struct tns_emu_state *st, const struct tns_emu_env *env,
                struct tns_emu_result *ret) {
        if ((unsigned) sys >= _TNS_SYS_MAX || !handlers[sys])
                return -ENOSYS;
        memset(ret, 0, sizeof(*ret));
        return handlers[sys](args, st, env, ret);
}
