/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Entrants: processes that enter a supervised container later (runc exec,
 * crun exec, nsenter) come from outside its process tree, so they carry no
 * filter. timensd watches the pid namespaces of the processes it serves
 * (every listener adopted or attached names one) and puts an entrant under
 * the namespace at its exec, before its first instruction:
 *
 *  - BPF (daemon/timensd/bpf/exec-watch.bpf.c, race-free): on sched_process_exec,
 *    a task whose pid namespace is watched and that timensd does not trace
 *    already gets SIGSTOP, taken on its return to user space; the ring
 *    buffer tells us; we attach it (lib/kernel/attach.h) and swallow the SIGSTOP
 *    (TNS_ATTACH_AT_EXEC).
 *  - the proc connector (where BPF cannot be loaded): exec events arrive
 *    after the fact, the entrant runs meanwhile and may read the host's
 *    clocks before it is attached. Better late than never; the log says
 *    which mode runs.
 *
 * timensd(8), "ENTRANTS", says what a user sees. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "attach-creds.h"
#include "exec-watch.skel.h"
#include "proc-util.h"
#include "timensd.h"

#define MAX_WATCHED 4096
#define MAX_PARENT_CHECKS 64

/* As the BPF program writes it. */
struct entrant_event {
        uint32_t pid;
        uint32_t pidns;
        uint64_t ns_id;
};

struct watched {
        uint32_t pidns;
        uint64_t ns_id;
};

/* A parent to look at after its child's stop (see continue_parent). */
struct parent_check {
        struct entrants *e;
        pid_t pid;
        unsigned tries;
        sd_event_source *timer;
};

struct entrants {
        struct manager *m;
        enum entrants_mode mode;
        sd_event_source *start; /* the deferred start of the watch */
        uint32_t own_pidns; /* the host's: never watched */
        struct watched watched[MAX_WATCHED];
        unsigned n_watched;
        /* BPF */
        pthread_t loader; /* loads it, while the loop serves (on_start()) */
        bool loading;
        int loaded_fd; /* an eventfd the loader writes once done */
        sd_event_source *loaded_src;
        int load_result;
        struct exec_watch_bpf *loaded; /* the loader's, until it is joined */
        struct exec_watch_bpf *skel;
        struct ring_buffer *rb;
        sd_event_source *src;
        /* the proc connector */
        struct nl_sock *nl;
        sd_event_source *nl_src;
        uint64_t attached, failed;
        struct parent_check checks[MAX_PARENT_CHECKS];
};

static int pidns_of(pid_t pid, uint32_t *ret) {
        char path[64];
        struct stat st;

        snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int) pid);
        if (stat(path, &st) < 0)
                return negative_errno();
        *ret = (uint32_t) st.st_ino;
        return 0;
}

static struct watched *find_watched(struct entrants *e, uint32_t pidns) {
        for (unsigned i = 0; i < e->n_watched; i++)
                if (e->watched[i].pidns == pidns)
                        return &e->watched[i];
        return NULL;
}

static void unwatch(struct entrants *e, uint32_t pidns) {
        struct watched *w = find_watched(e, pidns);

        if (!w)
                return;
        if (e->skel)
                (void) bpf_map__delete_elem(e->skel->maps.supervised_pidns, &pidns, sizeof(pidns), 0);
        *w = e->watched[--e->n_watched];
}

/* The registry took a listener for pid: its pid namespace is ns's. */
static void on_adopted(struct tns_registry *r, struct tns_ns *ns, pid_t pid, void *userdata) {
        struct entrants *e = userdata;
        struct watched *w;
        uint32_t pidns;

        if (pidns_of(pid, &pidns) < 0 || pidns == e->own_pidns)
                return; /* entering the host's pid namespace is no entry */
        w = find_watched(e, pidns);
        if (!w) {
                if (e->n_watched >= MAX_WATCHED) {
                        tns_log(&e->m->log, LOG_WARNING, "Watching %d pid namespaces already: not pid namespace %u",
                                MAX_WATCHED, pidns);
                        return;
                }
                w = &e->watched[e->n_watched++];
        }
        *w = (struct watched){pidns, ns->id};
        if (e->skel && bpf_map__update_elem(e->skel->maps.supervised_pidns, &pidns, sizeof(pidns), &w->ns_id,
                                            sizeof(w->ns_id), 0) < 0)
                tns_log_errno(&e->m->log, LOG_WARNING, errno, "Failed to watch pid namespace %u for entrants: %m",
                              pidns);
}

/* Whether ns still has a process in pidns (an inode number can be reused
 * by a new pid namespace once the old one is gone). */
