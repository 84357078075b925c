/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vDSO injection at exec, the supervisor's side (lib/kernel/inject.h says how). */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "close-tail.h"
#include "exec-missing.h"
#include "inject.h"
#include "proc-util.h"
#include "supervisor-internal.h"
#include "tail-send.h"
#include "util.h"

#define AUXV_MAX_WORDS (1U << 18) /* 2 MiB of pointers: beyond ARG_MAX */

/* The hold's entry in the in-flight page, for a successor. */
static void hold_remember(struct exec_trace *t) {
        struct tns_inflight *p = t->s->inflight;

        if (t->hold_slot >= 0)
                return; /* held again (a restarted exec): the same entry */
        for (int i = 0; p && i < TNS_INFLIGHT_EXECS; i++)
                if (p->execs[i].tid == 0) {
                        p->execs[i] = (struct tns_inflight_exec){t->tid, t->tgid};
                        t->hold_slot = i;
                        return;
                }
        if (p)
                p->execs_overflow = 1;
}

static void hold_forget(struct exec_trace *t) {
        if (t->s->inflight && t->hold_slot >= 0)
                t->s->inflight->execs[t->hold_slot] = (struct tns_inflight_exec){};
        t->hold_slot = -1;
}

static void trace_free(struct exec_trace *t) {
        struct tns_supervisor *s = t->s;

        for (struct exec_trace **p = &s->execs; *p; p = &(*p)->next)
                if (*p == t) {
                        *p = t->next;
                        break;
                }
        s->n_execs--;
        if (s->exec_to_hold == t)
                s->exec_to_hold = NULL;
        hold_forget(t);
        /* Its mappings are the new program's (or, for a remap, have the
         * new page) from now: what was read while it was traced is not. */
        supervisor_image_forget(s, t->tid, t->tgid);
        tns_ns_unref(t->ns);
        free(t);
}

static int read_sysinfo(pid_t pid, uint64_t sp, size_t *ret_off, uint64_t *ret_val) {
        _cleanup_free_ uint64_t *buf = NULL;
        size_t n = 512; /* argc, argv and envp pointers and auxv of most programs */
        int r;

        for (;;) {
                struct iovec local, remote;
                ssize_t got;
                uint64_t *nb = realloc(buf, n * sizeof(uint64_t));

                if (!nb)
                        return -ENOMEM;
                buf = nb;
                local = (struct iovec){buf, n * sizeof(uint64_t)};
                remote = (struct iovec){(void *) (uintptr_t) sp, n * sizeof(uint64_t)};
                got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
                if (got <= 0)
                        return got < 0 ? negative_errno() : -EFAULT;
                r = tns_auxv_find_sysinfo(buf, (size_t) got / sizeof(uint64_t), ret_off, ret_val);
                if (r != -EAGAIN || (size_t) got < n * sizeof(uint64_t) || n >= AUXV_MAX_WORDS)
                        return r == -EAGAIN ? -EBADMSG : r;
                n *= 2;
        }
}

static int write_word(pid_t pid, uint64_t addr, uint64_t value) {
        struct iovec local = {&value, sizeof(value)}, remote = {(void *) (uintptr_t) addr, sizeof(value)};

        return process_vm_writev(pid, &local, 1, &remote, 1, 0) == sizeof(value) ? 0 : -EFAULT;
}

/* Writes through /proc/PID/mem: it reaches read-only private mappings
 * (FOLL_FORCE makes a private copy-on-write page), process_vm_writev
 * would not. */
static int mem_write(int memfd, uint64_t addr, const void *p, size_t n) {
        return pwrite(memfd, p, n, (off_t) addr) == (ssize_t) n ? 0 : -EIO;
}

static int mem_read(int memfd, uint64_t addr, void *p, size_t n) {
        return pread(memfd, p, n, (off_t) addr) == (ssize_t) n ? 0 : -EIO;
}

/* A running program's kernel vDSO, from the kernel's copy of its auxv
 * (the copy on its stack points at our image). */
static int kernel_vdso_of(pid_t pid, uint64_t *ret) {
        return tns_proc_auxv(pid, AT_SYSINFO_EHDR, ret);
}

/* Resumes the tracee until it reaches the blob's int3. The interrupt we
 * asked for at the execve (and any group stop) is reported on the way:
 * resume again; signals are held for later. */
static int run_to_trap(struct exec_trace *t) {
        for (unsigned i = 0; i < 16; i++) {
                int sig, r;

                if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
                        return negative_errno();
                r = tns_ptrace_wait(t->tid, &sig);
                if (r < 0)
                        return r;
                if (r == TNS_STOP_EXITED)
                        return -ESRCH;
                if (r == TNS_STOP_STEP)
                        return 0;
                if (r == TNS_STOP_SIGNAL && t->held.n < TNS_MAX_HELD_SIGNALS)
                        t->held.sig[t->held.n++] = sig;
        }
        return -EBUSY;
}

/* Runs n bytes of code at `at` in the stopped tracee, from registers
 * *regs, up to the int3 it ends with; puts the bytes back and returns the
 * registers then in *regs. */
static int run_code(struct exec_trace *t, int mem, uint64_t at, const void *code, size_t n,
                    struct user_regs_struct *regs) {
        unsigned char orig[128];
        int r, r2;

        if (n > sizeof(orig))
                return -E2BIG;
        r = mem_read(mem, at, orig, n);
        if (r < 0)
                return r;
        r = mem_write(mem, at, code, n);
        if (r < 0)
                return r;
        regs->rip = at;
        r = ptrace(PTRACE_SETREGS, t->tid, 0, regs) < 0 ? negative_errno() : run_to_trap(t);
        if (r >= 0 && ptrace(PTRACE_GETREGS, t->tid, 0, regs) < 0)
                r = negative_errno();
        r2 = mem_write(mem, at, orig, n);
        return r < 0 ? r : r2;
}

/* Runs the blob over the kernel vDSO's first bytes and returns the base
 * of the memfd's mapping. */
static int run_blob(struct exec_trace *t, int mem, const struct user_regs_struct *saved, uint64_t at,
                    uint64_t *ret_base) {
        /* Two labels around one block of code (inject-blob.c). */
        // cppcheck-suppress comparePointers
        size_t n = (size_t) (tns_inject_blob_end - tns_inject_blob);
        struct user_regs_struct regs = *saved;
        int r;

        regs.r12 = t->ns->memfd_size;
        regs.r13 = (uint64_t) t->target_fd;
        r = run_code(t, mem, at, tns_inject_blob, n, &regs);
        if (r < 0)
                return r;
        if ((int64_t) regs.r14 < 0 && (int64_t) regs.r14 > -4096)
                return (int) regs.r14;
        if (regs.r15 != regs.r14)
                return (int64_t) regs.r15 < 0 ? (int) regs.r15 : -EFAULT;
        *ret_base = regs.r14;
        return 0;
}

/* A 32-bit program gets no vDSO of ours (its clock calls are i386 calls,
 * which the filter answers with ENOSYS): only close the fd it was given,
 * with `mov $6, %eax; int $0x80; int3` (i386 close) at its entry point. */
