/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto/timens-proto.c: requests as a table of lines and the error code
 * (or op) each must give, round trips of every type through JSON, and
 * framing. */
#include <string.h>

#include "test.h"
#include "timens-proto.h"

#define NS 1000000000LL

/* A line and what parsing it must give: -1 for success (then op), else
 * the error code. */
static const struct {
        const char *line;
        int err;
        enum tns_op op;
} cases[] = {
        {"{\"version\":1,\"id\":1,\"op\":\"hello\"}", -1, TNS_OP_HELLO},
        {"{\"version\":1,\"id\":1,\"op\":\"hello\",\"params\":{}}", -1, TNS_OP_HELLO},
        {"{\"version\":1,\"id\":1,\"op\":\"hello\",\"params\":null}", -1, TNS_OP_HELLO},
        {"  {\"version\":1,\"id\":0,\"op\":\"list\"}  \r", -1, TNS_OP_LIST},
        {"{\"version\":1,\"id\":2,\"op\":\"create\",\"params\":{\"name\":\"web\"}}", -1, TNS_OP_CREATE},
        {"{\"version\":1,\"id\":2,\"op\":\"create\",\"params\":{\"name\":\"web\",\"offsets\":{\"realtime\":\"2030-01-"
         "01T00:00:00Z\",\"monotonic\":86400000000000},\"grant\":\"read\"}}",
         -1, TNS_OP_CREATE},
        {"{\"version\":1,\"id\":3,\"op\":\"set\",\"params\":{\"id\":4,\"offsets\":{\"boottime\":\"+1d\"}}}", -1,
         TNS_OP_SET},
        {"{\"version\":1,\"id\":3,\"op\":\"wait\",\"params\":{\"name\":\"x\",\"timeout_ms\":0}}", -1, TNS_OP_WAIT},
        {"{\"version\":1,\"id\":3,\"op\":\"adopt\",\"params\":{\"name\":\"x\",\"join\":true}}", -1, TNS_OP_ADOPT},
        {"{\"version\":1,\"id\":3,\"op\":\"attach\",\"params\":{\"name\":\"x\",\"pid\":1}}", -1, TNS_OP_ATTACH},
        {"{\"version\":1,\"id\":3,\"op\":\"attach\",\"params\":{\"id\":4,\"join\":true,\"pid\":1}}", -1, TNS_OP_ATTACH},
        {"{\"version\":1,\"id\":3,\"op\":\"attach\",\"params\":{\"pid\":1,\"rate\":\"2\",\"freeze\":true}}", -1,
         TNS_OP_ATTACH},
        {"{\"version\":1,\"id\":3,\"op\":\"attach\",\"params\":{\"pid\":7,\"tree\":false,\"offsets\":{"
         "\"realtime\":\"+1d\"}}}",
         -1, TNS_OP_ATTACH},
        /* framing and envelope */
        {"", TNS_ERR_INVALID_REQUEST, 0},
        {"garbage", TNS_ERR_INVALID_REQUEST, 0},
        {"[1,2]", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"hello\"} {}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"hello\"", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"op\":\"hello\"}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"id\":-1,\"op\":\"hello\"}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"id\":\"1\",\"op\":\"hello\"}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"id\":1.5,\"op\":\"hello\"}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"id\":99999999999999999999,\"op\":\"hello\"}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"id\":1,\"op\":\"hello\"}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":2,\"id\":1,\"op\":\"hello\"}", TNS_ERR_UNSUPPORTED_VERSION, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"hello\",\"extra\":1}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"reboot\"}", TNS_ERR_UNKNOWN_OP, 0},
        {"{\"version\":1,\"id\":1,\"op\":7}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"a\xff\"}}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"hello\"}\n{}", TNS_ERR_INVALID_REQUEST, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"hello\",\"params\":[]}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"hello\",\"params\":{\"name\":\"x\"}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"list\",\"params\":{\"x\":{\"y\":{\"z\":{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":"
         "1}}}}}}}}}",
         TNS_ERR_INVALID_REQUEST, 0},
        /* params */
        {"{\"version\":1,\"id\":1,\"op\":\"create\"}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"\"}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"1234\"}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"a/b\"}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"-a\"}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"a\\u0000b\"}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":7}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"a\",\"offsets\":{\"utc\":\"1\"}}}",
         TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"a\",\"offsets\":{\"monotonic\":"
         "\"2030-01-01\"}}}",
         TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"a\",\"offsets\":{\"realtime\":\"+1q\"}}}",
         TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"a\",\"offsets\":{\"realtime\":\"+999y\"}}}",
         TNS_ERR_OUT_OF_RANGE, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"a\",\"offsets\":{\"realtime\":1.5}}}",
         TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"create\",\"params\":{\"name\":\"a\",\"grant\":\"all\"}}",
         TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"show\"}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"show\",\"params\":{\"name\":\"a\",\"id\":1}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"show\",\"params\":{\"id\":0}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"set\",\"params\":{\"name\":\"a\"}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"set\",\"params\":{\"name\":\"a\",\"offsets\":{}}}", TNS_ERR_INVALID_PARAMS,
         0},
        {"{\"version\":1,\"id\":1,\"op\":\"set\",\"params\":{\"name\":\"a\",\"offsets\":{\"realtime\":0},"
         "\"allow_backwards\":\"yes\"}}",
         TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"adopt\",\"params\":{\"join\":true}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"adopt\",\"params\":{\"name\":\"a\",\"join\":true,\"offsets\":{"
         "\"realtime\":0}}}",
         TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"wait\",\"params\":{\"name\":\"a\",\"timeout_ms\":-1}}",
         TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"attach\",\"params\":{\"name\":\"a\"}}", TNS_ERR_INVALID_PARAMS, 0},
        /* attach: an id only to join, and not with a name */
        {"{\"version\":1,\"id\":1,\"op\":\"attach\",\"params\":{\"id\":4,\"pid\":1}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"attach\",\"params\":{\"id\":4,\"name\":\"a\",\"join\":true,\"pid\":1}}",
         TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"attach\",\"params\":{\"pid\":5,\"tree\":1}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"attach\",\"params\":{\"pid\":5,\"id\":1}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"import\",\"params\":{\"state\":{}}}", TNS_ERR_INVALID_PARAMS, 0},
        {"{\"version\":1,\"id\":1,\"op\":\"import\",\"params\":{\"state\":{\"format\":\"timens-clock-state\","
         "\"version\":9}}}",
         TNS_ERR_UNSUPPORTED_VERSION, 0},
};