static bool ns_in_pidns(struct entrants *e, struct tns_ns *ns, uint32_t pidns) {
        pid_t pids[64];
        int n = tns_registry_processes(e->m->registry, ns, pids, ELEMENTSOF(pids));

        for (int i = 0; i < n && i < (int) ELEMENTSOF(pids); i++) {
                uint32_t x;

                if (pidns_of(pids[i], &x) >= 0 && x == pidns)
                        return true;
        }
        return false;
}

static char proc_state(pid_t pid) {
        char path[64], buf[512], *p;
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : 0;
}

static void check_free(struct parent_check *c) {
        c->timer = sd_event_source_disable_unref(c->timer);
        c->pid = 0;
}

static int on_parent_check(sd_event_source *src, uint64_t usec, void *userdata) {
        struct parent_check *c = userdata;

        if (proc_state(c->pid) == 'T') {
                tns_log_full(&c->e->m->log, LOG_DEBUG, 0, &(struct tns_log_ctx){.pid = c->pid},
                             "The parent of an entrant stopped with it: continuing it");
                (void) kill(c->pid, SIGCONT);
                check_free(c);
                return 0;
        }
        if (++c->tries >= 4) {
                check_free(c);
                return 0;
        }
        (void) sd_event_source_set_time_relative(src, 2000ULL << (2 * c->tries));
        (void) sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
        return 0;
}

/* The entrant had reached its group stop before we seized it, so its
 * parent was told (CLD_STOPPED). A parent that waits with WUNTRACED may
 * stop itself in turn, as nsenter does (util-linux, continue_as_child:
 * "the child suspended so suspend us as well"); the stop was ours, so
 * that parent is continued too: looked at 2, 8, 32 and 128 ms after. */
static void continue_parent(struct entrants *e, pid_t pid) {
        struct tns_proc_status st;

        if (tns_proc_status(pid, &st) < 0 || st.ppid <= 1)
                return;
        for (size_t i = 0; i < ELEMENTSOF(e->checks); i++) {
                struct parent_check *c = &e->checks[i];

                if (c->pid)
                        continue;
                *c = (struct parent_check){.e = e, .pid = st.ppid};
                /* Accuracy 0 would be sd-event's default, 250 ms. */
                if (sd_event_add_time_relative(e->m->event, &c->timer, CLOCK_MONOTONIC, 2000, 1000, on_parent_check,
                                               c) < 0)
                        c->pid = 0;
                return;
        }
}

/* Whose entrants a namespace takes: root's takes anyone's (a container's
 * runc exec, nsenter), another uid's only its own processes, checked as
 * attach checks a group member's (lib/kernel/attach-creds.h), with the
 * entrant's group (it is stopped: its ids stand still). Otherwise a user
 * whose pid namespace is watched (its own `unshare -p` under timensd)
 * would get root's nsenter into it under its clocks. */
static int entrant_owner(struct tns_ns *ns, pid_t pid, struct tns_attach_owner *ret) {
        struct tns_proc_status st;
        int r;

        if (ns->owner == 0)
                return 0;
        r = tns_proc_status(pid, &st);
        if (r < 0)
                return r;
        *ret = (struct tns_attach_owner){.uid = ns->owner, .gid = st.egid};
        return 1;
}

static void handle_entrant(struct entrants *e, pid_t pid, uint32_t pidns, uint64_t ns_id, unsigned flags) {
        _cleanup_free_ struct tns_attach_report *rep = calloc(1, sizeof(*rep));
        struct tns_ns *ns = tns_registry_find_id(e->m->registry, ns_id);
        struct tns_log_ctx ctx = {.pid = pid};
        struct tns_attach_owner owner;
        int r;

        if (!ns || !ns_in_pidns(e, ns, pidns)) {
                tns_log(&e->m->log, LOG_DEBUG, "Pid namespace %u has no namespace of ours any more", pidns);
                unwatch(e, pidns);
                r = -ESRCH;
        } else {
                r = entrant_owner(ns, pid, &owner);
                if (r >= 0)
                        r = rep ? tns_registry_attach(e->m->registry, ns, pid, flags, r ? &owner : NULL, rep) : -ENOMEM;
        }
        if (r >= 0) {
                if (rep->root_continued)
                        continue_parent(e, pid);
                e->attached++;
                e->m->generation++;
                tns_log_full(&e->m->log, LOG_INFO, 0, &ctx, "Entrant attached to namespace %" PRIu64 " %s", ns_id,
                             (flags & TNS_ATTACH_AT_EXEC) ? "at its exec" : "after its exec (proc connector)");
                return;
        }
        e->failed++;
        /* -EBUSY: a member whose exec we did not hold (it has the filter). */
        if (r == -EACCES && ns)
                tns_log_full(&e->m->log, LOG_INFO, 0, &ctx,
                             "Entrant into pid namespace %u not attached: namespace %" PRIu64
                             " belongs to uid %u, and %s",
                             pidns, ns_id, (unsigned) ns->owner, rep && rep->root_denied ? rep->root_denied : "");
        else if (r != -EBUSY && r != -ESRCH)
                tns_log_full(&e->m->log, LOG_WARNING, r, &ctx,
                             "Failed to attach the entrant into pid namespace %u, it reads the host's clocks: %m",
                             pidns);
        /* Whatever happened, it must not stay stopped by us, nor a parent
         * that stopped with it (continue_parent()). */
        if (flags & TNS_ATTACH_AT_EXEC) {
                const bool stopped = proc_state(pid) == 'T';

                (void) kill(pid, SIGCONT);
                if (stopped)
                        continue_parent(e, pid);
        }
}

