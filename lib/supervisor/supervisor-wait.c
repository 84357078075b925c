/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Absolute waits: clock_nanosleep(TIMER_ABSTIME), timer_settime and
 * timerfd_settime with an absolute time, futex, futex_waitv and futex_wait
 * with absolute timeouts. The kernel must wait for the host's deadline, and
 * nothing of the program's memory may change (DESIGN.md). Two ways:
 *
 * timerfd_settime runs here, on the target's own timer (pidfd_getfd), with
 * the converted value; the results (old_value) are the kernel's, relative.
 *
 * Everything else must run in the calling thread (a private futex is keyed
 * by its mm, a POSIX timer belongs to its process, a sleep must be
 * interrupted by its signals exactly as the kernel does). So the thread
 * runs the call itself with one argument register pointing at our copy of
 * the deadline, converted, in a slot of its "wait page" (a private,
 * read-only mapping of our memfd, written through /proc/PID/mem):
 *
 *  1. notification: seize the thread, queue PTRACE_INTERRUPT, reply
 *     -ERESTARTNOINTR. The seccomp wait is killable only
 *     (WAIT_KILLABLE_RECV), so the interrupt waits for the reply; the
 *     reply leaves the syscall with -ERESTARTNOINTR, and the pending
 *     interrupt makes it enter the signal path, where it stops for us.
 *  2. interrupt stop: the kernel has not yet restarted the call (the
 *     restart comes after get_signal(), arch/x86/kernel/signal.c). Map the
 *     wait page if the process has none; resume with PTRACE_SYSCALL.
 *  3. entry stop of the restarted call: write the slot, point the argument
 *     at it, resume with PTRACE_SYSCALL. The filter sends the call again;
 *     supervisor_wait() recognises our slot and lets it run.
 *  4. exit stop: put the program's pointer back, detach.
 *
 * The kernel runs the wait itself: its signals, EINTR, ERESTARTNOHAND
 * (clock_nanosleep restarts through the filter, converted again) and
 * restart_block (futex restarts with the host deadline it stored) are the
 * kernel's. A signal that arrives before step 3 is delivered on detach, and
 * the call restarts after its handler (ERESTARTNOINTR), as if it had come
 * just before the call. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "file-times.h"
#include "proc-util.h"
#include "fd-check.h"
#include "supervisor-internal.h"
#include "time-util.h"
#include "util.h"
#include "wait-convert.h"

/* include/linux/errno.h: never seen by programs */
#define ERESTARTSYS 512
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516
#define WAIT_PAGE_NAME "/memfd:timens-wait"
#define WAIT_PAGE_MAGIC "timens-wait-pg1" /* 16 bytes with its NUL */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define PROC_TEXT_MAX (256 * 1024)

static uint64_t *reg(struct user_regs_struct *regs, unsigned arg) {
        switch (arg) {
        case 0:
                return (uint64_t *) &regs->rdi;
        case 1:
                return (uint64_t *) &regs->rsi;
        case 2:
                return (uint64_t *) &regs->rdx;
        case 3:
                return (uint64_t *) &regs->r10;
        case 4:
                return (uint64_t *) &regs->r8;
        default:
                return (uint64_t *) &regs->r9;
        }
}

static void wait_free(struct wait_trace *w) {
        struct tns_supervisor *s = w->s;

        for (struct wait_trace **p = &s->waits; *p; p = &(*p)->next)
                if (*p == w) {
                        *p = w->next;
                        break;
                }
        s->n_waits--;
        tns_ns_unref(w->ns);
        free(w);
}

static struct wait_trace *wait_find(struct tns_supervisor *s, pid_t tid) {
        for (struct wait_trace *w = s->waits; w; w = w->next)
                if (w->tid == tid)
                        return w;
        return NULL;
}

static void log_wait(struct tns_supervisor *s, pid_t tid, int nr, int level, int error, const char *what) {
        const struct tns_syscall_desc *d = tns_syscall_by_nr(nr);

        tns_log_full(&s->log, level, error, &(struct tns_log_ctx){.pid = tid, .syscall = d ? d->name : NULL},
                     error ? "%s: %m" : "%s", what);
}

/* Target memory, trusted only if the notification is still valid after
 * the read (the pid may have been reused). */
static int read_target(const struct listener *l, const struct seccomp_notif *req, uint64_t addr, void *buf,
                       size_t len) {
        struct iovec local = {buf, len}, remote = {(void *) (uintptr_t) addr, len};
        ssize_t n = process_vm_readv(req->pid, &local, 1, &remote, 1, 0);

        if (supervisor_id_valid(l->fd, req->id) < 0)
                return -ESRCH;
        return n == (ssize_t) len ? 0 : -EFAULT;
}

/* buf into the caller's memory at addr, once its notification is known
 * to be still its (a pid reused meanwhile would be a stranger's). */
static int write_target(const struct listener *l, const struct seccomp_notif *req, uint64_t addr, const void *buf,
                        size_t len) {
        struct iovec local = {(void *) buf, len}, remote = {(void *) (uintptr_t) addr, len};

        if (supervisor_id_valid(l->fd, req->id) < 0)
                return -ESRCH;
        return process_vm_writev(req->pid, &local, 1, &remote, 1, 0) == (ssize_t) len ? 0 : -EFAULT;
}

/* What is known of process tgid's wait pages (one entry per slot of the
 * cache, taken by whichever process maps to it last). */
static struct tns_wait_page_cache *page_cache(struct tns_supervisor *s, pid_t tgid) {
        return &s->wait_pages[(unsigned) tgid % TNS_WAIT_PAGE_CACHE];
}

/* The clock of the caller's POSIX timer: not an argument, so from
 * /proc/PID/timers (the caller's thread group's timers). */
static int timer_clock(pid_t tid, int id, clockid_t *ret) {
        _cleanup_free_ char *buf = malloc(PROC_TEXT_MAX);
        char path[64];
        int r;

        if (!buf)
                return -ENOMEM;
        snprintf(path, sizeof(path), "/proc/%d/timers", tid);
        r = (int) tns_read_text(path, buf, PROC_TEXT_MAX);
        return r < 0 ? r : tns_parse_proc_timers(buf, id, ret);
}

static int fd_timer_clock(int fd, clockid_t *ret, int *ret_flags) {
        char path[64], buf[1024];
        int r;

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        r = (int) tns_read_text(path, buf, sizeof(buf));
        return r < 0 ? r : tns_parse_timerfd_fdinfo(buf, ret, ret_flags);
}

/* The caller's fd, in our fd table. A thread pidfd first: a thread may
 * have a file table of its own. */
static int target_fd(struct listener *l, const struct seccomp_notif *req, int fd, enum tns_fd_kind kind) {
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, req->pid, PIDFD_THREAD);
        int r;

        if (pidfd < 0)
                pidfd = (int) syscall(SYS_pidfd_open, req->pid, 0);
        if (pidfd < 0)
                return negative_errno();
        if (supervisor_id_valid(l->fd, req->id) < 0)
                return -ESRCH;
        /* Only an fd of that kind is taken: the close of any other file
         * may wait for ever on a FUSE server the member runs (helper-43).
         * One swapped in after this look is closed where that wait holds
         * no one. */
        r = tns_fd_kind(req->pid, fd);
        if (r < 0)
                return r == -ENOENT ? -EBADF : r;
        if (r != (int) kind)
                return -EINVAL;
        r = (int) syscall(SYS_pidfd_getfd, pidfd, fd, 0);
        if (r < 0)
                return negative_errno();
        if (tns_fd_kind(0, r) != (int) kind) {
                (void) tns_supervisor_close_untrusted(l->s, r);
                return -EINVAL;
        }
        return r;
}

