/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Calls that set a file's times to "now": utimensat (and futimens) with no
 * times or with UTIME_NOW, utimes, futimesat and utime with no times. The
 * kernel would stamp the host's realtime; in a namespace whose realtime is
 * shifted, `touch f` then `stat f` would show the host's date while `date`
 * shows the namespace's (CPython's test_os checks that os.utime(f) sets
 * time.time()). The supervisor runs such a call with the namespace's "now"
 * written as explicit times (lib/supervisor/supervisor-wait.c); this is
 * the pure part: which calls, where their times are, what they become. */
#pragma once

#include <stdint.h>
#include <time.h>

#include "syscall-table.h"
#include "wait-convert.h"

/* Whether call `sys` sets file times: 0 and *ret (the times' argument,
 * their layout, the realtime class, .now), or -ENOENT. */
int tns_file_times_classify(enum tns_sys sys, const uint64_t args[6], struct tns_wait_spec *ret);

/* What the kernel must be given instead of `in` (the caller's times,
 * tns_wait_size(kind) bytes; NULL for a NULL pointer: both "now"), with
 * `now` the namespace's realtime: every "now" becomes it, UTIME_OMIT and
 * explicit times stay. 0 and *out; -ENOENT if nothing is "now" (the call
 * runs as it is); -EINVAL for times the kernel refuses (it fails the call
 * itself). */
int tns_file_times_now(enum tns_wait_kind kind, const void *in, const struct timespec *now, void *out);
