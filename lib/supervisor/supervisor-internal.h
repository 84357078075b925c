/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The supervisor's state, shared by the files of the engine
 * (supervisor*.c) and by nothing else: programs use supervisor.h. */
#pragma once

#include <pthread.h>
#include <seccomp.h>
#include <time.h>

#include "emulate.h"
#include "filter.h"
#include "page-store.h"
#include "ptrace-util.h"
#include "supervisor.h"
#include "vdso-host.h"
#include "wait-convert.h"
#include "wait-tail.h"

/* A process whose namespace differs from its listener's: one that called
 * unshare(CLONE_NEWTIME), a child it had before (pinned to the old one), or
 * a descendant resolved once. The pidfd tells us when it exits. */
struct member {
        struct listener *l;
        pid_t tgid;
        int pidfd;
        sd_event_source *src;
        struct tns_ns *ns;
        struct member *next;
};

/* The plain reads a receive thread serves outside the lock. */
#define TNS_PLAIN_READS 3

struct listener {
        struct tns_supervisor *s;
        uint64_t serial; /* names its fd ("l.SERIAL", lib/core/state.h) */
        int id_slot; /* its entry in the in-flight page's ids, -1 if none */
        int fd;
        pid_t root_pid;
        sd_event_source *src;
        struct tns_ns *ns;
        struct member *members;
        unsigned n_members;
        struct procfs_conn *procfs; /* supervisor-procfs.c: its FUSE mounts */
        /* A process of it made or entered a kernel time namespace
         * (unshare, setns): from then on, a caller's kernel offsets are
         * looked up (supervisor-kns.c). */
        bool kernel_nested;
        /* An unshare of its members was not given a namespace of ours:
         * warned about once, then at debug level (a member in a loop). */
        bool unshare_warned;
        /* root_pid's mount namespace when the listener came (0 if it was
         * gone): one cover of /proc per mount namespace, whichever of its
         * listeners holds it (supervisor-procfs.c). */
        dev_t mnt_dev;
        ino_t mnt_ino;
        /* supervisor-threads.c: its receive thread, if it has one (else
         * the event loop receives, on EPOLLIN). stop is read by the
         * thread without the lock. */
        pthread_t thread;
        bool threaded;
        bool stop;
        bool answering; /* ends a plain read without the lock */
        struct seccomp_notif *thread_req; /* the thread's copy of its call */
        struct tns_inflight_recv *recv_slot; /* its receive buffer in the in-flight page; NULL: none */
        struct seccomp_notif_resp *thread_resp; /* and its answer's */
        /* Answers its thread sent outside the lock, not yet in the
         * stats (tns_supervisor_get_stats() adds them). */
        bool counts_dirty;
        uint64_t replied_unlocked;
        uint64_t vanished_unlocked;
        uint64_t latency_unlocked[TNS_PLAIN_READS][TNS_LATENCY_BUCKETS];
        /* The calls its thread handed to the loop, not yet served (the
         * oldest's id), and the newest id received: what the in-flight
         * page's last_id says (supervisor.c, note_last_id()). */
        unsigned n_deferred;
        uint64_t oldest_deferred;
        uint64_t newest_received;
        struct listener *next;
};

/* A traced caller: the namespace's memfd is in its fd table as target_fd,
 * and we wait for its next stop. For an exec, the exec stop (or the
 * interrupt stop of a failed exec); for a remap (the caller moved to a new
 * namespace with unshare), the interrupt stop at its return from the
 * syscall, where its offsets page at remap_addr is replaced by the new
 * namespace's. */
enum trace_kind { TRACE_EXEC, TRACE_REMAP };

/* What a remap follows: the kernel's unshare or setns of the caller's
 * time namespace (supervisor-kns.c), run by the kernel. */
enum tns_nsop { TNS_NSOP_UNSHARE, TNS_NSOP_SETNS };

