/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The control protocol of timensd as C types and their JSON
 * (de)serialisers, written once: the daemon, lib/client/client.c, timensctl and
 * the fuzz target read and write messages with these and nothing else.
 * proto/PROTOCOL.md is the document; it and this header change together.
 *
 * Framing: one JSON object per line ('\n'), UTF-8, over a SOCK_STREAM Unix
 * socket. A request is at most TNS_PROTO_MAX_REQUEST bytes with its
 * newline; a reply at most TNS_PROTO_MAX_REPLY. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "offset-parse.h"
#include "offsets-page.h"
#include "ns-model.h"
#include "json-util.h"
#include "util.h"

#define TNS_PROTO_VERSION 1
#define TNS_PROTO_MAX_REQUEST (64 * 1024)
#define TNS_PROTO_MAX_REPLY (4 * 1024 * 1024)
#define TNS_PROTO_MAX_DEPTH 8 /* JSON nesting a request may use */
#define TNS_PROTO_MAX_FDS 2 /* fds one request may carry (SCM_RIGHTS) */
#define TNS_PROTO_MAX_PROCESSES 1024 /* processes `show` lists */
#define TNS_PROTO_WAIT_DEFAULT_MS 30000
#define TNS_PROTO_WAIT_MAX_MS 3600000
#define TNS_PROTO_STATE_FORMAT "timens-clock-state"
#define TNS_PROTO_STATE_VERSION 1
#define TNS_DEFAULT_SOCKET "/run/timens/timensd.sock"

enum tns_op {
        TNS_OP_HELLO,
        TNS_OP_CREATE,
        TNS_OP_DESTROY,
        TNS_OP_SET,
        TNS_OP_SHOW,
        TNS_OP_LIST,
        TNS_OP_EXPORT,
        TNS_OP_IMPORT,
        TNS_OP_STATS,
        TNS_OP_ADOPT,
        TNS_OP_ATTACH,
        TNS_OP_WAIT,
        _TNS_OP_MAX,
};

/* Error codes: stable strings on the wire, never renumbered or reworded. */
enum tns_err {
        TNS_ERR_INVALID_REQUEST, /* not JSON, not an object, bad id/version/op fields */
        TNS_ERR_UNSUPPORTED_VERSION, /* "version" is not one this server speaks */
        TNS_ERR_UNKNOWN_OP,
        TNS_ERR_INVALID_PARAMS, /* missing, unknown or wrongly typed parameter */
        TNS_ERR_TOO_LARGE, /* a request line over TNS_PROTO_MAX_REQUEST */
        TNS_ERR_PERMISSION_DENIED,
        TNS_ERR_NOT_FOUND,
        TNS_ERR_EXISTS,
        TNS_ERR_BUSY, /* destroy of a namespace with processes */
        TNS_ERR_BACKWARDS, /* set would move MONOTONIC/BOOTTIME back */
        TNS_ERR_OUT_OF_RANGE,
        TNS_ERR_LIMIT, /* a cap: namespaces, listeners, connections */
        TNS_ERR_UNSUPPORTED, /* destroy of a child; attach of what cannot be attached */
        TNS_ERR_BAD_FD, /* adopt without a seccomp listener fd */
        TNS_ERR_TIMEOUT,
        TNS_ERR_INTERNAL,
        _TNS_ERR_MAX,
};

/* What a peer may do, by its credentials (PROTOCOL.md, "Access"). */
enum tns_access {
        TNS_ACCESS_NONE,
        TNS_ACCESS_READ,
        TNS_ACCESS_WRITE,
        _TNS_ACCESS_MAX,
};

const char *tns_op_name(enum tns_op op);
int tns_op_from_name(const char *s); /* -EINVAL if unknown */
/* Ops that change state need TNS_ACCESS_WRITE; the others READ. */
bool tns_op_writes(enum tns_op op);
const char *tns_err_code(enum tns_err e);
int tns_err_from_code(const char *s);
const char *tns_access_name(enum tns_access a);
int tns_access_from_name(const char *s);
const char *tns_grant_name(enum tns_grant g);
int tns_grant_from_name(const char *s);
const char *tns_origin_name(enum tns_origin o);
int tns_origin_from_name(const char *s);

struct tns_proto_error {
        enum tns_err code;
        char message[256];
};

_printf_(3, 4) int tns_proto_error_set(struct tns_proto_error *e, enum tns_err code, const char *fmt, ...);

enum tns_freeze {
        TNS_FREEZE_KEEP, /* "freeze" absent */
        TNS_FREEZE_ON,
        TNS_FREEZE_OFF,
};

/* A request, flat: which fields an op takes is in PROTOCOL.md and in the
 * op table of timens-proto.c. */
