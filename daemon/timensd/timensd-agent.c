/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OCI seccomp agent (runtime-spec config-linux.md, "listenerPath").
 * A runtime whose bundle has linux.seccomp.listenerPath pointing here
 * connects once per container, sends the ContainerProcessState as JSON
 * with the listener fd in the same sendmsg (SCM_RIGHTS; "fds":
 * ["seccompFd"]), and expects no answer: runc keeps its end open (its Go
 * conn is not closed), crun closes it. So a message is complete when its
 * JSON is, not at EOF: it is parsed incrementally.
 *
 * The namespace is the container's: named by org.timens.name or the
 * container id, created (gone with the container's last process, as a
 * `timensctl run` namespace) or joined if it exists; offsets from
 * listenerMetadata, overridden by the org.timens.* annotations. A message
 * we cannot serve closes the listener: the container's trapped calls
 * (its execve first of all) then fail with ENOSYS, so it does not run
 * with the host's clocks. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clocks.h"
#include "fd-pass.h"
#include "oci.h"
#include "pidfd-util.h"
#include "proc-util.h"
#include "time-util.h"
#include "timensd.h"

#define AGENT_RECV_MAX_FDS 4
/* How long a refusal waits to see whether the runtime is exiting. */
#define AGENT_EXIT_WAIT_MS 20
/* Descendants of a runtime pinned at connect: its init, and what else it
 * runs then (runc: its nsexec stages; a few). */
#define AGENT_MAX_PINNED 32

struct agent_conn {
        struct manager *m;
        int fd;
        sd_event_source *io, *timer;
        struct peer peer;
        json_tokener *tok;
        size_t received;
        int fds[AGENT_RECV_MAX_FDS];
        unsigned n_fds;
        int pinned[AGENT_MAX_PINNED]; /* pidfds of the peer's descendants at connect */
        unsigned n_pinned;
        struct agent_conn *next, **pprev;
};

static void agent_conn_free(struct agent_conn *a) {
        if (!a)
                return;
        *a->pprev = a->next;
        if (a->next)
                a->next->pprev = a->pprev;
        a->m->n_agent_conns--;
        sd_event_source_disable_unref(a->io);
        sd_event_source_disable_unref(a->timer);
        for (unsigned i = 0; i < a->n_fds; i++)
                safe_close(a->fds[i]);
        for (unsigned i = 0; i < a->n_pinned; i++)
                safe_close(a->pinned[i]);
        if (a->tok)
                json_tokener_free(a->tok);
        safe_close(a->fd);
        peer_done(&a->peer);
        free(a);
}

/* Created with the container (ORIGIN_RUN: gone with its last process),
 * or joined when a namespace of that name is there already (containers
 * sharing org.timens.name, or a namespace made with `timensctl create`). */
