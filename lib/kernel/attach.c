/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Attach of a running process (attach.h says what and why). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "attach.h"
#include "fd-check.h"
#include "attach-creds.h"
#include "kns.h"
#include "proc-util.h"
#include "ptrace-util.h"
#include "util.h"
#include "vdso-host.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
/* Newer than Debian 12's kernel headers. */
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#define CAP_SYS_ADMIN_BIT 21
#define MAX_STEP_OUT 64

struct thread {
        pid_t tid;
        bool gone; /* exited while we looked */
        struct user_regs_struct regs; /* at its stop; what it resumes with */
        struct tns_held_signals held;
        bool group_stopped; /* found in a group stop (SIGSTOP and the like) */
};

struct attach {
        pid_t pid;
        int pidfd;
        int procfd; /* /proc/PID */
        int mem; /* /proc/PID/mem */
        struct thread *threads;
        size_t n, allocated;
        const struct tns_vdso_host *h;
        uint64_t vdso_base;
        struct thread *injector; /* the thread that runs our syscalls */
};

/* The kernel vDSO's time functions and the syscall each one becomes. */
static const struct {
        int fn;
        uint32_t nr;
} patches[] = {
        {TNS_VDSO_CLOCK_GETTIME, SYS_clock_gettime},
        {TNS_VDSO_GETTIMEOFDAY, SYS_gettimeofday},
        {TNS_VDSO_TIME, SYS_time},
        {TNS_VDSO_CLOCK_GETRES, SYS_clock_getres},
};

void tns_attach_stub(uint32_t nr, uint8_t ret[TNS_ATTACH_STUB_SIZE]) {
        ret[0] = 0xb8; /* mov $imm32, %eax (zero-extends into rax) */
        memcpy(ret + 1, &nr, sizeof(nr)); /* x86 is little-endian */
        ret[5] = 0x0f, ret[6] = 0x05; /* syscall */
        ret[7] = 0xc3; /* ret */
}

static struct thread *find_thread(struct attach *a, pid_t tid) {
        for (size_t i = 0; i < a->n; i++)
                if (a->threads[i].tid == tid)
                        return &a->threads[i];
        return NULL;
}

/* A zombie leader (it called pthread_exit) never stops: leave it. */
static bool is_zombie(pid_t pid, pid_t tid) {
        char path[64], buf[256], *p;
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        p = strrchr(buf, ')'); /* comm may hold anything */
        return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* Seizes and interrupts every thread of the group not seized yet. */
static int seize_new(struct attach *a) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/task", a->pid);
        d = opendir(path);
        if (!d)
                return errno == ENOENT ? -ESRCH : negative_errno();
        while ((de = readdir(d))) {
                pid_t tid = (pid_t) atoi(de->d_name);
                struct thread *t;

                if (tid <= 0 || find_thread(a, tid) || is_zombie(a->pid, tid))
                        continue;
                if (a->n >= TNS_ATTACH_MAX_THREADS)
                        return -E2BIG;
                if (a->n == a->allocated) {
                        size_t k = a->allocated ? a->allocated * 2 : 16;
                        struct thread *v = reallocarray(a->threads, k, sizeof(*v));

                        if (!v)
                                return -ENOMEM;
                        a->threads = v;
                        a->allocated = k;
                }
                if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACESYSGOOD) < 0) {
                        if (errno == ESRCH)
                                continue; /* the thread exited meanwhile */
                        return negative_errno();
                }
                t = &a->threads[a->n++];
                *t = (struct thread){.tid = tid};
                if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 && errno != ESRCH)
                        return negative_errno();
        }
        return 0;
}

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Waits for t's first stop, bounded: the supervisor serves everyone else
 * from the same thread, and some tasks never stop (uninterruptible sleep,
 * a vfork parent until its child execs). Polled: a ptrace stop has no fd
 * to wait on. */
static int wait_stop(const struct tns_attach_params *p, struct thread *t, uint64_t deadline) {
        struct timespec pause = {0, 100000};

        for (;;) {
                int status, sig;
                pid_t r = waitpid(t->tid, &status, __WALL | WNOHANG);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return negative_errno();
                if (r > 0) {
                        enum tns_stop stop = tns_stop_decode(status, &sig);

                        if (stop == TNS_STOP_EXITED) {
                                t->gone = true;
                                return 0;
                        }
                        /* A signal arrived first: it is a stop all the same
                         * (our interrupt follows later, absorbed by the
                         * steps); the signal is delivered after we leave. */
                        if (stop == TNS_STOP_SIGNAL && t->held.n < TNS_MAX_HELD_SIGNALS)
                                t->held.sig[t->held.n++] = sig;
                        /* A seized task in a group stop reports it as an
                         * event stop with the stopping signal (ptrace(2)),
                         * our interrupt with SIGTRAP. */
                        if (stop == TNS_STOP_INTERRUPT && WSTOPSIG(status) != SIGTRAP)
                                t->group_stopped = true;
                        return ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0 ? negative_errno() : 0;
                }
                if (now_ms() >= deadline)
                        return -ETIMEDOUT;
                if (p->pause_fn)
                        p->pause_fn(&pause, p->pause_userdata);
                else
                        nanosleep(&pause, NULL);
                if (pause.tv_nsec < 10000000)
                        pause.tv_nsec *= 2;
        }
}

