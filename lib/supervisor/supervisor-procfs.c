/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/uptime and /proc/stat as a namespace sees them, and sysinfo().
 *
 * The files: in the mount namespace of a listener's root process (a
 * private one: `timensctl run` makes it, a container has its own), each
 * file is covered by a FUSE mount whose root *is* the file (rootmode
 * S_IFREG), served here from the /dev/fuse fd without libfuse. Only opens
 * and reads of these two paths reach us; every other path, and every
 * other syscall, costs what it costs on the host. A reader's namespace is
 * found from the pid FUSE gives (resolve_ns, as for a syscall), so nested
 * namespaces read their own values in one mount namespace.
 *
 * Why FUSE and not openat interception (every open of every file would go
 * through the supervisor) or fanotify FAN_OPEN_PERM over a bind-mounted
 * file (one content per mount namespace, so nested namespaces could not
 * differ, and a reader that keeps the fd and lseeks back, as procps does,
 * would see the value of its open forever): see docs/design/procfs.md and
 * tests/bench/bench-procfs.c for the figures.
 *
 * The LXCFS trap (a dead server gives ENOTCONN to every reader) is avoided
 * by the fds' lifetime, not by luck: the FUSE connection lives as long as
 * any fd of it is open, so a daemon that keeps the fds across a restart
 * (tns_supervisor_procfs_fds(), for systemd's fd store) leaves readers
 * waiting, not failing, and the new daemon answers them. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fuse.h>
#include <linux/mount.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "fd-pass.h"
#include "proc-util.h"
#include "procfs-text.h"
#include "supervisor-internal.h"
#include "time-util.h"
#include "util.h"

enum procfs_file { PROCFS_UPTIME, PROCFS_STAT, _PROCFS_MAX };

static const char *const procfs_names[_PROCFS_MAX] = {
        [PROCFS_UPTIME] = "uptime",
        [PROCFS_STAT] = "stat",
};

/* The text a reader was given, kept for a moment (PROCFS_SNAPSHOT_USEC):
 * the size of a GETATTR and the READs that follow it must agree, or the
 * page-cache path (splice, sendfile: busybox cat) would be cut short at a
 * stale i_size or pad the text. */
struct procfs_snapshot {
        pid_t pid;
        uint64_t ns_id, kns_ino; /* its namespaces then: a setns between two reads changes the text */
        uint64_t taken; /* CLOCK_MONOTONIC, us */
        char *text;
        size_t len;
};

#define PROCFS_SNAPSHOTS 8
#define PROCFS_SNAPSHOT_USEC 50000

/* One FUSE connection: one file in one mount namespace. Served by the
 * supervisor's FUSE thread (struct procfs_server); the loop adds and
 * frees it. l, file, snap[] are read under the supervisor's lock; fd is
 * the thread's to read and write, and closed by it (or, with no thread,
 * by conn_free()). */
struct procfs_conn {
        struct listener *l;
        enum procfs_file file;
        uint64_t serial; /* names its fd, with l's ("p.L.FILE.N", lib/core/state.h) */
        int fd;
        bool dead; /* freed by the loop: the thread drops it (under srv->mutex) */
        struct procfs_snapshot snap[PROCFS_SNAPSHOTS];
        unsigned next_snap;
        struct procfs_conn *next;
        struct procfs_conn *next_dead; /* srv->dead */
};

/* The thread that answers the FUSE connections. Not the loop: the loop
 * itself touches members' memory and fds (process_vm_readv, a close, an
 * fstat), and a member can point those at its own cover files (helper-43:
 * a MAP_PRIVATE mapping of /proc/uptime given as a clock_nanosleep
 * deadline, an fd of it passed to setns or to the control socket): the
 * FUSE request that makes then waits for the very thread that made it,
 * and the loop, every namespace with it, stood still for good (SIGKILL
 * too: the exit's close flushed). A request from timensd itself is never
 * a read anyone wants: answered EIO at once, without the lock its maker
 * may hold; every other read takes the lock, as a receive thread does. */
struct procfs_server {
        struct tns_supervisor *s;
        pthread_t thread;
        int epoll_fd, wake_fd; /* wake_fd: an eventfd, for a stop and for the dead list */
        bool stop; /* read by the thread: __atomic */
        pthread_mutex_t mutex; /* dead */
        struct procfs_conn *dead; /* freed by the loop, closed by the thread */
};

/* The host's /proc/stat is a few KiB (one line per CPU, one of IRQ
 * counts): a cap far above it, so that a strange host cannot make us
 * allocate without bound. */
#define PROCFS_STAT_MAX (1024 * 1024)
/* What the kernel needs of a FUSE server's read buffer with our max_write
 * (FUSE_MIN_READ_BUFFER; fs/fuse/dev.c). */
#define PROCFS_REQ_MAX 8192
#define PROCFS_MAX_WRITE 4096
/* How long a read of a cover waits for the engine's lock (serve_one()). */
#define PROCFS_LOCK_WAIT_MS 2000

/* The offsets of pid's kernel time namespace (supervisor-kns.c), added to
 * what ns gives it; that namespace's inode goes to *ret_kns_ino. */
static void reader_kernel_offsets(struct listener *l, pid_t pid, int64_t ret[TNS_CLASS_MAX], uint64_t *ret_kns_ino) {
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                ret[c] = 0;
        *ret_kns_ino = 0;
        if (pid > 0)
                (void) supervisor_kernel_offsets(l, pid, ret, ret_kns_ino);
}

/* The namespace's clocks now, as its reader reads them: host (through
 * the namespace's rate) + its offsets + the kernel's part. */
static int ns_clock(struct tns_ns *ns, const int64_t koff[TNS_CLASS_MAX], enum tns_clock_class c,
                    struct timespec *ret) {
        struct timespec host, t;
        int r;

        if (clock_gettime(tns_class_clock(c), &host) < 0)
                return negative_errno();
        r = tns_ns_now(ns, c, &host, &t);
        if (r < 0)
                return r;
        return tns_ts_add_ns(&t, koff[c], ret);
}

/* ---------------------------------------------------------------- sysinfo */

int64_t supervisor_sysinfo(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns) {
        struct timespec bt;
        struct sysinfo si;
        struct iovec local = {&si, sizeof(si)}, remote = {(void *) (uintptr_t) req->data.args[0], sizeof(si)};
        int64_t off[TNS_CLASS_MAX];
        uint64_t kns_ino;
        int r;

        /* The kernel fills it and then copies it out: -EFAULT only then. */
        if (sysinfo(&si) < 0)
                return negative_errno();
        reader_kernel_offsets(l, (pid_t) req->pid, off, &kns_ino);
        r = ns_clock(ns, off, TNS_CLASS_BOOTTIME, &bt);
        if (r < 0)
                return -EINVAL;
        si.uptime = tns_sysinfo_uptime(&bt);
        if (supervisor_id_valid(l->fd, req->id) < 0)
                return -ESRCH;
        if (process_vm_writev(req->pid, &local, 1, &remote, 1, 0) != (ssize_t) sizeof(si))
                return -EFAULT;
        return 0;
}

/* ---------------------------------------------------------------- contents */

/* A host file whole, or -EFBIG: a cut text would be a wrong one. */
static ssize_t read_host(const char *path, char *buf, size_t size) {
        ssize_t n = tns_read_text(path, buf, size);

        return n == (ssize_t) size - 1 ? -EFBIG : n;
}

static ssize_t make_uptime(struct tns_ns *ns, const int64_t off[TNS_CLASS_MAX], char **ret) {
        _cleanup_free_ char *out = malloc(TNS_UPTIME_MAX);
        char host[TNS_UPTIME_MAX];
        struct timespec bt;
        ssize_t n;
        int r;

        if (!out)
                return -ENOMEM;
        n = read_host("/proc/uptime", host, sizeof(host));
        if (n < 0)
                return n;
        r = ns_clock(ns, off, TNS_CLASS_BOOTTIME, &bt);
        if (r < 0)
                return r;
        n = tns_procfs_uptime(&bt, host, out, TNS_UPTIME_MAX);
        if (n >= 0)
                *ret = TAKE_PTR(out);
        return n;
}

static ssize_t make_stat(struct tns_ns *ns, const int64_t off[TNS_CLASS_MAX], char **ret) {
        _cleanup_free_ char *host = NULL, *out = NULL;
        struct timespec rt, bt;
        size_t size = 16384;
        int64_t btime;
        ssize_t n;
        int r;

        for (;;) {
                free(host);
                host = malloc(size);
                if (!host)
                        return -ENOMEM;
                n = read_host("/proc/stat", host, size);
                if (n != -EFBIG)
                        break;
                if (size >= PROCFS_STAT_MAX)
                        return -EFBIG;
                size *= 4;
        }
        if (n < 0)
                return n;
        r = ns_clock(ns, off, TNS_CLASS_REALTIME, &rt);
        if (r >= 0)
                r = ns_clock(ns, off, TNS_CLASS_BOOTTIME, &bt);
        if (r >= 0)
                r = tns_procfs_btime(&rt, &bt, &btime);
        if (r < 0)
                return r;
        out = malloc((size_t) n + 32);
        if (!out)
                return -ENOMEM;
        n = tns_procfs_stat(host, (size_t) n, btime, out, (size_t) n + 32);
        if (n >= 0)
                *ret = TAKE_PTR(out);
        return n;
}

/* ---------------------------------------------------------------- FUSE */

static int fuse_reply(struct procfs_conn *c, uint64_t unique, int error, const void *data, size_t len) {
        struct fuse_out_header h = {.len = (uint32_t) (sizeof(h) + len), .error = error, .unique = unique};
        struct iovec iov[2] = {{&h, sizeof(h)}, {(void *) data, len}};

        /* ENOENT: the request was interrupted meanwhile; normal. */
        if (writev(c->fd, iov, len ? 2 : 1) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

static void fill_attr(struct fuse_attr *a, size_t size) {
        struct timespec now;

        /* procfs gives its files the current time. */
        clock_gettime(CLOCK_REALTIME, &now);
        *a = (struct fuse_attr){
                .ino = FUSE_ROOT_ID,
                .mode = S_IFREG | 0444,
                .nlink = 1,
                .size = size,
                .blksize = 1024,
                .atime = (uint64_t) now.tv_sec,
                .mtime = (uint64_t) now.tv_sec,
                .ctime = (uint64_t) now.tv_sec,
                .atimensec = (uint32_t) now.tv_nsec,
                .mtimensec = (uint32_t) now.tv_nsec,
                .ctimensec = (uint32_t) now.tv_nsec,
        };
}

/* The text for the reader pid: its snapshot if it took one a moment ago,
 * else made anew (as procfs does at every read from 0, so that a reader
 * that keeps the fd sees the time move) and kept as its snapshot. */
static int text_for(struct procfs_conn *c, pid_t pid, const struct procfs_snapshot **ret) {
        struct tns_ns *ns = pid > 0 ? supervisor_resolve_ns(c->l, pid) : c->l->ns;
        uint64_t now = supervisor_now_ns() / 1000, kns_ino;
        struct procfs_snapshot *slot;
        int64_t off[TNS_CLASS_MAX];
        char *text = NULL;
        ssize_t n;

        reader_kernel_offsets(c->l, pid, off, &kns_ino);
        for (unsigned i = 0; i < PROCFS_SNAPSHOTS; i++)
                if (c->snap[i].text && c->snap[i].pid == pid && c->snap[i].ns_id == ns->id &&
                    c->snap[i].kns_ino == kns_ino && now - c->snap[i].taken < PROCFS_SNAPSHOT_USEC) {
                        *ret = &c->snap[i];
                        return 0;
                }
        n = c->file == PROCFS_UPTIME ? make_uptime(ns, off, &text) : make_stat(ns, off, &text);
        if (n < 0)
                return (int) n;
        slot = &c->snap[c->next_snap++ % PROCFS_SNAPSHOTS];
        free(slot->text);
        *slot = (struct procfs_snapshot){
                .pid = pid, .ns_id = ns->id, .kns_ino = kns_ino, .taken = now, .text = text, .len = (size_t) n};
        *ret = slot;
        return 0;
}

static int fuse_getattr(struct procfs_conn *c, const struct fuse_in_header *h) {
        struct fuse_attr_out out = {};
        const struct procfs_snapshot *t;
        int r;

        /* The size of the text this reader is about to read: the mount
         * has default_permissions and attr_valid is 0, so every open asks
         * (fuse_permission), and splice reads the page cache up to it. */
        r = text_for(c, (pid_t) h->pid, &t);
        if (r < 0)
                return fuse_reply(c, h->unique, r == -ENOMEM ? -ENOMEM : -EIO, NULL, 0);
        fill_attr(&out.attr, t->len);
        return fuse_reply(c, h->unique, 0, &out, sizeof(out));
}

static int fuse_read(struct procfs_conn *c, const struct fuse_in_header *h, const struct fuse_read_in *in) {
        const struct procfs_snapshot *t;
        size_t n;
        int r;

        r = text_for(c, (pid_t) h->pid, &t);
        if (r < 0)
                return fuse_reply(c, h->unique, r == -ENOMEM ? -ENOMEM : -EIO, NULL, 0);
        if (in->offset >= t->len)
                return fuse_reply(c, h->unique, 0, NULL, 0);
        n = t->len - (size_t) in->offset;
        return fuse_reply(c, h->unique, 0, t->text + in->offset, n < in->size ? n : in->size);
}

static int fuse_dispatch(struct procfs_conn *c, const struct fuse_in_header *h, const void *arg, size_t len) {
        switch (h->opcode) {
        case FUSE_INIT: {
                const struct fuse_init_in *in = arg;
                struct fuse_init_out out = {
                        .major = FUSE_KERNEL_VERSION,
                        .minor = FUSE_KERNEL_MINOR_VERSION,
                        .max_write = PROCFS_MAX_WRITE,
                };

                if (len < sizeof(*in) || in->major != FUSE_KERNEL_VERSION)
                        return fuse_reply(c, h->unique, -EPROTO, NULL, 0);
                out.max_readahead = in->max_readahead;
                return fuse_reply(c, h->unique, 0, &out, sizeof(out));
        }
        case FUSE_GETATTR:
                return fuse_getattr(c, h);
        case FUSE_OPEN: {
                /* DIRECT_IO: read() bypasses the page cache, every read
                 * comes here. splice and sendfile do not (this kernel's
                 * fuse_splice_read uses filemap_splice_read for it): they
                 * read the page cache, which the open emptied (no
                 * KEEP_CACHE), up to the size the open's GETATTR gave.
                 * NOFLUSH: nothing to flush, and a close (ours of a
                 * member's fd of it too) asks nothing. */
                struct fuse_open_out out = {.open_flags = FOPEN_DIRECT_IO | FOPEN_NOFLUSH};

                return fuse_reply(c, h->unique, 0, &out, sizeof(out));
        }
        case FUSE_READ:
                if (len < sizeof(struct fuse_read_in))
                        return fuse_reply(c, h->unique, -EINVAL, NULL, 0);
                return fuse_read(c, h, arg);
        case FUSE_RELEASE:
        case FUSE_DESTROY:
                return fuse_reply(c, h->unique, 0, NULL, 0);
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
        case FUSE_INTERRUPT:
                return 0; /* no reply expected */
        default:
                /* FLUSH, GETXATTR, ACCESS...: the kernel remembers ENOSYS
                 * and stops asking. */
                return fuse_reply(c, h->unique, -ENOSYS, NULL, 0);
        }
}

static void conn_name(const struct procfs_conn *c, char *buf, size_t size) {
        snprintf(buf, size, "p.%" PRIu64 ".%u.%" PRIu64, c->l->serial, (unsigned) c->file, c->serial);
}

static void conn_destroy(struct procfs_conn *c) {
        for (unsigned i = 0; i < PROCFS_SNAPSHOTS; i++)
                free(c->snap[i].text);
        safe_close(c->fd);
        free(c);
}

/* A dead list (procfs_server.dead), each freed. */
static void conns_destroy(struct procfs_conn *dead) {
        while (dead) {
                struct procfs_conn *next = dead->next_dead;

                conn_destroy(dead);
                dead = next;
        }
}

/* The loop's end of a connection. With the thread running, it may hold
 * c from an epoll batch: c goes to the thread's dead list, freed at its
 * next turn (supervisor lock held here, never taken under srv->mutex). */
static void conn_free(struct procfs_conn *c) {
        struct procfs_server *srv = c->l->s->procfs_srv;
        char name[80];

        conn_name(c, name, sizeof(name));
        tns_supervisor_changed(c->l->s, name, -EBADF);
        if (!srv)
                return conn_destroy(c);
        (void) epoll_ctl(srv->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
        pthread_mutex_lock(&srv->mutex);
        c->dead = true;
        c->next_dead = srv->dead;
        srv->dead = c;
        pthread_mutex_unlock(&srv->mutex);
        /* Closed now, not at the next request of another connection
         * (helper-47: a reader that entered the mount namespace of a
         * container gone waited on a connection nobody served). */
        (void) eventfd_write(srv->wake_fd, 1);
}

/* A request timensd made itself, faulting in a member's mapping of a
 * cover or stat-ing an fd of one: the pid FUSE gives is in timensd's own
 * pid namespace (the helper that mounts does not change it). */
static bool from_self(pid_t pid) {
        return pid > 0 && syscall(SYS_tgkill, getpid(), pid, 0) == 0;
}

static void serve_one(struct procfs_server *srv, struct procfs_conn *c) {
        union {
                struct fuse_in_header h;
                char buf[PROCFS_REQ_MAX + PROCFS_MAX_WRITE];
        } req;
        bool text;
        ssize_t n;
        int r;

        n = read(c->fd, &req, sizeof(req));
        if (n < 0) {
                /* ENOENT: interrupted before we read it; EAGAIN: another
                 * turn took it; ENODEV: unmounted (the mount namespace is
                 * gone): no more events from it. */
                if (errno == ENODEV)
                        (void) epoll_ctl(srv->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
                return;
        }
        if ((size_t) n < sizeof(req.h) || req.h.len != (uint32_t) n)
                return;
        text = req.h.opcode == FUSE_GETATTR || req.h.opcode == FUSE_READ;
        if (!text) {
                /* No state needed: INIT, OPEN, RELEASE, FORGET... */
                (void) fuse_dispatch(c, &req.h, req.buf + sizeof(req.h), (size_t) n - sizeof(req.h));
                return;
        }
        if (from_self((pid_t) req.h.pid)) {
                (void) fuse_reply(c, req.h.unique, -EIO, NULL, 0);
                return;
        }
        /* The lock, as a receive thread takes it: the loop lets it go
         * while it waits for events, and supervisor_procfs_server_done()
         * while it waits for this thread, so that no request read is left
         * unanswered (its reader would wait for ever). At most
         * PROCFS_LOCK_WAIT_MS, then the read fails with EIO: the loop
         * held by what the reader's own process does (helper-46: a thread
         * of it faulted on its mapping of /proc/uptime, holding its mmap
         * lock, while the loop single-stepped an mmap of its other
         * thread) is let go rather than waited with. The loop never holds
         * the lock that long otherwise. */
        if (!supervisor_lock_as_thread_within(srv->s, PROCFS_LOCK_WAIT_MS)) {
                (void) fuse_reply(c, req.h.unique, -EIO, NULL, 0);
                return;
        }
        /* Under the lock the loop frees nothing: c->dead is stable. A
         * request read from a connection freed meanwhile is answered
         * still (its reader would wait until the fd closes). */
        r = c->dead ? fuse_reply(c, req.h.unique, -ENOTCONN, NULL, 0)
                    : fuse_dispatch(c, &req.h, req.buf + sizeof(req.h), (size_t) n - sizeof(req.h));
        if (r < 0)
                tns_log_full(&c->l->s->log, LOG_WARNING, r, &(struct tns_log_ctx){.pid = (pid_t) req.h.pid},
                             "Failed to answer a read of /proc/%s, ignoring: %m", procfs_names[c->file]);
        pthread_mutex_unlock(&srv->s->lock);
}

static void *srv_main(void *userdata) {
        struct procfs_server *srv = userdata;
        struct epoll_event ev[16];

        for (;;) {
                struct procfs_conn *dead;
                int n;

                /* What the loop freed since the last batch: no pointer to
                 * it is left in this thread. */
                pthread_mutex_lock(&srv->mutex);
                dead = TAKE_PTR(srv->dead);
                pthread_mutex_unlock(&srv->mutex);
                conns_destroy(dead);
                if (__atomic_load_n(&srv->stop, __ATOMIC_ACQUIRE))
                        return NULL;
                n = epoll_wait(srv->epoll_fd, ev, (int) ELEMENTSOF(ev), -1);
                for (int i = 0; i < n; i++) {
                        struct procfs_conn *c = ev[i].data.ptr;
                        bool gone;

                        if (!c) {
                                eventfd_t v;

                                (void) eventfd_read(srv->wake_fd, &v); /* a stop, or the dead list */
                                continue;
                        }
                        pthread_mutex_lock(&srv->mutex);
                        gone = c->dead;
                        pthread_mutex_unlock(&srv->mutex);
                        if (!gone)
                                serve_one(srv, c);
                }
        }
}

static struct procfs_server *srv_get(struct tns_supervisor *s) {
        struct procfs_server *srv;

        if (s->procfs_srv)
                return s->procfs_srv;
        srv = calloc(1, sizeof(*srv));
        if (!srv)
                return NULL;
        srv->s = s;
        srv->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        srv->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        pthread_mutex_init(&srv->mutex, NULL);
        if (srv->epoll_fd < 0 || srv->wake_fd < 0 ||
            epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, srv->wake_fd, &(struct epoll_event){.events = EPOLLIN}) < 0 ||
            pthread_create(&srv->thread, NULL, srv_main, srv) != 0) {
                safe_close(srv->epoll_fd);
                safe_close(srv->wake_fd);
                pthread_mutex_destroy(&srv->mutex);
                free(srv);
                return NULL;
        }
        s->procfs_srv = srv;
        return srv;
}

void supervisor_procfs_server_done(struct tns_supervisor *s) {
        struct procfs_server *srv = s->procfs_srv;

        if (!srv)
                return;
        __atomic_store_n(&srv->stop, true, __ATOMIC_RELEASE);
        (void) eventfd_write(srv->wake_fd, 1);
        /* The lock, ours, let go meanwhile: the request it holds is
         * answered; what it has not read stays for a successor. */
        pthread_mutex_unlock(&s->lock);
        pthread_join(srv->thread, NULL);
        pthread_mutex_lock(&s->lock);
        conns_destroy(TAKE_PTR(srv->dead));
        safe_close(srv->epoll_fd);
        safe_close(srv->wake_fd);
        pthread_mutex_destroy(&srv->mutex);
        free(srv);
        s->procfs_srv = NULL;
}

static int srv_add(struct procfs_server *srv, struct procfs_conn *c) {
        return RET_NERRNO(epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, c->fd,
                                    &(struct epoll_event){.events = EPOLLIN, .data.ptr = c}));
}

void supervisor_procfs_server_resume(struct tns_supervisor *s) {
        struct procfs_server *srv;

        if (s->procfs_srv)
                return;
        for (struct listener *l = s->listeners; l; l = l->next)
                for (struct procfs_conn *c = l->procfs; c; c = c->next) {
                        srv = srv_get(s);
                        if (!srv || srv_add(srv, c) < 0)
                                tns_log_full(&s->log, LOG_WARNING, 0, NULL,
                                             "Failed to serve a /proc cover again after a stop: its readers wait");
                }
}

/* ---------------------------------------------------------------- mounts */

static int fsconfig_str(int fs, const char *key, const char *value) {
        return RET_NERRNO(syscall(SYS_fsconfig, fs, value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key, value, 0));
}

/* In the helper: a FUSE mount whose root is a regular file, over path. */
static int mount_one(int fuse, const char *path) {
        _cleanup_close_ int fs = -EBADF, mnt = -EBADF;
        char num[16];
        int r;

        fs = (int) syscall(SYS_fsopen, "fuse", FSOPEN_CLOEXEC);
        if (fs < 0)
                return negative_errno();
        snprintf(num, sizeof(num), "%d", fuse);
        /* allow_other: every uid reads it, as procfs's; user_id 0 is the
         * namespace's root. */
        if ((r = fsconfig_str(fs, "fd", num)) < 0 || (r = fsconfig_str(fs, "rootmode", "100444")) < 0 ||
            (r = fsconfig_str(fs, "user_id", "0")) < 0 || (r = fsconfig_str(fs, "group_id", "0")) < 0 ||
            (r = fsconfig_str(fs, "allow_other", NULL)) < 0 ||
            /* The kernel checks the mode itself, and asks for the
             * attributes at every open: the size is the text's. */
            (r = fsconfig_str(fs, "default_permissions", NULL)) < 0)
                return r;
        if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return negative_errno();
        mnt = (int) syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (mnt < 0)
                return negative_errno();
        if (syscall(SYS_move_mount, mnt, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return negative_errno();
        return 0;
}

static bool same_ns(pid_t pid, const char *type) {
        char path[64];
        struct stat a, b;

        snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, type);
        if (stat(path, &a) < 0)
                return false;
        snprintf(path, sizeof(path), "/proc/self/ns/%s", type);
        return stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* The forked helper: enters pid's user namespace (to own the mounts
 * there) and its mount namespace, mounts, sends the fds back, exits.
 * /dev/fuse is opened between the two: fs/fuse/inode.c wants it opened
 * in the mount's user namespace, and a container's /dev may not have it. */
static _Noreturn void helper(pid_t pid, int pidfd, const char *proc_dir, int sock) {
        int fuse[_PROCFS_MAX];

        if (!same_ns(pid, "user") && setns(pidfd, CLONE_NEWUSER) < 0)
                _exit(errno);
        for (int f = 0; f < _PROCFS_MAX; f++) {
                fuse[f] = open("/dev/fuse", O_RDWR | O_CLOEXEC);
                if (fuse[f] < 0)
                        _exit(errno);
        }
        if (setns(pidfd, CLONE_NEWNS) < 0)
                _exit(errno);
        for (int f = 0; f < _PROCFS_MAX; f++) {
                char path[PATH_MAX];
                int r;

                if ((size_t) snprintf(path, sizeof(path), "%s/%s", proc_dir, procfs_names[f]) >= sizeof(path))
                        _exit(ENAMETOOLONG);
                r = mount_one(fuse[f], path);
                if (r >= 0)
                        r = tns_send_fd(sock, fuse[f]);
                if (r < 0)
                        _exit(-r);
        }
        _exit(0);
}

struct helper_args {
        pid_t pid;
        int pidfd, sock;
        const char *proc_dir;
};

static int helper_entry(void *userdata) {
        const struct helper_args *a = userdata;

        helper(a->pid, a->pidfd, a->proc_dir, a->sock);
}

/* The helper shares our memory where it can (CLONE_VM, on a stack of its
 * own): a fork copies the page tables and maps of a daemon that serves a
 * thousand namespaces (a receive thread's stack each), and took more
 * than half of its time to start a namespace. The helper only makes
 * system calls, and its fd table and namespaces are its own. Entering
 * another user namespace needs a process that shares no memory
 * (setns(2): EINVAL), so that case forks. */
#define HELPER_STACK_SIZE (64 * 1024)
#define HELPER_GUARD_SIZE 4096 /* below the stack: an overflow faults */

#if defined(__SANITIZE_ADDRESS__)
#define HELPER_FORK_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HELPER_FORK_ONLY 1
#endif
#endif

static pid_t start_helper(struct helper_args *a, void **ret_stack) {
        char *stack;
        pid_t child;

        *ret_stack = NULL;
        /* ASan knows nothing of a task on a stack of ours. */
#ifndef HELPER_FORK_ONLY
        if (!same_ns(a->pid, "user"))
#endif
                return fork();
        stack = mmap(NULL, HELPER_GUARD_SIZE + HELPER_STACK_SIZE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                return fork();
        if (mprotect(stack, HELPER_GUARD_SIZE, PROT_NONE) < 0) {
                munmap(stack, HELPER_GUARD_SIZE + HELPER_STACK_SIZE);
                return fork();
        }
        child = clone(helper_entry, stack + HELPER_GUARD_SIZE + HELPER_STACK_SIZE, CLONE_VM | SIGCHLD, a);
        if (child < 0) {
                int e = errno;

                munmap(stack, HELPER_GUARD_SIZE + HELPER_STACK_SIZE);
                errno = e;
                return -1;
        }
        *ret_stack = stack;
        return child;
}

static int conn_add(struct listener *l, enum procfs_file file, uint64_t serial, int fd) {
        _cleanup_close_ int owned = fd;
        _cleanup_free_ struct procfs_conn *c = calloc(1, sizeof(*c));
        struct procfs_server *srv;
        char name[80];
        int r;

        if (!c)
                return -ENOMEM;
        if (file >= _PROCFS_MAX)
                return -EINVAL;
        srv = srv_get(l->s);
        if (!srv)
                return -ENOMEM;
        /* Non-blocking: a request another reader took (interrupted) must
         * not hold the thread in read(). */
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
                return negative_errno();
        c->l = l;
        c->file = file;
        c->serial = serial;
        c->fd = TAKE_FD(owned);
        r = srv_add(srv, c);
        if (r < 0) {
                owned = TAKE_FD(c->fd);
                return r;
        }
        c->next = l->procfs;
        conn_name(c, name, sizeof(name));
        tns_supervisor_changed(l->s, name, c->fd);
        l->procfs = TAKE_PTR(c);
        return 0;
}

int supervisor_procfs_adopt(struct listener *l, unsigned file, uint64_t serial, int fd) {
        return conn_add(l, (enum procfs_file) file, serial, fd);
}

void supervisor_procfs_foreach(struct listener *l, void (*fn)(unsigned file, uint64_t serial, int fd, void *userdata),
                               void *userdata) {
        for (struct procfs_conn *c = l->procfs; c; c = c->next)
                fn((unsigned) c->file, c->serial, c->fd, userdata);
}

/* The helper's mounts can block: a path in its mount namespace may lie on
 * a hung FUSE or NFS mount, and we run on the event loop that serves
 * every namespace's calls. So it gets a deadline, then SIGKILL, and is
 * reaped in any case. */
#define PROCFS_HELPER_TIMEOUT_MS 5000

static int wait_helper(pid_t pid, bool *ret_reaped) {
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int status, timeout = PROCFS_HELPER_TIMEOUT_MS, r = 0;
        uint64_t end = supervisor_now_ns() / 1000 + (uint64_t) PROCFS_HELPER_TIMEOUT_MS * 1000;

        /* Our own child: its pidfd cannot fail but for lack of fds. */
        while (pidfd >= 0 && timeout > 0 && (r = poll(&p, 1, timeout)) <= 0) {
                uint64_t now = supervisor_now_ns() / 1000;

                if (r < 0 && errno != EINTR)
                        break;
                timeout = now < end ? (int) ((end - now + 999) / 1000) : 0;
        }
        if (pidfd < 0 || r <= 0) {
                (void) kill(pid, SIGKILL);
                r = -ETIMEDOUT;
        }
        *ret_reaped = false;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        *ret_reaped = true;
        if (r == -ETIMEDOUT)
                return r;
        if (!WIFEXITED(status))
                return -EIO;
        return -WEXITSTATUS(status);
}

int supervisor_procfs_mount(struct listener *l, pid_t pid, const char *proc_dir) {
        _cleanup_close_ int pidfd = -EBADF;
        int socks[2], fds[_PROCFS_MAX], n = 0, r;
        struct helper_args a;
        bool reaped;
        void *stack;
        pid_t child;

        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
                return negative_errno();
        /* Both ends close on exec, and the helper does not exec: its copy
         * of ours closes with it. */
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, socks) < 0)
                return negative_errno();
        a = (struct helper_args){.pid = pid, .pidfd = pidfd, .sock = socks[1], .proc_dir = proc_dir};
        child = start_helper(&a, &stack);
        if (child < 0) {
                r = negative_errno();
                close(socks[0]), close(socks[1]);
                return r;
        }
        if (child == 0) { /* forked */
                close(socks[0]);
                helper(pid, pidfd, proc_dir, socks[1]);
        }
        close(socks[1]);
        /* Not served before the helper is done: a read of /dev/fuse before
         * the mount exists fails (EPERM), and the helper's mount itself
         * needs no answer from us (FUSE_INIT is queued, not awaited). */
        r = wait_helper(child, &reaped);
        /* Reaped: its stack is no one's (else it stays, never freed
         * under a task that may still run on it). */
        if (stack && reaped)
                munmap(stack, HELPER_GUARD_SIZE + HELPER_STACK_SIZE);
        while (n < _PROCFS_MAX && (fds[n] = tns_recv_fd(socks[0])) >= 0)
                n++;
        close(socks[0]);
        for (int f = 0; f < n; f++) {
                int k = conn_add(l, f, l->s->next_serial++, fds[f]);

                if (k < 0 && r >= 0)
                        r = k;
        }
        return r;
}

/* Another listener whose root was in l's mount namespace, one of l's own
 * namespace first: the heir of l's cover. */
static struct listener *same_mnt(struct listener *l) {
        struct listener *found = NULL;

        if (l->mnt_ino == 0)
                return NULL;
        for (struct listener *o = l->s->listeners; o; o = o->next)
                if (o != l && o->mnt_ino == l->mnt_ino && o->mnt_dev == l->mnt_dev && (!found || o->ns == l->ns))
                        found = o;
        return found;
}

/* The cover of l's mount namespace, if some listener holds one already. */
static bool mnt_covered(struct listener *l) {
        if (l->mnt_ino == 0)
                return false;
        for (struct listener *o = l->s->listeners; o; o = o->next)
                if (o != l && o->procfs && o->mnt_ino == l->mnt_ino && o->mnt_dev == l->mnt_dev)
                        return true;
        return false;
}

void supervisor_procfs_listener_mnt(struct listener *l) {
        char path[64];
        struct stat st;

        snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int) l->root_pid);
        if (l->root_pid > 0 && stat(path, &st) == 0)
                l->mnt_dev = st.st_dev, l->mnt_ino = st.st_ino;
}

/* Every proc mount of pid's mount namespace: a container's own at /proc,
 * or, in an OCI createRuntime hook (before pivot_root), at <rootfs>/proc
 * beside the /proc it inherited. */
#define PROCFS_MAX_PROC_MOUNTS 8
#define PROCFS_MOUNTINFO_MAX (4 * 1024 * 1024)

static int proc_dirs_of(pid_t pid, char (*dirs)[4096], size_t max, size_t *ret) {
        _cleanup_free_ char *text = NULL;
        char path[64];
        size_t size = 65536;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int) pid);
        for (;;) {
                free(text);
                text = malloc(size);
                if (!text)
                        return -ENOMEM;
                n = read_host(path, text, size);
                if (n != -EFBIG)
                        break;
                if (size >= PROCFS_MOUNTINFO_MAX)
                        return -EFBIG;
                size *= 4;
        }
        if (n < 0)
                return (int) n;
        *ret = tns_mountinfo_proc_dirs(text, dirs, max);
        return 0;
}

