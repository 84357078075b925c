/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The close tail: how a thread stopped right after a call of its own
 * (an execve that failed, an unshare or setns whose move was not made:
 * lib/supervisor/supervisor-exec.c) closes the fd the supervisor gave it
 * for that call and returns from the call with the call's result. It runs
 * on its own (tail-send.h): where the close ran in the thread under
 * ptrace, a supervisor that died in it let the call return the close's 0
 * (an execve that failed "succeeded"). */
#pragma once

#include <sys/types.h>
#include <sys/user.h>

struct tns_vdso_host;

/* The code (close-tail.c). In: rax = the call's result, rcx = where the
 * call returns (just past its `syscall` instruction), r11 = the fd. */
extern const unsigned char tns_close_tail[], tns_close_tail_end[];

/* Sends the stopped, traced thread tid into the tail: regs are its
 * registers, stopped right after its 64-bit call (its result in rax), fd
 * the number to close in its program. The caller then lets it go.
 * -ENOENT where the tail cannot go (tns_tail_send()), or for a restart
 * code in rax. */
int tns_close_tail_send(const struct tns_vdso_host *h, pid_t tid, const struct user_regs_struct *regs, int fd);
