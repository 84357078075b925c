/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A time namespace: the unit of state. Its clocks are the host's plus an
 * offset per class; a child namespace (unshare(CLONE_NEWTIME) inside, RFC
 * style) stores its offsets relative to its parent, so moving a parent's
 * clock moves its children's too. The effective offsets live in the
 * namespace's offsets page (a memfd), which is what every reader uses. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#include "offsets-page.h"
#include "rate.h"

/* The namespace's memfd, which every member maps at each exec:
 *
 *   0                  a template of the per-process parameter page
 *                      (mapped privately, then filled per process)
 *   TNS_PAGE_SIZE      the offsets page (mapped shared and read-only)
 *   2 * TNS_PAGE_SIZE  our vDSO image, if the supervisor has one
 *
 * so that one fd and one shared mapping carry all three parts, in the
 * layout the image expects (lib/core/offsets-page.h). */
#define TNS_MEMFD_OFFSETS_PAGE TNS_PAGE_SIZE
#define TNS_MEMFD_IMAGE (2 * TNS_PAGE_SIZE)

/* Our vDSO image as the supervisor prepared it for this host. */
struct tns_page_store;

struct tns_image {
        const void *data;
        size_t size; /* a multiple of TNS_PAGE_SIZE */
};

struct tns_ns {
        uint64_t id;
        char *name;
        struct tns_ns *parent;
        struct tns_ns *first_child, *next_sibling;
        unsigned n_refs;
        int64_t delta[TNS_CLASS_MAX]; /* relative to the parent (the host for a root) */
        bool tz_set;
        struct timezone tz;
        /* The uid whose namespace it is: its maker (the registry's
         * requester, the user of an embedded supervisor, the caller of the
         * unshare that made it). Its clocks may be set from inside with a
         * capability held in a user namespace only that uid or root made
         * (supervisor.c, may_set_clocks()). */
        uid_t owner;
        int page_fd; /* the memfd described above (a file of *store, if set) */
        dev_t page_dev; /* its device and inode: how /proc/PID/maps names it */
        uint64_t page_ino;
        const struct tns_page_store *store; /* where the file is; NULL: a memfd */
        /* Our copy of what we published on the page, and the page's
         * sequence as we last wrote it: the page itself is mapped by
         * members and never read back (but once, at adoption). */
        int64_t offset[TNS_CLASS_MAX];
        uint32_t seq;
        /* Rates, kept by roots only (a child's clocks are its root's plus
         * offsets, so they run at its rate): per class, the map R of host
         * time to the root's rated time, to which the offsets add. Not
         * rated, R is the identity and the page has offsets alone. */
        bool rate_capable; /* made with a rate: members trap relative waits */
        bool rated; /* some class's R is not the identity */
        struct tns_rate_map rate[TNS_CLASS_MAX];
        uint64_t run_mult[TNS_CLASS_MAX]; /* the rate a frozen class resumes with */
        int page_ro_fd; /* a read-only description of it, for members; lazily */
        size_t memfd_size;
        struct tns_offsets_page *page;
        /* For the control API: calls served for this namespace's
         * processes and those that failed (supervisor.c counts), and the
         * registry's record of it (lib/registry/; NULL if none). */
        uint64_t n_calls, n_failures;
        struct tns_ns_record *record;
        /* Adopted from a previous supervisor with an image other than
         * ours (an upgrade): its members keep theirs, new programs get
         * none (the syscall path) — the image's code is never rewritten
         * under a running program. */
        bool image_stale;
        /* The kernel time namespace paired with it (lib/kernel/kns.h): an
         * fd that holds it (so its inode is not reused while we name it by
         * it) and that inode; -EBADF and 0 while unknown. */
        int kns_fd;
        uint64_t kns_ino;
        /* The supervisor holds a reference for the pair: processes may
         * setns back into the kernel namespace after the last of ours
         * left it (supervisor-kns.c). */
        bool kns_pinned;
        /* Called as it is freed (the supervisor's hook, supervisor.c). */
        void (*on_free)(struct tns_ns *ns, void *userdata);
        void *on_free_userdata;
        /* Supervisor-owned list of all namespaces. */
        struct tns_ns *next, **pprev;
};

/* A new namespace whose clocks read host + offsets (root) or parent +
 * offsets (child). Takes a reference on the parent. image may be NULL (no
 * vDSO for this namespace's members); store may be NULL (a memfd), else
 * it must outlive the namespace. */
int tns_ns_new(uint64_t id, const char *name, struct tns_ns *parent, const int64_t offsets[TNS_CLASS_MAX],
               const struct tns_image *image, const struct tns_page_store *store, struct tns_ns **ret);
/* The same from the memfd of a namespace an earlier supervisor made
 * (taken, also on failure): the offsets come from its offsets page, which
 * every member maps, and stay the same. -EBADMSG if fd is not such a
 * memfd of namespace id. */