void supervisor_procfs_listener_added(struct listener *l) {
        char dirs[PROCFS_MAX_PROC_MOUNTS][4096];
        size_t n = 0;
        int r;

        /* Never over the supervisor's own /proc: only where the root
         * process has a mount namespace of its own. */
        if (l->root_pid <= 0 || same_ns(l->root_pid, "mnt"))
                return;
        /* One cover per mount namespace: a second over the first would
         * serve nothing more, and die with this listener. A root whose
         * mount namespace could not be read when the listener came has
         * exited already (a `docker exec`'d `true`): nothing to cover. */
        if (l->mnt_ino == 0) {
                tns_log_full(&l->s->log, LOG_DEBUG, 0, &(struct tns_log_ctx){.pid = l->root_pid},
                             "The process exited before /proc/uptime and /proc/stat could be covered");
                return;
        }
        if (mnt_covered(l))
                return;
        r = proc_dirs_of(l->root_pid, dirs, PROCFS_MAX_PROC_MOUNTS, &n);
        if (r >= 0 && n == 0)
                r = -ENOENT;
        for (size_t i = 0; i < n && r >= 0; i++)
                r = supervisor_procfs_mount(l, l->root_pid, dirs[i]);
        if (r == -ETIMEDOUT)
                tns_log_full(&l->s->log, LOG_WARNING, r, &(struct tns_log_ctx){.pid = l->root_pid},
                             "The helper mounting over /proc/uptime and /proc/stat did not finish within %d ms "
                             "(a hung mount in the container?) and was killed: they show the host's values",
                             PROCFS_HELPER_TIMEOUT_MS);
        else if (r == -ESRCH)
                tns_log_full(&l->s->log, LOG_DEBUG, r, &(struct tns_log_ctx){.pid = l->root_pid},
                             "The process exited before /proc/uptime and /proc/stat could be covered: %m");
        else if (r < 0)
                tns_log_full(&l->s->log, LOG_WARNING, r, &(struct tns_log_ctx){.pid = l->root_pid},
                             "Failed to cover /proc/uptime and /proc/stat (no private proc mount?), they show "
                             "the host's values: %m");
}

