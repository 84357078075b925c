/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "clocks.h"
#include "rate.h"
#include "syscall-table.h"
#include "timens-proto.h"

/* Parameter bits: which keys of "params" an op takes. */
enum {
        PARAM_NAME = 1U << 0,
        PARAM_ID = 1U << 1,
        PARAM_OFFSETS = 1U << 2,
        PARAM_FORCE = 1U << 3,
        PARAM_ALLOW_BACKWARDS = 1U << 4,
        PARAM_GRANT = 1U << 5,
        PARAM_JOIN = 1U << 6,
        PARAM_PID = 1U << 7,
        PARAM_TIMEOUT = 1U << 8,
        PARAM_STATE = 1U << 9,
        PARAM_TREE = 1U << 10,
        PARAM_SHARED = 1U << 11,
        PARAM_RATE = 1U << 12,
        PARAM_FREEZE = 1U << 13,
        PARAM_TARGET = PARAM_NAME | PARAM_ID,
};

static const struct op_def {
        const char *name;
        bool writes;
        bool target; /* names an existing namespace: exactly one of name, id */
        unsigned allowed; /* params it takes */
        unsigned required; /* params it needs */
} op_defs[_TNS_OP_MAX] = {
        [TNS_OP_HELLO] = {"hello", false, false, 0, 0},
        [TNS_OP_CREATE] = {"create", true, false,
                           PARAM_NAME | PARAM_OFFSETS | PARAM_GRANT | PARAM_SHARED | PARAM_RATE | PARAM_FREEZE,
                           PARAM_NAME},
        [TNS_OP_DESTROY] = {"destroy", true, true, PARAM_TARGET | PARAM_FORCE, 0},
        [TNS_OP_SET] = {"set", true, true,
                        PARAM_TARGET | PARAM_OFFSETS | PARAM_ALLOW_BACKWARDS | PARAM_RATE | PARAM_FREEZE, 0},
        [TNS_OP_SHOW] = {"show", false, true, PARAM_TARGET, 0},
        [TNS_OP_LIST] = {"list", false, false, 0, 0},
        [TNS_OP_EXPORT] = {"export", false, true, PARAM_TARGET, 0},
        [TNS_OP_IMPORT] = {"import", true, false, PARAM_NAME | PARAM_GRANT | PARAM_STATE | PARAM_SHARED, PARAM_STATE},
        [TNS_OP_STATS] = {"stats", false, false, 0, 0},
        [TNS_OP_ADOPT] = {"adopt", true, false,
                          PARAM_NAME | PARAM_OFFSETS | PARAM_GRANT | PARAM_JOIN | PARAM_SHARED | PARAM_RATE |
                                  PARAM_FREEZE,
                          0},
        [TNS_OP_ATTACH] = {"attach", true, false,
                           PARAM_NAME | PARAM_ID | PARAM_OFFSETS | PARAM_GRANT | PARAM_JOIN | PARAM_PID | PARAM_TREE |
                                   PARAM_SHARED | PARAM_RATE | PARAM_FREEZE,
                           PARAM_PID},
        [TNS_OP_WAIT] = {"wait", false, true, PARAM_TARGET | PARAM_TIMEOUT, 0},
};

static const char *const err_codes[_TNS_ERR_MAX] = {
        [TNS_ERR_INVALID_REQUEST] = "invalid-request",
        [TNS_ERR_UNSUPPORTED_VERSION] = "unsupported-version",
        [TNS_ERR_UNKNOWN_OP] = "unknown-op",
        [TNS_ERR_INVALID_PARAMS] = "invalid-params",
        [TNS_ERR_TOO_LARGE] = "message-too-large",
        [TNS_ERR_PERMISSION_DENIED] = "permission-denied",
        [TNS_ERR_NOT_FOUND] = "not-found",
        [TNS_ERR_EXISTS] = "exists",
        [TNS_ERR_BUSY] = "busy",
        [TNS_ERR_BACKWARDS] = "backwards",
        [TNS_ERR_OUT_OF_RANGE] = "out-of-range",
        [TNS_ERR_LIMIT] = "limit",
        [TNS_ERR_UNSUPPORTED] = "unsupported",
        [TNS_ERR_BAD_FD] = "bad-fd",
        [TNS_ERR_TIMEOUT] = "timeout",
        [TNS_ERR_INTERNAL] = "internal",
};

static const char *const access_names[_TNS_ACCESS_MAX] = {"none", "read", "write"};
static const char *const grant_names[_TNS_GRANT_MAX] = {"none", "read", "full"};
static const char *const origin_names[_TNS_ORIGIN_MAX] = {"create", "run", "import", "unshare", "detached"};

static int lookup(const char *const *names, size_t n, const char *s) {
        for (size_t i = 0; s && i < n; i++)
                if (names[i] && strcmp(names[i], s) == 0)
                        return (int) i;
        return -EINVAL;
}

const char *tns_op_name(enum tns_op op) {
        return (unsigned) op < _TNS_OP_MAX ? op_defs[op].name : NULL;
}

int tns_op_from_name(const char *s) {
        for (int i = 0; s && i < _TNS_OP_MAX; i++)
                if (strcmp(op_defs[i].name, s) == 0)
                        return i;
        return -EINVAL;
}

bool tns_op_writes(enum tns_op op) {
        return (unsigned) op < _TNS_OP_MAX && op_defs[op].writes;
}

const char *tns_err_code(enum tns_err e) {
        return (unsigned) e < _TNS_ERR_MAX ? err_codes[e] : "internal";
}

int tns_err_from_code(const char *s) {
        return lookup(err_codes, _TNS_ERR_MAX, s);
}

const char *tns_access_name(enum tns_access a) {
        return (unsigned) a < _TNS_ACCESS_MAX ? access_names[a] : NULL;
}

int tns_access_from_name(const char *s) {
        return lookup(access_names, _TNS_ACCESS_MAX, s);
}

const char *tns_grant_name(enum tns_grant g) {
        return (unsigned) g < _TNS_GRANT_MAX ? grant_names[g] : NULL;
}

int tns_grant_from_name(const char *s) {
        return lookup(grant_names, _TNS_GRANT_MAX, s);
}

const char *tns_origin_name(enum tns_origin o) {
        return (unsigned) o < _TNS_ORIGIN_MAX ? origin_names[o] : NULL;
}

int tns_origin_from_name(const char *s) {
        return lookup(origin_names, _TNS_ORIGIN_MAX, s);
}

