/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "util.h"

void tns_state_done(struct tns_state *st) {
        free(st->ns);
        free(st->listeners);
        free(st->members);
        *st = (struct tns_state){};
}

static void *grow(void **array, size_t *n, size_t size) {
        void *p;

        if (*n >= TNS_STATE_MAX_ITEMS)
                return NULL;
        p = reallocarray(*array, *n + 1, size);
        if (!p)
                return NULL;
        *array = p;
        p = (char *) p + *n * size;
        memset(p, 0, size);
        (*n)++;
        return p;
}

struct tns_state_ns *tns_state_add_ns(struct tns_state *st) {
        return grow((void **) &st->ns, &st->n_ns, sizeof(*st->ns));
}

struct tns_state_listener *tns_state_add_listener(struct tns_state *st) {
        return grow((void **) &st->listeners, &st->n_listeners, sizeof(*st->listeners));
}

struct tns_state_member *tns_state_add_member(struct tns_state *st) {
        return grow((void **) &st->members, &st->n_members, sizeof(*st->members));
}

/* ------------------------------------------------------------ formatting */

static void jput(json_object *o, const char *k, json_object *v) {
        json_object_object_add(o, k, v);
}

static json_object *u64(uint64_t v) {
        return json_object_new_uint64(v);
}

static json_object *i64(int64_t v) {
        return json_object_new_int64(v);
}

static json_object *format_ns(const struct tns_state_ns *n) {
        json_object *o = json_object_new_object();

        jput(o, "id", u64(n->id));
        jput(o, "parent", u64(n->parent));
        jput(o, "name", json_object_new_string(n->name));
        jput(o, "held", json_object_new_boolean(n->held));
        jput(o, "origin", i64(n->origin));
        jput(o, "grant", i64(n->grant));
        jput(o, "owner", i64(n->owner));
        jput(o, "shared", json_object_new_boolean(n->shared));
        jput(o, "created", i64(n->created_realtime_ns));
        jput(o, "sets", u64(n->sets));
        jput(o, "flags", u64(n->flags));
        if (n->tz_set) {
                json_object *tz = json_object_new_array();

                json_object_array_add(tz, i64(n->tz_minuteswest));
                json_object_array_add(tz, i64(n->tz_dsttime));
                jput(o, "tz", tz);
        }
        return o;
}

int tns_state_format(const struct tns_state *st, char **ret) {
        json_object *root = json_object_new_object(), *a;
        const char *text;
        char *copy;

        if (!root)
                return -ENOMEM;
        jput(root, "version", i64(TNS_STATE_VERSION));
        jput(root, "next_ns_id", u64(st->next_ns_id));
        jput(root, "next_serial", u64(st->next_serial));
        if (st->have_wait_slot_base)
                jput(root, "wait_slot_base", u64(st->wait_slot_base));
        a = json_object_new_array();
        for (size_t i = 0; i < st->n_ns; i++)
                json_object_array_add(a, format_ns(&st->ns[i]));
        jput(root, "namespaces", a);
        a = json_object_new_array();
        for (size_t i = 0; i < st->n_listeners; i++) {
                json_object *o = json_object_new_object();

                jput(o, "serial", u64(st->listeners[i].serial));
                jput(o, "ns", u64(st->listeners[i].ns));
                jput(o, "root_pid", i64(st->listeners[i].root_pid));
                if (st->listeners[i].kernel_nested)
                        jput(o, "kernel_nested", json_object_new_boolean(true));
                json_object_array_add(a, o);
        }
        jput(root, "listeners", a);
        a = json_object_new_array();
        for (size_t i = 0; i < st->n_members; i++) {
                json_object *o = json_object_new_object();

                jput(o, "listener", u64(st->members[i].listener));
                jput(o, "ns", u64(st->members[i].ns));
                jput(o, "tgid", i64(st->members[i].tgid));
                jput(o, "start_time", u64(st->members[i].start_time));
                json_object_array_add(a, o);
        }
        jput(root, "members", a);
        text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
        copy = text ? strdup(text) : NULL;
        json_object_put(root);
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}

/* --------------------------------------------------------------- parsing */

static bool get_u64(json_object *o, const char *k, uint64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_int))
                return false;
        /* json-c keeps integers above INT64_MAX as uint64: both fit. */
        if (json_object_get_int64(v) < 0)
                return false;
        *ret = json_object_get_uint64(v);
        return true;
}