static int on_ring_event(void *ctx, void *data, size_t size) {
        struct entrants *e = ctx;
        const struct entrant_event *ev = data;

        if (size < sizeof(*ev))
                return 0;
        handle_entrant(e, (pid_t) ev->pid, ev->pidns, ev->ns_id, TNS_ATTACH_AT_EXEC);
        return 0;
}

static int on_ring(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        struct entrants *e = userdata;

        (void) ring_buffer__consume(e->rb);
        return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap) {
        return 0;
}

/* The open and load of the program (BTF relocations, the verifier): the
 * part that takes time, and needs neither the event loop nor the engine,
 * so that a thread may run it. */
static int load_bpf(struct exec_watch_bpf **ret) {
        struct exec_watch_bpf *skel = exec_watch_bpf__open();
        int r;

        if (!skel)
                return negative_errno();
        skel->rodata->tracer_tgid = (uint32_t) getpid();
        r = exec_watch_bpf__load(skel);
        if (r < 0) {
                exec_watch_bpf__destroy(skel);
                return r;
        }
        *ret = skel;
        return 0;
}

/* Then, on the loop: the attach and the ring buffer's source. */
static int attach_bpf(struct entrants *e) {
        int r;

        r = exec_watch_bpf__attach(e->skel);
        if (r < 0)
                return r;
        e->rb = ring_buffer__new(bpf_map__fd(e->skel->maps.entrants), on_ring_event, e, NULL);
        if (!e->rb)
                return negative_errno();
        r = sd_event_add_io(e->m->event, &e->src, ring_buffer__epoll_fd(e->rb), EPOLLIN, on_ring, e);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(e->src, "timensd-entrants-bpf");
        return 0;
}

static void stop_bpf(struct entrants *e) {
        if (e->loading) {
                (void) pthread_join(e->loader, NULL);
                e->loading = false;
                exec_watch_bpf__destroy(TAKE_PTR(e->loaded));
        }
        e->loaded_src = sd_event_source_disable_unref(e->loaded_src);
        e->loaded_fd = safe_close(e->loaded_fd);
        e->src = sd_event_source_disable_unref(e->src);
        ring_buffer__free(e->rb);
        e->rb = NULL;
        exec_watch_bpf__destroy(e->skel);
        e->skel = NULL;
}

/* A process that maps our vDSO image was exec'd under a filter of ours: a
 * member, not an entrant. */
static bool is_member(struct entrants *e, pid_t pid) {
        return tns_supervisor_maps_image(e->m->supervisor, pid);
}

static void on_proc_exec(struct entrants *e, pid_t tgid) {
        struct watched *w;
        uint32_t pidns;

        if (pidns_of(tgid, &pidns) < 0 || !(w = find_watched(e, pidns)) || is_member(e, tgid))
                return;
        /* Running already: no SIGSTOP to swallow, and it may have read a
         * clock meanwhile (the race the BPF program has not). */
        handle_entrant(e, tgid, pidns, w->ns_id, 0);
}

static int on_nl_msg(struct nl_msg *msg, void *arg) {
        struct entrants *e = arg;
        struct nlmsghdr *h = nlmsg_hdr(msg);
        const struct cn_msg *cn;
        const struct proc_event *ev;

        /* Only the kernel speaks here (a forged event would make us attach
         * a process of someone's choosing). */
        if (nlmsg_get_src(msg)->nl_pid != 0 || nlmsg_datalen(h) < (int) (sizeof(*cn) + sizeof(*ev)))
                return NL_SKIP;
        cn = nlmsg_data(h);
        if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC || cn->len < sizeof(*ev))
                return NL_SKIP;
        ev = (const struct proc_event *) cn->data;
        if (ev->what == PROC_EVENT_EXEC && e->n_watched > 0)
                on_proc_exec(e, ev->event_data.exec.process_tgid);
        return NL_OK;
}

