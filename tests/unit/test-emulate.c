/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure emulation against a fixed host clock and a fake target memory:
 * values, errno order and effects, case by case as the kernel has them. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/timex.h>

#include "clocks.h"
#include "emulate.h"
#include "test.h"
#include "time-util.h"

#define NS 1000000000LL
#define MEM_BASE 0x10000
#define MEM_SIZE 4096

struct fake {
        struct timespec host[16];
        int host_err[16];
        uint64_t caps;
        unsigned char mem[MEM_SIZE];
        struct timezone tz;
        struct timex adj;
        int adj_state;
};

static int fake_clock(void *u, clockid_t id, struct timespec *ret) {
        struct fake *f = u;

        if (id < 0 || id >= 16)
                return -EINVAL;
        if (f->host_err[id])
                return f->host_err[id];
        *ret = f->host[id];
        return 0;
}

static int fake_adjtimex(void *u, struct timex *tx) {
        struct fake *f = u;

        *tx = f->adj;
        return f->adj_state;
}

static void fake_tz(void *u, struct timezone *ret) {
        *ret = ((struct fake *) u)->tz;
}

static int fake_read(void *u, uint64_t addr, void *buf, size_t len) {
        struct fake *f = u;

        if (addr < MEM_BASE || addr + len > MEM_BASE + MEM_SIZE || addr + len < addr)
                return -EFAULT;
        memcpy(buf, f->mem + (addr - MEM_BASE), len);
        return 0;
}

static int fake_caps(void *u, uint64_t *ret) {
        *ret = ((struct fake *) u)->caps;
        return 0;
}

static void fake_init(struct fake *f, struct tns_emu_env *env) {
        memset(f, 0, sizeof(*f));
        for (int i = 0; i < 16; i++)
                f->host[i] = (struct timespec){1000 + i, 500};
        f->host[CLOCK_REALTIME] = (struct timespec){1700000000, 123456789};
        f->host[CLOCK_REALTIME_COARSE] = (struct timespec){1700000000, 120000000};
        f->host_err[CLOCK_REALTIME_ALARM] = -EINVAL;
        f->host_err[10] = -EINVAL;
        f->caps = ~0ULL;
        f->tz = (struct timezone){60, 0};
        f->adj.status = 0;
        f->adj.time = (struct timeval){1700000000, 123456};
        f->adj_state = TIME_OK;
        *env = (struct tns_emu_env){fake_clock, fake_adjtimex, fake_tz, fake_read, fake_caps, f};
}

static const struct tns_emu_state st_off = {.offset = {10 * NS, 20 * NS, 86400 * NS}};

static int64_t emu(enum tns_sys sys, uint64_t a0, uint64_t a1, const struct tns_emu_state *st,
                   const struct tns_emu_env *env, struct tns_emu_result *res) {
        uint64_t args[6] = {a0, a1};
        int r = tns_emulate(sys, args, st, env, res);

        return r < 0 ? INT64_MIN : res->ret;
}

TEST(clock_gettime_each_class) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;

        fake_init(&f, &env);
        for (unsigned i = 0; i < tns_n_virtual_clocks; i++) {
                clockid_t c = tns_virtual_clocks[i];
                int64_t got;

                if (c == CLOCK_REALTIME_ALARM)
                        continue;
                ASSERT_EQ(emu(TNS_SYS_CLOCK_GETTIME, c, MEM_BASE, &st_off, &env, &res), 0);
                ASSERT_EQ(res.n_writes, 1);
                EXPECT_EQ(res.writes[0].addr, MEM_BASE);
                EXPECT_EQ(res.writes[0].len, 16);
                memcpy(&got, res.writes[0].data, 8);
                EXPECT_EQ(got, f.host[c].tv_sec + st_off.offset[tns_clock_class(c)] / NS);
        }
}

TEST(clock_gettime_host_error_passes_through) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;

        fake_init(&f, &env);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_GETTIME, CLOCK_REALTIME_ALARM, MEM_BASE, &st_off, &env, &res), -EINVAL);
        EXPECT_EQ(res.n_writes, 0);
        /* Not a virtual clock: EINVAL before the pointer is looked at. */
        EXPECT_EQ(emu(TNS_SYS_CLOCK_GETTIME, 10, 0, &st_off, &env, &res), -EINVAL);
        EXPECT_EQ(res.n_writes, 0);
}