struct exec_trace {
        struct tns_supervisor *s;
        enum trace_kind kind;
        enum tns_nsop nsop; /* TRACE_REMAP */
        uint64_t l_serial; /* TRACE_REMAP: its listener's serial */
        uint64_t remap_addr; /* 0: no offsets page to move (no vDSO of ours) */
        pid_t tid, tgid;
        int target_fd;
        struct tns_ns *ns;
        struct tns_held_signals held;
        bool released; /* nothing more to do: detach at its next stop, or reap its exit */
        /* The hold (supervisor-exec.c, hold_exec()): a SIGSTOP of ours is
         * pending in the tracee, for the case we die before it is let go. */
        bool stop_sent;
        int hold_slot; /* its entry in the in-flight page's execs, -1 if none */
        struct exec_trace *next;
};

/* A converted absolute wait (lib/supervisor/supervisor-wait.c): the calling thread,
 * held under ptrace from the notification to the end of its syscall, with
 * its deadline converted into a slot of its wait page. This list is the
 * whole of the engine's in-flight state for waits. */
enum wait_phase {
        WAIT_INTERRUPT, /* replied -ERESTARTNOINTR; waiting for its interrupt stop */
        WAIT_ENTRY, /* resumed; waiting for the entry stop of the restarted call */
        WAIT_RUNNING, /* its argument points at our slot; waiting for its exit stop */
        WAIT_RERUN, /* file times failed as explicit (EPERM: not the owner): the program's own call runs again */
};

struct wait_trace {
        struct tns_supervisor *s;
        enum wait_phase phase;
        pid_t tid, tgid;
        int nr; /* the syscall */
        uint64_t args[6]; /* as the program passed them */
        uint64_t given; /* args[arg] as the program's own call has it: args[arg], or what a predecessor's rewrite
                           was (supervisor_wait(), recovered) */
        unsigned arg; /* the argument we point at the slot */
        int target_fd; /* our wait memfd in the target, to map; -EBADF: none */
        uint64_t page; /* its wait page, 0 until known */
        unsigned slot; /* index in the page */
        struct tns_ns *ns; /* its namespace: the offset is read at the entry stop */
        int clock_class;
        enum tns_wait_kind kind;
        unsigned char data[32]; /* the deadline as the program passed it (namespace time) */
        size_t len;
        bool reconvert; /* interrupted by us: the offset changed during the wait */
        bool relative; /* a duration of a rated namespace (tns_wait_classify_rated) */
        bool writes_back; /* select, pselect6, ppoll: the time left goes back to the program */
        int64_t end_host; /* ...when its timeout ends, in host CLOCK_MONOTONIC ns (set at the entry stop) */
        unsigned rem_arg; /* a relative sleep's rem (tns_wait_spec), made the namespace's when interrupted */
        bool now; /* file times set to "now" (lib/core/file-times.h) */
        bool as_setitimer; /* alarm run as setitimer(ITIMER_REAL) (supervisor_wait()) */
        bool readback; /* getitimer, timer_gettime: their result made the namespace's at the exit */
        uint64_t alarm_old; /* ...whose old value it writes here, below the thread's red zone */
        bool in_null; /* ...given as a NULL pointer: data holds nothing */
        bool rerun_entered; /* WAIT_RERUN: past the entry stop of the call run again */
        bool last_stop; /* we are going: its exit stop lets it go, whatever comes */
        bool let_run; /* WAIT_RUNNING: the filter's notification of the rewritten call answered */
        bool taken_back; /* we are going: interrupted before that answer (settle_held_calls) */
        struct wait_trace *next;
};

/* A hard cap on waits held at once, and the slots of one process's page. */
#define TNS_MAX_WAITS_IN_FLIGHT 16384
/* ...and of one namespace tree (a root and what unshare made under it):
 * one container's members cannot take every slot, after which the waits
 * of every other namespace would run unconverted. */
#define TNS_MAX_WAITS_PER_TREE 1024
#define TNS_WAIT_SLOT_SIZE 32
#define TNS_WAIT_SLOTS (TNS_WAIT_PAGE_SIZE / TNS_WAIT_SLOT_SIZE)
/* How far a restarted supervisor's first slot is from its predecessor's:
 * TNS_WAIT_SLOTS / golden ratio, odd (lib/supervisor/supervisor-state.c). */
