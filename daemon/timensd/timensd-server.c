/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The control socket: accepting, framing, replies, and the caps that keep
 * one client from hurting the others — at most max_connections at once,
 * TNS_PROTO_MAX_REQUEST bytes per request line, one request in progress
 * per connection (its reply is sent before the next line is read), and an
 * idle timeout for connections that do not complete a request. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd-check.h"
#include "fd-pass.h"
#include "timensd.h"

/* fds one recvmsg() may bring; more are closed by the kernel (MSG_CTRUNC). */
#define RECV_MAX_FDS 8
#define ACCEPT_BATCH 16
#define ACCEPT_RETRY_USEC 1000000

static void connection_free(struct connection *c) {
        struct manager *m;

        if (!c)
                return;
        m = c->m;
        *c->pprev = c->next;
        if (c->next)
                c->next->pprev = c->pprev;
        m->n_connections--;
        m->stats.connections_now = m->n_connections;
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->timer);
        for (unsigned i = 0; i < TNS_PROTO_MAX_FDS; i++)
                safe_close(c->fds[i]);
        safe_close(c->fd);
        peer_done(&c->peer);
        free(c->in);
        free(c->out);
        free(c);
        /* A slot is free again: accept if we had stopped at EMFILE. */
        if (m->accept_retry && m->control.src)
                (void) sd_event_source_set_enabled(m->control.src, SD_EVENT_ON);
}

static bool output_pending(const struct connection *c) {
        return c->out_pos < c->out_len;
}

static bool can_read(const struct connection *c) {
        return !c->closing && !c->wait.pending && !output_pending(c) && c->in_len < TNS_PROTO_MAX_REQUEST;
}

static int connection_arm(struct connection *c, uint64_t usec) {
        int r;

        r = sd_event_source_set_time_relative(c->timer, usec);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
}

static int connection_update_events(struct connection *c) {
        uint32_t events = 0;

        if (can_read(c))
                events |= EPOLLIN;
        if (output_pending(c) && !c->held)
                events |= EPOLLOUT;
        return sd_event_source_set_io_events(c->io, events);
}

/* Sends what the socket takes now; a peer that went away (EPIPE,
 * ECONNRESET) is an error for this connection only: MSG_NOSIGNAL keeps
 * SIGPIPE away. */
static int connection_flush(struct connection *c) {
        if (c->held)
                return 0;
        ssize_t n;

        while (output_pending(c)) {
                n = send(c->fd, c->out + c->out_pos, c->out_len - c->out_pos, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n < 0)
                        return negative_errno();
                c->out_pos += (size_t) n;
        }
        c->out_pos = c->out_len = 0;
        free(c->out);
        c->out = NULL;
        return 0;
}

int connection_reply(struct connection *c, json_object *reply) {
        _cleanup_free_ char *line = NULL;
        size_t len;
        int r;

        r = tns_message_format(reply, &line, &len);
        if (r < 0)
                return r;
        if (len > TNS_PROTO_MAX_REPLY) {
                struct tns_proto_error e;
                _cleanup_json_ json_object *err = NULL;

                free(TAKE_PTR(line));
                tns_proto_error_set(&e, TNS_ERR_LIMIT, "the reply would exceed %d bytes", TNS_PROTO_MAX_REPLY);
                r = tns_reply_error(-1, &e, &err);
                if (r >= 0)
                        r = tns_message_format(err, &line, &len);
                if (r < 0)
                        return r;
        }
        c->out = TAKE_PTR(line);
        c->out_len = len;
        c->out_pos = 0;
        /* What a client is told is in the record a successor reads: the
         * reply waits for its save, which a burst of requests (a thousand
         * containers starting) shares (timensd-fdstore.c). */
        if (c->m->state_stale) {
                c->held = true;
                fdstore_save_soon(c->m); /* may save, and release it, now */
        }
        return connection_flush(c);
}

