/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec-missing.h"
#include "util.h"

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif

/* One submission at a time: the ring's smallest size is plenty. */
#define RING_ENTRIES 2

struct tns_anyone {
        int fd;
        uint16_t personality;
        bool broken; /* a submission or completion out of step: never used again */
        uint64_t seq; /* each submission's user_data, checked on its completion */
        void *sq_ring, *cq_ring;
        size_t sq_ring_size, cq_ring_size;
        struct io_uring_sqe *sqes;
        uint32_t *sq_tail, *sq_mask, *sq_array;
        uint32_t *cq_head, *cq_tail, *cq_mask;
        struct io_uring_cqe *cqes;
};

struct tns_anyone *tns_anyone_free(struct tns_anyone *a) {
        if (!a)
                return NULL;
        if (a->sqes)
                munmap(a->sqes, RING_ENTRIES * sizeof(struct io_uring_sqe));
        if (a->cq_ring && a->cq_ring != a->sq_ring)
                munmap(a->cq_ring, a->cq_ring_size);
        if (a->sq_ring)
                munmap(a->sq_ring, a->sq_ring_size);
        safe_close(a->fd);
        free(a);
        return NULL;
}

static void tns_anyone_freep(struct tns_anyone **a) {
        tns_anyone_free(*a);
}

static int map_rings(struct tns_anyone *a, const struct io_uring_params *p) {
        a->sq_ring_size = p->sq_off.array + p->sq_entries * sizeof(uint32_t);
        a->cq_ring_size = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
        if (p->features & IORING_FEAT_SINGLE_MMAP)
                a->sq_ring_size = a->cq_ring_size =
                        a->sq_ring_size > a->cq_ring_size ? a->sq_ring_size : a->cq_ring_size;
        a->sq_ring = mmap(NULL, a->sq_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, a->fd,
                          IORING_OFF_SQ_RING);
        if (a->sq_ring == MAP_FAILED)
                return a->sq_ring = NULL, negative_errno();
        a->cq_ring = a->sq_ring;
        if (!(p->features & IORING_FEAT_SINGLE_MMAP)) {
                a->cq_ring = mmap(NULL, a->cq_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, a->fd,
                                  IORING_OFF_CQ_RING);
                if (a->cq_ring == MAP_FAILED)
                        return a->cq_ring = NULL, negative_errno();
        }
        a->sqes = mmap(NULL, p->sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_POPULATE, a->fd, IORING_OFF_SQES);
        if (a->sqes == MAP_FAILED)
                return a->sqes = NULL, negative_errno();
        a->sq_tail = (uint32_t *) ((char *) a->sq_ring + p->sq_off.tail);
        a->sq_mask = (uint32_t *) ((char *) a->sq_ring + p->sq_off.ring_mask);
        a->sq_array = (uint32_t *) ((char *) a->sq_ring + p->sq_off.array);
        a->cq_head = (uint32_t *) ((char *) a->cq_ring + p->cq_off.head);
        a->cq_tail = (uint32_t *) ((char *) a->cq_ring + p->cq_off.tail);
        a->cq_mask = (uint32_t *) ((char *) a->cq_ring + p->cq_off.ring_mask);
        a->cqes = (struct io_uring_cqe *) ((char *) a->cq_ring + p->cq_off.cqes);
        return 0;
}

/* The personality is registered by a thread of its own that takes the
 * credentials first: no group, fsuid and fsgid 4294967294 (valid, and no
 * file's owner), no capability at all (capset: even with
 * SECBIT_NO_SETUID_FIXUP, which would keep them across the fsuid). Raw
 * syscalls: glibc's setgroups() would change every thread. The thread
 * then ends; only the process's dumpable flag, which commit_creds()
 * resets, is put back by the caller. */
struct registrar {
        int fd;
        int r;
};

static void *register_anyone(void *arg) {
        struct registrar *g = arg;
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {};
        const uint32_t anyone = (uint32_t) -2;

        g->r = -EPERM;
        if (syscall(SYS_setgroups, 0, NULL) < 0)
                return NULL;
        (void) syscall(SYS_setfsgid, anyone);
        (void) syscall(SYS_setfsuid, anyone);
        if ((uint32_t) syscall(SYS_setfsuid, -1) != anyone || (uint32_t) syscall(SYS_setfsgid, -1) != anyone ||
            syscall(SYS_capget, &h, d) < 0)
                return NULL;
        d[0].effective = d[1].effective = 0;
        if (syscall(SYS_capset, &h, d) < 0) {
                g->r = negative_errno();
                return NULL;
        }
        g->r = (int) syscall(SYS_io_uring_register, g->fd, IORING_REGISTER_PERSONALITY, NULL, 0);
        if (g->r < 0)
                g->r = negative_errno();
        return NULL;
}

static int lookup(struct tns_anyone *a, int base, const struct tns_exec_lookup *plan);