int tns_ns_adopt(uint64_t id, const char *name, struct tns_ns *parent, int fd, const struct tns_image *image,
                 const struct tns_page_store *store, struct tns_ns **ret);
/* Whether its members get our vDSO image at exec. */
bool tns_ns_has_image(const struct tns_ns *ns);
struct tns_ns *tns_ns_ref(struct tns_ns *ns);
/* Drops a reference; returns true if that freed the namespace. */
bool tns_ns_unref(struct tns_ns *ns);

/* The effective offset of one class (host + offset = namespace clock). */
int64_t tns_ns_offset(const struct tns_ns *ns, enum tns_clock_class c);

/* Sets the effective offset of one class and republishes the pages of the
 * namespace and of all its descendants. -ERANGE if an offset of a
 * descendant would overflow; nothing changes then. */
int tns_ns_set_offset(struct tns_ns *ns, enum tns_clock_class c, int64_t effective);
/* The same for the classes in mask (bit 1 << class), published at once;
 * -ERANGE and nothing changed if any would not fit. */
int tns_ns_set_offsets(struct tns_ns *ns, unsigned mask, const int64_t effective[TNS_CLASS_MAX]);

/* The root whose rate a namespace runs at (itself for a root). */
const struct tns_ns *tns_ns_root(const struct tns_ns *ns);
/* Whether its clocks run at a rate other than 1 (or stand frozen). */
bool tns_ns_rated(const struct tns_ns *ns);
/* Whether it was made rate-capable (its members trap relative waits). */
bool tns_ns_rate_capable(const struct tns_ns *ns);

/* The rated base of class c for a host reading (host itself when not
 * rated): the namespace's clock is this plus tns_ns_offset(). */
int64_t tns_ns_base(const struct tns_ns *ns, enum tns_clock_class c, int64_t host);
/* The namespace's whole map for class c: what the page publishes. */
void tns_ns_rate_map(const struct tns_ns *ns, enum tns_clock_class c, struct tns_rate_map *ret);
/* The namespace's clock of class c for the host's reading of it;
 * -EOVERFLOW out of range. */
int tns_ns_now(const struct tns_ns *ns, enum tns_clock_class c, const struct timespec *host, struct timespec *ret);
/* The rate a class runs at now (0: frozen) and the one it resumes with. */
uint64_t tns_ns_mult(const struct tns_ns *ns, enum tns_clock_class c);
uint64_t tns_ns_run_mult(const struct tns_ns *ns, enum tns_clock_class c);

/* Changes the rate of the classes in mask (bit 1 << class; MONOTONIC and
 * BOOTTIME go together) of a root namespace, republishing its pages and
 * its descendants': mult > 0 sets a running rate (a frozen class stays
 * frozen, and resumes with it); freeze > 0 freezes at the current
 * reading, freeze == 0 unfreezes, freeze < 0 leaves it. Every clock reads
 * the same just before and after (re-anchored now), so MONOTONIC never
 * goes back. mult 0 keeps the rate. -EOPNOTSUPP for a child namespace. */
int tns_ns_set_rate(struct tns_ns *ns, unsigned mask, uint64_t mult, int freeze);
/* The same per class, in one write of the pages: class c is changed by
 * mult[c] and freeze[c] as above, left as it is when mult[c] is 0 and
 * freeze[c] < 0. The caller gives MONOTONIC and BOOTTIME the same. */
int tns_ns_set_rates(struct tns_ns *ns, const uint64_t mult[TNS_CLASS_MAX], const int freeze[TNS_CLASS_MAX]);
/* Marks a root namespace rate-capable (a creation flag). */
void tns_ns_set_rate_capable(struct tns_ns *ns, bool capable);

/* A read-only fd of the namespace's memfd (members map it through that,
 * so they can never write it), opened once. */
int tns_ns_ro_fd(struct tns_ns *ns);

/* The timezone settimeofday() gave this namespace or an ancestor. */
bool tns_ns_tz(const struct tns_ns *ns, struct timezone *ret);

/* Checks that a clock of class c, which reads host_now on the host, stays
 * within what the kernel allows its own namespaces when shifted by
 * `offset`: not negative, and below KTIME_SEC_MAX/2 for monotonic and
 * boottime (kernel/time/namespace.c), below KTIME_SEC_MAX (year 2262) for
 * realtime. Returns 0 or -ERANGE. */
int tns_offset_check(enum tns_clock_class c, int64_t offset, const struct timespec *host_now);

/* The host clock that stands for a class: CLOCK_MONOTONIC, CLOCK_BOOTTIME
 * or CLOCK_REALTIME. */
clockid_t tns_class_clock(enum tns_clock_class c);
