/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The syscall stubs that replace the kernel vDSO's clock functions in a
 * program that started without our image (lib/supervisor/
 * supervisor-first-call.c): each does what the kernel's own fallback does,
 * the syscall, which our filter sends to the supervisor. */
#pragma once

#include <stdint.h>

#include "offsets-page.h"

/* mov $NR, %eax; syscall; ret: the syscall's raw result (-errno on
 * failure) in %rax, as the kernel's vDSO functions return it. */
#define TNS_VDSO_STUB_SIZE 8

/* The syscall that stands in for a kernel vDSO function, or -1 for one
 * whose result no namespace changes (getcpu, getrandom, clock_getres). */
int tns_vdso_stub_syscall(enum tns_vdso_fn fn);

/* The stub's bytes for fn; -EINVAL if fn has no stand-in. */
int tns_vdso_stub_bytes(enum tns_vdso_fn fn, uint8_t ret[TNS_VDSO_STUB_SIZE]);

/* The stub for fn placed around a debugger's breakpoints. `orig` holds the
 * function's first n bytes as the host's vDSO has them, `now` as they are
 * in the program: a 0xcc in now where orig has another byte is a
 * breakpoint (gdb inserts them before the program's first instruction),
 * whose removal puts orig's byte back. A stub written over it would be
 * broken then (`break clock_gettime`, then `delete`: syscall 0x410000e4,
 * ENOSYS). So where a breakpoint lies in the stub's way, the stub starts
 * with a short jump over it and lies after it: the byte put back is never
 * run (nor is the breakpoint hit). Fills ret (n bytes: now, with the stub
 * in it) and returns how many of its first bytes are to be written; 0 if
 * now holds a stub already. -EINVAL if fn has none, -EBUSY for a
 * breakpoint in the first two bytes (where the jump goes), -ENOSPC if the
 * function is too short for the stub past its breakpoints. Pure. */
int tns_vdso_stub_place(enum tns_vdso_fn fn, const uint8_t *orig, const uint8_t *now, size_t n, uint8_t *ret);
