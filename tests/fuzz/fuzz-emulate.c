/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the emulation: arbitrary syscall, arguments,
 * namespace state, host clocks, capabilities and target memory. Whatever
 * comes in, the emulation must not crash, must stay within its write
 * limits and must answer with a value or an errno the kernel could give. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emulate.h"
#include "time-util.h"
#include "wait-convert.h"

#define MEM_BASE 0x1000
#define MEM_SIZE 512

struct input {
        uint8_t sys;
        uint8_t caps;
        uint8_t host_err;
        uint8_t tz_set;
        uint64_t args[6];
        int64_t offset[TNS_CLASS_MAX];
        int64_t host_sec, host_nsec;
        struct timex adj;
        unsigned char mem[MEM_SIZE];
};

static const struct input *in;

static int f_clock(void *u, clockid_t id, struct timespec *ret) {
        if (in->host_err & 1)
                return -EINVAL;
        /* The host clock is normalised, as the kernel's always is. */
        ret->tv_sec = (in->host_sec & INT64_C(0x3fffffffffffffff)) + id;
        ret->tv_nsec = (in->host_nsec % 1000000000 + 1000000000) % 1000000000;
        return 0;
}

static int f_adj(void *u, struct timex *tx) {
        if (in->host_err & 2)
                return -EPERM;
        *tx = in->adj;
        tx->time.tv_usec = (tx->time.tv_usec % 1000000 + 1000000) % 1000000;
        return TIME_OK;
}

static void f_tz(void *u, struct timezone *ret) {
        *ret = (struct timezone){0, 0};
}

static int f_read(void *u, uint64_t addr, void *buf, size_t len) {
        if (addr < MEM_BASE || addr - MEM_BASE > MEM_SIZE || len > MEM_SIZE - (addr - MEM_BASE))
                return -EFAULT;
        memcpy(buf, in->mem + (addr - MEM_BASE), len);
        return 0;
}

static int f_caps(void *u, uint64_t *ret) {
        *ret = (uint64_t) in->caps << 20;
        return 0;
}

/* The pure part of absolute waits (lib/core/wait-convert.c): any call the
 * classifier accepts names an argument and a class; a converted deadline
 * is valid for the kernel, armed if the input was, and not before the
 * namespace deadline minus the offset; the /proc parsers take any text. */
static void fuzz_waits(enum tns_sys sys, const uint64_t args[6], const int64_t offset[TNS_CLASS_MAX]) {
        struct tns_wait_spec spec;
        struct itimerspec its, out;
        char text[MEM_SIZE + 1];
        clockid_t c;
        int flags;

        if (tns_wait_classify(sys, args, &spec) == 0 && (spec.arg > 5 || spec.clock_class >= TNS_CLASS_MAX ||
                                                         (spec.clock_class < 0 && spec.kind != TNS_WAIT_ITIMERSPEC)))
                abort();
        memcpy(&its, in->mem, sizeof(its));
        for (int k = 0; k < TNS_CLASS_MAX; k++) {
                if (tns_wait_its_to_host(&its, offset[k], &out) < 0)
                        continue;
                if (!tns_ts_valid(&out.it_value) || !tns_ts_valid(&out.it_interval) ||
                    memcmp(&out.it_interval, &its.it_interval, sizeof(its.it_interval)) != 0)
                        abort();
                if ((its.it_value.tv_sec || its.it_value.tv_nsec) != (out.it_value.tv_sec || out.it_value.tv_nsec))
                        abort();
        }
        memcpy(text, in->mem, MEM_SIZE);
        text[MEM_SIZE] = 0;
        (void) tns_parse_proc_timers(text, (int) args[0], &c);
        (void) tns_parse_timerfd_fdinfo(text, &c, &flags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const struct tns_emu_env env = {f_clock, f_adj, f_tz, f_read, f_caps, NULL};
        struct input buf = {};
        struct tns_emu_state st = {};
        struct tns_emu_result res;
        enum tns_sys sys;
        struct timex tx;
        int r;

        memcpy(&buf, data, size < sizeof(buf) ? size : sizeof(buf));
        in = &buf;
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                st.offset[c] = buf.offset[c];
        st.tz_set = buf.tz_set & 1;
        /* Make small addresses likely, so that reads succeed often. */
        for (int i = 0; i < 6; i++)
                if (buf.args[i] & 1)
                        buf.args[i] = MEM_BASE + (buf.args[i] >> 1) % (MEM_SIZE + 16);
        sys = (enum tns_sys)(buf.sys % (_TNS_SYS_MAX + 1));
        fuzz_waits(sys, buf.args, buf.offset);
        r = tns_emulate(sys, buf.args, &st, &env, &res);
        if (r < 0) {
                if (r < -4095)
                        abort();
                return 0;
        }
        if (res.n_writes > TNS_EMU_MAX_WRITES)
                abort();
        for (unsigned i = 0; i < res.n_writes; i++)
                if (res.writes[i].len == 0 || res.writes[i].len > TNS_EMU_MAX_WRITE_SIZE)
                        abort();
        /* time() returns the time itself: a negative one is a value. */
        if (sys == TNS_SYS_TIME)
                return 0;
        /* An error changes nothing, and writes nothing but adjtimex's copy
         * of its own unchanged input (sys_adjtimex copies back always). */
        if (res.ret < 0 && (res.ret < -4095 || res.unshare || res.set_tz))
                abort();
        if (res.ret < 0 && res.n_writes != 0 &&
            (sys != TNS_SYS_ADJTIMEX || res.n_writes != 1 || res.writes[0].len != sizeof(struct timex) ||
             f_read(NULL, res.writes[0].addr, &tx, sizeof(tx)) < 0 || memcmp(&tx, res.writes[0].data, sizeof(tx))))
                abort();
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (res.ret < 0 && res.set_offset[c])
                        abort();
        return 0;
}
