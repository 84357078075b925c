/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/uptime, /proc/stat's btime and sysinfo()'s uptime as a time
 * namespace sees them: pure functions over the host's text and the
 * namespace's clocks, used by supervisor-procfs.c. The kernel's own time
 * namespaces shift these by the boottime offset (fs/proc/uptime.c,
 * fs/proc/stat.c, kernel/sys.c do_sysinfo); we do the same, and keep btime
 * consistent with our realtime offset too (see tns_procfs_btime). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The longest /proc/uptime line: two 20-digit seconds, ".nn" each. */
#define TNS_UPTIME_MAX 64

/* /proc/uptime for a namespace whose CLOCK_BOOTTIME reads *boottime: the
 * kernel's "%lu.%02lu %lu.%02lu\n" (hundredths truncated), the idle time
 * copied from the host's line (the kernel does not shift it). Returns the
 * length written (NUL-terminated), -EINVAL if host_uptime is not an uptime
 * line or boottime is negative, -ENOBUFS if size is too small. */
ssize_t tns_procfs_uptime(const struct timespec *boottime, const char *host_uptime, char *buf, size_t size);

/* The boot time as a wall-clock second, for a namespace whose clocks read
 * *realtime and *boottime at one instant: floor(realtime - boottime). On
 * the host this is the kernel's getboottime64(); in a kernel time
 * namespace (realtime not shifted) it is the host's minus the boottime
 * offset, as fs/proc/stat.c's timens_sub_boottime() makes it; with our
 * realtime offset it moves by that offset too, so that btime + uptime is
 * still "now" as `date` shows it there. -ERANGE on overflow. */
int tns_procfs_btime(const struct timespec *realtime, const struct timespec *boottime, int64_t *ret);

/* Copies the host's /proc/stat (len bytes, need not be NUL-terminated)
 * into buf with the value of its "btime" line replaced by btime; the other
 * lines are copied byte for byte. Returns the length written
 * (NUL-terminated), -EINVAL if there is no well-formed btime line,
 * -ENOBUFS if size is too small. */
ssize_t tns_procfs_stat(const char *host_stat, size_t len, int64_t btime, char *buf, size_t size);

/* sysinfo()'s uptime for a namespace whose CLOCK_BOOTTIME reads *boottime:
 * whole seconds rounded up, as kernel/sys.c do_sysinfo() has it. */
long tns_sysinfo_uptime(const struct timespec *boottime);

/* The mount points of the proc filesystems in a /proc/PID/mountinfo text
 * (proc(5)), where the files are to be covered: each into ret[i] (PATH_MAX
 * bytes, octal escapes undone), at most max, duplicates once. A mount
 * that is shared (an optional field "shared:N") is left out: a mount over
 * it would propagate to its peers, the host's /proc among them. Returns
 * the count; lines that do not parse are skipped. */
size_t tns_mountinfo_proc_dirs(const char *mountinfo, char (*ret)[4096], size_t max);

/* /proc/PID/timens_offsets as the kernel shows it (fs/proc/base.c,
 * proc_timens_show_offsets: one "NAME SECONDS NANOSECONDS" line per
 * clock, "monotonic" and "boottime", or the clock's number as written):
 * the monotonic and boottime offsets of the kernel time namespace the
 * file names, in nanoseconds, into ret[TNS_CLASS_MONOTONIC] and
 * ret[TNS_CLASS_BOOTTIME] (ret[TNS_CLASS_REALTIME] is 0: the kernel has
 * none). len bytes, need not be NUL-terminated. -EINVAL for a line that
 * does not parse or names another clock, -ERANGE past KTIME_SEC_MAX. */
int tns_timens_offsets_parse(const char *text, size_t len, int64_t ret[3]);
