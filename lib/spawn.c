/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"
#include "util.h"

struct child_report {
        int stage;
        int error;
};

static int send_fd(int sock, int fd) {
        char cbuf[CMSG_SPACE(sizeof(int))] = {};
        char byte = 0;
        struct iovec iov = {&byte, 1};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        return sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? negative_errno() : 0;
}

static int recv_fd(int sock) {
        char cbuf[CMSG_SPACE(sizeof(int))] = {};
        char byte;
        struct iovec iov = {&byte, 1};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *c;
        ssize_t n;
        int fd;

        do
                n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        c = CMSG_FIRSTHDR(&msg);
        if (n == 0 || !c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
                return -EBADMSG;
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
        return fd;
}

static void report(int pipe_fd, enum tns_spawn_stage stage, int error) {
        struct child_report rep = {stage, error < 0 ? -error : error};

        (void) !write(pipe_fd, &rep, sizeof(rep));
        _exit(stage == TNS_SPAWN_EXEC && (rep.error == ENOENT || rep.error == ENOTDIR) ? 127 : 126);
}

/* Between fork and exec: only async-signal-safe calls. */
static _Noreturn void child(const struct tns_filter *f, char *const argv[], int sock, int pipe_fd) {
        sigset_t all;
        int fd, r;

        sigemptyset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, NULL);
        fd = tns_filter_install(f);
        if (fd < 0)
                report(pipe_fd, TNS_SPAWN_SETUP, fd);
        r = send_fd(sock, fd);
        if (r < 0)
                report(pipe_fd, TNS_SPAWN_SETUP, r);
        close(fd);
        close(sock);
        execvp(argv[0], argv);
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
        _cleanup_close_ int listener = -EBADF, pidfd = -EBADF;
        int socks[2], pipefd[2], r;
        struct child_report rep;
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
                child(f, argv, socks[1], pipefd[1]);
        close(socks[1]);
        close(pipefd[1]);
        listener = recv_fd(socks[0]);
        close(socks[0]);
        r = read_report(pipefd[0], &rep);
        close(pipefd[0]);
        if (r != 0 || listener < 0) {
                (void) waitpid(pid, NULL, 0);
                if (r > 0 && ret_stage)
                        *ret_stage = rep.stage;
                return r > 0 ? -rep.error : r < 0 ? r : listener < 0 ? listener : -EIO;
        }
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
                return negative_errno();
        *ret = (struct tns_child){pid, TAKE_FD(pidfd), TAKE_FD(listener)};
        return 0;
}
