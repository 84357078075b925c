/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl oci-config: switch timens on in an OCI bundle, by editing its
 * config.json in place (json-c, everything else kept; a temporary file
 * renamed over it), or print the seccomp profile of the agent mode. The
 * edits themselves are lib/oci/oci-config.c's. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include "clocks.h"
#include "oci.h"
#include "offset-parse.h"
#include "paths.h" /* TNS_OCI_HOOK_PATH: generated from the Makefile's LIBEXECDIR */
#include "timens-proto.h"
#include "timensctl.h"

struct oci_args {
        struct offset_args offsets;
        const char *name;
        bool agent;
        bool print_profile;
        const char *agent_socket; /* NULL: beside the control socket */
        const char *socket; /* timensd's control socket, when not the default */
        const char *hook_path;
        char agent_buf[4096];
        char text[TNS_CLASS_MAX][64]; /* the offsets as written into the bundle */
};

static void help(void) {
        printf("Usage: timensctl oci-config BUNDLE [OFFSETS] [--name NAME] [--agent]\n"
               "       timensctl oci-config --print-seccomp-profile [OFFSETS] [--name NAME]\n"
               "\n"
               "Switch timens on in the OCI bundle BUNDLE (its config.json is edited in place):\n"
               "by default with the createRuntime hook timens-oci-hook and org.timens.*\n"
               "annotations; with --agent with a linux.seccomp section whose listenerPath is\n"
               "timensd's seccomp agent socket. Running it again replaces what it wrote.\n"
               "A timensd on another socket (--socket, $TIMENS_SOCKET) is the hook's too\n"
               "(its --socket option).\n"
               "\n"
               "  --monotonic OFFSET     CLOCK_MONOTONIC offset (86400, +10d, -3h30m)\n"
               "  --boottime OFFSET      CLOCK_BOOTTIME offset\n"
               "  --realtime OFFSET|DATE CLOCK_REALTIME offset, or the date it reads now\n"
               "                         (2030-01-01, 2030-01-01T12:00:00Z, @1893456000)\n"
               "  --name NAME            the namespace's name (default: the container id)\n"
               "  --agent                the seccomp agent mode instead of the hook\n"
               "  --agent-socket PATH    listenerPath (default " TNS_OCI_DEFAULT_AGENT_SOCKET ",\n"
               "                         or seccomp-agent.sock beside --socket's, as timensd)\n"
               "  --hook-path PATH       the hook (default " TNS_OCI_HOOK_PATH ")\n"
               "  --print-seccomp-profile\n"
               "                         print the agent mode's seccomp profile (for podman's\n"
               "                         --security-opt seccomp=FILE) instead of editing a bundle\n"
               "\n"
               "See timensctl(1), OCI CONTAINERS.\n");
}

/* Checked as `timensctl run` checks them (the same parser and range). */
static int check_args(struct oci_args *a) {
        int64_t unused[TNS_CLASS_MAX];
        int r;

        r = offsets_resolve(&a->offsets, unused);
        if (r < 0)
                return r;
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (a->offsets.text[c] &&
                    tns_oci_offset_text(c, a->offsets.text[c], a->text[c], sizeof(a->text[c])) < 0)
                        return tns_log_errno(&timensctl_log, LOG_ERR, ERANGE, "--%s '%s' cannot be written as a date",
                                             tns_class_name(c), a->offsets.text[c]);
        return a->name ? ctl_check_name("--name", a->name) : 0;
}

/* listenerMetadata: "realtime=...,monotonic=...,name=..." (lib/oci/oci.h). */
static char *metadata(const struct oci_args *a) {
        char buf[512] = "";
        size_t n = 0;

        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (a->offsets.text[c])
                        n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s%s=%s", n ? "," : "", tns_class_name(c),
                                               a->text[c]);
        if (a->name)
                snprintf(buf + n, sizeof(buf) - n, "%sname=%s", n ? "," : "", a->name);
        return buf[0] ? strdup(buf) : NULL;
}

