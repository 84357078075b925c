/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A running program's kernel vDSO turned into the syscall path: its clock
 * functions' first bytes become syscall stubs (lib/core/vdso-stub.h), so
 * that every clock read it makes through the vDSO is a syscall our filter
 * sends to the supervisor. For a program that started without our image
 * and cannot be given it (a debugger traces it). */
#pragma once

#include <stdint.h>

#include "vdso-host.h"

/* Writes the stubs through mem (tns_proc_open_mem()) into the kernel vDSO
 * at base, which must be this host's (h). The caller makes sure that no
 * thread of the program runs meanwhile (it has one thread, stopped in a
 * call we hold). Returns the number of functions changed (0: already
 * stubs), -ENOEXEC if what lies at base is not this host's vDSO, -EIO if
 * the memory is gone. */
int tns_vdso_syscall_path(const struct tns_vdso_host *h, int mem, uint64_t base);