static int reply_error_line(struct connection *c, int64_t id, enum tns_err code, const char *message) {
        _cleanup_json_ json_object *reply = NULL;
        struct tns_proto_error e;
        int r;

        tns_proto_error_set(&e, code, "%s", message);
        c->m->stats.errors++;
        r = tns_reply_error(id, &e, &reply);
        return r < 0 ? r : connection_reply(c, reply);
}

/* The ops filled c->wait (op_wait): c waits, input paused, until
 * manager_namespace_gone() or the timeout. */
static int connection_wait(struct connection *c) {
        char message[128];
        int r;

        r = connection_arm(c, (uint64_t) c->wait.timeout_ms * 1000);
        if (r >= 0)
                return 0;
        c->wait.pending = false;
        snprintf(message, sizeof(message), "waiting: %s", strerror(-r));
        return reply_error_line(c, c->wait.id, TNS_ERR_INTERNAL, message);
}

static int handle_one(struct connection *c, const char *line, size_t len) {
        _cleanup_json_ json_object *reply = NULL;
        int r;

        r = manager_handle_line(c->m, &c->wait, &c->peer, line, len, c->fds, &reply);
        /* fds not taken by the request they came with go now. */
        for (unsigned i = 0; i < TNS_PROTO_MAX_FDS; i++)
                c->fds[i] = safe_close(c->fds[i]);
        c->n_fds = 0;
        if (r < 0)
                return r;
        if (!reply)
                return connection_wait(c); /* the reply comes later */
        r = connection_reply(c, reply);
        if (r >= 0 && !c->wait.pending)
                r = connection_arm(c, c->m->idle_timeout_usec);
        return r;
}

/* Handles the complete lines in the buffer, one reply at a time. */
static int connection_process(struct connection *c) {
        char *nl;
        size_t len;
        int r;

        while (!c->wait.pending && !output_pending(c)) {
                nl = memchr(c->in, '\n', c->in_len);
                if (!nl) {
                        if (c->in_len < TNS_PROTO_MAX_REQUEST)
                                return 0;
                        /* No newline in a full buffer: refuse the line and
                         * skip the rest of it, then go on with the next. */
                        c->in_len = 0;
                        c->discarding = true;
                        return reply_error_line(c, -1, TNS_ERR_TOO_LARGE,
                                                "request line over 65536 bytes with its newline; skipped to its end");
                }
                len = (size_t) (nl - c->in);
                r = handle_one(c, c->in, len);
                memmove(c->in, nl + 1, c->in_len - len - 1);
                c->in_len -= len + 1;
                if (r < 0)
                        return r;
        }
        return 0;
}

/* After a line that was too long, drops bytes up to its newline. */
static void discard(struct connection *c, size_t n) {
        char *nl = memchr(c->in + c->in_len, '\n', n);
        size_t keep;

        if (!nl)
                return;
        keep = n - (size_t) (nl + 1 - (c->in + c->in_len));
        memmove(c->in, nl + 1, keep);
        c->in_len = keep;
        c->discarding = false;
}

