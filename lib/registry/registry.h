/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry: what timensd needs of the engine beyond serving calls —
 * namespaces by name, their life cycle, live changes of offsets, counters,
 * listener fds adopted from clients, and which namespace a process is in.
 *
 * Life cycle. A namespace the registry *holds* (made by create, import or
 * adopt) has a record and a name unique among held namespaces; the record
 * owns the supervisor's creation reference. Namespaces made by adopt
 * (`timensctl run`) are dropped when their last listener hangs up, i.e.
 * when the last process under their filter has exited; the others live
 * until destroyed. Destroying a namespace that still has processes is
 * refused (-EBUSY) unless forced: then it only loses its name and record,
 * as `ip netns delete` does, and its processes keep their clocks until they
 * exit. Child namespaces (unshare inside) are never held: they come and go
 * with their processes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ns-model.h"
#include "offset-parse.h"
#include "supervisor.h"

/* Listeners one namespace may be fed by (adopt with join). */
#define TNS_MAX_LISTENERS_PER_NS 1024 /* attach gives each process of a tree its own */
#define TNS_MAX_LISTENERS 4096

struct tns_registry;

/* Called after a held namespace was dropped (its last process exited, or
 * it was destroyed); name may be NULL. */
typedef void (*tns_registry_gone_fn)(struct tns_registry *r, uint64_t id, const char *name, void *userdata);

/* Called after a listener of ns was taken on (adopt, attach, the seccomp
 * agent), with the process it was made for: timensd watches that
 * process's pid namespace for entrants (timensd-entrants.c). */
typedef void (*tns_registry_adopted_fn)(struct tns_registry *r, struct tns_ns *ns, pid_t pid, void *userdata);

int tns_registry_new(struct tns_supervisor *s, struct tns_registry **ret);
/* Forgets the records; the supervisor keeps the namespaces until it is
 * freed itself. */
struct tns_registry *tns_registry_free(struct tns_registry *r);
void tns_registry_set_gone_callback(struct tns_registry *r, tns_registry_gone_fn fn, void *userdata);
void tns_registry_set_adopted_callback(struct tns_registry *r, tns_registry_adopted_fn fn, void *userdata);

/* A held namespace by name, or any namespace of the supervisor by id. */
struct tns_ns *tns_registry_find(struct tns_registry *r, const char *name);
struct tns_ns *tns_registry_find_id(struct tns_registry *r, uint64_t id);

/* All namespaces of the supervisor, oldest first: *ret is an array the
 * caller frees. */
int tns_registry_list(struct tns_registry *r, struct tns_ns ***ret, size_t *ret_n);

struct tns_ns_info {
        uint64_t id;
        uint64_t parent_id; /* 0 for a root */
        const char *name; /* NULL if none; valid until the next change */
        enum tns_origin origin;
        enum tns_grant grant;
        uid_t owner; /* the uid that made it (struct tns_ns) */
        bool shared; /* others may join it */
        int64_t offset[TNS_CLASS_MAX]; /* effective: namespace clock = host + offset */
        unsigned listeners; /* listener fds feeding this namespace */
        unsigned pinned; /* processes pinned to it after an unshare */
        unsigned children; /* child namespaces */
        bool live; /* it or a descendant has processes */
        uint64_t calls, failures; /* calls served for its processes */
        uint64_t sets; /* changes through the registry */
        int64_t created_realtime_ns; /* 0 if unknown */
        /* Rates: the clocks' maps (lib/core/rate.h), the rate now (0
         * frozen) and when running, per class (MONOTONIC and BOOTTIME
         * alike). */
        struct tns_rate_map map[TNS_CLASS_MAX];
        uint64_t rate_mult[TNS_CLASS_MAX], run_mult[TNS_CLASS_MAX];
        bool rate_capable;
        unsigned depth; /* 0 for a root */
        uint64_t kernel_ns; /* the inode of its kernel time namespace, 0 if none */
        bool kernel_offsets_known;
        int64_t kernel_offset[TNS_CLASS_MAX]; /* the kernel's, added to ours (realtime: 0) */
};

void tns_registry_info(struct tns_registry *r, struct tns_ns *ns, struct tns_ns_info *ret);

/* The live processes of a namespace (the trees under its listeners'
 * processes, and processes pinned to it, minus those pinned elsewhere,
 * plus processes that map its memfd: programs exec'd in it with our vDSO,
 * also after they were reparented out of those trees), at most max;
 * returns how many it found, which may exceed max. A process reparented
 * before any exec with the vDSO is not found. */
int tns_registry_processes(struct tns_registry *r, struct tns_ns *ns, pid_t *pids, size_t max);
/* The same without the scan of every process's maps (the part whose cost
 * grows with what other users run): the trees and pinned members only,
 * so reparented programs are missed. For requests served on the loop
 * that serves clock calls (timensd's show). */
int tns_registry_processes_tracked(struct tns_registry *r, struct tns_ns *ns, pid_t *pids, size_t max);

/* The namespace a process belongs to: the one whose offsets page it maps
 * (our vDSO), else its own or its nearest ancestor's entry, as the
 * supervisor resolves callers; NULL if none. */