static int on_nl(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        struct entrants *e = userdata;

        (void) nl_recvmsgs_default(e->nl);
        return 0;
}

/* The proc connector (drivers/connector/cn_proc.c): every exec of the
 * host, after the fact. Its messages are NLMSG_DONE, which libnl hands to
 * the FINISH callback. */
static int start_proc_connector(struct entrants *e) {
        struct __attribute__((packed)) {
                struct cn_msg msg;
                enum proc_cn_mcast_op op;
        } listen = {.msg = {.id = {CN_IDX_PROC, CN_VAL_PROC}, .len = sizeof(enum proc_cn_mcast_op)},
                    .op = PROC_CN_MCAST_LISTEN};
        int r;

        e->nl = nl_socket_alloc();
        if (!e->nl)
                return -ENOMEM;
        nl_socket_disable_seq_check(e->nl);
        nl_socket_disable_auto_ack(e->nl);
        nl_socket_set_local_port(e->nl, 0);
        r = nl_connect(e->nl, NETLINK_CONNECTOR);
        if (r >= 0)
                r = nl_socket_add_membership(e->nl, CN_IDX_PROC);
        if (r >= 0)
                r = nl_send_simple(e->nl, NLMSG_DONE, 0, &listen, sizeof(listen));
        if (r < 0)
                return -EPERM; /* libnl's codes are not errnos: listening needs CAP_NET_ADMIN */
        (void) nl_socket_set_nonblocking(e->nl);
        (void) nl_socket_set_buffer_size(e->nl, 1 << 20, 0);
        (void) nl_socket_modify_cb(e->nl, NL_CB_FINISH, NL_CB_CUSTOM, on_nl_msg, e);
        (void) nl_socket_modify_cb(e->nl, NL_CB_VALID, NL_CB_CUSTOM, on_nl_msg, e);
        r = sd_event_add_io(e->m->event, &e->nl_src, nl_socket_get_fd(e->nl), EPOLLIN, on_nl, e);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(e->nl_src, "timensd-entrants-proc-connector");
        return 0;
}

static void stop_proc_connector(struct entrants *e) {
        e->nl_src = sd_event_source_disable_unref(e->nl_src);
        if (e->nl)
                nl_socket_free(e->nl);
        e->nl = NULL;
}

/* The pid namespaces adopted before the BPF program was loaded. */
static void watch_all(struct entrants *e) {
        for (unsigned i = 0; i < e->n_watched; i++)
                if (bpf_map__update_elem(e->skel->maps.supervised_pidns, &e->watched[i].pidns,
                                         sizeof(e->watched[i].pidns), &e->watched[i].ns_id, sizeof(e->watched[i].ns_id),
                                         0) < 0)
                        tns_log_errno(&e->m->log, LOG_WARNING, errno,
                                      "Failed to watch pid namespace %u for entrants: %m", e->watched[i].pidns);
}

/* The watch, once the BPF program is loaded and attached (r >= 0) or not:
 * the proc connector is the fallback. */
static int start_watch(struct entrants *e, int r) {
        struct manager *m = e->m;

        if (e->mode != ENTRANTS_PROC) {
                if (r >= 0) {
                        watch_all(e);
                        tns_log(&m->log, LOG_INFO, "Watching execs for entrants with BPF (sched_process_exec)");
                } else {
                        stop_bpf(e);
                        tns_log_errno(&m->log, LOG_WARNING, r,
                                      "Failed to load the BPF exec watch (%m): entrants (runc exec, nsenter) are "
                                      "attached after their exec, through the proc connector%s",
                                      e->mode == ENTRANTS_BPF ? "" : ", and may read the host's clocks first");
                }
        }
        if (r < 0 && e->mode != ENTRANTS_BPF) {
                r = start_proc_connector(e);
                if (r < 0) {
                        stop_proc_connector(e);
                        return tns_log_errno(&m->log, LOG_WARNING, r,
                                             "Failed to listen to the proc connector, entrants are not attached: %m");
                }
                tns_log(&m->log, LOG_INFO,
                        "Watching execs for entrants with the proc connector (after their exec: racy)");
        }
        return r;
}

static int start_bpf(struct entrants *e) {
        int r = load_bpf(&e->skel);

        return r < 0 ? r : attach_bpf(e);
}

