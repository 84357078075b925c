/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state record a daemon keeps beside its fds (systemd's fd store, or
 * the fds it passes to its own re-exec): what is needed to serve again
 * the namespaces, listeners and members it had, from those fds alone.
 * Pure: text in, struct out, and back; for unit tests and the fuzzer.
 *
 * What is not in it, because the fds carry it: the offsets (each
 * namespace's memfd has its offsets page, always current), the listeners'
 * pending notifications (the kernel queues them on the listener fd), the
 * /proc connections (FUSE fds). The fds are named, and the names tie them
 * to the record: "ns.ID" a namespace's memfd, "l.SERIAL" a listener,
 * "p.SERIAL.FILE.N" a /proc file's FUSE connection of listener SERIAL. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TNS_STATE_VERSION 1
#define TNS_STATE_NAME_MAX 128
/* Caps on what a record may hold, far above the supervisor's own caps. */
#define TNS_STATE_MAX_ITEMS 65536
#define TNS_STATE_MAX_TEXT (64 * 1024 * 1024)

struct tns_state_ns {
        uint64_t id;
        uint64_t parent; /* 0: a root */
        char name[TNS_STATE_NAME_MAX + 1]; /* "" if none */
        bool held; /* the registry has a record of it */
        int origin, grant; /* the registry's enums, if held */
        uid_t owner; /* struct tns_ns's; 0 in records of before owners were kept */
        bool shared;
        int64_t created_realtime_ns;
        uint64_t sets;
        uint32_t flags; /* TNS_NS_* */
        bool tz_set;
        int tz_minuteswest, tz_dsttime;
};

struct tns_state_listener {
        uint64_t serial;
        uint64_t ns;
        pid_t root_pid;
        bool kernel_nested; /* a process of it made or entered a kernel time namespace (supervisor-kns.c) */
};

/* A process pinned to a namespace other than its listener's. start_time
 * (field 22 of /proc/PID/stat) tells it from a process that reused its pid
 * while no daemon watched its pidfd. */
struct tns_state_member {
        uint64_t listener;
        uint64_t ns;
        pid_t tgid;
        uint64_t start_time;
};

struct tns_state {
        uint64_t next_ns_id, next_serial;
        /* Where the saving supervisor starts its wait slots (absent in an
         * older record: 0 and !have_wait_slot_base). */
        uint32_t wait_slot_base;
        bool have_wait_slot_base;
        struct tns_state_ns *ns;
        size_t n_ns;
        struct tns_state_listener *listeners;
        size_t n_listeners;
        struct tns_state_member *members;
        size_t n_members;
};

void tns_state_done(struct tns_state *st);

/* Appends an element (zeroed) and returns it, NULL if out of memory or
 * past TNS_STATE_MAX_ITEMS. */
struct tns_state_ns *tns_state_add_ns(struct tns_state *st);
struct tns_state_listener *tns_state_add_listener(struct tns_state *st);
struct tns_state_member *tns_state_add_member(struct tns_state *st);

/* JSON text (NUL-terminated, to free) of st. */
int tns_state_format(const struct tns_state *st, char **ret);

/* Parses what tns_state_format() wrote. -EBADMSG if it is not a record
 * of this version, or is inconsistent (a listener or member of an unknown
 * namespace, a parent listed after its child, duplicate ids); *ret is
 * then untouched. */
int tns_state_parse(const char *text, size_t len, struct tns_state *ret);

/* What an fd name stands for: 'n' (namespace memfd: *ret_a = id), 'l'
 * (listener: *ret_a = serial), 'p' (/proc file: *ret_a = serial, *ret_b =
 * file index, *ret_c = connection number); 0 if the name is none of them. */
char tns_state_fd_kind(const char *name, uint64_t *ret_a, uint64_t *ret_b, uint64_t *ret_c);
