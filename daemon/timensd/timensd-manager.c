/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <libgen.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "timensd.h"

static void on_namespace_gone(struct tns_registry *r, uint64_t id, const char *name, void *userdata) {
        struct manager *m = userdata;

        tns_log_full(&m->log, LOG_INFO, 0, &(struct tns_log_ctx){.ns = name}, "Namespace %" PRIu64 "%s%s%s is gone", id,
                     name ? " (" : "", name ?: "", name ? ")" : "");
        manager_namespace_gone(m, id);
}

uint64_t manager_now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int manager_new(sd_event *event, const struct tns_logger *log, struct manager **ret) {
        _cleanup_free_ struct manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->log = *log;
        m->control = LISTEN_SOCKET_NULL;
        m->agent = LISTEN_SOCKET_NULL;
        m->state_fd = -EBADF;
        m->inflight_fd = -EBADF;
        m->recvs_fd = -EBADF;
        m->max_connections = TIMENSD_DEFAULT_MAX_CONNECTIONS;
        m->idle_timeout_usec = TIMENSD_DEFAULT_IDLE_TIMEOUT_SEC * UINT64_C(1000000);
        m->generation = 1;
        m->start_usec = manager_now_usec();
        m->group_name = strdup(TIMENSD_DEFAULT_GROUP);
        if (!m->group_name)
                return -ENOMEM;
        r = tns_supervisor_new(event, &m->log, &m->supervisor);
        if (r < 0) {
                free(m->group_name);
                return r;
        }
        r = tns_registry_new(m->supervisor, &m->registry);
        if (r < 0) {
                tns_supervisor_free(m->supervisor);
                free(m->group_name);
                return r;
        }
        tns_registry_set_gone_callback(m->registry, on_namespace_gone, m);
        m->event = sd_event_ref(event);
        manager_reload(m);
        *ret = TAKE_PTR(m);
        return 0;
}

struct manager *manager_free(struct manager *m) {
        if (!m)
                return NULL;
        fdstore_done(m);
        server_done(m);
        agent_done(m);
        /* The registry before the supervisor: it hands the creation
         * references back, which tns_supervisor_free() then drops. */
        tns_registry_free(m->registry);
        tns_supervisor_free(m->supervisor);
        sd_event_unref(m->event);
        free(m->group_name);
        free(m->exe);
        if (m->argv)
                for (char **a = m->argv; *a; a++)
                        free(*a);
        free(m->argv);
        free(m);
        return NULL;
}

/* SIGHUP: the group may have been created (or its gid changed) since we
 * started; every peer's access is recomputed at its next request. */
void manager_reload(struct manager *m) {
        struct group grbuf, *gr = NULL;
        char buf[4096];

        m->have_group = getgrnam_r(m->group_name, &grbuf, buf, sizeof(buf), &gr) == 0 && gr;
        if (m->have_group)
                m->group = gr->gr_gid;
        m->generation++;
}

/* ------------------------------------------------------ listening sockets */

/* The socket's directory: 0750 root:GROUP if the group exists, else 0700;
 * created if missing, left alone if it exists (the admin's choice). */
static int prepare_directory(struct manager *m, const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        mode_t mode = m->have_group ? 0750 : 0700;
        const char *dir;

        if (!copy)
                return -ENOMEM;
        dir = dirname(copy);
        if (mkdir(dir, mode) < 0)
                return errno == EEXIST ? 0 : negative_errno();
        if (m->have_group && chown(dir, 0, m->group) < 0)
                return negative_errno();
        return RET_NERRNO(chmod(dir, mode));
}

/* Another daemon answering on path keeps it; a stale socket goes. */
static int remove_stale(const struct sockaddr_un *sa) {
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct stat st;

        if (lstat(sa->sun_path, &st) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (!S_ISSOCK(st.st_mode))
                return -EEXIST;
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (const struct sockaddr *) sa, sizeof(*sa)) == 0)
                return -EADDRINUSE;
        return RET_NERRNO(unlink(sa->sun_path));
}

static int bind_socket(struct manager *m, const char *path, mode_t mode) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        r = prepare_directory(m, path);
        if (r >= 0)
                r = remove_stale(&sa);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return negative_errno();
        /* The mode the units give (timensd.socket, timensd-agent.socket):
         * the control socket is open to all, what a peer may do is
         * decided by its credentials; the agent socket is root's. */
        if (chmod(path, mode) < 0 || listen(fd, TIMENSD_BACKLOG) < 0) {
                r = negative_errno();
                (void) unlink(path);
                return r;
        }
        return TAKE_FD(fd);
}

/* The first fd passed under one of names, or -ENOENT; -EINVAL if it is
 * not a listening Unix stream socket. */
static int passed_socket(struct manager *m, const char *const names[]) {
        int fd = -ENOENT;

        for (size_t i = 0; names[i] && fd == -ENOENT; i++)
                fd = fdstore_take(m, names[i]);
        if (fd < 0)
                return fd;
        if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
                safe_close(fd);
                return -EINVAL;
        }
        return fd;
}

int listen_socket_open(struct manager *m, struct listen_socket *ls, const struct listen_socket_kind *kind,
                       const char *path) {
        int fd, r;

        ls->path = strdup(path);
        if (!ls->path)
                return -ENOMEM;
        /* One a predecessor bound itself (no socket unit): its path is
         * ours to unlink at exit, also after a restart by the keeper
         * (helper-44: left behind). */
        fd = passed_socket(m, (const char *const[]){kind->bound_name, NULL});
        ls->owned = fd >= 0;
        if (fd == -ENOENT)
                fd = passed_socket(m, kind->fd_names);
        if (fd == -EINVAL)
                return tns_log_errno(&m->log, LOG_ERR, EINVAL,
                                     "The fd named '%s' from systemd is not a listening Unix stream socket",
                                     kind->fd_names[0]);
        if (fd == -ENOENT) {
                fd = bind_socket(m, path, kind->mode);
                ls->owned = fd >= 0;
        }
        if (fd == -EADDRINUSE)
                return tns_log_errno(&m->log, LOG_ERR, fd, "Another timensd answers on %s already", path);
        if (fd < 0)
                return tns_log_errno(&m->log, LOG_ERR, fd, "Failed to listen on %s: %m", path);
        ls->fd = fd;
        r = sd_event_add_io(m->event, &ls->src, fd, EPOLLIN, kind->on_accept, m);
        if (r < 0)
                return tns_log_errno(&m->log, LOG_ERR, r, "Failed to watch the %s: %m", kind->what);
        (void) sd_event_source_set_description(ls->src, kind->description);
        return 0;
}

void listen_socket_close(struct listen_socket *ls) {
        ls->src = sd_event_source_disable_unref(ls->src);
        if (ls->fd >= 0 && ls->owned && ls->path)
                (void) unlink(ls->path);
        ls->fd = safe_close(ls->fd);
        ls->owned = false;
        free(ls->path);
        ls->path = NULL;
}
