/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timens-runtime: for `create` and `run`, the bundle's clock settings
 * become timens's hook (or agent) in config.json; then, for every
 * command, the real runtime is exec'd with the command line as it came
 * (see timens-runtime(8)). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h" /* TNS_RUNTIME_CONF_PATH: generated from the Makefile's SYSCONFDIR */
#include "timens-runtime.h"

static void help(void) {
        printf("Usage: timens-runtime [--timens-config FILE] [--timens-runtime NAME|PATH] RUNC-ARGS...\n"
               "\n"
               "An OCI runtime with runc's command line, for docker (--runtime), containerd\n"
               "(ctr --runc-binary, the CRI's BinaryName) and podman (--runtime). For create and\n"
               "run it reads the bundle's config.json: a container with org.timens.*\n"
               "annotations or TIMENS_REALTIME, TIMENS_MONOTONIC, TIMENS_BOOTTIME, TIMENS_NAME\n"
               "in its environment gets timens's hook (or seccomp agent) added; then the real\n"
               "runtime runs with the same arguments. Every other command, and a container\n"
               "without settings, goes to the real runtime untouched.\n"
               "\n"
               "  --timens-config FILE      the configuration (default $" RUNTIME_CONF_ENV " or\n"
               "                            " TNS_RUNTIME_CONF_PATH ")\n"
               "  --timens-runtime NAME|PATH the real runtime (default: runtime= there, or runc)\n"
               "  --timens-help             this help; --help alone shows it and the runtime's\n"
               "\n"
               "Bad settings fail create/run with exit status 1, a message on stderr and in\n"
               "the runtime's --log file, and the bundle as it was. See timens-runtime(8).\n"
               "\n");
        fflush(stdout);
}

int main(int argc, char *argv[]) {
        struct runtime_log rl = {};
        const struct tns_logger log = {runtime_log_fn, &rl, LOG_INFO};
        struct runtime_args a;
        struct runtime_conf c;
        char path[PATH_MAX], name[TNS_NS_NAME_MAX + 1] = "";
        const char *conf_path;
        int r, edited = 0;

        r = runtime_args_parse(argc, argv, &a, &log);
        if (r < 0)
                return EXIT_FAILURE;
        rl = (struct runtime_log){.path = a.log_path, .json = a.log_json};
        if (a.help) {
                help();
                /* --timens-help alone: ours only. */
                if (a.argc < 2)
                        return EXIT_SUCCESS;
        }
        runtime_conf_defaults(&c);
        conf_path = a.config_path ?: getenv(RUNTIME_CONF_ENV);
        r = runtime_conf_load(conf_path ?: TNS_RUNTIME_CONF_PATH, conf_path != NULL, &c, &log);
        if (r < 0)
                return EXIT_FAILURE;
        if (a.edit) {
                edited = runtime_bundle_edit(&a, &c, name, &log);
                if (edited < 0)
                        return EXIT_FAILURE;
        }
        if (runtime_find(&c, &a, path, &log) < 0)
                return EXIT_FAILURE;
        runtime_time_ns(&c, path, &a, edited > 0 ? name : NULL, &log);
        (void) runtime_exec(path, &a, &log);
        return EXIT_FAILURE;
}
