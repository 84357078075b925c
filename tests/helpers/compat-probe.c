/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* compat-probe: the 32-bit doors to the clocks, from a 64-bit process.
 *
 * A 64-bit program can still make i386 syscalls with `int $0x80` (the
 * kernel then takes the compat path: seccomp sees AUDIT_ARCH_I386) and x32
 * syscalls with the __X32_SYSCALL_BIT in the number. timens does not
 * emulate either, so its filter must refuse them (ENOSYS) rather than let
 * them read or set the host's time. Prints one line per call:
 *
 *     NAME ok|ERRNO
 *
 * "ok" for success (the value itself is the host's, not printed). The
 * setters are called with time 0: the probe refuses to run with
 * CAP_SYS_TIME, so that they can only fail. With
 * --ia32-works the probe only says whether int $0x80 is there at all: a
 * kernel without IA32 emulation kills the process with SIGSEGV instead.
 * With --x32 it makes the x32 calls alone. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define X32_SYSCALL_BIT 0x40000000L

/* i386 numbers (arch/x86/entry/syscalls/syscall_32.tbl). */
#define I386_TIME 13
#define I386_STIME 25
#define I386_GETTIMEOFDAY 78
#define I386_SETTIMEOFDAY 79
#define I386_ADJTIMEX 124
#define I386_CLOCK_SETTIME 264
#define I386_CLOCK_GETTIME 265
#define I386_CLOCK_GETRES 266
#define I386_CLOCK_ADJTIME 343
#define I386_CLOCK_GETTIME64 403
#define I386_CLOCK_SETTIME64 404
#define I386_CLOCK_ADJTIME64 405
#define I386_GETPID 20

/* One i386 syscall. Arguments are 32-bit: every pointer passed must be
 * below 4 GiB (MAP_32BIT). Returns the raw result (-errno on error). The
 * kernel may not preserve r8-r11 across int $0x80 from 64-bit code. */
static long int80(long nr, uint32_t a, uint32_t b) {
        long ret = nr;

        __asm__ volatile("int $0x80" : "+a"(ret) : "b"(a), "c"(b) : "r8", "r9", "r10", "r11", "memory", "cc");
        return ret;
}

/* One x32 syscall: the 64-bit instruction with the x32 bit set. */
static long x32(long nr, long a, long b) {
        long ret = nr | X32_SYSCALL_BIT;

        __asm__ volatile("syscall" : "+a"(ret) : "D"(a), "S"(b) : "rcx", "r11", "memory", "cc");
        return ret;
}

/* capget without libcap: version 3, two 32-bit words. */
static int has_cap_sys_time(void) {
        struct {
                uint32_t version;
                int pid;
        } hdr = {0x20080522, 0};
        struct {
                uint32_t effective, permitted, inheritable;
        } data[2] = {};

        if (syscall(SYS_capget, &hdr, data) < 0)
                return 1;
        return !!(data[0].effective & (1U << 25));
}

static void report(const char *name, long r) {
        if (r < 0 && r > -4096)
                printf("%s %s\n", name, strerrorname_np((int) -r) ?: "E?");
        else
                printf("%s ok\n", name);
}

int main(int argc, char *argv[]) {
        unsigned char *low;
        uint32_t buf;

        if (has_cap_sys_time()) {
                fprintf(stderr, "compat-probe: refusing to run with CAP_SYS_TIME (run it with setpriv as nobody)\n");
                return 2;
        }
        low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        if (low == MAP_FAILED) {
                perror("mmap(MAP_32BIT)");
                return 2;
        }
        buf = (uint32_t) (uintptr_t) low;
        if (argc == 2 && strcmp(argv[1], "--ia32-works") == 0) {
                report("i386_getpid", int80(I386_GETPID, 0, 0) == getpid() ? 0 : -ENOSYS);
                return 0;
        }
        /* --x32: the x32 calls alone, where int $0x80 does not work (no
         * IA32 emulation: it raises SIGSEGV). */
        if (argc == 2 && strcmp(argv[1], "--x32") == 0)
                goto x32_calls;
        report("i386_clock_gettime", int80(I386_CLOCK_GETTIME, 0 /* CLOCK_REALTIME */, buf));
        report("i386_clock_gettime_monotonic", int80(I386_CLOCK_GETTIME, 1, buf));
        report("i386_clock_gettime64", int80(I386_CLOCK_GETTIME64, 0, buf));
        report("i386_gettimeofday", int80(I386_GETTIMEOFDAY, buf, 0));
        report("i386_time", int80(I386_TIME, 0, 0));
        /* Setters: the probe runs unprivileged or in a user namespace, so
         * on the host these fail with EPERM; never with success. */
        memset(low, 0, 64);
        report("i386_clock_settime", int80(I386_CLOCK_SETTIME, 0, buf));
        report("i386_clock_settime64", int80(I386_CLOCK_SETTIME64, 0, buf));
        report("i386_settimeofday", int80(I386_SETTIMEOFDAY, buf, 0));
        report("i386_stime", int80(I386_STIME, buf, 0));
        report("i386_adjtimex", int80(I386_ADJTIMEX, buf, 0));
        report("i386_clock_adjtime", int80(I386_CLOCK_ADJTIME, 0, buf));
        report("i386_clock_adjtime64", int80(I386_CLOCK_ADJTIME64, 0, buf));
        /* Not a clock syscall: must behave as on the host. */
        report("i386_clock_getres", int80(I386_CLOCK_GETRES, 0, buf));
x32_calls:
        memset(low, 0, 64);
        report("x32_clock_gettime", x32(SYS_clock_gettime, 0, (long) buf));
        report("x32_gettimeofday", x32(SYS_gettimeofday, (long) buf, 0));
        report("x32_time", x32(SYS_time, 0, 0));
        report("x32_clock_settime", x32(SYS_clock_settime, 0, (long) buf));
        report("x32_getpid", x32(SYS_getpid, 0, 0));
        return 0;
}
