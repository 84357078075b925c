/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The supervisor engine: serves seccomp notifications from any number of
 * listener fds on an sd-event loop, with the namespaces they feed. The
 * embedded mode of `timensctl run` and timensd both run it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/seccomp.h>
#include <systemd/sd-event.h>

#include "log.h"
#include "ns-model.h"
#include "ns.h"
#include "syscall-table.h"
#include "vdso-direct.h"

struct tns_supervisor;

/* Hard caps on what containers can make the supervisor allocate. */
#define TNS_MAX_NAMESPACES 4096
/* Namespaces made by unshare inside: under one root, and in all, so that a
 * member in a loop of unshares fills neither its tree nor the daemon (a
 * quarter stays for the namespaces root and the group make). */
#define TNS_MAX_NAMESPACES_PER_TREE 256
#define TNS_MAX_UNSHARED (TNS_MAX_NAMESPACES / 4 * 3)
#define TNS_MAX_MEMBERS_PER_LISTENER 4096

typedef void (*tns_supervisor_idle_fn)(struct tns_supervisor *s, void *userdata);

/* The calling thread must keep SIGCHLD blocked: vDSO injection waits for
 * ptrace stops through an sd-event signal source. */
int tns_supervisor_new(sd_event *event, const struct tns_logger *log, struct tns_supervisor **ret);
struct tns_supervisor *tns_supervisor_free(struct tns_supervisor *s);

/* Runs the event loop until sd_event_exit(), as sd_event_loop() does
 * (its exit code, or a negative errno). Plain clock reads are served by
 * a receive thread per listener, beside the loop: the engine is locked
 * from tns_supervisor_new() to tns_supervisor_free() for the thread that
 * made it, except while this waits for events. So the program runs its
 * loop with this, never sd_event_loop(), and uses the engine (and
 * anything it hands the engine's callbacks) from that thread only. */
int tns_supervisor_run(struct tns_supervisor *s);
/* Before a hand-over to a new image or an exit: the receive threads
 * stop, and the calls they had received are served while the loop runs,
 * so that none is left for a successor to find; the loop receives from
 * then on. start_threads()
 * makes them again (the hand-over failed). */
void tns_supervisor_stop_threads(struct tns_supervisor *s);
/* Before a hand-over: the calls held past their entry stop that end at
 * once (file times set to now) are let go at their end, for a bounded
 * moment (supervisor-wait.c). */
void tns_supervisor_settle_held_calls(struct tns_supervisor *s);
void tns_supervisor_start_threads(struct tns_supervisor *s);

/* A new root namespace (clocks = host + offsets). */
/* Flags of a namespace. NO_VDSO: its members keep no vDSO at all (the
 * supervisor removes the kernel's from their auxv at exec), so that every
 * clock read is a syscall, emulated. */
#define TNS_NS_NO_VDSO 0x1U
int tns_supervisor_create_ns_flags(struct tns_supervisor *s, const char *name, const int64_t offsets[TNS_CLASS_MAX],
                                   unsigned flags, struct tns_ns **ret);
int tns_supervisor_create_ns(struct tns_supervisor *s, const char *name, const int64_t offsets[TNS_CLASS_MAX],
                             struct tns_ns **ret);

/* Serves a listener fd (takes ownership) whose callers belong to ns.
 * root_pid is the process the filter was installed in, for logs. */
int tns_supervisor_add_listener(struct tns_supervisor *s, struct tns_ns *ns, int fd, pid_t root_pid);

