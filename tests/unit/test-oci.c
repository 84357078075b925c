/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/oci/oci.c and lib/oci/oci-config.c: states as runc and crun send them,
 * annotations, listenerMetadata, linux.timeOffsets, config.json edits. */
#include <string.h>

#include "clocks.h"
#include "oci.h"
#include "test.h"

/* runc 1.1.5's agent message (compact) and crun's hook state (pretty). */
static const char runc_agent[] =
        "{\"ociVersion\":\"1.0.2-dev\",\"fds\":[\"seccompFd\"],\"pid\":4242,\"metadata\":\"realtime=+1d\","
        "\"state\":{\"ociVersion\":\"1.0.2-dev\",\"id\":\"web\",\"status\":\"creating\",\"pid\":4242,"
        "\"bundle\":\"/b\",\"annotations\":{\"org.timens.boottime\":\"+2h\"}}}";
static const char crun_state[] = "{\n  \"ociVersion\": \"0.2.0\",\n  \"id\": \"db\",\n  \"status\": \"created\",\n"
                                 "  \"pid\": 77,\n  \"bundle\": \"/x\"\n}\n";

TEST(agent_message) {
        struct tns_oci_state st;
        struct tns_oci_request req = {};
        char err[TNS_OCI_ERR_MAX];

        ASSERT_EQ(tns_oci_state_parse(runc_agent, strlen(runc_agent), &st, err), 0);
        EXPECT_EQ(st.agent, true);
        EXPECT_EQ(st.seccomp_fd_index, 0);
        EXPECT_EQ(st.pid, 4242);
        EXPECT_EQ(strcmp(st.id, "web"), 0);
        EXPECT_EQ(strcmp(st.metadata, "realtime=+1d"), 0);
        ASSERT_EQ(tns_oci_metadata_parse(st.metadata, &req, err), 0);
        ASSERT_EQ(tns_oci_annotations_parse(st.annotations, &req, err), 0);
        EXPECT_EQ(req.clocks[TNS_CLASS_REALTIME].spec.ns, 86400LL * 1000000000);
        EXPECT_EQ(req.clocks[TNS_CLASS_BOOTTIME].spec.ns, 7200LL * 1000000000);
        EXPECT_EQ(req.clocks[TNS_CLASS_MONOTONIC].set, false);
        tns_oci_state_done(&st);
}

TEST(hook_state) {
        struct tns_oci_state st;
        char err[TNS_OCI_ERR_MAX], name[TNS_NS_NAME_MAX + 1];

        ASSERT_EQ(tns_oci_state_parse(crun_state, strlen(crun_state), &st, err), 0);
        EXPECT_EQ(st.agent, false);
        EXPECT_EQ(st.pid, 77);
        EXPECT_EQ(strcmp(st.bundle, "/x"), 0);
        EXPECT_EQ(tns_oci_has_annotations(st.annotations), false);
        tns_oci_default_name(st.id, name);
        EXPECT_EQ(strcmp(name, "db"), 0);
        tns_oci_default_name("1234", name);
        EXPECT_EQ(name[0], '\0');
        tns_oci_state_done(&st);
}

TEST(crun_exec_pid_zero) {
        static const char msg[] = "{\"ociVersion\":\"0.2.0\",\"fds\":[\"seccompFd\"],\"pid\":0,"
                                  "\"state\":{\"id\":\"x\",\"pid\":123}}";
        struct tns_oci_state st;
        char err[TNS_OCI_ERR_MAX];

        ASSERT_EQ(tns_oci_state_parse(msg, strlen(msg), &st, err), 0);
        EXPECT_EQ(st.pid, 123);
        tns_oci_state_done(&st);
}

