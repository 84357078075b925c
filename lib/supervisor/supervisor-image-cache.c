/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which of our namespaces a process's image maps, remembered per process.
 *
 * The answer comes from /proc/PID/maps (tns_proc_find_file_mapping), a
 * read that grows with the process's mappings, up to max_map_count
 * (65530): tens of milliseconds, on the one event loop that serves every
 * namespace. It is asked on trapped calls (the namespace of a caller once
 * a process of its tree moved, a syscall from the kernel vDSO's site, the
 * first arch_prctl), so a member that maps thousands of areas and calls in
 * a loop would stall every other namespace's calls. So each process's
 * answer is read once and kept until its mappings change in a way that
 * matters: its exec (a new program) and its unshare (the page replaced),
 * both of which come by us (supervisor_image_forget). What a process does
 * to its own mappings meanwhile (munmap, mremap) changes only its own
 * answers, as before.
 *
 * An entry names its process by its pidfs inode (Linux 6.9; a pidfd kept
 * open before): a pid reused by another process never finds it. The
 * table is small and recycled in turn: a member that makes many processes
 * only makes itself read again, once per process, and only so far on a
 * trapped call (TNS_IMAGE_MAX_MAPS). */
#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "proc-util.h"
#include "supervisor-internal.h"
#include "util.h"

static void *ns_with_file(dev_t dev, uint64_t ino, void *userdata) {
        struct tns_supervisor *s = userdata;

        for (struct tns_ns *ns = s->namespaces; ns; ns = ns->next)
                if (ns->page_dev == dev && ns->page_ino == ino)
                        return ns;
        return NULL;
}

static void entry_drop(struct tns_image_entry *e) {
        e->pidfd = safe_close(e->pidfd);
        *e = (struct tns_image_entry){.pidfd = -EBADF};
}

void supervisor_image_cache_init(struct tns_supervisor *s) {
        for (unsigned i = 0; i < TNS_IMAGE_CACHE; i++)
                s->images[i] = (struct tns_image_entry){.pidfd = -EBADF};
}

void supervisor_image_cache_done(struct tns_supervisor *s) {
        for (unsigned i = 0; i < TNS_IMAGE_CACHE; i++)
                entry_drop(&s->images[i]);
}

/* tid's process: its id and a pidfd of it. A leader (the usual caller)
 * is told by pidfd_open() alone; another thread by its status. */
static int process_of(pid_t tid, pid_t *ret_tgid) {
        struct tns_proc_status st;
        int fd, r;

        fd = tns_pidfd_open(tid);
        if (fd >= 0) {
                *ret_tgid = tid;
                return fd;
        }
        r = tns_proc_status(tid, &st);
        if (r < 0)
                return r;
        fd = tns_pidfd_open(st.tgid);
        if (fd < 0)
                return fd;
        *ret_tgid = st.tgid;
        return fd;
}

#define PIDFS_MAGIC 0x50494446

/* The pidfs inode of the process of pidfd, or 0 without pidfs (every
 * pidfd was one anonymous inode before Linux 6.9). */
static uint64_t pid_id_of(int pidfd) {
        struct statfs sfs;
        struct stat st;

        if (fstatfs(pidfd, &sfs) < 0 || sfs.f_type != PIDFS_MAGIC || fstat(pidfd, &st) < 0)
                return 0;
        return (uint64_t) st.st_ino;
}

/* tgid's entry if it is of the process of pidfd (whose pidfs inode is
 * pid_id); an entry of an earlier process of that pid goes. */
static struct tns_image_entry *entry_find(struct tns_supervisor *s, pid_t tgid, uint64_t pid_id) {
        for (unsigned i = 0; i < TNS_IMAGE_CACHE; i++) {
                struct tns_image_entry *e = &s->images[i];

                if (e->tgid != tgid)
                        continue;
                if (e->pid_id ? e->pid_id == pid_id : tns_pidfd_alive(e->pidfd))
                        return e;
                entry_drop(e);
                return NULL;
        }
        return NULL;
}

/* The process's entry, read from its maps (up to max_lines, 0: all) if
 * it has none, or only a partial one and the caller wants more, or (fresh)
 * one its first arch_prctl has not read itself. NULL if the process is
 * gone or cannot be read. */
static struct tns_image_entry *entry_get(struct tns_supervisor *s, pid_t tid, unsigned max_lines, bool fresh) {
        _cleanup_close_ int pidfd = -EBADF;
        struct tns_image_entry *e;
        bool seen = false;
        void *ns = NULL;
        uint64_t addr = 0, pid_id;
        unsigned slot = TNS_IMAGE_CACHE;
        pid_t tgid;
        int r;

