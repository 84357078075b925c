/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The code the supervisor runs inside a new program at its exec stop, to
 * map the namespace's memfd with one stop instead of one per syscall (a
 * ptrace stop per injected syscall cost ~270 us per exec, this ~70 us).
 * It is copied over the first bytes of the program's kernel vDSO (its ELF
 * header, which nothing reads once AT_SYSINFO_EHDR points at our image)
 * and those bytes are put back afterwards.
 *
 * In:  r12 = the memfd's size, r13 = the memfd's number in the program.
 * Out: r14 = mmap(NULL, r12, PROT_READ|PROT_EXEC, MAP_SHARED, r13, 0),
 *      r15 = mmap(r14, 4096, PROT_READ, MAP_PRIVATE|MAP_FIXED, r13, 0)
 *            (the parameter page, private to the program),
 *      and r13 closed; then int3 stops it for the supervisor. */
#include "inject.h"

__asm__(".pushsection .rodata\n"
        ".hidden tns_inject_blob\n"
        ".hidden tns_inject_blob_end\n"
        ".globl tns_inject_blob\n"
        ".globl tns_inject_blob_end\n"
        "tns_inject_blob:\n"
        "        xor %edi, %edi\n"
        "        mov %r12, %rsi\n"
        "        mov $5, %edx\n" /* PROT_READ | PROT_EXEC */
        "        mov $1, %r10d\n" /* MAP_SHARED */
        "        mov %r13, %r8\n"
        "        xor %r9d, %r9d\n"
        "        mov $9, %eax\n" /* SYS_mmap */
        "        syscall\n"
        "        mov %rax, %r14\n"
        "        mov %r14, %rdi\n"
        "        mov $4096, %esi\n"
        "        mov $1, %edx\n" /* PROT_READ */
        "        mov $0x12, %r10d\n" /* MAP_PRIVATE | MAP_FIXED */
        "        mov %r13, %r8\n"
        "        xor %r9d, %r9d\n"
        "        mov $9, %eax\n"
        "        syscall\n"
        "        mov %rax, %r15\n"
        "        mov %r13, %rdi\n"
        "        mov $3, %eax\n" /* SYS_close */
        "        syscall\n"
        "        int3\n"
        "tns_inject_blob_end:\n"
        ".popsection\n");

/* The exec tail (supervisor-exec.c): the code a new program runs, with no
 * tracer, before its entry point. Written into the zero padding at the
 * end of the program's kernel vDSO (a private copy of that page), where
 * it stays, harmless: nothing jumps there again.
 *
 * In:  r12 = the memfd's size, r13 = the memfd's number in the program,
 *      r14 = the entry point, r15 = the address of the AT_SYSINFO_EHDR
 *      value on the stack, rbx = the kernel vDSO's base.
 * It maps the memfd as the blob above does, closes the fd and calls
 * sysinfo(NULL, TNS_EXEC_MARKER, base, second, auxv slot, kernel base):
 * the filter sends that to the supervisor, which fills the parameter page
 * and points the auxv at our image (or zeroes it: no vDSO, the syscall
 * path) before it answers. Then the registers are zeroed as the exec
 * left them and it jumps to the entry point. A supervisor killed at any
 * point of this loses nothing: the call waits in the listener's queue
 * for its successor, which needs nothing but these arguments. */
__asm__(".pushsection .rodata\n"
        ".hidden tns_inject_tail\n"
        ".hidden tns_inject_tail_end\n"
        ".globl tns_inject_tail\n"
        ".globl tns_inject_tail_end\n"
        "tns_inject_tail:\n"
        "        xor %edi, %edi\n"
        "        mov %r12, %rsi\n"
        "        mov $5, %edx\n" /* PROT_READ | PROT_EXEC */
        "        mov $1, %r10d\n" /* MAP_SHARED */
        "        mov %r13, %r8\n"
        "        xor %r9d, %r9d\n"
        "        mov $9, %eax\n" /* SYS_mmap */
        "        syscall\n"
        "        mov %rax, %rbp\n"
        "        mov %rax, %r12\n"
        "        cmp $-4095, %rax\n"
        "        jae 1f\n" /* failed: no second mapping */
        "        mov %rbp, %rdi\n"
        "        mov $4096, %esi\n"
        "        mov $1, %edx\n" /* PROT_READ */
        "        mov $0x12, %r10d\n" /* MAP_PRIVATE | MAP_FIXED */
        "        mov %r13, %r8\n"
        "        xor %r9d, %r9d\n"
        "        mov $9, %eax\n"
        "        syscall\n"
        "        mov %rax, %r12\n"
        "1:      mov %r13, %rdi\n"
        "        mov $3, %eax\n" /* SYS_close */
        "        syscall\n"
        "        xor %edi, %edi\n"
        "        movabs $0x544e5345584543, %rsi\n" /* TNS_EXEC_MARKER */
        "        mov %rbp, %rdx\n"
        "        mov %r12, %r10\n"
        "        mov %r15, %r8\n"
        "        mov %rbx, %r9\n"
        "        mov $99, %eax\n" /* SYS_sysinfo */
        "        syscall\n"
        "        push %r14\n"
        "        xor %eax, %eax\n"
        "        xor %ebx, %ebx\n"
        "        xor %ecx, %ecx\n"
        "        xor %edx, %edx\n"
        "        xor %esi, %esi\n"
        "        xor %edi, %edi\n"
        "        xor %ebp, %ebp\n"
        "        xor %r8d, %r8d\n"
        "        xor %r9d, %r9d\n"
        "        xor %r10d, %r10d\n"
        "        xor %r11d, %r11d\n"
        "        xor %r12d, %r12d\n"
        "        xor %r13d, %r13d\n"
        "        xor %r14d, %r14d\n"
        "        xor %r15d, %r15d\n"
        "        ret\n"
        "tns_inject_tail_end:\n"
        ".popsection\n");