static int realtime_now(const struct tns_ns *ns, struct timespec *ret) {
        struct timespec host;

        if (clock_gettime(CLOCK_REALTIME, &host) < 0)
                return negative_errno();
        return tns_ns_now(ns, TNS_CLASS_REALTIME, &host, ret);
}

/* The map waits of class c in ns are converted by now (tns_wait_map():
 * a frozen clock's waits pass in host time). */
static int class_wait_map(const struct tns_ns *ns, int c, struct tns_rate_map *ret) {
        struct tns_rate_map m;
        struct timespec now;
        int64_t host = 0;

        if (clock_gettime(tns_class_clock(c), &now) < 0 || tns_ts_to_ns(&now, &host) < 0)
                return -EINVAL;
        tns_ns_rate_map(ns, c, &m);
        tns_wait_map(&m, host, ret);
        return 0;
}

/* What the kernel must wait for, from what the caller gave (`in`, or the
 * argument in *reg), with the namespace's clock of class c now: its rate
 * in a rated namespace (lib/core/wait-convert.h, tns_wait_convert_rated),
 * else its offset. -EINVAL: the kernel's own error; -ENOENT: nothing to
 * convert. */
static int convert(const struct tns_ns *ns, int c, const struct tns_wait_spec *spec, const void *in, void *out,
                   uint64_t *reg) {
        if (spec->now) {
                /* File times: "now" is the namespace's realtime (in: NULL
                 * for a NULL pointer). */
                struct timespec now;

                if (realtime_now(ns, &now) < 0)
                        return -EINVAL;
                return tns_file_times_now(spec->kind, in, &now, out);
        }
        if (tns_ns_rated(ns)) {
                struct tns_rate_map wm;

                if (class_wait_map(ns, c, &wm) < 0)
                        return -EINVAL;
                return tns_wait_convert_rated(spec, &wm, in, out, reg);
        }
        if (spec->relative)
                return -ENOENT;
        return spec->kind == TNS_WAIT_TIMESPEC ? tns_wait_ts_to_host(in, tns_ns_offset(ns, c), out)
                                               : tns_wait_its_to_host(in, tns_ns_offset(ns, c), out);
}

/* The class whose rate a wait follows: a relative wait's is MONOTONIC's
 * whatever its clock (the kernel measures a relative timer on
 * CLOCK_MONOTONIC, hrtimer_init()'s REALTIME-to-MONOTONIC switch, and
 * glibc's sleep() and nanosleep() are relative CLOCK_REALTIME sleeps):
 * with --rate realtime=R alone, `sleep 1` still lasts a second of
 * MONOTONIC. Absolute waits follow their clock. */
static int wait_rate_class(int c, bool relative) {
        return relative && c == TNS_CLASS_REALTIME ? TNS_CLASS_MONOTONIC : c;
}

/* The caller's timerfd (its args[0]) in *ret_fd and its clock's class:
 * 0, -ESRCH if the caller is gone, or another -errno for a call the
 * kernel answers (EBADF, EINVAL: its own). */
static int target_timerfd(struct listener *l, const struct seccomp_notif *req, int *ret_fd, int *ret_class,
                          bool *ret_abs) {
        _cleanup_close_ int fd = target_fd(l, req, (int) req->data.args[0], TNS_FD_TIMERFD);
        clockid_t clock;
        int c, flags = 0;

        if (fd < 0)
                return fd;
        if (fd_timer_clock(fd, &clock, &flags) < 0 || (c = tns_wait_clock_class(clock)) < 0)
                return -EINVAL;
        *ret_fd = TAKE_FD(fd);
        *ret_class = c;
        *ret_abs = flags & TFD_TIMER_ABSTIME;
        return 0;
}

/* A timer's value and interval as the kernel reports them, made the
 * durations of rated namespace ns's class c (tns_wait_timer_from_host()). */
static int timer_to_ns(const struct tns_ns *ns, int c, struct itimerspec *its) {
        struct tns_rate_map wm;

        if (class_wait_map(ns, c, &wm) < 0)
                return -EINVAL;
        return tns_wait_timer_from_host(TNS_WAIT_ITIMERSPEC, wm.mult, its);
}

int64_t supervisor_timerfd_gettime(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns) {
        _cleanup_close_ int fd = -EBADF;
        struct itimerspec cur;
        bool abs;
        int c, r;

        if (!tns_ns_rated(ns))
                return TNS_REPLY_CONTINUE;
        r = target_timerfd(l, req, &fd, &c, &abs);
        if (r < 0)
                return r == -ESRCH ? r : TNS_REPLY_CONTINUE;
        if (timerfd_gettime(fd, &cur) < 0)
                return negative_errno();
        /* Left of a relative timer: MONOTONIC's time (helper-47). */
        if (timer_to_ns(ns, wait_rate_class(c, !abs), &cur) < 0)
                return TNS_REPLY_CONTINUE;
        return write_target(l, req, req->data.args[1], &cur, sizeof(cur));
}

/* timerfd_settime(fd, flags, new, old) on the target's own timer, with
 * the converted value: the timer, its expirations and its old value are
 * the kernel's (do_timerfd_settime, fs/timerfd.c). Anything we cannot
 * convert goes to the kernel unchanged for its own errno. */
static int64_t timerfd_on_behalf(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns,
                                 const struct tns_wait_spec *spec, const struct itimerspec *in) {
        _cleanup_close_ int fd = -EBADF;
        struct itimerspec conv, old;
        int flags = (int) req->data.args[1], c, r;
        bool old_abs;
        int64_t off;

        if (flags & ~(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET))
                return TNS_REPLY_CONTINUE;
        r = target_timerfd(l, req, &fd, &c, &old_abs);
        if (r < 0)
                return r == -ESRCH ? r : TNS_REPLY_CONTINUE;
        if (tns_ns_rated(ns)) {
                /* A rated namespace's clocks (the kernel's offsets of a
                 * nested kernel namespace are not added under a rate: see
                 * docs/design/kernel-timens.md). */
                if (convert(ns, wait_rate_class(c, spec->relative), spec, in, &conv, NULL) < 0)
                        return TNS_REPLY_CONTINUE;
        } else {
                /* Run here, in our own kernel time namespace: the caller's
                 * kernel offsets are ours to convert too (supervisor-kns.c).
                 * A relative timer (trapped in a rate-capable namespace at
                 * rate 1) needs nothing. */
                off = supervisor_offset(l, (pid_t) req->pid, ns, c);
                if (spec->relative || off == 0 || tns_wait_its_to_host(in, off, &conv) < 0)
                        return TNS_REPLY_CONTINUE;
        }
        if (timerfd_settime(fd, flags, &conv, &old) < 0)
                return negative_errno();
        l->s->stats.waits_converted++;
        /* What was left of the timer, a duration: the namespace's, at the
         * rate of the class it ran on as it was set before (helper-47). */
        if (tns_ns_rated(ns) && timer_to_ns(ns, wait_rate_class(c, !old_abs), &old) < 0)
                old = (struct itimerspec){};
        /* Set, then EFAULT: as the kernel's copy_to_user. */
        return req->data.args[3] != 0 ? write_target(l, req, req->data.args[3], &old, sizeof(old)) : 0;
}

