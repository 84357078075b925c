/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

struct tns_client {
        int fd;
        char *path; /* to connect again while the daemon is full */
        bool answered; /* a reply came on this connection */
        int timeout_ms;
        int64_t next_id;
        char *buf; /* bytes received and not yet consumed */
        size_t len, size;
};

const char *tns_client_default_socket(void) {
        const char *e = secure_getenv("TIMENS_SOCKET");

        return e && *e ? e : TNS_DEFAULT_SOCKET;
}

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A daemon that is full now (a thousand containers starting at once) is
 * asked again a little later, until the deadline: backoffs of 5 ms
 * doubling to 200 ms, each shortened by up to half at random so that the
 * clients that were turned away together do not come back together. */
static int backoff(unsigned *attempt, int64_t deadline) {
        unsigned ms = 5U << (*attempt < 6 ? *attempt : 6);
        struct timespec ts;
        int64_t left = deadline - now_ms();

        if (left <= 0)
                return -ETIMEDOUT;
        if (ms > 200)
                ms = 200;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ms -= (unsigned) ((ts.tv_nsec ^ getpid()) % (ms / 2 + 1));
        if (ms > left)
                ms = (unsigned) left;
        (*attempt)++;
        ts = (struct timespec){.tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
        return 0;
}

/* Non-blocking: a daemon whose backlog is full makes connect() fail with
 * EAGAIN instead of hanging us; we try again until the deadline. */
static int open_socket(const char *path, int64_t deadline) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        unsigned attempt = 0;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        for (;;) {
                _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                int r;

                if (fd < 0)
                        return negative_errno();
                if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) >= 0)
                        return TAKE_FD(fd);
                if (errno != EAGAIN)
                        return negative_errno();
                r = backoff(&attempt, deadline);
                if (r < 0)
                        return -EAGAIN;
        }
}

int tns_client_connect(const char *path, struct tns_client **ret) {
        _cleanup_close_ int fd = -EBADF;
        struct tns_client *c;

        if (!path)
                path = tns_client_default_socket();
        fd = open_socket(path, now_ms() + TNS_CLIENT_TIMEOUT_MS);
        if (fd < 0)
                return fd;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->path = strdup(path);
        if (!c->path) {
                free(c);
                return -ENOMEM;
        }
        c->fd = TAKE_FD(fd);
        c->timeout_ms = TNS_CLIENT_TIMEOUT_MS;
        c->next_id = 1;
        *ret = c;
        return 0;
}

struct tns_client *tns_client_free(struct tns_client *c) {
        if (!c)
                return NULL;
        safe_close(c->fd);
        free(c->path);
        free(c->buf);
        free(c);
        return NULL;
}

void tns_client_set_timeout(struct tns_client *c, int timeout_ms) {
        c->timeout_ms = timeout_ms;
}

/* Waits for events on the socket until the deadline. */
static int wait_fd(int fd, short events, int64_t deadline) {
        struct pollfd p = {.fd = fd, .events = events};
        int64_t left;
        int r;

        for (;;) {
                left = deadline - now_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                r = poll(&p, 1, (int) (left > 60000 ? 60000 : left));
                if (r > 0)
                        return 0;
                if (r < 0 && errno != EINTR)
                        return negative_errno();
        }
}

/* The first chunk carries the fds: the server takes them with the line. */
static ssize_t send_chunk(int fd, const char *p, size_t len, const int *fds, size_t n_fds) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * TNS_PROTO_MAX_FDS)];
        } control = {};
        struct iovec iov = {(void *) p, len};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

        if (n_fds > 0) {
                mh.msg_control = &control;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                control.h.cmsg_level = SOL_SOCKET;
                control.h.cmsg_type = SCM_RIGHTS;
                control.h.cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(&control.h), fds, sizeof(int) * n_fds);
        }
        return sendmsg(fd, &mh, MSG_NOSIGNAL);
}