int tns_anyone_new(struct tns_anyone **ret) {
        _cleanup_(tns_anyone_freep) struct tns_anyone *a = NULL;
        struct io_uring_params p = {};
        struct registrar g = {};
        pthread_t t;
        int dumpable, r;

        *ret = NULL;
        if (geteuid() != 0)
                return -EPERM;
        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->fd = (int) syscall(SYS_io_uring_setup, RING_ENTRIES, &p);
        if (a->fd < 0)
                return negative_errno();
        r = map_rings(a, &p);
        if (r < 0)
                return r;
        dumpable = prctl(PR_GET_DUMPABLE);
        g.fd = a->fd;
        if (pthread_create(&t, NULL, register_anyone, &g) != 0)
                return -EAGAIN;
        (void) pthread_join(t, NULL);
        if (dumpable >= 0)
                (void) prctl(PR_SET_DUMPABLE, dumpable);
        if (g.r < 0)
                return g.r;
        a->personality = (uint16_t) g.r;
        /* RESOLVE_CACHED known (Linux 5.12), the ring answering: a name
         * that is surely there. */
        {
                _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                const struct tns_exec_lookup probe = {.base = TNS_EXEC_BASE_ROOT, .rest = "."};

                if (root < 0 || lookup(a, root, &probe) != 0)
                        return -EOPNOTSUPP;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

/* One openat2 through the ring, as anyone: the fd, or -errno. Anything
 * out of step (the entry not taken at once, an error after it was, a
 * completion not ours) and the ring is never used again: an entry taken
 * later would point at this stack frame and a base fd closed since, and
 * a completion left behind would answer the next lookup. */
static int ring_openat2(struct tns_anyone *a, int base, const char *path, const struct open_how *how) {
        uint32_t tail = *a->sq_tail, head, i = tail & *a->sq_mask;
        struct io_uring_sqe *sqe = &a->sqes[i];
        struct io_uring_cqe cqe;
        int r;

        if (a->broken)
                return -EIO;
        memset(sqe, 0, sizeof(*sqe));
        sqe->opcode = IORING_OP_OPENAT2;
        sqe->fd = base;
        sqe->addr = (uint64_t) (uintptr_t) path;
        sqe->addr2 = (uint64_t) (uintptr_t) how;
        sqe->len = sizeof(*how);
        sqe->personality = a->personality;
        sqe->user_data = ++a->seq;
        a->sq_array[i] = i;
        __atomic_store_n(a->sq_tail, tail + 1, __ATOMIC_RELEASE);
        r = (int) syscall(SYS_io_uring_enter, a->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
        head = *a->cq_head;
        if (r != 1 || head == __atomic_load_n(a->cq_tail, __ATOMIC_ACQUIRE)) {
                a->broken = true;
                return -EIO;
        }
        cqe = a->cqes[head & *a->cq_mask];
        __atomic_store_n(a->cq_head, head + 1, __ATOMIC_RELEASE);
        if (cqe.user_data != a->seq) {
                a->broken = true;
                return -EIO;
        }
        return cqe.res;
}

/* 1 missing, 0 there or not told. An absolute path resolves inside the
 * thread's root (RESOLVE_IN_ROOT), a relative one below its base.
 * RESOLVE_CACHED: only what the dentry cache holds, never a call into a
 * filesystem (an overlay on a member's FUSE server, a hung NFS mount, an
 * automount would hold timensd's loop) — a PATH directory's miss is there
 * as a negative dentry from the first exec that missed it. No symlink at
 * all: /proc/self, /dev/fd and an absolute target would resolve for
 * timensd, not for the thread, and chains of them cost. */
static int lookup(struct tns_anyone *a, int base, const struct tns_exec_lookup *plan) {
        const struct open_how how = {
                .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_CACHED |
                           (plan->base == TNS_EXEC_BASE_ROOT ? RESOLVE_IN_ROOT : RESOLVE_BENEATH),
        };
        int fd = ring_openat2(a, base, plan->rest, &how);

        if (fd >= 0) {
                close(fd);
                return 0;
        }
        return fd == -ENOENT;
}

static int open_base(pid_t tid, const struct tns_exec_lookup *plan) {
        char path[64];
        int fd;

        if (plan->base == TNS_EXEC_BASE_ROOT)
                snprintf(path, sizeof(path), "/proc/%d/root", tid);
        else if (plan->base == TNS_EXEC_BASE_CWD)
                snprintf(path, sizeof(path), "/proc/%d/cwd", tid);
        else
                snprintf(path, sizeof(path), "/proc/%d/fd/%d", tid, plan->dirfd);
        fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* /proc/TID/task (of any thread: it lists the whole group) links two
 * more than the group's threads. */
bool tns_exec_caller_alone(pid_t tid) {
        char path[64];
        struct stat st;

        snprintf(path, sizeof(path), "/proc/%d/task", tid);
        return stat(path, &st) == 0 && st.st_nlink == 3;
}

int tns_exec_file_missing(struct tns_anyone *a, pid_t tid, const struct tns_exec_lookup *plan) {
        _cleanup_close_ int base = -EBADF;

        if (!a || plan->base == TNS_EXEC_BASE_UNKNOWN)
                return 0;
        base = open_base(tid, plan);
        if (base < 0)
                return 0; /* gone, or a dirfd closed or no directory: the usual way */
        return lookup(a, base, plan);
}
