/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl export: a namespace's clock state as a JSON document (format
 * "timens-clock-state", proto/PROTOCOL.md) that `import` restores. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl export NAME|ID [--output FILE]\n"
               "\n"
               "Print the clock state of a namespace as JSON (or write it to FILE): what each\n"
               "clock reads now and its offset. 'timensctl import' makes a namespace whose\n"
               "MONOTONIC and BOOTTIME continue from these values, here or on another host.\n");
}

static int write_state(json_object *state, const char *path) {
        const char *text = json_object_to_json_string_ext(state, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(text);

        if (!path) {
                puts(text);
                return 0;
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, errno, "Failed to open '%s': %m", path);
        if (write(fd, text, len) != (ssize_t) len || write(fd, "\n", 1) != 1)
                return tns_log_errno(&timensctl_log, LOG_ERR, errno ?: EIO, "Failed to write '%s': %m", path);
        return 0;
}

int verb_export(int argc, char *argv[], struct ctl_options *o) {
        static const struct option options[] = {{"output", required_argument, NULL, 'o'}, CTL_COMMON_OPTIONS, {}};
        struct tns_request req = {.op = TNS_OP_EXPORT};
        _cleanup_json_ json_object *res = NULL;
        const char *output = NULL;
        json_object *state;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "ho:", options, NULL)) >= 0) {
                if (ctl_common_option(c, o))
                        continue; /* --json: the state is JSON anyway */
                if (c == 'h')
                        return help(), 0;
                if (c != 'o')
                        return ctl_exit(ctl_bad_option("export"));
                output = optarg;
        }
        if (optind != argc - 1)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "export takes one NAME or ID"));
        ctl_target(argv[optind], &req);
        r = ctl_request(o, &req, &res);
        if (r < 0)
                return ctl_exit(r);
        if (!json_object_object_get_ex(res, "state", &state))
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EBADMSG, "timensd sent no state"));
        return ctl_exit(write_state(state, output));
}