TEST(clock_gettime_negative_offset_borrows) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;
        struct tns_emu_state st = {.offset = {-1}};
        int64_t v[2];

        fake_init(&f, &env);
        f.host[CLOCK_MONOTONIC] = (struct timespec){5, 0};
        ASSERT_EQ(emu(TNS_SYS_CLOCK_GETTIME, CLOCK_MONOTONIC, MEM_BASE, &st, &env, &res), 0);
        memcpy(v, res.writes[0].data, 16);
        EXPECT_EQ(v[0], 4);
        EXPECT_EQ(v[1], 999999999);
}

TEST(clock_gettime_overflow_is_eoverflow) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;
        struct tns_emu_state st = {.offset = {INT64_MAX}};

        fake_init(&f, &env);
        f.host[CLOCK_MONOTONIC] = (struct timespec){INT64_MAX - 1, 0};
        /* The program sees EOVERFLOW rather than a wrapped clock. */
        EXPECT_EQ(emu(TNS_SYS_CLOCK_GETTIME, CLOCK_MONOTONIC, MEM_BASE, &st, &env, &res), -EOVERFLOW);
        EXPECT_EQ(res.n_writes, 0);
}

TEST(gettimeofday_tv_and_tz) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;
        struct tns_emu_state st = st_off;
        int64_t tv[2];
        struct timezone tz;

        fake_init(&f, &env);
        ASSERT_EQ(emu(TNS_SYS_GETTIMEOFDAY, MEM_BASE, MEM_BASE + 64, &st, &env, &res), 0);
        ASSERT_EQ(res.n_writes, 2);
        memcpy(tv, res.writes[0].data, 16);
        EXPECT_EQ(tv[0], 1700000000 + 86400);
        EXPECT_EQ(tv[1], 123456);
        memcpy(&tz, res.writes[1].data, sizeof(tz));
        EXPECT_EQ(tz.tz_minuteswest, 60);
        /* A namespace timezone wins over the host's. */
        st.tz_set = true;
        st.tz = (struct timezone){-120, 0};
        ASSERT_EQ(emu(TNS_SYS_GETTIMEOFDAY, 0, MEM_BASE + 64, &st, &env, &res), 0);
        ASSERT_EQ(res.n_writes, 1);
        memcpy(&tz, res.writes[0].data, sizeof(tz));
        EXPECT_EQ(tz.tz_minuteswest, -120);
        /* Both NULL: success, nothing written. */
        ASSERT_EQ(emu(TNS_SYS_GETTIMEOFDAY, 0, 0, &st, &env, &res), 0);
        EXPECT_EQ(res.n_writes, 0);
}

TEST(time_uses_coarse_seconds) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;

        fake_init(&f, &env);
        f.host[CLOCK_REALTIME] = (struct timespec){1700000001, 1};
        EXPECT_EQ(emu(TNS_SYS_TIME, 0, 0, &st_off, &env, &res), 1700000000 + 86400);
        EXPECT_EQ(res.n_writes, 0);
        EXPECT_EQ(emu(TNS_SYS_TIME, MEM_BASE, 0, &st_off, &env, &res), 1700000000 + 86400);
        EXPECT_EQ(res.n_writes, 1);
        EXPECT_EQ(res.writes[0].len, 8);
}

static void put_ts(struct fake *f, unsigned off, int64_t sec, int64_t nsec) {
        int64_t v[2] = {sec, nsec};

        memcpy(f->mem + off, v, 16);
}