TEST(bad_states) {
        static const char *const bad[] = {
                "",
                "[]",
                "{",
                "{\"pid\":1}",
                "{\"id\":\"\"}",
                "{\"id\":\"a\",\"pid\":-1}",
                "{\"id\":\"a\",\"pid\":\"1\"}",
        };
        struct tns_oci_state st;
        char err[TNS_OCI_ERR_MAX];

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err[0] = '\0';
                EXPECT_EQ(tns_oci_state_parse(bad[i], strlen(bad[i]), &st, err), -EINVAL);
                EXPECT_NE(err[0], '\0');
                tns_oci_state_done(&st);
        }
}

TEST(metadata_errors) {
        static const char *const bad[] = {
                "realtime", "realtime=soon", "monotonic=2030-01-01", "uptime=+1d", "name=1234", "boottime=1,boottime=2",
        };
        char err[TNS_OCI_ERR_MAX];

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct tns_oci_request req = {};

                EXPECT_EQ(tns_oci_metadata_parse(bad[i], &req, err), -EINVAL);
        }
}

TEST(annotations) {
        json_object *a = json_tokener_parse("{\"org.timens.realtime\":\"2030-01-01T00:00:00Z\",\"org.timens.name\":"
                                            "\"n1\",\"other\":\"x\"}");
        json_object *typo = json_tokener_parse("{\"org.timens.realtim\":\"+1d\"}");
        struct tns_oci_request req = {};
        char err[TNS_OCI_ERR_MAX];

        ASSERT_EQ(tns_oci_annotations_parse(a, &req, err), 0);
        EXPECT_EQ(req.clocks[TNS_CLASS_REALTIME].spec.kind, TNS_OFFSET_ABSOLUTE);
        EXPECT_EQ(req.clocks[TNS_CLASS_REALTIME].spec.ns, 1893456000LL * 1000000000);
        EXPECT_EQ(strcmp(req.name, "n1"), 0);
        EXPECT_EQ(tns_oci_annotations_parse(typo, &req, err), -EINVAL);
        EXPECT_NE(strstr(err, "unknown key 'realtim'"), NULL);
        json_object_put(a);
        json_object_put(typo);
}

/* Joining a namespace of one's name: the clocks asked for must be its. */
/* The same rate for every clock of the namespace. */
static void set_ns_rate(struct tns_oci_existing *ns, uint64_t mult, uint64_t run) {
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                ns->rate_mult[c] = mult;
                ns->run_mult[c] = run;
        }
}