static int send_all(struct tns_client *c, const char *p, size_t len, const int *fds, size_t n_fds, int64_t deadline) {
        ssize_t n;
        int r;

        while (len > 0) {
                n = send_chunk(c->fd, p, len, fds, n_fds);
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                        r = wait_fd(c->fd, POLLOUT, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (n < 0)
                        return negative_errno();
                p += n, len -= (size_t) n;
                n_fds = 0;
        }
        return 0;
}

static int grow(struct tns_client *c) {
        size_t size = c->size ? c->size * 2 : 4096;
        char *b;

        if (size > TNS_PROTO_MAX_REPLY + 1)
                size = TNS_PROTO_MAX_REPLY + 1;
        if (size <= c->len)
                return -EMSGSIZE;
        b = realloc(c->buf, size);
        if (!b)
                return -ENOMEM;
        c->buf = b;
        c->size = size;
        return 0;
}

/* Reads until a whole line is buffered; returns its length (without '\n'). */
static ssize_t read_line(struct tns_client *c, int64_t deadline) {
        char *nl;
        ssize_t n;
        int r;

        while (!(nl = c->len ? memchr(c->buf, '\n', c->len) : NULL)) {
                if (c->len == c->size && (r = grow(c)) < 0)
                        return r;
                n = recv(c->fd, c->buf + c->len, c->size - c->len, MSG_CMSG_CLOEXEC);
                if (n == 0)
                        return -ECONNRESET;
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                        r = wait_fd(c->fd, POLLIN, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (n < 0)
                        return negative_errno();
                c->len += (size_t) n;
        }
        return nl - c->buf;
}

static void consume(struct tns_client *c, size_t n) {
        memmove(c->buf, c->buf + n, c->len - n);
        c->len -= n;
}

/* Whether the daemon hung up after its error line (it turned us away
 * unread), within a moment. */
static bool turned_away(struct tns_client *c) {
        char byte;
        ssize_t n;

        if (c->len > 0 || wait_fd(c->fd, POLLIN | POLLRDHUP, now_ms() + 100) < 0)
                return false;
        /* Closed with our request unread: a reset, not an end. */
        n = recv(c->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        return n == 0 || (n < 0 && errno == ECONNRESET);
}

int tns_client_call(struct tns_client *c, struct tns_request *req, const int *fds, size_t n_fds,
                    json_object **ret_result, struct tns_proto_error *ret_error) {
        _cleanup_json_ json_object *msg = NULL;
        _cleanup_free_ char *line = NULL;
        int64_t deadline = now_ms() + c->timeout_ms, id;
        size_t len;
        ssize_t n;
        int r;

        if (n_fds > TNS_PROTO_MAX_FDS)
                return -E2BIG;
        req->id = c->next_id++;
        r = tns_request_to_json(req, &msg);
        if (r >= 0)
                r = tns_message_format(msg, &line, &len);
        if (r >= 0 && len > TNS_PROTO_MAX_REQUEST)
                r = -EMSGSIZE;
        if (r < 0)
                return r;
        for (unsigned attempt = 0;;) {
                r = send_all(c, line, len, fds, n_fds, deadline);
                /* A daemon that turned us away may have closed before
                 * our request went: its reason is still to be read. */
                if (r >= 0 || r == -EPIPE || r == -ECONNRESET) {
                        int sent = r;

                        n = read_line(c, deadline);
                        r = n < 0 ? (sent < 0 ? sent : (int) n)
                                  : tns_reply_parse(c->buf, (size_t) n, &id, ret_result, ret_error);
                        if (n >= 0)
                                consume(c, (size_t) n + 1);
                }
                /* Turned away before any answer because the daemon was
                 * full ("too many connections": no id, and the daemon
                 * hangs up): the same request on a new connection, a
                 * little later. Not a limit error on a connection that
                 * stays (a reply too large: the request was done), nor
                 * after a connection lost otherwise. */
                if (!c->answered && r == 0 && id == -1 && ret_error && ret_error->code == TNS_ERR_LIMIT &&
                    turned_away(c)) {
                        int k = backoff(&attempt, deadline);

                        if (k >= 0)
                                k = open_socket(c->path, deadline);
                        if (k < 0)
                                return r;
                        safe_close(c->fd);
                        c->fd = k;
                        c->len = 0;
                        continue;
                }
                break;
        }
        if (r < 0)
                return r;
        c->answered = true;
        if (r == 1 && id != req->id) {
                json_object_put(*ret_result);
                return -EBADMSG;
        }
        /* An error about the connection itself (too many) has no id. */
        if (r == 0 && id != req->id && id != -1)
                return -EBADMSG;
        return r;
}
