/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The wait tail: how a thread held at its process's first converted wait
 * (lib/supervisor/supervisor-wait.c) maps the wait page itself. The
 * supervisor sends the thread into a few instructions of ours
 * (tail-send.h) and lets it go; they map the page, close the fd it was
 * given and make the thread's call again, which comes back to the
 * supervisor with the page there. */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct tns_vdso_host;

/* The wait page: TNS_WAIT_PAGE_SIZE bytes of the supervisor's wait memfd,
 * mapped private and read-only in each process that waits. */
#define TNS_WAIT_PAGE_SIZE (16 * 4096)

/* The code (wait-tail.c). In: rax = the call's number, rcx = the address
 * of its `syscall` instruction, r11 = the memfd's number in the program. */
extern const unsigned char tns_wait_tail[], tns_wait_tail_end[];

/* Sends the stopped, traced thread tid into the tail: regs are its
 * registers at a stop right after its 64-bit call nr (a restart code or
 * the call's result in rax), fd the memfd's number in its program. The
 * caller then lets it go (PTRACE_DETACH). -ENOENT where the tail cannot
 * go: h has no room for it, the thread has no kernel vDSO of this host's,
 * or no `syscall` instruction just before its ip. */
int tns_wait_tail_send(const struct tns_vdso_host *h, pid_t tid, const struct user_regs_struct *regs, long nr, int fd);
