/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One fd over a Unix socket (SCM_RIGHTS) with one byte of data: how a
 * child hands its seccomp listener to its parent. The control protocol,
 * which carries fds with a request line, has its own (lib/client/client.c). */
#pragma once

/* 0 or -errno; async-signal-safe (a child between fork and exec). */
int tns_send_fd(int sock, int fd);
/* The fd (O_CLOEXEC), -EBADMSG if the message carried none, or -errno. */
int tns_recv_fd(int sock);
