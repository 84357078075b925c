/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel time namespace a namespace of timensd is paired with, as an
 * fd a program can setns(2) into: `timensctl run --join` and
 * timens-runtime's create put a new process where the namespace's
 * processes already are, so that all of them show one /proc/PID/ns/time. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "json-util.h"

int tns_client_time_ns_fd(struct tns_client *c, const char *name, uint64_t id) {
        _cleanup_free_ struct tns_ns_view *v = malloc(sizeof(struct tns_ns_view));
        struct tns_request req = {.op = TNS_OP_SHOW, .name = name, .ns_id = id};
        _cleanup_json_ json_object *res = NULL;
        struct tns_proto_error e;
        json_object *ns;

        if (!v)
                return -ENOMEM;
        if (tns_client_call(c, &req, NULL, 0, &res, &e) <= 0 || !json_object_object_get_ex(res, "namespace", &ns) ||
            tns_ns_view_from_json(ns, v) < 0 || !v->kernel_ns)
                return -ENOENT;
        /* timensd names the namespace's inode and its processes; an fd of
         * one of theirs holds it. */
        for (unsigned i = 0; i < v->n_processes && i < TNS_PROTO_MAX_PROCESSES; i++) {
                char path[64];
                struct stat st;
                int fd;

                snprintf(path, sizeof(path), "/proc/%d/ns/time", (int) v->processes[i]);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                /* The inode, checked on the fd: the pid may have been reused. */
                if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t) st.st_ino == v->kernel_ns)
                        return fd;
                safe_close(fd);
        }
        return -ENOENT;
}