TEST(clock_settime_errno_order) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;

        fake_init(&f, &env);
        /* Not settable: EINVAL before the pointer. */
        EXPECT_EQ(emu(TNS_SYS_CLOCK_SETTIME, CLOCK_TAI, 0, &st_off, &env, &res), -EINVAL);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_SETTIME, CLOCK_REALTIME_COARSE, 0, &st_off, &env, &res), -EINVAL);
        /* Bad pointer: EFAULT, even unprivileged. */
        f.caps = 0;
        EXPECT_EQ(emu(TNS_SYS_CLOCK_SETTIME, CLOCK_REALTIME, 8, &st_off, &env, &res), -EFAULT);
        /* Invalid value before permission. */
        put_ts(&f, 0, 5, NS);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_SETTIME, CLOCK_REALTIME, MEM_BASE, &st_off, &env, &res), -EINVAL);
        put_ts(&f, 0, -1, 0);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_SETTIME, CLOCK_MONOTONIC, MEM_BASE, &st_off, &env, &res), -EINVAL);
        put_ts(&f, 0, TNS_SETTOD_SEC_MAX, 0);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_SETTIME, CLOCK_REALTIME, MEM_BASE, &st_off, &env, &res), -EINVAL);
        put_ts(&f, 0, 100, 0);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_SETTIME, CLOCK_REALTIME, MEM_BASE, &st_off, &env, &res), -EPERM);
        EXPECT_EQ(res.set_offset[TNS_CLASS_REALTIME], false);
}

TEST(clock_settime_sets_offset_per_class) {
        static const struct {
                clockid_t id;
                enum tns_clock_class class;
        } cases[] = {
                {CLOCK_REALTIME, TNS_CLASS_REALTIME},       {CLOCK_MONOTONIC, TNS_CLASS_MONOTONIC},
                {CLOCK_MONOTONIC_RAW, TNS_CLASS_MONOTONIC}, {CLOCK_MONOTONIC_COARSE, TNS_CLASS_MONOTONIC},
                {CLOCK_BOOTTIME, TNS_CLASS_BOOTTIME},
        };
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;

        fake_init(&f, &env);
        f.caps = 1ULL << TNS_CAP_SYS_TIME;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                put_ts(&f, 0, 5000, 250);
                ASSERT_EQ(emu(TNS_SYS_CLOCK_SETTIME, cases[i].id, MEM_BASE, &st_off, &env, &res), 0);
                EXPECT_TRUE(res.set_offset[cases[i].class]);
                EXPECT_EQ(res.new_offset[cases[i].class],
                          (5000 - f.host[cases[i].id].tv_sec) * NS + 250 - f.host[cases[i].id].tv_nsec);
                EXPECT_EQ(res.n_writes, 0);
        }
}

static void put_tv(struct fake *f, unsigned off, int64_t sec, int64_t usec) {
        int64_t v[2] = {sec, usec};

        memcpy(f->mem + off, v, 16);
}

TEST(settimeofday_cases) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;
        struct timezone tz = {-60, 0}, bad = {16 * 60, 0};

        fake_init(&f, &env);
        f.caps = 0;
        EXPECT_EQ(emu(TNS_SYS_SETTIMEOFDAY, 0, 0, &st_off, &env, &res), -EPERM);
        EXPECT_EQ(emu(TNS_SYS_SETTIMEOFDAY, 1, 0, &st_off, &env, &res), -EFAULT);
        put_tv(&f, 0, 100, 1000001);
        EXPECT_EQ(emu(TNS_SYS_SETTIMEOFDAY, MEM_BASE, 0, &st_off, &env, &res), -EINVAL);
        put_tv(&f, 0, 100, -1);
        EXPECT_EQ(emu(TNS_SYS_SETTIMEOFDAY, MEM_BASE, 0, &st_off, &env, &res), -EINVAL);
        put_tv(&f, 0, 1000000, 5);
        EXPECT_EQ(emu(TNS_SYS_SETTIMEOFDAY, MEM_BASE, 1, &st_off, &env, &res), -EFAULT);
        EXPECT_EQ(emu(TNS_SYS_SETTIMEOFDAY, MEM_BASE, 0, &st_off, &env, &res), -EPERM);

        f.caps = 1ULL << TNS_CAP_SYS_TIME;
        memcpy(f.mem + 64, &bad, sizeof(bad));
        EXPECT_EQ(emu(TNS_SYS_SETTIMEOFDAY, MEM_BASE, MEM_BASE + 64, &st_off, &env, &res), -EINVAL);
        EXPECT_EQ(res.set_offset[TNS_CLASS_REALTIME], false);
        memcpy(f.mem + 64, &tz, sizeof(tz));
        ASSERT_EQ(emu(TNS_SYS_SETTIMEOFDAY, MEM_BASE, MEM_BASE + 64, &st_off, &env, &res), 0);
        EXPECT_TRUE(res.set_tz);
        EXPECT_EQ(res.new_tz.tz_minuteswest, -60);
        EXPECT_TRUE(res.set_offset[TNS_CLASS_REALTIME]);
        EXPECT_EQ(res.new_offset[TNS_CLASS_REALTIME], (1000000 - 1700000000) * NS + 5000 - 123456789);
}