/* One recvmsg() per wakeup, so that a busy client cannot starve the rest. */
static int connection_read(struct connection *c) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * RECV_MAX_FDS)];
        } control;
        struct iovec iov = {c->in + c->in_len, TNS_PROTO_MAX_REQUEST - c->in_len};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        unsigned room = c->n_fds < TNS_PROTO_MAX_FDS ? TNS_PROTO_MAX_FDS - c->n_fds : 0, first = c->n_fds;
        ssize_t n;

        /* fds from a peer that may change state (adopt is the op that
         * takes them), as many as a request uses: the kernel drops any
         * other with no close of ours, which calls no FLUSH; a close may
         * wait for ever on a FUSE server the sender runs (helper-43). */
        if (c->peer.access < TNS_ACCESS_WRITE)
                room = 0;
        if (room > RECV_MAX_FDS)
                room = RECV_MAX_FDS;
        if (room > 0) {
                mh.msg_control = &control;
                mh.msg_controllen = CMSG_LEN(sizeof(int) * room); /* exact: no room for one more */
        }
        n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : negative_errno();
        c->n_fds = tns_cmsg_take_fds(&mh, c->fds, c->n_fds, TNS_PROTO_MAX_FDS);
        /* Of the kinds adopt takes, or closed where a close may wait. */
        for (unsigned i = first; i < c->n_fds; i++) {
                int k = tns_fd_kind(0, c->fds[i]);

                if (k == TNS_FD_SECCOMP || k == TNS_FD_PIDFD)
                        continue;
                /* Its closer stuck: left open, not closed here (logged). */
                (void) tns_supervisor_close_untrusted(c->m->supervisor, c->fds[i]);
                c->fds[i] = -EBADF;
        }
        if (n == 0) {
                c->closing = true; /* answer what came, then close */
                return 0;
        }
        if (c->discarding)
                discard(c, (size_t) n);
        else
                c->in_len += (size_t) n;
        return 0;
}

static bool connection_finished(const struct connection *c) {
        return c->closing && !c->wait.pending && !output_pending(c);
}

static int connection_run(struct connection *c, uint32_t revents) {
        int r = 0;

        if (revents & EPOLLOUT)
                r = connection_flush(c);
        /* Lines already buffered first: reading into a full buffer would
         * look like the end of the stream. */
        if (r >= 0)
                r = connection_process(c);
        if (r >= 0 && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) && can_read(c)) {
                r = connection_read(c);
                if (r >= 0)
                        r = connection_process(c);
        }
        /* The peer closed both ways: nobody is left to answer (a wait,
         * or a reply held for a save, would otherwise see EPOLLHUP at
         * every turn of the loop). */
        if (r >= 0 && (revents & (EPOLLHUP | EPOLLERR)) && (c->closing || c->wait.pending || c->held))
                r = -ECONNRESET;
        if (r >= 0 && connection_finished(c))
                r = -ECONNRESET;
        if (r >= 0)
                r = connection_update_events(c);
        return r;
}

static int on_connection_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct connection *c = userdata;

        if (c->dead || connection_run(c, revents) < 0)
                connection_free(c);
        return 0;
}

/* Frees happen only at the top of the loop (a connection's own handlers,
 * the sweep): code reached from another connection's request — a gone
 * namespace finishing waits — marks and schedules instead, so that no
 * iteration over the list ever holds a freed entry. */
static int on_sweep(sd_event_source *s, void *userdata) {
        struct manager *m = userdata;
        struct connection *c, *next;

        for (c = m->connections; c; c = next) {
                next = c->next;
                if (c->dead) {
                        connection_free(c);
                        continue;
                }
                if (!c->kick)
                        continue;
                c->kick = false;
                if (connection_run(c, 0) < 0)
                        connection_free(c);
        }
        return 0;
}

static void schedule_sweep(struct manager *m) {
        if (!m->sweep && sd_event_add_defer(m->event, &m->sweep, on_sweep, m) >= 0)
                (void) sd_event_source_set_description(m->sweep, "timensd-connection-sweep");
        if (m->sweep)
                (void) sd_event_source_set_enabled(m->sweep, SD_EVENT_ONESHOT);
}

/* The record is saved: the replies that waited for it go. */
void server_state_saved(struct manager *m) {
        bool any = false;

        for (struct connection *c = m->connections; c; c = c->next) {
                if (!c->held)
                        continue;
                c->held = false;
                if (c->dead)
                        continue;
                if (connection_flush(c) < 0)
                        c->dead = true;
                else
                        c->kick = true; /* its next lines, its events */
                any = true;
        }
        if (any)
                schedule_sweep(m);
}