#define TNS_WAIT_SLOT_STRIDE 1265

/* Where a process's wait page was last seen (validated by its magic
 * before use): direct-mapped by tgid, no allocation. */
#define TNS_WAIT_PAGE_CACHE 256
struct tns_wait_page_cache {
        pid_t tgid;
        /* wait_pages only: the thread of the process last sent the wait
         * tail while its page is not found yet (0: none), which is not
         * sent it again (its mmap failed). */
        pid_t tail_tid;
        /* wait_pages only: no page can be mapped in it by the tail, and it
         * has other threads: its waits run unconverted (map_page()'s
         * single steps would wait for its mmap lock, which another of its
         * threads may hold for as long as a fault of its takes). */
        bool no_steps;
        uint64_t addr;
        /* wait_pages only: its other wait pages, 0 where none. Threads
         * held at once before their process had one map one each (the
         * tail, or the single steps before it): slots a predecessor gave
         * them in any of these are known for ours. */
        uint64_t more[3];
};

/* The kernel time namespaces seen, by inode (supervisor-kns.c). */
#define TNS_KNS_CACHE 64
/* Child namespaces kept for their kernel pair after their last process,
 * per namespace tree (supervisor-kns.c). */
#define TNS_MAX_PINNED_PER_TREE 256
struct tns_kns_cache {
        uint64_t ino;
        int fd; /* holds the namespace: its inode is not reused meanwhile */
        int64_t offset[TNS_CLASS_MAX];
};

/* The kernel's "run the syscall again" (include/linux/errno.h): as the
 * reply to a notification, the caller makes the call anew, through the
 * filter (no signal needed: x86's exit path restarts it). */
#define ERESTARTNOINTR 513

/* Returns the syscall's result (value or -errno) for the reply, or
 * TNS_REPLY_CONTINUE to let the kernel run the call as it is. */
#define TNS_REPLY_CONTINUE INT64_MIN

/* A hard cap on execs held at once (each holds a traced thread). */
#define TNS_MAX_EXECS_IN_FLIGHT 1024

#define TNS_RECENT_INJECTED 64

/* supervisor-proof-cache.c: the proof's answer kept in the in-flight
 * page for a successor. _key computes s->proof_key (at setup, from the
 * image as prepared, before any proof); _save writes s->vdso's proven
 * direct path into the page; _cached, with a probe running, gives the
 * page's answer if its key is ours and it is a valid direct path (the
 * caller then ends its probe). */
void supervisor_proof_key(struct tns_supervisor *s);
void supervisor_proof_save(struct tns_supervisor *s);
bool supervisor_proof_cached(struct tns_supervisor *s, struct tns_vdso_direct *ret);

/* supervisor-image-cache.c: processes whose maps were read lately. */
#define TNS_IMAGE_CACHE 256
struct tns_image_entry {
        pid_t tgid; /* 0: free */
        /* The process: its pidfs inode (Linux 6.9: one per process, never
         * reused), or without pidfs a pidfd kept open. */
        uint64_t pid_id;
        int pidfd;
        struct tns_ns *ns; /* the namespace its page is of; NULL: none mapped */
        uint64_t addr; /* where that page is */
        bool partial; /* not read to the end (past a bound): ns is not known */
        unsigned bound; /* the lines read when partial */
        bool first_call_seen; /* supervisor-first-call.c looked at it */
};

struct tns_anyone;