TEST(request_table) {
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct tns_request req;
                struct tns_proto_error e = {};
                int r;

                r = tns_request_parse(cases[i].line, strlen(cases[i].line), &req, &e);
                if (cases[i].err < 0) {
                        if (r < 0)
                                TEST_FAIL_(false, "case %zu: %s: %s", i, tns_err_code(e.code), e.message);
                        else
                                EXPECT_EQ(req.op, cases[i].op);
                } else if (r >= 0 || (int) e.code != cases[i].err) {
                        TEST_FAIL_(false, "case %zu: got %s (%s), want %s", i,
                                   r >= 0 ? "success" : tns_err_code(e.code), e.message, tns_err_code(cases[i].err));
                }
                tns_request_done(&req);
        }
}

TEST(request_fields) {
        const char *line = "{\"version\":1,\"id\":42,\"op\":\"create\",\"params\":{\"name\":\"web\",\"offsets\":{"
                           "\"realtime\":\"@1893456000.5\",\"monotonic\":\"+1d\"},\"grant\":\"full\"}}";
        struct tns_request req;
        struct tns_proto_error e;

        ASSERT_EQ(tns_request_parse(line, strlen(line), &req, &e), 0);
        EXPECT_EQ(req.id, 42);
        EXPECT_STREQ(req.name, "web");
        EXPECT_EQ(req.grant, TNS_GRANT_FULL);
        EXPECT_TRUE(req.clocks[TNS_CLASS_MONOTONIC].set);
        EXPECT_EQ(req.clocks[TNS_CLASS_MONOTONIC].spec.ns, 86400 * NS);
        EXPECT_FALSE(req.clocks[TNS_CLASS_BOOTTIME].set);
        EXPECT_EQ(req.clocks[TNS_CLASS_REALTIME].spec.kind, TNS_OFFSET_ABSOLUTE);
        EXPECT_EQ(req.clocks[TNS_CLASS_REALTIME].spec.ns, 1893456000 * NS + NS / 2);
        tns_request_done(&req);
}

/* An error keeps the id when the line had one, so the reply names it. */
TEST(error_keeps_id) {
        const char *line = "{\"version\":1,\"id\":7,\"op\":\"nope\"}";
        struct tns_request req;
        struct tns_proto_error e;

        EXPECT_LT(tns_request_parse(line, strlen(line), &req, &e), 0);
        EXPECT_EQ(req.id, 7);
        tns_request_done(&req);
}

