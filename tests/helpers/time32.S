/* A 32-bit program with no libc: its clock call is an i386 syscall,
 * which timens answers with ENOSYS. It exits with -result & 0xff of
 * time(NULL) (38 for ENOSYS), or with "pause" as its argument first
 * waits for a signal, so that a test can look at its fds. Built by the
 * tests with binutils alone: as --32 && ld -m elf_i386. */
        .globl _start
_start:
        mov     (%esp), %ecx            /* argc */
        cmp     $2, %ecx
        jb      1f
        mov     $29, %eax               /* pause */
        int     $0x80
1:      mov     $13, %eax               /* time */
        xor     %ebx, %ebx
        int     $0x80
        mov     %eax, %ebx
        neg     %ebx
        mov     $1, %eax                /* exit */
        int     $0x80