/* Until a listing finds no thread we have not stopped: a thread that was
 * cloning while we listed shows up in the next round, and stopped threads
 * clone no more. */
static int stop_all(struct attach *a, const struct tns_attach_params *p) {
        uint64_t deadline = now_ms() + TNS_ATTACH_STOP_TIMEOUT_MS;

        if (p->deadline_ms && p->deadline_ms < deadline)
                deadline = p->deadline_ms;

        for (unsigned round = 0; round < 64; round++) {
                size_t before = a->n;
                int r;

                r = seize_new(a);
                if (r < 0)
                        return r;
                for (size_t i = before; i < a->n; i++) {
                        r = wait_stop(p, &a->threads[i], deadline);
                        if (r < 0)
                                return r;
                }
                if (a->n == before)
                        return 0;
        }
        return -EAGAIN;
}

static struct thread *pick_injector(struct attach *a) {
        struct thread *leader = find_thread(a, a->pid);

        if (leader && !leader->gone)
                return leader;
        for (size_t i = 0; i < a->n; i++)
                if (!a->threads[i].gone)
                        return &a->threads[i];
        return NULL;
}

/* One syscall in the process: nr(args...), up to three arguments, or
 * mmap's six (args given in full). Returns 0 and the result, or -errno
 * (also the syscall's own). */
static int run_syscall6(struct attach *a, long nr, const uint64_t args[6], int64_t *ret) {
        struct thread *t = a->injector;
        int64_t x;
        int r;

        r = tns_ptrace_syscall(t->tid, &t->regs, a->vdso_base + a->h->gadget, nr, args, &t->held, &x);
        if (r < 0)
                return r;
        if (x < 0 && x > -4096)
                return (int) x;
        if (ret)
                *ret = x;
        return 0;
}

static int run_syscall(struct attach *a, long nr, uint64_t a0, uint64_t a1, uint64_t a2, int64_t *ret) {
        return run_syscall6(a, nr, (const uint64_t[6]){a0, a1, a2}, ret);
}

/* Which entries get the stub: all the host's vDSO has, except those that
 * have it already (attached before: the kernel then says EBUSY). */
static bool in_patch(const struct attach *a, const bool todo[], uint64_t ip) {
        for (size_t i = 0; i < ELEMENTSOF(patches); i++) {
                uint64_t at = a->vdso_base + a->h->fn[patches[i].fn];

                if (todo[i] && ip > at && ip < at + TNS_ATTACH_STUB_SIZE)
                        return true;
        }
        return false;
}

/* A thread stopped inside the bytes we rewrite would resume in the middle
 * of an instruction of ours: step it past them (a few instructions of the
 * function's prologue, which makes no syscall). Its registers then are
 * where it got to. */
static int step_out(struct thread *t, const struct attach *a, const bool todo[]) {
        for (unsigned i = 0; i < MAX_STEP_OUT && in_patch(a, todo, t->regs.rip); i++) {
                int sig, r;

                if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0)
                        return negative_errno();
                r = tns_ptrace_wait(t->tid, &sig);
                if (r < 0)
                        return r;
                if (r == TNS_STOP_EXITED)
                        return -ESRCH;
                if (r == TNS_STOP_SIGNAL && t->held.n < TNS_MAX_HELD_SIGNALS)
                        t->held.sig[t->held.n++] = sig;
                if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
                        return negative_errno();
        }
        return in_patch(a, todo, t->regs.rip) ? -EBUSY : 0;
}

/* Rewrites the entries (orig gets the bytes that were there, patched[]
 * says which were written). */
