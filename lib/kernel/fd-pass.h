/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fds over a Unix socket (SCM_RIGHTS). tns_send_fd/tns_recv_fd: one fd
 * with one byte of data, how a child hands its seccomp listener to its
 * parent. tns_cmsg_take_fds: the one receiver of the fds that came with a
 * message (control connections, the seccomp agent, the keeper's fd
 * store). The client sends its request fds itself (lib/client/client.c). */
#pragma once

#include <sys/socket.h>

/* 0 or -errno; async-signal-safe (a child between fork and exec). */
int tns_send_fd(int sock, int fd);
/* The fd (O_CLOEXEC), -EBADMSG if the message carried none, or -errno. */
int tns_recv_fd(int sock);

/* Moves the fds of every SCM_RIGHTS header of mh (received with
 * MSG_CMSG_CLOEXEC) into fds[n..max): those past max are closed, so that
 * a peer that sends more than is asked for leaves none open here.
 * Returns the new count. */
unsigned tns_cmsg_take_fds(struct msghdr *mh, int fds[], unsigned n, unsigned max);
