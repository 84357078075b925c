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
#define TNS_OCI_ERR_MAX 1024

/* A container's state (runtime-spec runtime.md "State"), or the seccomp
 * agent's ContainerProcessState around it. Strings point into root. */
struct tns_oci_state {
        const char *id;
        const char *bundle; /* NULL if absent */
        const char *status; /* "creating", "created", "running"...; NULL if absent */
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
        /* org.timens.faketime-dont-fake-monotonic=1 (libfaketime's
         * FAKETIME_DONT_FAKE_MONOTONIC): the rate and the freeze are
         * REALTIME's alone; MONOTONIC and BOOTTIME run at the host's. */
        bool realtime_only;
        /* Which key set the realtime clock: realtime and faketime both
         * set it, and together are refused (helper-44: one silently won). */
        bool realtime_by_realtime, realtime_by_faketime;
};

/* The classes org.timens.faketime's rate and freeze apply to (bit
 * 1 << class). */
unsigned tns_oci_rate_classes(const struct tns_oci_request *req);
/* The rate and freeze a rated request (org.timens.faketime) gives each
 * class, as the registry takes them: mult (0: none, a frozen one without
 * a rate) and freeze (1, or -1 to leave it); rate 1 for the classes it
 * leaves out (faketime-dont-fake-monotonic), so that the namespace is
 * rate-capable whatever it asks. */
void tns_oci_request_rates(const struct tns_oci_request *req, uint64_t mult[TNS_CLASS_MAX], int freeze[TNS_CLASS_MAX]);

/* One setting of any source: key (key_len bytes, not terminated) is
 * realtime, monotonic, boottime or name; value in lib/core/offset-parse.c's
 * syntax, or a namespace name. Sets it in req (over what it held);
 * -EINVAL with err, prefixed by where ("annotation org.timens.realtime"). */
int tns_oci_request_set(struct tns_oci_request *req, const char *key, size_t key_len, const char *value,
                        const char *where, char *err);

/* A setting as written into a bundle for the hook and timensd: a date as
 * UTC ("2030-01-01T00:00:00Z"; they may run with another TZ than the one
 * who wrote it), an offset as given. -EINVAL if text does not parse,
 * -ERANGE if buf (or the date) is too small. */
int tns_oci_offset_text(enum tns_clock_class c, const char *text, char *buf, size_t size);

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

/* lib/oci/oci-env.c: the settings in a container's environment, for the
 * engines that set no annotations (docker 20.10 has no --annotation):
 * TIMENS_REALTIME, TIMENS_MONOTONIC, TIMENS_BOOTTIME, TIMENS_NAME,
 * TIMENS_FAKETIME, TIMENS_FAKETIME_DONT_FAKE_MONOTONIC, values as the
 * annotations take them. Any other TIMENS_* variable is an error (a
 * typo must not start a container with the host's clocks silently). */
#define TNS_OCI_ENV_PREFIX "TIMENS_"

/* The slots of tns_oci_env.text after the clock classes. */
enum {
        TNS_OCI_ENV_NAME = TNS_CLASS_MAX,
        TNS_OCI_ENV_FAKETIME,
        TNS_OCI_ENV_FAKETIME_DONT_FAKE_MONOTONIC,
        TNS_OCI_ENV_SLOTS,
};

struct tns_oci_env {
        struct tns_oci_request req;
        /* The texts as written into annotations (tns_oci_offset_text), for
         * each class, then the name and the FAKETIME spec; "" if not given. */
        char text[TNS_OCI_ENV_SLOTS][192]; /* a name is at most 128 */
        unsigned n_set; /* how many settings were given */
};

/* Reads process.env (an array of "KEY=VALUE" strings, or NULL). A key
 * given twice is an error, as is a value that does not parse. -EINVAL
 * with err. */
int tns_oci_env_parse(json_object *env, struct tns_oci_env *ret, char *err);

/* process.env of a config.json, or NULL if it has none (not an array). */
json_object *tns_oci_config_env(json_object *config);

/* Adds org.timens.* annotations for the settings of env that the config
 * has no annotation for (an annotation wins over the environment, key by
 * key). 0, -ENOMEM, or -EINVAL with err if "annotations" is not an
 * object. */
int tns_oci_env_annotate(json_object *config, const struct tns_oci_env *env, char *err);

/* lib/oci/oci-bundle.c: a bundle's config.json, read and written whole.
 * The write goes to a temporary file beside it, renamed over it (fsync'd,
 * the old file's mode kept): a runtime reads the old or the new, never
 * half of one, and a failure leaves the old in place. */
int tns_oci_bundle_read(const char *bundle, json_object **ret, char *err);
int tns_oci_bundle_write(const char *bundle, json_object *config, char *err);

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
 * replaced; hook_args, NULL-terminated or NULL, its options) and the
 * org.timens.* annotations given (NULL: left as they are), where
 * text[class] and name are already validated. */
int tns_oci_config_add_hook(json_object *config, const char *hook_path, const char *const *hook_args,
                            const char *const text[TNS_CLASS_MAX], const char *name, char *err);

/* Adds one hook entry to hooks.<stage> ("createRuntime", "poststop"):
 * {"path": hook_path, "args": [argv0, args..., stage]} with args a
 * NULL-terminated list (or NULL). An entry of that stage with that path is
 * replaced (idempotent). */
int tns_oci_config_add_hook_entry(json_object *config, const char *stage, const char *hook_path,
                                  const char *const *args, char *err);

/* What a container finds when the namespace it names exists already (a
 * shared org.timens.name, TIMENS_NAME, listenerMetadata's name=). */
struct tns_oci_existing {
        int64_t offset_ns[TNS_CLASS_MAX]; /* clock = host (at its rate) + offset */
        int64_t realtime_now_ns; /* what its CLOCK_REALTIME reads now */
        int64_t created_host_ns; /* the host's CLOCK_REALTIME when it was made; 0 if unknown */
        bool rate_capable;
        uint64_t rate_mult[TNS_CLASS_MAX]; /* now: 0 frozen */
        uint64_t run_mult[TNS_CLASS_MAX]; /* when running */
};

/* Whether a container that asks for req's clocks may join that namespace:
 * containers share a name to share their clocks, so every clock the
 * request sets must be the namespace's, else another container could take
 * one's clocks by taking its name first. A relative offset must be equal;
 * a date (realtime) must be where a namespace made for it reads now (the
 * date, plus at most the time since it was made at its rate); the rate,
 * or a freeze, the namespace's (a request without one asks for rate 1). A
 * request that sets nothing (the name alone) joins any. 0, or -EEXIST with
 * err naming the clock that differs. host_now_ns: the host's
 * CLOCK_REALTIME now. Pure. */
int tns_oci_join_check(const struct tns_oci_request *req, const struct tns_oci_existing *ns, int64_t host_now_ns,
                       char *err);