int tns_proto_error_set(struct tns_proto_error *e, enum tns_err code, const char *fmt, ...) {
        va_list ap;

        e->code = code;
        va_start(ap, fmt);
        vsnprintf(e->message, sizeof(e->message), fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* ---- JSON value helpers ---- */

/* An integer that fits int64: json-c keeps larger ones as uint64 and
 * would clamp them silently. */
static int get_int64(json_object *v, int64_t *ret) {
        int64_t x;

        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        x = json_object_get_int64(v);
        if (x == INT64_MAX && json_object_get_uint64(v) != (uint64_t) INT64_MAX)
                return -ERANGE;
        *ret = x;
        return 0;
}

/* A string without NUL bytes inside, at most max bytes. */
static int get_string(json_object *v, size_t max, const char **ret) {
        const char *s;

        if (!json_object_is_type(v, json_type_string))
                return -EINVAL;
        s = json_object_get_string(v);
        if ((size_t) json_object_get_string_len(v) != strlen(s) || strlen(s) > max)
                return -EINVAL;
        *ret = s;
        return 0;
}

static int add_int64(json_object *o, const char *key, int64_t v) {
        json_object *x = json_object_new_int64(v);

        if (!x || json_object_object_add(o, key, x) < 0) {
                json_object_put(x);
                return -ENOMEM;
        }
        return 0;
}

static int add_uint64(json_object *o, const char *key, uint64_t v) {
        json_object *x = json_object_new_uint64(v);

        if (!x || json_object_object_add(o, key, x) < 0) {
                json_object_put(x);
                return -ENOMEM;
        }
        return 0;
}

static int add_string(json_object *o, const char *key, const char *s) {
        json_object *x = s ? json_object_new_string(s) : NULL;

        if (!s)
                return json_object_object_add(o, key, NULL) < 0 ? -ENOMEM : 0;
        if (!x || json_object_object_add(o, key, x) < 0) {
                json_object_put(x);
                return -ENOMEM;
        }
        return 0;
}

static int add_bool(json_object *o, const char *key, bool b) {
        json_object *x = json_object_new_boolean(b);

        if (!x || json_object_object_add(o, key, x) < 0) {
                json_object_put(x);
                return -ENOMEM;
        }
        return 0;
}

/* Adds x (taken) under key. */
static int add_object(json_object *o, const char *key, json_object *x) {
        if (!x)
                return -ENOMEM;
        if (json_object_object_add(o, key, x) < 0) {
                json_object_put(x);
                return -ENOMEM;
        }
        return 0;
}

static int read_int64(json_object *o, const char *key, int64_t *ret) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) ? get_int64(v, ret) : -ENOENT;
}

static int read_uint64(json_object *o, const char *key, uint64_t *ret) {
        int64_t v;
        int r;

        r = read_int64(o, key, &v);
        if (r < 0)
                return r;
        if (v < 0)
                return -ERANGE;
        *ret = (uint64_t) v;
        return 0;
}

static int read_unsigned(json_object *o, const char *key, unsigned *ret) {
        uint64_t v;
        int r;

        r = read_uint64(o, key, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (unsigned) v;
        return 0;
}

static int read_bool(json_object *o, const char *key, bool *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return -ENOENT;
        if (!json_object_is_type(v, json_type_boolean))
                return -EINVAL;
        *ret = json_object_get_boolean(v);
        return 0;
}

static int read_string(json_object *o, const char *key, size_t max, const char **ret) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) ? get_string(v, max, ret) : -ENOENT;
}

/* ---- requests ---- */

static int parse_name(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        const char *s;

        if (get_string(v, TNS_NS_NAME_MAX, &s) < 0 || !tns_ns_name_valid(s))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "params.name: expected " TNS_NS_NAME_RULE);
        r->name = s;
        return 0;
}

static int parse_ns_id(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        int64_t id;

        if (get_int64(v, &id) < 0 || id <= 0)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "params.id: expected a positive integer");
        r->ns_id = (uint64_t) id;
        return 0;
}

static int parse_clock(enum tns_clock_class c, json_object *v, struct tns_clock_arg *ret, struct tns_proto_error *e) {
        const char *text;
        int64_t ns;
        int k;

        if (json_object_is_type(v, json_type_int)) {
                if (get_int64(v, &ns) < 0)
                        return tns_proto_error_set(e, TNS_ERR_OUT_OF_RANGE,
                                                   "params.offsets.%s: beyond 64-bit nanoseconds", tns_class_name(c));
                *ret = (struct tns_clock_arg){true, {TNS_OFFSET_RELATIVE, ns}};
                return 0;
        }
        if (get_string(v, 128, &text) < 0)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                           "params.offsets.%s: expected a string or integer nanoseconds",
                                           tns_class_name(c));
        k = tns_offset_parse(text, c == TNS_CLASS_REALTIME, &ret->spec);
        if (k == -ERANGE)
                return tns_proto_error_set(e, TNS_ERR_OUT_OF_RANGE, "params.offsets.%s: '%s' is out of range",
                                           tns_class_name(c), text);
        if (k < 0)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "params.offsets.%s: '%s' is not %s%s",
                                           tns_class_name(c), text, tns_offset_forms_relative,
                                           c == TNS_CLASS_REALTIME ? " or a date" : "");
        ret->set = true;
        return 0;
}

static int parse_offsets(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        struct json_object_iterator it, end;
        int k;

        if (!json_object_is_type(v, json_type_object))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "params.offsets: expected an object");
        it = json_object_iter_begin(v);
        end = json_object_iter_end(v);
        for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
                const char *key = json_object_iter_peek_name(&it);
                int c = -1;

                for (int i = 0; i < TNS_CLASS_MAX; i++)
                        if (strcmp(key, tns_class_name(i)) == 0)
                                c = i;
                if (c < 0)
                        return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                                   "params.offsets: unknown clock '%.64s' (monotonic, boottime, "
                                                   "realtime)",
                                                   key);
                k = parse_clock(c, json_object_iter_peek_value(&it), &r->clocks[c], e);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int parse_bool_field(json_object *v, bool *ret, const char *key, struct tns_proto_error *e) {
        if (!json_object_is_type(v, json_type_boolean))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "params.%s: expected true or false", key);
        *ret = json_object_get_boolean(v);
        return 0;
}

static int parse_force(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        return parse_bool_field(v, &r->force, "force", e);
}

static int parse_allow_backwards(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        return parse_bool_field(v, &r->allow_backwards, "allow_backwards", e);
}

static int parse_join(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        return parse_bool_field(v, &r->join, "join", e);
}

static int parse_shared(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        return parse_bool_field(v, &r->shared, "shared", e);
}

/* One rate, for the classes in mask; where names the field. */
static int parse_one_rate(json_object *v, unsigned mask, const char *where, struct tns_request *r,
                          struct tns_proto_error *e) {
        uint64_t mult = 0;
        const char *s;
        int k;

        if (get_string(v, 64, &s) < 0)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                           "%s: expected a string, a positive decimal or fraction (\"2\", "
                                           "\"0.5\", \"1/60\")",
                                           where);
        k = tns_rate_parse(s, &mult);
        if (k == -ERANGE)
                return tns_proto_error_set(e, TNS_ERR_OUT_OF_RANGE,
                                           "%s: '%s' is out of range (1/1000000 to " TNS_RATE_MAX_TEXT ")", where, s);
        if (k < 0)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                           "%s: '%s' is not a positive decimal or fraction (2, 0.5, 1440, "
                                           "1/60); a clock that stands still is \"freeze\": true",
                                           where, s);
        tns_request_set_rate(r, mask, mult);
        return 0;
}

static int parse_one_freeze(json_object *v, unsigned mask, const char *where, struct tns_request *r,
                            struct tns_proto_error *e) {
        if (!json_object_is_type(v, json_type_boolean))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "%s: expected true or false", where);
        tns_request_set_freeze(r, mask, json_object_get_boolean(v) ? TNS_FREEZE_ON : TNS_FREEZE_OFF);
        return 0;
}

/* "rate" and "freeze": one value for every clock, or an object of one
 * per class: {"realtime": V, "monotonic": V} (MONOTONIC with BOOTTIME). */
static int parse_per_class(json_object *v, const char *key, struct tns_request *r, struct tns_proto_error *e,
                           int (*one)(json_object *, unsigned, const char *, struct tns_request *,
                                      struct tns_proto_error *)) {
        char where[64];

        snprintf(where, sizeof(where), "params.%s", key);
        if (!json_object_is_type(v, json_type_object))
                return one(v, TNS_RATE_CLASSES_ALL, where, r, e);
        if (json_object_object_length(v) == 0)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                           "params.%s: an empty object; give \"realtime\" or \"monotonic\"", key);
        json_object_object_foreach(v, name, x) {
                unsigned mask;

                if (tns_rate_classes_parse(name, strlen(name), &mask) < 0)
                        return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                                   "params.%s: '%.32s' is not a class: \"realtime\" or \"monotonic\" "
                                                   "(MONOTONIC and BOOTTIME run at one rate)",
                                                   key, name);
                snprintf(where, sizeof(where), "params.%s.%s", key, name);
                if (one(x, mask, where, r, e) < 0)
                        return -EINVAL;
        }
        return 0;
}