static int agent_namespace(struct manager *m, uid_t uid, const struct tns_oci_state *st,
                           const struct tns_oci_request *req, struct tns_ns **ret, bool *ret_created, char *err) {
        char own[TNS_NS_NAME_MAX + 1];
        int64_t v[TNS_CLASS_MAX] = {};
        struct timespec now;
        struct tns_ns *ns;
        int64_t host;
        int r;

        *ret_created = false;
        ns = req->name[0] ? tns_registry_find(m->registry, req->name) : NULL;
        if (ns) {
                struct tns_ns_info info;
                struct tns_oci_existing ex;

                /* A container joins by name only a namespace of the
                 * runtime's uid (root's) or a shared one (issue 14, 6),
                 * and only with the clocks it asks for: no container
                 * takes another's clocks by taking its name first. */
                r = peer_may_join(m, uid, ns, err);
                if (r < 0)
                        return r;
                /* An exec (runc exec, docker exec: the container exists
                 * already, its state is not "creating") into its own
                 * namespace (named after its id, no other name asked)
                 * joins it whatever its clocks became since (a live set:
                 * helper-44's exec failed with ENOSYS). A container being
                 * created is checked as any (helper-47). */
                tns_oci_default_name(st->id ?: "", own);
                if (st->id && st->status && strcmp(st->status, "creating") != 0 && strcmp(req->name, own) == 0) {
                        *ret = ns;
                        return 0;
                }
                tns_registry_info(m->registry, ns, &info);
                ex = (struct tns_oci_existing){.created_host_ns = info.created_realtime_ns,
                                               .rate_capable = info.rate_capable};
                memcpy(ex.offset_ns, info.offset, sizeof(ex.offset_ns));
                memcpy(ex.rate_mult, info.rate_mult, sizeof(ex.rate_mult));
                memcpy(ex.run_mult, info.run_mult, sizeof(ex.run_mult));
                r = clock_gettime(CLOCK_REALTIME, &now) < 0 ? negative_errno() : tns_ts_to_ns(&now, &host);
                if (r >= 0) {
                        ex.realtime_now_ns = tns_rate_map_apply(&info.map[TNS_CLASS_REALTIME], host);
                        r = tns_oci_join_check(req, &ex, host, err);
                }
                if (r >= 0)
                        *ret = ns;
                return r;
        }
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                if (!req->clocks[c].set)
                        continue;
                v[c] = req->clocks[c].spec.ns;
                if (req->clocks[c].spec.kind == TNS_OFFSET_ABSOLUTE) {
                        r = clock_gettime(CLOCK_REALTIME, &now) < 0 ? negative_errno() : tns_ts_to_ns(&now, &host);
                        if (r < 0)
                                return r;
                        v[c] -= host;
                }
                if (clock_gettime(tns_class_clock(c), &now) == 0 && tns_offset_check(c, v[c], &now) < 0)
                        return -ERANGE;
        }
        r = tns_registry_create(m->registry, req->name[0] ? req->name : NULL, v, TNS_ORIGIN_RUN, TNS_GRANT_NONE, ret);
        if (r >= 0)
                (void) tns_registry_set_owner(m->registry, *ret, uid, false);
        /* org.timens.faketime. The runtime's seccomp profile is the
         * filter here: its relative waits are not trapped. */
        if (r >= 0 && req->rated) {
                uint64_t mult[TNS_CLASS_MAX];
                int freeze[TNS_CLASS_MAX];

                tns_oci_request_rates(req, mult, freeze);
                (void) tns_registry_init_rate(m->registry, *ret, mult, freeze, req->clocks);
        }
        *ret_created = r >= 0;
        return r;
}

static int agent_request(const struct tns_oci_state *st, struct tns_oci_request *ret, char *err) {
        int r;

        *ret = (struct tns_oci_request){};
        tns_oci_default_name(st->id, ret->name);
        if (st->metadata && *st->metadata) {
                r = tns_oci_metadata_parse(st->metadata, ret, err);
                if (r < 0)
                        return r;
        }
        return tns_oci_annotations_parse(st->annotations, ret, err);
}

/* The runtime connects once the container's init exists (the init made
 * the listener it sends): its descendants are pinned now, by pidfds
 * checked against their parent, because a runtime may exit right after
 * its sendmsg (crun create -d does), and its init then belongs to a
 * subreaper. A breadth-first walk; pinned[] doubles as the queue. */
struct pin_walk {
        struct agent_conn *a;
        int parent; /* pidfd */
        pid_t parent_pid;
};

static int pin_child(pid_t child, void *userdata) {
        struct pin_walk *w = userdata;
        struct agent_conn *a = w->a;
        struct tns_pidfd_info info;
        int fd;

        if (a->n_pinned >= AGENT_MAX_PINNED)
                return -ENOSPC;
        fd = tns_pidfd_open(child);
        if (fd < 0)
                return 0;
        /* Still its child, and the parent still the one we walked. */
        if (tns_pidfd_get_info(fd, &info) < 0 || info.ppid != w->parent_pid || !tns_pidfd_alive(w->parent)) {
                safe_close(fd);
                return 0;
        }
        a->pinned[a->n_pinned++] = fd;
        return 0;
}

static void agent_pin_descendants(struct agent_conn *a) {
        struct pin_walk w = {a, a->peer.pidfd, a->peer.pid};
        struct tns_pidfd_info info;

        /* Once per read, afresh while the runtime runs: it makes its
         * init after it connects (crun connects first, to fail early). */
        if (!tns_pidfd_alive(a->peer.pidfd))
                return;
        for (unsigned i = 0; i < a->n_pinned; i++)
                a->pinned[i] = safe_close(a->pinned[i]);
        a->n_pinned = 0;

        if (tns_proc_for_each_child(a->peer.pid, pin_child, &w) < 0)
                return;
        for (unsigned i = 0; i < a->n_pinned; i++) {
                if (tns_pidfd_get_info(a->pinned[i], &info) < 0)
                        continue;
                w.parent = a->pinned[i];
                w.parent_pid = info.pid;
                if (tns_proc_for_each_child(info.pid, pin_child, &w) < 0)
                        return;
        }
}