struct tns_supervisor {
        sd_event *event;
        struct tns_logger log;
        struct tns_ns *namespaces;
        uint64_t next_ns_id;
        struct listener *listeners;
        struct seccomp_notif *req;
        struct seccomp_notif_resp *resp;
        struct tns_supervisor_stats stats;
        const struct tns_image *image; /* our vDSO image, or NULL: syscall path only */
        /* Where namespaces' files go (lib/kernel/page-store.h), made at the first
         * namespace; pages_failed: could not be made, memfds instead. */
        struct tns_page_store pages;
        bool pages_failed;
        bool exiting; /* in tns_supervisor_free(): nothing is gone for good */
        struct tns_vdso_host *vdso; /* NULL: no vDSO injection */
        /* Its direct path's proof while it runs (supervisor.c), and the
         * source that hears its answer. */
        struct tns_vdso_probe *vdso_probe;
        sd_event_source *vdso_probe_src[2];
        sd_event_source *vdso_probe_timer;
        uint64_t proof_key[4]; /* supervisor-proof-cache.c; all 0: none */
        struct exec_trace *execs;
        unsigned n_execs;
        struct exec_trace *exec_to_hold; /* begun by the call being served: held after its reply */
        sd_event_source *exec_adopt; /* supervisor-exec.c: the next look for held programs */
        unsigned exec_adopt_round;
        struct wait_trace *waits;
        unsigned n_waits;
        int wait_memfd; /* the wait page's memfd, -EBADF until first needed */
        unsigned wait_slot_base; /* where slot_alloc() starts: random, or a restored predecessor's + a stride */
        struct tns_wait_page_cache wait_pages[TNS_WAIT_PAGE_CACHE];
        /* Threads (by tid in .tgid, direct-mapped) and the wait page
         * their process was seen with (0: none): their explicit file
         * times near now outside it are their own, told on the receive
         * thread (supervisor-wait.c). Emptied when we map a page; a tid
         * reused since belongs to a thread made after we started, which
         * no predecessor of ours ever held; an exec's new mm only sends
         * a call to the loop, which looks again. */
        struct tns_wait_page_cache wait_page_by_tid[TNS_WAIT_PAGE_CACHE];
        /* The lookups of exec files as anyone (exec-missing.h); NULL:
         * none are told. */
        struct tns_anyone *anyone;
        sd_event_source *sigchld;
        sd_event_source *exec_rescan; /* supervisor-exec.c: a trace to look at again */
        tns_supervisor_listener_gone_fn listener_gone_fn;
        void *listener_gone_userdata;
        tns_supervisor_idle_fn idle_fn;
        void *idle_userdata;
        struct tns_filter *attach_filter; /* supervisor-attach.c, built at the first attach */
        struct tns_filter *attach_filter_rated; /* the same for rate-capable namespaces */
        uint64_t next_serial; /* of listeners and /proc connections */
        tns_supervisor_change_fn change_fn;
        tns_supervisor_flush_fn flush_fn;
        void *change_userdata;
        bool serve_changed; /* the call being served changed the record */
        bool restoring; /* supervisor-state.c: changes are not reported */
        struct tns_inflight *inflight; /* NULL: none */
        struct tns_inflight_recvs *recvs; /* the receive threads' slots; NULL: none */
        size_t recv_slot_next; /* where the search for a free one starts */
        struct tns_kns_cache kns[TNS_KNS_CACHE];
        unsigned kns_next;
        /* The offsets of the supervisor's own kernel time namespace: its
         * clock readings include them already, so a member's kernel part
         * is its namespace's offsets less these (supervisor-kns.c). */
        int64_t kns_self[TNS_CLASS_MAX];
        /* supervisor-first-call.c: the programs whose marker call we
         * answered lately (their first arch_prctl goes on at once). */
        pid_t injected[TNS_RECENT_INJECTED];
        unsigned injected_next;
        struct tns_image_entry images[TNS_IMAGE_CACHE];
        unsigned images_next;
        /* supervisor-threads.c. The lock: whoever touches the engine (or
         * anything of the program around it) holds it; the thread of the
         * event loop always, except while it waits for events
         * (tns_supervisor_run()) or for a receive thread to stop. */
        pthread_mutex_t lock;
        struct procfs_server *procfs_srv; /* supervisor-procfs.c: the FUSE thread, once a cover exists */
        int closer_fd; /* tns_supervisor_close_untrusted(): its closer's pipe */
        bool closer_stuck_logged;
        bool threads_off; /* TIMENS_RECV_THREADS=0: the loop receives */
        bool running; /* in tns_supervisor_run(): threads may start */
        bool loop_waiting; /* the loop waits for the lock: threads give way */
        unsigned threads_waiting; /* threads waiting for the lock (atomic) */
        uint64_t thread_turns; /* times a thread took the lock (atomic) */
        bool serving; /* in supervisor_serve_received() */
        bool serving_on_thread; /* ...called by a receive thread: nothing may be seized */
        unsigned n_threads;
        struct deferred *deferred; /* calls for the loop, oldest first */
        struct deferred **deferred_tail;
        int deferred_fd; /* eventfd: the loop has calls to serve */
        sd_event_source *deferred_src;
};