/* Attach (lib/kernel/attach.h) of a running process, with its descendants if
 * flags has TNS_ATTACH_TREE: each process is stopped in turn, given the
 * filter (its children are listed while it is stopped: those it forks
 * later inherit the filter) and its listener fd handed to fn (taken; e.g.
 * tns_supervisor_add_listener). At most max_processes are attached; the
 * root's failure is returned (attach.h's errors, -EDEADLK for the
 * supervisor itself; -EACCES: ret->root_denied says why), those of
 * descendants are in the report (a descendant that exited meanwhile is
 * left out). The supervisor's own process is never attached.
 *
 * owner (attach-creds.h): whose processes may be taken, NULL for root.
 * Every process is checked once stopped; one that is not owner's is let
 * go untouched and listed in ret->skipped, and its descendants are not
 * visited (what runs under a setuid program is not the caller's tree).
 *
 * Synchronous: it blocks the event loop, so it is bounded: no thread is
 * waited for after TNS_ATTACH_DEADLINE_MS from the start, nor longer than
 * TNS_ATTACH_STOP_TIMEOUT_MS; the processes not reached in time are in
 * ret->failed with -ETIMEDOUT. */
#define TNS_ATTACH_TREE 0x1U
/* The process was stopped at its exec by a SIGSTOP meant for us (timensd's
 * BPF program): swallowed, and the process continued once attached. */
#define TNS_ATTACH_AT_EXEC 0x2U
/* Into a rate-capable namespace: the filter that traps relative waits too
 * (TNS_FILTER_RATED). */
#define TNS_ATTACH_RATED 0x4U
/* The root process, in the host's kernel time namespace, makes one for
 * the namespace: its children and its next program are in it (the
 * namespace's identity, /proc/PID/ns/time; lib/kernel/attach.h,
 * TNS_ATTACH_NEWTIME). For a namespace not yet paired with one. The
 * unshare runs before the filter (which would trap it): an attach that
 * fails after it leaves the new namespace for the process's children,
 * with zero offsets, the same clocks. */
#define TNS_ATTACH_NEWTIME_ROOT 0x8U
#define TNS_ATTACH_MAX_PROCESSES 1024
#define TNS_ATTACH_DEADLINE_MS 2000

struct tns_attach_owner;

struct tns_attach_failure {
        pid_t pid;
        int error;
};

struct tns_attach_skip {
        pid_t pid;
        const char *reason; /* static (attach-creds.h) */
};

struct tns_attach_report {
        unsigned n_attached, n_failed, n_skipped; /* may exceed what the arrays keep */
        bool root_continued; /* AT_EXEC: the root had reached its group stop (its parent may have seen it) */
        const char *root_denied; /* -EACCES: why the root is not owner's */
        pid_t attached[TNS_ATTACH_MAX_PROCESSES];
        struct tns_attach_failure failed[TNS_ATTACH_MAX_PROCESSES];
        struct tns_attach_skip skipped[TNS_ATTACH_MAX_PROCESSES];
};

typedef int (*tns_attach_listener_fn)(int fd, pid_t pid, void *userdata);
int tns_supervisor_attach(struct tns_supervisor *s, pid_t pid, unsigned flags, unsigned max_processes,
                          const struct tns_attach_owner *owner, tns_attach_listener_fn fn, void *userdata,
                          struct tns_attach_report *ret);
/* /proc/uptime and /proc/stat as the namespace sees them
 * (supervisor-procfs.c). add_listener covers them by itself at /proc when
 * root_pid has a mount namespace other than the supervisor's (`timensctl
 * run` makes one); this covers them at proc_dir in root_pid's mount
 * namespace, for a runtime whose container has its /proc elsewhere yet
 * (an OCI createRuntime hook: <rootfs>/proc before pivot_root). -ESRCH if
 * no listener has that root. */
int tns_supervisor_mount_proc(struct tns_supervisor *s, pid_t root_pid, const char *proc_dir);
/* The FUSE fds serving root_pid's /proc files (at most n, in fds; the
 * count is returned). They stay the supervisor's: a daemon keeps dups of
 * them (systemd's fd store) so that a restart does not cut the readers
 * off (ENOTCONN) — the connection lives while any of its fds does. */
int tns_supervisor_procfs_fds(struct tns_supervisor *s, pid_t root_pid, int *fds, size_t n);

