/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for what runtimes and bundles hand us (lib/oci/oci.c): the
 * input is parsed as a container state or agent message, its annotations
 * and listenerMetadata as timens reads them, and as a config.json
 * (linux.timeOffsets, then both edits of oci-config). Each error must
 * come with a message; nothing may crash or leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci.h"
#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void state(const char *text, size_t len) {
        struct tns_oci_state st;
        struct tns_oci_request req = {};
        char err[TNS_OCI_ERR_MAX] = "";

        if (tns_oci_state_parse(text, len, &st, err) < 0) {
                CHECK(err[0] != '\0');
        } else {
                CHECK(st.id && *st.id);
                CHECK(st.pid >= 0);
                if (st.metadata && tns_oci_metadata_parse(st.metadata, &req, err) < 0)
                        CHECK(err[0] != '\0');
                err[0] = '\0';
                if (tns_oci_annotations_parse(st.annotations, &req, err) < 0)
                        CHECK(err[0] != '\0');
                CHECK(strlen(req.name) <= TNS_NS_NAME_MAX);
        }
        tns_oci_state_done(&st);
}

static void config(const char *text) {
        json_object *c = json_tokener_parse(text);
        const char *t[TNS_CLASS_MAX] = {"+1d", NULL, "2030-01-01T00:00:00Z"};
        char err[TNS_OCI_ERR_MAX] = "";
        int64_t v[TNS_CLASS_MAX];
        unsigned mask;

        if (!c)
                return;
        if (tns_oci_time_offsets(c, v, &mask, err) < 0)
                CHECK(err[0] != '\0');
        (void) tns_oci_config_add_hook(c, "/h", NULL, t, "n", err);
        (void) tns_oci_config_add_agent(c, "/s", "realtime=+1d", err);
        json_object_put(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        struct tns_oci_request req = {};
        char err[TNS_OCI_ERR_MAX];

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        state(text, size);
        config(text);
        (void) tns_oci_metadata_parse(text, &req, err);
        free(text);
        return 0;
}