/* supervisor-threads.c: a thread per listener blocks in the kernel's
 * RECV and serves plain clock reads itself under the lock; every other
 * call (anything that ptraces, or adds an event source) goes to the event
 * loop's thread. At most TNS_MAX_RECV_THREADS; listeners past that, or
 * when a thread cannot be made, are received by the loop (EPOLLIN). */
#define TNS_MAX_RECV_THREADS 1024
_Static_assert(TNS_MAX_RECV_THREADS < TNS_INFLIGHT_RECVS, "a slot for every receive thread, and the loop's");
/* The listener of that serial (its name in the record and the in-flight
 * page), or NULL. */
struct listener *supervisor_listener_by_serial(struct tns_supervisor *s, uint64_t serial);
/* One RECV on l into req, through slot when there is one (supervisor.h,
 * struct tns_inflight_recv: named for l, then received into, then copied
 * to req): 0, or -errno (-EINTR, -ENOENT: a caller gone). */
int supervisor_receive_into(const struct listener *l, struct tns_inflight_recv *slot, struct seccomp_notif *req);
int supervisor_threads_init(struct tns_supervisor *s);
void supervisor_threads_done(struct tns_supervisor *s);
/* Starts l's thread once the loop runs (0), or says the loop must
 * receive for it (<0). */
int supervisor_thread_start(struct listener *l);
/* Called with the lock held, which it lets go meanwhile: l's thread is
 * gone and l's calls not served yet dropped (their callers are gone, or
 * the successor serves them). */
void supervisor_thread_stop(struct listener *l);
void supervisor_threads_stop_all(struct tns_supervisor *s);
/* A pause of the loop's thread in a wait it cannot leave (attach waits for
 * a thread's stop): the lock is let go meanwhile, so that the receive
 * threads answer the calls they hold (a thread with a call received stops
 * only after its answer). Not while a call is served (s->req is its). */
void supervisor_threads_sleep(struct tns_supervisor *s, const struct timespec *t);
/* supervisor.c, for the threads: whether a receive thread may serve req
 * itself (nothing in it ptraces or touches the event loop), and the
 * serving of s->req received on l, under the lock. */
bool supervisor_off_loop(const struct listener *l, const struct seccomp_notif *req);
void supervisor_serve_received(struct listener *l);
/* SECCOMP_IOCTL_NOTIF_ID_VALID, asked again if a signal interrupted its
 * wait for the listener's lock (libseccomp keeps the errno): a call still
 * waiting is never taken for gone. Every check of the engine's. */
int supervisor_id_valid(int fd, uint64_t id);
/* The in-flight page's last id of l after id was received. */
void supervisor_note_received(struct listener *l, uint64_t id);
/* A plain clock read (clock_gettime, gettimeofday, time), which a
 * receive thread serves in two halves: the namespace's state and the
 * clock read under the lock (supervisor_read_begin(), into *rd), the
 * write into the caller without it (supervisor_read_end(): the result to
 * send), then the answer (supervisor_answer_read(), into resp, the
 * thread's own). supervisor-threads.c says why. */
struct tns_read {
        bool split; /* false: result is the answer, served in full */
        int64_t result;
        enum tns_sys id;
        struct tns_emu_result res; /* the writes into the caller, and its value */
        uint64_t start;
};
bool supervisor_plain_read(const struct seccomp_notif *req);
void supervisor_read_begin(struct listener *l, const struct seccomp_notif *req, struct tns_read *rd);
int64_t supervisor_read_end(struct listener *l, const struct seccomp_notif *req, struct tns_read *rd);
void supervisor_answer_read(struct listener *l, struct seccomp_notif_resp *resp, const struct seccomp_notif *req,
                            int64_t result);

