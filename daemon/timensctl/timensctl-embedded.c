/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The embedded supervisor: with no timensd, `timensctl run` serves its own
 * namespace from a process of its own. It is detached (a process group of
 * its own, so a Ctrl-C meant for the program does not kill it; stdio on
 * /dev/null once timensctl has exited, so `$(timensctl run ...)` returns)
 * and lives until the last process under the filter is gone: programs that
 * the command left running in the background keep their clocks.
 *
 * A process group, not a session: setsid() would also put it in a new
 * scheduler autogroup, and the kernel then spreads the caller and the
 * supervisor over two CPUs — each emulated call measured 4-9x slower. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "supervisor.h"
#include "timensctl.h"
#include "util.h"

static void on_idle(struct tns_supervisor *s, void *userdata) {
        sd_event_exit(userdata, 0);
}

/* timensctl is gone: nobody reads our stderr any more, and holding it
 * would keep a pipe reader waiting. */
static int on_parent_exit(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

        if (null >= 0) {
                (void) dup2(null, STDERR_FILENO);
                close(null);
        }
        return sd_event_source_set_enabled(src, SD_EVENT_OFF);
}

static int detach(void) {
        int null;

        if (setpgid(0, 0) < 0)
                return negative_errno();
        /* A hangup of the terminal is not ours to die of. */
        (void) signal(SIGHUP, SIG_IGN);
        if (chdir("/") < 0)
                return negative_errno();
        null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0)
                return negative_errno();
        (void) dup2(null, STDIN_FILENO);
        (void) dup2(null, STDOUT_FILENO);
        close(null);
        return 0;
}

static int serve(int listener, pid_t root_pid, int parent_pidfd, const char *name, const int64_t offsets[TNS_CLASS_MAX],
                 unsigned ns_flags, int ready_fd) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        struct tns_supervisor *s = NULL;
        struct tns_ns *ns;
        char ok = 0;
        int r;

        r = sd_event_new(&e);
        if (r < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to create the event loop: %m");
        r = tns_supervisor_new(e, &timensctl_log, &s);
        if (r < 0)
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to create the supervisor: %m");
        r = tns_supervisor_create_ns_flags(s, name, offsets, ns_flags, &ns);
        if (r >= 0)
                r = tns_supervisor_add_listener(s, ns, TAKE_FD(listener), root_pid);
        if (r >= 0 && parent_pidfd >= 0)
                r = sd_event_add_io(e, NULL, parent_pidfd, EPOLLIN, on_parent_exit, NULL);
        if (r < 0) {
                tns_supervisor_free(s);
                return tns_log_errno(&timensctl_log, LOG_ERR, r, "Failed to set up the namespace: %m");
        }
        tns_supervisor_set_idle_callback(s, on_idle, e);
        (void) !write(ready_fd, &ok, 1);
        close(ready_fd);
        r = tns_supervisor_run(s);
        tns_supervisor_free(s);
        return r;
}

int embedded_supervisor_start(int listener, pid_t root_pid, const char *name, const int64_t offsets[TNS_CLASS_MAX],
                              unsigned ns_flags) {
        _cleanup_close_ int owned = listener;
        int ready[2], parent_pidfd;
        char byte;
        ssize_t n;
        pid_t pid;

        if (pipe2(ready, O_CLOEXEC) < 0)
                return negative_errno();
        parent_pidfd = (int) syscall(SYS_pidfd_open, getpid(), 0);
        pid = fork();
        if (pid < 0) {
                close(ready[0]), close(ready[1]), safe_close(parent_pidfd);
                return negative_errno();
        }
        if (pid == 0) {
                sigset_t all;

                close(ready[0]);
                /* SIGCHLD stays blocked: the engine reads ptrace stops
                 * through it (sd-event wants it blocked). */
                sigemptyset(&all);
                sigaddset(&all, SIGCHLD);
                (void) sigprocmask(SIG_SETMASK, &all, NULL);
                if (detach() < 0)
                        _exit(EXIT_FAILURE);
                _exit(serve(TAKE_FD(owned), root_pid, parent_pidfd, name, offsets, ns_flags, ready[1]) < 0
                              ? EXIT_FAILURE
                              : EXIT_SUCCESS);
        }
        close(ready[1]);
        safe_close(parent_pidfd);
        do
                n = read(ready[0], &byte, 1);
        while (n < 0 && errno == EINTR);
        close(ready[0]);
        return n == 1 ? 0 : -EIO;
}
