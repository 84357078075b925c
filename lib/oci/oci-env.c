/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The clock settings in a container's environment (process.env), for the
 * engines that cannot set annotations: docker 20.10 has no --annotation,
 * but every engine passes -e/--env into config.json. timens-runtime turns
 * them into the org.timens.* annotations the hook and timensd read. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clocks.h"
#include "oci.h"

_printf_(3, 4) static int fail(char *err, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, TNS_OCI_ERR_MAX, fmt, ap);
        va_end(ap);
        return r;
}

/* The variables, by the key of tns_oci_request_set() they stand for
 * (NULL: reserved, refused). A new one is a new row. */
static const struct env_key {
        const char *var; /* after TNS_OCI_ENV_PREFIX */
        const char *key;
        int slot; /* index into tns_oci_env.text */
} env_keys[] = {
        {"REALTIME", "realtime", TNS_CLASS_REALTIME},
        {"MONOTONIC", "monotonic", TNS_CLASS_MONOTONIC},
        {"BOOTTIME", "boottime", TNS_CLASS_BOOTTIME},
        {"NAME", "name", TNS_OCI_ENV_NAME},
        /* libfaketime's FAKETIME syntax (lib/core/faketime.h): offset,
         * rate, start date or frozen date, as org.timens.faketime. */
        {"FAKETIME", "faketime", TNS_OCI_ENV_FAKETIME},
        {"FAKETIME_DONT_FAKE_MONOTONIC", "faketime-dont-fake-monotonic", TNS_OCI_ENV_FAKETIME_DONT_FAKE_MONOTONIC},
};

static const struct env_key *env_key(const char *var, size_t len) {
        for (size_t i = 0; i < ELEMENTSOF(env_keys); i++)
                if (strlen(env_keys[i].var) == len && strncmp(var, env_keys[i].var, len) == 0)
                        return &env_keys[i];
        return NULL;
}

static int env_one(const char *entry, struct tns_oci_env *ret, unsigned *seen, char *err) {
        const size_t plen = strlen(TNS_OCI_ENV_PREFIX);
        const char *eq = strchr(entry, '='), *value;
        const struct env_key *k;
        char where[96];
        int r;

        if (strncmp(entry, TNS_OCI_ENV_PREFIX, plen) != 0)
                return 0;
        if (!eq)
                return 0; /* "NAME" without a value is no setting (the runtimes skip it too) */
        value = eq + 1;
        k = env_key(entry + plen, (size_t) (eq - entry - plen));
        if (!k)
                return fail(err, -EINVAL,
                            "environment variable %.*s: unknown (" TNS_OCI_ENV_PREFIX "REALTIME, " TNS_OCI_ENV_PREFIX
                            "MONOTONIC, " TNS_OCI_ENV_PREFIX "BOOTTIME, " TNS_OCI_ENV_PREFIX "NAME, " TNS_OCI_ENV_PREFIX
                            "FAKETIME, " TNS_OCI_ENV_PREFIX "FAKETIME_DONT_FAKE_MONOTONIC)",
                            (int) (eq - entry), entry);
        if (*seen & (1U << k->slot))
                return fail(err, -EINVAL, "environment variable %.*s: given twice", (int) (eq - entry), entry);
        *seen |= 1U << k->slot;
        snprintf(where, sizeof(where), "environment variable %.*s", (int) (eq - entry), entry);
        r = tns_oci_request_set(&ret->req, k->key, strlen(k->key), value, where, err);
        if (r < 0)
                return r;
        if (k->slot >= TNS_CLASS_MAX) {
                if (strlen(value) >= sizeof(ret->text[k->slot]))
                        return fail(err, -EINVAL, "%s: too long", where);
                snprintf(ret->text[k->slot], sizeof(ret->text[k->slot]), "%s", value);
        } else if (tns_oci_offset_text(k->slot, value, ret->text[k->slot], sizeof(ret->text[k->slot])) < 0)
                return fail(err, -EINVAL, "%s: '%s' cannot be written as a date", where, value);
        ret->n_set++;
        return 0;
}

int tns_oci_env_parse(json_object *env, struct tns_oci_env *ret, char *err) {
        unsigned seen = 0;
        size_t n;
        int r;

        *ret = (struct tns_oci_env){};
        if (!env)
                return 0;
        if (!json_object_is_type(env, json_type_array))
                return fail(err, -EINVAL, "process.env is not an array");
        n = json_object_array_length(env);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(env, i);

                if (!json_object_is_type(e, json_type_string))
                        return fail(err, -EINVAL, "process.env[%zu] is not a string", i);
                r = env_one(json_object_get_string(e), ret, &seen, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

json_object *tns_oci_config_env(json_object *config) {
        json_object *process, *env;

        if (!json_object_is_type(config, json_type_object) || !json_object_object_get_ex(config, "process", &process) ||
            !json_object_is_type(process, json_type_object) || !json_object_object_get_ex(process, "env", &env) ||
            json_object_is_type(env, json_type_null))
                return NULL;
        return env;
}

int tns_oci_env_annotate(json_object *config, const struct tns_oci_env *env, char *err) {
        json_object *ann, *v;

        if (env->n_set == 0)
                return 0;
        if (!json_object_object_get_ex(config, "annotations", &ann) || json_object_is_type(ann, json_type_null)) {
                ann = json_object_new_object();
                if (!ann || json_object_object_add(config, "annotations", ann) < 0)
                        return (json_object_put(ann), -ENOMEM);
        }
        if (!json_object_is_type(ann, json_type_object))
                return fail(err, -EINVAL, "\"annotations\" in config.json is not an object");
        for (int slot = 0; slot < TNS_OCI_ENV_SLOTS; slot++) {
                char key[64];

                if (!env->text[slot][0])
                        continue;
                snprintf(key, sizeof(key), TNS_OCI_ANNOTATION_PREFIX "%s",
                         slot == TNS_OCI_ENV_NAME       ? "name"
                         : slot == TNS_OCI_ENV_FAKETIME ? "faketime"
                         : slot == TNS_OCI_ENV_FAKETIME_DONT_FAKE_MONOTONIC
                                 ? "faketime-dont-fake-monotonic"
                                 : tns_class_name((enum tns_clock_class) slot));
                if (json_object_object_get_ex(ann, key, &v))
                        continue;
                v = json_object_new_string(env->text[slot]);
                if (!v || json_object_object_add(ann, key, v) < 0)
                        return (json_object_put(v), -ENOMEM);
        }
        return 0;
}
