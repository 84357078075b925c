/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel time namespace a container's processes run in. timens pairs
 * each of its namespaces with a kernel time namespace, which gives it the
 * kernel's identity: /proc/PID/ns/time, lsns -t time, setns and nsenter
 * -T tell containers apart and name a container's processes alike
 * (README, Nesting and identity). timensd pairs a container with the
 * namespace its first process is in when that is not its own
 * (supervisor_kns_pair_root); this file puts it there where the runtime
 * makes none itself (runc 1.1 has no time namespace):
 *
 * - create/run of a container with settings: this process is the
 *   runtime's, and single-threaded: unshare(CLONE_NEWTIME) makes a fresh
 *   namespace (zero offsets: the clocks are timens's) for its children,
 *   which is where runc init and so the container's processes are born.
 *   A container whose namespace of timensd has processes already (the
 *   same name: they share their clocks) joins theirs instead (setns).
 *   A runtime that makes a time namespace of its own (linux.timeOffsets)
 *   nests it in ours: the same clocks.
 * - exec: the container's first process, by the OCI `state` command
 *   (every runtime has it), names the namespace; setns moves this process
 *   there, and with it the process the runtime starts in the container.
 *
 * Nothing here is fatal: without CONFIG_TIME_NS, or without the right to
 * make or enter one (CAP_SYS_ADMIN), the processes stay where they were,
 * with the clocks right and the host's identity (logged at debug level). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "json-util.h"
#include "kns.h"
#include "pidfd-util.h"
#include "timens-runtime.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* A state answer is a few hundred bytes (id, pid, status, bundle,
 * annotations); a container with many annotations stays well below. */
#define STATE_MAX (256 * 1024)

/* How long create waits for timensd's answer on the namespace's pair. */
#define JOIN_TIMEOUT_MS 2000

/* `RUNTIME [global options] state ID`'s stdout into buf (NUL-ended). The
 * global options are the ones this command came with (--root, --log):
 * the same runtime state. stderr goes to /dev/null: a container that is
 * gone is not this command's error. */
static int runtime_state(const char *runtime, const struct runtime_args *a, char *buf, size_t size) {
        _cleanup_free_ char **argv = calloc((size_t) a->command_at + 3, sizeof(char *));
        size_t len = 0;
        int p[2], status, r = 0;
        pid_t pid;

        if (!argv)
                return -ENOMEM;
        argv[0] = (char *) runtime;
        for (int i = 1; i < a->command_at; i++)
                argv[i] = a->argv[i];
        argv[a->command_at] = (char *) "state";
        argv[a->command_at + 1] = (char *) a->id;
        argv[a->command_at + 2] = NULL;
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0) {
                r = negative_errno();
                close(p[0]), close(p[1]);
                return r;
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (dup2(p[1], STDOUT_FILENO) < 0 || null < 0 || dup2(null, STDERR_FILENO) < 0 ||
                    dup2(null, STDIN_FILENO) < 0)
                        _exit(127);
                execv(runtime, argv);
                _exit(127);
        }
        close(p[1]);
        while (len + 1 < size) {
                ssize_t n = read(p[0], buf + len, size - 1 - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t) n;
        }
        if (len + 1 >= size) {
                r = -E2BIG;
                (void) kill(pid, SIGKILL);
        }
        close(p[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -ESRCH;
        buf[len] = '\0';
        return 0;
}

/* The pid of the container's first process, from the state's "pid". */
static int container_pid(const char *runtime, const struct runtime_args *a, pid_t *ret) {
        _cleanup_free_ char *buf = malloc(STATE_MAX);
        _cleanup_json_ json_object *state = NULL;
        json_object *pid;
        int64_t v;
        int r;

        if (!buf)
                return -ENOMEM;
        r = runtime_state(runtime, a, buf, STATE_MAX);
        if (r < 0)
                return r;
        state = json_tokener_parse(buf);
        if (!state || !json_object_object_get_ex(state, "pid", &pid) || !json_object_is_type(pid, json_type_int))
                return -EBADMSG;
        v = json_object_get_int64(pid);
        /* 0: a container that is stopped (or created without a process). */
        if (v <= 0 || v > INT32_MAX)
                return -ESRCH;
        *ret = (pid_t) v;
        return 0;
}

/* exec: into the container's namespace, if it is not ours already. */
static int enter_container(const char *runtime, const struct runtime_args *a) {
        _cleanup_close_ int pidfd = -EBADF, target = -EBADF, own = -EBADF;
        int64_t off[3] = {};
        pid_t pid;
        int r;

        r = container_pid(runtime, a, &pid);
        if (r < 0)
                return r;
        /* By pidfd: the time namespace is the one of the process that the
         * state named, not of a later process with its pid. */
        pidfd = tns_pidfd_open(pid);
        if (pidfd < 0)
                return pidfd;
        target = tns_pidfd_time_ns(pidfd);
        if (target < 0)
                return target;
        own = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
        if (own < 0)
                return negative_errno();
        r = tns_ns_fd_same(own, target);
        if (r != 0)
                return r < 0 ? r : 0;
        /* Only one with zero offsets, as ours are (the clocks are
         * timensd's): a container that made one with offsets of its own
         * does not shift the clocks of the runtime, which runs as root on
         * the host. Its offsets are final once its process is in it. */
        r = tns_kns_offsets(pid, target, off);
        if (r < 0)
                return r;
        if (off[TNS_CLASS_MONOTONIC] != 0 || off[TNS_CLASS_BOOTTIME] != 0)
                return -EPERM;
        return setns(target, CLONE_NEWTIME) < 0 ? negative_errno() : 1;
}

/* create/run: where the namespace's processes are (a container of the
 * same name, or `timensctl run --name`), else a fresh namespace. timensd
 * is asked briefly: a create must not wait on it (the hook starts it if
 * it does not answer). */
static void make_or_join(const struct runtime_conf *c, const char *name, const struct runtime_args *a,
                         const struct tns_logger *log) {
        _cleanup_client_ struct tns_client *client = NULL;
        _cleanup_close_ int fd = -EBADF;

        if (tns_client_connect(c->socket[0] ? c->socket : NULL, &client) >= 0) {
                tns_client_set_timeout(client, JOIN_TIMEOUT_MS);
                fd = tns_client_time_ns_fd(client, name, 0);
        }
        if (fd >= 0) {
                if (setns(fd, CLONE_NEWTIME) == 0)
                        return;
                tns_log_errno(log, LOG_DEBUG, errno, "Container %s: not entering namespace %s's (setns: %m)", a->id,
                              name);
        }
        if (unshare(CLONE_NEWTIME) < 0)
                tns_log_errno(log, LOG_DEBUG, errno, "Container %s stays in this kernel time namespace (unshare: %m)",
                              a->id);
}

void runtime_time_ns(const struct runtime_conf *c, const char *runtime, const struct runtime_args *a, const char *name,
                     const struct tns_logger *log) {
        int r;

        if (!a->command || !a->id)
                return;
        if (a->edit) {
                if (name)
                        make_or_join(c, name, a, log);
                return;
        }
        if (strcmp(a->command, "exec") != 0)
                return;
        r = enter_container(runtime, a);
        if (r < 0)
                tns_log_errno(log, LOG_DEBUG, r, "exec in %s: not entering its kernel time namespace: %m", a->id);
}
