/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
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

#define INT3 0xcc
#define JMP_SHORT 0xeb
#define JMP_SIZE 2

static bool breakpoint_at(const uint8_t *orig, const uint8_t *now, size_t i) {
        return now[i] == INT3 && orig[i] != INT3;
}

/* The last breakpoint in [from, from + len) of the n bytes, or -1. */
static long last_breakpoint(const uint8_t *orig, const uint8_t *now, size_t n, size_t from, size_t len) {
        long last = -1;

        for (size_t i = from; i < from + len && i < n; i++)
                if (breakpoint_at(orig, now, i))
                        last = (long) i;
        return last;
}

/* A first instruction the stub may keep and run as it is, for a
 * breakpoint on the function's first byte (gdb puts it there where it
 * finds no prologue to skip): its length, and in undo what puts back what
 * it changed (a push's pop). Only forms that change nothing but flags,
 * registers the caller does not keep and no argument of ours is in (rax,
 * rcx, rdx, r8-r11), or the stack they undo; 0 for any other. */
static size_t harmless_first(const uint8_t *c, size_t n, uint8_t undo[2], size_t *ret_undo) {
        *ret_undo = 0;
        if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
                return 4; /* endbr64 */
        if (c[0] >= 0x50 && c[0] <= 0x57) { /* push %reg */
                undo[0] = (uint8_t) (c[0] + 8);
                *ret_undo = 1;
                return 1;
        }
        if (n >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57) { /* push %r8-%r15 */
                undo[0] = 0x41;
                undo[1] = (uint8_t) (c[1] + 8);
                *ret_undo = 2;
                return 2;
        }
        if (n >= 10 && c[0] == 0x81 && c[1] == 0x3d)
                return 10; /* cmpl $imm32, disp32(%rip) */
        if (n >= 7 && c[0] == 0x83 && c[1] == 0x3d)
                return 7; /* cmpl $imm8, disp32(%rip) */
        if (n >= 3 && c[0] == 0x83 && c[1] >= 0xf8)
                return 3; /* cmp $imm8, %reg32 */
        if (n >= 6 && c[0] == 0x8b && (c[1] == 0x05 || c[1] == 0x0d || c[1] == 0x15))
                return 6; /* mov disp32(%rip), %eax/%ecx/%edx */
        if (n >= 7 && c[1] == 0x8d && (c[2] & 0xc7) == 0x05 &&
            ((c[0] == 0x48 && ((c[2] >> 3) & 7) <= 2) || (c[0] == 0x4c && ((c[2] >> 3) & 7) <= 3)))
                return 7; /* lea disp32(%rip) into %rax/%rcx/%rdx or %r8-%r11 */
        return 0;
}

/* Where the stub goes after start (the kept instruction and its undo):
 * past every breakpoint in its way, each move possibly meeting another;
 * -EBUSY for one where the jump over them goes. */
static long stub_offset(const uint8_t *orig, const uint8_t *now, size_t n, size_t start) {
        size_t at = start;
        long b;

        while ((b = last_breakpoint(orig, now, n, at, TNS_VDSO_STUB_SIZE)) >= 0)
                at = (size_t) b + 1;
        if (at > start && last_breakpoint(orig, now, n, start, JMP_SIZE) >= 0)
                return -EBUSY;
        return (long) at;
}

int tns_vdso_stub_place(enum tns_vdso_fn fn, const uint8_t *orig, const uint8_t *now, size_t n, uint8_t *ret) {
        uint8_t stub[TNS_VDSO_STUB_SIZE], undo[2];
        size_t keep = 0, undo_len = 0, start, pos;
        long at;
        int r;

        r = tns_vdso_stub_bytes(fn, stub);
        if (r < 0)
                return r;
        if (n < TNS_VDSO_STUB_SIZE)
                return -ENOSPC;
        /* A breakpoint on the first bytes: the first instruction stays (a
         * debugger that steps over its breakpoint runs the original byte
         * there), then its undo. */
        if (last_breakpoint(orig, now, n, 0, JMP_SIZE) >= 0) {
                keep = harmless_first(orig, n, undo, &undo_len);
                if (keep == 0)
                        return -EBUSY;
                for (size_t i = 0; i < keep; i++)
                        if (now[i] != orig[i] && !breakpoint_at(orig, now, i))
                                return -EBUSY;
                if (last_breakpoint(orig, now, n, keep, undo_len) >= 0)
                        return -EBUSY;
        }
        start = keep + undo_len;
        /* Ours already: what is kept, the undo, a jump, the stub. */
        if (start <= n && memcmp(now + keep, undo, undo_len) == 0) {
                pos = start;
                if (pos + JMP_SIZE <= n && now[pos] == JMP_SHORT)
                        pos += JMP_SIZE + now[pos + 1];
                if (pos + sizeof(stub) <= n && memcmp(now + pos, stub, sizeof(stub)) == 0)
                        return 0;
        }
        at = stub_offset(orig, now, n, start);
        if (at < 0)
                return (int) at;
        if ((size_t) at + sizeof(stub) > n || (size_t) at - start > 127 + JMP_SIZE)
                return -ENOSPC;
        memcpy(ret, now, n);
        memcpy(ret + keep, undo, undo_len);
        if ((size_t) at > start) {
                ret[start] = JMP_SHORT;
                ret[start + 1] = (uint8_t) ((size_t) at - start - JMP_SIZE);
        }
        memcpy(ret + at, stub, sizeof(stub));
        return (int) ((size_t) at + sizeof(stub));
}