/* supervisor-image-cache.c: what a process's maps say of our pages, read
 * once per process (and again after its exec or unshare). */
void supervisor_image_cache_init(struct tns_supervisor *s);
void supervisor_image_cache_done(struct tns_supervisor *s);
/* The process's mappings changed for good (execve, unshare's remap). */
void supervisor_image_forget(struct tns_supervisor *s, pid_t tid, pid_t tgid);
void supervisor_image_ns_gone(struct tns_supervisor *s, struct tns_ns *ns);
/* True once per process and exec, for a process with at most max_lines
 * mappings: its first arch_prctl is looked at; *ret_image: it maps our
 * image. */
bool supervisor_image_first_call(struct tns_supervisor *s, pid_t tid, unsigned max_lines, bool *ret_image);

/* supervisor-kns.c: the kernel's time namespaces paired with ours. */
void supervisor_kns_init(struct tns_supervisor *s);
void supervisor_kns_done(struct tns_supervisor *s);
/* Whether tid's children are born with kernel offsets other than ours. */
bool supervisor_kns_differs(struct tns_supervisor *s, pid_t tid);
/* Ours paired with the kernel namespace of that inode, or NULL. */
struct tns_ns *supervisor_ns_by_kns(struct tns_supervisor *s, uint64_t ino);
/* Pairs ns (if it is not yet) with tid's kernel time namespace, or the
 * one of its children. */
void supervisor_kns_pair(struct tns_supervisor *s, struct tns_ns *ns, pid_t tid, bool for_children);
/* Pairs ns with the kernel time namespace root_pid's programs run in, if
 * it is not the supervisor's own (a listener's root). */
void supervisor_kns_pair_root(struct tns_supervisor *s, struct tns_ns *ns, pid_t root_pid);
/* After a restart: pairs ns, a restored member's, by what its process shows. */
void supervisor_kns_repair(struct tns_supervisor *s, pid_t tgid, struct tns_ns *ns);
/* Drops the references supervisor_kns_pair() took in root's tree. */
void supervisor_kns_unpin_tree(struct tns_supervisor *s, struct tns_ns *root);
/* The kernel offsets of tid's kernel time namespace (0 where none, or
 * unknown: then <0), its inode in *ret_ino (0 if not looked up). */
int supervisor_kernel_offsets(struct listener *l, pid_t tid, int64_t ret[TNS_CLASS_MAX], uint64_t *ret_ino);
/* What tid in ns reads: ns's offset of class c plus its kernel one. */
int64_t supervisor_offset(struct listener *l, pid_t tid, struct tns_ns *ns, enum tns_clock_class c);
/* setns(fd, nstype) with CLONE_NEWTIME or 0: followed, run by the kernel. */
int64_t supervisor_setns(struct listener *l, const struct seccomp_notif *req, struct tns_ns *cur);
/* At the stop after the kernel ran the unshare or setns of tid (ns: the
 * namespace prepared for it): places it; whether its offsets page is to
 * be moved to ns. */
bool supervisor_nsop_done(struct tns_supervisor *s, enum tns_nsop op, uint64_t serial, pid_t tid, pid_t tgid,
                          struct tns_ns *ns);
/* supervisor.c: pins tgid's process to ns (a member entry). */
int supervisor_member_set(struct listener *l, pid_t tgid, struct tns_ns *ns);

/* supervisor-state.c: reports a change to the daemon (the change
 * callback): an fd to keep (fd >= 0) or one gone (fd < 0), or with name
 * NULL a change of the state record only. */
void tns_supervisor_changed(struct tns_supervisor *s, const char *fd_name, int fd);
/* The daemon's record saved now (its flush callback), where no answer
 * to anyone would make it so. */
void supervisor_flush(struct tns_supervisor *s);
/* A listener as add_listener makes it, with no /proc cover mounted and
 * no serial reported (restore). */
int supervisor_listener_new(struct tns_supervisor *s, struct tns_ns *ns, int fd, pid_t root_pid, uint64_t serial,
                            struct listener **ret);
