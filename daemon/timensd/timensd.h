/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensd: the host's time namespace daemon. One sd-event loop runs the
 * supervisor engine (lib/supervisor*.c: seccomp listeners of every
 * namespace) and the control socket (proto/PROTOCOL.md). All state lives
 * in struct manager; nothing is global. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "log.h"
#include "registry.h"
#include "timens-proto.h"
#include "version.h"

#define TIMENSD_DEFAULT_GROUP "timens"
#define TIMENSD_DEFAULT_MAX_CONNECTIONS 256
#define TIMENSD_DEFAULT_IDLE_TIMEOUT_SEC 60
/* Connections one uid other than root may hold at once, and the last
 * slots of --max-connections, which only root and the group may take:
 * other users cannot lock the admin out (issue 14, item 7). */
#define TIMENSD_MAX_CONNECTIONS_PER_UID 32
#define TIMENSD_RESERVED_CONNECTIONS 32
#define TIMENSD_BACKLOG SOMAXCONN

/* Who is on the other end of a connection (SO_PEERCRED at connect),
 * pinned by a pidfd (SO_PEERPIDFD): a peer that is gone has no access,
 * and its pid, once reused, never names another process's rights. */
struct peer {
        pid_t pid;
        uid_t uid;
        gid_t gid;
        int pidfd; /* -EBADF: not pinned, no access */
        enum tns_access by_user; /* what root / the group / others may do */
        enum tns_access access; /* that, limited by the grant of a namespace it is in */
        enum tns_access limit; /* access at connect: a peer inside then stays as limited */
        uint64_t inside_ns; /* the namespace it is in, 0 if none */
        uint64_t generation; /* of the manager when access was computed */
        bool gone; /* its process exited */
        bool filtered; /* under a seccomp filter, in no namespace: read at most */
};

/* A wait request (op_wait) the ops fill and the server (timensd-server.c)
 * owns: the connection holds its input until namespace ns is gone
 * (manager_namespace_gone) or timeout_ms passed, then replies to id. */
struct request_wait {
        bool pending;
        int64_t id;
        uint64_t ns;
        uint32_t timeout_ms;
};

struct connection {
        struct manager *m;
        int fd;
        sd_event_source *io, *timer;
        struct peer peer;
        char *in; /* TNS_PROTO_MAX_REQUEST bytes */
        size_t in_len;
        bool discarding; /* skipping the rest of a line that was too long */
        int fds[TNS_PROTO_MAX_FDS];
        unsigned n_fds;
        char *out;
        size_t out_len, out_pos;
        struct request_wait wait; /* pending: input is not read */
        bool closing; /* the peer shut down: close once answered */
        bool kick; /* process buffered lines at the next sweep */
        bool held; /* its reply waits for the record's next save */
        bool dead; /* free at the next sweep */
        struct connection *next, **pprev;
};

/* A listening Unix socket of timensd: the control socket or the seccomp
 * agent's (timensd-manager.c sets both up the same way). */
struct listen_socket {
        char *path;
        int fd;
        bool owned; /* we bound it: unlinked at exit, kept in the fd store */
        sd_event_source *src;
};
#define LISTEN_SOCKET_NULL ((struct listen_socket){.fd = -EBADF})

/* How one kind of listening socket is found and made. */
struct listen_socket_kind {
        const char *fd_names[3]; /* what systemd or a predecessor passes it as, NULL-ended */
        const char *bound_name; /* a predecessor's own bound socket: still ours to unlink at exit */
        mode_t mode; /* when we bind it ourselves */
        const char *what; /* for messages: "control socket" */
        const char *description; /* of its event source */
        sd_event_io_handler_t on_accept;
};

struct manager {
        sd_event *event;
        struct tns_logger log;
        struct tns_supervisor *supervisor;
        struct tns_registry *registry;

        /* The control socket (timensd-server.c). */
        struct listen_socket control;
        sd_event_source *accept_retry, *sweep;
        struct connection *connections;
        unsigned n_connections;

        /* Settings. */
        unsigned max_connections;
        uint64_t idle_timeout_usec;
        char *group_name;
        gid_t group;
        bool have_group;

        /* The OCI seccomp agent socket (timensd-agent.c); path NULL: off. */
        struct listen_socket agent;
        struct agent_conn *agent_conns;
        unsigned n_agent_conns;

        /* Restarts (timensd-fdstore.c): fds handed to us in LISTEN_FDS,
         * the state memfd, and how to start our successor. */
        struct tns_named_fd *passed;
        char **passed_names;
        size_t n_passed;
        int state_fd;
        int inflight_fd;
        struct tns_inflight *inflight;
        int recvs_fd; /* the receive threads' slots (inflight-recvs) */
        struct tns_inflight_recvs *recvs;
        uint64_t state_off, state_len, state_seq;
        /* Saves of the record, and the fds that wait for one
         * (timensd-fdstore.c, STATE_FLUSH_USEC). */
        bool state_stale;
        uint64_t state_saved_usec;
        uint64_t state_gap_usec; /* the last save's time, times STATE_GAP_FACTOR */
        sd_event_source *state_flush;
        struct pending_fd {
                char *name;
                int fd;
        } * pending_fds;
        size_t n_pending_fds, size_pending_fds;
        bool fdstore_notify; /* NOTIFY_SOCKET is set: systemd keeps our fds */
        bool fdstore_warned;
        char *exe; /* our binary, for SIGUSR2 */
        char **argv;

        /* Bumped when a peer's access may have changed (adopt, SIGHUP). */
        uint64_t generation;
        struct tns_server_stats stats;
        uint64_t start_usec;
};

