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

/* How long before now a predecessor's rewrite may have been made: its
 * death, a restart (systemd's RestartSec, the keeper's start) and a
 * loaded machine's delays. */
#define TNS_FILE_TIMES_RECOVER_NS (60 * INT64_C(1000000000))

/* Times read back from a slot of a wait page of ours (the caller made
 * sure of the page), `times` in `kind`'s layout: a "now" that a
 * predecessor of ours rewrote as explicit times and that was never let
 * run (it died first: kill -9, a crash), if every time not UTIME_OMIT is
 * valid and within TNS_FILE_TIMES_RECOVER_NS before `now` (the
 * namespace's realtime) or a second after it. What the program's call
 * was, as far as it can be told: each such time "now". 0, *ret_null
 * (a NULL pointer says it: every time "now", or a layout without
 * UTIME_NOW) and for utimensat *ret_in (UTIME_NOW and UTIME_OMIT,
 * tns_wait_size() bytes); -ENOENT for anything else (times of the
 * program's own, which run as they are). A program's own explicit time
 * that close to now next to a UTIME_NOW (touch -a -d now) is taken for
 * "now" too: the same second. */
int tns_file_times_recover(enum tns_wait_kind kind, const void *times, const struct timespec *now, void *ret_in,
                           bool *ret_null);
