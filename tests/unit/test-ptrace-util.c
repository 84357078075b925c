/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tns_ptrace_syscall_own(): a syscall run on the tracee's own `syscall`
 * instruction (the one it stopped after), and its bound when that
 * instruction no longer leads to a syscall. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrace-util.h"
#include "test.h"
#include "util.h"

/* A child stopped by its own kill(SIGSTOP), seized: at its
 * signal-delivery stop it is right after the kill syscall. */
static pid_t stopped_child(struct user_regs_struct *regs) {
        int status;
        pid_t pid = fork();

        if (pid == 0) {
                (void) !kill(getpid(), SIGSTOP);
                _exit(7);
        }
        if (pid < 0 || waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status))
                return -1;
        /* Seized in its group stop; resumed into a fresh stop we trace. */
        if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESYSGOOD) < 0 || ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 ||
            waitpid(pid, &status, __WALL) != pid || ptrace(PTRACE_GETREGS, pid, 0, regs) < 0)
                return -1;
        return pid;
}

static void reap(pid_t pid, int *ret_status) {
        while (waitpid(pid, ret_status, __WALL) < 0 && errno == EINTR)
                ;
}

TEST(own_syscall_runs_the_call_and_the_tracee_goes_on) {
        struct user_regs_struct regs;
        const uint64_t args[6] = {0};
        struct tns_held_signals held = {};
        int64_t ret = 0;
        int status;
        pid_t pid = stopped_child(&regs);

        ASSERT_TRUE(pid > 0);
        ASSERT_TRUE(tns_ptrace_after_syscall(pid, &regs));
        EXPECT_EQ((long) regs.orig_rax, (long) SYS_kill);
        ASSERT_EQ(tns_ptrace_syscall_own(pid, &regs, SYS_getpid, args, &held, &ret), 0);
        EXPECT_EQ(ret, (int64_t) pid);
        /* Back where it stopped: its kill() returns, it exits 7. */
        ASSERT_EQ(ptrace(PTRACE_SETREGS, pid, 0, &regs), 0);
        ASSERT_EQ(ptrace(PTRACE_DETACH, pid, 0, 0), 0);
        (void) kill(pid, SIGCONT);
        reap(pid, &status);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7);
}

TEST(a_restart_code_is_not_run_on_the_own_instruction) {
        struct user_regs_struct regs;
        int status;
        pid_t pid = stopped_child(&regs);

        ASSERT_TRUE(pid > 0);
        regs.rax = (uint64_t) -512; /* -ERESTARTSYS */
        EXPECT_TRUE(!tns_ptrace_after_syscall(pid, &regs));
        (void) kill(pid, SIGKILL);
        reap(pid, &status);
}

/* Another thread of the program rewrote the instruction into a jump to
 * itself: no syscall stop ever comes, and the wait is bounded. */
TEST(own_syscall_is_bounded_when_the_instruction_changed) {
        static const unsigned char loop[2] = {0xeb, 0xfe};
        struct user_regs_struct regs;
        const uint64_t args[6] = {0};
        struct tns_held_signals held = {};
        struct timespec a, b;
        char path[64];
        int64_t ret = 0;
        int status, fd;
        pid_t pid = stopped_child(&regs);

        ASSERT_TRUE(pid > 0);
        ASSERT_TRUE(tns_ptrace_after_syscall(pid, &regs));
        snprintf(path, sizeof(path), "/proc/%d/mem", pid);
        fd = open(path, O_RDWR | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(pwrite(fd, loop, sizeof(loop), (off_t) (regs.rip - 2)), (ssize_t) sizeof(loop));
        close(fd);
        clock_gettime(CLOCK_MONOTONIC, &a);
        EXPECT_EQ(tns_ptrace_syscall_own(pid, &regs, SYS_getpid, args, &held, &ret), -ETIMEDOUT);
        clock_gettime(CLOCK_MONOTONIC, &b);
        EXPECT_TRUE(b.tv_sec - a.tv_sec < 5);
        (void) kill(pid, SIGKILL);
        reap(pid, &status);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}