static int patch_vdso(struct attach *a, uint8_t orig[][TNS_ATTACH_STUB_SIZE], bool patched[]) {
        const struct tns_vdso_host *h = a->h;
        uint8_t stub[ELEMENTSOF(patches)][TNS_ATTACH_STUB_SIZE];
        bool todo[ELEMENTSOF(patches)] = {};
        int r;

        for (size_t i = 0; i < ELEMENTSOF(patches); i++) {
                uint64_t off = h->fn[patches[i].fn];

                if (!off)
                        continue;
                if (off + TNS_ATTACH_STUB_SIZE > h->kernel_size)
                        return -EBADMSG;
                if (pread(a->mem, orig[i], TNS_ATTACH_STUB_SIZE, (off_t) (a->vdso_base + off)) != TNS_ATTACH_STUB_SIZE)
                        return -EIO;
                tns_attach_stub(patches[i].nr, stub[i]);
                todo[i] = memcmp(orig[i], stub[i], TNS_ATTACH_STUB_SIZE) != 0;
        }
        for (size_t i = 0; i < a->n; i++)
                if (!a->threads[i].gone) {
                        r = step_out(&a->threads[i], a, todo);
                        if (r < 0)
                                return r;
                }
        for (size_t i = 0; i < ELEMENTSOF(patches); i++) {
                if (!todo[i])
                        continue;
                if (pwrite(a->mem, stub[i], TNS_ATTACH_STUB_SIZE, (off_t) (a->vdso_base + h->fn[patches[i].fn])) !=
                    TNS_ATTACH_STUB_SIZE)
                        return -EIO;
                patched[i] = true;
        }
        return 0;
}

static void unpatch_vdso(struct attach *a, uint8_t orig[][TNS_ATTACH_STUB_SIZE], const bool patched[]) {
        for (size_t i = 0; i < ELEMENTSOF(patches); i++)
                if (patched[i])
                        (void) !pwrite(a->mem, orig[i], TNS_ATTACH_STUB_SIZE,
                                       (off_t) (a->vdso_base + a->h->fn[patches[i].fn]));
}

/* The process's kernel vDSO: where /proc/PID/maps has it (CRIU-restored
 * programs may have moved it), and it must be this host's (the offsets
 * we know are of that image). */
static int find_vdso(struct attach *a) {
        unsigned char ehdr[sizeof(a->h->ehdr)];
        int r;

        r = tns_proc_find_mapping(a->pid, "[vdso]", 0, &a->vdso_base, NULL);
        if (r < 0)
                return r == -ENOENT ? -EOPNOTSUPP : r;
        if (pread(a->mem, ehdr, sizeof(ehdr), (off_t) a->vdso_base) != sizeof(ehdr))
                return -EIO;
        return memcmp(ehdr, a->h->ehdr, sizeof(ehdr)) == 0 ? 0 : -EOPNOTSUPP;
}

static bool has_cap_sys_admin(pid_t tid) {
        struct tns_proc_status st;

        return tns_proc_status(tid, &st) >= 0 && (st.cap_eff & (UINT64_C(1) << CAP_SYS_ADMIN_BIT));
}

/* seccomp(2) in the process: the program goes to a page of its own, as
 * struct sock_fprog { u16 len; u64 filter; } then the instructions. */
static int install_filter(struct attach *a, const struct sock_fprog *prog, int64_t *ret_fd) {
        uint64_t flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC |
                         SECCOMP_FILTER_FLAG_TSYNC_ESRCH | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
        size_t insns = (size_t) prog->len * sizeof(struct sock_filter);
        size_t size = (16 + insns + 4095) & ~(size_t) 4095;
        uint64_t hdr[2];
        int64_t page;
        int r, r2;

        r = run_syscall6(
                a, SYS_mmap,
                (const uint64_t[6]){0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t) -1, 0},
                &page);
        if (r < 0)
                return r;
        hdr[0] = prog->len;
        hdr[1] = (uint64_t) page + 16;
        if (pwrite(a->mem, hdr, sizeof(hdr), (off_t) page) != sizeof(hdr) ||
            pwrite(a->mem, prog->filter, insns, (off_t) page + 16) != (ssize_t) insns)
                r = -EIO;
        if (r >= 0) {
                r = run_syscall(a, SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, (uint64_t) page, ret_fd);
                /* WAIT_KILLABLE_RECV came with 5.19: without it, the rest. */
                if (r == -EINVAL)
                        r = run_syscall(a, SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                        flags & ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, (uint64_t) page, ret_fd);
                if (r == -ESRCH)
                        r = -EXDEV; /* TSYNC_ESRCH: a thread's filters differ */
        }
        r2 = run_syscall(a, SYS_munmap, (uint64_t) page, size, 0, NULL);
        return r < 0 ? r : r2;
}

