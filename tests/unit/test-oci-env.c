/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/oci/oci-env.c and lib/oci/oci-bundle.c: the TIMENS_* variables of a
 * container's environment as timens-runtime reads them, the annotations
 * they become, the hook entries, and the atomic write of config.json. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clocks.h"
#include "oci.h"
#include "offsets-page.h"
#include "test.h"

static json_object *env_of(const char *text) {
        return json_tokener_parse(text);
}

/* parse(ENV-JSON): 0 or the error, err in err. */
static int parse(const char *text, struct tns_oci_env *ret, char *err) {
        _cleanup_json_ json_object *env = env_of(text);

        err[0] = '\0';
        return tns_oci_env_parse(env, ret, err);
}

TEST(env_settings) {
        struct tns_oci_env e;
        char err[TNS_OCI_ERR_MAX];

        ASSERT_EQ(parse("[\"PATH=/bin\", \"TIMENS_REALTIME=+1d\", \"TIMENS_BOOTTIME=+2h\", \"TIMENS_NAME=web\"]", &e,
                        err),
                  0);
        EXPECT_EQ(e.n_set, 3u);
        EXPECT_EQ(e.req.clocks[TNS_CLASS_REALTIME].set, true);
        EXPECT_EQ(e.req.clocks[TNS_CLASS_REALTIME].spec.ns, 86400LL * 1000000000);
        EXPECT_EQ(e.req.clocks[TNS_CLASS_BOOTTIME].spec.ns, 7200LL * 1000000000);
        EXPECT_EQ(e.req.clocks[TNS_CLASS_MONOTONIC].set, false);
        EXPECT_STREQ(e.req.name, "web");
        EXPECT_STREQ(e.text[TNS_CLASS_REALTIME], "+1d");
        EXPECT_STREQ(e.text[TNS_CLASS_MAX], "web");
        EXPECT_STREQ(e.text[TNS_CLASS_MONOTONIC], "");
}

TEST(env_none) {
        struct tns_oci_env e;
        char err[TNS_OCI_ERR_MAX];

        ASSERT_EQ(tns_oci_env_parse(NULL, &e, err), 0);
        EXPECT_EQ(e.n_set, 0u);
        /* Other variables, a prefix alone, and a name without '=' are no settings. */
        ASSERT_EQ(parse("[\"TIMENS=1\", \"MY_TIMENS_REALTIME=x\", \"TIMENS_REALTIME\"]", &e, err), 0);
        EXPECT_EQ(e.n_set, 0u);
}

/* Each refused with a message naming the variable and the reason. */
TEST(env_errors) {
        static const struct {
                const char *env, *want;
        } cases[] = {
                {"[\"TIMENS_REALTIM=+1d\"]", "TIMENS_REALTIM: unknown (TIMENS_REALTIME"},
                {"[\"TIMENS_FAKETIME=i2.0\"]", "TIMENS_FAKETIME"},
                {"[\"TIMENS_FAKETIME=+1d x0\"]", "TIMENS_FAKETIME"},
                {"[\"TIMENS_REALTIME=+1d\", \"TIMENS_REALTIME=+2d\"]", "TIMENS_REALTIME: given twice"},
                {"[\"TIMENS_REALTIME=garbage\"]", "'garbage' is not an offset or a date"},
                {"[\"TIMENS_REALTIME=\"]", "'' is not an offset or a date"},
                {"[\"TIMENS_MONOTONIC=2030-01-01\"]", "is not an offset"},
                {"[\"TIMENS_BOOTTIME=+999999y\"]", "out of range"},
                {"[\"TIMENS_NAME=-x\"]", "is not a namespace name"},
                {"[\"TIMENS_NAME=1234\"]", "is not a namespace name"},
                {"[17]", "process.env[0] is not a string"},
                {"{}", "process.env is not an array"},
        };
        struct tns_oci_env e;
        char err[TNS_OCI_ERR_MAX];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                EXPECT_EQ(parse(cases[i].env, &e, err), -EINVAL);
                if (!strstr(err, cases[i].want))
                        TEST_FAIL_(false, "%s: '%s' does not say '%s'", cases[i].env, err, cases[i].want);
        }
}