/* Writes e->loaded and e->load_result alone (and the eventfd): the loop
 * reads e->skel meanwhile (watch(), unwatch()). */
static void *loader(void *userdata) {
        struct entrants *e = userdata;

        e->load_result = load_bpf(&e->loaded);
        (void) eventfd_write(e->loaded_fd, 1);
        return NULL;
}

static int on_loaded(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        struct entrants *e = userdata;
        int r;

        /* Done: its last act was the write. The join orders its writes
         * to e before our reads. */
        (void) pthread_join(e->loader, NULL);
        e->loading = false;
        e->loaded_src = sd_event_source_disable_unref(e->loaded_src);
        e->loaded_fd = safe_close(e->loaded_fd);
        e->skel = TAKE_PTR(e->loaded);
        r = e->load_result;
        if (r >= 0)
                r = attach_bpf(e);
        (void) start_watch(e, r);
        return 0;
}

/* The load in a thread of its own: on the loop, the engine's lock held,
 * it kept every call of every namespace waiting 25-30 ms (117 ms under
 * strace) after each restart. Every signal blocked in it: the loop's
 * signalfd and the receive threads' wake signal are not its business.
 * Undoes what it set up if it fails. */
static int start_loader(struct entrants *e) {
        pthread_attr_t attr;
        sigset_t all;
        int r;

        e->loaded_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (e->loaded_fd < 0)
                return negative_errno();
        r = sd_event_add_io(e->m->event, &e->loaded_src, e->loaded_fd, EPOLLIN, on_loaded, e);
        if (r >= 0) {
                (void) sd_event_source_set_description(e->loaded_src, "timensd-entrants-bpf-load");
                sigfillset(&all);
                r = -pthread_attr_init(&attr);
                if (r == 0) {
                        r = -pthread_attr_setsigmask_np(&attr, &all);
                        if (r == 0)
                                r = -pthread_create(&e->loader, &attr, loader, e);
                        (void) pthread_attr_destroy(&attr);
                }
        }
        if (r < 0) {
                e->loaded_src = sd_event_source_disable_unref(e->loaded_src);
                e->loaded_fd = safe_close(e->loaded_fd);
                return r;
        }
        (void) pthread_setname_np(e->loader, "timensd-bpfload");
        e->loading = true;
        return 0;
}

static int on_start(sd_event_source *src, void *userdata) {
        struct entrants *e = userdata;

        e->start = sd_event_source_disable_unref(e->start);
        if (e->mode == ENTRANTS_PROC)
                (void) start_watch(e, -EOPNOTSUPP);
        else if (start_loader(e) < 0)
                (void) start_watch(e, start_bpf(e));
        return 0;
}

/* Loading the BPF program (its BTF relocations: 10 to 25 ms) is kept off
 * a restart's way to its first answer: the watch starts once the event
 * loop has nothing else to do, and pid namespaces adopted meanwhile (the
 * restore's) are remembered and watched then. Entrants that exec in
 * between are missed, as they are while no timensd runs. */
int entrants_start(struct manager *m, enum entrants_mode mode, struct entrants **ret) {
        _cleanup_free_ struct entrants *e = calloc(1, sizeof(*e));
        int r;

        if (mode == ENTRANTS_OFF)
                return 0;
        if (!e)
                return -ENOMEM;
        e->m = m;
        e->mode = mode;
        e->loaded_fd = -EBADF;
        (void) libbpf_set_print(libbpf_quiet);
        r = pidns_of(getpid(), &e->own_pidns);
        if (r < 0)
                return r;
        r = sd_event_add_defer(m->event, &e->start, on_start, e);
        if (r >= 0)
                r = sd_event_source_set_priority(e->start, SD_EVENT_PRIORITY_IDLE);
        if (r < 0) {
                e->start = sd_event_source_disable_unref(e->start);
                r = start_watch(e, e->mode == ENTRANTS_PROC ? -EOPNOTSUPP : start_bpf(e));
                if (r < 0)
                        return r;
        }
        tns_registry_set_adopted_callback(m->registry, on_adopted, e);
        *ret = TAKE_PTR(e);
        return 0;
}

struct entrants *entrants_free(struct entrants *e) {
        if (!e)
                return NULL;
        tns_registry_set_adopted_callback(e->m->registry, NULL, NULL);
        e->start = sd_event_source_disable_unref(e->start);
        for (size_t i = 0; i < ELEMENTSOF(e->checks); i++)
                check_free(&e->checks[i]);
        stop_bpf(e);
        stop_proc_connector(e);
        free(e);
        return NULL;
}
