/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OCI side of timens, pure: the container state a runtime hands a
 * createRuntime hook (on stdin) or a seccomp agent (with the listener fd,
 * runtime-spec config-linux.md "listenerPath"), the clocks a container
 * asks for (annotations, listenerMetadata, linux.timeOffsets), and the
 * edits `timensctl oci-config` makes to a bundle's config.json.
 *
 * Nothing a runtime sends is matched as text: runc sends compact JSON
 * (ociVersion 1.0.2-dev), crun pretty-printed JSON (ociVersion 0.2.0);
 * both are parsed with json-c and read by key. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "json-util.h"
#include "ns-model.h"
#include "offset-parse.h"
#include "offsets-page.h"

/* Our annotations, and the prefix the podman hooks.d file matches. */
#define TNS_OCI_ANNOTATION_PREFIX "org.timens."
#define TNS_OCI_ANNOTATION_NAME "org.timens.name"
#define TNS_OCI_DEFAULT_AGENT_SOCKET "/run/timens/seccomp-agent.sock"
/* The whole payload (state or agent message) a runtime may send us. */
#define TNS_OCI_MAX_STATE (64 * 1024)
#define TNS_OCI_ERR_MAX 256

/* A container's state (runtime-spec runtime.md "State"), or the seccomp
 * agent's ContainerProcessState around it. Strings point into root. */
struct tns_oci_state {
        const char *id;
        const char *bundle; /* NULL if absent */
        pid_t pid; /* the host pid of the container's init; 0 if absent */
        json_object *annotations; /* NULL if none */
        /* The agent message only: */
        bool agent;
        int seccomp_fd_index; /* index of "seccompFd" in "fds"; -1 if absent */
        const char *metadata; /* listenerMetadata; NULL if none */
        json_object *root;
};

/* Parses a state or an agent message. -EINVAL with a message in err
 * (TNS_OCI_ERR_MAX bytes) naming what is missing or wrong. Call
 * tns_oci_state_done() afterwards in any case. */
int tns_oci_state_parse(const char *text, size_t len, struct tns_oci_state *ret, char *err);
void tns_oci_state_done(struct tns_oci_state *s);

/* What a container asks for: the clocks and the namespace's name. */
struct tns_oci_request {
        struct tns_clock_arg clocks[TNS_CLASS_MAX];
        char name[TNS_NS_NAME_MAX + 1]; /* "" if not given */
        /* org.timens.faketime (lib/core/faketime.h): a rate-capable
         * namespace, its rate (0: 1) and whether it stands frozen. */
        bool rated;
        uint64_t rate_mult;
        bool freeze;
};

/* listenerMetadata: "realtime=2030-01-01,monotonic=+1d,boottime=+2h,
 * name=web" — comma-separated KEY=VALUE, any order, each key at most once;
 * values in lib/core/offset-parse.c's syntax (so they cannot hold a comma).
 * Adds to ret what it names. -EINVAL with err. */
int tns_oci_metadata_parse(const char *text, struct tns_oci_request *ret, char *err);

/* The org.timens.* annotations of a state: realtime, monotonic, boottime,
 * name, faketime (libfaketime's FAKETIME: sets realtime, the rate and the
 * freeze; not with realtime); any other org.timens.* key is an error (a typo must not go
 * unnoticed). Overrides what ret holds already. -EINVAL with err. */
int tns_oci_annotations_parse(json_object *annotations, struct tns_oci_request *ret, char *err);

/* Whether a state carries any org.timens.* annotation. */
bool tns_oci_has_annotations(json_object *annotations);

/* linux.timeOffsets of a config.json ({"monotonic": {"secs": N,
 * "nanosecs": N}, "boottime": {...}}): ret[class] in ns, *ret_mask bit
 * 1 << class for each given. -EINVAL with err if malformed, -ERANGE if a
 * value does not fit. */
int tns_oci_time_offsets(json_object *config, int64_t ret[TNS_CLASS_MAX], unsigned *ret_mask, char *err);

/* A container id as a namespace name: the id if it is a valid name, else
 * "" (the namespace is then nameless). */
void tns_oci_default_name(const char *id, char ret[TNS_NS_NAME_MAX + 1]);

/* lib/oci/oci-config.c: config.json and seccomp profiles. */

/* The rules of the agent mode (linux.seccomp.syscalls entries), from the
 * one table through tns_filter_rules_foreach(): SCMP_ACT_NOTIFY with the
 * same argument conditions as our own filter, and SCMP_ACT_ERRNO(ENOSYS)
 * for the i386-only names (a 32-bit program must not read the host's
 * time silently). *ret is a new array. */
int tns_oci_seccomp_syscalls(json_object **ret);

/* A complete seccomp profile for the agent mode, as podman's
 * --security-opt seccomp=FILE and a bundle's linux.seccomp take it:
 * defaultAction SCMP_ACT_ALLOW, the x86 architectures, listenerPath,
 * listenerMetadata (if metadata is not NULL) and our rules. */
int tns_oci_seccomp_profile(const char *listener_path, const char *metadata, json_object **ret);

/* Adds the agent section to a config.json: a new linux.seccomp as above,
 * or, if the bundle has one, listenerPath, listenerMetadata and our rules
 * added to it (replacing ours from an earlier run: idempotent). -EEXIST
 * with err if it names another listenerPath. */
int tns_oci_config_add_agent(json_object *config, const char *listener_path, const char *metadata, char *err);

/* Adds the createRuntime hook (hook_path, once: an entry with that path is
 * replaced) and the org.timens.* annotations given (NULL: left as they
 * are), where text[class] and name are already validated. */
int tns_oci_config_add_hook(json_object *config, const char *hook_path, const char *const text[TNS_CLASS_MAX],
                            const char *name, char *err);