static bool agent_pinned(struct agent_conn *a, pid_t pid) {
        struct tns_pidfd_info info;

        for (unsigned i = 0; i < a->n_pinned; i++)
                if (tns_pidfd_get_info(a->pinned[i], &info) >= 0 && info.pid == pid)
                        return true;
        return false;
}

/* crun run -d daemonizes and makes its init with CLONE_PARENT: the init
 * is the runtime's sibling, not its child. Accepted as the runtime's own
 * when it has the runtime's parent, started after the runtime, and both
 * are still the processes read (their pidfds alive after the reads). */
static bool agent_sibling(struct agent_conn *a, int pidfd, pid_t pid) {
        struct tns_pidfd_info mine, theirs;
        uint64_t t_peer, t_pid;

        if (tns_pidfd_get_info(pidfd, &mine) < 0 || tns_pidfd_get_info(a->peer.pidfd, &theirs) < 0 ||
            mine.ppid != theirs.ppid || tns_proc_start_time(a->peer.pid, &t_peer) < 0 ||
            tns_proc_start_time(pid, &t_pid) < 0)
                return false;
        return t_pid >= t_peer && tns_pidfd_alive(pidfd) && tns_pidfd_alive(a->peer.pidfd);
}

/* The message's pid is the container's init, which the runtime sending
 * it started: it must be the peer's descendant, pinned at a read or found
 * now, checked through pidfds; else timensd would watch and mount into a
 * process the client names. 0: verified; 1: not verifiable, because the
 * runtime exited and its init went to a subreaper (crun run -d makes its
 * init so and exits right after its sendmsg): the listener is then served
 * without acting on the pid; -errno with err: refused. */
static int agent_check_pid(struct agent_conn *a, pid_t pid, char *err) {
        _cleanup_close_ int pidfd = -EBADF;
        char why[PEER_ERR_MAX];
        int r;

        if (pid <= 0)
                return 1; /* crun exec's message: nothing named, nothing to check */
        if (agent_pinned(a, pid))
                return 0;
        pidfd = tns_pidfd_open(pid);
        if (pidfd < 0) {
                snprintf(err, TNS_OCI_ERR_MAX, "the container's process %d does not exist", (int) pid);
                return pidfd;
        }
        r = peer_check_descendant(&a->peer, pidfd, pid, why);
        if (r == -EPERM && agent_sibling(a, pidfd, pid))
                r = 0;
        if (r >= 0 && !tns_pidfd_alive(pidfd))
                r = -ESRCH, snprintf(why, sizeof(why), "process %d exited during the check", (int) pid);
        /* runc run -d exits right after its sendmsg: its init is the
         * reaper's once runc has exited, before its pidfd says so (the
         * kernel reparents, then marks the exit) — a moment's wait tells
         * an exiting runtime from a live one naming a stranger. */
        if (r == -EPERM && tns_pidfd_alive(a->peer.pidfd))
                (void) poll(&(struct pollfd){.fd = a->peer.pidfd, .events = POLLIN}, 1, AGENT_EXIT_WAIT_MS);
        if ((r == -EPERM || r == -ESRCH) && tns_pidfd_alive(pidfd) && !tns_pidfd_alive(a->peer.pidfd))
                return 1;
        if (r < 0)
                snprintf(err, TNS_OCI_ERR_MAX, "%.*s", TNS_OCI_ERR_MAX - 1, why);
        return r;
}