static bool get_i64(json_object *o, const char *k, int64_t min, int64_t max, int64_t *ret) {
        json_object *v;
        int64_t x;

        if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_int))
                return false;
        errno = 0;
        x = json_object_get_int64(v);
        if (errno != 0 || x < min || x > max)
                return false;
        *ret = x;
        return true;
}

static bool get_array(json_object *o, const char *k, json_object **ret) {
        return json_object_object_get_ex(o, k, ret) && json_object_is_type(*ret, json_type_array) &&
               json_object_array_length(*ret) <= TNS_STATE_MAX_ITEMS;
}

static const struct tns_state_ns *find_ns(const struct tns_state *st, uint64_t id) {
        for (size_t i = 0; i < st->n_ns; i++)
                if (st->ns[i].id == id)
                        return &st->ns[i];
        return NULL;
}

static int parse_ns(json_object *o, struct tns_state *st) {
        struct tns_state_ns *n;
        json_object *v;
        int64_t x;
        const char *name;

        if (!json_object_is_type(o, json_type_object) || !(n = tns_state_add_ns(st)))
                return -EBADMSG;
        if (!get_u64(o, "id", &n->id) || n->id == 0 || !get_u64(o, "parent", &n->parent) ||
            !json_object_object_get_ex(o, "name", &v) || !json_object_is_type(v, json_type_string) ||
            !json_object_object_get_ex(o, "held", &v) || !json_object_is_type(v, json_type_boolean))
                return -EBADMSG;
        n->held = json_object_get_boolean(v);
        json_object_object_get_ex(o, "name", &v);
        name = json_object_get_string(v);
        if (strlen(name) > TNS_STATE_NAME_MAX || strlen(name) != (size_t) json_object_get_string_len(v))
                return -EBADMSG;
        strcpy(n->name, name);
        if (!get_i64(o, "origin", 0, 255, &x))
                return -EBADMSG;
        n->origin = (int) x;
        if (!get_i64(o, "grant", 0, 255, &x))
                return -EBADMSG;
        n->grant = (int) x;
        /* Absent in records of older daemons: root's, not shared. */
        if (json_object_object_get_ex(o, "owner", &v)) {
                if (!get_i64(o, "owner", 0, UINT32_MAX - 1, &x))
                        return -EBADMSG;
                n->owner = (uid_t) x;
        }
        if (json_object_object_get_ex(o, "shared", &v)) {
                if (!json_object_is_type(v, json_type_boolean))
                        return -EBADMSG;
                n->shared = json_object_get_boolean(v);
        }
        if (!get_i64(o, "created", INT64_MIN, INT64_MAX, &n->created_realtime_ns) || !get_u64(o, "sets", &n->sets) ||
            !get_i64(o, "flags", 0, UINT32_MAX, &x))
                return -EBADMSG;
        n->flags = (uint32_t) x;
        if (json_object_object_get_ex(o, "tz", &v)) {
                json_object *a, *b;

                if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) != 2)
                        return -EBADMSG;
                a = json_object_array_get_idx(v, 0), b = json_object_array_get_idx(v, 1);
                if (!json_object_is_type(a, json_type_int) || !json_object_is_type(b, json_type_int))
                        return -EBADMSG;
                n->tz_set = true;
                n->tz_minuteswest = json_object_get_int(a);
                n->tz_dsttime = json_object_get_int(b);
        }
        /* Parents first (ids only grow), each id once. */
        if ((n->parent != 0 && (n->parent >= n->id || !find_ns(st, n->parent))) ||
            (find_ns(st, n->id) != n && find_ns(st, n->id)))
                return -EBADMSG;
        return 0;
}

static bool listener_known(const struct tns_state *st, uint64_t serial) {
        for (size_t i = 0; i < st->n_listeners; i++)
                if (st->listeners[i].serial == serial)
                        return true;
        return false;
}

static int parse_listener(json_object *o, struct tns_state *st) {
        struct tns_state_listener *l;
        json_object *v;
        int64_t pid;
        uint64_t serial;

        if (!json_object_is_type(o, json_type_object) || !get_u64(o, "serial", &serial) || listener_known(st, serial) ||
            !(l = tns_state_add_listener(st)))
                return -EBADMSG;
        l->serial = serial;
        if (!get_u64(o, "ns", &l->ns) || !find_ns(st, l->ns) || !get_i64(o, "root_pid", 0, INT32_MAX, &pid))
                return -EBADMSG;
        l->root_pid = (pid_t) pid;
        /* Absent in records of before it was kept. */
        if (json_object_object_get_ex(o, "kernel_nested", &v)) {
                if (!json_object_is_type(v, json_type_boolean))
                        return -EBADMSG;
                l->kernel_nested = json_object_get_boolean(v);
        }
        return 0;
}

