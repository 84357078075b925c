/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clocks.h"
#include "faketime.h"
#include "oci.h"
#include "rate.h"
#include "time-util.h"

static void json_tokener_freep(json_tokener **t) {
        if (*t)
                json_tokener_free(*t);
}

_printf_(3, 4) static int fail(char *err, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, TNS_OCI_ERR_MAX, fmt, ap);
        va_end(ap);
        return r;
}

static json_object *member(json_object *o, const char *key, json_type type) {
        json_object *v;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
                return NULL;
        return v;
}

static const char *string_member(json_object *o, const char *key) {
        json_object *v = member(o, key, json_type_string);

        return v ? json_object_get_string(v) : NULL;
}

/* The agent message's "fds": ["seccompFd"] (runtime-spec config-linux.md:
 * the runtime sends the fds named here, in this order). */
static int find_seccomp_fd(json_object *fds) {
        size_t n = fds ? json_object_array_length(fds) : 0;

        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(fds, i);

                if (json_object_is_type(e, json_type_string) && strcmp(json_object_get_string(e), "seccompFd") == 0)
                        return (int) i;
        }
        return -1;
}

static int read_pid(json_object *o, const char *where, pid_t *ret, char *err) {
        json_object *v;
        int64_t pid;

        *ret = 0;
        if (!o || !json_object_object_get_ex(o, "pid", &v))
                return 0;
        if (!json_object_is_type(v, json_type_int))
                return fail(err, -EINVAL, "%s.pid is not an integer", where);
        pid = json_object_get_int64(v);
        /* crun's message for `crun exec` says "pid": 0: as if absent. */
        if (pid < 0 || pid > INT32_MAX)
                return fail(err, -EINVAL, "%s.pid %lld is not a process id", where, (long long) pid);
        *ret = (pid_t) pid;
        return 0;
}

static int parse_agent_part(struct tns_oci_state *s, char *err) {
        json_object *fds = member(s->root, "fds", json_type_array);
        pid_t pid;
        int r;

        s->agent = true;
        s->seccomp_fd_index = find_seccomp_fd(fds);
        s->metadata = string_member(s->root, "metadata");
        r = read_pid(s->root, "message", &pid, err);
        if (r >= 0 && pid > 0)
                s->pid = pid;
        return r;
}