/* Serves the listener of one message; logs what it does and why not. */
static void agent_serve(struct agent_conn *a, json_object *msg) {
        struct tns_oci_state st = {.seccomp_fd_index = -1};
        struct tns_oci_request req;
        struct manager *m = a->m;
        char err[TNS_OCI_ERR_MAX] = "";
        const char *text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN);
        struct tns_log_ctx ctx = {.pid = a->peer.pid};
        struct tns_ns *ns;
        bool created;
        pid_t root = 0;
        int fd, r;

        r = tns_oci_state_parse(text, strlen(text), &st, err);
        if (r >= 0 && (!st.agent || st.seccomp_fd_index < 0))
                r = -EINVAL, snprintf(err, sizeof(err), "the message names no \"seccompFd\" in \"fds\"");
        if (r >= 0 && (unsigned) st.seccomp_fd_index >= a->n_fds)
                r = -EBADF, snprintf(err, sizeof(err), "\"seccompFd\" is fd %d of the message, which brought %u",
                                     st.seccomp_fd_index, a->n_fds);
        ctx.ns = st.id;
        ctx.pid = st.pid ?: a->peer.pid;
        if (r >= 0) {
                r = agent_check_pid(a, st.pid, err);
                if (r == 1 && st.pid > 0)
                        tns_log_full(&m->log, LOG_WARNING, 0, &ctx,
                                     "Container %s: the runtime (process %d) exited before process %d could be "
                                     "checked as its descendant: serving its listener, but without /proc covers "
                                     "or a watch for entrants",
                                     st.id, (int) a->peer.pid, (int) st.pid);
                root = r == 0 ? st.pid : 0;
        }
        if (r >= 0)
                r = agent_request(&st, &req, err);
        if (r < 0) {
                tns_log_full(&m->log, LOG_ERR, 0, &ctx, "Refusing the seccomp listener of container %s: %s",
                             st.id ?: "(no id)", err);
                goto out;
        }
        r = agent_namespace(m, a->peer.uid, &st, &req, &ns, &created, err);
        if (r == -EPERM || r == -EEXIST) {
                tns_log_full(&m->log, LOG_ERR, 0, &ctx, "Refusing the seccomp listener of container %s: %s", st.id,
                             err);
                goto out;
        }
        if (r < 0) {
                tns_log_full(&m->log, LOG_ERR, -r, &ctx, "Refusing the seccomp listener of container %s: %s%m", st.id,
                             r == -ERANGE ? "an offset is out of the kernel's range: " : "namespace: ");
                goto out;
        }
        fd = TAKE_FD(a->fds[st.seccomp_fd_index]);
        r = tns_registry_adopt(m->registry, ns, fd, root);
        if (r < 0 && created)
                (void) tns_registry_destroy(m->registry, ns, true);
        if (r < 0) {
                tns_log_full(&m->log, LOG_ERR, -r, &ctx, "Failed to serve the seccomp listener of container %s: %s",
                             st.id,
                             r == -ENOTTY || r == -EBADF ? "the fd named \"seccompFd\" is not a seccomp listener"
                                                         : strerror(-r));
                goto out;
        }
        m->generation++;
        /* No one is answered here, and the runtime has closed its copy:
         * the listener goes into the store now, not at the next save. */
        (void) fdstore_flush(m);
        tns_log_full(&m->log, LOG_INFO, 0, &ctx,
                     "Serving container %s (namespace %" PRIu64 ") through the seccomp agent", st.id, ns->id);
out:
        tns_oci_state_done(&st);
}

/* 1: the message is complete (served or refused), 0: more to come,
 * <0: the connection ends. */
static int agent_read(struct agent_conn *a) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * AGENT_RECV_MAX_FDS)];
        } control;
        char buf[4096];
        struct iovec iov = {buf, sizeof(buf)};
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)};
        _cleanup_json_ json_object *msg = NULL;
        enum json_tokener_error e;
        ssize_t n;

        /* Before the message is read: the runtime may exit once it is
         * sent (crun run -d), and its init is not its child then. */
        agent_pin_descendants(a);
        n = recvmsg(a->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : negative_errno();
        a->n_fds = tns_cmsg_take_fds(&mh, a->fds, a->n_fds, AGENT_RECV_MAX_FDS);
        if (n == 0) {
                tns_log_full(&a->m->log, LOG_WARNING, 0, &(struct tns_log_ctx){.pid = a->peer.pid},
                             "A seccomp agent client hung up after %zu bytes, before a complete message", a->received);
                return -ECONNRESET;
        }
        a->received += (size_t) n;
        if (a->received > TNS_OCI_MAX_STATE)
                return tns_log_errno(&a->m->log, LOG_WARNING, EMSGSIZE,
                                     "A seccomp agent message is over %d bytes, dropping it", TNS_OCI_MAX_STATE);
        msg = json_tokener_parse_ex(a->tok, buf, (int) n);
        e = json_tokener_get_error(a->tok);
        if (!msg && e == json_tokener_continue)
                return 0;
        if (!msg)
                return tns_log_errno(&a->m->log, LOG_WARNING, EBADMSG, "A seccomp agent message is not JSON: %s",
                                     json_tokener_error_desc(e));
        agent_serve(a, msg);
        return 1;
}