/* A cover is the mount namespace's, not the listener's: while another
 * listener's root is in that mount namespace (a `docker exec`'d process
 * in a container whose init came first, or the init after the exec'd one
 * went), the connections go to it. Closing them would leave a FUSE mount
 * without server over /proc/uptime, and every reader there would get
 * ENOTCONN. */
void supervisor_procfs_free(struct listener *l) {
        struct listener *heir = l->procfs ? same_mnt(l) : NULL;

        while (l->procfs) {
                struct procfs_conn *c = l->procfs;
                char name[80];

                l->procfs = c->next;
                if (!heir) {
                        conn_free(c);
                        continue;
                }
                conn_name(c, name, sizeof(name));
                tns_supervisor_changed(l->s, name, -EBADF);
                c->l = heir;
                c->next = heir->procfs;
                heir->procfs = c;
                conn_name(c, name, sizeof(name));
                tns_supervisor_changed(l->s, name, c->fd);
        }
        /* Its old name is gone from the store: the new one goes in now,
         * not at the next save (no answer waits for this one). */
        if (heir)
                supervisor_flush(l->s);
}

int tns_supervisor_procfs_fds(struct tns_supervisor *s, pid_t root_pid, int *fds, size_t n) {
        size_t k = 0;

        for (struct listener *l = s->listeners; l; l = l->next)
                if (l->root_pid == root_pid)
                        for (struct procfs_conn *c = l->procfs; c; c = c->next)
                                if (k < n)
                                        fds[k++] = c->fd;
        return (int) k;
}

int tns_supervisor_mount_proc(struct tns_supervisor *s, pid_t root_pid, const char *proc_dir) {
        for (struct listener *l = s->listeners; l; l = l->next)
                if (l->root_pid == root_pid)
                        return supervisor_procfs_mount(l, root_pid, proc_dir);
        return -ESRCH;
}