int supervisor_member_restore(struct listener *l, pid_t tgid, struct tns_ns *ns);
/* supervisor-procfs.c: serves an adopted FUSE fd (taken) of file index
 * `file` for l; visits l's connections (their names' parts and fds). */
int supervisor_procfs_adopt(struct listener *l, unsigned file, uint64_t serial, int fd);
void supervisor_procfs_foreach(struct listener *l, void (*fn)(unsigned file, uint64_t serial, int fd, void *userdata),
                               void *userdata);

/* Adds a namespace to the supervisor's list (which holds no reference: a
 * namespace unlinks itself when its last reference goes). */
void supervisor_link_ns(struct tns_supervisor *s, struct tns_ns *ns);

/* supervisor-exec.c: vDSO injection at exec (see inject.h). */
/* Prepares the exec of req's caller for injection; the caller of this
 * function then lets the syscall continue. <0: no injection this time. */
int supervisor_exec_begin(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns);
void supervisor_exec_done(struct tns_supervisor *s);
/* After the reply to the call being served: the hold of the exec it began. */
void supervisor_exec_replied(struct tns_supervisor *s);
/* After a restore: finishes (now and a few times in the next seconds) the
 * execs that a predecessor held and could not finish. */
void supervisor_exec_adopt(struct tns_supervisor *s);
/* A SIGCHLD came: every exec trace in flight looks at its stops. */
void supervisor_exec_on_sigchld(struct tns_supervisor *s);
/* Whether a thread of tgid has been let into an exec that has not reached
 * its exec stop yet. The kernel holds the program's cred_guard_mutex
 * through it, which PTRACE_SEIZE of any of its threads waits for, while
 * de_thread() waits for us to reap the threads it killed that we trace:
 * a seize then would hang timensd and the exec for good. */
bool supervisor_exec_in_flight(const struct tns_supervisor *s, pid_t tgid);
/* The exec tail's marker call (inject.h): the reply. */
int64_t supervisor_exec_marker(struct listener *l, const struct seccomp_notif *req);
/* The caller of req, which moved to ns, maps ns's offsets page where it
 * mapped its old one, before it returns to its own code. */
/* A thread attach.c could not detach (lib/kernel/attach.h, tns_attach_orphan_fn):
 * waited for as a released exec trace, detached at its stop or reaped. */
void supervisor_trace_orphan(struct tns_supervisor *s, pid_t tid, pid_t tgid);
/* Seizes the caller of an unshare or setns that the kernel is about to
 * run, hands it ns's memfd if it maps our vDSO, and stops it on its
 * return, where supervisor_nsop_done() decides and its page is moved. */
int supervisor_nsop_begin(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns, enum tns_nsop op);
/* s->vdso with its direct path's proof finished (waited for if it is
 * still running): for whatever fills a parameter page. */
const struct tns_vdso_host *supervisor_vdso(struct tns_supervisor *s);

/* supervisor-first-call.c: a program's first arch_prctl(ARCH_SET_FS). A
 * program that started without our image gets its kernel vDSO's clock
 * functions turned into syscalls; the reply is always to go on. */
int64_t supervisor_first_call(struct listener *l, const struct seccomp_notif *req);
/* The program of tid got our image (its marker call was answered). */
void supervisor_first_call_injected(struct tns_supervisor *s, pid_t tid);
/* tid (of thread group tgid) execs: what was known of its program goes. */
void supervisor_first_call_exec(struct tns_supervisor *s, pid_t tid, pid_t tgid);
/* Whether a clock call at ip is our image calling through to the kernel's
 * vDSO, whose fallback syscall must then run unchanged (the image adds the
 * offset itself). */
bool supervisor_is_vdso_fallback(struct listener *l, const struct seccomp_notif *req);

/* The one SIGCHLD source of the engine (ptrace stops of exec and wait
 * traces), owned by supervisor.c: it calls supervisor_exec_on_sigchld and
 * then supervisor_wait_on_sigchld. Exec and wait traces only ensure it. */
int supervisor_ensure_sigchld(struct tns_supervisor *s);