static int print_profile(const struct oci_args *a) {
        _cleanup_json_ json_object *p = NULL;
        _cleanup_free_ char *md = metadata(a);
        int r;

        r = tns_oci_seccomp_profile(a->agent_socket, md, &p);
        if (r < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to make the profile: %m");
        puts(json_object_to_json_string_ext(p, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
        return 0;
}

static int edit_bundle(const char *bundle, const struct oci_args *a) {
        _cleanup_free_ char *md = NULL;
        _cleanup_json_ json_object *config = NULL;
        char err[TNS_OCI_ERR_MAX] = "";
        const char *text[TNS_CLASS_MAX];
        int r;

        r = tns_oci_bundle_read(bundle, &config, err);
        if (r < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to read the bundle: %s", err);
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                text[c] = a->offsets.text[c] ? a->text[c] : NULL;
        if (a->agent) {
                md = metadata(a);
                r = tns_oci_config_add_agent(config, a->agent_socket, md, err);
        } else {
                const char *const args[] = {"--socket", a->socket, NULL};

                r = tns_oci_config_add_hook(config, a->hook_path, a->socket ? args : NULL, text, a->name, err);
        }
        if (r < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to edit %s/config.json: %s", bundle,
                                     err[0] ? err : "%m");
        r = tns_oci_bundle_write(bundle, config, err);
        if (r < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to write the bundle: %s", err);
        return 0;
}

enum {
        ARG_NAME = 0x300,
        ARG_AGENT,
        ARG_AGENT_SOCKET,
        ARG_HOOK_PATH,
        ARG_PRINT_PROFILE,
};

static int parse_args(int argc, char *argv[], struct ctl_options *o, struct oci_args *a) {
        static const struct option options[] = {
                CTL_COMMON_OPTIONS,
                CTL_OFFSET_OPTIONS,
                {"name", required_argument, NULL, ARG_NAME},
                {"agent", no_argument, NULL, ARG_AGENT},
                {"agent-socket", required_argument, NULL, ARG_AGENT_SOCKET},
                {"hook-path", required_argument, NULL, ARG_HOOK_PATH},
                {"print-seccomp-profile", no_argument, NULL, ARG_PRINT_PROFILE},
                {},
        };
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                if (ctl_common_option(c, o) || ctl_offset_option(c, &a->offsets))
                        continue;
                switch (c) {
                case 'h':
                        return help(), 0;
                case ARG_NAME:
                        a->name = optarg;
                        break;
                case ARG_AGENT:
                        a->agent = true;
                        break;
                case ARG_AGENT_SOCKET:
                        a->agent_socket = optarg;
                        break;
                case ARG_HOOK_PATH:
                        a->hook_path = optarg;
                        break;
                case ARG_PRINT_PROFILE:
                        a->print_profile = true;
                        break;
                default:
                        return ctl_bad_option("oci-config");
                }
        }
        return 1;
}

int verb_oci_config(int argc, char *argv[], struct ctl_options *o) {
        struct oci_args a = {.hook_path = TNS_OCI_HOOK_PATH};
        int r;

        r = parse_args(argc, argv, o, &a);
        if (r <= 0)
                return ctl_exit(r);
        /* A timensd on another socket: the hook talks to it, and its agent
         * socket is where that timensd puts it by default. */
        a.socket = o->socket ?: getenv("TIMENS_SOCKET");
        if (a.socket && (!*a.socket || strcmp(a.socket, TNS_DEFAULT_SOCKET) == 0))
                a.socket = NULL;
        if (!a.agent_socket && a.socket) {
                _cleanup_free_ char *copy = strdup(a.socket);

                if (!copy)
                        return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, ENOMEM, "Out of memory"));
                snprintf(a.agent_buf, sizeof(a.agent_buf), "%s/seccomp-agent.sock", dirname(copy));
                a.agent_socket = a.agent_buf;
        }
        if (!a.agent_socket)
                a.agent_socket = TNS_OCI_DEFAULT_AGENT_SOCKET;
        if (optind != argc - (a.print_profile ? 0 : 1))
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                              a.print_profile ? "--print-seccomp-profile takes no BUNDLE"
                                                              : "oci-config takes one BUNDLE directory"));
        if (offset_args_rated(&a.offsets))
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL,
                                              "oci-config takes no --rate, --freeze or --faketime: give the "
                                              "container the annotation org.timens.faketime (e.g. '+0 x2')"));
        r = check_args(&a);
        if (r < 0)
                return ctl_exit(r);
        if (a.print_profile)
                return ctl_exit(print_profile(&a));
        return ctl_exit(edit_bundle(argv[optind], &a));
}