/* A date is written as UTC whatever TZ the writer has. */
TEST(env_date_as_utc) {
        struct tns_oci_env e;
        char err[TNS_OCI_ERR_MAX], buf[64];

        setenv("TZ", "America/New_York", 1);
        ASSERT_EQ(parse("[\"TIMENS_REALTIME=2030-01-01 00:00:00\"]", &e, err), 0);
        EXPECT_STREQ(e.text[TNS_CLASS_REALTIME], "2030-01-01T05:00:00Z");
        unsetenv("TZ");
        ASSERT_EQ(tns_oci_offset_text(TNS_CLASS_REALTIME, "@1893456000.5", buf, sizeof(buf)), 0);
        EXPECT_STREQ(buf, "2030-01-01T00:00:00.500000000Z");
        EXPECT_EQ(tns_oci_offset_text(TNS_CLASS_REALTIME, "@1893456000", buf, 8), -ERANGE);
        EXPECT_EQ(tns_oci_offset_text(TNS_CLASS_MONOTONIC, "x", buf, sizeof(buf)), -EINVAL);
}

static const char *annotation(json_object *config, const char *key) {
        json_object *ann, *v;

        if (!json_object_object_get_ex(config, "annotations", &ann) || !json_object_object_get_ex(ann, key, &v))
                return NULL;
        return json_object_get_string(v);
}

/* An annotation wins over the environment, key by key. */
TEST(env_annotate) {
        _cleanup_json_ json_object *config =
                json_tokener_parse("{\"process\": {\"env\": [\"TIMENS_REALTIME=+1d\", \"TIMENS_MONOTONIC=+1h\"]},"
                                   " \"annotations\": {\"org.timens.realtime\": \"+5d\", \"other\": \"x\"}}");
        struct tns_oci_env e;
        char err[TNS_OCI_ERR_MAX];

        ASSERT_NE(config, NULL);
        ASSERT_EQ(tns_oci_env_parse(tns_oci_config_env(config), &e, err), 0);
        ASSERT_EQ(tns_oci_env_annotate(config, &e, err), 0);
        EXPECT_STREQ(annotation(config, "org.timens.realtime"), "+5d");
        EXPECT_STREQ(annotation(config, "org.timens.monotonic"), "+1h");
        EXPECT_STREQ(annotation(config, "other"), "x");
        EXPECT_EQ(annotation(config, "org.timens.name"), NULL);
}

TEST(env_annotate_makes_annotations) {
        _cleanup_json_ json_object *config = json_tokener_parse("{\"process\": {\"env\": [\"TIMENS_NAME=db\"]}}");
        _cleanup_json_ json_object *bad = json_tokener_parse("{\"annotations\": []}");
        struct tns_oci_env e;
        char err[TNS_OCI_ERR_MAX] = "";

        ASSERT_EQ(tns_oci_env_parse(tns_oci_config_env(config), &e, err), 0);
        ASSERT_EQ(tns_oci_env_annotate(config, &e, err), 0);
        EXPECT_STREQ(annotation(config, "org.timens.name"), "db");
        EXPECT_EQ(tns_oci_env_annotate(bad, &e, err), -EINVAL);
        EXPECT_TRUE(strstr(err, "not an object") != NULL);
        EXPECT_EQ(tns_oci_config_env(bad), NULL);
}

/* libfaketime's FAKETIME syntax becomes org.timens.faketime as given. */
TEST(env_faketime) {
        _cleanup_json_ json_object *config =
                json_tokener_parse("{\"process\": {\"env\": [\"TIMENS_FAKETIME=-3h x2\"]}}");
        struct tns_oci_env e;
        char err[TNS_OCI_ERR_MAX] = "";

        ASSERT_NE(config, NULL);
        ASSERT_EQ(tns_oci_env_parse(tns_oci_config_env(config), &e, err), 0);
        EXPECT_EQ(e.n_set, 1u);
        EXPECT_TRUE(e.req.rated);
        EXPECT_EQ(e.req.rate_mult, 2 * TNS_RATE_ONE);
        EXPECT_EQ(e.req.clocks[TNS_CLASS_REALTIME].spec.ns, -3LL * 3600 * 1000000000);
        ASSERT_EQ(tns_oci_env_annotate(config, &e, err), 0);
        EXPECT_STREQ(annotation(config, "org.timens.faketime"), "-3h x2");
}

/* libfaketime's FAKETIME_DONT_FAKE_MONOTONIC: the annotation of that
 * name, and a rate and freeze for REALTIME alone. */