static int close_fd_32(struct exec_trace *t, const struct user_regs_struct *saved) {
        static const unsigned char code[] = {0xb8, 0x06, 0x00, 0x00, 0x00, 0xcd, 0x80, 0xcc};
        _cleanup_close_ int mem = -EBADF;
        struct user_regs_struct regs = *saved;
        int r;

        mem = tns_proc_open_mem(t->tid);
        if (mem < 0)
                return mem;
        regs.rbx = (uint64_t) t->target_fd;
        r = run_code(t, mem, saved->rip, code, sizeof(code), &regs);
        return r < 0 ? r : -EPROTOTYPE;
}

/* The tail's way (inject.h): the tail written into the padding of the
 * kernel vDSO, the registers pointed at it, and the program let go at
 * once; it maps the memfd itself and asks for the rest with its marker
 * call (supervisor_exec_marker()). One ptrace stop, and nothing left for
 * a supervisor that dies now to leave half done. */
static int start_tail(struct exec_trace *t, int mem, const struct user_regs_struct *saved, uint64_t kernel_base,
                      uint64_t auxv_slot) {
        // cppcheck-suppress comparePointers
        size_t n = (size_t) (tns_inject_tail_end - tns_inject_tail);
        struct user_regs_struct regs = *saved;
        int r;

        r = mem_write(mem, kernel_base + t->s->vdso->tail, tns_inject_tail, n);
        if (r < 0)
                return r;
        regs.rip = kernel_base + t->s->vdso->tail;
        regs.r12 = t->ns->memfd_size;
        regs.r13 = (uint64_t) t->target_fd;
        regs.r14 = saved->rip;
        regs.r15 = auxv_slot;
        regs.rbx = kernel_base;
        regs.rax = 0;
        regs.orig_rax = (uint64_t) -1;
        return ptrace(PTRACE_SETREGS, t->tid, 0, &regs) < 0 ? negative_errno() : 0;
}

int64_t supervisor_exec_marker(struct listener *l, const struct seccomp_notif *req) {
        const struct tns_vdso_host *h = supervisor_vdso(l->s);
        const uint64_t base = req->data.args[2], second = req->data.args[3], slot = req->data.args[4],
                       kernel_base = req->data.args[5];
        _cleanup_close_ int mem = -EBADF;
        struct tns_vdso_params params;
        struct tns_offsets_page page;
        uint64_t zero = 0, kernel = 0;
        int r = 0;

        if (!h)
                return -EFAULT; /* as sysinfo(NULL) */
        mem = tns_proc_open_mem(req->pid);
        if (mem < 0)
                return mem == -ENOENT ? -ESRCH : -EFAULT;
        /* Only what the program's own kernel vDSO and our memfd are: a
         * program can make this call itself, and then gets nothing it
         * could not write into its own memory anyway. */
        if (kernel_vdso_of(req->pid, &kernel) < 0 || kernel != kernel_base || base != second || (int64_t) base < 0 ||
            mem_read(mem, base + TNS_MEMFD_OFFSETS_PAGE, &page, sizeof(page)) < 0 || page.magic != TNS_PAGE_MAGIC)
                r = -EBADMSG;
        /* A program killed during its marker call (its mm going) fails the
         * reads above too: gone is no failure to report. */
        if (supervisor_id_valid(l->fd, req->id) < 0)
                return -ESRCH;
        if (r >= 0) {
                tns_vdso_params_fill(h, kernel_base, &params);
                r = mem_write(mem, base, &params, sizeof(params));
        }
        if (r >= 0) {
                /* Through mem, opened before the validity check, never by
                 * pid: mem is the caller's mm for good, while its pid may
                 * by now be a new program that a sibling thread exec'd (a
                 * setuid one: the write would land in it). */
                const uint64_t image = base + TNS_MEMFD_IMAGE;

                r = mem_write(mem, slot, &image, sizeof(image));
        }
        /* Killed between the check above and the writes (its mm gone:
         * -EIO): a program that died on its own is no failure to show. */
        if (r < 0 && r != -EBADMSG && supervisor_id_valid(l->fd, req->id) < 0) {
                tns_log_full(&l->s->log, LOG_DEBUG, r, &(struct tns_log_ctx){.pid = req->pid, .syscall = "execve"},
                             "The program exited during its vDSO injection: %m");
                return -ESRCH;
        }
        if (r < 0) {
                /* No image: no vDSO at all, the syscall path. */
                (void) mem_write(mem, slot, &zero, sizeof(zero));
                l->s->stats.vdso_failed++;
                /* -EBADMSG: arguments that are not our tail's, i.e. a
                 * program making the call itself; at debug level, so that
                 * it cannot flood the log. */
                tns_log_full(&l->s->log, r == -EBADMSG ? LOG_DEBUG : LOG_WARNING, r,
                             &(struct tns_log_ctx){.pid = req->pid, .syscall = "execve"},
                             "Failed to finish the vDSO injection, the program uses the syscall path: %m");
        } else {
                l->s->stats.vdso_injected++;
                supervisor_first_call_injected(l->s, req->pid);
        }
        return 0;
}

/* At the exec stop: the new program has not run an instruction yet. */
static int inject_vdso(struct exec_trace *t) {
        const struct tns_vdso_host *h = supervisor_vdso(t->s);
        _cleanup_close_ int mem = -EBADF;
        struct user_regs_struct saved;
        struct tns_vdso_params params;
        uint64_t kernel_base, base = 0, zero = 0;
        size_t off;
        int r;

        if (ptrace(PTRACE_GETREGS, t->tid, 0, &saved) < 0)
                return negative_errno();
        if (saved.cs != 0x33) {
                r = close_fd_32(t, &saved);
                saved.rax = 0;
                saved.orig_rax = (uint64_t) -1;
                if (ptrace(PTRACE_SETREGS, t->tid, 0, &saved) < 0)
                        return negative_errno();
                return r;
        }
        r = read_sysinfo(t->tid, saved.rsp, &off, &kernel_base);
        if (r < 0)
                return r;
        if (t->target_fd == INT_MAX)
                /* No image for this namespace: no vDSO at all, every read a
                 * syscall. */
                return write_word(t->tid, saved.rsp + off, 0) < 0 ? -EFAULT : -ENOENT;
        mem = tns_proc_open_mem(t->tid);
        if (mem < 0)
                return mem;
        if (h->tail) {
                r = start_tail(t, mem, &saved, kernel_base, saved.rsp + off);
                if (r < 0)
                        /* No image: no vDSO at all, never the kernel's. */
                        (void) mem_write(mem, saved.rsp + off, &zero, sizeof(zero));
                return r;
        }
        r = run_blob(t, mem, &saved, kernel_base, &base);
        if (r >= 0) {
                tns_vdso_params_fill(h, kernel_base, &params);
                r = mem_write(mem, base, &params, sizeof(params));
        }
        if (r >= 0)
                r = write_word(t->tid, saved.rsp + off, base + TNS_MEMFD_IMAGE);
        if (r < 0)
                /* Without our image, no vDSO at all: libc and Go then use
                 * the syscalls, which are emulated. Better slow than wrong. */
                (void) mem_write(mem, saved.rsp + off, &zero, sizeof(zero));
        /* As the exec left them: execve returned 0, and no syscall is in
         * progress for the restart logic to look at. */
        saved.rax = 0;
        saved.orig_rax = (uint64_t) -1;
        if (ptrace(PTRACE_SETREGS, t->tid, 0, &saved) < 0 && r >= 0)
                r = negative_errno();
        return r;
}

