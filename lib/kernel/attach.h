/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Attach: puts one running process (a thread group) under the seccomp
 * filter, from outside, as CRIU's compel infects a victim. Every thread is
 * seized and stopped (PTRACE_SEIZE + PTRACE_INTERRUPT); the syscalls that
 * install the filter are then run inside the process by single step
 * (ptrace-util.h), borrowing a `syscall` instruction of its kernel vDSO:
 *
 *   prctl(PR_SET_NO_NEW_PRIVS)   only if it lacks CAP_SYS_ADMIN (see below)
 *   mmap(anonymous page)         the filter program is copied there
 *   seccomp(SET_MODE_FILTER, NEW_LISTENER | TSYNC | TSYNC_ESRCH
 *           | WAIT_KILLABLE_RECV, prog)
 *   close(listener), munmap      after pidfd_getfd() took our copy
 *
 * TSYNC gives every thread of the group the filter at once (a Go program,
 * `runc init`, has many); TSYNC_ESRCH is what lets it go with
 * NEW_LISTENER (the kernel returns the fd, and ESRCH if a thread could not
 * be synchronised). Children it forks afterwards inherit the filter.
 *
 * no_new_privs: the kernel lets a task install a filter only with it or
 * with CAP_SYS_ADMIN in its user namespace (seccomp(2)). It cannot be
 * cleared again and makes setuid programs and file capabilities inert in
 * the whole tree, so a process that has CAP_SYS_ADMIN (root in a
 * container) does not get it — as lib/kernel/filter.c's tns_filter_install().
 *
 * The vDSO. A running program has found its kernel vDSO's functions long
 * ago (libc and Go keep pointers to them), so our image cannot replace it
 * as at exec: instead the entry of each time function of the kernel vDSO
 * (clock_gettime, gettimeofday, time, clock_getres) is rewritten, in this
 * process only (through /proc/PID/mem: FOLL_FORCE makes a private copy of
 * the page), to `mov $NR, %eax; syscall; ret`. Every clock read then is
 * the syscall, which the filter sends to the supervisor: slower, never
 * wrong. The arguments are already where the syscall wants them. A thread
 * stopped inside those 8 bytes is single-stepped out of them first; one
 * further inside finishes the read it had started (the host's time,
 * as a read made just before the attach). The patch is made before the
 * filter (a process must never carry the filter with a vDSO that reads
 * the host's clocks) and undone if the filter cannot be installed. Its
 * children inherit the patched pages by fork; what they exec
 * gets our vDSO image at the exec stop (supervisor-exec.c). */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tns_vdso_host;
struct tns_attach_owner;

/* Threads of one process we stop at most, and how long one may take to
 * stop (a thread in uninterruptible sleep, a vfork parent, never does):
 * the supervisor serves every other process from the same thread. */
#define TNS_ATTACH_MAX_THREADS 4096
#define TNS_ATTACH_STOP_TIMEOUT_MS 500

/* Called for each child process of the attached one, read while it is
 * stopped (so that the list is exactly the children that do not inherit
 * the filter: a child forked after it has it). A negative return aborts
 * nothing: it is ignored. */
typedef int (*tns_attach_child_fn)(pid_t child, void *userdata);

/* Called for each thread seized but not let go: PTRACE_DETACH needs a
 * ptrace stop, and it never reached one in time (or was killed). It is
 * still traced by the caller, who must wait for it (waitpid __WALL) and
 * detach it at its stop, or reap it: otherwise it stops for good at the
 * interrupt we queued, or its parent cannot reap it. */
typedef void (*tns_attach_orphan_fn)(pid_t tid, pid_t tgid, void *userdata);

/* flags: TNS_ATTACH_SWALLOW_SIGSTOP: the process was stopped for us by a
 * SIGSTOP (at its exec, by timensd's BPF program): that signal is not
 * delivered again, and if the process had already reached its group stop,
 * it is continued (SIGCONT) once attached. */
#define TNS_ATTACH_SWALLOW_SIGSTOP 0x1U
/* TNS_ATTACH_NEWTIME: a process in the attacher's own kernel time
 * namespace (and whose children are born there) makes a new one, with zero
 * offsets, for its children and its next program (unshare(CLONE_NEWTIME)
 * run in it, before the filter: the filter would send that call to us).
 * Only a process can enter a time namespace itself; this one enters it at
 * its next exec, as the kernel's unshare -T does. It needs CAP_SYS_ADMIN in
 * the process's user namespace and a kernel with CONFIG_TIME_NS: without,
 * nothing changes (not an error). */
#define TNS_ATTACH_NEWTIME 0x2U

struct tns_attach_params {
        unsigned flags;
        const struct sock_fprog *prog; /* the filter */
        const struct tns_vdso_host *h; /* this host's kernel vDSO: the `syscall` to borrow, the function offsets */
        /* Whose processes may be taken (attach-creds.h), checked on every
         * thread once all are stopped; NULL: root asks, anything goes. */
        const struct tns_attach_owner *owner;
        uint64_t deadline_ms; /* CLOCK_MONOTONIC, ms: no thread waited for after it; 0: none */
        tns_attach_child_fn child_fn; /* may be NULL */
        tns_attach_orphan_fn orphan_fn; /* may be NULL only if nothing waits on our children */
        void *userdata; /* of both */
        /* The pauses while a thread's stop is waited for (NULL: a plain
         * nanosleep): the supervisor lets its receive threads answer the
         * calls they hold meanwhile, since a thread whose trapped call was
         * received waits for its answer (killable only) before it stops. */
        void (*pause_fn)(const struct timespec *t, void *userdata);
        void *pause_userdata;
};

struct tns_attach_info {
        unsigned threads; /* threads stopped and given the filter */
        bool continued; /* SWALLOW_SIGSTOP: it had reached its group stop, SIGCONT ended it */
        const char *denied; /* -EACCES: why not (attach-creds.h), a static string */
};

/* Attaches process pid (a thread group leader, in our pid namespace) with
 * the filter p->prog; returns 0 and the listener fd (ours, O_CLOEXEC) in
 * *ret_listener.
 *
 * Errors (the API): -ESRCH no such process; -EINVAL pid is a thread, not a
 * process; -EACCES it is not p->owner's to attach (ret_info->denied says
 * why: that one error fills ret_info too); -EPERM it cannot be traced (a
 * debugger or another supervisor traces it, a kernel thread, not
 * allowed); -ETIMEDOUT a thread did not stop in time; -EPROTOTYPE a
 * 32-bit program; -EOPNOTSUPP no vDSO on this host or in the process
 * (nothing to borrow a `syscall` from); -EBUSY it already has a seccomp
 * filter with a listener (another supervisor, a container runtime's
 * agent, or us); -EXDEV its threads have different seccomp filters (TSYNC
 * refused); -E2BIG too many threads; other -errno: a syscall in the
 * process failed. On any error the process runs on as before (except
 * no_new_privs, which stays once set), and is no longer traced. */
int tns_attach_process(pid_t pid, const struct tns_attach_params *p, int *ret_listener,
                       struct tns_attach_info *ret_info);

/* The 8 bytes an entry is rewritten to: mov $nr, %eax; syscall; ret.
 * Pure, for unit tests. */
#define TNS_ATTACH_STUB_SIZE 8
void tns_attach_stub(uint32_t nr, uint8_t ret[TNS_ATTACH_STUB_SIZE]);