/* What the client writes, the server reads back the same. */
TEST(request_round_trip) {
        struct tns_request in = {.id = 9, .op = TNS_OP_SET, .ns_id = 3, .allow_backwards = true}, out;
        _cleanup_json_ json_object *o = NULL;
        _cleanup_free_ char *line = NULL;
        struct tns_proto_error e;
        size_t len;

        in.clocks[TNS_CLASS_BOOTTIME] = (struct tns_clock_arg){true, {TNS_OFFSET_RELATIVE, -3 * NS / 2}};
        in.clocks[TNS_CLASS_REALTIME] = (struct tns_clock_arg){true, {TNS_OFFSET_ABSOLUTE, 1893456000 * NS + 7}};
        ASSERT_EQ(tns_request_to_json(&in, &o), 0);
        ASSERT_EQ(tns_message_format(o, &line, &len), 0);
        EXPECT_EQ(line[len - 1], '\n');
        EXPECT_TRUE(memchr(line, '\n', len - 1) == NULL);
        ASSERT_EQ(tns_request_parse(line, len - 1, &out, &e), 0);
        EXPECT_EQ(out.id, 9);
        EXPECT_EQ(out.op, TNS_OP_SET);
        EXPECT_EQ(out.ns_id, 3);
        EXPECT_TRUE(out.allow_backwards);
        EXPECT_FALSE(out.clocks[TNS_CLASS_MONOTONIC].set);
        EXPECT_EQ(out.clocks[TNS_CLASS_BOOTTIME].spec.ns, -3 * NS / 2);
        EXPECT_EQ(out.clocks[TNS_CLASS_REALTIME].spec.kind, TNS_OFFSET_ABSOLUTE);
        EXPECT_EQ(out.clocks[TNS_CLASS_REALTIME].spec.ns, 1893456000 * NS + 7);
        tns_request_done(&out);
}

TEST(replies) {
        _cleanup_json_ json_object *ok = NULL, *err = NULL, *res = NULL;
        _cleanup_free_ char *a = NULL, *b = NULL;
        struct tns_proto_error e = {.code = TNS_ERR_BUSY}, got = {};
        size_t la, lb;
        int64_t id;

        snprintf(e.message, sizeof(e.message), "line\nbreak");
        ASSERT_EQ(tns_reply_result(5, json_object_new_object(), &ok), 0);
        ASSERT_EQ(tns_reply_error(-1, &e, &err), 0);
        ASSERT_EQ(tns_message_format(ok, &a, &la), 0);
        ASSERT_EQ(tns_message_format(err, &b, &lb), 0);
        EXPECT_STREQ(a, "{\"id\":5,\"result\":{}}\n");
        EXPECT_STREQ(b, "{\"id\":null,\"error\":{\"code\":\"busy\",\"message\":\"line\\nbreak\"}}\n");
        EXPECT_EQ(tns_reply_parse(a, la - 1, &id, &res, &got), 1);
        EXPECT_EQ(id, 5);
        EXPECT_EQ(tns_reply_parse(b, lb - 1, &id, &res, &got), 0);
        EXPECT_EQ(id, -1);
        EXPECT_EQ(got.code, TNS_ERR_BUSY);
        EXPECT_STREQ(got.message, "line\nbreak");
        EXPECT_EQ(tns_reply_parse("{\"id\":1}", 8, &id, &res, &got), -EBADMSG);
        EXPECT_EQ(tns_reply_parse("nonsense", 8, &id, &res, &got), -EBADMSG);
}

TEST(codes_are_stable) {
        /* The wire names: changing one breaks every client. */
        EXPECT_STREQ(tns_err_code(TNS_ERR_INVALID_REQUEST), "invalid-request");
        EXPECT_STREQ(tns_err_code(TNS_ERR_TOO_LARGE), "message-too-large");
        EXPECT_STREQ(tns_err_code(TNS_ERR_BACKWARDS), "backwards");
        EXPECT_STREQ(tns_err_code(TNS_ERR_PERMISSION_DENIED), "permission-denied");
        for (int i = 0; i < _TNS_ERR_MAX; i++)
                EXPECT_EQ(tns_err_from_code(tns_err_code(i)), i);
        for (int i = 0; i < _TNS_OP_MAX; i++)
                EXPECT_EQ(tns_op_from_name(tns_op_name(i)), i);
        EXPECT_TRUE(tns_op_writes(TNS_OP_SET));
        EXPECT_FALSE(tns_op_writes(TNS_OP_EXPORT));
        EXPECT_FALSE(tns_op_writes(TNS_OP_WAIT));
}

