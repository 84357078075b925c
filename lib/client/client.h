/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The client side of timensd's control protocol (proto/PROTOCOL.md): one
 * connection, one request at a time, fds passed with SCM_RIGHTS. Every
 * wait is bounded by the client's timeout. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "timens-proto.h"

#define TNS_CLIENT_TIMEOUT_MS 10000

struct tns_client;

/* Connects to the control socket at path (NULL: $TIMENS_SOCKET, else
 * TNS_DEFAULT_SOCKET). -ENOENT/-ECONNREFUSED: no daemon there; -EACCES:
 * not allowed to reach it; -EAGAIN: its backlog is full. */
int tns_client_connect(const char *path, struct tns_client **ret);
struct tns_client *tns_client_free(struct tns_client *c);
static inline void tns_client_freep(struct tns_client **c) {
        tns_client_free(*c);
}
#define _cleanup_client_ _cleanup_(tns_client_freep)

/* The path a NULL path stands for. */
const char *tns_client_default_socket(void);

/* Bounds each later call (sending and waiting for its reply). */
void tns_client_set_timeout(struct tns_client *c, int timeout_ms);

/* Sends req (its id is set here) with n_fds fds, and waits for the reply.
 * Returns 1 and *ret_result (a reference the caller puts) for a result, 0
 * and *ret_error for an error reply; -ETIMEDOUT, -ECONNRESET/-EPIPE (the
 * daemon went away), -EBADMSG (a reply that is not one) or -EMSGSIZE. */
int tns_client_call(struct tns_client *c, struct tns_request *req, const int *fds, size_t n_fds,
                    json_object **ret_result, struct tns_proto_error *ret_error);

/* An O_RDONLY fd of the kernel time namespace the namespace `name` (or,
 * name NULL, `id`) is paired with, opened from one of its processes that
 * is in it (the inode checked on the fd); -ENOENT if it has none, none of
 * its processes is there, or timensd does not answer. */
int tns_client_time_ns_fd(struct tns_client *c, const char *name, uint64_t id);
