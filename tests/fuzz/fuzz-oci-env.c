/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the TIMENS_* variables of a container's environment
 * (lib/oci/oci-env.c), as timens-runtime reads them from a bundle it was
 * handed: the input's lines as process.env, and the input as a whole
 * config.json. An error comes with a message; a success gives settings
 * that are valid and annotations that read back as the same request. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-check.h"
#include "oci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_env(json_object *config) {
        struct tns_oci_env e;
        struct tns_oci_request back = {};
        char err[TNS_OCI_ERR_MAX] = "";
        json_object *ann;

        if (tns_oci_env_parse(tns_oci_config_env(config), &e, err) < 0) {
                CHECK(err[0] != '\0');
                return;
        }
        CHECK(e.n_set <= TNS_CLASS_MAX + 1);
        CHECK(strlen(e.req.name) <= TNS_NS_NAME_MAX);
        if (tns_oci_env_annotate(config, &e, err) < 0)
                return;
        /* What was written is read by the hook: it must parse. */
        if (json_object_object_get_ex(config, "annotations", &ann))
                CHECK(tns_oci_annotations_parse(ann, &back, err) == 0 || err[0] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        json_object *config = json_object_new_object(), *process = json_object_new_object(),
                    *env = json_object_new_array();

        if (!text || !config || !process || !env)
                goto out;
        memcpy(text, data, size);
        text[size] = '\0';
        for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                json_object_array_add(env, json_object_new_string(line));
        json_object_object_add(process, "env", env), env = NULL;
        json_object_object_add(config, "process", process), process = NULL;
        check_env(config);
        json_object_put(config);
        memcpy(text, data, size);
        config = json_tokener_parse(text);
        if (config)
                check_env(config);
out:
        json_object_put(config);
        json_object_put(process);
        json_object_put(env);
        free(text);
        return 0;
}