int tns_oci_state_parse(const char *text, size_t len, struct tns_oci_state *ret, char *err) {
        _cleanup_(json_tokener_freep) json_tokener *tok = NULL;
        json_object *st;
        int r;

        *ret = (struct tns_oci_state){.seccomp_fd_index = -1};
        if (len > TNS_OCI_MAX_STATE)
                return fail(err, -EINVAL, "the container state is over %d bytes", TNS_OCI_MAX_STATE);
        tok = json_tokener_new_ex(16);
        if (!tok)
                return -ENOMEM;
        ret->root = json_tokener_parse_ex(tok, text, (int) len);
        if (!ret->root || json_tokener_get_error(tok) != json_tokener_success)
                return fail(err, -EINVAL, "the container state is not JSON: %s",
                            json_tokener_error_desc(json_tokener_get_error(tok)));
        if (!json_object_is_type(ret->root, json_type_object))
                return fail(err, -EINVAL, "the container state is not a JSON object");
        /* The agent message wraps the state: {"fds":..., "pid":...,
         * "metadata":..., "state":{...}}. */
        st = member(ret->root, "state", json_type_object);
        if (st) {
                r = parse_agent_part(ret, err);
                if (r < 0)
                        return r;
        } else {
                st = ret->root;
        }
        ret->id = string_member(st, "id");
        if (!ret->id || !*ret->id)
                return fail(err, -EINVAL, "the container state has no \"id\"");
        ret->bundle = string_member(st, "bundle");
        ret->status = string_member(st, "status");
        ret->annotations = member(st, "annotations", json_type_object);
        if (ret->pid == 0) {
                r = read_pid(st, "state", &ret->pid, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

void tns_oci_state_done(struct tns_oci_state *s) {
        json_object_put(s->root);
        *s = (struct tns_oci_state){.seccomp_fd_index = -1};
}

unsigned tns_oci_rate_classes(const struct tns_oci_request *req) {
        return req->realtime_only ? 1U << TNS_CLASS_REALTIME : TNS_RATE_CLASSES_ALL;
}

void tns_oci_request_rates(const struct tns_oci_request *req, uint64_t mult[TNS_CLASS_MAX], int freeze[TNS_CLASS_MAX]) {
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                bool mine = tns_oci_rate_classes(req) & (1U << c);

                mult[c] = !mine ? TNS_RATE_ONE : req->rate_mult ?: (req->freeze ? 0 : TNS_RATE_ONE);
                freeze[c] = mine && req->freeze ? 1 : -1;
        }
}

static int class_from_name(const char *s, size_t n) {
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (strlen(tns_class_name(c)) == n && strncmp(s, tns_class_name(c), n) == 0)
                        return c;
        return -EINVAL;
}

int tns_oci_request_set(struct tns_oci_request *req, const char *key, size_t key_len, const char *value,
                        const char *where, char *err) {
        int c = class_from_name(key, key_len);
        struct tns_offset_spec spec;
        int r;

        if (key_len == 4 && strncmp(key, "name", 4) == 0) {
                if (!tns_ns_name_valid(value))
                        return fail(err, -EINVAL, "%s: '%s' is not a namespace name (" TNS_NS_NAME_RULE ")", where,
                                    value);
                snprintf(req->name, sizeof(req->name), "%s", value);
                return 0;
        }
        if (key_len == 8 && strncmp(key, "faketime", 8) == 0) {
                struct tns_faketime f;
                const char *why = NULL;

                r = tns_faketime_parse(value, &f, &why);
                if (r < 0)
                        return fail(err, -EINVAL, "%s: '%s' is not a FAKETIME specification timens takes: %s", where,
                                    value, why);
                if (req->realtime_by_realtime)
                        return fail(err, -EINVAL, "%s: sets the realtime clock itself: not with the realtime setting",
                                    where);
                req->realtime_by_faketime = true;
                req->clocks[TNS_CLASS_REALTIME] = (struct tns_clock_arg){.set = true, .spec = f.realtime};
                req->rated = true;
                req->rate_mult = f.rate_mult;
                req->freeze = f.freeze;
                return 0;
        }
        if (key_len == strlen("faketime-dont-fake-monotonic") &&
            strncmp(key, "faketime-dont-fake-monotonic", key_len) == 0) {
                if (strcmp(value, "1") != 0 && strcmp(value, "0") != 0)
                        return fail(err, -EINVAL,
                                    "%s: '%s' is neither 1 (the rate and freeze of faketime are the realtime clock's "
                                    "alone) nor 0",
                                    where, value);
                req->realtime_only = value[0] == '1';
                return 0;
        }
        if (c < 0)
                return fail(err, -EINVAL,
                            "%s: unknown key '%.*s' (realtime, monotonic, boottime, name, faketime, "
                            "faketime-dont-fake-monotonic)",
                            where, (int) key_len, key);
        r = tns_offset_parse(value, c == TNS_CLASS_REALTIME, &spec);
        if (r == -ERANGE)
                return fail(err, -EINVAL, "%s: '%s' is out of range", where, value);
        if (r < 0)
                return fail(err, -EINVAL, "%s: '%s' is not %s (e.g. 86400, +10d, -3h30m%s)", where, value,
                            c == TNS_CLASS_REALTIME ? "an offset or a date" : "an offset",
                            c == TNS_CLASS_REALTIME ? ", 2030-01-01, 2030-01-01T12:00:00Z, @1893456000" : "");
        if (c == TNS_CLASS_REALTIME) {
                if (req->realtime_by_faketime)
                        return fail(err, -EINVAL,
                                    "%s: the faketime setting sets the realtime clock itself: give one of the two",
                                    where);
                req->realtime_by_realtime = true;
        }
        req->clocks[c] = (struct tns_clock_arg){.set = true, .spec = spec};
        return 0;
}

int tns_oci_metadata_parse(const char *text, struct tns_oci_request *ret, char *err) {
        _cleanup_free_ char *copy = strdup(text);
        unsigned seen = 0;
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(item, '=');
                int c, r;

                while (*item == ' ')
                        item++;
                if (!eq)
                        return fail(err, -EINVAL, "listenerMetadata: '%s' is not KEY=VALUE", item);
                c = class_from_name(item, (size_t) (eq - item));
                c = c >= 0 ? c : strncmp(item, "name=", 5) == 0 ? TNS_CLASS_MAX : -1;
                if (c >= 0 && (seen & (1U << c)))
                        return fail(err, -EINVAL, "listenerMetadata: '%.*s' given twice", (int) (eq - item), item);
                if (c >= 0)
                        seen |= 1U << c;
                r = tns_oci_request_set(ret, item, (size_t) (eq - item), eq + 1, "listenerMetadata", err);
                if (r < 0)
                        return r;
        }
        return 0;
}

bool tns_oci_has_annotations(json_object *annotations) {
        if (!json_object_is_type(annotations, json_type_object))
                return false;
        json_object_object_foreach(annotations, key, value) {
                (void) value;
                if (strncmp(key, TNS_OCI_ANNOTATION_PREFIX, strlen(TNS_OCI_ANNOTATION_PREFIX)) == 0)
                        return true;
        }
        return false;
}

int tns_oci_annotations_parse(json_object *annotations, struct tns_oci_request *ret, char *err) {
        const size_t plen = strlen(TNS_OCI_ANNOTATION_PREFIX);

        if (!annotations)
                return 0;
        if (!json_object_is_type(annotations, json_type_object))
                return fail(err, -EINVAL, "\"annotations\" is not an object");
        json_object_object_foreach(annotations, key, value) {
                char where[128];
                int r;

                if (strncmp(key, TNS_OCI_ANNOTATION_PREFIX, plen) != 0)
                        continue;
                snprintf(where, sizeof(where), "annotation %s", key);
                if (!json_object_is_type(value, json_type_string))
                        return fail(err, -EINVAL, "%s: the value is not a string", where);
                r = tns_oci_request_set(ret, key + plen, strlen(key + plen), json_object_get_string(value), where, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int time_offset(json_object *o, const char *name, int64_t *ret, char *err) {
        json_object *secs, *nsecs;
        int64_t s = 0, n = 0;

        if (!json_object_is_type(o, json_type_object))
                return fail(err, -EINVAL, "linux.timeOffsets.%s is not an object", name);
        if (json_object_object_get_ex(o, "secs", &secs)) {
                if (!json_object_is_type(secs, json_type_int))
                        return fail(err, -EINVAL, "linux.timeOffsets.%s.secs is not an integer", name);
                s = json_object_get_int64(secs);
        }
        if (json_object_object_get_ex(o, "nanosecs", &nsecs)) {
                if (!json_object_is_type(nsecs, json_type_int))
                        return fail(err, -EINVAL, "linux.timeOffsets.%s.nanosecs is not an integer", name);
                n = json_object_get_int64(nsecs);
        }
        /* The kernel's /proc/PID/timens_offsets takes nanoseconds in
         * [0, NSEC_PER_SEC) (kernel/time/namespace.c, proc_timens_set_offset). */
        if (n < 0 || n >= TNS_NSEC_PER_SEC)
                return fail(err, -EINVAL, "linux.timeOffsets.%s.nanosecs %lld is not in [0, 999999999]", name,
                            (long long) n);
        if (__builtin_mul_overflow(s, TNS_NSEC_PER_SEC, ret) || __builtin_add_overflow(*ret, n, ret))
                return fail(err, -ERANGE, "linux.timeOffsets.%s is out of range", name);
        return 0;
}

int tns_oci_time_offsets(json_object *config, int64_t ret[TNS_CLASS_MAX], unsigned *ret_mask, char *err) {
        json_object *linux_ = member(config, "linux", json_type_object), *to, *v;
        static const enum tns_clock_class classes[] = {TNS_CLASS_MONOTONIC, TNS_CLASS_BOOTTIME};
        unsigned mask = 0;
        int r;

        for (int c = 0; c < TNS_CLASS_MAX; c++)
                ret[c] = 0;
        if (!linux_ || !json_object_object_get_ex(linux_, "timeOffsets", &to) ||
            json_object_is_type(to, json_type_null)) {
                *ret_mask = 0;
                return 0;
        }
        if (!json_object_is_type(to, json_type_object))
                return fail(err, -EINVAL, "linux.timeOffsets is not an object");
        json_object_object_foreach(to, key, value) {
                (void) value;
                if (strcmp(key, "monotonic") != 0 && strcmp(key, "boottime") != 0)
                        return fail(err, -EINVAL, "linux.timeOffsets.%s: only monotonic and boottime exist", key);
        }
        for (size_t i = 0; i < ELEMENTSOF(classes); i++) {
                const char *name = tns_class_name(classes[i]);

                if (!json_object_object_get_ex(to, name, &v))
                        continue;
                r = time_offset(v, name, &ret[classes[i]], err);
                if (r < 0)
                        return r;
                mask |= 1U << classes[i];
        }
        *ret_mask = mask;
        return 0;
}

void tns_oci_default_name(const char *id, char ret[TNS_NS_NAME_MAX + 1]) {
        ret[0] = '\0';
        if (id && tns_ns_name_valid(id))
                snprintf(ret, TNS_NS_NAME_MAX + 1, "%s", id);
}

int tns_oci_offset_text(enum tns_clock_class c, const char *text, char *buf, size_t size) {
        struct tns_offset_spec spec;
        int64_t sec, nsec;
        time_t t;
        struct tm tm;
        size_t n;
        int r;

        r = tns_offset_parse(text, c == TNS_CLASS_REALTIME, &spec);
        if (r < 0)
                return r;
        if (spec.kind == TNS_OFFSET_RELATIVE)
                return snprintf(buf, size, "%s", text) < (int) size ? 0 : -ERANGE;
        /* Floor division: a date before 1970 has a positive fraction. */
        sec = spec.ns / TNS_NSEC_PER_SEC;
        nsec = spec.ns % TNS_NSEC_PER_SEC;
        if (nsec < 0)
                sec--, nsec += TNS_NSEC_PER_SEC;
        t = (time_t) sec;
        if (!gmtime_r(&t, &tm) || (n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm)) == 0)
                return -ERANGE;
        if (nsec)
                n += (size_t) snprintf(buf + n, size - n, ".%09lld", (long long) nsec);
        return n + 1 < size && snprintf(buf + n, size - n, "Z") == 1 ? 0 : -ERANGE;
}
