/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrace-util.h"
#include "util.h"

enum tns_stop tns_stop_decode(int status, int *ret_sig) {
        int sig, event;

        *ret_sig = 0;
        if (WIFEXITED(status) || WIFSIGNALED(status))
                return TNS_STOP_EXITED;
        sig = WSTOPSIG(status);
        event = status >> 16;
        if (event == PTRACE_EVENT_EXEC)
                return TNS_STOP_EXEC;
        if (event == PTRACE_EVENT_STOP)
                return TNS_STOP_INTERRUPT;
        if (sig == (SIGTRAP | 0x80))
                return TNS_STOP_SYSCALL;
        if (sig == SIGTRAP)
                return TNS_STOP_STEP;
        *ret_sig = sig;
        return TNS_STOP_SIGNAL;
}

int tns_ptrace_wait(pid_t pid, int *ret_sig) {
        int status;
        pid_t r;

        do
                r = waitpid(pid, &status, __WALL);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return negative_errno();
        return (int) tns_stop_decode(status, ret_sig);
}

static void hold(struct tns_held_signals *held, int sig) {
        if (held && held->n < TNS_MAX_HELD_SIGNALS)
                held->sig[held->n++] = sig;
}

/* Single-steps until the step itself is reported: a pending interrupt or
 * a signal may be reported first, and is absorbed (signals kept). */
static int step(pid_t pid, struct tns_held_signals *held) {
        for (unsigned tries = 0; tries < 16; tries++) {
                int sig, r;

                if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0)
                        return negative_errno();
                r = tns_ptrace_wait(pid, &sig);
                if (r < 0)
                        return r;
                switch (r) {
                case TNS_STOP_STEP:
                case TNS_STOP_SYSCALL:
                        return 0;
                case TNS_STOP_EXITED:
                        return -ESRCH;
                case TNS_STOP_SIGNAL:
                        hold(held, sig);
                        break;
                default:
                        break; /* an interrupt stop: step again */
                }
        }
        return -EBUSY;
}

/* Points the stopped tracee at the `syscall` instruction at `at`, set
 * up for nr(args), from the registers `base`. */
static int set_call(pid_t pid, const struct user_regs_struct *base, uint64_t at, long nr, const uint64_t args[6]) {
        struct user_regs_struct regs = *base;

        regs.rip = at;
        regs.rax = nr;
        regs.orig_rax = -1; /* not in a syscall: no restart logic applies */
        regs.rdi = args[0];
        regs.rsi = args[1];
        regs.rdx = args[2];
        regs.r10 = args[3];
        regs.r8 = args[4];
        regs.r9 = args[5];
        return ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0 ? negative_errno() : 0;
}

/* The raw return value of the call the tracee has just run. */
static int call_result(pid_t pid, int64_t *ret) {
        struct user_regs_struct regs;

        if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
                return negative_errno();
        *ret = (int64_t) regs.rax;
        return 0;
}

int tns_ptrace_syscall(pid_t pid, const struct user_regs_struct *base, uint64_t gadget, long nr, const uint64_t args[6],
                       struct tns_held_signals *held, int64_t *ret) {
        int r;

        r = set_call(pid, base, gadget, nr, args);
        if (r < 0)
                return r;
        r = step(pid, held);
        if (r < 0)
                return r;
        return call_result(pid, ret);
}

bool tns_ptrace_syscall_insn_at(pid_t pid, uint64_t addr) {
        long word;

        errno = 0;
        word = ptrace(PTRACE_PEEKTEXT, pid, addr, 0);
        return errno == 0 && (word & 0xffff) == 0x050f;
}

bool tns_ptrace_after_syscall(pid_t pid, const struct user_regs_struct *regs) {
        /* Not with a restart code in rax: the kernel restarts a call
         * only from a signal stop, not from the syscall-exit stop that
         * tns_ptrace_syscall_own() leaves it in. */
        if (regs->cs != 0x33 || (int64_t) regs->orig_rax < 0 || regs->rip < 2 ||
            ((int64_t) regs->rax <= -512 && (int64_t) regs->rax >= -516))
                return false;
        return tns_ptrace_syscall_insn_at(pid, regs->rip - 2);
}

/* tns_ptrace_wait() with a bound: the stop a resumed tracee owes us may
 * never come if another thread of its program rewrote the instruction
 * it runs (a jump to itself), and the caller's thread serves everyone.
 * On timeout the tracee is interrupted (a stop it reports at once) and
 * -ETIMEDOUT returned. */
static int wait_bounded(pid_t pid, int *ret_sig) {
        const struct timespec pause = {.tv_nsec = 20 * 1000};

        for (unsigned i = 0; i < 10200; i++) { /* 200 ms and more */
                int status;
                pid_t r = waitpid(pid, &status, __WALL | WNOHANG);

                if (r < 0 && errno != EINTR)
                        return negative_errno();
                if (r > 0)
                        return (int) tns_stop_decode(status, ret_sig);
                /* The stop is usually tens of microseconds away: yield
                 * first (a sleep rounds up to the timer slack, 50 us). */
                if (i < 200)
                        (void) sched_yield();
                else
                        (void) nanosleep(&pause, NULL);
        }
        if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) >= 0)
                (void) tns_ptrace_wait(pid, ret_sig);
        return -ETIMEDOUT;
}

int tns_ptrace_syscall_own(pid_t pid, const struct user_regs_struct *base, long nr, const uint64_t args[6],
                           struct tns_held_signals *held, int64_t *ret) {
        unsigned stops = 0;
        int r;

        r = set_call(pid, base, base->rip - 2, nr, args);
        if (r < 0)
                return r;
        /* Entry, then exit: syscall stops as PTRACE_O_TRACESYSGOOD marks
         * them (a plain SIGTRAP is a signal, kept). Signal and interrupt
         * stops may come before the entry, within a bound; after it, the
         * exit stop is next. */
        for (unsigned tries = 0; stops < 2; tries++) {
                int sig;

                if (stops == 0 && tries >= 16)
                        return -EBUSY; /* nothing ran: the caller restores */
                if (ptrace(PTRACE_SYSCALL, pid, 0, 0) < 0)
                        return negative_errno();
                r = wait_bounded(pid, &sig);
                if (r < 0)
                        return r;
                if (r == TNS_STOP_SYSCALL)
                        stops++;
                else if (r == TNS_STOP_EXITED)
                        return -ESRCH;
                else if (r == TNS_STOP_STEP)
                        hold(held, SIGTRAP);
                else if (r == TNS_STOP_SIGNAL)
                        hold(held, sig);
        }
        return call_result(pid, ret);
}

int tns_ptrace_detach(pid_t pid, pid_t tgid, const struct tns_held_signals *held) {
        if (ptrace(PTRACE_DETACH, pid, 0, 0) < 0)
                return negative_errno();
        for (unsigned i = 0; held && i < held->n; i++)
                (void) syscall(SYS_tgkill, tgid, pid, held->sig[i]);
        return 0;
}