static int parse_rate(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        return parse_per_class(v, "rate", r, e, parse_one_rate);
}

static int parse_freeze(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        return parse_per_class(v, "freeze", r, e, parse_one_freeze);
}

static int parse_tree(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        bool tree = true;
        int k;

        k = parse_bool_field(v, &tree, "tree", e);
        if (k >= 0)
                r->no_tree = !tree;
        return k;
}

static int parse_grant(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        const char *s;
        int g;

        if (get_string(v, 16, &s) < 0 || (g = tns_grant_from_name(s)) < 0)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                           "params.grant: expected \"none\", \"read\" or \"full\"");
        r->grant = g;
        return 0;
}

static int parse_pid(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        if (get_int64(v, &r->pid) < 0 || r->pid <= 0 || r->pid > INT32_MAX)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "params.pid: expected a process id");
        return 0;
}

static int parse_timeout(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        int64_t ms;

        if (get_int64(v, &ms) < 0 || ms < 0 || ms > TNS_PROTO_WAIT_MAX_MS)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                           "params.timeout_ms: expected milliseconds, 0 to %d", TNS_PROTO_WAIT_MAX_MS);
        r->timeout_ms = (uint32_t) ms;
        return 0;
}

static int parse_state(json_object *v, struct tns_request *r, struct tns_proto_error *e) {
        int k;

        k = tns_clock_state_from_json(v, &r->state, e);
        if (k < 0)
                return k;
        r->has_state = true;
        return 0;
}

static const struct param_def {
        const char *key;
        unsigned bit;
        int (*parse)(json_object *v, struct tns_request *r, struct tns_proto_error *e);
} param_defs[] = {
        {"name", PARAM_NAME, parse_name},
        {"id", PARAM_ID, parse_ns_id},
        {"offsets", PARAM_OFFSETS, parse_offsets},
        {"force", PARAM_FORCE, parse_force},
        {"allow_backwards", PARAM_ALLOW_BACKWARDS, parse_allow_backwards},
        {"grant", PARAM_GRANT, parse_grant},
        {"join", PARAM_JOIN, parse_join},
        {"pid", PARAM_PID, parse_pid},
        {"timeout_ms", PARAM_TIMEOUT, parse_timeout},
        {"state", PARAM_STATE, parse_state},
        {"tree", PARAM_TREE, parse_tree},
        {"shared", PARAM_SHARED, parse_shared},
        {"rate", PARAM_RATE, parse_rate},
        {"freeze", PARAM_FREEZE, parse_freeze},
};

static const struct param_def *param_by_key(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(param_defs); i++)
                if (strcmp(param_defs[i].key, key) == 0)
                        return &param_defs[i];
        return NULL;
}

static const char *param_key(unsigned bit) {
        for (size_t i = 0; i < ELEMENTSOF(param_defs); i++)
                if (param_defs[i].bit == bit)
                        return param_defs[i].key;
        return "?";
}

/* Rules across fields, after every field parsed. */
static int check_params(const struct op_def *d, unsigned seen, struct tns_request *r, struct tns_proto_error *e) {
        unsigned missing = d->required & ~seen;
        bool any_clock = false;

        if (missing)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "params.%s: required by %s",
                                           param_key(missing & -missing), d->name);
        if (d->target && (seen & PARAM_TARGET) != PARAM_NAME && (seen & PARAM_TARGET) != PARAM_ID)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                           "params: %s needs exactly one of \"name\" and \"id\"", d->name);
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                any_clock |= r->clocks[c].set;
        if (r->op == TNS_OP_SET && !any_clock && !(seen & (PARAM_RATE | PARAM_FREEZE)))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                           "params: set needs at least one clock in \"offsets\", a \"rate\" or "
                                           "\"freeze\"");
        /* attach joins by id too: the namespace a client looked at, not
         * one made under its name since. */
        if (r->join && ((seen & PARAM_TARGET) == 0 || (seen & PARAM_TARGET) == PARAM_TARGET || any_clock ||
                        (seen & (PARAM_GRANT | PARAM_RATE | PARAM_FREEZE)) || r->shared))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                           "params: join needs \"name\" (or, for attach, \"id\") and takes no "
                                           "\"offsets\", \"grant\", \"rate\", \"freeze\" or \"shared\"");
        if (!r->join && !d->target && (seen & PARAM_ID))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "params: \"id\" only with \"join\"");
        if (r->op == TNS_OP_WAIT && !(seen & PARAM_TIMEOUT))
                r->timeout_ms = TNS_PROTO_WAIT_DEFAULT_MS;
        return 0;
}

static int parse_params(json_object *params, struct tns_request *r, struct tns_proto_error *e) {
        const struct op_def *d = &op_defs[r->op];
        struct json_object_iterator it, end;
        unsigned seen = 0;
        int k;

        if (!params)
                return check_params(d, seen, r, e);
        if (!json_object_is_type(params, json_type_object))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "params: expected an object");
        it = json_object_iter_begin(params);
        end = json_object_iter_end(params);
        for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
                const char *key = json_object_iter_peek_name(&it);
                const struct param_def *p = param_by_key(key);

                if (!p || !(d->allowed & p->bit))
                        return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "params.%.64s: not a parameter of %s",
                                                   key, d->name);
                k = p->parse(json_object_iter_peek_value(&it), r, e);
                if (k < 0)
                        return k;
                seen |= p->bit;
        }
        return check_params(d, seen, r, e);
}

static json_object *parse_json(const char *text, size_t len, struct tns_proto_error *e) {
        json_tokener *tok;
        json_object *o;
        size_t end;

        if (len > TNS_PROTO_MAX_REQUEST) {
                tns_proto_error_set(e, TNS_ERR_TOO_LARGE, "request over %d bytes", TNS_PROTO_MAX_REQUEST);
                return NULL;
        }
        tok = json_tokener_new_ex(TNS_PROTO_MAX_DEPTH);
        if (!tok) {
                tns_proto_error_set(e, TNS_ERR_INTERNAL, "out of memory");
                return NULL;
        }
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, text, (int) len);
        if (!o || json_tokener_get_error(tok) != json_tokener_success) {
                tns_proto_error_set(e, TNS_ERR_INVALID_REQUEST, "not JSON: %s",
                                    json_tokener_get_error(tok) == json_tokener_continue
                                            ? "incomplete"
                                            : json_tokener_error_desc(json_tokener_get_error(tok)));
                json_object_put(o);
                o = NULL;
        } else {
                for (end = json_tokener_get_parse_end(tok); end < len && strchr(" \t\r", text[end]); end++)
                        ;
                if (end < len) {
                        tns_proto_error_set(e, TNS_ERR_INVALID_REQUEST, "not JSON: data after the object");
                        json_object_put(o);
                        o = NULL;
                }
        }
        json_tokener_free(tok);
        return o;
}

static int check_envelope_keys(json_object *root, struct tns_proto_error *e) {
        static const char *const keys[] = {"version", "id", "op", "params"};
        struct json_object_iterator it = json_object_iter_begin(root), end = json_object_iter_end(root);

        for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
                const char *key = json_object_iter_peek_name(&it);
                bool known = false;

                for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                        known |= strcmp(key, keys[i]) == 0;
                if (!known)
                        return tns_proto_error_set(e, TNS_ERR_INVALID_REQUEST, "unknown field '%.64s'", key);
        }
        return 0;
}

