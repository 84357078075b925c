/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl: clocks of their own for programs and containers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "timensctl.h"
#include "util.h"

const struct tns_logger timensctl_log = {tns_log_stderr, (void *) "timensctl", LOG_INFO};

static void help(void) {
        printf("Usage: timensctl [--help] [--version] COMMAND ...\n"
               "\n"
               "Give programs clocks of their own: CLOCK_MONOTONIC, CLOCK_BOOTTIME and\n"
               "CLOCK_REALTIME moved by per-namespace offsets, from user space.\n"
               "\n"
               "Commands:\n"
               "  run [OPTIONS] -- COMMAND [ARGS...]\n"
               "                 run COMMAND in a new time namespace (see 'timensctl run --help')\n"
               "\n"
               "Options:\n"
               "  -h --help      show this help\n"
               "  --version      show the version\n"
               "\n"
               "See timensctl(1).\n");
}

struct verb {
        const char *name;
        int (*fn)(int argc, char *argv[]);
};

static const struct verb verbs[] = {
        {"run", verb_run},
};

int main(int argc, char *argv[]) {
        if (argc < 2) {
                help();
                return EXIT_RUN_INTERNAL;
        }
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
                help();
                return 0;
        }
        if (strcmp(argv[1], "--version") == 0) {
                printf("timensctl " TIMENS_VERSION "\n");
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (strcmp(argv[1], verbs[i].name) == 0)
                        return verbs[i].fn(argc - 1, argv + 1);
        tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "Unknown command '%s'. Try 'timensctl --help'.", argv[1]);
        return EXIT_RUN_INTERNAL;
}
