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
