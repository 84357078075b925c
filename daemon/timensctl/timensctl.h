/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "log.h"
#include "offsets-page.h"

/* Exit codes of `run`, as env(1) and chroot(1) have them. */
#define EXIT_RUN_INTERNAL 125
#define EXIT_RUN_CANNOT_EXEC 126
#define EXIT_RUN_NOT_FOUND 127

extern const struct tns_logger timensctl_log;

/* Offsets as given on the command line, before they are made effective. */
#define CTL_RATE_ARGS_MAX 8
struct offset_args {
        const char *text[TNS_CLASS_MAX]; /* NULL: not given */
        /* --rate [CLASS=]R, --freeze[=CLASS], --unfreeze[=CLASS] in the
         * order given ("" for a bare --freeze: every clock); n_* counts
         * them all, beyond the room too (refused). */
        const char *rate[CTL_RATE_ARGS_MAX], *freeze[CTL_RATE_ARGS_MAX], *unfreeze[CTL_RATE_ARGS_MAX];
        unsigned n_rate, n_freeze, n_unfreeze;
        const char *faketime; /* --faketime SPEC */
};

/* Whether a rate, freeze or faketime spec was given. */
static inline bool offset_args_rated(const struct offset_args *a) {
        return a->n_rate || a->faketime || a->n_freeze || a->n_unfreeze;
}

/* Parses and range-checks the offsets against the host's clocks now;
 * prints what is wrong and returns -EINVAL/-ERANGE. */
int offsets_resolve(const struct offset_args *a, int64_t ret[TNS_CLASS_MAX]);

/* The embedded supervisor: forks a detached process that serves
 * `listener` (taken) for namespace `name` with `offsets`, until every
 * process under the filter is gone. Returns once it serves. */
int embedded_supervisor_start(int listener, pid_t root_pid, const char *name, const int64_t offsets[TNS_CLASS_MAX],
                              unsigned ns_flags);

/* Options every command takes (before or after its name). */
struct ctl_options {
        const char *socket; /* NULL: $TIMENS_SOCKET, else the default */
        bool json; /* read commands: print the reply's JSON */
};

/* getopt_long entries and handling shared by the commands. */
#define CTL_ARG_SOCKET 0x200
#define CTL_ARG_JSON 0x201
#define CTL_COMMON_OPTIONS                                                                                             \
        {"socket", required_argument, NULL, CTL_ARG_SOCKET}, {"json", no_argument, NULL, CTL_ARG_JSON}, {              \
                "help", no_argument, NULL, 'h'                                                                         \
        }
/* Returns 1 if c was a common option (handled), 0 if not. */
int ctl_common_option(int c, struct ctl_options *o);

/* The option loop of a verb that takes only the common options: 1 to go
 * on (optind at its first argument), 0 after --help, or -errno. */
int ctl_parse_common_only(int argc, char *argv[], struct ctl_options *o, const char *verb, void (*help)(void));

/* --monotonic, --boottime, --realtime: as run takes them. */
#define CTL_ARG_MONOTONIC 0x210
#define CTL_ARG_BOOTTIME 0x211
#define CTL_ARG_REALTIME 0x212
#define CTL_ARG_RATE 0x213
#define CTL_ARG_FREEZE 0x214
#define CTL_ARG_FAKETIME 0x215
#define CTL_ARG_UNFREEZE 0x216
#define CTL_OFFSET_OPTIONS                                                                                             \
        {"monotonic", required_argument, NULL, CTL_ARG_MONOTONIC},                                                     \
                {"boottime", required_argument, NULL, CTL_ARG_BOOTTIME},                                               \
                {"realtime", required_argument, NULL, CTL_ARG_REALTIME},                                               \
                {"rate", required_argument, NULL, CTL_ARG_RATE}, {"freeze", optional_argument, NULL, CTL_ARG_FREEZE},  \
        {                                                                                                              \
                "faketime", required_argument, NULL, CTL_ARG_FAKETIME                                                  \
        }
int ctl_offset_option(int c, struct offset_args *a);
/* Logs "try --help" for an option getopt refused; returns -EINVAL. */
int ctl_bad_option(const char *verb);
/* 0 if name is a namespace name, else logs "Invalid WHAT 'name'" with
 * the rule (TNS_NS_NAME_RULE) and returns -EINVAL. */
int ctl_check_name(const char *what, const char *name);

typedef int (*ctl_verb_fn)(int argc, char *argv[], struct ctl_options *o);

int verb_run(int argc, char *argv[], struct ctl_options *o);
int verb_create(int argc, char *argv[], struct ctl_options *o);
int verb_destroy(int argc, char *argv[], struct ctl_options *o);
int verb_set(int argc, char *argv[], struct ctl_options *o);
int verb_show(int argc, char *argv[], struct ctl_options *o);
int verb_list(int argc, char *argv[], struct ctl_options *o);
int verb_export(int argc, char *argv[], struct ctl_options *o);
int verb_import(int argc, char *argv[], struct ctl_options *o);
int verb_stats(int argc, char *argv[], struct ctl_options *o);
int verb_wait(int argc, char *argv[], struct ctl_options *o);
int verb_attach(int argc, char *argv[], struct ctl_options *o);
int verb_oci_config(int argc, char *argv[], struct ctl_options *o);

/* timensctl-daemon-client.c: talking to timensd. Each function logs its
 * failure and returns it. */
struct tns_client;
struct tns_request;
struct tns_ns_view;
struct json_object;
/* quiet: no message when no daemon answers (run falls back then). */
int ctl_connect(const struct ctl_options *o, bool quiet, struct tns_client **ret);
/* Returns 0 and *ret_result, or <0 after printing the daemon's error:
 * -ENOENT (not-found), -EEXIST (exists), -EACCES (permission-denied),
 * -EPROTO (any other error reply), or the transport's -errno. */
int ctl_call(struct tns_client *c, struct tns_request *req, const int *fds, size_t n_fds,
             struct json_object **ret_result);
/* Connects; if nothing answers there (and we are root), starts timensd
 * on that socket first. */
int ctl_connect_or_start(const struct ctl_options *o, struct tns_client **ret);
/* connect + call, for commands that make one request. */
int ctl_request(const struct ctl_options *o, struct tns_request *req, struct json_object **ret_result);
/* NAME or ID (digits) into req. */
void ctl_target(const char *arg, struct tns_request *req);
/* A namespace's rates as show and list print them: "2", "2 (frozen)";
 * "realtime 2 (frozen), monotonic 1" when its classes differ (compact:
 * "2/frozen", "rt:2/frozen,mono:1"). */
struct tns_ns_view;
void ctl_format_rates(const struct tns_ns_view *v, bool compact, char *buf, size_t size);
/* --rate, --freeze, --unfreeze, --faketime into req (realtime too for
 * --faketime); prints what is wrong. */
int ctl_rates_to_request(const struct offset_args *a, struct tns_request *req);
/* Checks the offsets as `run` does and puts them into req (and the rates). */
int ctl_offsets_to_request(const struct offset_args *a, struct tns_request *req);
int ctl_parse_grant(const char *s, int *ret);
/* Pretty JSON on stdout. */
void ctl_print_json(struct json_object *o);
/* Prints the "namespace" member of a result as text (or JSON). */
int ctl_print_namespace(struct json_object *result, const struct ctl_options *o, bool details);
/* Exit status of the commands that are not run: 0 or 1. */
static inline int ctl_exit(int r) {
        return r < 0 ? 1 : 0;
}