static void put_timex(struct fake *f, const struct timex *tx) {
        memcpy(f->mem, tx, sizeof(*tx));
}

TEST(adjtimex_read_reports_shifted_time) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;
        struct timex tx = {.modes = 0}, out;

        fake_init(&f, &env);
        f.caps = 0;
        f.adj_state = TIME_ERROR;
        put_timex(&f, &tx);
        ASSERT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), TIME_ERROR);
        ASSERT_EQ(res.n_writes, 1);
        memcpy(&out, res.writes[0].data, sizeof(out));
        EXPECT_EQ(out.time.tv_sec, 1700000000 + 86400);
        EXPECT_EQ(out.time.tv_usec, 123456);
        /* STA_NANO: tv_usec holds nanoseconds. */
        f.adj.status = STA_NANO;
        f.adj.time.tv_usec = 123456789;
        ASSERT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &(struct tns_emu_state){.offset = {0, 0, 1}}, &env, &res),
                  TIME_ERROR);
        memcpy(&out, res.writes[0].data, sizeof(out));
        EXPECT_EQ(out.time.tv_usec, 123456790);
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, 1, 0, &st_off, &env, &res), -EFAULT);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_ADJTIME, CLOCK_REALTIME, MEM_BASE, &st_off, &env, &res), TIME_ERROR);
}

TEST(adjtimex_validation_order) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;

        fake_init(&f, &env);
        f.caps = 0;
        put_timex(&f, &(struct timex){.modes = 0x8000});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EINVAL);
        put_timex(&f, &(struct timex){.modes = ADJ_OFFSET_SS_READ});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), TIME_OK);
        put_timex(&f, &(struct timex){.modes = ADJ_OFFSET_SINGLESHOT});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EPERM);
        put_timex(&f, &(struct timex){.modes = ADJ_FREQUENCY});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EPERM);
        f.caps = 1ULL << TNS_CAP_SYS_TIME;
        put_timex(&f, &(struct timex){.modes = ADJ_TICK, .tick = 1});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EINVAL);
        put_timex(&f, &(struct timex){.modes = ADJ_SETOFFSET, .time = {1, 1000000}});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EINVAL);
        put_timex(&f, &(struct timex){.modes = ADJ_SETOFFSET | ADJ_NANO, .time = {1, -1}});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EINVAL);
        /* Valid, but it would discipline the host's clock. */
        put_timex(&f, &(struct timex){.modes = ADJ_FREQUENCY, .freq = 10});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EPERM);
}

TEST(adjtimex_setoffset_steps_realtime) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;
        struct timex out;

        fake_init(&f, &env);
        f.caps = 1ULL << TNS_CAP_SYS_TIME;
        put_timex(&f, &(struct timex){.modes = ADJ_SETOFFSET, .time = {-3600, 500000}});
        ASSERT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), TIME_OK);
        EXPECT_TRUE(res.set_offset[TNS_CLASS_REALTIME]);
        EXPECT_EQ(res.new_offset[TNS_CLASS_REALTIME], 86400 * NS - 3600 * NS + 500000000);
        memcpy(&out, res.writes[0].data, sizeof(out));
        EXPECT_EQ(out.time.tv_sec, 1700000000 + 86400 - 3600);
        EXPECT_EQ(out.modes, ADJ_SETOFFSET);
        /* A step before the epoch is refused as the kernel refuses it. */
        put_timex(&f, &(struct timex){.modes = ADJ_SETOFFSET | ADJ_NANO, .time = {-1800000000, 0}});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EINVAL);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_ADJTIME, CLOCK_MONOTONIC, MEM_BASE, &st_off, &env, &res), -EOPNOTSUPP);
}