static int on_agent_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct agent_conn *a = userdata;

        if (agent_read(a) != 0)
                agent_conn_free(a);
        return 0;
}

static int on_agent_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct agent_conn *a = userdata;

        tns_log_full(&a->m->log, LOG_WARNING, 0, &(struct tns_log_ctx){.pid = a->peer.pid},
                     "A seccomp agent client sent no complete message within %" PRIu64 " s, dropping it",
                     TIMENSD_AGENT_TIMEOUT_USEC / 1000000);
        agent_conn_free(a);
        return 0;
}

static int agent_conn_new(struct manager *m, int fd) {
        _cleanup_close_ int owned = fd;
        struct agent_conn *a;
        int r;

        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->m = m;
        a->fd = TAKE_FD(owned);
        a->peer.pidfd = -EBADF;
        a->next = m->agent_conns;
        if (a->next)
                a->next->pprev = &a->next;
        a->pprev = &m->agent_conns;
        m->agent_conns = a;
        m->n_agent_conns++;
        a->tok = json_tokener_new_ex(TNS_PROTO_MAX_DEPTH * 4);
        r = a->tok ? peer_from_socket(m, a->fd, &a->peer) : -ENOMEM;
        /* Runtimes only, which run as root: the message names a pid
         * that timensd then watches and mounts into, so the client must
         * be one that may do so itself (the group has the control
         * socket's adopt, which checks it owns the process). */
        if (r >= 0 && a->peer.uid != 0)
                r = tns_log_full(&m->log, LOG_WARNING, EPERM, &(struct tns_log_ctx){.pid = a->peer.pid},
                                 "Refusing a seccomp agent client of uid %u: the agent socket serves container "
                                 "runtimes running as root; others use the control socket (timensctl run)",
                                 (unsigned) a->peer.uid);
        if (r >= 0)
                r = sd_event_add_io(m->event, &a->io, a->fd, EPOLLIN, on_agent_io, a);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &a->timer, CLOCK_MONOTONIC, TIMENSD_AGENT_TIMEOUT_USEC, 0,
                                               on_agent_timer, a);
        if (r < 0) {
                agent_conn_free(a);
                return r;
        }
        (void) sd_event_source_set_description(a->io, "timensd-agent-connection");
        (void) sd_event_source_set_description(a->timer, "timensd-agent-timer");
        return 0;
}

static int on_agent_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct manager *m = userdata;

        for (int i = 0; i < 16; i++) {
                int cfd = accept4(m->agent.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

                if (cfd < 0)
                        return 0;
                if (m->n_agent_conns >= TIMENSD_MAX_AGENT_CONNECTIONS) {
                        tns_log(&m->log, LOG_WARNING, "Seccomp agent: %d clients at once already, refusing one",
                                TIMENSD_MAX_AGENT_CONNECTIONS);
                        safe_close(cfd);
                        continue;
                }
                (void) agent_conn_new(m, cfd);
        }
        return 0;
}

int agent_listen(struct manager *m, const char *path) {
        /* timensd-agent.socket's (FileDescriptorName=agent), or ours,
         * root's alone. */
        static const struct listen_socket_kind agent = {
                .fd_names = {"agent", NULL},
                .bound_name = "agent-bound",
                .mode = 0600,
                .what = "seccomp agent socket",
                .description = "timensd-agent-socket",
                .on_accept = on_agent_accept,
        };

        return listen_socket_open(m, &m->agent, &agent, path);
}

void agent_done(struct manager *m) {
        while (m->agent_conns)
                agent_conn_free(m->agent_conns);
        listen_socket_close(&m->agent);
}
