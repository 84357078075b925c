/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The supervisor's state, shared by the files of the engine
 * (supervisor*.c) and by nothing else: programs use supervisor.h. */
#pragma once

#include <seccomp.h>

#include "ptrace-util.h"
#include "supervisor.h"
#include "vdso-host.h"

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

/* A traced caller: the namespace's memfd is in its fd table as target_fd,
 * and we wait for its next stop. For an exec, the exec stop (or the
 * interrupt stop of a failed exec); for a remap (the caller moved to a new
 * namespace with unshare), the interrupt stop at its return from the
 * syscall, where its offsets page at remap_addr is replaced by the new
 * namespace's. */
enum trace_kind { TRACE_EXEC, TRACE_REMAP };

struct exec_trace {
        struct tns_supervisor *s;
        enum trace_kind kind;
        uint64_t remap_addr;
        pid_t tid, tgid;
        int target_fd;
        struct tns_ns *ns;
        struct tns_held_signals held;
        struct exec_trace *next;
};

/* A hard cap on execs held at once (each holds a traced thread). */
#define TNS_MAX_EXECS_IN_FLIGHT 1024

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
        struct tns_vdso_host *vdso; /* NULL: no vDSO injection */
        struct exec_trace *execs;
        unsigned n_execs;
        sd_event_source *sigchld;
        struct tns_registry *registry; /* supervisor-registry.c; NULL if unused */
        tns_supervisor_idle_fn idle_fn;
        void *idle_userdata;
};

/* Adds a namespace to the supervisor's list (which holds no reference: a
 * namespace unlinks itself when its last reference goes). */
void supervisor_link_ns(struct tns_supervisor *s, struct tns_ns *ns);
unsigned supervisor_count_namespaces(const struct tns_supervisor *s);

/* supervisor-exec.c: vDSO injection at exec (see inject.h). */
/* Prepares the exec of req's caller for injection; the caller of this
 * function then lets the syscall continue. <0: no injection this time. */
int supervisor_exec_begin(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns);
void supervisor_exec_done(struct tns_supervisor *s);
/* The caller of req, which moved to ns, maps ns's offsets page where it
 * mapped its old one, before it returns to its own code. */
int supervisor_remap_begin(struct listener *l, const struct seccomp_notif *req, struct tns_ns *ns);
/* Whether a clock call at ip is our image calling through to the kernel's
 * vDSO, whose fallback syscall must then run unchanged (the image adds the
 * offset itself). */
bool supervisor_is_vdso_fallback(struct listener *l, const struct seccomp_notif *req);

/* supervisor-registry.c: a listener of ns hung up. Called by
 * listener_free() before it drops its reference on ns. */
void supervisor_registry_listener_gone(struct tns_supervisor *s, struct tns_ns *ns);
