/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry's own records, shared by registry.c and registry-state.c. */
#pragma once

#include "registry.h"

/* What the registry keeps about a namespace it holds. */
struct tns_ns_record {
        struct tns_registry *r;
        struct tns_ns *ns; /* owns the supervisor's creation reference */
        enum tns_origin origin;
        enum tns_grant grant;
        bool shared;
        int64_t created_realtime_ns;
        uint64_t sets;
        struct tns_ns_record *next, **pprev;
};

struct tns_registry {
        struct tns_supervisor *s;
        struct tns_ns_record *records;
        tns_registry_gone_fn gone_fn;
        void *gone_userdata;
        tns_registry_adopted_fn adopted_fn;
        void *adopted_userdata;
};

/* Tells the adopted callback of a listener taken on for ns. */
void registry_adopted(struct tns_registry *r, struct tns_ns *ns, pid_t pid);
