/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tails (lib/kernel/tail-send.h) as a thread runs them when its
 * tracer is gone the instant after sending it there. The wait tail: the
 * thread maps the page, closes the fd and makes its call again with its
 * own arguments, registers and flags. The close tail: it closes the fd
 * and its call returns its own result. Either way it goes on by itself. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc-util.h"
#include "test.h"
#include "util.h"
#include "vdso-host.h"
#include "close-tail.h"
#include "wait-tail.h"

#define MAGIC "timens-wait-tst" /* 16 bytes with its NUL */
#define KEEP8 UINT64_C(0x8888888888888888)
#define KEEP9 UINT64_C(0x9999999999999999)
#define KEEP10 UINT64_C(0x1010101010101010)

/* read(fd, buf, len) by its own `syscall` instruction, with the carry
 * flag set and r8-r10 holding values the kernel keeps: 0 if those came
 * back as they went, and the call's result in *ret. */
static int read_keeping(int fd, void *buf, size_t len, long *ret) {
        register uint64_t r8 __asm__("r8") = KEEP8, r9 __asm__("r9") = KEEP9, r10 __asm__("r10") = KEEP10;
        bool carry;
        long rax = SYS_read;

        __asm__ volatile("stc\n\tsyscall"
                         : "+a"(rax), "=@ccc"(carry), "+r"(r8), "+r"(r9), "+r"(r10)
                         : "D"(fd), "S"(buf), "d"(len)
                         : "rcx", "r11", "memory");
        *ret = rax;
        return carry && r8 == KEEP8 && r9 == KEEP9 && r10 == KEEP10 ? 0 : -1;
}

/* The child: what it reads, and what the tail left it. Exit 0 when all is
 * as it should be, else the number of the first thing that was not. */
static int child(int in, int memfd) {
        char buf[8] = {};
        uint64_t page = 0;
        long n = 0;

        if (read_keeping(in, buf, sizeof(buf), &n) < 0)
                return 2; /* registers or flags not the program's */
        if (n != 1 || buf[0] != 'x')
                return 3; /* the call not made again, or not with its own arguments */
        if (fcntl(memfd, F_GETFD) >= 0 || errno != EBADF)
                return 4; /* the fd not closed */
        if (tns_proc_find_mapping(getpid(), "/memfd:timens-wait", 0, &page, NULL) < 0 || !page)
                return 5;
        if (memcmp((const void *) (uintptr_t) page, MAGIC, 16) != 0)
                return 6;
        return 0;
}

static int make_memfd(void) {
        int fd = memfd_create("timens-wait", 0); /* inherited by the child */

        if (fd < 0 || ftruncate(fd, TNS_WAIT_PAGE_SIZE) < 0 || pwrite(fd, MAGIC, 16, 0) != 16)
                return -1;
        return fd;
}

/* The child blocked in its read (the first field of /proc/PID/syscall). */
static bool in_read(pid_t pid) {
        for (int i = 0; i < 2000; i++) {
                char path[64], text[16] = {};
                _cleanup_close_ int fd = -EBADF;

                snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd >= 0 && read(fd, text, sizeof(text) - 1) > 1 && text[0] == '0' && text[1] == ' ')
                        return true;
                (void) nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        return false;
}

/* This host's vDSO, learnt as timensd learns it: 0, 1 (why: no tail
 * can go here) or -errno. */
static int host_with_tail(struct tns_vdso_host *h, const char **why) {
        int r = tns_vdso_host_init_unproven(h);

        *why = "no vDSO in this process (vdso=0?)";
        if (r == -ENOENT)
                return 1;
        if (r < 0)
                return r;
        *why = "this kernel's vDSO has no padding for the tail";
        if (!h->tail) {
                tns_vdso_host_done(h);
                return 1;
        }
        return 0;
}

TEST(tail_run_without_a_tracer_maps_the_page_and_makes_the_call_again) {
        struct tns_vdso_host h;
        struct user_regs_struct regs;
        const char *why;
        int p[2], memfd, status, r;
        pid_t pid;

        r = host_with_tail(&h, &why);
        if (r > 0)
                SKIP("%s", why);
        ASSERT_EQ(r, 0);
        ASSERT_EQ(pipe(p), 0);
        memfd = make_memfd();
        ASSERT_TRUE(memfd >= 0);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0)
                _exit(child(p[0], memfd));
        ASSERT_TRUE(in_read(pid));
        /* Interrupted in its read: stopped in get_signal() with a restart
         * code in rax, as a held wait is at its interrupt stop. */
        ASSERT_EQ(ptrace(PTRACE_SEIZE, pid, 0, 0), 0);
        ASSERT_EQ(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
        ASSERT_EQ(waitpid(pid, &status, __WALL), pid);
        ASSERT_TRUE(WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP);
        ASSERT_EQ(ptrace(PTRACE_GETREGS, pid, 0, &regs), 0);
        EXPECT_EQ((long) regs.orig_rax, (long) SYS_read);
        ASSERT_EQ(tns_wait_tail_send(&h, pid, &regs, (long) regs.orig_rax, memfd), 0);
        /* The tracer goes: nothing more is done for the child. */
        ASSERT_EQ(ptrace(PTRACE_DETACH, pid, 0, 0), 0);
        close(memfd);
        ASSERT_EQ(write(p[1], "x", 1), 1);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), 0);
        close(p[0]);
        close(p[1]);
        tns_vdso_host_done(&h);
}

