/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>

#include "close-tail.h"
#include "tail-send.h"

/* The tail (tail-send.h).
 *
 * In:  rax = the call's result, rcx = where it returns, r11 = the fd;
 *      every other register as the call left it.
 * It steps below the red zone, saves rax, rcx and rdi, closes the fd,
 * restores them and jumps back: the program sees its call return its own
 * result, every register but rcx and r11 (which a syscall does not keep)
 * as the kernel left them, and its flags (only mov, lea, push, pop, jmp
 * and a syscall, which keeps them). */
__asm__(".pushsection .rodata\n"
        ".hidden tns_close_tail\n"
        ".hidden tns_close_tail_end\n"
        ".globl tns_close_tail\n"
        ".globl tns_close_tail_end\n"
        "tns_close_tail:\n"
        "        lea -128(%rsp), %rsp\n"
        "        push %rax\n"
        "        push %rcx\n"
        "        push %rdi\n"
        "        mov %r11, %rdi\n"
        "        mov $3, %eax\n" /* SYS_close */
        "        syscall\n"
        "        pop %rdi\n"
        "        pop %rcx\n"
        "        pop %rax\n"
        "        lea 128(%rsp), %rsp\n"
        "        jmp *%rcx\n"
        "tns_close_tail_end:\n"
        ".popsection\n");

int tns_close_tail_send(const struct tns_vdso_host *h, pid_t tid, const struct user_regs_struct *regs, int fd) {
        // cppcheck-suppress comparePointers
        const size_t n = (size_t) (tns_close_tail_end - tns_close_tail);
        struct user_regs_struct t = *regs;

        /* A restart code is the kernel's to act on at a signal stop, not
         * a result to return. */
        if ((int64_t) regs->rax <= -512 && (int64_t) regs->rax >= -516)
                return -ENOENT;
        t.rcx = regs->rip;
        t.r11 = (uint64_t) fd;
        /* orig_rax stays the call's: a successor that finds the thread
         * stopped by our SIGSTOP at the tail's first instruction takes
         * it for the failed exec it is (adopt_failed_exec(), whose close
         * the tail then makes again: EBADF, nothing else). */
        return tns_tail_send(h, tid, TNS_TAIL_CLOSE_OFFSET, tns_close_tail, n, regs, &t);
}
