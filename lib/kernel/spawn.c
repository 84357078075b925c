/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-pass.h"
#include "spawn.h"
#include "util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

struct child_report {
        int stage;
        int error;
};

static void report(int pipe_fd, enum tns_spawn_stage stage, int error) {
        struct child_report rep = {stage, error < 0 ? -error : error};

        (void) !write(pipe_fd, &rep, sizeof(rep));
        _exit(stage == TNS_SPAWN_EXEC && (rep.error == ENOENT || rep.error == ENOTDIR) ? 127 : 126);
}

/* execvp()'s search, done before the filter is in place: the trapped
 * execve then happens once. As execvp, remembers EACCES and goes on. */
static int find_program(const char *name, char *buf, size_t size, const char **ret) {
        const char *path = getenv("PATH") ?: "/usr/local/bin:/usr/bin:/bin";
        int err = -ENOENT;

        if (strchr(name, '/')) {
                *ret = name;
                return 0;
        }
        for (const char *p = path, *end;; p = end + 1) {
                size_t len;

                end = strchrnul(p, ':');
                len = (size_t) (end - p);
                if (len + 1 + strlen(name) + 1 <= size) {
                        memcpy(buf, p, len);
                        buf[len] = 0;
                        if (len > 0)
                                strcat(buf, "/");
                        strcat(buf, name);
                        if (access(buf, X_OK) == 0) {
                                *ret = buf;
                                return 0;
                        }
                        if (errno == EACCES)
                                err = -EACCES;
                }
                if (!*end)
                        return err;
        }
}

/* Where the child may not (EPERM: unprivileged), /proc stays the host's;
 * never a new namespace whose /proc mounts would propagate back out. */
static void private_proc(void) {
        if (unshare(CLONE_NEWNS) < 0)
                return;
        if (mount(NULL, "/proc", NULL, MS_SLAVE, NULL) < 0)
                (void) mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL);
}

/* Between fork and exec: only async-signal-safe calls. */
static _Noreturn void child(const struct tns_filter *f, char *const argv[], unsigned flags, int time_fd, int sock,
                            int pipe_fd) {
        char buf[4096];
        const char *prog;
        sigset_t all;
        int fd, r;

        sigemptyset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, NULL);
        r = find_program(argv[0], buf, sizeof(buf), &prog);
        if (r < 0)
                report(pipe_fd, TNS_SPAWN_EXEC, r);
        if (flags & TNS_SPAWN_PRIVATE_PROC)
                private_proc();
        /* time_for_children: the exec below enters it. Before the filter,
         * which would follow it. */
        if ((time_fd < 0 || setns(time_fd, CLONE_NEWTIME) < 0) && (flags & TNS_SPAWN_NEWTIME))
                (void) unshare(CLONE_NEWTIME);
        if (time_fd >= 0)
                close(time_fd);
        fd = tns_filter_install(f);
        if (fd < 0)
                report(pipe_fd, TNS_SPAWN_SETUP, fd);
        r = tns_send_fd(sock, fd);
        if (r < 0)
                report(pipe_fd, TNS_SPAWN_SETUP, r);
        close(fd);
        if (flags & TNS_SPAWN_PRIVATE_PROC) {
                char go;

                /* EOF (the parent gave up) as well as a byte: go on; the
                 * parent kills us if it must. */
                while (read(sock, &go, 1) < 0 && errno == EINTR)
                        ;
        }
        close(sock);
        execv(prog, argv);
        report(pipe_fd, TNS_SPAWN_EXEC, errno);
        _exit(127); /* not reached */
}

static int read_report(int pipe_fd, struct child_report *ret) {
        ssize_t n;

        do
                n = read(pipe_fd, ret, sizeof(*ret));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        return n == (ssize_t) sizeof(*ret); /* 0: EOF, the exec happened */
}

int tns_spawn(const struct tns_filter *f, char *const argv[], struct tns_child *ret, enum tns_spawn_stage *ret_stage) {
        return tns_spawn_flags(f, argv, 0, ret, ret_stage);
}

void tns_spawn_release(struct tns_child *c) {
        char go = 1;

        if (c->release_fd >= 0)
                (void) !write(c->release_fd, &go, 1);
        c->release_fd = safe_close(c->release_fd);
}

int tns_spawn_flags(const struct tns_filter *f, char *const argv[], unsigned flags, struct tns_child *ret,
                    enum tns_spawn_stage *ret_stage) {
        return tns_spawn_flags_time(f, argv, flags, -EBADF, ret, ret_stage);
}

int tns_spawn_flags_time(const struct tns_filter *f, char *const argv[], unsigned flags, int time_fd,
                         struct tns_child *ret, enum tns_spawn_stage *ret_stage) {
        _cleanup_close_ int pidfd = -EBADF;
        int socks[2], pipefd[2], listener, r;
        struct tns_child c;
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, socks) < 0)
                return negative_errno();
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                r = negative_errno();
                close(socks[0]), close(socks[1]);
                return r;
        }
        pid = fork();
        if (pid < 0) {
                r = negative_errno();
                close(socks[0]), close(socks[1]), close(pipefd[0]), close(pipefd[1]);
                return r;
        }
        if (pid == 0)
                child(f, argv, flags, time_fd, socks[1], pipefd[1]);
        close(socks[1]);
        close(pipefd[1]);
        listener = tns_recv_fd(socks[0]);
        c = (struct tns_child){
                .pid = pid, .pidfd = -EBADF, .listener = listener, .exec_fd = pipefd[0], .release_fd = -EBADF};
        if (flags & TNS_SPAWN_PRIVATE_PROC)
                c.release_fd = socks[0];
        else
                close(socks[0]);
        if (listener < 0) {
                /* No listener: the child reports why, and is gone. */
                c.release_fd = safe_close(c.release_fd);
                return tns_spawn_wait_exec(&c, ret_stage) ?: -EIO;
        }
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                r = negative_errno();
                close(listener), close(c.exec_fd), safe_close(c.release_fd);
                return r;
        }
        c.pidfd = TAKE_FD(pidfd);
        *ret = c;
        return 0;
}

int tns_spawn_wait_exec(struct tns_child *c, enum tns_spawn_stage *ret_stage) {
        struct child_report rep;
        int r;

        r = read_report(c->exec_fd, &rep);
        c->exec_fd = safe_close(c->exec_fd);
        if (r == 0)
                return 0;
        (void) waitpid(c->pid, NULL, 0);
        if (r < 0)
                return r;
        if (ret_stage)
                *ret_stage = rep.stage;
        return -rep.error;
}