TEST(no_tail_without_a_syscall_instruction_before_ip) {
        struct tns_vdso_host h;
        struct user_regs_struct regs = {.rip = 1, .cs = 0x33};

        if (tns_vdso_host_init_unproven(&h) < 0)
                SKIP("no vDSO in this process");
        EXPECT_EQ(tns_wait_tail_send(&h, getpid(), &regs, SYS_read, 0), -ENOENT);
        regs.rip = 0x1000;
        regs.cs = 0x23; /* a 32-bit caller */
        EXPECT_EQ(tns_wait_tail_send(&h, getpid(), &regs, SYS_read, 0), -ENOENT);
        tns_vdso_host_done(&h);
}

/* read(-1, ...) by its own `syscall` instruction: its raw result in *ret,
 * 0 if rdi, r8-r10 and the carry flag came back as they went. */
static int bad_read_keeping(long *ret) {
        register uint64_t r8 __asm__("r8") = KEEP8, r9 __asm__("r9") = KEEP9, r10 __asm__("r10") = KEEP10;
        uint64_t rdi = (uint64_t) -1;
        long rax = SYS_read;
        bool carry;

        __asm__ volatile("stc\n\tsyscall"
                         : "+a"(rax), "=@ccc"(carry), "+D"(rdi), "+r"(r8), "+r"(r9), "+r"(r10)
                         : "S"(NULL), "d"(0)
                         : "rcx", "r11", "memory");
        *ret = rax;
        return carry && rdi == (uint64_t) -1 && r8 == KEEP8 && r9 == KEEP9 && r10 == KEEP10 ? 0 : -1;
}

static int close_child(int memfd) {
        long n = 0;

        (void) !raise(SIGSTOP);
        if (bad_read_keeping(&n) < 0)
                return 2;
        if (n != -EBADF)
                return 3; /* not the call's own result */
        if (fcntl(memfd, F_GETFD) >= 0 || errno != EBADF)
                return 4;
        return 0;
}

TEST(close_tail_run_without_a_tracer_closes_and_returns_the_calls_result) {
        struct tns_vdso_host h;
        struct user_regs_struct regs;
        const char *why;
        int memfd, status, r;
        pid_t pid;

        r = host_with_tail(&h, &why);
        if (r > 0)
                SKIP("%s", why);
        ASSERT_EQ(r, 0);
        memfd = make_memfd();
        ASSERT_TRUE(memfd >= 0);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0)
                _exit(close_child(memfd));
        ASSERT_EQ(waitpid(pid, &status, WUNTRACED), pid);
        ASSERT_TRUE(WIFSTOPPED(status));
        ASSERT_EQ(ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESYSGOOD), 0);
        (void) kill(pid, SIGCONT);
        /* To the exit stop of its read(-1): stopped right after the call,
         * its result in rax, as a failed exec is when we close our fd. */
        for (int i = 0; i < 64; i++) {
                ASSERT_EQ(ptrace(PTRACE_SYSCALL, pid, 0, 0), 0);
                ASSERT_EQ(waitpid(pid, &status, __WALL), pid);
                ASSERT_TRUE(WIFSTOPPED(status));
                if (WSTOPSIG(status) != (SIGTRAP | 0x80))
                        continue;
                ASSERT_EQ(ptrace(PTRACE_GETREGS, pid, 0, &regs), 0);
                if ((long) regs.orig_rax == SYS_read && (long) regs.rax == -EBADF)
                        break;
        }
        ASSERT_EQ((long) regs.rax, -EBADF);
        ASSERT_EQ(tns_close_tail_send(&h, pid, &regs, memfd), 0);
        ASSERT_EQ(ptrace(PTRACE_DETACH, pid, 0, 0), 0);
        close(memfd);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), 0);
        /* A restart code is not a result: no tail. */
        regs.rax = (uint64_t) -512;
        EXPECT_EQ(tns_close_tail_send(&h, getpid(), &regs, 0), -ENOENT);
        tns_vdso_host_done(&h);
}