/* Readies a stopped 64-bit tracee to run syscalls by single step: its
 * registers (to restore afterwards) and the `syscall` instruction to
 * borrow in its kernel vDSO. */
static int prepare_syscalls(struct exec_trace *t, struct user_regs_struct *ret_regs, uint64_t *ret_gadget) {
        uint64_t kernel_base;
        int r;

        r = kernel_vdso_of(t->tid, &kernel_base);
        if (r < 0)
                return r;
        if (ptrace(PTRACE_GETREGS, t->tid, 0, ret_regs) < 0)
                return negative_errno();
        if (ret_regs->cs != 0x33)
                return -EPROTOTYPE;
        *ret_gadget = kernel_base + t->s->vdso->gadget;
        return 0;
}

static int restore_regs(struct exec_trace *t, const struct user_regs_struct *regs, int r) {
        if (ptrace(PTRACE_SETREGS, t->tid, 0, regs) < 0 && r >= 0)
                return negative_errno();
        return r;
}

/* One syscall in the stopped tracee: on its own `syscall` instruction
 * when it stopped right after one (an execve that failed, an unshare),
 * else on the kernel vDSO's by single step. On its own, a death of ours
 * in the middle lets it run the call and go on with the call's result
 * (0 for the close that ends both uses), where a single step left armed
 * kills it with SIGTRAP. */
static int run_syscall(struct exec_trace *t, const struct user_regs_struct *regs, uint64_t gadget, long nr,
                       const uint64_t args[6], int64_t *ret) {
        if (tns_ptrace_after_syscall(t->tid, regs))
                return tns_ptrace_syscall_own(t->tid, regs, nr, args, &t->held, ret);
        return tns_ptrace_syscall(t->tid, regs, gadget, nr, args, &t->held, ret);
}

/* The exec failed (no exec event): close the fd we gave it (a rare path:
 * no blob for it). The program is the one that called execve, its kernel
 * vDSO where it was. */
static int undo_addfd(struct exec_trace *t) {
        const uint64_t args[6] = {(uint64_t) t->target_fd};
        struct user_regs_struct regs;
        uint64_t gadget;
        int64_t x;
        int r;

        r = prepare_syscalls(t, &regs, &gadget);
        if (r < 0)
                return r;
        /* The program closes it itself once let go, and its call returns
         * its result: nothing for a death of ours to leave half done. */
        if (tns_close_tail_send(t->s->vdso, t->tid, &regs, t->target_fd) >= 0)
                return 0;
        r = run_syscall(t, &regs, gadget, SYS_close, args, &x);
        return restore_regs(t, &regs, r);
}

static void log_trace(struct exec_trace *t, int level, int error, const char *what) {
        tns_log_full(&t->s->log, level, error, &(struct tns_log_ctx){.pid = t->tid, .syscall = "execve"}, "%s: %m",
                     what);
}

enum outcome { INJECTED, FAILED, NO_EXEC };

static bool traced_by_us(pid_t tgid);

/* The hold. Between its execve and the end of our work at its exec stop,
 * the program is held by our ptrace seize only, and a timensd that dies
 * then (kill -9, a crash) lets it go: the kernel detaches it, and it would
 * run with the kernel's vDSO. So, from our reply to its execve, a SIGSTOP
 * of ours is pending in it: undelivered while we trace it (a traced task
 * reports its signals to us first), it stops the program before its first
 * instruction if we die, and the next instance finds it stopped at its
 * entry and finishes it (supervisor_exec_adopt()). Only with a successor
 * to come (timensd keeps an in-flight page): the embedded supervisor of
 * timensctl has none. Sent after the reply, not before: a runtime's filter
 * (agent mode) may wait for the reply interruptibly, and a signal would
 * break that wait. */
void supervisor_exec_replied(struct tns_supervisor *s) {
        struct exec_trace *t = TAKE_PTR(s->exec_to_hold);

        if (!t)
                return;
        hold_remember(t); /* first: a death after the signal finds it */
        if (syscall(SYS_tgkill, t->tgid, t->tid, SIGSTOP) >= 0)
                t->stop_sent = true;
        else
                hold_forget(t);
}

/* Our SIGSTOP is never the program's: out of the signals to send again. */
static void drop_held_stop(struct exec_trace *t) {
        unsigned j = 0;

        for (unsigned i = 0; i < t->held.n; i++)
                if (t->held.sig[i] != SIGSTOP)
                        t->held.sig[j++] = t->held.sig[i];
        t->held.n = j;
}

/* Takes our pending SIGSTOP back before the tracee is let go. A SIGCONT
 * removes every pending stop signal (the kernel's prepare_signal()); the
 * program never sees it: nothing is stopped, so its parent is told
 * nothing, and a SIGCONT that finds no handler is discarded (a new
 * program's handlers are the defaults). Only a program exec'd with SIGCONT
 * blocked would find it pending later: for it, the SIGSTOP is taken at its
 * delivery stop instead (one more stop, a rare path). */
static void unhold(struct exec_trace *t) {
        uint64_t mask = 0;

        if (!t->stop_sent)
                return; /* a SIGSTOP held is then the program's own */
        if (ptrace(PTRACE_GETSIGMASK, t->tid, sizeof(mask), &mask) < 0 || !(mask & (UINT64_C(1) << (SIGCONT - 1)))) {
                t->stop_sent = false;
                (void) syscall(SYS_tgkill, t->tgid, t->tid, SIGCONT);
                /* A death from here lets it run: nothing stops it. */
                hold_forget(t);
                return drop_held_stop(t);
        }
        /* SIGCONT blocked: the SIGSTOP is taken at its delivery stop,
         * which SIGCHLD reports (on_stop(): stop_sent stays until then).
         * Never waited for here: on its way there the program may make a
         * call that only this thread answers (helper-44: an agent-mode
         * container's init in its execve, and with the loop every
         * container, hung in this wait). */
        if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0) {
                t->stop_sent = false;
                hold_forget(t);
                drop_held_stop(t);
        }
}

/* Lets the tracee go. PTRACE_DETACH needs a ptrace stop: a tracee that is
 * not in one was killed (SIGKILL wakes a traced task, ptrace(2)), and a
 * traced process that dies stays a zombie its parent cannot reap until its
 * tracer has (the kernel's wait_task_zombie()). So it stays on the list,
 * released, until supervisor_exec_on_sigchld() reaps its exit, or detaches it at the stop
 * it reports instead: never a task left traced with nobody waiting. */
static void release(struct exec_trace *t) {
        int status, sig;
        pid_t r;

        unhold(t);
        if (t->stop_sent) {
                t->released = true; /* running to our SIGSTOP: on_stop() detaches it there */
                return;
        }
        if (tns_ptrace_detach(t->tid, t->tgid, &t->held) >= 0)
                return trace_free(t);
        t->released = true;
        r = waitpid(t->tid, &status, __WALL | WNOHANG);
        if (r > 0 && tns_stop_decode(status, &sig) != TNS_STOP_EXITED) {
                if (sig && t->held.n < TNS_MAX_HELD_SIGNALS)
                        t->held.sig[t->held.n++] = sig;
                if (tns_ptrace_detach(t->tid, t->tgid, &t->held) >= 0)
                        return trace_free(t);
        }
        /* Reaped now, or not ours any more (a thread that exec'd took the
         * leader's id: supervisor_exec_on_sigchld() follows that while we trace it). */
        if (r > 0 || (r < 0 && !traced_by_us(t->tgid)))
                trace_free(t);
}

