/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json edits and seccomp profiles for the OCI runtimes. The rules
 * come from tns_filter_rules_foreach() (lib/kernel/filter.c), which reads the
 * one syscall table: nothing here lists a syscall. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clocks.h"
#include "file-times.h"
#include "filter.h"
#include "oci.h"

_printf_(3, 4) static int fail(char *err, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, TNS_OCI_ERR_MAX, fmt, ap);
        va_end(ap);
        return r;
}

/* json_object_object_add and json_object_array_add take the value even
 * on failure only in newer json-c: put it ourselves on failure. */
static int obj_add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int arr_add(json_object *a, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_array_add(a, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static json_object *names_array(const char *name) {
        json_object *a = json_object_new_array();

        if (a && arr_add(a, json_object_new_string(name)) < 0)
                a = (json_object_put(a), NULL);
        return a;
}

/* {"index":N,"value":V,"valueTwo":V2,"op":OP}: for MASKED_EQ the value is
 * the mask and valueTwo the datum, as runc and crun hand them to
 * libseccomp's SCMP_CMP_MASKED_EQ. */
static json_object *arg_condition(const struct tns_filter_cond *cond) {
        _cleanup_json_ json_object *c = json_object_new_object();
        bool masked = cond->cmp == TNS_RULE_MASKED_EQ;
        const char *op = masked ? "SCMP_CMP_MASKED_EQ" : cond->cmp == TNS_RULE_NE ? "SCMP_CMP_NE" : "SCMP_CMP_EQ";

        if (!c || obj_add(c, "index", json_object_new_int((int) cond->arg)) < 0 ||
            obj_add(c, "value", json_object_new_uint64(masked ? cond->mask : cond->datum)) < 0 ||
            obj_add(c, "valueTwo", json_object_new_uint64(masked ? cond->datum : 0)) < 0 ||
            obj_add(c, "op", json_object_new_string(op)) < 0)
                return NULL;
        return TAKE_PTR(c);
}

static int add_rule(const struct tns_filter_rule *rule, void *userdata) {
        _cleanup_json_ json_object *e = json_object_new_object();
        json_object *args;
        int r;

        if (!e)
                return -ENOMEM;
        r = obj_add(e, "names", names_array(rule->d->name));
        if (r >= 0)
                r = obj_add(e, "action", json_object_new_string("SCMP_ACT_NOTIFY"));
        if (r >= 0 && rule->n_conds > 0) {
                args = json_object_new_array();
                r = obj_add(e, "args", args);
                for (unsigned i = 0; r >= 0 && i < rule->n_conds; i++)
                        r = arr_add(args, arg_condition(&rule->conds[i]));
        }
        return r < 0 ? r : arr_add(userdata, TAKE_PTR(e));
}

/* The i386 names that are not also x86-64 names (clock_gettime64, stime,
 * ...): the 64-bit names already notify, and the supervisor answers a
 * 32-bit caller of those with TNS_COMPAT_ERRNO. */
static int add_compat_rule(json_object *syscalls) {
        _cleanup_json_ json_object *e = json_object_new_object(), *names = json_object_new_array();
        int r;

        if (!e || !names)
                return -ENOMEM;
        for (size_t i = 0; i < _TNS_SYS_MAX; i++)
                for (size_t j = 0; j < TNS_MAX_COMPAT_NAMES && tns_syscalls[i].i386_names[j]; j++) {
                        const char *n = tns_syscalls[i].i386_names[j];
                        bool native = false;

                        for (size_t k = 0; k < _TNS_SYS_MAX; k++)
                                native = native || strcmp(n, tns_syscalls[k].name) == 0;
                        if (!native && (r = arr_add(names, json_object_new_string(n))) < 0)
                                return r;
                }
        if ((r = obj_add(e, "names", TAKE_PTR(names))) < 0 ||
            (r = obj_add(e, "action", json_object_new_string("SCMP_ACT_ERRNO"))) < 0 ||
            (r = obj_add(e, "errnoRet", json_object_new_int(TNS_COMPAT_ERRNO))) < 0)
                return r;
        return arr_add(syscalls, TAKE_PTR(e));
}

int tns_oci_seccomp_syscalls(json_object **ret) {
        _cleanup_json_ json_object *a = json_object_new_array();
        int r;

        if (!a)
                return -ENOMEM;
        r = tns_filter_rules_foreach(0, add_rule, a);
        if (r >= 0)
                r = add_compat_rule(a);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(a);
        return 0;
}

static json_object *architectures(void) {
        static const char *const archs[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < ELEMENTSOF(archs); i++)
                if (arr_add(a, json_object_new_string(archs[i])) < 0)
                        a = (json_object_put(a), NULL);
        return a;
}

static int set_listener(json_object *seccomp, const char *listener_path, const char *metadata) {
        int r = obj_add(seccomp, "listenerPath", json_object_new_string(listener_path));

        if (r >= 0 && metadata)
                r = obj_add(seccomp, "listenerMetadata", json_object_new_string(metadata));
        return r;
}

int tns_oci_seccomp_profile(const char *listener_path, const char *metadata, json_object **ret) {
        _cleanup_json_ json_object *p = json_object_new_object(), *syscalls = NULL;
        int r;

        if (!p)
                return -ENOMEM;
        r = tns_oci_seccomp_syscalls(&syscalls);
        if (r >= 0)
                r = obj_add(p, "defaultAction", json_object_new_string("SCMP_ACT_ALLOW"));
        if (r >= 0)
                r = obj_add(p, "architectures", architectures());
        if (r >= 0)
                r = set_listener(p, listener_path, metadata);
        if (r >= 0)
                r = obj_add(p, "syscalls", TAKE_PTR(syscalls));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

/* Whether a name is one of the calls that set file times: a bundle may
 * deny those itself (no timestamp changes in the container), which our
 * rule must not undo. */
static bool file_times_name(const char *name) {
        const uint64_t args[6] = {0};
        struct tns_wait_spec spec;

        for (size_t k = 0; k < _TNS_SYS_MAX; k++)
                if (strcmp(name, tns_syscalls[k].name) == 0)
                        return tns_file_times_classify(tns_syscalls[k].id, args, &spec) == 0;
        return false;
}

static const char *rule_action(json_object *rule) {
        json_object *action;

        if (!json_object_object_get_ex(rule, "action", &action) || !json_object_is_type(action, json_type_string))
                return NULL;
        return json_object_get_string(action);
}

/* Whether the bundle's rule denies `name` (any action but ALLOW and our
 * NOTIFY): then the call keeps its denial, without our rule. */
static bool rule_denies(json_object *rule, const char *name) {
        const char *action = rule_action(rule);
        json_object *names;

        if (!action || strcmp(action, "SCMP_ACT_ALLOW") == 0 || strcmp(action, "SCMP_ACT_NOTIFY") == 0 ||
            !json_object_object_get_ex(rule, "names", &names) || !json_object_is_type(names, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(names); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(names, i)), name) == 0)
                        return true;
        return false;
}

/* Whether every name of a rule is one of ours: such rules came from an
 * earlier run and are replaced. A denial that names a call setting file
 * times is the bundle's own, never ours. */
static bool rule_is_ours(json_object *rule) {
        json_object *names, *action;
        size_t n;

        if (!json_object_object_get_ex(rule, "names", &names) || !json_object_is_type(names, json_type_array) ||
            !json_object_object_get_ex(rule, "action", &action) || !json_object_is_type(action, json_type_string))
                return false;
        if (strcmp(json_object_get_string(action), "SCMP_ACT_NOTIFY") != 0 &&
            strcmp(json_object_get_string(action), "SCMP_ACT_ERRNO") != 0)
                return false;
        n = json_object_array_length(names);
        for (size_t i = 0; i < n; i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(names, i));
                bool found = false;

                for (size_t k = 0; k < _TNS_SYS_MAX && !found; k++) {
                        found = strcmp(name, tns_syscalls[k].name) == 0;
                        for (size_t j = 0; j < TNS_MAX_COMPAT_NAMES && tns_syscalls[k].i386_names[j] && !found; j++)
                                found = strcmp(name, tns_syscalls[k].i386_names[j]) == 0;
                }
                if (!found || (strcmp(json_object_get_string(action), "SCMP_ACT_ERRNO") == 0 && file_times_name(name)))
                        return false;
        }
        return n > 0;
}

/* Whether one of the bundle's rules (kept) denies the call our rule names. */
static bool denied_by_bundle(json_object *kept, json_object *ours) {
        json_object *names;
        const char *name;

        if (!json_object_object_get_ex(ours, "names", &names) || json_object_array_length(names) != 1)
                return false;
        name = json_object_get_string(json_object_array_get_idx(names, 0));
        if (!file_times_name(name))
                return false;
        for (size_t i = 0; i < json_object_array_length(kept); i++)
                if (rule_denies(json_object_array_get_idx(kept, i), name))
                        return true;
        return false;
}

/* The bundle's own profile, kept, with ours appended. */
static int merge_agent(json_object *seccomp, const char *listener_path, const char *metadata, char *err) {
        json_object *old, *lp;
        _cleanup_json_ json_object *ours = NULL, *kept = json_object_new_array();
        int r;

        if (json_object_object_get_ex(seccomp, "listenerPath", &lp) && json_object_is_type(lp, json_type_string) &&
            strcmp(json_object_get_string(lp), listener_path) != 0)
                return fail(err, -EEXIST,
                            "linux.seccomp.listenerPath is '%s' already: a container has one seccomp agent",
                            json_object_get_string(lp));
        r = tns_oci_seccomp_syscalls(&ours);
        if (r < 0 || !kept)
                return -ENOMEM;
        if (json_object_object_get_ex(seccomp, "syscalls", &old) && json_object_is_type(old, json_type_array))
                for (size_t i = 0; i < json_object_array_length(old); i++) {
                        json_object *rule = json_object_array_get_idx(old, i);

                        if (!rule_is_ours(rule) && (r = arr_add(kept, json_object_get(rule))) < 0)
                                return r;
                }
        for (size_t i = 0; i < json_object_array_length(ours); i++) {
                json_object *rule = json_object_array_get_idx(ours, i);

                if (!denied_by_bundle(kept, rule) && (r = arr_add(kept, json_object_get(rule))) < 0)
                        return r;
        }
        r = obj_add(seccomp, "syscalls", TAKE_PTR(kept));
        if (r >= 0 && !metadata)
                json_object_object_del(seccomp, "listenerMetadata");
        return r < 0 ? r : set_listener(seccomp, listener_path, metadata);
}

static int get_or_add_object(json_object *parent, const char *key, json_object **ret, char *err) {
        json_object *o;
        int r;

        if (json_object_object_get_ex(parent, key, &o) && !json_object_is_type(o, json_type_null)) {
                if (!json_object_is_type(o, json_type_object))
                        return fail(err, -EINVAL, "\"%s\" in config.json is not an object", key);
                *ret = o;
                return 0;
        }
        o = json_object_new_object();
        r = obj_add(parent, key, o);
        if (r < 0)
                return r;
        *ret = o;
        return 0;
}

int tns_oci_config_add_agent(json_object *config, const char *listener_path, const char *metadata, char *err) {
        json_object *linux_, *seccomp;
        int r;

        if (!json_object_is_type(config, json_type_object))
                return fail(err, -EINVAL, "config.json is not a JSON object");
        r = get_or_add_object(config, "linux", &linux_, err);
        if (r < 0)
                return r;
        if (json_object_object_get_ex(linux_, "seccomp", &seccomp) && json_object_is_type(seccomp, json_type_object))
                return merge_agent(seccomp, listener_path, metadata, err);
        r = tns_oci_seccomp_profile(listener_path, metadata, &seccomp);
        return r < 0 ? r : obj_add(linux_, "seccomp", seccomp);
}

/* {"path": hook_path, "args": ["timens-oci-hook", args..., stage]}; the
 * stage is left out for createRuntime, the hook's default. */
static json_object *hook_entry(const char *stage, const char *hook_path, const char *const *args) {
        _cleanup_json_ json_object *h = json_object_new_object();
        json_object *a = json_object_new_array();

        if (!h || obj_add(h, "path", json_object_new_string(hook_path)) < 0 || obj_add(h, "args", a) < 0 ||
            arr_add(a, json_object_new_string("timens-oci-hook")) < 0)
                return NULL;
        for (size_t i = 0; args && args[i]; i++)
                if (arr_add(a, json_object_new_string(args[i])) < 0)
                        return NULL;
        if (strcmp(stage, "createRuntime") != 0 && arr_add(a, json_object_new_string(stage)) < 0)
                return NULL;
        return TAKE_PTR(h);
}

int tns_oci_config_add_hook_entry(json_object *config, const char *stage, const char *hook_path,
                                  const char *const *args, char *err) {
        json_object *hooks, *list, *path;
        _cleanup_json_ json_object *kept = json_object_new_array();
        int r;

        if (!json_object_is_type(config, json_type_object))
                return fail(err, -EINVAL, "config.json is not a JSON object");
        r = get_or_add_object(config, "hooks", &hooks, err);
        if (r < 0 || !kept)
                return r < 0 ? r : -ENOMEM;
        if (json_object_object_get_ex(hooks, stage, &list) && !json_object_is_type(list, json_type_null)) {
                if (!json_object_is_type(list, json_type_array))
                        return fail(err, -EINVAL, "hooks.%s in config.json is not an array", stage);
                for (size_t i = 0; i < json_object_array_length(list); i++) {
                        json_object *h = json_object_array_get_idx(list, i);

                        if (json_object_object_get_ex(h, "path", &path) &&
                            json_object_is_type(path, json_type_string) &&
                            strcmp(json_object_get_string(path), hook_path) == 0)
                                continue;
                        if ((r = arr_add(kept, json_object_get(h))) < 0)
                                return r;
                }
        }
        r = arr_add(kept, hook_entry(stage, hook_path, args));
        return r < 0 ? r : obj_add(hooks, stage, TAKE_PTR(kept));
}

int tns_oci_config_add_hook(json_object *config, const char *hook_path, const char *const *hook_args,
                            const char *const text[TNS_CLASS_MAX], const char *name, char *err) {
        json_object *ann;
        char key[64];
        int r;

        r = tns_oci_config_add_hook_entry(config, "createRuntime", hook_path, hook_args, err);
        if (r >= 0)
                r = get_or_add_object(config, "annotations", &ann, err);
        for (int c = 0; r >= 0 && c < TNS_CLASS_MAX; c++) {
                if (!text[c])
                        continue;
                snprintf(key, sizeof(key), TNS_OCI_ANNOTATION_PREFIX "%s", tns_class_name(c));
                r = obj_add(ann, key, json_object_new_string(text[c]));
        }
        if (r >= 0 && name)
                r = obj_add(ann, TNS_OCI_ANNOTATION_NAME, json_object_new_string(name));
        return r;
}