static int parse_envelope(json_object *root, struct tns_request *r, struct tns_proto_error *e) {
        int64_t version;
        const char *op;
        int k;

        if (!json_object_is_type(root, json_type_object))
                return tns_proto_error_set(e, TNS_ERR_INVALID_REQUEST, "a request is a JSON object");
        k = read_int64(root, "id", &r->id);
        if (k < 0 || r->id < 0) {
                r->id = -1;
                return tns_proto_error_set(e, TNS_ERR_INVALID_REQUEST, "id: expected an integer >= 0");
        }
        k = read_int64(root, "version", &version);
        if (k < 0)
                return tns_proto_error_set(e, TNS_ERR_INVALID_REQUEST, "version: expected an integer");
        if (version != TNS_PROTO_VERSION)
                return tns_proto_error_set(e, TNS_ERR_UNSUPPORTED_VERSION,
                                           "protocol version %" PRId64 " is not supported; this server speaks %d",
                                           version, TNS_PROTO_VERSION);
        k = check_envelope_keys(root, e);
        if (k < 0)
                return k;
        if (read_string(root, "op", 64, &op) < 0)
                return tns_proto_error_set(e, TNS_ERR_INVALID_REQUEST, "op: expected a string");
        k = tns_op_from_name(op);
        if (k < 0)
                return tns_proto_error_set(e, TNS_ERR_UNKNOWN_OP, "unknown op '%.64s'", op);
        r->op = k;
        return 0;
}

int tns_request_parse(const char *text, size_t len, struct tns_request *ret, struct tns_proto_error *ret_error) {
        json_object *params = NULL;
        int k;

        *ret = (struct tns_request){.id = -1};
        ret->root = parse_json(text, len, ret_error);
        if (!ret->root)
                return -EINVAL;
        k = parse_envelope(ret->root, ret, ret_error);
        if (k < 0)
                return k;
        (void) json_object_object_get_ex(ret->root, "params", &params);
        return parse_params(params, ret, ret_error);
}

void tns_request_done(struct tns_request *r) {
        json_object_put(r->root);
        r->root = NULL;
        r->name = NULL;
}

/* Whether the request gives some class a rate, or a freeze. */
static bool any_rate(const struct tns_request *r) {
        return r->rate_mult[0] || r->rate_mult[1] || r->rate_mult[2];
}

static bool any_freeze(const struct tns_request *r) {
        return r->freeze[0] != TNS_FREEZE_KEEP || r->freeze[1] != TNS_FREEZE_KEEP || r->freeze[2] != TNS_FREEZE_KEEP;
}

bool tns_request_has_rate(const struct tns_request *r) {
        return any_rate(r) || any_freeze(r);
}

void tns_request_set_rate(struct tns_request *r, unsigned mask, uint64_t mult) {
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (mask & (1U << c))
                        r->rate_mult[c] = mult;
}

void tns_request_set_freeze(struct tns_request *r, unsigned mask, enum tns_freeze f) {
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (mask & (1U << c))
                        r->freeze[c] = f;
}

/* Per class: the value of every class when they are alike, else an
 * object of the classes given (realtime, monotonic). */
static json_object *rate_param_to_json(const struct tns_request *r) {
        static const enum tns_clock_class named[] = {TNS_CLASS_REALTIME, TNS_CLASS_MONOTONIC};
        _cleanup_json_ json_object *o = NULL;
        char buf[64];

        if (r->rate_mult[0] == r->rate_mult[1] && r->rate_mult[1] == r->rate_mult[2]) {
                /* Exact: the multiplier as a fraction of 2^32. */
                snprintf(buf, sizeof(buf), "%" PRIu64 "/%" PRIu64, r->rate_mult[0], TNS_RATE_ONE);
                return json_object_new_string(buf);
        }
        o = json_object_new_object();
        for (size_t i = 0; o && i < sizeof(named) / sizeof(named[0]); i++) {
                if (!r->rate_mult[named[i]])
                        continue;
                snprintf(buf, sizeof(buf), "%" PRIu64 "/%" PRIu64, r->rate_mult[named[i]], TNS_RATE_ONE);
                if (add_string(o, tns_class_name(named[i]), buf) < 0)
                        return NULL;
        }
        return TAKE_PTR(o);
}

static json_object *freeze_param_to_json(const struct tns_request *r) {
        static const enum tns_clock_class named[] = {TNS_CLASS_REALTIME, TNS_CLASS_MONOTONIC};
        _cleanup_json_ json_object *o = NULL;

        if (r->freeze[0] == r->freeze[1] && r->freeze[1] == r->freeze[2])
                return json_object_new_boolean(r->freeze[0] == TNS_FREEZE_ON);
        o = json_object_new_object();
        for (size_t i = 0; o && i < sizeof(named) / sizeof(named[0]); i++)
                if (r->freeze[named[i]] != TNS_FREEZE_KEEP &&
                    add_bool(o, tns_class_name(named[i]), r->freeze[named[i]] == TNS_FREEZE_ON) < 0)
                        return NULL;
        return TAKE_PTR(o);
}

/* A relative offset as the canonical text ("+1d"), a date as "@S.N": both
 * read back exactly, and the date in no time zone. */
static json_object *clock_arg_to_json(const struct tns_clock_arg *a) {
        char buf[64];

        if (a->spec.kind == TNS_OFFSET_ABSOLUTE)
                snprintf(buf, sizeof(buf), "@%" PRId64 ".%09" PRId64, a->spec.ns / 1000000000, a->spec.ns % 1000000000);
        else if (tns_offset_format(a->spec.ns, buf, sizeof(buf)) < 0)
                return json_object_new_int64(a->spec.ns);
        return json_object_new_string(buf);
}

static int offsets_to_json(const struct tns_request *r, json_object *params) {
        _cleanup_json_ json_object *o = json_object_new_object();
        bool any = false;

        if (!o)
                return -ENOMEM;
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                if (!r->clocks[c].set)
                        continue;
                if (add_object(o, tns_class_name(c), clock_arg_to_json(&r->clocks[c])) < 0)
                        return -ENOMEM;
                any = true;
        }
        return any ? add_object(params, "offsets", TAKE_PTR(o)) : 0;
}

static int params_to_json(const struct tns_request *r, json_object *p) {
        const struct op_def *d = &op_defs[r->op];
        json_object *state = NULL;
        int k = 0;

        if (r->name && (d->allowed & PARAM_NAME))
                k = add_string(p, "name", r->name);
        if (k >= 0 && r->ns_id && (d->allowed & PARAM_ID))
                k = add_uint64(p, "id", r->ns_id);
        if (k >= 0 && (d->allowed & PARAM_OFFSETS))
                k = offsets_to_json(r, p);
        if (k >= 0 && r->force && (d->allowed & PARAM_FORCE))
                k = add_bool(p, "force", true);
        if (k >= 0 && r->allow_backwards && (d->allowed & PARAM_ALLOW_BACKWARDS))
                k = add_bool(p, "allow_backwards", true);
        if (k >= 0 && r->join && (d->allowed & PARAM_JOIN))
                k = add_bool(p, "join", true);
        if (k >= 0 && r->grant != TNS_GRANT_NONE && (d->allowed & PARAM_GRANT))
                k = add_string(p, "grant", tns_grant_name(r->grant));
        if (k >= 0 && r->pid && (d->allowed & PARAM_PID))
                k = add_int64(p, "pid", r->pid);
        if (k >= 0 && r->shared && (d->allowed & PARAM_SHARED))
                k = add_bool(p, "shared", true);
        if (k >= 0 && any_rate(r) && (d->allowed & PARAM_RATE))
                k = add_object(p, "rate", rate_param_to_json(r));
        if (k >= 0 && any_freeze(r) && (d->allowed & PARAM_FREEZE))
                k = add_object(p, "freeze", freeze_param_to_json(r));
        if (k >= 0 && r->no_tree && (d->allowed & PARAM_TREE))
                k = add_bool(p, "tree", false);
        if (k >= 0 && (d->allowed & PARAM_TIMEOUT))
                k = add_int64(p, "timeout_ms", r->timeout_ms);
        if (k >= 0 && r->has_state && (d->allowed & PARAM_STATE)) {
                k = tns_clock_state_to_json(&r->state, &state);
                if (k >= 0)
                        k = add_object(p, "state", state);
        }
        return k;
}