TEST(join_check) {
        const int64_t sec = 1000000000, day = 86400 * sec, hour = 3600 * sec, now = 1893456000LL * sec + 500;
        struct tns_oci_existing ns = {
                .offset_ns = {[TNS_CLASS_REALTIME] = day}, .realtime_now_ns = now + day, .created_host_ns = now - hour};
        struct tns_oci_request req = {};
        char err[TNS_OCI_ERR_MAX] = "";

        /* The name alone joins whatever is there. */
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), 0);
        /* The same offset joins; another does not, and says which. */
        req.clocks[TNS_CLASS_REALTIME] =
                (struct tns_clock_arg){.set = true, .spec = {.kind = TNS_OFFSET_RELATIVE, .ns = day}};
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), 0);
        req.clocks[TNS_CLASS_REALTIME].spec.ns = 1000 * day;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), -EEXIST);
        EXPECT_NE(strstr(err, "realtime"), NULL);
        req.clocks[TNS_CLASS_REALTIME].set = false;
        req.clocks[TNS_CLASS_MONOTONIC] =
                (struct tns_clock_arg){.set = true, .spec = {.kind = TNS_OFFSET_RELATIVE, .ns = 0}};
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), 0);
        req.clocks[TNS_CLASS_MONOTONIC].spec.ns = -1;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), -EEXIST);
        req.clocks[TNS_CLASS_MONOTONIC].set = false;
        /* A date: made an hour ago for a date a day ahead of the host, it
         * reads that date plus the hour now. */
        req.clocks[TNS_CLASS_REALTIME] =
                (struct tns_clock_arg){.set = true, .spec = {.kind = TNS_OFFSET_ABSOLUTE, .ns = now - hour + day}};
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), 0);
        /* A date it has not reached, or that it passed longer ago than it
         * exists: another namespace's clock. */
        req.clocks[TNS_CLASS_REALTIME].spec.ns = now + 2 * day;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), -EEXIST);
        req.clocks[TNS_CLASS_REALTIME].spec.ns = now - 2 * hour + day;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), -EEXIST);
        /* A date asked of a namespace frozen at another (rated): refused,
         * by the date and by the rate a plain request asks (1). */
        ns.rate_capable = true;
        set_ns_rate(&ns, 0, TNS_RATE_ONE);
        ns.realtime_now_ns = 915148800LL * sec; /* 1999-01-01 */
        req.clocks[TNS_CLASS_REALTIME].spec.ns = 1893456000LL * sec; /* 2030-01-01 */
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), -EEXIST);
        req.clocks[TNS_CLASS_REALTIME].spec.ns = ns.realtime_now_ns;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), -EEXIST);
        EXPECT_NE(strstr(err, "rate"), NULL);
        /* ... and joined by the same: frozen at that date; not frozen at
         * another date, even one it would have passed running. */
        req.rated = req.freeze = true;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), 0);
        req.clocks[TNS_CLASS_REALTIME].spec.ns = ns.realtime_now_ns - 1800 * sec;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), -EEXIST);
        req.clocks[TNS_CLASS_REALTIME].spec.ns = ns.realtime_now_ns;
        req.clocks[TNS_CLASS_REALTIME].set = false;
        /* A rate: the namespace's, frozen or running. */
        req.freeze = false;
        req.rate_mult = 2 * TNS_RATE_ONE;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), -EEXIST);
        set_ns_rate(&ns, 2 * TNS_RATE_ONE, 2 * TNS_RATE_ONE);
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), 0);
        /* Every clock's: a namespace whose MONOTONIC runs at another rate
         * is not the one asked for. */
        ns.rate_mult[TNS_CLASS_MONOTONIC] = ns.rate_mult[TNS_CLASS_BOOTTIME] = TNS_RATE_ONE;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), -EEXIST);
        EXPECT_NE(strstr(err, "monotonic rate"), NULL);
        set_ns_rate(&ns, 2 * TNS_RATE_ONE, 2 * TNS_RATE_ONE);
        ns.rate_capable = false;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), -EEXIST);
        /* A date in a namespace at x2, made an hour ago: it may be two
         * hours past it. */
        ns = (struct tns_oci_existing){.rate_capable = true,
                                       .realtime_now_ns = 1893456000LL * sec + 2 * hour - sec,
                                       .created_host_ns = now - hour};
        set_ns_rate(&ns, 2 * TNS_RATE_ONE, 2 * TNS_RATE_ONE);
        req.clocks[TNS_CLASS_REALTIME] =
                (struct tns_clock_arg){.set = true, .spec = {.kind = TNS_OFFSET_ABSOLUTE, .ns = 1893456000LL * sec}};
        EXPECT_EQ(tns_oci_join_check(&req, &ns, now, err), 0);
}

TEST(annotation_faketime) {
        json_object *a = json_tokener_parse("{\"org.timens.faketime\":\"-3h x2\"}");
        json_object *frozen = json_tokener_parse("{\"org.timens.faketime\":\"2030-01-01 00:00:00\"}");
        json_object *bad = json_tokener_parse("{\"org.timens.faketime\":\"+1d i2.0\"}");
        struct tns_oci_request req = {};
        char err[TNS_OCI_ERR_MAX];

        ASSERT_EQ(tns_oci_annotations_parse(a, &req, err), 0);
        EXPECT_TRUE(req.rated);
        EXPECT_EQ(req.rate_mult, 2 * TNS_RATE_ONE);
        EXPECT_FALSE(req.freeze);
        EXPECT_EQ(req.clocks[TNS_CLASS_REALTIME].spec.ns, -3 * 3600 * 1000000000LL);
        req = (struct tns_oci_request){};
        ASSERT_EQ(tns_oci_annotations_parse(frozen, &req, err), 0);
        EXPECT_TRUE(req.freeze);
        EXPECT_EQ(req.clocks[TNS_CLASS_REALTIME].spec.kind, TNS_OFFSET_ABSOLUTE);
        EXPECT_EQ(tns_oci_annotations_parse(bad, &req, err), -EINVAL);
        EXPECT_NE(strstr(err, "increments"), NULL);
        EXPECT_NE(strstr(err, "org.timens.faketime"), NULL);
        json_object_put(a);
        json_object_put(frozen);
        json_object_put(bad);
}

