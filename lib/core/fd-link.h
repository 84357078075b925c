/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What an fd is, from the text of its /proc/PID/fd/N link: readlink
 * names it without any call into the file's filesystem, where an fstat,
 * an ioctl or a close of a member's fd can wait for ever on a FUSE server
 * that member runs (helper-43, F2). */
#pragma once

enum tns_fd_kind {
        TNS_FD_OTHER, /* a file, a socket, anything else */
        TNS_FD_NS, /* nsfs: "time:[4026531834]", "mnt:[...]" */
        TNS_FD_PIDFD, /* "anon_inode:[pidfd]" */
        TNS_FD_TIMERFD, /* "anon_inode:[timerfd]" */
        TNS_FD_SECCOMP, /* a seccomp listener: "anon_inode:seccomp notify" */
};

/* The kind the link text names (NUL-terminated). Pure. */
enum tns_fd_kind tns_fd_kind_parse(const char *link);