TEST(ns_view_round_trip) {
        _cleanup_free_ struct tns_ns_view *in = calloc(1, sizeof(*in)), *out = calloc(1, sizeof(*out));
        _cleanup_json_ json_object *o = NULL;

        ASSERT_TRUE(in && out);
        *in = (struct tns_ns_view){.id = 3,
                                   .parent_id = 1,
                                   .origin = TNS_ORIGIN_UNSHARE,
                                   .grant = TNS_GRANT_READ,
                                   .listeners = 2,
                                   .live = true,
                                   .calls = 99,
                                   .depth = 2,
                                   .kernel_ns = 4026532250u,
                                   .kernel_offsets_known = true,
                                   .has_processes = true,
                                   .n_processes = 2000};
        strcpy(in->name, "db:1");
        in->offset_ns[TNS_CLASS_REALTIME] = -86400 * NS;
        in->now_ns[TNS_CLASS_MONOTONIC] = 12345;
        in->kernel_offset_ns[TNS_CLASS_BOOTTIME] = -60 * NS;
        for (int i = 0; i < TNS_PROTO_MAX_PROCESSES; i++)
                in->processes[i] = 100 + i;
        ASSERT_EQ(tns_ns_view_to_json(in, &o), 0);
        ASSERT_EQ(tns_ns_view_from_json(o, out), 0);
        EXPECT_EQ(out->id, 3);
        EXPECT_EQ(out->parent_id, 1);
        EXPECT_STREQ(out->name, "db:1");
        EXPECT_EQ(out->origin, TNS_ORIGIN_UNSHARE);
        EXPECT_EQ(out->grant, TNS_GRANT_READ);
        EXPECT_EQ(out->offset_ns[TNS_CLASS_REALTIME], -86400 * NS);
        EXPECT_EQ(out->now_ns[TNS_CLASS_MONOTONIC], 12345);
        EXPECT_EQ(out->listeners, 2);
        EXPECT_TRUE(out->live);
        EXPECT_EQ(out->calls, 99);
        EXPECT_EQ(out->n_processes, 2000);
        EXPECT_EQ(out->processes[TNS_PROTO_MAX_PROCESSES - 1], 100 + TNS_PROTO_MAX_PROCESSES - 1);
        EXPECT_EQ(out->depth, 2);
        EXPECT_EQ(out->kernel_ns, 4026532250u);
        EXPECT_TRUE(out->kernel_offsets_known);
        EXPECT_EQ(out->kernel_offset_ns[TNS_CLASS_BOOTTIME], -60 * NS);
        EXPECT_EQ(out->kernel_offset_ns[TNS_CLASS_MONOTONIC], 0);
        /* Without a kernel namespace: no "kernel" at all. */
        json_object_put(o);
        o = NULL;
        in->kernel_ns = 0;
        ASSERT_EQ(tns_ns_view_to_json(in, &o), 0);
        EXPECT_FALSE(json_object_object_get_ex(o, "kernel", NULL));
        ASSERT_EQ(tns_ns_view_from_json(o, out), 0);
}

TEST(clock_state_round_trip) {
        struct tns_clock_state in = {.grant = TNS_GRANT_FULL, .host_realtime_ns = 5}, out;
        _cleanup_json_ json_object *o = NULL;
        struct tns_proto_error e;

        strcpy(in.name, "web");
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                in.value_ns[c] = (c + 1) * NS;
                in.offset_ns[c] = -(c + 1);
        }
        ASSERT_EQ(tns_clock_state_to_json(&in, &o), 0);
        ASSERT_EQ(tns_clock_state_from_json(o, &out, &e), 0);
        EXPECT_EQ(memcmp(&in, &out, sizeof(in)), 0);
}

/* A rated state, then the same with one clock's rate changed, a
 * rate_capable that is no boolean, or false with a rate (helper-39). */