        pidfd = process_of(tid, &tgid);
        if (pidfd < 0)
                return NULL;
        /* In its exec: its maps are the old program's, about to go. */
        if (supervisor_exec_in_flight(s, tgid))
                return NULL;
        pid_id = pid_id_of(pidfd);
        e = entry_find(s, tgid, pid_id);
        /* A partial entry stands for callers that read no further. */
        if (e && !fresh && (!e->partial || (max_lines != 0 && max_lines <= e->bound)))
                return e;
        /* The first arch_prctl's answer stands for the program. */
        if (e && fresh && e->first_call_seen)
                return e;
        if (e) {
                /* Read again further: in its own slot. */
                seen = e->first_call_seen;
                slot = (unsigned) (e - s->images);
                entry_drop(e);
        }
        r = tns_proc_find_file_mapping(tid, TNS_MEMFD_OFFSETS_PAGE, max_lines, ns_with_file, s, &addr, &ns);
        if (r < 0 && r != -ENOENT && r != -E2BIG)
                return NULL;
        /* Read from a process that was still this one afterwards. */
        if (!tns_pidfd_alive(pidfd))
                return NULL;
        e = &s->images[slot < TNS_IMAGE_CACHE ? slot : s->images_next++ % TNS_IMAGE_CACHE];
        entry_drop(e);
        *e = (struct tns_image_entry){.tgid = tgid,
                                      .pid_id = pid_id,
                                      /* Without pidfs, the pidfd is the name. */
                                      .pidfd = pid_id ? -EBADF : TAKE_FD(pidfd),
                                      .ns = r < 0 ? NULL : ns,
                                      .addr = addr,
                                      .partial = r == -E2BIG,
                                      .bound = max_lines,
                                      .first_call_seen = seen};
        return e;
}

static struct tns_ns *ns_of(struct tns_image_entry *e, uint64_t *ret_addr) {
        if (!e || !e->ns)
                return NULL;
        if (ret_addr)
                *ret_addr = e->addr;
        return e->ns;
}

struct tns_ns *supervisor_ns_by_mapping_fresh(struct tns_supervisor *s, pid_t tid, uint64_t *ret_addr) {
        void *ns = NULL;
        uint64_t addr;

        if (tns_proc_find_file_mapping(tid, TNS_MEMFD_OFFSETS_PAGE, 0, ns_with_file, s, &addr, &ns) < 0)
                return NULL;
        if (ret_addr)
                *ret_addr = addr;
        return ns;
}

struct tns_ns *supervisor_ns_by_mapping(struct tns_supervisor *s, pid_t tid, uint64_t *ret_addr) {
        return ns_of(entry_get(s, tid, TNS_IMAGE_MAX_MAPS, false), ret_addr);
}

struct tns_ns *supervisor_ns_by_mapping_whole(struct tns_supervisor *s, pid_t tid) {
        return ns_of(entry_get(s, tid, 0, false), NULL);
}

bool tns_supervisor_maps_image(struct tns_supervisor *s, pid_t pid) {
        /* The offsets page and the image are one mapping, from the page
         * on (inject-blob.c). */
        return supervisor_ns_by_mapping(s, pid, NULL) != NULL;
}

bool supervisor_image_first_call(struct tns_supervisor *s, pid_t tid, unsigned max_lines, bool *ret_image) {
        /* Read again, whatever an entry says: one read before this call
         * may be of the program before an exec we let through (a missing
         * file, a debugger's), its maps read in the instant between our
         * answer and the kernel's switch to the new program (a member's
         * control connection asks who it is, and a long argv makes that
         * instant 80 ms): it would say "our image" of a program without
         * it. The programs we inject are told by the ring before this. */
        struct tns_image_entry *e = entry_get(s, tid, max_lines, true);

        if (!e || e->first_call_seen)
                return false;
        e->first_call_seen = true;
        if (e->partial)
                return false; /* not a program at its start */
        *ret_image = e->ns != NULL;
        return true;
}

void supervisor_image_forget(struct tns_supervisor *s, pid_t tid, pid_t tgid) {
        for (unsigned i = 0; i < TNS_IMAGE_CACHE; i++)
                if (s->images[i].tgid != 0 && (s->images[i].tgid == tid || s->images[i].tgid == tgid))
                        entry_drop(&s->images[i]);
}

void supervisor_image_ns_gone(struct tns_supervisor *s, struct tns_ns *ns) {
        for (unsigned i = 0; i < TNS_IMAGE_CACHE; i++)
                if (s->images[i].ns == ns)
                        entry_drop(&s->images[i]);
}
