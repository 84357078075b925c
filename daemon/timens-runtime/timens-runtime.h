/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timens-runtime: an OCI runtime with runc's command line that switches
 * timens on in a bundle and execs the real runtime (see
 * timens-runtime(8)). One file per job: -args (runc's command line),
 * -conf (runtime.conf), -bundle (the edit of config.json), -exec (the
 * real runtime), -log (errors where the engine looks for them). */
#pragma once

#include <limits.h>
#include <stdbool.h>

#include "log.h"
#include "ns-model.h" /* TNS_NS_NAME_MAX */

#define RUNTIME_CONF_ENV "TIMENS_RUNTIME_CONFIG"

/* The command line, as runc's: global options, the command, its options
 * and the container id. Our own options come first and are removed. */
struct runtime_args {
        char **argv; /* what the real runtime gets; argv[0] is replaced */
        int argc;
        const char *config_path; /* --timens-config; NULL: $TIMENS_RUNTIME_CONFIG or the default */
        const char *runtime; /* --timens-runtime; NULL: the configured one */
        bool help; /* --help alone, or --timens-help */
        const char *command; /* NULL if none */
        int command_at; /* its index in argv: what comes before are the global options */
        bool edit; /* create or run: the bundle is edited first */
        const char *bundle; /* create/run: --bundle, or "." */
        const char *id; /* create/run/exec: the container id, or NULL */
        const char *log_path; /* --log FILE, or NULL */
        bool log_json; /* --log-format json */
};

/* -EINVAL (logged) for an option of ours without its value. */
int runtime_args_parse(int argc, char **argv, struct runtime_args *ret, const struct tns_logger *log);

enum runtime_mode {
        RUNTIME_MODE_HOOK,
        RUNTIME_MODE_AGENT,
};

struct runtime_conf {
        char runtime[PATH_MAX]; /* a name looked up in PATH, or an absolute path */
        enum runtime_mode mode;
        char hook[PATH_MAX]; /* timens-oci-hook */
        char socket[PATH_MAX]; /* timensd's control socket, for the hook; "" for the hook's default */
        char timensd[PATH_MAX]; /* what the hook starts if none answers; "" for the hook's default */
        char agent_socket[PATH_MAX]; /* listenerPath in agent mode */
};

void runtime_conf_defaults(struct runtime_conf *ret);
/* Reads a runtime.conf over what c holds: "key = value" lines, '#'
 * comments. A missing file is 0 if !must_exist; any error is logged with
 * the file and line. */
int runtime_conf_load(const char *path, bool must_exist, struct runtime_conf *c, const struct tns_logger *log);
/* The same for one line (the parser, apart from the file). -EINVAL with
 * a message in err (256 bytes). */
int runtime_conf_line(const char *line, struct runtime_conf *c, char *err, size_t err_size);

/* create/run: the bundle's settings into config.json. 0 if it has none
 * (untouched), 1 if edited (ret_name: the namespace's name in timensd), -errno (logged) if the settings are wrong or
 * the edit failed (then untouched as well). */
int runtime_bundle_edit(const struct runtime_args *a, const struct runtime_conf *c,
                        char ret_name[static TNS_NS_NAME_MAX + 1], const struct tns_logger *log);

/* The real runtime's path into ret (PATH_MAX): -errno, logged. */
int runtime_find(const struct runtime_conf *c, const struct runtime_args *a, char *ret, const struct tns_logger *log);

/* Execs the runtime at path (runtime_find) with a->argv; returns only on
 * failure (logged). */
int runtime_exec(const char *path, struct runtime_args *a, const struct tns_logger *log);

/* The kernel time namespace the container's processes run in
 * (timens-runtime-timens.c): create/run of a container with settings
 * (name: its namespace's name in timensd, else NULL) enters the one the
 * namespace's processes are in, else unshares a fresh one for the
 * runtime's children; exec enters the container's. Never fatal: a kernel
 * without time namespaces, or no right to make one, leaves the processes
 * where they were (logged at debug level). */
void runtime_time_ns(const struct runtime_conf *c, const char *runtime, const struct runtime_args *a, const char *name,
                     const struct tns_logger *log);

/* The logger: "timens-runtime: ..." on stderr, and errors also into the
 * runtime's --log file, in its --log-format (containerd's shim reports
 * the last "error" entry of that file as the reason of a failed create:
 * that is what `docker run` prints). */
struct runtime_log {
        const char *path;
        bool json;
};
void runtime_log_fn(void *userdata, int level, int error, const struct tns_log_ctx *ctx, const char *fmt, va_list ap);