int tns_request_to_json(const struct tns_request *r, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object(), *p = json_object_new_object();
        int k;

        if (!o || !p || (unsigned) r->op >= _TNS_OP_MAX)
                return !o || !p ? -ENOMEM : -EINVAL;
        k = add_int64(o, "version", TNS_PROTO_VERSION);
        if (k >= 0)
                k = add_int64(o, "id", r->id);
        if (k >= 0)
                k = add_string(o, "op", op_defs[r->op].name);
        if (k >= 0)
                k = params_to_json(r, p);
        if (k >= 0)
                k = add_object(o, "params", TAKE_PTR(p));
        if (k < 0)
                return k;
        *ret = TAKE_PTR(o);
        return 0;
}

/* ---- framing and replies ---- */

int tns_message_format(json_object *o, char **ret, size_t *ret_len) {
        const char *s;
        size_t len;
        char *buf;

        /* PLAIN escapes control characters: a newline never appears
         * inside a message, only after it. */
        s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
        if (!s)
                return -ENOMEM;
        buf = malloc(len + 2);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, s, len);
        buf[len] = '\n';
        buf[len + 1] = '\0';
        *ret = buf;
        *ret_len = len + 1;
        return 0;
}

static int reply_new(int64_t id, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        int k;

        if (!o)
                return -ENOMEM;
        if (id >= 0)
                k = add_int64(o, "id", id);
        else
                k = json_object_object_add(o, "id", NULL) < 0 ? -ENOMEM : 0;
        if (k < 0)
                return k;
        *ret = TAKE_PTR(o);
        return 0;
}

int tns_reply_result(int64_t id, json_object *result, json_object **ret) {
        _cleanup_json_ json_object *o = NULL, *res = result;
        int k;

        k = reply_new(id, &o);
        if (k < 0)
                return k;
        if (!res && !(res = json_object_new_object()))
                return -ENOMEM;
        k = add_object(o, "result", TAKE_PTR(res));
        if (k < 0)
                return k;
        *ret = TAKE_PTR(o);
        return 0;
}

int tns_reply_error(int64_t id, const struct tns_proto_error *e, json_object **ret) {
        _cleanup_json_ json_object *o = NULL, *err = json_object_new_object();
        int k;

        if (!err)
                return -ENOMEM;
        k = reply_new(id, &o);
        if (k >= 0)
                k = add_string(err, "code", tns_err_code(e->code));
        if (k >= 0)
                k = add_string(err, "message", e->message);
        if (k >= 0)
                k = add_object(o, "error", TAKE_PTR(err));
        if (k < 0)
                return k;
        *ret = TAKE_PTR(o);
        return 0;
}

static int parse_error_object(json_object *err, struct tns_proto_error *e) {
        const char *code, *message = "";
        int c;

        if (read_string(err, "code", 64, &code) < 0)
                return -EBADMSG;
        (void) read_string(err, "message", 4096, &message);
        c = tns_err_from_code(code);
        /* A code this client does not know yet reads as internal. */
        tns_proto_error_set(e, c < 0 ? TNS_ERR_INTERNAL : c, "%s", message);
        return 0;
}

int tns_reply_parse(const char *text, size_t len, int64_t *ret_id, json_object **ret_result,
                    struct tns_proto_error *ret_error) {
        _cleanup_json_ json_object *o = NULL;
        json_object *v, *id;
        json_tokener *tok;
        int64_t n = -1;

        tok = json_tokener_new_ex(64);
        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, text, (int) len);
        if (json_tokener_get_error(tok) != json_tokener_success)
                json_object_put(TAKE_PTR(o));
        json_tokener_free(tok);
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "id", &id))
                return -EBADMSG;
        if (id && get_int64(id, &n) < 0)
                return -EBADMSG;
        *ret_id = n;
        if (json_object_object_get_ex(o, "error", &v))
                return parse_error_object(v, ret_error) < 0 ? -EBADMSG : 0;
        if (!json_object_object_get_ex(o, "result", &v) || !json_object_is_type(v, json_type_object))
                return -EBADMSG;
        *ret_result = json_object_get(v);
        return 1;
}

/* ---- results ---- */

int tns_hello_to_json(const struct tns_hello *h, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object(), *ops = json_object_new_array();
        int k;

        if (!o || !ops)
                return -ENOMEM;
        for (int i = 0; i < _TNS_OP_MAX; i++)
                if ((h->ops & (UINT64_C(1) << i)) &&
                    json_object_array_add(ops, json_object_new_string(op_defs[i].name)) < 0)
                        return -ENOMEM;
        k = add_string(o, "server", h->server);
        if (k >= 0)
                k = add_string(o, "version", h->version);
        if (k >= 0)
                k = add_int64(o, "protocol", h->protocol);
        if (k >= 0)
                k = add_string(o, "access", tns_access_name(h->access));
        if (k >= 0)
                k = add_uint64(o, "max_request", h->max_request);
        if (k >= 0)
                k = add_uint64(o, "max_reply", h->max_reply);
        if (k >= 0)
                k = add_object(o, "capabilities", TAKE_PTR(ops));
        if (k < 0)
                return k;
        *ret = TAKE_PTR(o);
        return 0;
}

int tns_hello_from_json(json_object *o, struct tns_hello *ret) {
        struct tns_hello h = {};
        const char *server, *version, *access;
        json_object *caps;
        int a;

        if (read_string(o, "server", sizeof(h.server) - 1, &server) < 0 ||
            read_string(o, "version", sizeof(h.version) - 1, &version) < 0 ||
            read_unsigned(o, "protocol", &h.protocol) < 0 || read_string(o, "access", 16, &access) < 0 ||
            (a = tns_access_from_name(access)) < 0)
                return -EBADMSG;
        strcpy(h.server, server);
        strcpy(h.version, version);
        h.access = a;
        (void) read_uint64(o, "max_request", &h.max_request);
        (void) read_uint64(o, "max_reply", &h.max_reply);
        if (json_object_object_get_ex(o, "capabilities", &caps) && json_object_is_type(caps, json_type_array))
                for (size_t i = 0; i < json_object_array_length(caps); i++) {
                        int op = tns_op_from_name(json_object_get_string(json_object_array_get_idx(caps, i)));

                        if (op >= 0)
                                h.ops |= UINT64_C(1) << op;
                }
        *ret = h;
        return 0;
}

/* "rate": what it runs at when not frozen, as a decimal; "rate_mult":
 * exactly; "frozen". In each clock's object, and at the top the
 * REALTIME clock's (what a namespace with one rate for every clock runs
 * at). */
