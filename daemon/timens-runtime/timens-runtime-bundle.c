/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* create/run: the container's clock settings — org.timens.* annotations,
 * else TIMENS_* variables of its environment (lib/oci/oci-env.c), an
 * annotation winning key by key — checked whole before anything is
 * written, then put into config.json as the hook mode or the agent mode
 * reads them (lib/oci/oci-config.c), written atomically. A container
 * without settings is left exactly as it came. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "oci.h"
#include "timens-runtime.h"

static json_object *annotations(json_object *config) {
        json_object *ann;

        if (!json_object_object_get_ex(config, "annotations", &ann) || !json_object_is_type(ann, json_type_object))
                return NULL;
        return ann;
}

/* The namespace's name the hook and timensd will use: the settings', or
 * the container id if that is a valid name. Checked here so that
 * `docker run` says what to do rather than the hook later. */
static int check_name(const struct runtime_args *a, const struct tns_oci_request *req, const struct tns_logger *log) {
        char name[TNS_NS_NAME_MAX + 1];

        if (req->name[0])
                return 0;
        tns_oci_default_name(a->id, name);
        if (name[0])
                return 0;
        return tns_log_errno(log, LOG_ERR, EINVAL,
                             "Container id '%s' is not a namespace name: set TIMENS_NAME (or the annotation "
                             "org.timens.name) to " TNS_NS_NAME_RULE,
                             a->id ?: "");
}

static int add_hooks(json_object *config, const struct runtime_conf *c, char *err) {
        const char *args[5] = {};
        size_t n = 0;
        int r;

        if (access(c->hook, X_OK) < 0) {
                r = -errno;
                snprintf(err, TNS_OCI_ERR_MAX,
                         "the hook %.160s cannot be run (%s): install timens (make install) or set hook= in "
                         "runtime.conf",
                         c->hook, strerror(-r));
                return r;
        }
        if (c->socket[0]) {
                args[n++] = "--socket";
                args[n++] = c->socket;
        }
        if (c->timensd[0]) {
                args[n++] = "--timensd";
                args[n++] = c->timensd;
        }
        r = tns_oci_config_add_hook_entry(config, "createRuntime", c->hook, args, err);
        if (r >= 0)
                r = tns_oci_config_add_hook_entry(config, "poststop", c->hook, args, err);
        return r;
}

static bool names_has(json_object *names, const char *name) {
        for (size_t i = 0; json_object_is_type(names, json_type_array) && i < json_object_array_length(names); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(names, i)), name) == 0)
                        return true;
        return false;
}

/* The agent mode appends its SCMP_ACT_NOTIFY rules to the bundle's own
 * profile; a rule there that allows one of those syscalls (docker's
 * default profile allows clock_gettime, execve, ...) shadows ours, and
 * the container would run with the host's clocks without a word. So that
 * is refused, naming the first one. */
static int check_agent_profile(json_object *config, char *err) {
        _cleanup_json_ json_object *ours = NULL;
        json_object *linux_, *seccomp, *rules;
        int r;

        if (!json_object_object_get_ex(config, "linux", &linux_) ||
            !json_object_object_get_ex(linux_, "seccomp", &seccomp) ||
            !json_object_object_get_ex(seccomp, "syscalls", &rules) || !json_object_is_type(rules, json_type_array))
                return 0;
        r = tns_oci_seccomp_syscalls(&ours);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(rules); i++) {
                json_object *rule = json_object_array_get_idx(rules, i), *action, *names;

                if (!json_object_object_get_ex(rule, "action", &action) ||
                    strcmp(json_object_get_string(action) ?: "", "SCMP_ACT_ALLOW") != 0 ||
                    !json_object_object_get_ex(rule, "names", &names))
                        continue;
                for (size_t j = 0; j < json_object_array_length(ours); j++) {
                        json_object *our_names;

                        if (!json_object_object_get_ex(json_object_array_get_idx(ours, j), "names", &our_names))
                                continue;
                        for (size_t k = 0; k < json_object_array_length(our_names); k++) {
                                const char *n = json_object_get_string(json_object_array_get_idx(our_names, k));

                                if (names_has(names, n)) {
                                        snprintf(err, TNS_OCI_ERR_MAX,
                                                 "mode = agent: the container's seccomp profile allows %s, which "
                                                 "would bypass timensd; use mode = hook, or run it without that "
                                                 "profile (docker: --security-opt seccomp=unconfined)",
                                                 n);
                                        return -EEXIST;
                                }
                        }
                }
        }
        return 0;
}

int runtime_bundle_edit(const struct runtime_args *a, const struct runtime_conf *c,
                        char ret_name[static TNS_NS_NAME_MAX + 1], const struct tns_logger *log) {
        _cleanup_json_ json_object *config = NULL;
        struct tns_oci_env env;
        struct tns_oci_request req = {};
        char err[TNS_OCI_ERR_MAX] = "";
        int r;

        /* A bundle the runtime cannot read either: it says why itself. */
        if (tns_oci_bundle_read(a->bundle, &config, err) < 0) {
                tns_log(log, LOG_DEBUG, "Not editing the bundle: %s", err);
                return 0;
        }
        r = tns_oci_env_parse(tns_oci_config_env(config), &env, err);
        if (r < 0)
                return tns_log_errno(log, LOG_ERR, r, "Container %s: %s", a->id ?: "?", err);
        if (env.n_set == 0 && !tns_oci_has_annotations(annotations(config)))
                return 0;
        req = env.req;
        r = tns_oci_annotations_parse(annotations(config), &req, err);
        if (r < 0)
                return tns_log_errno(log, LOG_ERR, r, "Container %s: %s", a->id ?: "?", err);
        r = check_name(a, &req, log);
        if (r < 0)
                return r;
        r = tns_oci_env_annotate(config, &env, err);
        if (r >= 0)
                r = c->mode == RUNTIME_MODE_AGENT ? check_agent_profile(config, err) : add_hooks(config, c, err);
        if (r >= 0 && c->mode == RUNTIME_MODE_AGENT)
                r = tns_oci_config_add_agent(config, c->agent_socket, NULL, err);
        if (r < 0)
                return tns_log_errno(log, LOG_ERR, r, "Container %s: %s", a->id ?: "?", err[0] ? err : "%m");
        r = tns_oci_bundle_write(a->bundle, config, err);
        if (r < 0)
                return tns_log_errno(log, LOG_ERR, r, "Container %s: %s", a->id ?: "?", err);
        if (req.name[0])
                snprintf(ret_name, TNS_NS_NAME_MAX + 1, "%s", req.name);
        else
                tns_oci_default_name(a->id, ret_name);
        return 1;
}
