/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Member fds timensd takes (pidfd_getfd) or is sent (SCM_RIGHTS), looked
 * at without touching their filesystem, and closed where a close may
 * block (lib/core/fd-link.h says why). */
#pragma once

#include <sys/types.h>

#include "fd-link.h"

/* The kind of fd `fd` of process pid (0: ours), by its /proc link;
 * -errno if there is no such fd. */
int tns_fd_kind(pid_t pid, int fd);

/* A closer: a thread that closes fds one by one, so that a close that
 * waits (a FLUSH a FUSE server never answers) holds only it. *ret_wfd is
 * the pipe the fds go into; the thread owns the rest and outlives it. */
int tns_fd_closer_start(int *ret_wfd);
/* fd closed on a thread of its own, for a rare close with no closer at
 * hand; -errno (fd still open) if no thread could start. */
int tns_fd_close_detached(int fd);
/* fd closed by the closer of wfd: 0, or -errno with fd still open (no
 * closer, or its pipe full: one close has waited for 1024 more). */
int tns_fd_closer_close(int wfd, int fd);