static void finish(struct exec_trace *t, enum outcome o) {
        if (o == INJECTED)
                t->s->stats.vdso_injected++;
        else if (o == FAILED)
                t->s->stats.vdso_failed++;
        release(t);
}

/* Whether a failure was the tracee's death: a task killed in a ptrace stop
 * leaves it at once, and every ptrace request then fails with ESRCH. */
static bool tracee_gone(struct exec_trace *t, int r) {
        struct user_regs_struct regs;

        return r == -ESRCH || (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0 && errno == ESRCH);
}

static void on_exec_stop(struct exec_trace *t) {
        int r = inject_vdso(t);
        bool gone = r < 0 && tracee_gone(t, r);

        /* A program killed right after its exec (a shell's Ctrl-C, a test
         * harness's SIGKILL) is its own business: no warning on the user's
         * terminal, which is where timensctl's embedded supervisor logs. */
        if (gone)
                log_trace(t, LOG_DEBUG, r, "The program died during the vDSO injection");
        else if (r < 0 && r != -EPROTOTYPE && r != -ENOENT)
                log_trace(t, LOG_WARNING, r, "Failed to inject the vDSO, the program uses the syscall path");
        /* The tail is counted at its marker call. */
        finish(t, gone ? NO_EXEC : r < 0 ? FAILED : t->s->vdso->tail ? NO_EXEC : INJECTED);
}

/* The caller is back from unshare, at its interrupt (or a signal) stop:
 * map the new namespace's offsets page over the old one, close the fd. */
static int remap(struct exec_trace *t) {
        const uint64_t map[6] = {t->remap_addr,          TNS_PAGE_SIZE,           PROT_READ,
                                 MAP_SHARED | MAP_FIXED, (uint64_t) t->target_fd, TNS_MEMFD_OFFSETS_PAGE};
        const uint64_t cls[6] = {(uint64_t) t->target_fd};
        struct user_regs_struct regs;
        uint64_t gadget;
        int64_t x;
        int r;

        r = prepare_syscalls(t, &regs, &gadget);
        if (r < 0)
                return r;
        r = run_syscall(t, &regs, gadget, SYS_mmap, map, &x);
        if (r >= 0 && (uint64_t) x != t->remap_addr)
                r = x < 0 && x > -4096 ? (int) x : -EFAULT;
        (void) run_syscall(t, &regs, gadget, SYS_close, cls, &x);
        return restore_regs(t, &regs, r);
}

/* At a stop before the exec event: whether the execve is to be run again
 * (interrupted by a signal with a restart code), not failed. */
static bool exec_restarts(struct exec_trace *t) {
        struct user_regs_struct regs;
        int64_t rax;

        if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
                return false;
        rax = (int64_t) regs.rax;
        return (regs.orig_rax == SYS_execve || regs.orig_rax == SYS_execveat) && rax <= -512 && rax >= -516;
}

static void on_stop(struct exec_trace *t, int status) {
        enum tns_stop stop;
        int sig, r;

        stop = tns_stop_decode(status, &sig);
        if (stop == TNS_STOP_SIGNAL && sig == SIGSTOP && t->stop_sent) {
                /* Our hold, delivered before the exec (it broke an
                 * interruptible wait, the exec restarts or failed): taken
                 * here, held again after the next reply. Its entry in the
                 * in-flight page stays until the trace ends: a death of
                 * ours in this stop lets the SIGSTOP stop the program, and
                 * the successor must know it (adopt_failed_exec()). */
                t->stop_sent = false;
                sig = 0;
        }
        if (stop == TNS_STOP_SIGNAL && sig && t->held.n < TNS_MAX_HELD_SIGNALS)
                t->held.sig[t->held.n++] = sig;
        if (t->released)
                return stop == TNS_STOP_EXITED ? trace_free(t) : release(t);
        if (stop != TNS_STOP_EXITED && t->kind == TRACE_REMAP) {
                /* The kernel ran the unshare or setns: follow it. */
                if (!supervisor_nsop_done(t->s, t->nsop, t->l_serial, t->tid, t->tgid, t->ns))
                        r = t->target_fd == INT_MAX ? 0 : undo_addfd(t);
                else
                        r = t->target_fd == INT_MAX ? 0 : remap(t);
                if (r < 0)
                        log_trace(t, tracee_gone(t, r) ? LOG_DEBUG : LOG_WARNING, r,
                                  "Failed to move the vDSO to the new namespace");
                return finish(t, NO_EXEC);
        }
        switch (stop) {
        case TNS_STOP_EXITED:
                return trace_free(t);
        case TNS_STOP_EXEC:
                return on_exec_stop(t);
        default:
                if (exec_restarts(t)) {
                        /* Not failed: not begun. A filter without
                         * WAIT_KILLABLE_RECV (a runtime's, in agent mode)
                         * lets a signal, or our own interrupt, break the
                         * wait for the reply: the execve is restarted and
                         * comes to us again (trace_begin() then keeps this
                         * trace and the fd it has). The signal is
                         * delivered now, as it would have been. */
                        if (stop == TNS_STOP_SIGNAL && sig)
                                t->held.n--;
                        if (ptrace(PTRACE_CONT, t->tid, 0, stop == TNS_STOP_SIGNAL ? sig : 0) < 0)
                                return trace_free(t);
                        return;
                }
                /* The exec failed: an interrupt (or signal) stop with no
                 * exec event before it. */
                (void) undo_addfd(t);
                return finish(t, NO_EXEC);
        }
}

/* Whether we still trace tgid: a trace is given up only when it is not. */
static bool traced_by_us(pid_t tgid) {
        char path[64], line[128];
        _cleanup_(fclosep) FILE *f = NULL;
        int tracer = -1;

        snprintf(path, sizeof(path), "/proc/%d/status", tgid);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "TracerPid: %d", &tracer) == 1)
                        break;
        return tracer == getpid();
}

static int on_rescan(sd_event_source *src, uint64_t usec, void *userdata) {
        struct tns_supervisor *s = userdata;

        s->exec_rescan = sd_event_source_disable_unref(s->exec_rescan);
        supervisor_exec_on_sigchld(s);
        return 0;
}

/* Signals coalesce: look at every exec in flight. */
void supervisor_exec_on_sigchld(struct tns_supervisor *s) {
        bool unsure = false;

        for (struct exec_trace *t = s->execs, *next; t; t = next) {
                int status;
                pid_t r;

                next = t->next;
                r = waitpid(t->tid, &status, __WALL | WNOHANG);
                if (r < 0 && errno == ECHILD && t->tid != t->tgid) {
                        /* A non-leader thread exec'd: it took the leader's id. */
                        t->tid = t->tgid;
                        r = waitpid(t->tid, &status, __WALL | WNOHANG);
                }
                if (r < 0 && errno == ECHILD && traced_by_us(t->tgid)) {
                        /* Mid-exchange of ids (de_thread): neither answers
                         * for a moment, and the stop's SIGCHLD may have come
                         * already. Look again shortly rather than lose it:
                         * a lost trace leaves the program stopped for good. */
                        unsure = true;
                        continue;
                }
                if (r < 0)
                        trace_free(t);
                else if (r > 0)
                        on_stop(t, status);
        }
        if (unsure && !s->exec_rescan)
                /* Accuracy 0 would be sd-event's default, 250 ms. */
                (void) sd_event_add_time_relative(s->event, &s->exec_rescan, CLOCK_MONOTONIC, 2000, 200, on_rescan, s);
}

