/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Restarts, the registry's part: the engine saves and restores namespaces,
 * listeners and members (lib/supervisor/supervisor-state.c); this adds
 * each held namespace's record (origin, grant, owner) and tells the
 * adopted callback of every listener served again. */
#include <errno.h>
#include <stdlib.h>

#include "registry-internal.h"
#include "state.h"

static void save_record(struct tns_ns *ns, struct tns_state_ns *ret, void *userdata) {
        struct tns_ns_record *rec = ns->record;

        ret->held = rec != NULL;
        if (!rec)
                return;
        ret->origin = (int) rec->origin;
        ret->grant = (int) rec->grant;
        ret->shared = rec->shared;
        ret->created_realtime_ns = rec->created_realtime_ns;
        ret->sets = rec->sets;
}

/* A record made again from the saved one; it owns the creation reference. */
static int restore_record(struct tns_ns *ns, const struct tns_state_ns *st, void *userdata) {
        struct tns_registry *r = userdata;
        struct tns_ns_record *rec;

        if (st->origin < 0 || st->origin >= _TNS_ORIGIN_MAX || st->grant < 0 || st->grant >= _TNS_GRANT_MAX)
                return -EBADMSG;
        if (ns->name && tns_registry_find(r, ns->name))
                return -EEXIST;
        rec = calloc(1, sizeof(*rec));
        if (!rec)
                return -ENOMEM;
        *rec = (struct tns_ns_record){.r = r,
                                      .ns = ns,
                                      .origin = st->origin,
                                      .grant = st->grant,
                                      .shared = st->shared,
                                      .created_realtime_ns = st->created_realtime_ns,
                                      .sets = st->sets};
        rec->next = r->records;
        if (rec->next)
                rec->next->pprev = &rec->next;
        rec->pprev = &r->records;
        r->records = rec;
        ns->record = rec;
        return 1;
}

static void restored_listener(struct tns_ns *ns, pid_t root_pid, void *userdata) {
        registry_adopted(userdata, ns, root_pid);
}

int tns_registry_save_state(struct tns_registry *r, struct tns_state *ret) {
        return tns_supervisor_save_state(r->s, save_record, NULL, ret);
}

int tns_registry_restore_state(struct tns_registry *r, const struct tns_state *st, struct tns_named_fd *fds, size_t n,
                               struct tns_restore_report *ret) {
        const struct tns_supervisor_restore_ops ops = {
                .ns = restore_record,
                .listener = restored_listener,
                .userdata = r,
        };

        return tns_supervisor_restore_state(r->s, st, fds, n, &ops, ret);
}
