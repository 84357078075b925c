/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "fd-check.h"
#include "util.h"

int tns_fd_kind(pid_t pid, int fd) {
        char path[64], link[128];
        ssize_t n;

        if (pid > 0)
                snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, fd);
        else
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        n = readlink(path, link, sizeof(link) - 1);
        if (n < 0)
                return negative_errno();
        link[n] = '\0';
        return (int) tns_fd_kind_parse(link);
}

static void *closer_main(void *userdata) {
        int rfd = (int) (intptr_t) userdata, fd;

        for (;;) {
                ssize_t n = read(rfd, &fd, sizeof(fd));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t) sizeof(fd))
                        break;
                close(fd);
        }
        close(rfd);
        return NULL;
}

static void *close_one(void *userdata) {
        close((int) (intptr_t) userdata);
        return NULL;
}

/* Detached: it may never come back (a close stuck for good); it frees
 * what is its own. */
static int start_detached(void *(*fn)(void *), int fd) {
        pthread_attr_t attr;
        pthread_t thread;
        int r;

        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = -pthread_create(&thread, &attr, fn, (void *) (intptr_t) fd);
        pthread_attr_destroy(&attr);
        return r;
}

int tns_fd_close_detached(int fd) {
        return start_detached(close_one, fd);
}

int tns_fd_closer_start(int *ret_wfd) {
        int p[2], r;

        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        /* 1024 fds waiting at most: a closer stuck for good holds no more. */
        (void) fcntl(p[1], F_SETPIPE_SZ, 4096);
        if (fcntl(p[1], F_SETFL, O_NONBLOCK) < 0) {
                r = negative_errno();
                goto fail;
        }
        r = start_detached(closer_main, p[0]);
        if (r < 0)
                goto fail;
        *ret_wfd = p[1];
        return 0;
fail:
        close(p[0]);
        close(p[1]);
        return r;
}

int tns_fd_closer_close(int wfd, int fd) {
        if (wfd < 0)
                return -EBADF;
        if (write(wfd, &fd, sizeof(fd)) != (ssize_t) sizeof(fd))
                return errno ? negative_errno() : -EAGAIN;
        return 0;
}
