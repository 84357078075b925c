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
