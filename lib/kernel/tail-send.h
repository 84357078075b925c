/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Code a stopped thread runs on its own: written into the zero padding of
 * its kernel vDSO (where the exec tail goes, inject.h; a private copy of
 * the page, made by the forced write), and the thread pointed at it by one
 * PTRACE_SETREGS. Once the registers are set, the thread needs no tracer:
 * a supervisor that dies then leaves nothing half done, where syscalls
 * run in it under ptrace left it a trap flag (SIGTRAP) or our registers.
 * Used by the wait tail (wait-tail.h) and the close tail (close-tail.h),
 * each at its own offset in the padding: two threads of one program may
 * run them at once. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct tns_vdso_host;

/* Where each goes, from the start of the padding (TNS_INJECT_TAIL_MAX
 * bytes in all). */
#define TNS_TAIL_WAIT_OFFSET 0
#define TNS_TAIL_CLOSE_OFFSET 96

/* Writes code (n bytes) at offset in the stopped, traced thread tid's
 * kernel vDSO padding and sets its registers to *set with rip there.
 * regs are its registers now: it must have stopped right after a 64-bit
 * `syscall` instruction of its own (regs->rip just past it). -ENOENT
 * where the code cannot go: no room in h's padding, no kernel vDSO of
 * this host's in the thread, no such instruction. */
int tns_tail_send(const struct tns_vdso_host *h, pid_t tid, size_t offset, const unsigned char *code, size_t n,
                  const struct user_regs_struct *regs, struct user_regs_struct *set);
