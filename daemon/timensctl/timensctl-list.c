/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl list: the namespaces timensd serves, one line each. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rate.h"
#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl list [--json | --names]\n"
               "\n"
               "List the namespaces of timensd: id, name, origin (create, run, import, unshare,\n"
               "detached), parent, whether processes run in it, offsets and calls served.\n"
               "\n"
               "  --names   only each namespace's name (its id if it has none), one a line\n"
               "  --json    the daemon's reply as JSON\n");
}

struct row {
        uint64_t id, parent;
        char name[TNS_NS_NAME_MAX + 1];
        const char *origin;
        bool live;
        char offset[TNS_CLASS_MAX][40];
        char rate[64]; /* "1", "2", "0.5/frozen", "rt:2/frozen,mono:1" */
        uint64_t calls;
};

static int row_from_json(json_object *o, struct row *ret) {
        _cleanup_free_ struct tns_ns_view *v = malloc(sizeof(*v));

        if (!v || tns_ns_view_from_json(o, v) < 0)
                return -EBADMSG;
        *ret = (struct row){.id = v->id,
                            .parent = v->parent_id,
                            .origin = tns_origin_name(v->origin),
                            .live = v->live,
                            .calls = v->calls};
        snprintf(ret->name, sizeof(ret->name), "%s", v->name[0] ? v->name : "-");
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                (void) tns_offset_format(v->offset_ns[c], ret->offset[c], sizeof(ret->offset[c]));
        ctl_format_rates(v, true, ret->rate, sizeof(ret->rate));
        return 0;
}

static void print_row(const struct row *r, int name_width) {
        char parent[24] = "-";

        if (r->parent)
                snprintf(parent, sizeof(parent), "%" PRIu64, r->parent);
        printf("%4" PRIu64 " %-*s %-8s %-6s %-4s %-12s %-12s %-12s %-9s %" PRIu64 "\n", r->id, name_width, r->name,
               r->origin, parent, r->live ? "yes" : "no", r->offset[0], r->offset[1], r->offset[2], r->rate, r->calls);
}

/* For scripts and shell completion: what `show NAME|ID` takes. */
static int print_names(json_object *list) {
        size_t n = json_object_array_length(list);

        for (size_t i = 0; i < n; i++) {
                struct row r;

                if (row_from_json(json_object_array_get_idx(list, i), &r) < 0)
                        return tns_log_errno(&timensctl_log, LOG_ERR, EBADMSG, "timensd sent a list we cannot read");
                if (strcmp(r.name, "-") == 0)
                        printf("%" PRIu64 "\n", r.id);
                else
                        printf("%s\n", r.name);
        }
        return 0;
}

#define ARG_NAMES 0x300

/* 1 to go on, 0 after --help, or -errno. */
static int parse_args(int argc, char *argv[], struct ctl_options *o, bool *ret_names) {
        static const struct option options[] = {CTL_COMMON_OPTIONS, {"names", no_argument, NULL, ARG_NAMES}, {}};
        bool names = false;
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                if (ctl_common_option(c, o))
                        continue;
                if (c == 'h')
                        return help(), 0;
                if (c == ARG_NAMES)
                        names = true;
                else
                        return ctl_bad_option("list");
        }
        *ret_names = names;
        return 1;
}

static int print_table(json_object *list) {
        size_t n = json_object_array_length(list);
        _cleanup_free_ struct row *rows = calloc(n ? n : 1, sizeof(*rows));
        int width = 4;

        if (!rows)
                return tns_log_errno(&timensctl_log, LOG_ERR, ENOMEM, "Out of memory");
        for (size_t i = 0; i < n; i++) {
                if (row_from_json(json_object_array_get_idx(list, i), &rows[i]) < 0)
                        return tns_log_errno(&timensctl_log, LOG_ERR, EBADMSG, "timensd sent a list we cannot read");
                if ((int) strlen(rows[i].name) > width)
                        width = (int) strlen(rows[i].name);
        }
        if (n == 0) {
                printf("No namespaces.\n");
                return 0;
        }
        printf("%4s %-*s %-8s %-6s %-4s %-12s %-12s %-12s %-9s %s\n", "ID", width, "NAME", "ORIGIN", "PARENT", "LIVE",
               "MONOTONIC", "BOOTTIME", "REALTIME", "RATE", "CALLS");
        for (size_t i = 0; i < n; i++)
                print_row(&rows[i], width);
        printf("\n%zu namespace%s listed.\n", n, n == 1 ? "" : "s");
        return 0;
}

int verb_list(int argc, char *argv[], struct ctl_options *o) {
        struct tns_request req = {.op = TNS_OP_LIST};
        _cleanup_json_ json_object *res = NULL;
        json_object *list;
        bool names = false;
        int r;

        r = parse_args(argc, argv, o, &names);
        if (r <= 0)
                return ctl_exit(r);
        if (optind != argc)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "list takes no arguments"));
        if (names && o->json)
                return ctl_exit(
                        tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "--names and --json exclude each other"));
        r = ctl_request(o, &req, &res);
        if (r < 0)
                return ctl_exit(r);
        if (o->json) {
                ctl_print_json(res);
                return 0;
        }
        if (!json_object_object_get_ex(res, "namespaces", &list) || !json_object_is_type(list, json_type_array))
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EBADMSG, "timensd sent a list we cannot read"));
        return ctl_exit(names ? print_names(list) : print_table(list));
}