/* supervisor-wait.c: absolute waits. The reply for a call of a wait
 * syscall (TNS_REPLY_CONTINUE, -ERESTARTNOINTR with the caller held, or
 * the result of a call run on its behalf). */
/* timerfd_gettime in a rated namespace: run on the target's own timer
 * (pidfd_getfd), its value and interval made the namespace's durations
 * (supervisor-wait.c). */
int64_t supervisor_timerfd_gettime(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns);
int64_t supervisor_wait(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns,
                        const struct tns_syscall_desc *d);
/* A call that sets file times and runs as it is (no realtime shift,
 * explicit times, bad ones): a receive thread may answer it. Under the
 * engine's lock, for a listener without member entries. */
bool supervisor_file_times_as_is(const struct listener *l, const struct seccomp_notif *req);
void supervisor_wait_on_sigchld(struct tns_supervisor *s);
/* Offsets changed: every held wait is interrupted and converted again
 * (a sleep or futex wait restarts through the filter). */
void supervisor_wait_offsets_changed(struct tns_supervisor *s);
void supervisor_wait_done(struct tns_supervisor *s);

/* supervisor-attach.c: frees the filter. */
void supervisor_attach_done(struct tns_supervisor *s);
/* The namespace of the caller tid of listener l (supervisor.c). */
struct tns_ns *supervisor_resolve_ns(struct listener *l, pid_t tid);
/* The namespace whose offsets page tid maps (and where), or NULL
 * (supervisor-image-cache.c). On a trapped call, a process's maps are
 * read up to TNS_IMAGE_MAX_MAPS lines: one with more (a member's 60,000
 * mappings) is taken as mapping no page of ours, and resolves by its
 * member entries and parents as a program without our image does. */
#define TNS_IMAGE_MAX_MAPS 8192
struct tns_ns *supervisor_ns_by_mapping(struct tns_supervisor *s, pid_t tid, uint64_t *ret_addr);
/* The same read to the end, once per process (who asks on the control
 * socket, a syscall from the kernel vDSO's site: where "no page" must be
 * known, not guessed past a bound). */
struct tns_ns *supervisor_ns_by_mapping_whole(struct tns_supervisor *s, pid_t tid);
/* Read now, to the end, not from the cache nor into it: where a page is
 * about to be mapped over (unshare's remap), only the maps as they are;
 * and show's look at every process of the host, which would only push
 * members out of the cache. */
struct tns_ns *supervisor_ns_by_mapping_fresh(struct tns_supervisor *s, pid_t tid, uint64_t *ret_addr);
/* The store for a new namespace's file, or NULL (memfds). */
const struct tns_page_store *supervisor_pages(struct tns_supervisor *s);

/* supervisor-procfs.c: sysinfo() for req's caller in ns (the reply's
 * value or -errno); /proc/uptime and /proc/stat covered in the mount
 * namespace of pid (at proc_dir there) and served for l's callers. */
int64_t supervisor_sysinfo(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns);
int supervisor_procfs_mount(struct listener *l, pid_t pid, const char *proc_dir);
/* Hooks of add_listener and listener_free. */
void supervisor_procfs_listener_added(struct listener *l);
/* Notes l's root's mount namespace (l->mnt_dev, l->mnt_ino). */
void supervisor_procfs_listener_mnt(struct listener *l);
void supervisor_procfs_free(struct listener *l);
/* Stops the FUSE thread and frees what it had left; called with the
 * lock held, which it lets go while it waits for the thread. */
void supervisor_procfs_server_done(struct tns_supervisor *s);
/* After a stop that was not the end (a hand-over that failed): the
 * covers served again. */
void supervisor_procfs_server_resume(struct tns_supervisor *s);
/* supervisor-threads.c: the lock, as a thread other than the loop takes
 * it (it gives the loop its turn). */
void supervisor_lock_as_thread(struct tns_supervisor *s);
/* The same, for at most ms milliseconds: false if not taken by then. */
bool supervisor_lock_as_thread_within(struct tns_supervisor *s, unsigned ms);

/* CLOCK_MONOTONIC in ns: the daemon's own clock (latencies, deadlines). */
static inline uint64_t supervisor_now_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}
