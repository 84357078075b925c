/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where the namespaces' memfds live when the supervisor is privileged: a
 * private tmpfs that only the supervisor can reach, seen through two
 * mounts of the same superblock, one read-write (ours) and one read-only
 * (every description a member is ever handed).
 *
 * Why not memfds: a member that holds any description of a memfd — the fd
 * it gets at exec, or one it takes from a task sharing its fd table —
 * reopens /proc/self/fd/N O_RDWR, and container root passes the mode
 * check with CAP_DAC_OVERRIDE. Sealing (F_SEAL_WRITE, F_SEAL_FUTURE_WRITE)
 * would stop a restarted supervisor from ever writing the offsets page
 * that running members map. A file on a read-only mount can be reopened
 * for writing by nobody, root included (EROFS): the mount is what the
 * reopen goes through, and no path in any mount namespace leads to the
 * read-write one. Both mounts are made in a child's private mount
 * namespace, which dies with it: they live on, detached, only through the
 * supervisor's two directory fds (and, across a restart, the fd store).
 *
 * Files are named "timens-vdso.ID" (what /proc/PID/maps shows). The
 * superblock's st_dev is what makes a mapping ours: nobody else can
 * create a file on it, so (st_dev, st_ino) from /proc/PID/maps names a
 * namespace unforgeably. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tns_page_store {
        /* Directory fds of the root of each mount; O_RDONLY, not O_PATH:
         * systemd's fd store refuses O_PATH fds (it polls what it keeps,
         * and tolerates only EPERM, a file's answer). */
        int rw_dir;
        int ro_dir;
        dev_t dev; /* the tmpfs's st_dev */
};

/* What a namespace's file is called, a file of the store
 * ("TNS_NS_FILE_NAME.ID") or a memfd without one, whose /proc link reads
 * TNS_NS_MEMFD_LINK: what /proc/PID/maps shows, and what tests look for. */
#define TNS_NS_FILE_NAME "timens-vdso"
#define TNS_NS_MEMFD_LINK "/memfd:" TNS_NS_FILE_NAME

#define TNS_PAGE_STORE_NULL ((struct tns_page_store){.rw_dir = -EBADF, .ro_dir = -EBADF})

/* A new store. -EPERM (or another -errno) where the caller may not make
 * a mount namespace and mount a tmpfs (an unprivileged supervisor, whose
 * members are its own user's processes anyway). */
int tns_page_store_new(struct tns_page_store *ret);
/* The store of a predecessor, from its two fds (taken, also on failure):
 * -EBADMSG unless both are directories of one tmpfs, ro_dir's mount
 * read-only and rw_dir's not. */
int tns_page_store_adopt(int rw_dir, int ro_dir, struct tns_page_store *ret);
void tns_page_store_done(struct tns_page_store *ps);
/* Whether ps holds a store. */
static inline int tns_page_store_usable(const struct tns_page_store *ps) {
        return ps && ps->rw_dir >= 0 && ps->ro_dir >= 0;
}

/* The file of namespace id, created (mode 0444, size bytes), opened
 * read-write: -EEXIST if it is there. */
int tns_page_store_create(const struct tns_page_store *ps, uint64_t id, size_t size);
/* The file of namespace id, read-only, through the read-only mount. */
int tns_page_store_open_ro(const struct tns_page_store *ps, uint64_t id);
/* Whether fd is the file of namespace id in this store. */
int tns_page_store_owns(const struct tns_page_store *ps, int fd, uint64_t id);
/* Unlinks the file of namespace id: its memory goes with the last
 * mapping and fd. */
void tns_page_store_remove(const struct tns_page_store *ps, uint64_t id);