/* Restarts (lib/core/state.h). A daemon that must survive its own restart
 * keeps copies of some fds (systemd's fd store) and a state record; the
 * change callback tells it, at every change, which fd to keep (fd >= 0,
 * named fd_name) or drop (fd < 0), or (fd_name NULL) that the record
 * changed. The record must be saved before any fd it names is kept; a
 * change that keeps no fd may be saved later (a burst of namespaces
 * ending is one save, not one per entry), but the flush callback, when
 * set, is called before a trapped call whose serving changed the record
 * (a setns, an unshare, a time zone set) is answered: the record a
 * successor finds never lags what a program was told. */
typedef void (*tns_supervisor_change_fn)(struct tns_supervisor *s, const char *fd_name, int fd, void *userdata);
typedef void (*tns_supervisor_flush_fn)(struct tns_supervisor *s, void *userdata);
void tns_supervisor_set_change_callback(struct tns_supervisor *s, tns_supervisor_change_fn fn,
                                        tns_supervisor_flush_fn flush, void *userdata);

/* The call being served, where a successor finds it. A notification
 * received but not yet answered when the daemon dies stays "sent" in the
 * kernel: no RECV on the listener shows it again, yet the listener (kept
 * in the fd store) accepts its answer from anyone. So the request is
 * copied, from receipt to answer, into memory that outlives the daemon
 * (a memfd it keeps): its successor serves it again. */
#define TNS_INFLIGHT_MAGIC UINT64_C(0x544e53494e464c33) /* "TNSINFL3" */
/* A notification can also be lost inside the RECV itself: a SIGKILL there
 * leaves it "sent" with no copy anywhere. Its id is the next after the
 * last one received on its listener (ids grow, RECV takes them in order),
 * so each listener's last id is kept here too: the successor finds such a
 * call with SECCOMP_IOCTL_NOTIF_ID_VALID and answers -ERESTARTNOINTR,
 * which makes the kernel run the syscall again — through the filter, to
 * us, with its arguments. */
#define TNS_INFLIGHT_LISTENERS 4096
struct tns_inflight_ids {
        uint64_t serial_plus1; /* 0: a free entry */
        uint64_t last_id;
};
/* Execs held (supervisor-exec.c: a SIGSTOP of ours pending in them), so
 * that a successor looks at exactly these programs; past the table's
 * size, execs_overflow makes it look at every stopped process. */
#define TNS_INFLIGHT_EXECS 256
struct tns_inflight_exec {
        int32_t tid, tgid; /* 0: a free entry */
};
/* The answer of the vDSO direct path's proof (lib/kernel/vdso-direct.h)
 * and what it depends on (supervisor-proof-cache.c): a successor with the
 * same key takes it instead of proving again. All zero: none (a page of
 * a timensd before it, whose layout ended before it). */
struct tns_inflight_proof {
        uint64_t key[4];
        struct tns_vdso_direct direct;
};
struct tns_inflight {
        uint64_t magic;
        uint64_t listener; /* its serial */
        uint32_t busy;
        uint32_t execs_overflow;
        struct seccomp_notif req;
        struct tns_inflight_ids ids[TNS_INFLIGHT_LISTENERS];
        struct tns_inflight_exec execs[TNS_INFLIGHT_EXECS];
        struct tns_inflight_proof proof;
};
/* The size of the memory to give (whole pages). A successor discards a
 * page of another size (timensd-fdstore.c) and the calls it holds: what
 * is added goes in the last page's free tail, which a page from before it
 * has zeroed. */
#define TNS_INFLIGHT_SIZE ((sizeof(struct tns_inflight) + 4095) & ~(size_t) 4095)
_Static_assert(TNS_INFLIGHT_SIZE == 17 * 4096, "the in-flight page keeps its size across versions");