struct tns_request {
        int64_t id; /* -1 if the line had none usable */
        enum tns_op op;
        const char *name; /* create/adopt/attach/import: the new name; else the target */
        uint64_t ns_id; /* the target by id (0: by name) */
        struct tns_clock_arg clocks[TNS_CLASS_MAX];
        bool force, allow_backwards, join;
        bool shared; /* create/import/adopt/attach: others may join it */
        enum tns_grant grant;
        int64_t pid; /* attach */
        bool no_tree; /* attach: "tree": false, the process alone */
        uint32_t timeout_ms; /* wait */
        bool has_state;
        struct tns_clock_state state; /* import */
        /* create/adopt/set: "rate" and "freeze" per class (0, KEEP: none
         * given), MONOTONIC and BOOTTIME alike: one value for every
         * clock, or {"realtime": ..., "monotonic": ...}. */
        uint64_t rate_mult[TNS_CLASS_MAX];
        enum tns_freeze freeze[TNS_CLASS_MAX];
        json_object *root; /* owns name */
};

/* Parses one request line (without its newline). On failure returns
 * -EINVAL and fills *ret_error; ret->id is then the line's id or -1.
 * Always call tns_request_done() afterwards. */
int tns_request_parse(const char *text, size_t len, struct tns_request *ret, struct tns_proto_error *ret_error);
void tns_request_done(struct tns_request *r);
/* Whether it gives a rate or a freeze for some class. */
bool tns_request_has_rate(const struct tns_request *r);
/* The rate, or the freeze, of the classes in mask (bit 1 << class). */
void tns_request_set_rate(struct tns_request *r, unsigned mask, uint64_t mult);
void tns_request_set_freeze(struct tns_request *r, unsigned mask, enum tns_freeze f);
/* The client side: a request as JSON. */
int tns_request_to_json(const struct tns_request *r, json_object **ret);

/* A message as one line: compact JSON and '\n'. *ret is malloc()ed. */
int tns_message_format(json_object *o, char **ret, size_t *ret_len);
/* {"id":N,"result":R} (R taken) and {"id":N,"error":{...}}; id < 0 gives
 * "id": null. */
int tns_reply_result(int64_t id, json_object *result, json_object **ret);
int tns_reply_error(int64_t id, const struct tns_proto_error *e, json_object **ret);
/* Returns 1 and *ret_result (a new reference) for a result, 0 and
 * *ret_error for an error reply, -EBADMSG for anything else. */
int tns_reply_parse(const char *text, size_t len, int64_t *ret_id, json_object **ret_result,
                    struct tns_proto_error *ret_error);

/* Results. */
struct tns_hello {
        char server[32];
        char version[32];
        unsigned protocol;
        enum tns_access access; /* what the asking peer may do */
        uint64_t max_request, max_reply;
        uint64_t ops; /* bit 1 << op for each op the server implements */
};

int tns_hello_to_json(const struct tns_hello *h, json_object **ret);
int tns_hello_from_json(json_object *o, struct tns_hello *ret);

struct tns_ns_view {
        uint64_t id, parent_id;
        char name[TNS_NS_NAME_MAX + 1]; /* "" if none */
        enum tns_origin origin;
        enum tns_grant grant;
        unsigned owner; /* the uid that made it */
        bool shared; /* others may join it */
        int64_t offset_ns[TNS_CLASS_MAX];
        int64_t now_ns[TNS_CLASS_MAX]; /* the namespace's clocks when the reply was made */
        /* The clock reads anchor_ns + rate x (host - anchor_host_ns): where
         * it was anchored at its last change of rate (0 and the offset for
         * a clock that never had one). */
        int64_t anchor_host_ns[TNS_CLASS_MAX], anchor_ns[TNS_CLASS_MAX];
        unsigned listeners, pinned, children;
        bool live;
        uint64_t calls, failures, sets;
        int64_t created_realtime_ns;
        uint64_t rate_mult[TNS_CLASS_MAX]; /* the rate it runs at now (TNS_RATE_ONE = 1; 0 frozen) */
        uint64_t run_mult[TNS_CLASS_MAX]; /* the rate it runs at when not frozen */
        bool rate_capable;
        unsigned depth; /* 0 for a root */
        uint64_t kernel_ns; /* its kernel time namespace's inode, 0 if none */
        bool kernel_offsets_known;
        int64_t kernel_offset_ns[TNS_CLASS_MAX]; /* monotonic and boottime: the kernel's */
        bool has_processes; /* show: the list below is filled */
        unsigned n_processes; /* how many there are */
        pid_t processes[TNS_PROTO_MAX_PROCESSES]; /* the first ones */
};

int tns_ns_view_to_json(const struct tns_ns_view *v, json_object **ret);
int tns_ns_view_from_json(json_object *o, struct tns_ns_view *ret);

int tns_clock_state_to_json(const struct tns_clock_state *st, json_object **ret);
int tns_clock_state_from_json(json_object *o, struct tns_clock_state *ret, struct tns_proto_error *ret_error);

struct tns_server_stats {
        uint64_t connections; /* accepted since start */
        uint64_t connections_now;
        uint64_t rejected; /* refused at the connection cap */
        uint64_t requests;
        uint64_t errors; /* error replies */
        uint64_t uptime_ns;
};

struct tns_stats_view {
        struct tns_supervisor_stats sup;
        struct tns_server_stats server;
};

int tns_stats_to_json(const struct tns_stats_view *st, json_object **ret);
int tns_stats_from_json(json_object *o, struct tns_stats_view *ret);
