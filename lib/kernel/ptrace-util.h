/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The thin ptrace edge: waiting for a tracee's next stop, and running a
 * syscall inside a stopped tracee by single-stepping one `syscall`
 * instruction (the kernel reports the step at the syscall's exit). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* What a stop was, decoded from a waitpid status. */
enum tns_stop {
        TNS_STOP_EXITED, /* the tracee is gone (exit or fatal signal) */
        TNS_STOP_EXEC, /* PTRACE_EVENT_EXEC */
        TNS_STOP_INTERRUPT, /* PTRACE_EVENT_STOP: our PTRACE_INTERRUPT, or a group stop */
        TNS_STOP_SYSCALL, /* syscall entry or exit (PTRACE_O_TRACESYSGOOD) */
        TNS_STOP_STEP, /* SIGTRAP after a single step */
        TNS_STOP_SIGNAL, /* signal-delivery-stop: *ret_sig holds the signal */
};

/* Decodes a status from waitpid(__WALL). */
enum tns_stop tns_stop_decode(int status, int *ret_sig);

/* Blocks until pid's next stop (or exit). Returns the stop or -errno. */
int tns_ptrace_wait(pid_t pid, int *ret_sig);

/* Signals that arrived while we held the tracee: suppressed during our
 * steps, sent again (tgkill) once it runs on its own. */
#define TNS_MAX_HELD_SIGNALS 8
struct tns_held_signals {
        unsigned n;
        int sig[TNS_MAX_HELD_SIGNALS];
};

/* Runs syscall nr(args) in the tracee, which must be in a ptrace stop, by
 * pointing its registers at `gadget` (the address of a `syscall`
 * instruction in its memory) and single-stepping. `base` are the registers
 * to start from (the caller restores the real ones afterwards). Returns 0
 * and the syscall's raw return value in *ret, or -errno. */
int tns_ptrace_syscall(pid_t pid, const struct user_regs_struct *base, uint64_t gadget, long nr, const uint64_t args[6],
                       struct tns_held_signals *held, int64_t *ret);

/* The same on the tracee's own `syscall` instruction, the one it stopped
 * after (base->rip - 2, which the caller checked with
 * tns_ptrace_after_syscall()), by PTRACE_SYSCALL: its entry stop, then its
 * exit stop. A tracer that dies meanwhile leaves nothing armed: the
 * tracee runs the call and goes on where it stopped, the call's result in
 * rax. A single step left armed kills it with SIGTRAP (the kernel's
 * exit_ptrace() detaches without clearing the trap flag). */
int tns_ptrace_syscall_own(pid_t pid, const struct user_regs_struct *base, long nr, const uint64_t args[6],
                           struct tns_held_signals *held, int64_t *ret);

/* Whether the tracee's memory at addr holds a `syscall` instruction (0f 05). */
bool tns_ptrace_syscall_insn_at(pid_t pid, uint64_t addr);

/* Whether a stopped 64-bit tracee stopped right after a syscall that
 * is not to be restarted, with a `syscall` instruction (0f 05) just
 * before its rip. The tracee must have been seized with
 * PTRACE_O_TRACESYSGOOD for tns_ptrace_syscall_own(). */
bool tns_ptrace_after_syscall(pid_t pid, const struct user_regs_struct *regs);

/* Detaches, then re-sends the held signals to the thread. */
int tns_ptrace_detach(pid_t pid, pid_t tgid, const struct tns_held_signals *held);