static int add_memfd(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns) {
        struct seccomp_notif_addfd addfd = {.id = req->id};
        int r;

        r = tns_ns_ro_fd(ns);
        if (r < 0)
                return r;
        addfd.srcfd = (uint32_t) r;
        /* No O_CLOEXEC for the target: it must survive the exec. */
        r = ioctl(l->fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
        return r < 0 ? negative_errno() : r;
}

/* The caller's thread group. pidfd_open() accepts only a group leader: for
 * the usual single-threaded caller that answers in a microsecond, where
 * reading /proc/PID/status costs twenty. */
static int thread_group_of(pid_t tid, pid_t *ret) {
        struct tns_proc_status st;
        int fd, r;

        fd = (int) syscall(SYS_pidfd_open, tid, 0);
        if (fd >= 0) {
                close(fd);
                *ret = tid;
                return 0;
        }
        r = tns_proc_status(tid, &st);
        if (r < 0)
                return r;
        *ret = st.tgid;
        return 0;
}

/* What the seized caller of req is handed: ns's memfd (ADDFD), or nothing
 * (INT_MAX: at its exec it gets no vDSO at all, and reads the emulated
 * syscalls). Returns -ESRCH if the notification is gone (the caller was
 * killed, or a signal broke a wait that was not WAIT_KILLABLE_RECV). */
static int hand_memfd(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns, enum trace_kind kind,
                      int *ret_fd) {
        int fd;

        /* The pid is the caller's only while its notification is valid:
         * checked after the seize, the task seized is known to be it. */
        if (supervisor_id_valid(l->fd, req->id) < 0)
                return -ESRCH;
        /* A namespace without our image (TNS_NS_NO_VDSO) hands no memfd. */
        fd = tns_ns_has_image(ns) ? add_memfd(l, req, ns) : INT_MAX;
        if (fd == -ENOENT)
                return -ESRCH;
        if (fd < 0 && kind == TRACE_REMAP)
                return fd; /* do_unshare() logs it */
        if (fd < 0) {
                /* E.g. EMFILE: the program's fd table is full. Its exec
                 * goes on without our image, never held up by us: the
                 * program's own state, no error of ours to show on the
                 * user's terminal (where timensctl's supervisor logs). */
                tns_log_full(&l->s->log, fd == -EMFILE ? LOG_DEBUG : LOG_ERR, fd,
                             &(struct tns_log_ctx){.pid = req->pid, .syscall = "execve"},
                             "Failed to hand the program its vDSO, it uses the syscall path: %m");
                fd = INT_MAX; /* counted as failed at its exec stop */
        }
        *ret_fd = fd;
        return 0;
}

/* Whether the exec of req is certain to fail for want of its file: a
 * PATH lookup (execvp(), a shell, Python's subprocess) tries the
 * directories in turn, and all but the last fail with ENOENT. Such an
 * exec is let through at once: no seize, no hold, no fd handed and taken
 * back again (that took ~60 µs and two syscalls run in the program, each
 * attempt, and the close was a window for a kill -9 of ours). A file that
 * appears meanwhile, or a path another thread rewrites, gets a program
 * started without our image, which its first arch_prctl puts on the
 * syscall path (supervisor-first-call.c): shifted, never the host's
 * clock. */
static bool exec_file_missing(struct listener *l, const struct seccomp_notif *req) {
        const bool at = req->data.nr == SYS_execveat;
        struct tns_exec_lookup plan;
        char path[PATH_MAX];
        uint64_t args[6];

        /* No ring (no io_uring here), more threads: nothing is told. */
        if (!l->s->anyone || !tns_exec_caller_alone((pid_t) req->pid))
                return false;
        for (unsigned i = 0; i < 6; i++)
                args[i] = req->data.args[i];
        if (tns_proc_read_string((pid_t) req->pid, tns_exec_path_arg(at, args), path, sizeof(path)) < 0)
                return false; /* the kernel's own error, the usual way */
        tns_exec_lookup_plan(at, args, path, &plan);
        /* What /proc said was of the caller only if its notification is
         * still valid after the lookup. */
        if (tns_exec_file_missing(l->s->anyone, (pid_t) req->pid, &plan) <= 0 ||
            supervisor_id_valid(l->fd, req->id) < 0)
                return false;
        l->s->stats.execs_missing++;
        return true;
}

/* Seizes the caller of req, gives it a read-only fd of ns's memfd and
 * asks for a stop at its return from the syscall; the trace then waits.
 *
 * Until we reply, the caller sleeps in the seccomp wait, not in a ptrace
 * stop: it cannot be detached (PTRACE_DETACH needs a stop, and with
 * WAIT_KILLABLE_RECV our interrupt is serviced only after the reply). So
 * once it is seized, every path puts a trace on the list: one that
 * injects, or one released (nothing handed, or nothing to do), which is
 * detached at its next stop (the interrupt, or its exec event) or reaped
 * if it died. A seized task nobody waits for would stop at its exec event
 * for good, in state t. */
static int trace_begin(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns, enum trace_kind kind,
                       uint64_t remap_addr, enum tns_nsop nsop) {
        struct tns_supervisor *s = l->s;
        _cleanup_free_ struct exec_trace *t = NULL;
        struct tns_proc_status st;
        int r;

        r = thread_group_of(req->pid, &st.tgid);
        /* An exec's new program has the group's pid: nothing known of the
         * old one holds for it (supervisor-first-call.c). */
        if (kind == TRACE_EXEC)
                supervisor_first_call_exec(s, (pid_t) req->pid, r < 0 ? (pid_t) req->pid : st.tgid);
        /* Its mappings change (a new program, or its page replaced). */
        supervisor_image_forget(s, (pid_t) req->pid, r < 0 ? (pid_t) req->pid : st.tgid);
        if (r < 0)
                return r;
        if (kind == TRACE_EXEC)
                for (struct exec_trace *old = s->execs; old; old = old->next)
                        if (old->tid == (pid_t) req->pid && old->kind == TRACE_EXEC && !old->released) {
                                /* Its execve again, after a restart: the
                                 * trace and the fd it was given stand. */
                                if (ptrace(PTRACE_INTERRUPT, req->pid, 0, 0) < 0)
                                        return negative_errno();
                                if (s->inflight && !old->stop_sent)
                                        s->exec_to_hold = old;
                                return 0;
                        }
        if (kind == TRACE_EXEC && exec_file_missing(l, req))
                return 0;
        if (s->n_execs >= TNS_MAX_EXECS_IN_FLIGHT || supervisor_ensure_sigchld(s) < 0)
                return -EBUSY;
        /* Another thread of its program is in its exec, which kills this
         * one (de_thread) unless it fails first: not seized (see
         * supervisor_exec_in_flight()). */
        if (supervisor_exec_in_flight(s, st.tgid))
                return -EBUSY;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        /* Not to seize a stranger that got the pid of a caller gone. */
        if (supervisor_id_valid(l->fd, req->id) < 0)
                return -ESRCH;
        if (ptrace(PTRACE_SEIZE, req->pid, 0, PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD) < 0)
                return negative_errno(); /* e.g. a debugger holds it */
        *t = (struct exec_trace){.s = s,
                                 .kind = kind,
                                 .nsop = nsop,
                                 .l_serial = l->serial,
                                 .remap_addr = remap_addr,
                                 .tid = req->pid,
                                 .tgid = st.tgid,
                                 .target_fd = INT_MAX,
                                 .hold_slot = -1};
        if (kind == TRACE_EXEC || remap_addr != 0)
                r = hand_memfd(l, req, ns, kind, &t->target_fd);
        else
                r = supervisor_id_valid(l->fd, req->id) < 0 ? -ESRCH : 0;
        if (r < 0 || ptrace(PTRACE_INTERRUPT, req->pid, 0, 0) < 0) {
                r = r < 0 ? r : negative_errno();
                t->released = true;
                t->target_fd = INT_MAX;
        }
        t->ns = tns_ns_ref(ns);
        t->next = s->execs;
        if (kind == TRACE_EXEC && !t->released && s->inflight)
                s->exec_to_hold = t; /* supervisor_exec_replied() */
        s->execs = TAKE_PTR(t);
        s->n_execs++;
        return r;
}

int supervisor_exec_begin(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns) {
        if (!l->s->vdso)
                return -EOPNOTSUPP; /* no vDSO on this host: nothing to replace or remove */
        return trace_begin(l, req, ns, TRACE_EXEC, 0, TNS_NSOP_UNSHARE);
}

static bool shares_memory_with_parent(pid_t tid) {
        struct tns_proc_status st;

        return tns_proc_status(tid, &st) >= 0 && tns_proc_shares_vm(st.tgid, st.ppid);
}

int supervisor_nsop_begin(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns, enum tns_nsop op) {
        uint64_t addr = 0;
        int r;

        /* The offsets page is the memfd's second page wherever it is
         * mapped; a program without our vDSO has no page to move, but is
         * still followed (its member entry). */
        if (l->s->vdso && !supervisor_ns_by_mapping_fresh(l->s, req->pid, &addr))
                addr = 0;
        /* A vfork child (or any CLONE_VM child) shares its parent's
         * memory: a page mapped there would move the parent too. Its exec
         * gets the new namespace's page (its member entry names it). */
        if (addr && shares_memory_with_parent(req->pid))
                addr = 0;
        r = trace_begin(l, req, ns, TRACE_REMAP, addr, op);
        /* A caller killed meanwhile has nothing left to move. */
        return r == -ESRCH ? -ENOENT : r;
}

bool supervisor_exec_in_flight(const struct tns_supervisor *s, pid_t tgid) {
        for (const struct exec_trace *t = s->execs; t; t = t->next)
                if (t->tgid == tgid && t->kind == TRACE_EXEC && !t->released)
                        return true;
        return false;
}

void supervisor_trace_orphan(struct tns_supervisor *s, pid_t tid, pid_t tgid) {
        struct exec_trace *t;

        /* Past the cap of traces in flight: it is one already made, and
         * must not be lost. Without memory or SIGCHLD, nothing can be
         * done for it. */
        if (supervisor_ensure_sigchld(s) < 0)
                return;
        t = calloc(1, sizeof(*t));
        if (!t)
                return;
        *t = (struct exec_trace){
                .s = s, .tid = tid, .tgid = tgid, .target_fd = INT_MAX, .released = true, .hold_slot = -1};
        t->next = s->execs;
        s->execs = t;
        s->n_execs++;
}

/* Whether an exec is between its reply and its release (released traces
 * of other kinds, orphans of waits, may wait long for a stop). */
static bool injecting(struct tns_supervisor *s) {
        for (struct exec_trace *t = s->execs; t; t = t->next)
                if ((t->kind == TRACE_EXEC && !t->released) || t->stop_sent)
                        return true;
        return false;
}

void supervisor_exec_done(struct tns_supervisor *s) {
        /* A clean stop finishes the injections in flight first, for up to
         * 50 ms (every trapped call of every namespace waits meanwhile): a
         * program let go at its exec stop unfinished would be stopped by
         * its hold for the successor (or, without one, run with the
         * kernel's vDSO). */
        for (unsigned ms = 0; injecting(s) && ms < 50; ms++) {
                supervisor_exec_on_sigchld(s);
                if (injecting(s))
                        (void) usleep(1000);
        }
        while (s->execs) {
                (void) ptrace(PTRACE_DETACH, s->execs->tid, 0, 0);
                /* Still held: its entry stays, for the successor. */
                s->execs->hold_slot = -1;
                trace_free(s->execs);
        }
        s->exec_rescan = sd_event_source_disable_unref(s->exec_rescan);
        s->exec_adopt = sd_event_source_disable_unref(s->exec_adopt);
}

bool supervisor_is_vdso_fallback(struct listener *l, const struct seccomp_notif *req) {
        const struct tns_vdso_host *h = l->s->vdso;
        unsigned char ehdr[sizeof(h->ehdr)];
        struct iovec local = {ehdr, sizeof(ehdr)}, remote;
        uint64_t base;

        if (!h || !tns_vdso_host_site(h, req->data.instruction_pointer, &base))
                return false;
        /* It is the kernel's vDSO there (not a program's own syscall that
         * happens to sit at the same page offset)... */
        remote = (struct iovec){(void *) (uintptr_t) base, sizeof(ehdr)};
        if (process_vm_readv(req->pid, &local, 1, &remote, 1, 0) != sizeof(ehdr) ||
            memcmp(ehdr, h->ehdr, sizeof(ehdr)) != 0 || supervisor_id_valid(l->fd, req->id) < 0)
                return false;
        /* ...and the program reads clocks through our image, which called
         * it: a program without it gets the emulated answer. Read to the
         * end (once per process): a bound would take a program with many
         * mappings for one without our image, and add its offset twice. */
        return supervisor_ns_by_mapping_whole(l->s, req->pid) != NULL;
}

/* The state letter of /proc/PID/stat ('T': stopped by a signal). */
static char proc_state(pid_t pid) {
        char path[64], buf[512], *p;
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        p = strrchr(buf, ')'); /* the name may hold anything */
        return p && p[1] == ' ' ? p[2] : 0;
}

/* Where a program's first instruction is, from the kernel's copy of its
 * auxv: its interpreter's entry if it has one, else its own. */
static int entry_of(pid_t pid, uint64_t *ret_entry, uint64_t *ret_vdso) {
        uint64_t kv[2], entry = 0, base = 0, vdso = 0;
        _cleanup_(fclosep) FILE *f = NULL;
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
        f = fopen(path, "re");
        if (!f)
                return negative_errno();
        while (fread(kv, sizeof(kv), 1, f) == 1 && kv[0] != AT_NULL) {
                if (kv[0] == AT_ENTRY)
                        entry = kv[1];
                else if (kv[0] == AT_BASE)
                        base = kv[1];
                else if (kv[0] == AT_SYSINFO_EHDR)
                        vdso = kv[1];
        }
        if (base) {
                _cleanup_close_ int mem = tns_proc_open_mem(pid);
                Elf64_Ehdr eh;

                if (mem < 0 || mem_read(mem, base, &eh, sizeof(eh)) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
                        return -EBADMSG;
                entry = base + eh.e_entry;
        }
        if (!entry || !vdso)
                return -ENOENT;
        *ret_entry = entry;
        *ret_vdso = vdso;
        return 0;
}

/* The memfds of the namespaces with an image, by inode: how a held
 * program is known, whoever its parent is now. */
struct memfd_id {
        dev_t dev;
        ino_t ino;
        struct tns_ns *ns;
};

/* The fd of one of our namespaces' memfds that a program was handed, and
 * that namespace; INT_MAX if none. */
static int handed_fd(pid_t pid, const struct memfd_id *ids, size_t n, struct tns_ns **ret_ns) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/fd", pid);
        d = opendir(path);
        while (d && (de = readdir(d))) {
                struct stat st;

                if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, 0) < 0)
                        continue;
                for (size_t i = 0; i < n; i++)
                        if (st.st_dev == ids[i].dev && st.st_ino == ids[i].ino) {
                                *ret_ns = ids[i].ns;
                                return atoi(de->d_name);
                        }
        }
        return INT_MAX;
}

