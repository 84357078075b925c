/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tail-send.h"
#include "wait-tail.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* The tail (tail-send.h). The bytes are the same for every thread, so two
 * threads sent here at once find what they run.
 *
 * In:  rax = the call's number, rcx = the address of its `syscall`
 *      instruction, r11 = the wait memfd's number in the program; every
 *      other register as the call had it (its arguments).
 * It steps below the red zone, saves the arguments, maps the memfd
 * (mmap(NULL, TNS_WAIT_PAGE_SIZE, PROT_READ, MAP_PRIVATE, fd, 0)), closes
 * the fd, restores them and jumps to the `syscall` instruction. Only mov,
 * lea, push, pop and jmp, which leave the flags as the program had them
 * (the syscalls keep them too). A supervisor killed at any point of this
 * loses nothing: the program goes on by itself, as if its call had just
 * been made. */
__asm__(".pushsection .rodata\n"
        ".hidden tns_wait_tail\n"
        ".hidden tns_wait_tail_end\n"
        ".globl tns_wait_tail\n"
        ".globl tns_wait_tail_end\n"
        "tns_wait_tail:\n"
        "        lea -128(%rsp), %rsp\n"
        "        push %rax\n"
        "        push %rcx\n"
        "        push %rdi\n"
        "        push %rsi\n"
        "        push %rdx\n"
        "        push %r10\n"
        "        push %r8\n"
        "        push %r9\n"
        "        mov %r11, %r8\n"
        "        mov $0, %edi\n"
        "        mov $" STR(TNS_WAIT_PAGE_SIZE) ", %esi\n"
                                                "        mov $1, %edx\n" /* PROT_READ */
                                                "        mov $2, %r10d\n" /* MAP_PRIVATE */
                                                "        mov $0, %r9d\n"
                                                "        mov $9, %eax\n" /* SYS_mmap */
                                                "        syscall\n"
                                                "        mov %r8, %rdi\n"
                                                "        mov $3, %eax\n" /* SYS_close */
                                                "        syscall\n"
                                                "        pop %r9\n"
                                                "        pop %r8\n"
                                                "        pop %r10\n"
                                                "        pop %rdx\n"
                                                "        pop %rsi\n"
                                                "        pop %rdi\n"
                                                "        pop %rcx\n"
                                                "        pop %rax\n"
                                                "        lea 128(%rsp), %rsp\n"
                                                "        jmp *%rcx\n"
                                                "tns_wait_tail_end:\n"
                                                ".popsection\n");

int tns_wait_tail_send(const struct tns_vdso_host *h, pid_t tid, const struct user_regs_struct *regs, long nr, int fd) {
        // cppcheck-suppress comparePointers
        const size_t n = (size_t) (tns_wait_tail_end - tns_wait_tail);
        struct user_regs_struct t = *regs;

        t.rax = (uint64_t) nr;
        t.rcx = regs->rip - 2;
        t.r11 = (uint64_t) fd;
        /* Not in a call: no restart logic turns rax back into it. */
        t.orig_rax = (uint64_t) -1;
        return tns_tail_send(h, tid, TNS_TAIL_WAIT_OFFSET, tns_wait_tail, n, regs, &t);
}