static void connection_wait_done(struct connection *c, json_object *reply) {
        int r;

        c->wait.pending = false;
        r = connection_reply(c, reply);
        if (r >= 0)
                r = connection_arm(c, c->m->idle_timeout_usec);
        if (r < 0)
                c->dead = true;
        else
                c->kick = true; /* lines that came meanwhile */
        schedule_sweep(c->m);
}

static int on_connection_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct connection *c = userdata;
        _cleanup_json_ json_object *reply = NULL;
        struct tns_proto_error e;

        if (c->dead || !c->wait.pending) {
                /* Idle, or a request dribbled in too slowly (slow loris),
                 * or a reply not read: the slot goes to someone else. */
                tns_log_full(&c->m->log, LOG_DEBUG, 0, &(struct tns_log_ctx){.pid = c->peer.pid},
                             "Closing a connection idle for %" PRIu64 " s", c->m->idle_timeout_usec / 1000000);
                connection_free(c);
                return 0;
        }
        tns_proto_error_set(&e, TNS_ERR_TIMEOUT, "namespace %" PRIu64 " is still there", c->wait.ns);
        c->m->stats.errors++;
        if (tns_reply_error(c->wait.id, &e, &reply) < 0) {
                connection_free(c);
                return 0;
        }
        connection_wait_done(c, reply);
        return 0;
}

void manager_namespace_gone(struct manager *m, uint64_t id) {
        struct connection *c, *next;

        for (c = m->connections; c; c = next) {
                _cleanup_json_ json_object *result = NULL, *reply = NULL;

                next = c->next;
                if (c->dead || !c->wait.pending || c->wait.ns != id)
                        continue;
                result = json_object_new_object();
                if (!result || json_object_object_add(result, "gone", json_object_new_boolean(1)) < 0 ||
                    tns_reply_result(c->wait.id, TAKE_PTR(result), &reply) < 0) {
                        c->dead = true;
                        schedule_sweep(m);
                        continue;
                }
                connection_wait_done(c, reply);
        }
}

/* A clear error for this client, and its slot stays free. */
static void reject(struct manager *m, int fd, const char *message) {
        _cleanup_json_ json_object *reply = NULL;
        _cleanup_free_ char *line = NULL;
        struct tns_proto_error e;
        size_t len;

        tns_proto_error_set(&e, TNS_ERR_LIMIT, "%s", message);
        if (tns_reply_error(-1, &e, &reply) >= 0 && tns_message_format(reply, &line, &len) >= 0)
                (void) !send(fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        safe_close(fd);
        m->stats.rejected++;
}

static unsigned connections_of(const struct manager *m, uid_t uid) {
        unsigned n = 0;

        for (const struct connection *c = m->connections; c; c = c->next)
                if (!c->dead && c->peer.uid == uid)
                        n++;
        return n;
}

/* Root has every slot; another uid at most its quota, and a user outside
 * the group none of the reserved ones. Called before c counts. */
static bool over_quota(struct manager *m, const struct peer *p, char *buf, size_t size) {
        unsigned reserved = m->max_connections / 4 < TIMENSD_RESERVED_CONNECTIONS ? m->max_connections / 4
                                                                                  : TIMENSD_RESERVED_CONNECTIONS;

        if (p->uid == 0)
                return false;
        if (connections_of(m, p->uid) >= TIMENSD_MAX_CONNECTIONS_PER_UID) {
                snprintf(buf, size, "too many connections of uid %u (%d at once): close some", (unsigned) p->uid,
                         TIMENSD_MAX_CONNECTIONS_PER_UID);
                return true;
        }
        if (p->by_user < TNS_ACCESS_WRITE && m->n_connections >= m->max_connections - reserved) {
                snprintf(buf, size, "too many connections (%u; the last %u are kept for root and group '%s')",
                         m->n_connections, reserved, m->group_name);
                return true;
        }
        return false;
}

static int connection_new(struct manager *m, int fd) {
        _cleanup_close_ int owned = fd;
        struct connection *c;
        char why[192];
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->peer.pidfd = -EBADF;
        r = peer_from_socket(m, fd, &c->peer);
        if (r >= 0 && over_quota(m, &c->peer, why, sizeof(why)))
                r = -EDQUOT;
        if (r < 0) {
                peer_done(&c->peer);
                free(c);
                if (r == -EDQUOT)
                        reject(m, TAKE_FD(owned), why);
                return r;
        }
        c->m = m;
        c->fd = TAKE_FD(owned);
        for (unsigned i = 0; i < TNS_PROTO_MAX_FDS; i++)
                c->fds[i] = -EBADF;
        c->next = m->connections;
        if (c->next)
                c->next->pprev = &c->next;
        c->pprev = &m->connections;
        m->connections = c;
        m->n_connections++;
        m->stats.connections++;
        m->stats.connections_now = m->n_connections;
        c->in = malloc(TNS_PROTO_MAX_REQUEST);
        r = c->in ? 0 : -ENOMEM;
        if (r >= 0)
                r = sd_event_add_io(m->event, &c->io, c->fd, EPOLLIN, on_connection_io, c);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC, m->idle_timeout_usec, 0,
                                               on_connection_timer, c);
        if (r < 0) {
                connection_free(c);
                return r;
        }
        (void) sd_event_source_set_description(c->io, "timensd-connection");
        (void) sd_event_source_set_description(c->timer, "timensd-connection-timer");
        return 0;
}