/* A slot per receive thread (supervisor-threads.c), which receives into
 * it: a call taken by a RECV is in memory that outlives us from the
 * instant the kernel hands it over, also when we are killed before our
 * next instruction, until the thread's next RECV (through its answer,
 * also one it sends without the engine's lock), and a successor serves it
 * again. Without it, such a call was sent back through the filter
 * (-ERESTARTNOINTR and a kick of its thread), which a thread traced by a
 * debugger, which we cannot seize, saw as clock_gettime failing with
 * errno 513. In a memfd of its own: an older timensd drops it and keeps
 * the page above. listener_plus1 names the thread's listener (its serial
 * + 1; 0: a free slot); req.id 0: nothing received. A slot per two cache
 * lines, so that threads do not share one. The loop receives into the
 * last for the listeners it receives for (no thread: past the threads'
 * limit, TIMENS_RECV_THREADS=0), naming each before its RECV. A call a
 * thread hands to the loop stays in its slot until it is answered, and
 * the thread takes a free one (while there is one: a thread per listener
 * takes at most all but the loop's). */
#define TNS_INFLIGHT_RECVS_MAGIC UINT64_C(0x3156434552534e54) /* "TNSRECV1" */
#define TNS_INFLIGHT_RECVS 1025 /* the last: the loop's, for listeners it receives for */
struct tns_inflight_recv {
        uint64_t listener_plus1;
        struct seccomp_notif req;
} __attribute__((aligned(128)));
struct tns_inflight_recvs {
        uint64_t magic;
        struct tns_inflight_recv slot[TNS_INFLIGHT_RECVS];
};
#define TNS_INFLIGHT_RECVS_SIZE ((sizeof(struct tns_inflight_recvs) + 4095) & ~(size_t) 4095)
/* NULL: none (no successor to serve them, as for the page). */
void tns_supervisor_set_inflight_recvs(struct tns_supervisor *s, struct tns_inflight_recvs *recvs);
void tns_supervisor_set_inflight(struct tns_supervisor *s, struct tns_inflight *slot);
/* After a restore: serves the calls the slot and the receive threads'
 * slots hold whose callers still wait for them (returns how many), and
 * sends calls lost otherwise (handed to the loop and not served, or taken
 * by an older timensd's RECV) back through the filter (-ERESTARTNOINTR). */
int tns_supervisor_resume_inflight(struct tns_supervisor *s);

/* Every fd the record names, as the change callback reported them: fn is
 * called for each (name, fd). */
typedef void (*tns_supervisor_fd_fn)(const char *name, int fd, void *userdata);
void tns_supervisor_foreach_fd(struct tns_supervisor *s, tns_supervisor_fd_fn fn, void *userdata);

/* Called when the last listener has hung up: every process that carried a
 * filter is gone. */
void tns_supervisor_set_idle_callback(struct tns_supervisor *s, tns_supervisor_idle_fn fn, void *userdata);

/* The namespaces, newest first (follow ns->next), and how many. */
struct tns_ns *tns_supervisor_namespaces(struct tns_supervisor *s);
unsigned tns_supervisor_count_namespaces(const struct tns_supervisor *s);

/* The kernel time namespace paired with ns (supervisor-kns.c): its inode
 * (0 if none), and whether its offsets are known (read once a caller in
 * it was served), then in ret_offset. */
bool tns_supervisor_ns_kernel(struct tns_supervisor *s, const struct tns_ns *ns, uint64_t *ret_ino,
                              int64_t ret_offset[TNS_CLASS_MAX]);
/* Listeners feeding ns itself, processes pinned to ns, and whether ns or
 * a descendant has any process. */
void tns_supervisor_ns_counts(struct tns_supervisor *s, struct tns_ns *ns, unsigned *ret_listeners,
                              unsigned *ret_pinned, bool *ret_live);
/* The live processes of ns (the trees under its listeners' processes,
 * and processes pinned to it, minus those pinned elsewhere, plus, with
 * scan_maps, processes that map its offsets page: programs exec'd in it
 * with our vDSO, also after they were reparented out of those trees), at
 * most max; returns how many it found, which may exceed max. The maps
 * scan runs within a time budget (the count is a lower bound then). */
int tns_supervisor_processes(struct tns_supervisor *s, struct tns_ns *ns, pid_t *pids, size_t max, bool scan_maps);
/* The namespace a process belongs to: the one whose offsets page it maps,
 * else its own or its nearest ancestor's entry, as callers are resolved;
 * NULL if none. */