static int rate_to_json(json_object *o, uint64_t mult, uint64_t run_mult) {
        char buf[32];
        int k;

        if (tns_rate_format(run_mult ?: TNS_RATE_ONE, buf, sizeof(buf)) < 0)
                return -ENOBUFS;
        k = add_string(o, "rate", buf);
        if (k >= 0)
                k = add_uint64(o, "rate_mult", run_mult ?: TNS_RATE_ONE);
        if (k >= 0)
                k = add_bool(o, "frozen", mult == 0);
        return k;
}

static json_object *clocks_to_json(const struct tns_ns_view *v) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                _cleanup_json_ json_object *k = json_object_new_object();
                char text[64];

                if (!k || tns_offset_format(v->offset_ns[c], text, sizeof(text)) < 0 ||
                    add_int64(k, "offset_ns", v->offset_ns[c]) < 0 || add_string(k, "offset", text) < 0 ||
                    add_int64(k, "now_ns", v->now_ns[c]) < 0 ||
                    add_int64(k, "anchor_host_ns", v->anchor_host_ns[c]) < 0 ||
                    add_int64(k, "anchor_ns", v->anchor_ns[c]) < 0 ||
                    rate_to_json(k, v->rate_mult[c], v->run_mult[c]) < 0 ||
                    add_object(o, tns_class_name(c), TAKE_PTR(k)) < 0)
                        return NULL;
        }
        return TAKE_PTR(o);
}

static json_object *processes_to_json(const struct tns_ns_view *v) {
        _cleanup_json_ json_object *a = json_object_new_array();
        unsigned n = v->n_processes < TNS_PROTO_MAX_PROCESSES ? v->n_processes : TNS_PROTO_MAX_PROCESSES;

        if (!a)
                return NULL;
        for (unsigned i = 0; i < n; i++)
                if (json_object_array_add(a, json_object_new_int64(v->processes[i])) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

/* "kernel": {"ns": INODE, "monotonic_ns": N, "boottime_ns": N}, the
 * offsets only once known. */
static json_object *kernel_to_json(const struct tns_ns_view *v) {
        _cleanup_json_ json_object *k = json_object_new_object();

        if (!k || add_uint64(k, "ns", v->kernel_ns) < 0)
                return NULL;
        if (v->kernel_offsets_known && (add_int64(k, "monotonic_ns", v->kernel_offset_ns[TNS_CLASS_MONOTONIC]) < 0 ||
                                        add_int64(k, "boottime_ns", v->kernel_offset_ns[TNS_CLASS_BOOTTIME]) < 0))
                return NULL;
        return TAKE_PTR(k);
}

static int view_counters_to_json(const struct tns_ns_view *v, json_object *o) {
        int k;

        k = add_uint64(o, "listeners", v->listeners);
        if (k >= 0)
                k = add_uint64(o, "pinned", v->pinned);
        if (k >= 0)
                k = add_uint64(o, "children", v->children);
        if (k >= 0)
                k = add_bool(o, "live", v->live);
        if (k >= 0)
                k = add_uint64(o, "calls", v->calls);
        if (k >= 0)
                k = add_uint64(o, "failures", v->failures);
        if (k >= 0)
                k = add_uint64(o, "sets", v->sets);
        if (k >= 0)
                k = add_int64(o, "created_realtime_ns", v->created_realtime_ns);
        if (k >= 0)
                k = rate_to_json(o, v->rate_mult[TNS_CLASS_REALTIME], v->run_mult[TNS_CLASS_REALTIME]);
        if (k >= 0)
                k = add_bool(o, "rate_capable", v->rate_capable);
        if (k >= 0)
                k = add_uint64(o, "depth", v->depth);
        if (k >= 0 && v->kernel_ns)
                k = add_object(o, "kernel", kernel_to_json(v));
        if (k >= 0 && v->has_processes) {
                k = add_uint64(o, "n_processes", v->n_processes);
                if (k >= 0)
                        k = add_object(o, "processes", processes_to_json(v));
        }
        return k;
}

int tns_ns_view_to_json(const struct tns_ns_view *v, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        int k;

        if (!o)
                return -ENOMEM;
        k = add_uint64(o, "id", v->id);
        if (k >= 0)
                k = add_string(o, "name", v->name[0] ? v->name : NULL);
        if (k >= 0)
                k = v->parent_id ? add_uint64(o, "parent", v->parent_id) : add_string(o, "parent", NULL);
        if (k >= 0)
                k = add_string(o, "origin", tns_origin_name(v->origin));
        if (k >= 0)
                k = add_string(o, "grant", tns_grant_name(v->grant));
        if (k >= 0)
                k = add_uint64(o, "owner", v->owner);
        if (k >= 0)
                k = add_bool(o, "shared", v->shared);
        if (k >= 0)
                k = add_object(o, "clocks", clocks_to_json(v));
        if (k >= 0)
                k = view_counters_to_json(v, o);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(o);
        return 0;
}

/* A rate as rate_to_json() writes it; rate 1 when absent. */
static void rate_from_json(json_object *o, uint64_t *ret_mult, uint64_t *ret_run) {
        bool frozen = false;

        *ret_run = TNS_RATE_ONE;
        (void) read_uint64(o, "rate_mult", ret_run);
        *ret_mult = !read_bool(o, "frozen", &frozen) && frozen ? 0 : *ret_run;
}

static int clocks_from_json(json_object *o, struct tns_ns_view *v) {
        json_object *clocks, *k;

        if (!json_object_object_get_ex(o, "clocks", &clocks))
                return -EBADMSG;
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (!json_object_object_get_ex(clocks, tns_class_name(c), &k) ||
                    read_int64(k, "offset_ns", &v->offset_ns[c]) < 0 || read_int64(k, "now_ns", &v->now_ns[c]) < 0)
                        return -EBADMSG;
                else {
                        /* Optional: an older timensd sends none. */
                        (void) read_int64(k, "anchor_host_ns", &v->anchor_host_ns[c]);
                        (void) read_int64(k, "anchor_ns", &v->anchor_ns[c]);
                        /* An older timensd: the namespace's one rate. */
                        rate_from_json(json_object_object_get_ex(k, "rate_mult", NULL) ? k : o, &v->rate_mult[c],
                                       &v->run_mult[c]);
                }
        return 0;
}

static int processes_from_json(json_object *o, struct tns_ns_view *v) {
        json_object *a;
        int64_t pid;
        size_t n;

        if (!json_object_object_get_ex(o, "processes", &a))
                return 0;
        if (!json_object_is_type(a, json_type_array) || read_unsigned(o, "n_processes", &v->n_processes) < 0)
                return -EBADMSG;
        n = json_object_array_length(a);
        for (size_t i = 0; i < n && i < TNS_PROTO_MAX_PROCESSES; i++) {
                if (get_int64(json_object_array_get_idx(a, i), &pid) < 0)
                        return -EBADMSG;
                v->processes[i] = (pid_t) pid;
        }
        if (v->n_processes < n)
                v->n_processes = n;
        v->has_processes = true;
        return 0;
}

int tns_ns_view_from_json(json_object *o, struct tns_ns_view *ret) {
        const char *name = NULL, *origin, *grant;
        json_object *v;
        int a, b;

        memset(ret, 0, sizeof(*ret));
        if (read_uint64(o, "id", &ret->id) < 0 || read_string(o, "origin", 16, &origin) < 0 ||
            read_string(o, "grant", 16, &grant) < 0 || (a = tns_origin_from_name(origin)) < 0 ||
            (b = tns_grant_from_name(grant)) < 0 || clocks_from_json(o, ret) < 0)
                return -EBADMSG;
        ret->origin = a;
        ret->grant = b;
        if (json_object_object_get_ex(o, "name", &v) && v && get_string(v, TNS_NS_NAME_MAX, &name) < 0)
                return -EBADMSG;
        snprintf(ret->name, sizeof(ret->name), "%s", name ?: "");
        if (json_object_object_get_ex(o, "parent", &v) && v && read_uint64(o, "parent", &ret->parent_id) < 0)
                return -EBADMSG;
        (void) read_unsigned(o, "listeners", &ret->listeners);
        (void) read_unsigned(o, "pinned", &ret->pinned);
        (void) read_unsigned(o, "children", &ret->children);
        (void) read_bool(o, "live", &ret->live);
        (void) read_unsigned(o, "owner", &ret->owner);
        (void) read_bool(o, "shared", &ret->shared);
        (void) read_uint64(o, "calls", &ret->calls);
        (void) read_uint64(o, "failures", &ret->failures);
        (void) read_uint64(o, "sets", &ret->sets);
        (void) read_int64(o, "created_realtime_ns", &ret->created_realtime_ns);
        (void) read_bool(o, "rate_capable", &ret->rate_capable);
        (void) read_unsigned(o, "depth", &ret->depth);
        if (json_object_object_get_ex(o, "kernel", &v) && v) {
                if (read_uint64(v, "ns", &ret->kernel_ns) < 0)
                        return -EBADMSG;
                ret->kernel_offsets_known =
                        read_int64(v, "monotonic_ns", &ret->kernel_offset_ns[TNS_CLASS_MONOTONIC]) >= 0 &&
                        read_int64(v, "boottime_ns", &ret->kernel_offset_ns[TNS_CLASS_BOOTTIME]) >= 0;
        }
        return processes_from_json(o, ret);
}

int tns_clock_state_to_json(const struct tns_clock_state *st, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object(), *clocks = json_object_new_object();
        int k;

        if (!o || !clocks)
                return -ENOMEM;
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                _cleanup_json_ json_object *x = json_object_new_object();

                if (!x || add_int64(x, "value_ns", st->value_ns[c]) < 0 ||
                    add_int64(x, "offset_ns", st->offset_ns[c]) < 0)
                        return -ENOMEM;
                /* Rates only where there is one: states without them stay
                 * what they were. */
                if (st->run_mult[c] && (st->rate_mult[c] != TNS_RATE_ONE || st->run_mult[c] != TNS_RATE_ONE) &&
                    (add_uint64(x, "rate_mult", st->rate_mult[c]) < 0 ||
                     add_uint64(x, "run_mult", st->run_mult[c]) < 0))
                        return -ENOMEM;
                if (add_object(clocks, tns_class_name(c), TAKE_PTR(x)) < 0)
                        return -ENOMEM;
        }
        k = add_string(o, "format", TNS_PROTO_STATE_FORMAT);
        if (k >= 0)
                k = add_int64(o, "version", TNS_PROTO_STATE_VERSION);
        if (k >= 0)
                k = add_string(o, "name", st->name[0] ? st->name : NULL);
        if (k >= 0)
                k = add_string(o, "grant", tns_grant_name(st->grant));
        if (k >= 0)
                k = add_int64(o, "host_realtime_ns", st->host_realtime_ns);
        if (k >= 0 && st->rate_capable)
                k = add_bool(o, "rate_capable", true);
        if (k >= 0)
                k = add_object(o, "clocks", TAKE_PTR(clocks));
        if (k < 0)
                return k;
        *ret = TAKE_PTR(o);
        return 0;
}

static int state_clocks_from_json(json_object *o, struct tns_clock_state *st, struct tns_proto_error *e) {
        json_object *clocks, *x;

        if (!json_object_object_get_ex(o, "clocks", &clocks) || !json_object_is_type(clocks, json_type_object))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "state.clocks: expected an object");
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                if (!json_object_object_get_ex(clocks, tns_class_name(c), &x) ||
                    read_int64(x, "value_ns", &st->value_ns[c]) < 0 ||
                    read_int64(x, "offset_ns", &st->offset_ns[c]) < 0)
                        return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                                   "state.clocks.%s: expected integers value_ns and offset_ns",
                                                   tns_class_name(c));
                st->rate_mult[c] = st->run_mult[c] = 0; /* no rate */
                if (json_object_object_get_ex(x, "rate_mult", NULL) &&
                    (read_uint64(x, "rate_mult", &st->rate_mult[c]) < 0 ||
                     read_uint64(x, "run_mult", &st->run_mult[c]) < 0 ||
                     (st->rate_mult[c] != 0 && st->rate_mult[c] != st->run_mult[c]) ||
                     st->run_mult[c] < TNS_RATE_MULT_MIN || st->run_mult[c] > TNS_RATE_MULT_MAX))
                        return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                                   "state.clocks.%s: rate_mult and run_mult: expected a rate "
                                                   "(1/1000000 to 1000000 times 2^32) and 0 or the same",
                                                   tns_class_name(c));
        }
        /* MONOTONIC and BOOTTIME run at one rate, as the API sets them
         * (timensctl(1), RATES): a document that says otherwise is not one
         * we wrote (helper-39). REALTIME may have its own. */
        if (st->rate_mult[TNS_CLASS_MONOTONIC] != st->rate_mult[TNS_CLASS_BOOTTIME] ||
            st->run_mult[TNS_CLASS_MONOTONIC] != st->run_mult[TNS_CLASS_BOOTTIME])
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                           "state.clocks: monotonic and boottime run at one rate (rate_mult and "
                                           "run_mult alike)");
        return 0;
}