/* Whether pid runs under a seccomp filter (ours among them, if it is a
 * member): a program handed a memfd fd by some other means is not taken. */
static bool under_filter(pid_t pid) {
        char path[64], line[128];
        _cleanup_(fclosep) FILE *f = NULL;
        int mode = 0;

        snprintf(path, sizeof(path), "/proc/%d/status", pid);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "Seccomp: %d", &mode) == 1)
                        break;
        return mode == 2;
}

/* Seizes tid of a stopped program and waits for the interrupt stop it
 * reports at once (bounded anyway). -ECHILD: it is gone; another error:
 * nothing was done to it, or it is on the list to be detached. */
static int seize_stopped(struct tns_supervisor *s, pid_t tid, pid_t tgid, int *ret_stopsig) {
        int status, sig;

        /* TRACESYSGOOD: tns_ptrace_syscall_own() tells syscall stops so. */
        if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACESYSGOOD) < 0)
                return negative_errno();
        if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
                supervisor_trace_orphan(s, tid, tgid);
                return -EIO;
        }
        for (unsigned ms = 0; ms < 100; ms++) {
                pid_t w = waitpid(tid, &status, __WALL | WNOHANG);

                if (w < 0 || (w > 0 && tns_stop_decode(status, &sig) == TNS_STOP_EXITED))
                        return -ECHILD;
                if (w > 0) {
                        /* In a group stop, the signal that stopped it. */
                        *ret_stopsig = WIFSTOPPED(status) ? WSTOPSIG(status) : 0;
                        return 0;
                }
                (void) usleep(1000);
        }
        supervisor_trace_orphan(s, tid, tgid);
        return -ETIMEDOUT;
}