TEST(unshare_needs_cap_sys_admin) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;

        fake_init(&f, &env);
        f.caps = 1ULL << TNS_CAP_SYS_TIME;
        EXPECT_EQ(emu(TNS_SYS_UNSHARE, 0x80, 0, &st_off, &env, &res), -EPERM);
        EXPECT_EQ(res.unshare, false);
        /* With CLONE_NEWUSER in the same call, the new user namespace's
         * capabilities count. */
        EXPECT_EQ(emu(TNS_SYS_UNSHARE, 0x10000080, 0, &st_off, &env, &res), 0);
        EXPECT_EQ(res.unshare, true);
        /* Flags are an int: higher bits, the kernel's EINVAL. */
        EXPECT_EQ(emu(TNS_SYS_UNSHARE, 0x10000000080, 0, &st_off, &env, &res), -EINVAL);
        EXPECT_EQ(res.unshare, false);
        f.caps = 1ULL << TNS_CAP_SYS_ADMIN;
        EXPECT_EQ(emu(TNS_SYS_UNSHARE, 0x80, 0, &st_off, &env, &res), 0);
        EXPECT_EQ(res.unshare, true);
}

TEST(unknown_syscall_is_enosys) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;

        fake_init(&f, &env);
        EXPECT_EQ(tns_emulate(_TNS_SYS_MAX, (uint64_t[6]){}, &st_off, &env, &res), -ENOSYS);
        EXPECT_EQ(tns_emulate((enum tns_sys) - 1, (uint64_t[6]){}, &st_off, &env, &res), -ENOSYS);
}

TEST(realtime_before_boot_is_einval) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;

        fake_init(&f, &env);
        f.caps = 1ULL << TNS_CAP_SYS_TIME;
        f.host[CLOCK_MONOTONIC] = (struct timespec){5000, 0};
        /* The namespace's monotonic clock reads 5010 s: a wall time below it
         * is before boot. */
        put_ts(&f, 0, 5009, 0);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_SETTIME, CLOCK_REALTIME, MEM_BASE, &st_off, &env, &res), -EINVAL);
        put_ts(&f, 0, 5011, 0);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_SETTIME, CLOCK_REALTIME, MEM_BASE, &st_off, &env, &res), 0);
        /* Unprivileged: EPERM comes first, as in the kernel. */
        f.caps = 0;
        put_ts(&f, 0, 1, 0);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_SETTIME, CLOCK_REALTIME, MEM_BASE, &st_off, &env, &res), -EPERM);
        f.caps = 1ULL << TNS_CAP_SYS_TIME;
        put_tv(&f, 0, 1, 0);
        EXPECT_EQ(emu(TNS_SYS_SETTIMEOFDAY, MEM_BASE, 0, &st_off, &env, &res), -EINVAL);
}

TEST(adjtimex_units_alone_are_host_discipline) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;

        fake_init(&f, &env);
        f.caps = 1ULL << TNS_CAP_SYS_TIME;
        put_timex(&f, &(struct timex){.modes = ADJ_NANO});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EPERM);
        put_timex(&f, &(struct timex){.modes = ADJ_MICRO});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EPERM);
        put_timex(&f, &(struct timex){.modes = ADJ_SETOFFSET | ADJ_NANO, .time = {1, 5}});
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), TIME_OK);
}

TEST(adjtimex_copies_back_on_error_clock_adjtime_does_not) {
        struct fake f;
        struct tns_emu_env env;
        struct tns_emu_result res;
        struct timex tx = {.modes = 0x8000};

        fake_init(&f, &env);
        f.caps = 0;
        put_timex(&f, &tx);
        EXPECT_EQ(emu(TNS_SYS_ADJTIMEX, MEM_BASE, 0, &st_off, &env, &res), -EINVAL);
        ASSERT_EQ(res.n_writes, 1);
        EXPECT_EQ(memcmp(res.writes[0].data, &tx, sizeof(tx)), 0);
        EXPECT_EQ(emu(TNS_SYS_CLOCK_ADJTIME, CLOCK_REALTIME, MEM_BASE, &st_off, &env, &res), -EINVAL);
        EXPECT_EQ(res.n_writes, 0);
}
