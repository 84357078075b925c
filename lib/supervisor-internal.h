/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The supervisor's state, shared by the files of the engine
 * (supervisor*.c) and by nothing else: programs use supervisor.h. */
#pragma once

#include <seccomp.h>

#include "supervisor.h"

/* A process whose namespace differs from its listener's: one that called
 * unshare(CLONE_NEWTIME), a child it had before (pinned to the old one), or
 * a descendant resolved once. The pidfd tells us when it exits. */
struct member {
        struct listener *l;
        pid_t tgid;
        int pidfd;
        sd_event_source *src;
        struct tns_ns *ns;
        struct member *next;
};

struct listener {
        struct tns_supervisor *s;
        int fd;
        pid_t root_pid;
        sd_event_source *src;
        struct tns_ns *ns;
        struct member *members;
        unsigned n_members;
        struct listener *next;
};

struct tns_supervisor {
        sd_event *event;
        struct tns_logger log;
        struct tns_ns *namespaces;
        uint64_t next_ns_id;
        struct listener *listeners;
        struct seccomp_notif *req;
        struct seccomp_notif_resp *resp;
        struct tns_supervisor_stats stats;
        const struct tns_image *image; /* our vDSO image, or NULL: syscall path only */
        tns_supervisor_idle_fn idle_fn;
        void *idle_userdata;
};

/* Adds a namespace to the supervisor's list (which holds no reference: a
 * namespace unlinks itself when its last reference goes). */
void supervisor_link_ns(struct tns_supervisor *s, struct tns_ns *ns);
unsigned supervisor_count_namespaces(const struct tns_supervisor *s);