static int take_listener(struct attach *a, const struct sock_fprog *prog, int *ret) {
        int64_t fd = -1;
        int r, ours;

        if (!has_cap_sys_admin(a->injector->tid)) {
                r = run_syscall(a, SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, NULL);
                if (r < 0)
                        return r;
        }
        r = install_filter(a, prog, &fd);
        if (r < 0)
                return r;
        ours = (int) syscall(SYS_pidfd_getfd, a->pidfd, (int) fd, 0);
        r = ours < 0 ? negative_errno() : 0;
        /* Another thread of the process may have put a file of its own
         * at that number meanwhile: not ours to use, and not to close
         * here either (a close may wait for ever on a FUSE server the
         * process runs: helper-43): closed on a thread of its own. */
        if (r >= 0 && tns_fd_kind(0, ours) != TNS_FD_SECCOMP) {
                (void) tns_fd_close_detached(ours);
                ours = -EBADF;
                r = -EBADF;
        }
        /* The process must not keep it: a listener in the tree it filters
         * would keep it alive when the supervisor lets go. */
        (void) run_syscall(a, SYS_close, (uint64_t) fd, 0, 0, NULL);
        if (r < 0)
                return r;
        *ret = ours;
        return 0;
}

struct child_list {
        tns_attach_child_fn fn;
        void *userdata;
};

static int on_child(pid_t child, void *userdata) {
        struct child_list *c = userdata;

        (void) c->fn(child, c->userdata);
        return 0;
}

/* Puts the injector's registers back and lets every thread go, with the
 * signals that arrived meanwhile. */
static void drop_sigstop(struct tns_held_signals *held) {
        unsigned k = 0;

        for (unsigned i = 0; i < held->n; i++)
                if (held->sig[i] != SIGSTOP)
                        held->sig[k++] = held->sig[i];
        held->n = k;
}

/* With TNS_ATTACH_SWALLOW_SIGSTOP, the SIGSTOP that held the process for
 * us is not sent again, and a group stop it reached before we seized it
 * is ended (SIGCONT): its parent may have seen it stop and continue. */
static bool release(struct attach *a, const struct tns_attach_params *p) {
        bool group_stopped = false;

        for (size_t i = 0; i < a->n; i++) {
                struct thread *t = &a->threads[i];

                if (t->gone)
                        continue;
                if (t == a->injector)
                        (void) ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs);
                if (p->flags & TNS_ATTACH_SWALLOW_SIGSTOP)
                        drop_sigstop(&t->held);
                group_stopped |= t->group_stopped;
                /* PTRACE_DETACH needs a stop: a thread that never reached
                 * its stop (timed out) or was killed is still ours, and
                 * would stop at our interrupt, or linger as a traced
                 * zombie, with nobody waiting. The caller waits for it. */
                if (tns_ptrace_detach(t->tid, a->pid, &t->held) < 0 && p->orphan_fn)
                        p->orphan_fn(t->tid, a->pid, p->userdata);
        }
        if (!(p->flags & TNS_ATTACH_SWALLOW_SIGSTOP) || !group_stopped)
                return false;
        (void) kill(a->pid, SIGCONT);
        return true;
}

/* TNS_ATTACH_NEWTIME, by the leader (the thread that execs: de_thread
 * makes any exec'ing thread the leader, but its namespaces are its own
 * task's, and a runtime's init execs from its main thread). */
static void new_time_namespace(struct attach *a) {
        uint64_t mine, own, children;

        if (a->injector->tid != a->pid || tns_kns_ino(0, false, &mine) < 0 || tns_kns_ino(a->pid, false, &own) < 0 ||
            tns_kns_ino(a->pid, true, &children) < 0 || own != mine || children != mine)
                return;
        (void) run_syscall(a, SYS_unshare, CLONE_NEWTIME, 0, 0, NULL);
}

static int attach_stopped(struct attach *a, const struct tns_attach_params *p, int *ret_listener) {
        const struct sock_fprog *prog = p->prog;
        tns_attach_child_fn child_fn = p->child_fn;
        void *userdata = p->userdata;
        uint8_t orig[ELEMENTSOF(patches)][TNS_ATTACH_STUB_SIZE] = {};
        bool patched[ELEMENTSOF(patches)] = {};
        int r;

        a->injector = pick_injector(a);
        if (!a->injector)
                return -ESRCH;
        if (a->injector->regs.cs != 0x33)
                return -EPROTOTYPE; /* its clock calls are i386 calls: ENOSYS under the filter */
        r = find_vdso(a);
        if (r < 0)
                return r;
        r = patch_vdso(a, orig, patched);
        if (r >= 0 && (p->flags & TNS_ATTACH_NEWTIME))
                new_time_namespace(a);
        if (r >= 0)
                r = take_listener(a, prog, ret_listener);
        if (r < 0) {
                unpatch_vdso(a, orig, patched);
                return r;
        }
        if (child_fn)
                (void) tns_proc_for_each_child(a->pid, on_child, &(struct child_list){child_fn, userdata});
        return 0;
}

