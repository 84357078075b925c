/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the supervisor reads about a target from /proc. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The text of a small file (/proc, /sys) in buf, NUL-terminated: at most
 * size - 1 bytes, a longer file is cut there (a caller that must know
 * compares the length with size - 1). The length, or -errno. The one
 * reader of such files: interrupted reads are resumed here. */
ssize_t tns_read_text(const char *path, char *buf, size_t size);

struct tns_proc_status {
        pid_t tgid;
        pid_t ppid;
        uint64_t cap_eff;
        uid_t euid; /* "Uid:"'s second field, in our user namespace; (uid_t) -1 if absent */
        gid_t egid; /* "Gid:"'s, the same way */
        unsigned seccomp_filters; /* "Seccomp_filters:" (Linux 5.9), 0 if absent */
        int seccomp_mode; /* "Seccomp:": 0 none, 1 strict, 2 filter; 0 if absent */
        unsigned threads; /* "Threads:", 0 if absent */
};

/* Parses /proc/PID/status (PID may be a thread id). -ESRCH if gone. */
int tns_proc_status(pid_t pid, struct tns_proc_status *ret);

/* Parses the text of a status file; exposed for unit tests and fuzzing. */
int tns_proc_status_parse(const char *text, struct tns_proc_status *ret);

/* The value of the first entry of type `type` in the kernel's copy of
 * PID's auxv (/proc/PID/auxv: what the kernel gave its exec, whatever the
 * program did to its stack since): 0, -ENOENT if there is none, -errno. */
int tns_proc_auxv(pid_t pid, uint64_t type, uint64_t *ret);

/* Whether processes a and b share their memory (kcmp KCMP_VM): a vfork
 * or CLONE_VM child and its parent. */
bool tns_proc_shares_vm(pid_t a, pid_t b);

/* /proc/PID/mem opened for reading and writing: the process's memory as it
 * is at the open (the fd stays with that mm, whatever PID becomes), and
 * writes that reach its read-only private mappings (FOLL_FORCE makes a
 * private copy of the page), which process_vm_writev does not. */
int tns_proc_open_mem(pid_t pid);

/* The NUL-terminated string at addr in PID's memory, into buf (at most
 * size bytes, its NUL included): its length, -EFAULT where it is not
 * readable, -ENAMETOOLONG if no NUL comes within size, -errno. */
ssize_t tns_proc_read_string(pid_t pid, uint64_t addr, char *buf, size_t size);

/* Calls fn for each child process of every thread of tgid
 * (/proc/TGID/task/TID/children). Stops at and returns the first negative
 * value fn returns. */
int tns_proc_for_each_child(pid_t tgid, int (*fn)(pid_t child, void *userdata), void *userdata);

/* Whether /proc/PID/maps has a mapping whose path contains `needle`:
 * 1, 0, or -errno. */
int tns_proc_has_mapping(pid_t pid, const char *needle);

/* The start (and the file's inode) of the mapping of `path_part` at file
 * offset `offset` in /proc/PID/maps: 0, -ENOENT if none, or -errno.
 * ret_ino may be NULL. The path is what the process chose to name its
 * file: never proof of what the file is (tns_proc_find_file_mapping). */
int tns_proc_find_mapping(pid_t pid, const char *path_part, uint64_t offset, uint64_t *ret_addr, uint64_t *ret_ino);

/* The starts of every such mapping (of path_part at file offset
 * offset), the first max of them into addrs in the order of the maps:
 * how many there are (may exceed max), or -errno. */
int tns_proc_find_mappings(pid_t pid, const char *path_part, uint64_t offset, uint64_t *addrs, unsigned max);

/* The start and end (ret_end may be NULL) of the kernel's special mapping
 * `name` ("[vdso]", "[vvar]") in /proc/PID/maps: a line whose path is
 * exactly name, which a process cannot forge (a file's path is absolute,
 * a named anonymous mapping shows as "[anon:...]"). 0, -ENOENT if none,
 * -E2BIG past max_lines mappings (0: no bound), or -errno. */
int tns_proc_special_mapping(pid_t pid, const char *name, unsigned max_lines, uint64_t *ret_start, uint64_t *ret_end);

/* The start of the first mapping at file offset `offset` in /proc/PID/maps
 * whose file `match` accepts, judged by the device and inode the kernel
 * writes there (a process names its files as it likes, but cannot put a
 * file on a filesystem it has no access to). *ret_match gets match's
 * non-NULL answer. 0, -ENOENT if none, -E2BIG past max_lines mappings
 * (0: no bound), or -errno. */
int tns_proc_find_file_mapping(pid_t pid, uint64_t offset, unsigned max_lines,
                               void *(*match)(dev_t dev, uint64_t ino, void *userdata), void *userdata,
                               uint64_t *ret_addr, void **ret_match);

/* The one line parser behind it, pure: 0 and the fields of a
 * /proc/PID/maps line, or -EBADMSG. */
int tns_proc_parse_maps_line(const char *line, uint64_t *ret_start, uint64_t *ret_offset, dev_t *ret_dev,
                             uint64_t *ret_ino);

/* The start time of a process (field 22 of /proc/PID/stat, clock ticks
 * since boot): with its pid, it names the process for good. */
int tns_proc_start_time(pid_t pid, uint64_t *ret);
