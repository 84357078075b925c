/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl: clocks of their own for programs and containers. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "timensctl.h"
#include "util.h"
#include "version.h"

const struct tns_logger timensctl_log = {tns_log_stderr, (void *) "timensctl", LOG_INFO};

static void help(void) {
        printf("Usage: timensctl [--socket PATH] [--json] [COMMAND ...]\n"
               "\n"
               "Give programs clocks of their own: CLOCK_MONOTONIC, CLOCK_BOOTTIME and\n"
               "CLOCK_REALTIME moved by per-namespace offsets, from user space.\n"
               "\n"
               "Commands:\n"
               "  run [OPTIONS] -- COMMAND [ARGS...]\n"
               "                 run COMMAND in a new time namespace (see 'timensctl run --help')\n"
               "  create NAME [OFFSETS] [--grant G]\n"
               "                 create an empty namespace in timensd\n"
               "  destroy NAME|ID [--force]\n"
               "                 destroy a namespace (--force: detach one that has processes)\n"
               "  set NAME|ID OFFSETS [--allow-backwards]\n"
               "                 change offsets live: the clock becomes the host's plus OFFSET\n"
               "  show NAME|ID   offsets, clocks, processes and counters of a namespace\n"
               "  list [--names] the namespaces timensd serves (the default command)\n"
               "  status [NAME|ID]\n"
               "                 show NAME, or without it list\n"
               "  export NAME|ID [--output FILE]\n"
               "                 the clock state of a namespace, as JSON\n"
               "  import FILE|- [--name NAME] [--grant G]\n"
               "                 a namespace whose clocks continue from an exported state\n"
               "  stats          counters and latency of timensd\n"
               "  wait NAME|ID [--timeout SEC]\n"
               "                 wait until a namespace is gone\n"
               "  attach PID [OFFSETS] [--name NAME | --join NAME] [--no-tree]\n"
               "                 move a running process tree into a namespace\n"
               "  oci-config BUNDLE [OFFSETS] [--name NAME] [--agent]\n"
               "                 switch timens on in an OCI bundle's config.json (runc, crun)\n"
               "  oci-config --print-seccomp-profile [OFFSETS]\n"
               "                 the seccomp profile of the agent mode (podman --security-opt)\n"
               "\n"
               "OFFSETS: --monotonic OFFSET --boottime OFFSET --realtime OFFSET|DATE\n"
               "\n"
               "Options:\n"
               "  --socket PATH  timensd's socket (default $TIMENS_SOCKET or /run/timens/timensd.sock)\n"
               "  --json         read commands print JSON\n"
               "  -h --help      show this help\n"
               "  --version      show the version\n"
               "\n"
               "Without a command, timensctl lists the namespaces, as 'timensctl list' does.\n"
               "\n"
               "Exit status: 0 on success, 1 on failure (also an unknown command or option);\n"
               "run has its own (see 'timensctl run --help').\n"
               "See timensctl(1).\n");
}

static void status_help(void) {
        printf("Usage: timensctl status [--json] [NAME|ID]\n"
               "\n"
               "Show a namespace as 'timensctl show' does, or without NAME|ID list them all\n"
               "as 'timensctl list' does.\n");
}

/* status: a human view, as systemctl's; one namespace, or all of them. */
static int verb_status(int argc, char *argv[], struct ctl_options *o) {
        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--") == 0)
                        break;
                else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
                        return status_help(), 0;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0 || (argv[i][0] == '-' && strcmp(argv[i], "-") != 0))
                        continue;
                if (i > 1 && strcmp(argv[i - 1], "--socket") == 0)
                        continue;
                return verb_show(argc, argv, o);
        }
        return verb_list(argc, argv, o);
}

struct verb {
        const char *name;
        ctl_verb_fn fn;
};

static const struct verb verbs[] = {
        {"run", verb_run},       {"create", verb_create}, {"destroy", verb_destroy}, {"set", verb_set},
        {"show", verb_show},     {"list", verb_list},     {"export", verb_export},   {"import", verb_import},
        {"stats", verb_stats},   {"wait", verb_wait},     {"attach", verb_attach},   {"oci-config", verb_oci_config},
        {"status", verb_status},
};

/* Global options before the command; '+' stops at the command's name. */
static int parse_global(int argc, char *argv[], struct ctl_options *o) {
        static const struct option options[] = {CTL_COMMON_OPTIONS, {"version", no_argument, NULL, 'V'}, {}};
        int c;

        optind = 0;
        opterr = 1;
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                if (ctl_common_option(c, o))
                        continue;
                if (c == 'h')
                        return help(), 0;
                if (c == 'V')
                        return puts("timensctl " TNS_VERSION), 0;
                fprintf(stderr, "Try 'timensctl --help'.\n");
                return -EINVAL;
        }
        return optind;
}

int main(int argc, char *argv[]) {
        struct ctl_options o = {};
        int first;

        first = parse_global(argc, argv, &o);
        if (first <= 0)
                return ctl_exit(first);
        /* Bare, it shows what there is, as systemctl and machinectl do. */
        if (first >= argc)
                return verb_list(1, (char *[]){(char *) "list", NULL}, &o);
        if (strcmp(argv[first], "help") == 0) {
                help();
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (strcmp(argv[first], verbs[i].name) == 0)
                        return verbs[i].fn(argc - first, argv + first, &o);
        tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "Unknown command '%s'. Try 'timensctl --help'.", argv[first]);
        return ctl_exit(-EINVAL);
}
