/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "log.h"
#include "offsets-page.h"

/* Exit codes of `run`, as env(1) and chroot(1) have them. */
#define EXIT_RUN_INTERNAL 125
#define EXIT_RUN_CANNOT_EXEC 126
#define EXIT_RUN_NOT_FOUND 127

#define TIMENS_VERSION "0.1.0"

extern const struct tns_logger timensctl_log;

/* Offsets as given on the command line, before they are made effective. */
struct offset_args {
        const char *text[TNS_CLASS_MAX]; /* NULL: not given */
};

/* Parses and range-checks the offsets against the host's clocks now;
 * prints what is wrong and returns -EINVAL/-ERANGE. */
int offsets_resolve(const struct offset_args *a, int64_t ret[TNS_CLASS_MAX]);

/* The embedded supervisor: forks a detached process that serves
 * `listener` (taken) for namespace `name` with `offsets`, until every
 * process under the filter is gone. Returns once it serves. */
int embedded_supervisor_start(int listener, const char *name, const int64_t offsets[TNS_CLASS_MAX]);

int verb_run(int argc, char *argv[]);