int tns_clock_state_from_json(json_object *o, struct tns_clock_state *ret, struct tns_proto_error *e) {
        struct tns_clock_state st = {};
        const char *format, *name = NULL, *grant = "none";
        json_object *v;
        int64_t version;
        int capable;

        if (!json_object_is_type(o, json_type_object) || read_string(o, "format", 64, &format) < 0 ||
            strcmp(format, TNS_PROTO_STATE_FORMAT) != 0)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "state: not a %s document",
                                           TNS_PROTO_STATE_FORMAT);
        if (read_int64(o, "version", &version) < 0 || version != TNS_PROTO_STATE_VERSION)
                return tns_proto_error_set(e, TNS_ERR_UNSUPPORTED_VERSION,
                                           "state.version: this server reads version %d", TNS_PROTO_STATE_VERSION);
        if (json_object_object_get_ex(o, "name", &v) && v &&
            (get_string(v, TNS_NS_NAME_MAX, &name) < 0 || !tns_ns_name_valid(name)))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "state.name: not a namespace name");
        if (json_object_object_get_ex(o, "grant", &v) &&
            (get_string(v, 16, &grant) < 0 || tns_grant_from_name(grant) < 0))
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "state.grant: expected none, read or full");
        st.grant = tns_grant_from_name(grant);
        (void) read_int64(o, "host_realtime_ns", &st.host_realtime_ns);
        capable = read_bool(o, "rate_capable", &st.rate_capable);
        if (capable == -EINVAL)
                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS, "state.rate_capable: expected true or false");
        snprintf(st.name, sizeof(st.name), "%s", name ?: "");
        if (state_clocks_from_json(o, &st, e) < 0)
                return -EINVAL;
        /* A rate makes a namespace rate-capable: said false, the document
         * contradicts itself; unsaid, it is so. */
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (st.run_mult[c] && (st.rate_mult[c] != TNS_RATE_ONE || st.run_mult[c] != TNS_RATE_ONE)) {
                        if (capable == 0 && !st.rate_capable)
                                return tns_proto_error_set(e, TNS_ERR_INVALID_PARAMS,
                                                           "state.rate_capable: false, but the clocks have a rate");
                        st.rate_capable = true;
                }
        *ret = st;
        return 0;
}