struct tns_ns *tns_registry_find_process(struct tns_registry *r, pid_t pid);
/* Whether any process may be under one of our filters (a listener is
 * served). */
bool tns_registry_serves_processes(struct tns_registry *r);

/* A new held namespace. -EEXIST if the name is taken, -EINVAL if it is
 * not valid, -ENOSPC past TNS_MAX_NAMESPACES. */
int tns_registry_create(struct tns_registry *r, const char *name, const int64_t offsets[TNS_CLASS_MAX],
                        enum tns_origin origin, enum tns_grant grant, struct tns_ns **ret);

/* Who made a held namespace, and whether others may join it (timensd
 * decides who may: docs/SECURITY.md, "timensd's sockets"); kept across restarts.
 * A new namespace belongs to root and is not shared. -EPERM if ns is not
 * held. */
int tns_registry_set_owner(struct tns_registry *r, struct tns_ns *ns, uid_t owner, bool shared);

/* -EBUSY while it has processes, unless force (see above); -EPERM for a
 * namespace the registry does not hold (a child, a detached one). */
int tns_registry_destroy(struct tns_registry *r, struct tns_ns *ns, bool force);

/* Sets the effective offsets of the classes in mask (bit 1 << class) at
 * once: every value is checked first (-ERANGE, *ret_class says which),
 * then all are published. A live namespace's MONOTONIC or BOOTTIME may not
 * move backwards unless allow_backwards (-EDOM, *ret_class says which). */
int tns_registry_set_offsets(struct tns_registry *r, struct tns_ns *ns, unsigned mask,
                             const int64_t offsets[TNS_CLASS_MAX], bool allow_backwards,
                             enum tns_clock_class *ret_class);

/* Serves a seccomp listener fd (taken, also on failure) for ns. -ENOTTY if
 * fd is not a seccomp listener, -ENOSPC past the caps. */
int tns_registry_adopt(struct tns_registry *r, struct tns_ns *ns, int fd, pid_t root_pid);

/* Attaches process pid (and its tree, flags TNS_ATTACH_TREE) to ns
 * (tns_supervisor_attach), within the listener caps (-ENOSPC if there is
 * no room for even the root). owner: whose processes may be taken
 * (attach-creds.h), NULL when root asks. */
int tns_registry_attach(struct tns_registry *r, struct tns_ns *ns, pid_t pid, unsigned flags,
                        const struct tns_attach_owner *owner, struct tns_attach_report *ret);

int tns_registry_export(struct tns_registry *r, struct tns_ns *ns, struct tns_clock_state *ret);

/* A held namespace (origin import) whose MONOTONIC and BOOTTIME read now
 * what they read at export, and whose REALTIME keeps its offset from the
 * host's; name overrides state->name if not NULL. -ERANGE (*ret_class)
 * if this host's clocks cannot give those values. */
/* Changes the rate of each class (mult[c]; 0: keep it) and freezes or
 * unfreezes it (freeze[c] > 0, == 0; < 0 leaves it), all in one write:
 * re-anchored now, so no clock jumps and MONOTONIC never goes back.
 * MONOTONIC and BOOTTIME must be given alike (-EINVAL). -EOPNOTSUPP for a
 * child namespace (it runs at its root's rate); -EPERM for a namespace
 * with processes that was not made rate-capable (their filter does not
 * trap relative waits: it must be made with a rate, e.g. 1). */
int tns_registry_set_rate(struct tns_registry *r, struct tns_ns *ns, const uint64_t mult[TNS_CLASS_MAX],
                          const int freeze[TNS_CLASS_MAX]);
/* Makes a new namespace rate-capable and gives it a rate as above. The
 * clocks the request gave as a date (clocks[c] absolute; NULL: none) get
 * their offset again, made against the rated clock once its map is set:
 * a clock frozen at a date reads exactly that date, not the date plus
 * the moments between the namespace's making and its freeze. */
int tns_registry_init_rate(struct tns_registry *r, struct tns_ns *ns, const uint64_t mult[TNS_CLASS_MAX],
                           const int freeze[TNS_CLASS_MAX], const struct tns_clock_arg clocks[TNS_CLASS_MAX]);

int tns_registry_import(struct tns_registry *r, const struct tns_clock_state *state, const char *name,
                        enum tns_grant grant, struct tns_ns **ret, enum tns_clock_class *ret_class);

/* Restarts (lib/core/state.h): the state record of the supervisor and its
 * registry now. */
struct tns_state;
int tns_registry_save_state(struct tns_registry *r, struct tns_state *ret);

/* Serves again what the record and the fds describe (the supervisor must
 * have nothing yet): namespaces from their memfds (offsets as their pages
 * have them), listeners (with what queued on them while no one served
 * them), members still alive, /proc connections; then the adopted
 * callback for each listener. Entries whose fd or process is gone are
 * skipped and counted. */
int tns_registry_restore_state(struct tns_registry *r, const struct tns_state *st, struct tns_named_fd *fds, size_t n,
                               struct tns_restore_report *ret);
