/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <sys/syscall.h>

#include "vdso-stub.h"

int tns_vdso_stub_syscall(enum tns_vdso_fn fn) {
        switch (fn) {
        case TNS_VDSO_CLOCK_GETTIME:
                return SYS_clock_gettime;
        case TNS_VDSO_GETTIMEOFDAY:
                return SYS_gettimeofday;
        case TNS_VDSO_TIME:
                return SYS_time;
        default:
                return -1;
        }
}

int tns_vdso_stub_bytes(enum tns_vdso_fn fn, uint8_t ret[TNS_VDSO_STUB_SIZE]) {
        int nr = tns_vdso_stub_syscall(fn);

        if (nr < 0)
                return -EINVAL;
        ret[0] = 0xb8; /* mov $imm32, %eax (zero-extends into %rax) */
        ret[1] = (uint8_t) nr;
        ret[2] = (uint8_t) (nr >> 8);
        ret[3] = 0;
        ret[4] = 0;
        ret[5] = 0x0f; /* syscall */
        ret[6] = 0x05;
        ret[7] = 0xc3; /* ret */
        return 0;
}