/* A failed exec's thread our predecessor had sent into the close tail
 * (close-tail.h), stopped by our SIGSTOP at its first instruction: the
 * fd is in r11, the tail closes it once let go. */
static bool at_close_tail(struct exec_trace *t, const struct user_regs_struct *regs) {
        uint64_t base;

        return t->s->vdso->tail && kernel_vdso_of(t->tid, &base) >= 0 &&
               regs->rip == base + t->s->vdso->tail + TNS_TAIL_CLOSE_OFFSET && regs->r11 == (uint64_t) t->target_fd;
}

/* The exec tail's code at ip, not the wait tail's (tail-send.h), which
 * starts at the same place: a thread stopped there by its user (^Z while
 * it was held) is no program of ours to continue (helper-40). */
static bool at_exec_tail(pid_t pid, uint64_t ip) {
        long word;

        errno = 0;
        word = ptrace(PTRACE_PEEKTEXT, pid, ip, 0);
        return errno == 0 && memcmp(&word, tns_inject_tail, sizeof(word)) == 0;
}

/* A stopped member: if it is a program its predecessor held (stopped at
 * its first instruction, the kernel's vDSO still in its auxv, or our tail
 * already in its registers), finishes its exec and lets it run on. Any
 * other stopped program (a shell's job, a debugger's) is left as it is. */
static bool adopt_one(struct tns_supervisor *s, struct tns_ns *ns, pid_t pid, int fd) {
        struct exec_trace t = {
                .s = s, .kind = TRACE_EXEC, .tid = pid, .tgid = pid, .ns = ns, .target_fd = fd, .hold_slot = -1};
        struct user_regs_struct regs;
        uint64_t entry, vdso, kernel_base;
        size_t off;
        bool ours;
        int r;

        if (entry_of(pid, &entry, &vdso) < 0)
                return false;
        r = seize_stopped(s, pid, pid, &(int){0});
        if (r < 0)
                return r == -ECHILD; /* gone meanwhile: nothing left to do */
        ours = ptrace(PTRACE_GETREGS, pid, 0, &regs) >= 0 && regs.cs == 0x33 &&
               ((regs.rip == entry && read_sysinfo(pid, regs.rsp, &off, &kernel_base) >= 0 && kernel_base == vdso) ||
                (s->vdso->tail && regs.rip == vdso + s->vdso->tail && at_exec_tail(pid, regs.rip)));
        if (!ours) {
                /* Stays in its stop: the kernel puts a task detached in a
                 * group stop back into it. */
                (void) ptrace(PTRACE_DETACH, pid, 0, 0);
                return false;
        }
        if (regs.rip == entry) {
                r = inject_vdso(&t);
                if (r < 0 && r != -ENOENT) {
                        s->stats.vdso_failed++;
                        log_trace(&t, LOG_WARNING, r, "Failed to inject the vDSO, the program uses the syscall path");
                }
        }
        /* SIGCONT first: a death between the two then lets it run, its
         * registers at our tail. Its parent is told it continued, as it
         * was told it stopped. */
        (void) kill(pid, SIGCONT);
        (void) ptrace(PTRACE_DETACH, pid, 0, 0);
        tns_log_full(&s->log, LOG_INFO, 0, &(struct tns_log_ctx){.pid = pid, .syscall = "execve"},
                     "Finished the exec of a program held at its start by the previous instance");
        return true;
}

/* A stopped process: one of our held programs if it holds one of our
 * memfds (or, in a namespace without an image, by its parent chain). */
static bool adopt_pid(struct tns_supervisor *s, const struct memfd_id *ids, size_t n, pid_t pid) {
        struct tns_ns *ns = NULL;
        int fd = handed_fd(pid, ids, n, &ns);

        if (!ns) {
                /* No memfd handed: a member of a namespace without our
                 * image (no vDSO at all), by its parent chain. In one with
                 * an image, a held program has its fd: one without it is
                 * another's stop (an entrant the BPF watch stopped is
                 * attached, not injected). */
                ns = tns_supervisor_find_process(s, pid);
                if (ns && tns_ns_has_image(ns))
                        ns = NULL;
        }
        return ns && under_filter(pid) && adopt_one(s, ns, pid, fd);
}