struct tns_ns *tns_supervisor_find_process(struct tns_supervisor *s, pid_t pid);
/* Whether any listener is served (a process may be under our filter). */
bool tns_supervisor_serves_processes(struct tns_supervisor *s);

/* Called when a listener of ns hung up, before it drops its reference on
 * ns (the registry drops a `run` namespace with its last listener). */
typedef void (*tns_supervisor_listener_gone_fn)(struct tns_supervisor *s, struct tns_ns *ns, void *userdata);
void tns_supervisor_set_listener_gone_callback(struct tns_supervisor *s, tns_supervisor_listener_gone_fn fn,
                                               void *userdata);

/* Reports a change to the daemon (the change callback): an fd to keep
 * (fd >= 0) or one gone (fd < 0), or with fd_name NULL a change of the
 * state record only. Nothing is reported while a restore runs. */
void tns_supervisor_changed(struct tns_supervisor *s, const char *fd_name, int fd);
/* The offsets of a namespace changed: absolute waits in flight are
 * converted again. */
void tns_supervisor_offsets_changed(struct tns_supervisor *s);

/* One fd handed back to a restarted daemon, by name; restore sets fd to
 * -EBADF for each it takes. */
struct tns_named_fd {
        const char *name;
        int fd;
};

struct tns_restore_report {
        unsigned namespaces, listeners, members, procfs;
        unsigned dropped; /* entries of the record whose fd or process was gone */
};

/* Restarts (lib/core/state.h): the engine's part of the state record —
 * namespaces, listeners, members — with fn filling in what a layer
 * above keeps of each namespace. */
struct tns_state;
struct tns_state_ns;
typedef void (*tns_supervisor_save_ns_fn)(struct tns_ns *ns, struct tns_state_ns *ret, void *userdata);
int tns_supervisor_save_state(struct tns_supervisor *s, tns_supervisor_save_ns_fn fn, void *userdata,
                              struct tns_state *ret);

/* What a layer above does while the engine restores: ns() takes a
 * namespace the record says was held (st->held): 1 if it took the
 * creation reference, <0 if it could not (counted as dropped); every
 * other namespace's creation reference is dropped once the listeners and
 * members that hold it are back. listener() is told of each listener
 * served again, once the restore is complete. */
struct tns_supervisor_restore_ops {
        int (*ns)(struct tns_ns *ns, const struct tns_state_ns *st, void *userdata);
        void (*listener)(struct tns_ns *ns, pid_t root_pid, void *userdata);
        void *userdata;
};

/* Serves again what the record and the fds describe (the supervisor must
 * have nothing yet, else -EBUSY): namespaces from their files (offsets as
 * their pages have them), listeners (with what queued on them while no one
 * served them), members still alive, /proc connections. Entries whose fd
 * or process is gone are skipped and counted. */
int tns_supervisor_restore_state(struct tns_supervisor *s, const struct tns_state *st, struct tns_named_fd *fds,
                                 size_t n, const struct tns_supervisor_restore_ops *ops,
                                 struct tns_restore_report *ret);

const struct tns_supervisor_stats *tns_supervisor_get_stats(struct tns_supervisor *s);
/* Waits for the proof of the vDSO's direct path (started with the
 * supervisor, finished in the background) if it is still running: for a
 * report of the path images read through (stats' "reads"). */
void tns_supervisor_settle_vdso(struct tns_supervisor *s);

/* Whether pid maps the vDSO image of one of our namespaces (known by the
 * file's device and inode, not its name): a program exec'd under one of
 * our filters. */
bool tns_supervisor_maps_image(struct tns_supervisor *s, pid_t pid);

/* Closes an fd a member or a client gave, which may be a file of a FUSE
 * server that never answers the close's FLUSH (helper-43): on a thread of
 * its own, never the caller's. -errno, the fd kept open, if that thread
 * is stuck with 1024 more waiting (logged once). */
int tns_supervisor_close_untrusted(struct tns_supervisor *s, int fd);