static int on_accept_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        struct manager *m = userdata;

        m->accept_retry = sd_event_source_disable_unref(m->accept_retry);
        return sd_event_source_set_enabled(m->control.src, SD_EVENT_ON);
}

/* Out of fds: stop accepting for a while instead of spinning on a
 * listening socket that stays readable. */
static void pause_accepting(struct manager *m, int error) {
        tns_log_errno(&m->log, LOG_WARNING, error, "Failed to accept a connection, pausing for 1 s: %m");
        (void) sd_event_source_set_enabled(m->control.src, SD_EVENT_OFF);
        if (!m->accept_retry && sd_event_add_time_relative(m->event, &m->accept_retry, CLOCK_MONOTONIC,
                                                           ACCEPT_RETRY_USEC, 0, on_accept_retry, m) >= 0)
                (void) sd_event_source_set_description(m->accept_retry, "timensd-accept-retry");
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct manager *m = userdata;
        int cfd, r;

        for (int i = 0; i < ACCEPT_BATCH; i++) {
                cfd = accept4(m->control.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                                pause_accepting(m, errno);
                        return 0;
                }
                if (m->n_connections >= m->max_connections) {
                        char why[64];

                        snprintf(why, sizeof(why), "too many connections (%u)", m->max_connections);
                        reject(m, cfd, why);
                        continue;
                }
                r = connection_new(m, cfd);
                if (r == -EDQUOT)
                        continue; /* refused with a reply, counted */
                if (r < 0)
                        tns_log_errno(&m->log, LOG_WARNING, r, "Failed to set up a connection, ignoring: %m");
        }
        return 0;
}

int server_listen(struct manager *m, const char *path) {
        /* timensd.socket hands us the socket already bound (socket
         * activation), named "control" (FileDescriptorName=), or
         * "timensd.socket" by a unit without that line; or a predecessor
         * handed it over. The mode: open to all, what a peer may do is
         * decided by its credentials. */
        static const struct listen_socket_kind control = {
                .fd_names = {"control", "timensd.socket", NULL},
                .bound_name = "control-bound",
                .mode = 0666,
                .what = "control socket",
                .description = "timensd-control-socket",
                .on_accept = on_accept,
        };

        return listen_socket_open(m, &m->control, &control, path);
}

void server_done(struct manager *m) {
        while (m->connections)
                connection_free(m->connections);
        m->accept_retry = sd_event_source_disable_unref(m->accept_retry);
        m->sweep = sd_event_source_disable_unref(m->sweep);
        listen_socket_close(&m->control);
}
