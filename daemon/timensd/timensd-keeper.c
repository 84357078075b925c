/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The keeper: what systemd gives timensd (timensd.service), for a timensd
 * started without it — by hand, by `timensctl` or by the OCI hook when no
 * daemon answered. It holds an fd store (the sd_notify protocol: FDSTORE=1
 * with FDNAME=, FDSTOREREMOVE=1, READY=1, MAINPID=, on a NOTIFY_SOCKET of
 * its own), starts the worker (timensd --foreground) and, whenever the
 * worker dies, starts it again with the stored fds in LISTEN_FDS — so
 * the worker's code for restarts is the same with or without systemd.
 * SIGTERM or SIGINT to the keeper stops both. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "fd-pass.h"
#include "timensd.h"

#define KEEPER_MAX_FDS 32768
#define KEEPER_RESTART_USEC (10 * UINT64_C(1000))
/* A worker that dies this many times in a row before it is ready is not
 * started again: a crash loop would only burn the CPU. */
#define KEEPER_MAX_FAILED_STARTS 10

struct stored {
        char *name;
        int fd;
};

struct keeper {
        sd_event *event;
        struct tns_logger log;
        const char *exe;
        char *const *argv;
        char notify_path[108];
        int notify_fd;
        struct stored *fds;
        size_t n_fds;
        pid_t worker;
        bool ready_once, ready_now, stopping;
        unsigned failed_starts;
        int ready_fd; /* the parent of daemonize() waits on it */
        sd_event_source *restart;
        int exit_status;
};

static void stored_remove(struct keeper *k, const char *name) {
        size_t j = 0;

        for (size_t i = 0; i < k->n_fds; i++) {
                if (strcmp(k->fds[i].name, name) == 0) {
                        safe_close(k->fds[i].fd);
                        free(k->fds[i].name);
                        continue;
                }
                k->fds[j++] = k->fds[i];
        }
        k->n_fds = j;
}

static int stored_add(struct keeper *k, const char *name, int fd) {
        struct stored *n;

        if (k->n_fds >= KEEPER_MAX_FDS)
                return -ENOSPC;
        n = reallocarray(k->fds, k->n_fds + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        k->fds = n;
        n[k->n_fds].name = strdup(name);
        if (!n[k->n_fds].name)
                return -ENOMEM;
        n[k->n_fds++].fd = fd;
        return 0;
}

static int start_worker(struct keeper *k);

static int on_restart(sd_event_source *s, uint64_t usec, void *userdata) {
        struct keeper *k = userdata;

        k->restart = sd_event_source_disable_unref(k->restart);
        if (start_worker(k) < 0)
                return sd_event_exit(k->event, EXIT_FAILURE);
        return 0;
}

static void worker_gone(struct keeper *k, int status) {
        uint64_t now;

        tns_log(&k->log, k->stopping ? LOG_INFO : LOG_WARNING, "Worker %d %s %d%s", (int) k->worker,
                WIFSIGNALED(status) ? "killed by signal" : "exited with status",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
                k->stopping ? "" : ", starting it again with what it kept");
        k->worker = 0;
        if (k->stopping) {
                (void) sd_event_exit(k->event, k->exit_status);
                return;
        }
        /* One that never started (bad options, the socket taken) is not
         * retried: only restarts are the keeper's business. */
        if (!k->ready_once || (!k->ready_now && ++k->failed_starts >= KEEPER_MAX_FAILED_STARTS)) {
                tns_log(&k->log, LOG_ERR, "The worker died %u times before it was ready: giving up", k->failed_starts);
                (void) sd_event_exit(k->event, EXIT_FAILURE);
                return;
        }
        k->ready_now = false;
        if (sd_event_now(k->event, CLOCK_MONOTONIC, &now) < 0 ||
            /* An accuracy of 0 would be sd-event's default, 250 ms: the
             * restart came up to 260 ms after the death, and every call of
             * every namespace waited for it. */
            sd_event_add_time(k->event, &k->restart, CLOCK_MONOTONIC, now + KEEPER_RESTART_USEC,
                              KEEPER_RESTART_USEC / 10, on_restart, k) < 0)
                (void) sd_event_exit(k->event, EXIT_FAILURE);
}

/* Children: the worker, and (a subreaper) whatever its hand-over left. */
static int on_sigchld(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct keeper *k = userdata;
        int status;
        pid_t pid;

        while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
                if (pid == k->worker)
                        worker_gone(k, status);
        return 0;
}

static int on_stop(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct keeper *k = userdata;

        k->stopping = true;
        if (k->restart) {
                k->restart = sd_event_source_disable_unref(k->restart);
                return sd_event_exit(k->event, EXIT_SUCCESS);
        }
        if (k->worker > 0)
                (void) kill(k->worker, SIGTERM);
        else
                (void) sd_event_exit(k->event, EXIT_SUCCESS);
        return 0;
}

static void handle_line(struct keeper *k, const char *line, const char *fdname, int *fds, size_t n_fds) {
        if (strcmp(line, "READY=1") == 0) {
                k->ready_now = true;
                k->failed_starts = 0;
                if (!k->ready_once && k->ready_fd >= 0)
                        (void) !write(k->ready_fd, "", 1);
                k->ready_fd = safe_close(k->ready_fd);
                k->ready_once = true;
        } else if (strncmp(line, "MAINPID=", 8) == 0) {
                int pid = atoi(line + 8);

                /* A hand-over (SIGUSR2): the new image is the worker. */
                if (pid > 0)
                        k->worker = pid;
        } else if (strcmp(line, "FDSTORE=1") == 0) {
                for (size_t i = 0; i < n_fds; i++) {
                        if (stored_add(k, fdname ?: "stored", fds[i]) < 0) {
                                tns_log(&k->log, LOG_WARNING, "Cannot keep fd %s, dropping it", fdname ?: "stored");
                                safe_close(fds[i]);
                        }
                        fds[i] = -EBADF;
                }
        } else if (strcmp(line, "FDSTOREREMOVE=1") == 0 && fdname)
                stored_remove(k, fdname);
}

static int on_notify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct keeper *k = userdata;
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 253) + CMSG_SPACE(sizeof(struct ucred))];
        } control;
        char text[4096];
        struct iovec iov = {text, sizeof(text) - 1};
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)};
        int fds[253];
        unsigned n_fds;
        const struct ucred *cred = NULL;
        const char *fdname = NULL;
        ssize_t n;

        n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0)
                return 0;
        text[n] = '\0';
        n_fds = tns_cmsg_take_fds(&mh, fds, 0, ELEMENTSOF(fds));
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
                        cred = (const struct ucred *) CMSG_DATA(c);
        /* Only root (timensd) may store fds here. */
        if (cred && cred->uid == 0 && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                for (char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
                        if (strncmp(l, "FDNAME=", 7) == 0) {
                                static char name[256];
                                size_t len = strcspn(l + 7, "\n");

                                if (len < sizeof(name)) {
                                        memcpy(name, l + 7, len);
                                        name[len] = '\0';
                                        fdname = name;
                                }
                        }
                for (char *l = text, *end; l && *l; l = end ? end + 1 : NULL) {
                        end = strchr(l, '\n');
                        if (end)
                                *end = '\0';
                        handle_line(k, l, fdname, fds, n_fds);
                }
        }
        for (unsigned i = 0; i < n_fds; i++)
                safe_close(fds[i]);
        return 0;
}