TEST(env_faketime_dont_fake_monotonic) {
        _cleanup_json_ json_object *config =
                json_tokener_parse("{\"process\": {\"env\": [\"TIMENS_FAKETIME=2030-01-01 00:00:00\", "
                                   "\"TIMENS_FAKETIME_DONT_FAKE_MONOTONIC=1\"]}}");
        _cleanup_json_ json_object *bad =
                json_tokener_parse("{\"process\": {\"env\": [\"TIMENS_FAKETIME_DONT_FAKE_MONOTONIC=yes\"]}}");
        struct tns_oci_env e;
        char err[TNS_OCI_ERR_MAX] = "";

        ASSERT_NE(config, NULL);
        ASSERT_EQ(tns_oci_env_parse(tns_oci_config_env(config), &e, err), 0);
        EXPECT_TRUE(e.req.freeze);
        EXPECT_TRUE(e.req.realtime_only);
        EXPECT_EQ(tns_oci_rate_classes(&e.req), 1U << TNS_CLASS_REALTIME);
        ASSERT_EQ(tns_oci_env_annotate(config, &e, err), 0);
        EXPECT_STREQ(annotation(config, "org.timens.faketime-dont-fake-monotonic"), "1");
        EXPECT_EQ(tns_oci_env_parse(tns_oci_config_env(bad), &e, err), -EINVAL);
        EXPECT_TRUE(strstr(err, "TIMENS_FAKETIME_DONT_FAKE_MONOTONIC") != NULL && strstr(err, "'yes'") != NULL);
}

static json_object *hook_args(json_object *config, const char *stage, size_t i) {
        json_object *hooks, *list, *args;

        if (!json_object_object_get_ex(config, "hooks", &hooks) || !json_object_object_get_ex(hooks, stage, &list) ||
            i >= json_object_array_length(list) ||
            !json_object_object_get_ex(json_object_array_get_idx(list, i), "args", &args))
                return NULL;
        return args;
}

TEST(hook_entries) {
        _cleanup_json_ json_object *config =
                json_tokener_parse("{\"hooks\": {\"poststop\": [{\"path\": \"/other\"}]}}");
        const char *args[] = {"--socket", "/s", NULL};
        char err[TNS_OCI_ERR_MAX];
        json_object *a;

        ASSERT_NE(config, NULL);
        for (int run = 0; run < 2; run++) {
                ASSERT_EQ(tns_oci_config_add_hook_entry(config, "createRuntime", "/h", args, err), 0);
                ASSERT_EQ(tns_oci_config_add_hook_entry(config, "poststop", "/h", args, err), 0);
        }
        a = hook_args(config, "createRuntime", 0);
        ASSERT_NE(a, NULL);
        EXPECT_EQ(json_object_array_length(a), 3u);
        EXPECT_EQ(hook_args(config, "createRuntime", 1), NULL);
        /* Theirs kept, ours once, with the stage last. */
        EXPECT_EQ(hook_args(config, "poststop", 2), NULL);
        a = hook_args(config, "poststop", 1);
        ASSERT_NE(a, NULL);
        EXPECT_STREQ(json_object_get_string(json_object_array_get_idx(a, 2)), "/s");
        EXPECT_STREQ(json_object_get_string(json_object_array_get_idx(a, 3)), "poststop");
}

static size_t entries(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        while (d && (de = readdir(d)))
                n += de->d_name[0] != '.';
        if (d)
                closedir(d);
        return n;
}

TEST(bundle_write) {
        char dir[] = "/tmp/test-oci-env.XXXXXX", path[64], err[TNS_OCI_ERR_MAX];
        _cleanup_json_ json_object *c = NULL, *back = NULL;
        struct stat st;
        FILE *f;

        ASSERT_NE(mkdtemp(dir), NULL);
        snprintf(path, sizeof(path), "%s/config.json", dir);
        EXPECT_EQ(tns_oci_bundle_read(dir, &c, err), -ENOENT);
        f = fopen(path, "w");
        ASSERT_NE(f, NULL);
        fputs("{\"a\": 1}", f);
        fclose(f);
        ASSERT_EQ(chmod(path, 0600), 0);
        ASSERT_EQ(tns_oci_bundle_read(dir, &c, err), 0);
        json_object_object_add(c, "b", json_object_new_int(2));
        ASSERT_EQ(tns_oci_bundle_write(dir, c, err), 0);
        ASSERT_EQ(stat(path, &st), 0);
        EXPECT_EQ(st.st_mode & 07777, 0600u);
        EXPECT_EQ(entries(dir), 1u); /* no temporary file left */
        ASSERT_EQ(tns_oci_bundle_read(dir, &back, err), 0);
        EXPECT_TRUE(json_object_equal(c, back));
        f = fopen(path, "w");
        ASSERT_NE(f, NULL);
        fputs("[1]", f);
        fclose(f);
        json_object_put(back), back = NULL;
        EXPECT_EQ(tns_oci_bundle_read(dir, &back, err), -EINVAL);
        EXPECT_TRUE(strstr(err, "not a JSON object") != NULL);
        unlink(path);
        rmdir(dir);
}