static json_object *latency_to_json(const uint64_t buckets[TNS_LATENCY_BUCKETS]) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (int b = 0; b < TNS_LATENCY_BUCKETS; b++)
                if (json_object_array_add(a, json_object_new_uint64(buckets[b])) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

static json_object *syscalls_to_json(const struct tns_supervisor_stats *s) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        for (int i = 0; i < _TNS_SYS_MAX; i++) {
                _cleanup_json_ json_object *x = json_object_new_object();

                if (!x || add_uint64(x, "calls", s->per_syscall[i]) < 0 ||
                    add_object(x, "latency_buckets", latency_to_json(s->latency[i])) < 0 ||
                    add_object(o, tns_syscalls[i].name, TAKE_PTR(x)) < 0)
                        return NULL;
        }
        return TAKE_PTR(o);
}

static json_object *vdso_stats_to_json(const struct tns_supervisor_stats *s) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o || add_uint64(o, "injected", s->vdso_injected) < 0 || add_uint64(o, "failed", s->vdso_failed) < 0 ||
            add_uint64(o, "fallbacks", s->vdso_fallbacks) < 0 ||
            add_uint64(o, "syscall_path", s->vdso_syscall_path) < 0 ||
            add_uint64(o, "execs_missing", s->execs_missing) < 0 ||
            (s->vdso_reads[0] && add_string(o, "reads", s->vdso_reads) < 0))
                return NULL;
        return TAKE_PTR(o);
}

static json_object *wait_stats_to_json(const struct tns_supervisor_stats *s) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o || add_uint64(o, "converted", s->waits_converted) < 0 ||
            add_uint64(o, "unconverted", s->waits_unconverted) < 0 ||
            add_uint64(o, "pages_tail", s->wait_pages_tail) < 0 ||
            add_uint64(o, "pages_stepped", s->wait_pages_stepped) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_object *file_times_stats_to_json(const struct tns_supervisor_stats *s) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o || add_uint64(o, "namespace_now", s->file_times_ns) < 0 ||
            add_uint64(o, "host_now", s->file_times_host) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_object *server_stats_to_json(const struct tns_server_stats *s) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o || add_uint64(o, "connections", s->connections) < 0 ||
            add_uint64(o, "connections_now", s->connections_now) < 0 || add_uint64(o, "rejected", s->rejected) < 0 ||
            add_uint64(o, "requests", s->requests) < 0 || add_uint64(o, "errors", s->errors) < 0 ||
            add_uint64(o, "uptime_ns", s->uptime_ns) < 0)
                return NULL;
        return TAKE_PTR(o);
}

int tns_stats_to_json(const struct tns_stats_view *st, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        const struct tns_supervisor_stats *s = &st->sup;
        int k;

        if (!o)
                return -ENOMEM;
        k = add_uint64(o, "notifications", s->notifications);
        if (k >= 0)
                k = add_uint64(o, "replied", s->replied);
        if (k >= 0)
                k = add_uint64(o, "vanished", s->vanished);
        if (k >= 0)
                k = add_uint64(o, "failures", s->failures);
        if (k >= 0)
                k = add_uint64(o, "namespaces", s->namespaces);
        if (k >= 0)
                k = add_uint64(o, "listeners", s->listeners);
        if (k >= 0)
                k = add_bool(o, "sync_wakeup", s->sync_wakeup);
        if (k >= 0)
                k = add_object(o, "vdso", vdso_stats_to_json(s));
        if (k >= 0)
                k = add_object(o, "waits", wait_stats_to_json(s));
        if (k >= 0)
                k = add_object(o, "file_times", file_times_stats_to_json(s));
        if (k >= 0)
                k = add_object(o, "syscalls", syscalls_to_json(s));
        if (k >= 0)
                k = add_object(o, "server", server_stats_to_json(&st->server));
        if (k < 0)
                return k;
        *ret = TAKE_PTR(o);
        return 0;
}

static void syscalls_from_json(json_object *o, struct tns_supervisor_stats *s) {
        json_object *sys, *x, *lat;

        if (!json_object_object_get_ex(o, "syscalls", &sys))
                return;
        for (int i = 0; i < _TNS_SYS_MAX; i++) {
                if (!json_object_object_get_ex(sys, tns_syscalls[i].name, &x))
                        continue;
                (void) read_uint64(x, "calls", &s->per_syscall[i]);
                if (!json_object_object_get_ex(x, "latency_buckets", &lat) ||
                    !json_object_is_type(lat, json_type_array))
                        continue;
                for (size_t b = 0; b < TNS_LATENCY_BUCKETS && b < json_object_array_length(lat); b++)
                        s->latency[i][b] = json_object_get_uint64(json_object_array_get_idx(lat, b));
        }
}

int tns_stats_from_json(json_object *o, struct tns_stats_view *ret) {
        struct tns_stats_view st = {};
        json_object *server, *vdso, *waits, *file_times;
        const char *reads;

        if (read_uint64(o, "notifications", &st.sup.notifications) < 0)
                return -EBADMSG;
        (void) read_uint64(o, "replied", &st.sup.replied);
        (void) read_uint64(o, "vanished", &st.sup.vanished);
        (void) read_uint64(o, "failures", &st.sup.failures);
        (void) read_unsigned(o, "namespaces", &st.sup.namespaces);
        (void) read_unsigned(o, "listeners", &st.sup.listeners);
        (void) read_bool(o, "sync_wakeup", &st.sup.sync_wakeup);
        syscalls_from_json(o, &st.sup);
        if (json_object_object_get_ex(o, "vdso", &vdso)) {
                (void) read_uint64(vdso, "injected", &st.sup.vdso_injected);
                (void) read_uint64(vdso, "failed", &st.sup.vdso_failed);
                (void) read_uint64(vdso, "fallbacks", &st.sup.vdso_fallbacks);
                (void) read_uint64(vdso, "syscall_path", &st.sup.vdso_syscall_path);
                (void) read_uint64(vdso, "execs_missing", &st.sup.execs_missing);
                if (read_string(vdso, "reads", sizeof(st.sup.vdso_reads) - 1, &reads) >= 0)
                        snprintf(st.sup.vdso_reads, sizeof(st.sup.vdso_reads), "%s", reads);
        }
        if (json_object_object_get_ex(o, "waits", &waits)) {
                (void) read_uint64(waits, "converted", &st.sup.waits_converted);
                (void) read_uint64(waits, "unconverted", &st.sup.waits_unconverted);
                (void) read_uint64(waits, "pages_tail", &st.sup.wait_pages_tail);
                (void) read_uint64(waits, "pages_stepped", &st.sup.wait_pages_stepped);
        }
        if (json_object_object_get_ex(o, "file_times", &file_times)) {
                (void) read_uint64(file_times, "namespace_now", &st.sup.file_times_ns);
                (void) read_uint64(file_times, "host_now", &st.sup.file_times_host);
        }
        if (json_object_object_get_ex(o, "server", &server)) {
                (void) read_uint64(server, "connections", &st.server.connections);
                (void) read_uint64(server, "connections_now", &st.server.connections_now);
                (void) read_uint64(server, "rejected", &st.server.rejected);
                (void) read_uint64(server, "requests", &st.server.requests);
                (void) read_uint64(server, "errors", &st.server.errors);
                (void) read_uint64(server, "uptime_ns", &st.server.uptime_ns);
        }
        *ret = st;
        return 0;
}