TEST(clock_state_rates_checked) {
        struct tns_clock_state in = {.rate_capable = true}, out;
        _cleanup_json_ json_object *o = NULL;
        struct tns_proto_error e;
        json_object *clocks, *rt;

        for (int c = 0; c < TNS_CLASS_MAX; c++)
                in.rate_mult[c] = in.run_mult[c] = 2 * TNS_RATE_ONE;
        ASSERT_EQ(tns_clock_state_to_json(&in, &o), 0);
        ASSERT_EQ(tns_clock_state_from_json(o, &out, &e), 0);
        EXPECT_TRUE(out.rate_capable);
        EXPECT_EQ(out.run_mult[TNS_CLASS_REALTIME], 2 * TNS_RATE_ONE);
        /* Unsaid, a rate makes it rate-capable. */
        json_object_object_del(o, "rate_capable");
        ASSERT_EQ(tns_clock_state_from_json(o, &out, &e), 0);
        EXPECT_TRUE(out.rate_capable);
        json_object_object_add(o, "rate_capable", json_object_new_string("yes"));
        EXPECT_EQ(tns_clock_state_from_json(o, &out, &e), -EINVAL);
        EXPECT_EQ(e.code, TNS_ERR_INVALID_PARAMS);
        json_object_object_add(o, "rate_capable", json_object_new_boolean(false));
        EXPECT_EQ(tns_clock_state_from_json(o, &out, &e), -EINVAL);
        json_object_object_add(o, "rate_capable", json_object_new_boolean(true));
        ASSERT_TRUE(json_object_object_get_ex(o, "clocks", &clocks));
        /* REALTIME at a rate of its own, or none: its class is its own. */
        ASSERT_TRUE(json_object_object_get_ex(clocks, "realtime", &rt));
        json_object_object_add(rt, "rate_mult", json_object_new_uint64(3 * TNS_RATE_ONE));
        json_object_object_add(rt, "run_mult", json_object_new_uint64(3 * TNS_RATE_ONE));
        ASSERT_EQ(tns_clock_state_from_json(o, &out, &e), 0);
        EXPECT_EQ(out.run_mult[TNS_CLASS_REALTIME], 3 * TNS_RATE_ONE);
        EXPECT_EQ(out.run_mult[TNS_CLASS_MONOTONIC], 2 * TNS_RATE_ONE);
        json_object_object_del(rt, "rate_mult");
        json_object_object_del(rt, "run_mult");
        ASSERT_EQ(tns_clock_state_from_json(o, &out, &e), 0);
        EXPECT_EQ(out.run_mult[TNS_CLASS_REALTIME], 0);
        /* MONOTONIC and BOOTTIME keep their relation: one rate. */
        ASSERT_TRUE(json_object_object_get_ex(clocks, "boottime", &rt));
        json_object_object_add(rt, "rate_mult", json_object_new_uint64(3 * TNS_RATE_ONE));
        json_object_object_add(rt, "run_mult", json_object_new_uint64(3 * TNS_RATE_ONE));
        EXPECT_EQ(tns_clock_state_from_json(o, &out, &e), -EINVAL);
        EXPECT_TRUE(strstr(e.message, "one rate") != NULL);
        json_object_object_del(rt, "rate_mult");
        json_object_object_del(rt, "run_mult");
        EXPECT_EQ(tns_clock_state_from_json(o, &out, &e), -EINVAL);
}

