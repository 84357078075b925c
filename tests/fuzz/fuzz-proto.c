/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for timensd's request path: the parser (proto/) and
 * the dispatcher (daemon/timensd/timensd-ops.c) on a supervisor with no
 * listeners. Each input is up to MAX_LINES request lines, handled in order
 * by one peer (the first byte picks root, a reader, or a process inside a
 * namespace), so that sequences (create, set, export, import, destroy,
 * wait) are reached. Every line must get exactly one well-formed reply,
 * or none and a pending wait; the state is reset between inputs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pidfd-util.h"
#include "timensd.h"
#include "fuzz-check.h"

#define MAX_LINES 16

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One manager for the whole run: creating one per input would measure
 * the supervisor's set-up, not the parser. */
static sd_event *event;
static struct manager *manager;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        static const struct tns_logger quiet = {NULL, NULL, 0};

        (void) argc;
        (void) argv;
        setenv("TZ", "UTC", 1);
        if (sd_event_new(&event) < 0 || manager_new(event, &quiet, &manager) < 0)
                abort();
        return 0;
}

static void check_reply(json_object *reply) {
        _cleanup_json_ json_object *result = NULL;
        _cleanup_free_ char *line = NULL;
        struct tns_proto_error e;
        int64_t id;
        size_t len;
        int r;

        CHECK(reply);
        CHECK(tns_message_format(reply, &line, &len) == 0);
        CHECK(len > 0 && line[len - 1] == '\n' && !memchr(line, '\n', len - 1));
        CHECK(len <= TNS_PROTO_MAX_REPLY);
        r = tns_reply_parse(line, len - 1, &id, &result, &e);
        CHECK(r == 0 || r == 1);
        CHECK(r == 0 || result);
}

/* Back to no namespaces, as if the daemon had just started. */
static void reset(void) {
        _cleanup_free_ struct tns_ns **all = NULL;
        size_t n;

        CHECK(tns_registry_list(manager->registry, &all, &n) == 0);
        for (size_t i = 0; i < n; i++)
                (void) tns_registry_destroy(manager->registry, all[i], true);
        free(TAKE_PTR(all));
        CHECK(tns_registry_list(manager->registry, &all, &n) == 0);
        CHECK(n == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const enum tns_access access[] = {TNS_ACCESS_WRITE, TNS_ACCESS_READ, TNS_ACCESS_NONE};
        static int self = -EBADF;
        struct peer p = {.pid = getpid(), .generation = 0};
        const char *text = (const char *) data, *end = text + size;
        unsigned lines = 0;

        if (size > 0)
                p.by_user = access[data[0] % 3];
        /* A peer inside a namespace is judged by the namespace's grant;
         * this process is inside none, so pin what the grant would give. */
        p.access = p.limit = p.by_user;
        if (self < 0)
                self = tns_pidfd_open(getpid());
        p.pidfd = self;
        p.generation = manager->generation;
        while (text < end && lines++ < MAX_LINES) {
                const char *nl = memchr(text, '\n', (size_t) (end - text));
                size_t len = nl ? (size_t) (nl - text) : (size_t) (end - text);
                int fds[TNS_PROTO_MAX_FDS] = {-EBADF, -EBADF};
                struct request_wait wait = {};
                json_object *reply = NULL;

                CHECK(manager_handle_line(manager, &wait, &p, text, len, fds, &reply) == 0);
                /* A wait accepted has no reply yet: the server would hold
                 * it (timensd-server.c); here the next line goes on. */
                CHECK(!reply == wait.pending);
                if (reply)
                        check_reply(reply);
                else
                        CHECK(wait.ns > 0);
                json_object_put(reply);
                text += len + (nl ? 1 : 0);
        }
        reset();
        return 0;
}