static int open_mem(pid_t pid) {
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/mem", pid);
        fd = open(path, O_RDWR | O_CLOEXEC);
        return fd < 0 ? (errno == ENOENT ? -ESRCH : negative_errno()) : fd;
}

/* The cheap look before we stop anything: the euid /proc/PID shows. Not
 * the check (that comes once the process is stopped), only so that a
 * process plainly not the owner's is not even stopped for a moment. */
static int precheck_owner(struct attach *a, const struct tns_attach_owner *o, const char **ret_denied) {
        struct stat st;

        if (fstat(a->procfd, &st) < 0)
                return negative_errno();
        if (st.st_uid == o->uid)
                return 0;
        *ret_denied = "it runs as another user (a setuid program, or not yours)";
        return -EACCES;
}

/* Whether o may have the process: every thread's credentials, read once
 * all are in a ptrace stop. Race-free: a task's credentials change only
 * by its own doing (commit_creds() acts on current: the set*id calls,
 * capset, PR_SET_DUMPABLE, and execve's setuid bits), and a task in a
 * ptrace stop does nothing until we let it go (SIGKILL excepted, after
 * which it has nothing left to do). A setuid exec that came before the
 * stop is therefore seen, and none can come after it. Nor can a thread
 * cloned since our listing escape: stop_all()'s last round found none.
 * And the pid is still the process of our pidfd: that has not exited (its
 * pidfd is not readable), so its pid was never free for reuse since the
 * pidfd was opened, and procfd, opened after it, is its directory. */
static int check_owner(struct attach *a, const struct tns_attach_owner *o, const char **ret_denied) {
        struct pollfd pfd = {.fd = a->pidfd, .events = POLLIN};

        if (poll(&pfd, 1, 0) != 0)
                return -ESRCH;
        for (size_t i = 0; i < a->n; i++) {
                struct tns_task_creds c;
                const char *why;
                int r;

                if (a->threads[i].gone)
                        continue;
                r = tns_task_creds_read(a->procfd, a->threads[i].tid, o->uid, &c);
                if (r == -ESRCH)
                        continue; /* killed: it runs nothing more */
                if (r < 0)
                        return r;
                why = tns_attach_denied(&c, o);
                if (why) {
                        *ret_denied = why;
                        return -EACCES;
                }
        }
        return 0;
}

static int open_process(pid_t pid, struct attach *a) {
        struct tns_proc_status st;
        char path[64];
        int r;

        r = tns_proc_status(pid, &st);
        if (r < 0)
                return r;
        if (st.tgid != pid)
                return -EINVAL; /* a thread: its process is st.tgid */
        a->pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (a->pidfd < 0)
                return negative_errno();
        snprintf(path, sizeof(path), "/proc/%d", pid);
        a->procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (a->procfd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        a->mem = open_mem(pid);
        if (a->mem < 0)
                return a->mem == -EACCES ? -EPERM : a->mem;
        return 0;
}

int tns_attach_process(pid_t pid, const struct tns_attach_params *p, int *ret_listener,
                       struct tns_attach_info *ret_info) {
        struct attach a = {.pid = pid, .h = p->h, .pidfd = -EBADF, .procfd = -EBADF, .mem = -EBADF};
        const char *denied = NULL;
        int listener = -EBADF, r;
        bool continued = false;

        if (!p->h || !p->h->gadget)
                return -EOPNOTSUPP;
        r = open_process(pid, &a);
        if (r >= 0 && p->owner)
                r = precheck_owner(&a, p->owner, &denied);
        if (r >= 0)
                r = stop_all(&a, p);
        if (r >= 0 && p->owner)
                r = check_owner(&a, p->owner, &denied);
        if (r >= 0)
                r = attach_stopped(&a, p, &listener);
        if (a.n > 0)
                continued = release(&a, p);
        if (ret_info && (r >= 0 || r == -EACCES)) {
                *ret_info = (struct tns_attach_info){.continued = continued, .denied = denied};
                for (size_t i = 0; r >= 0 && i < a.n; i++)
                        ret_info->threads += !a.threads[i].gone;
        }
        free(a.threads);
        safe_close(a.pidfd);
        safe_close(a.procfd);
        safe_close(a.mem);
        if (r < 0)
                return r;
        *ret_listener = listener;
        return 0;
}