/* "rate" and "freeze": one value for every clock, or one per class. */
TEST(request_rates_per_class) {
        struct tns_request r = {}, back = {};
        struct tns_proto_error e = {};
        _cleanup_json_ json_object *o = NULL;
        const char *line;

        line = "{\"version\":1,\"id\":1,\"op\":\"set\",\"params\":{\"name\":\"a\",\"rate\":\"2\","
               "\"freeze\":true}}";
        ASSERT_EQ(tns_request_parse(line, strlen(line), &r, &e), 0);
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                EXPECT_EQ(r.rate_mult[c], 2 * TNS_RATE_ONE);
                EXPECT_EQ(r.freeze[c], TNS_FREEZE_ON);
        }
        tns_request_done(&r);
        line = "{\"version\":1,\"id\":1,\"op\":\"set\",\"params\":{\"name\":\"a\",\"rate\":{\"monotonic\":"
               "\"0.5\"},\"freeze\":{\"realtime\":true}}}";
        r = (struct tns_request){};
        ASSERT_EQ(tns_request_parse(line, strlen(line), &r, &e), 0);
        EXPECT_EQ(r.rate_mult[TNS_CLASS_REALTIME], 0);
        EXPECT_EQ(r.rate_mult[TNS_CLASS_MONOTONIC], TNS_RATE_ONE / 2);
        EXPECT_EQ(r.rate_mult[TNS_CLASS_BOOTTIME], TNS_RATE_ONE / 2);
        EXPECT_EQ(r.freeze[TNS_CLASS_REALTIME], TNS_FREEZE_ON);
        EXPECT_EQ(r.freeze[TNS_CLASS_MONOTONIC], TNS_FREEZE_KEEP);
        EXPECT_TRUE(tns_request_has_rate(&r));
        /* Round trip through the client's side. */
        ASSERT_EQ(tns_request_to_json(&r, &o), 0);
        line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        ASSERT_EQ(tns_request_parse(line, strlen(line), &back, &e), 0);
        EXPECT_EQ(memcmp(r.rate_mult, back.rate_mult, sizeof(r.rate_mult)), 0);
        EXPECT_EQ(memcmp(r.freeze, back.freeze, sizeof(r.freeze)), 0);
        tns_request_done(&back);
        tns_request_done(&r);
        /* Refused, each naming what is wrong. */
        static const char *const bad[] = {
                "{\"version\":1,\"id\":1,\"op\":\"set\",\"params\":{\"name\":\"a\",\"rate\":{\"boottime\":\"2\"}}}",
                "{\"version\":1,\"id\":1,\"op\":\"set\",\"params\":{\"name\":\"a\",\"rate\":{}}}",
                "{\"version\":1,\"id\":1,\"op\":\"set\",\"params\":{\"name\":\"a\",\"rate\":{\"realtime\":2}}}",
                "{\"version\":1,\"id\":1,\"op\":\"set\",\"params\":{\"name\":\"a\",\"freeze\":{\"monotonic\":1}}}",
                "{\"version\":1,\"id\":1,\"op\":\"set\",\"params\":{\"name\":\"a\",\"rate\":{\"realtime\":\"0\"}}}",
        };
        static const char *const why[] = {"boottime", "empty", "params.rate.realtime", "params.freeze.monotonic",
                                          "params.rate.realtime"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                r = (struct tns_request){};
                EXPECT_EQ(tns_request_parse(bad[i], strlen(bad[i]), &r, &e), -EINVAL);
                EXPECT_TRUE(strstr(e.message, why[i]) != NULL);
                tns_request_done(&r);
        }
}

TEST(stats_round_trip) {
        struct tns_stats_view in = {}, out;
        _cleanup_json_ json_object *o = NULL;

        in.sup.notifications = 10;
        in.sup.per_syscall[TNS_SYS_TIME] = 4;
        in.sup.latency[TNS_SYS_TIME][3] = 2;
        in.sup.vdso_injected = 6;
        in.server.requests = 8;
        ASSERT_EQ(tns_stats_to_json(&in, &o), 0);
        ASSERT_EQ(tns_stats_from_json(o, &out), 0);
        EXPECT_EQ(out.sup.notifications, 10);
        EXPECT_EQ(out.sup.per_syscall[TNS_SYS_TIME], 4);
        EXPECT_EQ(out.sup.latency[TNS_SYS_TIME][3], 2);
        EXPECT_EQ(out.sup.vdso_injected, 6);
        EXPECT_EQ(out.server.requests, 8);
}

TEST(hello_round_trip) {
        struct tns_hello in = {.server = "timensd",
                               .version = "1",
                               .protocol = 1,
                               .access = TNS_ACCESS_READ,
                               .ops = UINT64_C(1) << TNS_OP_LIST | UINT64_C(1) << TNS_OP_ADOPT},
                         out;
        _cleanup_json_ json_object *o = NULL;

        ASSERT_EQ(tns_hello_to_json(&in, &o), 0);
        ASSERT_EQ(tns_hello_from_json(o, &out), 0);
        EXPECT_STREQ(out.server, "timensd");
        EXPECT_EQ(out.access, TNS_ACCESS_READ);
        EXPECT_EQ(out.ops, in.ops);
}

TEST(names) {
        char longest[TNS_NS_NAME_MAX + 2];

        EXPECT_TRUE(tns_ns_name_valid("web"));
        EXPECT_TRUE(tns_ns_name_valid("a1:b@c+d-e.f_g"));
        EXPECT_TRUE(tns_ns_name_valid("1a"));
        EXPECT_FALSE(tns_ns_name_valid("12"));
        EXPECT_FALSE(tns_ns_name_valid(""));
        EXPECT_FALSE(tns_ns_name_valid(".a"));
        EXPECT_FALSE(tns_ns_name_valid("a b"));
        EXPECT_FALSE(tns_ns_name_valid(NULL));
        memset(longest, 'x', sizeof(longest));
        longest[TNS_NS_NAME_MAX] = '\0';
        EXPECT_TRUE(tns_ns_name_valid(longest));
        longest[TNS_NS_NAME_MAX] = 'x';
        longest[TNS_NS_NAME_MAX + 1] = '\0';
        EXPECT_FALSE(tns_ns_name_valid(longest));
}