/* realtime and faketime both set the realtime clock: together, refused
 * in either order (helper-44: the later one silently won). */
TEST(annotation_realtime_and_faketime) {
        json_object *a = json_tokener_parse("{\"org.timens.faketime\":\"+2d x2\",\"org.timens.realtime\":\"+1d\"}");
        json_object *b = json_tokener_parse("{\"org.timens.realtime\":\"+1d\",\"org.timens.faketime\":\"+2d x2\"}");
        struct tns_oci_request req = {};
        char err[TNS_OCI_ERR_MAX];

        EXPECT_EQ(tns_oci_annotations_parse(a, &req, err), -EINVAL);
        EXPECT_NE(strstr(err, "faketime"), NULL);
        req = (struct tns_oci_request){};
        EXPECT_EQ(tns_oci_annotations_parse(b, &req, err), -EINVAL);
        EXPECT_NE(strstr(err, "realtime"), NULL);
        json_object_put(a);
        json_object_put(b);
}

/* What a rated request gives each class: faketime's rate or freeze, or
 * REALTIME's alone and rate 1 for the others. */
TEST(request_rates) {
        struct tns_oci_request req = {.rated = true, .rate_mult = 2 * TNS_RATE_ONE};
        uint64_t mult[TNS_CLASS_MAX];
        int freeze[TNS_CLASS_MAX];

        tns_oci_request_rates(&req, mult, freeze);
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                EXPECT_EQ(mult[c], 2 * TNS_RATE_ONE);
                EXPECT_EQ(freeze[c], -1);
        }
        req = (struct tns_oci_request){.rated = true, .freeze = true, .realtime_only = true};
        tns_oci_request_rates(&req, mult, freeze);
        EXPECT_EQ(mult[TNS_CLASS_REALTIME], 0);
        EXPECT_EQ(freeze[TNS_CLASS_REALTIME], 1);
        EXPECT_EQ(mult[TNS_CLASS_MONOTONIC], TNS_RATE_ONE);
        EXPECT_EQ(freeze[TNS_CLASS_BOOTTIME], -1);
}

/* faketime-dont-fake-monotonic: the join check wants faketime's rate for
 * REALTIME and 1 for the others. */
TEST(join_check_realtime_only) {
        struct tns_oci_request req = {.rated = true, .freeze = true, .realtime_only = true};
        struct tns_oci_existing ns = {.rate_capable = true};
        char err[TNS_OCI_ERR_MAX];

        for (int c = 0; c < TNS_CLASS_MAX; c++)
                ns.rate_mult[c] = ns.run_mult[c] = TNS_RATE_ONE;
        ns.rate_mult[TNS_CLASS_REALTIME] = 0;
        EXPECT_EQ(tns_oci_join_check(&req, &ns, 0, err), 0);
        req.realtime_only = false; /* every clock frozen asked */
        EXPECT_EQ(tns_oci_join_check(&req, &ns, 0, err), -EEXIST);
        EXPECT_NE(strstr(err, "monotonic rate"), NULL);
}