static int start_worker(struct keeper *k) {
        pid_t pid = fork();

        if (pid < 0)
                return tns_log_errno(&k->log, LOG_ERR, errno, "Failed to start the worker: %m");
        if (pid == 0) {
                const char **names = calloc(k->n_fds + 1, sizeof(char *));
                int *fds = calloc(k->n_fds + 1, sizeof(int));

                if (!names || !fds)
                        _exit(127);
                for (size_t i = 0; i < k->n_fds; i++)
                        names[i] = k->fds[i].name, fds[i] = k->fds[i].fd;
                setenv("NOTIFY_SOCKET", k->notify_path, 1);
                (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
                fdstore_exec_with_fds(k->exe, k->argv, names, fds, k->n_fds, -EBADF);
        }
        k->worker = pid;
        return 0;
}

static int notify_socket(struct keeper *k) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        uint64_t rnd = 0;
        int fd, one = 1;
        socklen_t len;

        (void) !getrandom(&rnd, sizeof(rnd), 0);
        /* Abstract: nothing on disk to clean up, gone with us. */
        snprintf(k->notify_path, sizeof(k->notify_path), "@timensd-keeper/%d/%016" PRIx64, (int) getpid(), rnd);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        memcpy(sa.sun_path + 1, k->notify_path + 1, strlen(k->notify_path) - 1);
        len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(k->notify_path));
        if (bind(fd, (struct sockaddr *) &sa, len) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
                int r = negative_errno();

                close(fd);
                return r;
        }
        k->notify_fd = fd;
        return 0;
}

int keeper_run(const char *exe, char *const argv[], int ready_fd, const struct tns_logger *log) {
        struct keeper k = {.exe = exe, .argv = argv, .ready_fd = ready_fd, .log = *log, .notify_fd = -EBADF};
        sd_event_source *src;
        sigset_t mask;
        int r;

        (void) prctl(PR_SET_NAME, "timensd-keeper");
        /* A hand-over's new image is the worker's child: ours once the
         * worker exits. */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1);
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD), sigaddset(&mask, SIGTERM), sigaddset(&mask, SIGINT);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        r = sd_event_new(&k.event);
        if (r >= 0)
                r = notify_socket(&k);
        if (r >= 0)
                r = sd_event_add_io(k.event, &src, k.notify_fd, EPOLLIN, on_notify, &k);
        /* A hand-over's MAINPID= before the old worker's exit. */
        if (r >= 0)
                r = sd_event_source_set_priority(src, SD_EVENT_PRIORITY_IMPORTANT);
        if (r >= 0)
                r = sd_event_add_signal(k.event, NULL, SIGCHLD, on_sigchld, &k);
        if (r >= 0)
                r = sd_event_add_signal(k.event, NULL, SIGTERM, on_stop, &k);
        if (r >= 0)
                r = sd_event_add_signal(k.event, NULL, SIGINT, on_stop, &k);
        if (r >= 0)
                r = start_worker(&k);
        if (r >= 0)
                r = sd_event_loop(k.event);
        else
                tns_log_errno(&k.log, LOG_ERR, r, "Failed to set up the keeper: %m");
        if (k.worker > 0)
                (void) kill(k.worker, SIGTERM);
        for (size_t i = 0; i < k.n_fds; i++) {
                safe_close(k.fds[i].fd);
                free(k.fds[i].name);
        }
        free(k.fds);
        safe_close(k.notify_fd);
        safe_close(k.ready_fd);
        sd_event_unref(k.event);
        return r < 0 ? EXIT_FAILURE : r;
}