static int wait_memfd(struct tns_supervisor *s) {
        int fd;

        if (s->wait_memfd >= 0)
                return s->wait_memfd;
        fd = memfd_create("timens-wait", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return negative_errno();
        /* A magic in slot 0 (which no wait uses), then zeros; every process
         * gets private copies of the pages it writes. */
        if (ftruncate(fd, TNS_WAIT_PAGE_SIZE) < 0 || pwrite(fd, WAIT_PAGE_MAGIC, 16, 0) != 16 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
                int r = negative_errno();

                close(fd);
                return r;
        }
        s->wait_memfd = fd;
        return fd;
}

static int add_wait_memfd(struct listener *l, const struct seccomp_notif *req) {
        struct seccomp_notif_addfd addfd = {.id = req->id, .newfd_flags = O_CLOEXEC};
        int r = wait_memfd(l->s);

        if (r < 0)
                return r;
        addfd.srcfd = (uint32_t) r;
        r = ioctl(l->fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
        return r < 0 ? negative_errno() : r;
}

/* A slot no other held wait of the process uses, the first from this
 * instance's base on: a predecessor's (random) base is elsewhere, so that
 * a thread it left pointing at a slot of its own (a converted absolute
 * sleep, read again when a stop or a debugger restarts it) is unlikely
 * to find our deadline there. */
static int slot_alloc(struct tns_supervisor *s, pid_t tgid) {
        uint64_t used[TNS_WAIT_SLOTS / 64] = {1}; /* slot 0: the magic */

        for (struct wait_trace *w = s->waits; w; w = w->next)
                if (w->tgid == tgid)
                        used[w->slot / 64] |= UINT64_C(1) << (w->slot % 64);
        for (unsigned i = 0; i < TNS_WAIT_SLOTS; i++) {
                unsigned k = (s->wait_slot_base + i) % TNS_WAIT_SLOTS;

                if (!(used[k / 64] & (UINT64_C(1) << (k % 64))))
                        return (int) k;
        }
        return -ENOSPC;
}

/* The caller's wait page: the last address seen for its process if the
 * magic is still there (an exec replaces the whole mm), else from
 * /proc/PID/maps (40 us for a JVM's 200 mappings; the cache read, 2). 0 if
 * it has none yet, remembered too: only we map one (map_page() notes it),
 * and an instance before us, whose pages the first look finds, is gone;
 * an exec or a reused id has none. So a program's own explicit file times
 * near now (tns_file_times_recover()) cost one look per process. */
#define WAIT_PAGE_NONE UINT64_MAX

static int wait_page_of(struct listener *l, const struct seccomp_notif *req, pid_t tgid, uint64_t *ret) {
        struct tns_wait_page_cache *c = page_cache(l->s, tgid);
        uint64_t pages[1 + ELEMENTSOF(c->more)] = {};
        char magic[16];
        int r;

        const pid_t tail_tid = c->tgid == tgid ? c->tail_tid : 0;
        const bool no_steps = c->tgid == tgid && c->no_steps;

        if (c->tgid == tgid && c->addr == WAIT_PAGE_NONE) {
                *ret = 0;
                return 0;
        }
        if (c->tgid == tgid && c->addr) {
                r = read_target(l, req, c->addr, magic, sizeof(magic));
                if (r == -ESRCH)
                        return r;
                if (r == 0 && memcmp(magic, WAIT_PAGE_MAGIC, sizeof(magic)) == 0) {
                        *ret = c->addr;
                        return 0;
                }
        }
        *ret = 0;
        r = tns_proc_find_mappings(req->pid, WAIT_PAGE_NAME, 0, pages, ELEMENTSOF(pages));
        if (r < 0)
                return r;
        *ret = r > 0 ? pages[0] : 0;
        *c = (struct tns_wait_page_cache){.tgid = tgid,
                                          .tail_tid = *ret ? 0 : tail_tid,
                                          .no_steps = !*ret && no_steps,
                                          .addr = *ret ? *ret : WAIT_PAGE_NONE,
                                          .more = {pages[1], pages[2], pages[3]}};
        return 0;
}

/* Whether ptr is in a wait page of process tgid: page (its own, 0 if
 * none) or another one wait_page_of() found. */
static bool in_wait_pages(struct tns_supervisor *s, pid_t tgid, uint64_t page, uint64_t ptr) {
        const struct tns_wait_page_cache *c = page_cache(s, tgid);

        if (page && ptr >= page && ptr - page < TNS_WAIT_PAGE_SIZE)
                return true;
        if (c->tgid != tgid)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(c->more); i++)
                if (c->more[i] && ptr >= c->more[i] && ptr - c->more[i] < TNS_WAIT_PAGE_SIZE)
                        return true;
        return false;
}

static const struct tns_ns *tree_root(const struct tns_ns *ns) {
        while (ns->parent)
                ns = ns->parent;
        return ns;
}

/* Whether the namespace tree of ns holds its share of waits already. */
static bool tree_full(const struct tns_supervisor *s, const struct tns_ns *ns) {
        const struct tns_ns *root = tree_root(ns);
        unsigned n = 0;

        for (const struct wait_trace *w = s->waits; w; w = w->next)
                if (tree_root(w->ns) == root && ++n >= TNS_MAX_WAITS_PER_TREE)
                        return true;
        return false;
}

/* Whether times at ptr are surely the thread's own: its process was seen
 * with no wait page, or with one elsewhere (struct tns_supervisor,
 * wait_page_by_tid). Otherwise the loop looks. */
static bool outside_wait_page(const struct tns_supervisor *s, pid_t tid, uint64_t ptr) {
        const struct tns_wait_page_cache *c = &s->wait_page_by_tid[(unsigned) tid % TNS_WAIT_PAGE_CACHE];

        return c->tgid == tid && (c->addr == 0 || ptr < c->addr || ptr - c->addr >= TNS_WAIT_PAGE_SIZE);
}

/* Whether a call that sets file times (spec, from
 * tns_file_times_classify()) runs as it is in ns: 1 with the host's
 * realtime the namespace's, or explicit times (tar, cp -p: no UTIME_NOW),
 * or bad ones (the kernel's errno); 0 if it needs the namespace's now
 * (a hold); 2 for explicit times that may be a "now" a predecessor of
 * ours rewrote and never let run (tns_file_times_recover(): the loop
 * looks whether they lie in a wait page of ours); -ESRCH for a caller
 * gone. */
static int file_times_as_is(const struct listener *l, const struct seccomp_notif *req, const struct tns_ns *ns,
                            const struct tns_wait_spec *spec) {
        unsigned char in[32], out[32]; /* the largest file times (tns_wait_size()) */
        uint64_t ptr = req->data.args[spec->arg];
        struct timespec now;
        bool null;
        int r;

        if (!tns_ns_rated(ns) && tns_ns_offset(ns, TNS_CLASS_REALTIME) == 0)
                return 1;
        if (ptr == 0)
                return 0;
        r = read_target(l, req, ptr, in, tns_wait_size(spec->kind));
        if (r == -ESRCH)
                return r;
        if (r < 0)
                return 1;
        r = convert(ns, TNS_CLASS_REALTIME, spec, in, out, NULL);
        if (r == 0)
                return 0;
        /* Our slots are 32-byte aligned; times not near now are the
         * program's own, told at once. */
        return r == -ENOENT && ptr % TNS_WAIT_SLOT_SIZE == 0 && realtime_now(ns, &now) == 0 &&
                               tns_file_times_recover(spec->kind, in, &now, out, &null) == 0
                       ? 2
                       : 1;
}

/* A file-times call pointing at times a predecessor of ours wrote in a
 * slot of the caller's wait page for a "now", which it never let run (it
 * died: kill -9, a crash; a stop or a hand-over takes such calls back,
 * tns_supervisor_settle_held_calls()): run as the "now" it was, or our
 * explicit times would meet a non-owner's EPERM. *in becomes what the
 * program asked, as far as it can be told (tns_file_times_recover()):
 * *in_null for a NULL pointer, else UTIME_NOW and UTIME_OMIT, which are
 * written over the slot, so that a run of the program's own call (after
 * EPERM) finds them there. -ESRCH for a caller gone; another error: it
 * runs as it is. */
static int recover_file_times(struct listener *l, const struct seccomp_notif *req, const struct tns_ns *ns,
                              const struct tns_wait_spec *spec, void *in, bool *in_null) {
        const uint64_t ptr = req->data.args[spec->arg];
        unsigned char back[32];
        struct timespec now;
        char path[64];
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = realtime_now(ns, &now);
        if (r < 0)
                return r;
        r = tns_file_times_recover(spec->kind, in, &now, back, in_null);
        if (r < 0)
                return r; /* changed since: the program's own now */
        if (!*in_null) {
                snprintf(path, sizeof(path), "/proc/%d/mem", req->pid);
                fd = open(path, O_RDWR | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                /* Not into a stranger that got the pid of a caller gone. */
                if (supervisor_id_valid(l->fd, req->id) < 0)
                        return -ESRCH;
                /* FOLL_FORCE: a private copy of the read-only page. */
                if (pwrite(fd, back, tns_wait_size(spec->kind), (off_t) ptr) != (ssize_t) tns_wait_size(spec->kind))
                        return -EIO;
                memcpy(in, back, tns_wait_size(spec->kind));
        }
        tns_log_full(&l->s->log, LOG_DEBUG, 0, &(struct tns_log_ctx){.pid = req->pid},
                     "Times a predecessor wrote for a \"now\" and never let run: run as that \"now\"");
        return 0;
}

/* Step 1: hold the caller. Returns -ERESTARTNOINTR for the reply. */
static int64_t hold(struct listener *l, const struct seccomp_notif *req, pid_t tgid, struct tns_ns *ns, int c,
                    const struct tns_wait_spec *spec, const void *data, size_t len, uint64_t page, uint64_t given) {
        struct tns_supervisor *s = l->s;
        _cleanup_free_ struct wait_trace *w = NULL;
        int r;

        if (s->n_waits >= TNS_MAX_WAITS_IN_FLIGHT || tree_full(s, ns) || supervisor_ensure_sigchld(s) < 0)
                return -EBUSY;
        /* Its program is in an exec that kills this thread: never seized
         * then (supervisor_exec_in_flight()), it waits unconverted. */
        if (supervisor_exec_in_flight(s, tgid))
                return -EAGAIN;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        r = slot_alloc(s, tgid);
        if (r < 0)
                return r;
        w->slot = (unsigned) r;
        if (ptrace(PTRACE_SEIZE, req->pid, 0, PTRACE_O_TRACESYSGOOD) < 0)
                return negative_errno(); /* a debugger holds it */
        /* Still the caller, not a task that reused its id: it waits for
         * our reply as long as the notification is valid. */
        r = supervisor_id_valid(l->fd, req->id) < 0 ? -ESRCH : 0;
        w->target_fd = -EBADF;
        /* A read back writes into the program's own memory: no page. */
        if (r >= 0 && page == 0 && !spec->readback) {
                r = add_wait_memfd(l, req);
                w->target_fd = r;
        }
        if (r >= 0)
                r = ptrace(PTRACE_INTERRUPT, req->pid, 0, 0) < 0 ? negative_errno() : 0;
        if (r < 0) {
                /* It sleeps in the seccomp wait, not in a ptrace stop, so
                 * it cannot be detached now (PTRACE_DETACH would fail and
                 * leave it traced: its next signal would stop it for
                 * good). It stops for this interrupt once replied to, and
                 * is detached then, or reaped if it died (supervisor-exec.c). */
                (void) ptrace(PTRACE_INTERRUPT, req->pid, 0, 0);
                supervisor_trace_orphan(s, req->pid, tgid);
                return r;
        }
        w->s = s;
        w->phase = WAIT_INTERRUPT;
        w->tid = req->pid;
        w->tgid = tgid;
        w->nr = req->data.nr;
        memcpy(w->args, req->data.args, sizeof(w->args));
        w->arg = spec->arg;
        w->given = given;
        w->page = page;
        w->ns = tns_ns_ref(ns);
        w->clock_class = c;
        w->kind = spec->kind;
        w->relative = spec->relative;
        w->writes_back = spec->writes_back;
        w->rem_arg = spec->rem_arg;
        w->now = spec->now;
        w->as_setitimer = w->nr == SYS_alarm;
        w->readback = spec->readback;
        w->in_null = !data;
        if (data)
                memcpy(w->data, data, len);
        w->len = data ? len : 0;
        w->next = s->waits;
        s->waits = TAKE_PTR(w);
        s->n_waits++;
        return -ERESTARTNOINTR;
}

/* The offset class of the wait's clock: from the arguments, or for a POSIX
 * timer from /proc (-ENOENT: no such timer, or a clock we do not shift);
 * -1 for a timerfd, whose clock timerfd_on_behalf() reads from its fd. */
static int wait_class(const struct seccomp_notif *req, const struct tns_wait_spec *spec) {
        clockid_t clock;

        if (spec->clock_class >= 0 || spec->via_fd)
                return spec->clock_class;
        if (timer_clock(req->pid, (int) req->data.args[0], &clock) < 0)
                return -ENOENT;
        return tns_wait_clock_class(clock);
}

int64_t supervisor_wait(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns,
                        const struct tns_syscall_desc *d) {
        struct wait_trace *w = wait_find(l->s, req->pid);
        struct tns_wait_spec spec;
        union {
                struct timespec ts;
                struct itimerspec its;
        } in, out;
        struct tns_proc_status st = {};
        uint64_t page = 0, ptr, args[6], reg_value, given;
        bool in_null, recovered = false;
        size_t len;
        int64_t r;
        int c;

        /* Step 3's call, pointing at our slot (or with the converted
         * value in its register, which classifies as nothing: marked),
         * or the program's own call run again: let it run, and note that
         * it was (tns_supervisor_settle_held_calls()). */
        if (w && (w->phase == WAIT_RUNNING || w->phase == WAIT_RERUN)) {
                w->let_run = w->let_run || w->phase == WAIT_RUNNING;
                return TNS_REPLY_CONTINUE;
        }
        for (unsigned i = 0; i < 6; i++)
                args[i] = req->data.args[i];
        /* Absolute waits; in a rated namespace, relative ones too; file
         * times set to "now". */
        if (tns_wait_classify(d->id, args, &spec) < 0 &&
            (!tns_ns_rated(ns) || tns_wait_classify_rated(d->id, args, &spec) < 0) &&
            tns_file_times_classify(d->id, args, &spec) < 0)
                return TNS_REPLY_CONTINUE;
        given = ptr = req->data.args[spec.arg];
        /* File times that run as they are: told before any /proc read. */
        if (spec.now) {
                r = file_times_as_is(l, req, ns, &spec);
                if (r < 0)
                        return r;
                if (r == 1 || (r == 2 && outside_wait_page(l->s, (pid_t) req->pid, ptr)))
                        return TNS_REPLY_CONTINUE;
                recovered = r == 2;
        }
        if (!spec.via_fd) {
                r = tns_proc_status(req->pid, &st);
                if (r == 0)
                        r = wait_page_of(l, req, st.tgid, &page);
                if (r == -ESRCH || r == -ENOENT)
                        return -ESRCH; /* gone */
                if (r < 0)
                        return TNS_REPLY_CONTINUE;
        }
        if (!spec.via_fd && page == 0) {
                const struct tns_wait_page_cache *wc = page_cache(l->s, st.tgid);

                if (wc->tgid == st.tgid && wc->no_steps)
                        return TNS_REPLY_CONTINUE; /* on_interrupt_stop() says why */
        }
        if (recovered)
                l->s->wait_page_by_tid[(unsigned) req->pid % TNS_WAIT_PAGE_CACHE] =
                        (struct tns_wait_page_cache){.tgid = (pid_t) req->pid, .addr = page};
        /* A slot of ours the engine does not know (the supervisor was
         * restarted while the call was held): a wait already converted,
         * or times a predecessor wrote for a "now" (recovered below).
         * Explicit times anywhere else are the program's own. */
        if ((tns_wait_size(spec.kind) && in_wait_pages(l->s, st.tgid, page, ptr)) != recovered)
                return TNS_REPLY_CONTINUE;
        if (w)
                return TNS_REPLY_CONTINUE; /* cannot happen: the thread is in our hands */
        c = wait_class(req, &spec);
        if (c >= 0)
                c = wait_rate_class(c, spec.relative);
        /* getitimer, timer_gettime: held to the call's end, where its
         * result is made the namespace's (on_exit_stop()). */
        if (spec.readback) {
                if (c < 0 || !tns_ns_rated(ns) || l->s->serving_on_thread)
                        return TNS_REPLY_CONTINUE;
                r = hold(l, req, st.tgid, ns, c, &spec, NULL, 0, page, given);
                if (r == -ERESTARTNOINTR || r == -ESRCH)
                        return r;
                log_wait(l->s, req->pid, req->data.nr, LOG_DEBUG, (int) r,
                         "Failed to hold a timer's read back, it reads host durations");
                return TNS_REPLY_CONTINUE;
        }
        if (c == -ENOENT || (c >= 0 && !tns_ns_rated(ns) && tns_ns_offset(ns, c) == 0))
                return TNS_REPLY_CONTINUE; /* no such timer, a CPU clock, no offset: the kernel's */
        len = tns_wait_size(spec.kind);
        /* File times with a NULL pointer: "now", nothing to read. */
        in_null = spec.now && ptr == 0;
        r = len && !in_null ? read_target(l, req, ptr, &in, len) : 0;
        if (r == -ESRCH)
                return r;
        if (r < 0)
                return TNS_REPLY_CONTINUE; /* the kernel's EFAULT */
        if (recovered) {
                r = recover_file_times(l, req, ns, &spec, &in, &in_null);
                if (r < 0)
                        return r == -ESRCH ? r : TNS_REPLY_CONTINUE;
                if (in_null)
                        given = 0;
        }
        if (spec.via_fd)
                return timerfd_on_behalf(l, req, ns, &spec, &in.its);
        /* alarm: its seconds as setitimer(ITIMER_REAL)'s value, the call
         * made one at its entry stop (on_entry_stop()), to the
         * microsecond: alarm(1) at x2 took a whole host second. */
        if (spec.kind == TNS_WAIT_INT_SEC) {
                const struct itimerval alarm = {.it_value.tv_sec = (uint32_t) req->data.args[0]};

                spec.kind = TNS_WAIT_ITIMERVAL;
                len = sizeof(alarm);
                memcpy(&in, &alarm, len);
                in_null = false;
        }
        reg_value = ptr;
        r = convert(ns, c, &spec, in_null ? NULL : &in, &out, &reg_value);
        if (r < 0)
                return TNS_REPLY_CONTINUE; /* the kernel's EINVAL, or nothing to convert */
        /* A receive thread serves only what runs as it is
         * (supervisor_file_times_as_is()); times changed since by the
         * caller itself: its own call, as it is. */
        if (l->s->serving_on_thread)
                return TNS_REPLY_CONTINUE;
        r = hold(l, req, st.tgid, ns, c, &spec, in_null ? NULL : &in, len, page, given);
        if (r == -ERESTARTNOINTR || r == -ESRCH)
                return r;
        if (r == -EAGAIN)
                return TNS_REPLY_CONTINUE; /* its program's exec ends it: no failure */
        /* Held by a debugger, out of slots: the call runs unconverted.
         * Warned about once: a traced program may wait in a loop. */
        if (spec.now)
                l->s->stats.file_times_host++;
        else
                l->s->stats.waits_unconverted++;
        log_wait(l->s, req->pid, req->data.nr,
                 l->s->stats.waits_unconverted + l->s->stats.file_times_host == 1 ? LOG_WARNING : LOG_DEBUG, (int) r,
                 spec.now ? "Failed to hold a call that sets file times, they get the host's time"
                          : "Failed to hold an absolute wait for conversion, it waits for the unconverted deadline");
        return TNS_REPLY_CONTINUE;
}

bool supervisor_file_times_as_is(const struct listener *l, const struct seccomp_notif *req) {
        const struct tns_syscall_desc *d = tns_syscall_by_nr(req->data.nr);
        struct tns_wait_spec spec;
        uint64_t args[6];
        int r;

        for (unsigned i = 0; i < 6; i++)
                args[i] = req->data.args[i];
        /* A caller gone: answered at once too (its answer goes nowhere). */
        if (!d || tns_file_times_classify(d->id, args, &spec) < 0)
                return false;
        r = file_times_as_is(l, req, l->ns, &spec);
        return r < 0 || r == 1 || (r == 2 && outside_wait_page(l->s, (pid_t) req->pid, req->data.args[spec.arg]));
}

/* Leaves the thread to itself: the program's pointer back if we changed
 * it, and a signal from a signal-delivery stop delivered. */
static void release(struct wait_trace *w, struct user_regs_struct *regs, int sig) {
        if (regs && ptrace(PTRACE_SETREGS, w->tid, 0, regs) < 0)
                log_wait(w->s, w->tid, w->nr, LOG_WARNING, negative_errno(), "Failed to restore registers");
        /* PTRACE_DETACH needs a ptrace stop: a thread not in one was killed
         * since (SIGKILL wakes a traced task; an exec by another thread of
         * its program sends it). It dies traced, a zombie only we can
         * reap, and that exec waits in de_thread() until we have: follow
         * it to its end, as the exec traces do. */
        if (ptrace(PTRACE_DETACH, w->tid, 0, sig) < 0)
                supervisor_trace_orphan(w->s, w->tid, w->tgid);
        wait_free(w);
}

/* The wait page mapped by the thread itself (lib/kernel/wait-tail.h):
 * let go, it maps the page, closes the fd and makes its call again, which
 * comes back to be held with the page there. A supervisor that dies at
 * any instant leaves it nothing half done, where the single steps of
 * map_page() left a trap flag (SIGTRAP at its next instruction: the
 * kernel's exit_ptrace() does not clear it) or our registers. -ENOENT: no
 * room for the tail, no kernel vDSO of this host's in the program, or
 * this thread was sent it last and no page came of it (a failed mmap):
 * map_page() then. */
static int map_page_by_tail(struct wait_trace *w, const struct user_regs_struct *regs) {
        const struct tns_vdso_host *h = supervisor_vdso(w->s);
        struct tns_wait_page_cache *c = page_cache(w->s, w->tgid);
        int r;

        if (!h || (c->tgid == w->tgid && c->tail_tid == w->tid))
                return -ENOENT;
        r = tns_wait_tail_send(h, w->tid, regs, w->nr, w->target_fd);
        if (r < 0)
                return r;
        /* Other threads held meanwhile are sent it too: a page each (a
         * successor knows slots in any: wait_page_of()), where a thread
         * left to wait for another's page would wait while that one is
         * stopped. */
        *c = (struct tns_wait_page_cache){.tgid = w->tgid, .tail_tid = w->tid};
        memset(w->s->wait_page_by_tid, 0, sizeof(w->s->wait_page_by_tid));
        return 0;
}

/* Maps the wait page in the stopped thread (through its own `syscall`
 * instruction, just before its ip) and closes the fd we gave it, by
 * single steps: where the wait tail cannot go (map_page_by_tail()). */
static int map_page(struct wait_trace *w, const struct user_regs_struct *regs) {
        const uint64_t map[6] = {0, TNS_WAIT_PAGE_SIZE, PROT_READ, MAP_PRIVATE, (uint64_t) w->target_fd, 0};
        const uint64_t cls[6] = {(uint64_t) w->target_fd};
        struct tns_held_signals held = {};
        int64_t x = 0;
        int r;

        r = tns_ptrace_syscall(w->tid, regs, regs->rip - 2, SYS_mmap, map, &held, &x);
        (void) tns_ptrace_syscall(w->tid, regs, regs->rip - 2, SYS_close, cls, &held, &(int64_t){0});
        if (ptrace(PTRACE_SETREGS, w->tid, 0, regs) < 0 && r >= 0)
                r = negative_errno();
        /* Signals that came meanwhile: sent again, they interrupt nothing
         * yet (the call restarts after their handlers). */
        for (unsigned i = 0; i < held.n; i++)
                (void) syscall(SYS_tgkill, w->tgid, w->tid, held.sig[i]);
        if (r < 0)
                return r;
        if (x < 0 && x > -4096)
                return (int) x;
        w->page = (uint64_t) x;
        w->s->stats.wait_pages_stepped++;
        w->target_fd = -EBADF;
        *page_cache(w->s, w->tgid) = (struct tns_wait_page_cache){.tgid = w->tgid, .addr = w->page};
        memset(w->s->wait_page_by_tid, 0, sizeof(w->s->wait_page_by_tid));
        return 0;
}

/* The deadline converted with the clock of now, into the slot, and in
 * *ret_arg what the argument becomes: the slot's address, or for the
 * kinds that are the argument itself, the converted value. */
static int write_slot(struct wait_trace *w, uint64_t *ret_arg) {
        struct tns_wait_spec spec = {
                .arg = w->arg, .kind = w->kind, .clock_class = w->clock_class, .relative = w->relative};
        union {
                struct timespec ts;
                struct itimerspec its;
        } in, out;
        uint64_t v = w->args[w->arg];
        char path[64];
        _cleanup_close_ int fd = -EBADF;
        int r;

        memcpy(&in, w->data, w->len);
        spec.now = w->now;
        r = convert(w->ns, w->clock_class, &spec, w->in_null ? NULL : &in, &out, &v);
        if (r < 0)
                return r;
        if (w->writes_back && w->relative) {
                struct timespec now;
                int64_t host = 0, d;

                /* A timeval's microseconds, a timespec's nanoseconds: the
                 * kernel's end is now plus that. */
                d = w->kind == TNS_WAIT_TIMEVAL ? out.ts.tv_sec * INT64_C(1000000000) + out.ts.tv_nsec * 1000
                                                : out.ts.tv_sec * INT64_C(1000000000) + out.ts.tv_nsec;
                if (out.ts.tv_sec >= 0 && out.ts.tv_sec < INT64_C(4000000000) &&
                    clock_gettime(CLOCK_MONOTONIC, &now) == 0 && tns_ts_to_ns(&now, &host) == 0)
                        w->end_host = host + d;
        }
        if (!tns_wait_size(w->kind)) {
                *ret_arg = v;
                return 0;
        }
        *ret_arg = w->page + w->slot * TNS_WAIT_SLOT_SIZE;

        snprintf(path, sizeof(path), "/proc/%d/mem", w->tid);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        /* FOLL_FORCE: a private copy of the read-only page. */
        if (pwrite(fd, &out, tns_wait_size(w->kind), (off_t) (w->page + w->slot * TNS_WAIT_SLOT_SIZE)) !=
            (ssize_t) tns_wait_size(w->kind))
                return -EIO;
        return 0;
}

static bool same_call(const struct wait_trace *w, const struct user_regs_struct *regs) {
        struct user_regs_struct r = *regs;

        if ((int64_t) r.orig_rax != w->nr)
                return false;
        for (unsigned i = 0; i < 6; i++)
                if (*reg(&r, i) != w->args[i])
                        return false;
        return true;
}

static bool single_threaded(pid_t tgid) {
        struct tns_proc_status st;

        return tns_proc_status(tgid, &st) == 0 && st.threads == 1;
}

static void on_interrupt_stop(struct wait_trace *w) {
        struct user_regs_struct regs;
        int r;

        /* Our reply stands: the call will be restarted. */
        if (ptrace(PTRACE_GETREGS, w->tid, 0, &regs) < 0 || (int64_t) regs.rax != -ERESTARTNOINTR ||
            (int64_t) regs.orig_rax != w->nr)
                return release(w, NULL, 0);
        if (w->target_fd >= 0) {
                r = map_page_by_tail(w, &regs);
                if (r >= 0) {
                        w->s->stats.wait_pages_tail++;
                        log_wait(w->s, w->tid, w->nr, LOG_DEBUG, 0,
                                 "Sent the wait tail, the program maps its wait page");
                        return release(w, NULL, 0);
                }
                /* The single steps wait for the process's mmap lock: only
                 * where no other thread of its can hold it (helper-46: one
                 * faulted on its own mapping of /proc/uptime while the
                 * loop waited for the step). Else its waits run as they
                 * are: it made the tail impossible (its vDSO gone). */
                if (!single_threaded(w->tgid)) {
                        struct tns_wait_page_cache *c = page_cache(w->s, w->tgid);

                        if (c->tgid == w->tgid)
                                c->no_steps = true;
                        log_wait(w->s, w->tid, w->nr, LOG_DEBUG, 0,
                                 "No wait page for a thread of a process of several without our tail: its waits "
                                 "run unconverted");
                        return release(w, NULL, 0);
                }
                r = map_page(w, &regs);
                if (r < 0) {
                        log_wait(w->s, w->tid, w->nr, LOG_WARNING, r, "Failed to map the wait page");
                        return release(w, NULL, 0); /* restarts, and is sent again */
                }
        }
        if (ptrace(PTRACE_SYSCALL, w->tid, 0, 0) < 0)
                return release(w, NULL, 0);
        w->phase = WAIT_ENTRY;
}

static void on_entry_stop(struct wait_trace *w) {
        struct user_regs_struct regs;

        uint64_t arg = 0;

        if (ptrace(PTRACE_GETREGS, w->tid, 0, &regs) < 0 || !same_call(w, &regs))
                return release(w, NULL, 0);
        if (w->readback)
                arg = w->args[w->arg]; /* the program's own call */
        else if (write_slot(w, &arg) < 0)
                return release(w, NULL, 0);
        *reg(&regs, w->arg) = arg;
        if (w->as_setitimer) {
                /* setitimer(ITIMER_REAL, slot, old): the old value goes
                 * below the red zone of the thread's stack, its own
                 * memory (our slot is read-only), for alarm's result. */
                w->alarm_old = (regs.rsp - 128 - sizeof(struct itimerval)) & ~UINT64_C(15);
                regs.orig_rax = SYS_setitimer;
                regs.rdi = 0; /* ITIMER_REAL */
                regs.rsi = arg;
                regs.rdx = w->alarm_old;
        }
        if (ptrace(PTRACE_SETREGS, w->tid, 0, &regs) < 0 || ptrace(PTRACE_SYSCALL, w->tid, 0, 0) < 0)
                return release(w, NULL, 0);
        w->phase = WAIT_RUNNING;
        if (!w->now)
                w->s->stats.waits_converted++;
}

/* A held file-times call that failed with its explicit times (not
 * interrupted: a restart code or EINTR is the kernel's to act on). */
static bool file_times_failed(const struct wait_trace *w, const struct user_regs_struct *regs) {
        int64_t rax = (int64_t) regs->rax;

        return w->now && w->phase == WAIT_RUNNING && rax < 0 && rax >= -4095 && rax != -EINTR &&
               !(rax <= -ERESTARTSYS && rax >= -ERESTART_RESTARTBLOCK);
}

/* The registers of a syscall exit as they were before the call: the
 * program makes it again (x86-64 `syscall`: two bytes). */
static void rewind_call(struct user_regs_struct *regs) {
        regs->rax = regs->orig_rax;
        regs->rip -= 2;
}

/* personality(2)'s STICKY_TIMEOUTS: the kernel writes no time left back
 * and makes an interrupted select EINTR itself. */
#define TNS_STICKY_TIMEOUTS 0x4000000

static bool sticky_timeouts(pid_t tid) {
        char path[64], buf[32];
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/personality", tid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
                return false;
        buf[n] = '\0';
        return strtoul(buf, NULL, 16) & TNS_STICKY_TIMEOUTS;
}

/* ppoll's sigmask (args[3]) or pselect6's (args[5]: {sigset *, size}), a
 * mask the call swaps in while it waits. The thread is stopped in our
 * hands: its memory is read as it is now. */
static bool call_has_sigmask(const struct wait_trace *w) {
        uint64_t p = 0;

        if (w->nr == SYS_ppoll)
                return w->args[3] != 0;
        if (w->nr != SYS_pselect6 || w->args[5] == 0)
                return false;
        return process_vm_readv(w->tid, &(struct iovec){&p, sizeof(p)}, 1,
                                &(struct iovec){(void *) (uintptr_t) w->args[5], sizeof(p)}, 1, 0) != sizeof(p) ||
               p != 0;
}

/* select, pselect6 and ppoll write the time left back (Linux does, and a
 * restart after a stop waits only for that). The kernel cannot write it
 * into our read-only slot: it is counted here, from the end of the
 * converted timeout (noted at the entry stop, just before the kernel
 * takes its own), and given to the program in its own copy as the
 * namespace's duration. Not for a call that never ran (taken back). */
/* The rate a held wait's time left is scaled by: its class's, as
 * tns_wait_map() makes it (1 for a frozen clock). */
static int wait_mult(const struct wait_trace *w, uint64_t *ret) {
        struct tns_rate_map wm;

        if (class_wait_map(w->ns, w->clock_class, &wm) < 0)
                return -EINVAL;
        *ret = wm.mult;
        return 0;
}

/* Into the program's memory at addr: the thread is stopped in our hands,
 * so it is the caller. */
static void write_stopped(const struct wait_trace *w, uint64_t addr, const void *buf, size_t len) {
        (void) process_vm_writev(w->tid, &(struct iovec){(void *) buf, len}, 1,
                                 &(struct iovec){(void *) (uintptr_t) addr, len}, 1, 0);
}

static void copy_back_time_left(struct wait_trace *w) {
        const struct tns_wait_spec spec = {.kind = w->kind, .relative = true, .writes_back = true};
        size_t len = tns_wait_size(w->kind);
        unsigned char out[16];
        struct timespec now;
        int64_t host = 0;
        uint64_t mult;

        if (w->end_host == 0 || len != sizeof(out) || w->args[w->arg] == 0)
                return;
        if (clock_gettime(CLOCK_MONOTONIC, &now) < 0 || tns_ts_to_ns(&now, &host) < 0 || wait_mult(w, &mult) < 0 ||
            tns_wait_time_left_rated(&spec, mult, w->end_host - host, out) < 0)
                return;
        write_stopped(w, w->args[w->arg], out, len);
}

/* An interrupted relative sleep's rem: the kernel wrote the time left in
 * host time into the program's own memory; the program gets the
 * namespace's duration (nanosleep(2): what it sleeps again). */
static void convert_rem(struct wait_trace *w, int64_t rax) {
        const struct tns_wait_spec spec = {.kind = TNS_WAIT_TIMESPEC, .relative = true, .writes_back = true};
        uint64_t addr = w->rem_arg ? w->args[w->rem_arg] : 0;
        struct timespec left;
        uint64_t mult;
        int64_t v;

        if (!w->relative || !addr || w->taken_back ||
            (rax != -EINTR && rax != -ERESTART_RESTARTBLOCK && rax != -ERESTARTNOHAND))
                return;
        if (process_vm_readv(w->tid, &(struct iovec){&left, sizeof(left)}, 1,
                             &(struct iovec){(void *) (uintptr_t) addr, sizeof(left)}, 1, 0) != sizeof(left) ||
            !tns_ts_valid(&left) || tns_ts_to_ns(&left, &v) < 0 || wait_mult(w, &mult) < 0 ||
            tns_wait_time_left_rated(&spec, mult, v, &left) < 0)
                return;
        write_stopped(w, addr, &left, sizeof(left));
}

/* The end of the call, or anything before it: the registers as the program
 * left them, and it runs on its own. */
/* The setitimer an alarm became (on_entry_stop()) back into the alarm:
 * its number for a restart, the argument registers as the program had
 * them, and its result: the previous alarm's time left in the
 * namespace's seconds. */
static void alarm_result(struct wait_trace *w, struct user_regs_struct *regs) {
        struct itimerval old;
        uint64_t mult;

        regs->orig_rax = (uint64_t) w->nr;
        regs->rsi = w->args[1];
        regs->rdx = w->args[2];
        if ((int64_t) regs->rax == -EFAULT)
                regs->rax = 0; /* set, the old value not written: none to tell */
        if ((int64_t) regs->rax != 0 || w->taken_back)
                return;
        if (process_vm_readv(w->tid, &(struct iovec){&old, sizeof(old)}, 1,
                             &(struct iovec){(void *) (uintptr_t) w->alarm_old, sizeof(old)}, 1, 0) != sizeof(old) ||
            wait_mult(w, &mult) < 0)
                return;
        regs->rax = tns_wait_alarm_left(mult, old.it_value.tv_sec, old.it_value.tv_usec);
}

/* The old value setitimer and timer_settime wrote, a duration: in a
 * rated namespace, the namespace's (helper-39: 10 s armed read back 5 at
 * x2). And what getitimer and timer_gettime read, the same durations. */
static void convert_old_timer(struct wait_trace *w, int64_t rax) {
        const bool itv = w->nr == SYS_setitimer || w->nr == SYS_getitimer;
        const unsigned arg = w->readback ? 1 : itv ? 2 : w->nr == SYS_timer_settime ? 3 : 0;
        const enum tns_wait_kind kind = itv ? TNS_WAIT_ITIMERVAL : TNS_WAIT_ITIMERSPEC;
        uint64_t addr = arg ? w->args[arg] : 0, mult;
        unsigned char old[32] = {};

        if (!addr || rax != 0 || w->taken_back || w->as_setitimer || !tns_ns_rated(w->ns))
                return;
        if (process_vm_readv(w->tid, &(struct iovec){old, sizeof(old)}, 1,
                             &(struct iovec){(void *) (uintptr_t) addr, sizeof(old)}, 1, 0) != sizeof(old) ||
            wait_mult(w, &mult) < 0 || tns_wait_timer_from_host(kind, mult, old) < 0)
                return;
        write_stopped(w, addr, old, sizeof(old));
}

static void on_exit_stop(struct wait_trace *w, int sig) {
        struct user_regs_struct regs;
        bool failed;

        if (ptrace(PTRACE_GETREGS, w->tid, 0, &regs) < 0)
                return release(w, NULL, sig);
        *reg(&regs, w->arg) = w->args[w->arg];
        if (w->as_setitimer)
                alarm_result(w, &regs);
        if (sig == 0 && w->writes_back && w->relative && !w->taken_back && !sticky_timeouts(w->tid)) {
                copy_back_time_left(w);
                /* The kernel could not write into our read-only slot, and
                 * so made the restart code of an interrupted call EINTR
                 * (poll_select_finish(), fs/select.c): what it would have
                 * returned, for the signal code to restart the call or
                 * run a handler. Not with a signal mask of the call's own
                 * (ppoll, pselect6): the kernel has put the program's
                 * mask back already, which a restart code needs kept. */
                if ((int64_t) regs.rax == -EINTR && !call_has_sigmask(w))
                        regs.rax = (uint64_t) -ERESTARTNOHAND;
        }
        if (sig == 0) {
                convert_rem(w, (int64_t) regs.rax);
                convert_old_timer(w, (int64_t) regs.rax);
        }
        /* Our interrupt ended it to convert the deadline again. A sleep
         * (-ERESTARTNOHAND) and futex_waitv (-ERESTARTSYS) restart through
         * the filter by themselves; a futex wait would restart from its
         * restart_block with the old host deadline: restart the call
         * itself instead (a futex wait may always wake spuriously). */
        if (w->reconvert && (int64_t) regs.rax == -ERESTART_RESTARTBLOCK)
                regs.rax = (uint64_t) -ERESTARTNOINTR;
        /* Explicit times need the file's owner where "now" needs only
         * write access (vfs_utimes(); a FUSE or network filesystem may
         * refuse them its own way): failed, the program's own call runs
         * again, as it asked, and its result is the one the program gets
         * (the host's now, or the kernel's error for it). A failed
         * setattr changed nothing. Through the filter again:
         * supervisor_wait() lets it run. */
        failed = file_times_failed(w, &regs);
        if (w->now && regs.rax == 0)
                w->s->stats.file_times_ns++;
        if (failed && sig == 0) {
                rewind_call(&regs);
                *reg(&regs, w->arg) = w->given;
                if (w->last_stop)
                        return release(w, &regs, 0); /* to whoever serves next */
                if (ptrace(PTRACE_SETREGS, w->tid, 0, &regs) == 0 && ptrace(PTRACE_SYSCALL, w->tid, 0, 0) == 0) {
                        w->phase = WAIT_RERUN;
                        w->rerun_entered = false;
                        return;
                }
        }
        release(w, &regs, sig);
}

/* The program's own call, run again: on through its entry stop, let go
 * at its exit stop (or at anything else). */
static void on_rerun_stop(struct wait_trace *w, enum tns_stop stop, int sig) {
        struct user_regs_struct regs;

        if (stop == TNS_STOP_SYSCALL && !w->rerun_entered) {
                w->rerun_entered = true;
                if (ptrace(PTRACE_SYSCALL, w->tid, 0, 0) == 0)
                        return;
        }
        /* Set after all, by the host's now (a failure is the call's own,
         * as on the host). A call run as a predecessor's rewrite was
         * (NULL) gets that rewrite's pointer back, as it would have. */
        if (stop == TNS_STOP_SYSCALL && ptrace(PTRACE_GETREGS, w->tid, 0, &regs) == 0) {
                if ((int64_t) regs.rax == 0)
                        w->s->stats.file_times_host++;
                if (w->given != w->args[w->arg] && *reg(&regs, w->arg) == w->given) {
                        *reg(&regs, w->arg) = w->args[w->arg];
                        return release(w, &regs, 0);
                }
        }
        release(w, NULL, stop == TNS_STOP_SYSCALL ? 0 : sig);
}

static void on_stop(struct wait_trace *w, int status) {
        int sig, event = status >> 16;
        enum tns_stop stop = tns_stop_decode(status, &sig);

        if (stop == TNS_STOP_EXITED)
                return wait_free(w);
        if (stop == TNS_STOP_INTERRUPT && WSTOPSIG(status) != SIGTRAP)
                sig = 0; /* a group stop: it stays stopped after the detach */
        switch (w->phase) {
        case WAIT_INTERRUPT:
                if (event == PTRACE_EVENT_STOP && WSTOPSIG(status) == SIGTRAP)
                        return on_interrupt_stop(w);
                return release(w, NULL, sig);
        case WAIT_ENTRY:
                if (stop == TNS_STOP_SYSCALL)
                        return on_entry_stop(w);
                return release(w, NULL, sig);
        case WAIT_RUNNING:
                return on_exit_stop(w, sig);
        case WAIT_RERUN:
                return on_rerun_stop(w, stop, sig);
        }
}

/* A thread that exec'd from another thread took the thread group's id
 * (de_thread): if we held the old leader, its id is now that of a new
 * program, which the exec trace owns (on_sigchld in supervisor.c ran the exec traces first). */
static bool taken_by_exec(const struct tns_supervisor *s, pid_t tid) {
        for (const struct exec_trace *t = s->execs; t; t = t->next)
                if (t->tid == tid)
                        return true;
        return false;
}

void supervisor_wait_on_sigchld(struct tns_supervisor *s) {
        struct wait_trace *w, *next;

        for (w = s->waits; w; w = next) {
                int status;
                pid_t r;

                next = w->next;
                if (taken_by_exec(s, w->tid)) {
                        wait_free(w);
                        continue;
                }
                r = waitpid(w->tid, &status, __WALL | WNOHANG);
                if (r < 0)
                        wait_free(w);
                else if (r > 0)
                        on_stop(w, status);
        }
}

void supervisor_wait_offsets_changed(struct tns_supervisor *s) {
        /* Before the entry stop a wait has no deadline yet: it takes the
         * offset of then. A running one is interrupted (its sleep ends
         * with a restart code, it stops at its exit). */
        /* A relative wait keeps what it was given: its remaining time is
         * the kernel's, in host time, from the rate it started at. */
        for (struct wait_trace *w = s->waits; w; w = w->next)
                if (w->phase == WAIT_RUNNING && !w->relative && !w->now && !w->reconvert &&
                    ptrace(PTRACE_INTERRUPT, w->tid, 0, 0) == 0)
                        w->reconvert = true;
}

/* Before we go (a stop, a hand-over): nothing we rewrote may outlive us.
 *
 * A call past its entry stop whose notification we have not answered yet
 * (its filter sends the rewritten call again, and nobody receives now)
 * would reach our successor with our arguments: explicit file times a
 * non-owner may not set (EPERM), a converted timeout converted again. It
 * is interrupted: its seccomp wait is still interruptible (not received:
 * WAIT_KILLABLE_RECV applies from the receive on), the call ends with
 * -ERESTARTSYS at its exit stop, where it gets the program's arguments
 * back and is let go to make the call again as the program made it; our
 * successor serves it.
 *
 * A file-times call let run ends in microseconds: its exit stop is
 * awaited, for a bounded moment, so that one that failed with our
 * explicit times is let go to make the call again (never with that
 * error). A wait let run keeps its converted deadline (the slot stays
 * mapped, or the value is the kernel's now). Any other stop meanwhile is
 * handled as the loop would. */
#define SETTLE_NS (100 * 1000 * 1000)

void tns_supervisor_settle_held_calls(struct tns_supervisor *s) {
        uint64_t until = supervisor_now_ns() + SETTLE_NS;

        for (;;) {
                bool left = false;

                for (struct wait_trace *w = s->waits, *next; w; w = next) {
                        int status;
                        pid_t r;

                        next = w->next;
                        if (w->phase != WAIT_RUNNING)
                                continue;
                        if (!w->let_run && !w->taken_back && ptrace(PTRACE_INTERRUPT, w->tid, 0, 0) == 0) {
                                w->taken_back = true;
                                tns_log_full(&s->log, LOG_DEBUG, 0, &(struct tns_log_ctx){.pid = w->tid},
                                             "Taking back a rewritten call not let run yet: the program "
                                             "makes its own again, for our successor");
                        }
                        if (!w->now && !w->taken_back)
                                continue;
                        w->last_stop = true;
                        r = waitpid(w->tid, &status, __WALL | WNOHANG);
                        if (r < 0)
                                wait_free(w);
                        else if (r > 0)
                                on_stop(w, status);
                        else
                                left = true;
                }
                if (!left || supervisor_now_ns() >= until)
                        return;
                (void) nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
        }
}

/* The supervisor goes away: a thread left pointing at a slot finishes its
 * wait with the converted deadline (the page stays mapped); one not yet
 * restarted restarts unconverted. Never a wrong clock read. */
void supervisor_wait_done(struct tns_supervisor *s) {
        tns_supervisor_settle_held_calls(s);
        while (s->waits) {
                (void) ptrace(PTRACE_DETACH, s->waits->tid, 0, 0);
                wait_free(s->waits);
        }
        s->wait_memfd = safe_close(s->wait_memfd);
}