/* timensd-manager.c */
int manager_new(sd_event *event, const struct tns_logger *log, struct manager **ret);
/* CLOCK_MONOTONIC now, in µs: the daemon's one reading of it outside the
 * loop's own (sd_event_now() is the time the loop woke). */
uint64_t manager_now_usec(void);
struct manager *manager_free(struct manager *m);
void manager_reload(struct manager *m);
/* The socket passed under one of kind's names (checked: a listening Unix
 * stream socket), else one bound at path (its directory prepared, a stale
 * socket replaced; -EADDRINUSE if a daemon answers there); then watched
 * with kind->on_accept. Errors are logged. */
int listen_socket_open(struct manager *m, struct listen_socket *ls, const struct listen_socket_kind *kind,
                       const char *path);
/* Stops watching, closes, and unlinks the path if we bound it. */
void listen_socket_close(struct listen_socket *ls);

/* timensd-log.c: the logger callback; userdata is a struct log_target. */
struct log_target {
        bool journal;
        bool prefix; /* stderr lines start with <N>, the syslog priority */
};
void timensd_log(void *userdata, int level, int error, const struct tns_log_ctx *ctx, const char *fmt, va_list ap);
bool timensd_journal_available(void);
int timensd_parse_log_level(const char *s);

/* timensd-auth.c */
int peer_from_socket(struct manager *m, int fd, struct peer *ret);
/* Recomputes access if the manager's generation moved on; a peer whose
 * process is gone has none. */
void peer_refresh(struct manager *m, struct peer *p);
void peer_done(struct peer *p);
/* Checks made of a process a request names (pidfd: its pidfd), against
 * the peer asking: 0, or -EPERM/-ESRCH with a message in err. */
#define PEER_ERR_MAX 256
int peer_check_descendant(struct peer *p, int pidfd, pid_t pid, char err[PEER_ERR_MAX]);
int peer_check_owner(struct peer *p, int pidfd, pid_t pid, char err[PEER_ERR_MAX]);
int peer_check_mount_ns(struct peer *p, int pidfd, pid_t pid, char err[PEER_ERR_MAX]);
/* Whether uid may join held namespace ns (its owner's, or shared). */
int peer_may_join(struct manager *m, uid_t uid, struct tns_ns *ns, char err[PEER_ERR_MAX]);
/* Whether uid may change or destroy ns (`what`: "set", "destroy"): root
 * and its owner only, shared or not. */
int peer_may_change(struct manager *m, uid_t uid, struct tns_ns *ns, const char *what, char err[PEER_ERR_MAX]);

/* timensd-ops.c: one request line in, one reply out — or none yet
 * (*ret_reply NULL) when a wait request filled *wait (pending) and the
 * caller now holds it. fds received with the line may be taken (set to
 * -EBADF). wait may be NULL: no connection to hold, wait is refused. */
int manager_handle_line(struct manager *m, struct request_wait *wait, struct peer *p, const char *line, size_t len,
                        int fds[TNS_PROTO_MAX_FDS], json_object **ret_reply);

/* timensd-agent.c: the OCI seccomp agent (runtime-spec config-linux.md,
 * listenerPath): runtimes connect, send the container state and the
 * listener fd, and timensd serves it for the container's namespace. */
#define TIMENSD_MAX_AGENT_CONNECTIONS 64
#define TIMENSD_AGENT_TIMEOUT_USEC (10 * UINT64_C(1000000))
int agent_listen(struct manager *m, const char *path);
void agent_done(struct manager *m);

/* timensd-entrants.c: processes entering a served pid namespace from
 * outside (runc exec, nsenter) are attached at their exec. */
struct entrants;
enum entrants_mode {
        ENTRANTS_AUTO, /* BPF, else the proc connector */
        ENTRANTS_BPF,
        ENTRANTS_PROC,
        ENTRANTS_OFF,
};
int entrants_start(struct manager *m, enum entrants_mode mode, struct entrants **ret);
struct entrants *entrants_free(struct entrants *e);

/* timensd-fdstore.c: restarts. collect takes LISTEN_FDS (with names);
 * take hands one of them out by name; restore rebuilds the supervisor
 * from the state record among them and from then on keeps the store in
 * step with every change; save writes the record now; handoff (SIGUSR2)
 * starts a new image with every fd and returns 0 once it runs (the caller
 * then exits), or an error (logged) and we serve on. */
int fdstore_collect(struct manager *m);
int fdstore_take(struct manager *m, const char *name);
int fdstore_restore(struct manager *m);
int fdstore_save(struct manager *m);
int fdstore_flush(struct manager *m);
void fdstore_save_soon(struct manager *m);
void server_state_saved(struct manager *m);
int fdstore_handoff(struct manager *m);
void fdstore_done(struct manager *m);
/* In a child: exec exe with fds[i] at 3 + i, named in LISTEN_FDNAMES; on
 * failure errno goes to report (if >= 0) and the child exits 127. */
_Noreturn void fdstore_exec_with_fds(const char *exe, char *const argv[], const char *const names[], const int fds[],
                                     size_t n, int report);

/* timensd-keeper.c: without systemd and without --foreground, timensd
 * runs as two processes: the keeper holds what systemd's fd store would
 * (speaking the same sd_notify protocol on a private NOTIFY_SOCKET) and
 * starts the worker again whenever it dies. Returns the exit status. */
int keeper_run(const char *exe, char *const argv[], int ready_fd, const struct tns_logger *log);

/* timensd-server.c */
int server_listen(struct manager *m, const char *path);
void server_done(struct manager *m);
/* Queues a reply on c and sends what the socket takes now. */
int connection_reply(struct connection *c, json_object *reply);
/* Called when a held namespace is gone: finishes the waits on it. */
void manager_namespace_gone(struct manager *m, uint64_t id);