/* A held exec that failed (ENOENT from a PATH lookup, a file that is not
 * a program, E2BIG...): its thread came back from execve with the error,
 * took our SIGSTOP on its way out and stopped its whole group, at no
 * entry point. Its entry in the in-flight page names the thread: if that
 * thread is a member's, under a filter, and stopped right after an
 * execve that failed, the fd handed for the exec is closed again and the
 * program goes on with its error, as the tracer would have let it
 * (on_stop()). Without this, such a program stayed stopped for good. */
static bool adopt_failed_exec(struct tns_supervisor *s, const struct memfd_id *ids, size_t n, pid_t tid, pid_t tgid) {
        struct exec_trace t = {.s = s, .kind = TRACE_EXEC, .tid = tid, .tgid = tgid, .hold_slot = -1};
        struct user_regs_struct regs = {};
        int r, stopsig = 0;
        bool failed, closing;
        char path[64];
        int64_t rax;

        /* The thread, still in its group (a failed exec keeps its id). */
        snprintf(path, sizeof(path), "/proc/%d/task/%d", tgid, tid);
        if (access(path, F_OK) < 0)
                return false;
        r = seize_stopped(s, tid, tgid, &stopsig);
        if (r < 0)
                return r == -ECHILD;
        /* Seized, its id cannot go to another process until we reap it:
         * what /proc says of it from here on is of this one. */
        t.target_fd = handed_fd(tid, ids, n, &t.ns);
        if (!t.ns) /* no fd handed (a full table, or no image) */
                t.ns = tns_supervisor_find_process(s, tgid);
        if (!t.ns || !under_filter(tgid) || ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
                regs = (struct user_regs_struct){}; /* not a member's: fails every test below */
        rax = (int64_t) regs.rax;
        /* Stopped by a SIGSTOP (ours; a shell's ^Z is a SIGTSTP), and
         * either right after the execve that failed, or at the close our
         * predecessor had set up to take the fd back (it died before the
         * close ran: the program runs it, and its execve returns 0). */
        failed = (regs.orig_rax == SYS_execve || regs.orig_rax == SYS_execveat) && rax < 0 && rax >= -4095;
        closing = (int64_t) regs.orig_rax == -1 && regs.rax == SYS_close && t.target_fd != INT_MAX &&
                  regs.rdi == (uint64_t) t.target_fd && tns_ptrace_syscall_insn_at(tid, regs.rip);
        if (regs.cs != 0x33 || stopsig != SIGSTOP || !(failed || closing)) {
                (void) ptrace(PTRACE_DETACH, tid, 0, 0); /* back into its stop */
                return false;
        }
        /* At the close tail's first instruction, its fd in r11: the tail
         * closes it once let go (closed here too, another thread could
         * have had the number meanwhile: helper-40). */
        if (failed && t.target_fd != INT_MAX && !at_close_tail(&t, &regs)) {
                r = undo_addfd(&t);
                if (r == -ESRCH)
                        return true; /* gone meanwhile */
                if (r < 0)
                        log_trace(&t, LOG_DEBUG, r, "Failed to close the fd handed for a failed exec");
        }
        /* SIGCONT first, as adopt_one(). A restart code in rax (an exec
         * interrupted) makes the kernel run the execve again when the
         * group stop ends: it comes to us as a new one. */
        (void) kill(tgid, SIGCONT);
        (void) tns_ptrace_detach(tid, tgid, &t.held);
        tns_log_full(&s->log, LOG_INFO, 0, &(struct tns_log_ctx){.pid = tid, .syscall = "execve"},
                     "Let a program go on whose exec failed while the previous instance held it");
        return true;
}

static bool own_trace(struct tns_supervisor *s, pid_t tid) {
        for (struct exec_trace *t = s->execs; t; t = t->next)
                if (t->tid == tid)
                        return true;
        return false;
}

/* The predecessor's held execs, from the in-flight page: each is looked
 * at once stopped (or forgotten once gone, or at the last round). Past the
 * page's table (execs_overflow), every stopped process of the host is:
 * a held program whose parent died is some reaper's child by now. Returns
 * whether any is left for a later round. */
static bool adopt_scan(struct tns_supervisor *s, bool last) {
        struct tns_inflight *p = s->inflight;
        _cleanup_free_ struct memfd_id *ids = NULL;
        size_t n = 0, max = 0;
        bool left = false;

        for (struct tns_ns *ns = s->namespaces; ns; ns = ns->next)
                max++;
        ids = calloc(max ? max : 1, sizeof(*ids));
        if (!ids)
                return false;
        for (struct tns_ns *ns = s->namespaces; ns && n < max; ns = ns->next) {
                struct stat st;
                int ro = tns_ns_has_image(ns) ? tns_ns_ro_fd(ns) : -EBADF;

                if (ro >= 0 && fstat(ro, &st) >= 0)
                        ids[n++] = (struct memfd_id){st.st_dev, st.st_ino, ns};
        }
        for (int i = 0; i < TNS_INFLIGHT_EXECS; i++) {
                struct tns_inflight_exec e = p->execs[i];
                char state;

                if (e.tid <= 0 || own_trace(s, e.tid))
                        continue;
                /* Its exec done, the program is its thread group's leader. */
                state = proc_state(e.tgid);
                if (state == 'T' && !adopt_pid(s, ids, n, e.tgid))
                        (void) adopt_failed_exec(s, ids, n, e.tid, e.tgid);
                if (state == 'T' || state == 0 || last)
                        p->execs[i] = (struct tns_inflight_exec){};
                else
                        left = true;
        }
        if (p->execs_overflow) {
                _cleanup_(closedirp) DIR *d = opendir("/proc");
                struct dirent *de;

                while (d && (de = readdir(d))) {
                        pid_t pid = (pid_t) atoi(de->d_name);

                        if (pid > 1 && pid != getpid() && proc_state(pid) == 'T' && !own_trace(s, pid))
                                adopt_pid(s, ids, n, pid);
                }
                if (last)
                        p->execs_overflow = 0;
                else
                        left = true;
        }
        return left;
}

static int on_adopt(sd_event_source *src, uint64_t usec, void *userdata) {
        struct tns_supervisor *s = userdata;

        s->exec_adopt = sd_event_source_disable_unref(s->exec_adopt);
        supervisor_exec_adopt(s);
        return 0;
}

/* At a restore and then a few times: a program let go by its dying
 * tracer may reach its stop only after we have started. */
void supervisor_exec_adopt(struct tns_supervisor *s) {
        static const uint64_t after_usec[] = {50000, 200000, 750000, 2000000};

        if (!s->vdso || !s->inflight)
                return;
        if (!adopt_scan(s, s->exec_adopt_round >= ELEMENTSOF(after_usec)))
                return;
        if (s->exec_adopt_round < ELEMENTSOF(after_usec) && !s->exec_adopt &&
            sd_event_add_time_relative(s->event, &s->exec_adopt, CLOCK_MONOTONIC, after_usec[s->exec_adopt_round],
                                       after_usec[s->exec_adopt_round] / 10, on_adopt, s) >= 0)
                s->exec_adopt_round++;
}