TEST(time_offsets) {
        json_object *c = json_tokener_parse(
                "{\"linux\":{\"timeOffsets\":{\"monotonic\":{\"secs\":5,\"nanosecs\":7},\"boottime\":{\"secs\":-3}}}}");
        json_object *bad = json_tokener_parse("{\"linux\":{\"timeOffsets\":{\"realtime\":{\"secs\":5}}}}");
        int64_t v[TNS_CLASS_MAX];
        unsigned mask;
        char err[TNS_OCI_ERR_MAX];

        ASSERT_EQ(tns_oci_time_offsets(c, v, &mask, err), 0);
        EXPECT_EQ(mask, (1U << TNS_CLASS_MONOTONIC) | (1U << TNS_CLASS_BOOTTIME));
        EXPECT_EQ(v[TNS_CLASS_MONOTONIC], 5000000007LL);
        EXPECT_EQ(v[TNS_CLASS_BOOTTIME], -3000000000LL);
        EXPECT_EQ(tns_oci_time_offsets(bad, v, &mask, err), -EINVAL);
        json_object_put(c);
        json_object_put(bad);
}

/* Running the edit twice gives the file of running it once. */
TEST(config_idempotent) {
        json_object *c = json_tokener_parse("{\"process\":{\"args\":[\"sh\"]}}");
        const char *text[TNS_CLASS_MAX] = {[TNS_CLASS_REALTIME] = "+1d"};
        char err[TNS_OCI_ERR_MAX], *once;

        ASSERT_EQ(tns_oci_config_add_hook(c, "/h", NULL, text, NULL, err), 0);
        ASSERT_EQ(tns_oci_config_add_agent(c, "/s", "realtime=+1d", err), 0);
        once = strdup(json_object_to_json_string(c));
        ASSERT_EQ(tns_oci_config_add_hook(c, "/h", NULL, text, NULL, err), 0);
        ASSERT_EQ(tns_oci_config_add_agent(c, "/s", "realtime=+1d", err), 0);
        EXPECT_EQ(strcmp(once, json_object_to_json_string(c)), 0);
        EXPECT_EQ(tns_oci_config_add_agent(c, "/other", NULL, err), -EEXIST);
        free(once);
        json_object_put(c);
}

/* A bundle that denies setting file times keeps its denial in agent mode:
 * our rule for that call is left out, the others are added, and a second
 * run changes nothing. A denial of clock calls is ours to replace. */
TEST(agent_keeps_bundle_file_times_denial) {
        json_object *c = json_tokener_parse(
                "{\"linux\":{\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
                "{\"names\":[\"utimensat\",\"utimes\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1},"
                "{\"names\":[\"clock_settime\"],\"action\":\"SCMP_ACT_ERRNO\"}]}}}");
        char err[TNS_OCI_ERR_MAX], *once;
        json_object *syscalls;
        int utimensat = 0, utime = 0, denial = 0, clock_denial = 0;

        ASSERT_EQ(tns_oci_config_add_agent(c, "/s", NULL, err), 0);
        once = strdup(json_object_to_json_string(c));
        ASSERT_EQ(tns_oci_config_add_agent(c, "/s", NULL, err), 0);
        EXPECT_EQ(strcmp(once, json_object_to_json_string(c)), 0);
        syscalls = json_object_object_get(json_object_object_get(json_object_object_get(c, "linux"), "seccomp"),
                                          "syscalls");
        for (size_t i = 0; i < json_object_array_length(syscalls); i++) {
                json_object *rule = json_object_array_get_idx(syscalls, i);
                const char *action = json_object_get_string(json_object_object_get(rule, "action"));
                const char *name =
                        json_object_get_string(json_object_array_get_idx(json_object_object_get(rule, "names"), 0));

                if (strcmp(action, "SCMP_ACT_NOTIFY") == 0) {
                        utimensat += strcmp(name, "utimensat") == 0;
                        utime += strcmp(name, "utime") == 0;
                } else if (strcmp(name, "utimensat") == 0)
                        denial++;
                else if (strcmp(name, "clock_settime") == 0)
                        clock_denial++;
        }
        EXPECT_EQ(utimensat, 0);
        EXPECT_EQ(utime, 1);
        EXPECT_EQ(denial, 1);
        EXPECT_EQ(clock_denial, 0);
        free(once);
        json_object_put(c);
}
