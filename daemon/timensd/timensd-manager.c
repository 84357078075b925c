/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "timensd.h"

static void on_namespace_gone(struct tns_registry *r, uint64_t id, const char *name, void *userdata) {
        struct manager *m = userdata;

        tns_log_full(&m->log, LOG_INFO, 0, &(struct tns_log_ctx){.ns = name}, "Namespace %" PRIu64 "%s%s%s is gone", id,
                     name ? " (" : "", name ?: "", name ? ")" : "");
        manager_namespace_gone(m, id);
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int manager_new(sd_event *event, const struct tns_logger *log, struct manager **ret) {
        _cleanup_free_ struct manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->log = *log;
        m->listen_fd = -EBADF;
        m->agent_fd = -EBADF;
        m->state_fd = -EBADF;
        m->inflight_fd = -EBADF;
        m->max_connections = TIMENSD_DEFAULT_MAX_CONNECTIONS;
        m->idle_timeout_usec = TIMENSD_DEFAULT_IDLE_TIMEOUT_SEC * UINT64_C(1000000);
        m->generation = 1;
        m->start_usec = now_usec();
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
        free(m->socket_path);
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
