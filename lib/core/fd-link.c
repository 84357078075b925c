/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "fd-link.h"

/* The namespace types nsfs names its files by (ns_dname(): "TYPE:[INO]";
 * fs/nsfs.c and each namespace's proc_ns_operations name). */
static const char *const ns_types[] = {
        "cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time", "time_for_children", "user", "uts"};

enum tns_fd_kind tns_fd_kind_parse(const char *link) {
        const char *colon = strchr(link, ':'), *p;
        size_t n;

        if (strcmp(link, "anon_inode:[pidfd]") == 0)
                return TNS_FD_PIDFD;
        if (strcmp(link, "anon_inode:[timerfd]") == 0)
                return TNS_FD_TIMERFD;
        if (strcmp(link, "anon_inode:seccomp notify") == 0)
                return TNS_FD_SECCOMP;
        if (!colon || colon[1] != '[')
                return TNS_FD_OTHER;
        n = (size_t) (colon - link);
        /* "[INO]" to the end, digits only: a file a member named
         * "time:[1]" is "/.../time:[1]" (a path starts with '/'). */
        p = colon + 2;
        if (*p < '0' || *p > '9')
                return TNS_FD_OTHER;
        while (*p >= '0' && *p <= '9')
                p++;
        if (strcmp(p, "]") != 0)
                return TNS_FD_OTHER;
        for (size_t i = 0; i < sizeof(ns_types) / sizeof(ns_types[0]); i++)
                if (strlen(ns_types[i]) == n && strncmp(link, ns_types[i], n) == 0)
                        return TNS_FD_NS;
        return TNS_FD_OTHER;
}