static int parse_member(json_object *o, struct tns_state *st) {
        struct tns_state_member *m;
        int64_t pid;

        if (!json_object_is_type(o, json_type_object) || !(m = tns_state_add_member(st)))
                return -EBADMSG;
        if (!get_u64(o, "listener", &m->listener) || !listener_known(st, m->listener) || !get_u64(o, "ns", &m->ns) ||
            !find_ns(st, m->ns) || !get_i64(o, "tgid", 1, INT32_MAX, &pid) || !get_u64(o, "start_time", &m->start_time))
                return -EBADMSG;
        m->tgid = (pid_t) pid;
        return 0;
}

static int parse_array(json_object *root, const char *k, int (*fn)(json_object *, struct tns_state *),
                       struct tns_state *st) {
        json_object *a;
        int r;

        if (!get_array(root, k, &a))
                return -EBADMSG;
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                r = fn(json_object_array_get_idx(a, i), st);
                if (r < 0)
                        return r;
        }
        return 0;
}

int tns_state_parse(const char *text, size_t len, struct tns_state *ret) {
        _cleanup_(tns_state_done) struct tns_state st = {};
        json_tokener *tok;
        json_object *root;
        int64_t version;
        int r = -EBADMSG;

        if (len > TNS_STATE_MAX_TEXT || len > INT32_MAX)
                return -EBADMSG;
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        root = json_tokener_parse_ex(tok, text, (int) len);
        if (root && json_tokener_get_parse_end(tok) != len)
                r = -EBADMSG; /* trailing bytes */
        else if (root && json_object_is_type(root, json_type_object) &&
                 get_i64(root, "version", 0, INT32_MAX, &version) && version == TNS_STATE_VERSION &&
                 get_u64(root, "next_ns_id", &st.next_ns_id) && get_u64(root, "next_serial", &st.next_serial)) {
                uint64_t base;

                /* Optional: a record of an older timensd has none. */
                if (get_u64(root, "wait_slot_base", &base) && base <= UINT32_MAX) {
                        st.wait_slot_base = (uint32_t) base;
                        st.have_wait_slot_base = true;
                }
                r = parse_array(root, "namespaces", parse_ns, &st);
                if (r >= 0)
                        r = parse_array(root, "listeners", parse_listener, &st);
                if (r >= 0)
                        r = parse_array(root, "members", parse_member, &st);
        }
        json_object_put(root);
        json_tokener_free(tok);
        if (r < 0)
                return r;
        for (size_t i = 0; i < st.n_ns; i++)
                if (st.ns[i].id > st.next_ns_id)
                        return -EBADMSG;
        for (size_t i = 0; i < st.n_listeners; i++)
                if (st.listeners[i].serial >= st.next_serial)
                        return -EBADMSG;
        *ret = st;
        st = (struct tns_state){};
        return 0;
}

static bool parse_num(const char **p, uint64_t *ret) {
        char *end;

        if (**p < '0' || **p > '9' || (**p == '0' && (*p)[1] >= '0' && (*p)[1] <= '9'))
                return false;
        errno = 0;
        *ret = strtoull(*p, &end, 10);
        if (errno)
                return false;
        *p = end;
        return true;
}

char tns_state_fd_kind(const char *name, uint64_t *ret_a, uint64_t *ret_b, uint64_t *ret_c) {
        const char *p;
        uint64_t a = 0, b = 0, c = 0;
        char kind;

        if (strncmp(name, "ns.", 3) == 0)
                kind = 'n', p = name + 3;
        else if (strncmp(name, "l.", 2) == 0)
                kind = 'l', p = name + 2;
        else if (strncmp(name, "p.", 2) == 0)
                kind = 'p', p = name + 2;
        else
                return 0;
        if (!parse_num(&p, &a))
                return 0;
        if (kind == 'p' && (*p++ != '.' || !parse_num(&p, &b) || *p++ != '.' || !parse_num(&p, &c)))
                return 0;
        if (*p != '\0')
                return 0;
        *ret_a = a, *ret_b = b, *ret_c = c;
        return kind;
}
